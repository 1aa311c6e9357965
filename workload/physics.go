package workload

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// Truth is one job's true physics, the facts the engine advances it by
// whatever its policy saw. Every part beyond Base is optional, and the
// parts compose as factors of the job's speed, each 1 at the job's nominal
// run (its GPUs, on one server, at its initial batch, alone, at its
// GPU-proportional CPU and memory):
//
//	rate = Base[type] · scaling(k, b, φ) · spread · resources · colocation
//
// Progress is counted in examples: StepsTotal is the job's epochs times its
// dataset, and an epoch at the job's own batch makes an epoch of progress.
type Truth struct {
	// Model is the job's catalogue model, which keys Colocation.
	Model string
	// Base is the examples per second of the nominal run on each type.
	Base map[allocation.Accelerator]float64
	// GPUs and Batch are the nominal GPU count and per-GPU batch; the
	// initial global batch is M0 = GPUs·Batch.
	GPUs, Batch int
	// Perf scales the speed with the GPU count k and global batch b
	// (Pollux's iteration-time model, on one server); zero means linear
	// in k.
	Perf throughput.Params
	// LocalMax bounds the per-GPU batch (accumulation above); zero means
	// none.
	LocalMax int
	// NoiseStart and NoiseEnd are the gradient noise scale φ at the start
	// and end of training, in examples; φ grows geometrically with the
	// fraction of progress done. Zero means every batch is fully efficient.
	NoiseStart, NoiseEnd float64
	// Epochs is the number of epochs, and Stages the per-GPU batch the
	// job runs them at when the policy sets none (Shockwave's regimes);
	// no stages means Batch throughout.
	Epochs int
	Stages []Stage
	// Spread is the speed factor of a run whose GPUs span servers; zero
	// means 1.
	Spread float64
	// Colocation is the speed factor when sharing GPUs, by the partner's
	// Model; a partner not listed makes no progress (the pair does not
	// fit).
	Colocation map[string]float64
}

// Physics is the true physics of a workload's jobs, for a Simulation's
// Speed, Observe and Exclusive. Jobs it has no Truth for run at their
// Throughput (or Colocated throughput). It may be shared by simulations
// that run at the same time.
type Physics struct {
	Jobs map[string]*Truth
	// Resources gives CPU and memory their effect: a job with a
	// Sensitivity runs at its factor at the cores and memory per GPU its
	// grant gives it (Resources.Factor).
	Resources Resources
}

// Speed returns the examples per second of progress job j makes in run
// under grant g: at the batch the grant sets, or else the job's own.
func (p *Physics) Speed(j *policy.Job, g allocation.Grant, run placement.Run) float64 {
	t := p.Jobs[j.ID]
	if t == nil {
		return j.ThroughputIn(run)
	}
	k := sumGPUs(run.Assignments)
	own := k * t.perGPU(t.epoch(j.StepsDone, j.StepsTotal))
	b := cmp.Or(g.BatchSize, own)
	rate := t.Base[run.Accelerator] * t.scaling(k, b, own, t.noise(j)) * t.spread(run)
	if run.Partner != "" {
		rate *= p.colocation(t, j.ID, run)
	}
	return rate * p.Resources.Factor(j, g, run)
}

// colocation returns t's speed factor beside the other job of run.
func (p *Physics) colocation(t *Truth, id string, run placement.Run) float64 {
	other := run.Partner
	if id == run.Partner {
		other = run.Job
	}
	o := p.Jobs[other]
	if o == nil {
		return 0
	}
	return t.Colocation[o.Model]
}

// Inform tells each job of s its throughput beside every other job of its
// GPU count with which both make progress (Job.Colocated): its Throughput
// on each type times its co-location factor beside the partner's model,
// what Gavel's profiler measures and Gandiva's introspection reads. Jobs
// without a Truth, or whose Truth lists no co-location, are told nothing.
func (p *Physics) Inform(s *policy.Snapshot) {
	t := newPairTable(p, s.Jobs)
	for _, group := range byGPUs(s.Jobs) {
		for _, i := range group {
			if col := t.pairsOf(s.Jobs, group, i); col != nil {
				s.Jobs[i].Colocated = col
			}
		}
	}
}

// pairTable is what Inform reads of each job, looked up once a snapshot
// rather than once a pair: throughputs by index into the union of the
// jobs' types, the job's own types, its model's index and its factor
// beside each model (indexed likewise). Model -1 means no Truth.
type pairTable struct {
	types  []allocation.Accelerator
	tput   [][]float64
	own    [][]int
	model  []int
	factor [][]float64
}

func newPairTable(p *Physics, jobs []policy.Job) *pairTable {
	t := &pairTable{tput: make([][]float64, len(jobs)), own: make([][]int, len(jobs)),
		model: make([]int, len(jobs)), factor: make([][]float64, len(jobs))}
	models := make(map[string]int)
	for i := range jobs {
		t.types = append(t.types, slices.Collect(maps.Keys(jobs[i].Throughput))...)
		t.model[i] = -1
		if tr := p.Jobs[jobs[i].ID]; tr != nil {
			if _, ok := models[tr.Model]; !ok {
				models[tr.Model] = len(models)
			}
			t.model[i] = models[tr.Model]
		}
	}
	slices.Sort(t.types)
	t.types = slices.Compact(t.types)
	for i := range jobs {
		t.tput[i] = make([]float64, len(t.types))
		for k, x := range jobs[i].Throughput {
			u, _ := slices.BinarySearch(t.types, k)
			t.tput[i][u] = x
			t.own[i] = append(t.own[i], u)
		}
		slices.Sort(t.own[i])
		if tr := p.Jobs[jobs[i].ID]; tr != nil {
			t.factor[i] = make([]float64, len(models))
			for m, f := range tr.Colocation {
				if n, ok := models[m]; ok {
					t.factor[i][n] = f
				}
			}
		}
	}
	return t
}

// pairsOf is job i's Colocated among the jobs of group (its GPU count):
// its throughput times its factor beside each partner, on the types where
// both make progress. The entry depends only on the partner's model and on
// which of i's types both progress on, so partners alike share one map: a
// snapshot's maps are read-only, and a decision over n jobs then builds
// O(n·models) maps instead of O(n²).
func (t *pairTable) pairsOf(jobs []policy.Job, group []int, i int) map[string]map[allocation.Accelerator]float64 {
	if t.model[i] < 0 {
		return nil
	}
	// The maps made so far, by partner model: usually one per model, for
	// the set of i's types both progress on (bit n: own[i][n]).
	type made struct {
		both uint64
		m    map[allocation.Accelerator]float64
	}
	own, seen := t.own[i], make([][]made, len(t.factor[i]))
	var col map[string]map[allocation.Accelerator]float64
	for _, j := range group {
		if j == i || t.model[j] < 0 {
			continue
		}
		fa, fb := t.factor[i][t.model[j]], t.factor[j][t.model[i]]
		var both uint64
		for n, u := range own {
			if t.tput[i][u]*fa > 0 && t.tput[j][u]*fb > 0 {
				both |= 1 << (n % 64)
			}
		}
		if both == 0 {
			continue
		}
		var m map[allocation.Accelerator]float64
		for _, e := range seen[t.model[j]] {
			if e.both == both {
				m = e.m
				break
			}
		}
		if m == nil {
			m = make(map[allocation.Accelerator]float64)
			for _, u := range own {
				if x := t.tput[i][u] * fa; x > 0 && t.tput[j][u]*fb > 0 {
					m[t.types[u]] = x
				}
			}
			if len(own) <= 64 { // both holds 64 types: beyond, no sharing
				seen[t.model[j]] = append(seen[t.model[j]], made{both, m})
			}
		}
		if col == nil {
			col = make(map[string]map[allocation.Accelerator]float64, len(group)-1)
		}
		col[jobs[j].ID] = m
	}
	return col
}

// byGPUs returns the indices of jobs by GPU count, each group in the
// jobs' order.
func byGPUs(jobs []policy.Job) [][]int {
	at := make(map[int]int)
	var groups [][]int
	for i := range jobs {
		g, ok := at[jobs[i].GPUs]
		if !ok {
			g = len(groups)
			at[jobs[i].GPUs] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// Observe updates what job j reports after it ran, as a real job's
// profiler would: its gradient statistics at its progress, the largest
// GPU count it ran on, its regime history and batch size, and its
// throughput at the batch in force on its nominal GPUs. Maps and facts
// are replaced, not modified, so that earlier snapshots keep their values.
func (p *Physics) Observe(j *policy.Job, g allocation.Grant, run placement.Run, _ time.Duration) {
	t := p.Jobs[j.ID]
	if t == nil {
		return
	}
	phi := t.noise(j)
	if j.Elastic != nil {
		e := *j.Elastic
		e.GradSqr, e.GradVar = 1, phi/float64(t.m0())
		e.ProfiledGPUs = max(e.ProfiledGPUs, sumGPUs(run.Assignments))
		j.Elastic = &e
	}
	epoch := t.epoch(j.StepsDone, j.StepsTotal)
	if j.Adaptive != nil {
		a := *j.Adaptive
		a.History = make([]int, len(a.Regimes))
		from := 0
		for _, st := range t.Stages {
			if i := slices.Index(a.Regimes, st.Batch); i >= 0 && from < epoch {
				a.History[i] += min(st.End, epoch) - from
			}
			from = st.End
		}
		a.BatchSize = t.perGPU(epoch)
		j.Adaptive = &a
	}
	own := t.GPUs * t.perGPU(epoch)
	f := t.scaling(t.GPUs, own, own, phi)
	tp := make(map[allocation.Accelerator]float64, len(j.Throughput))
	for typ := range j.Throughput { // the types the job is known on only
		tp[typ] = t.Base[typ] * f
	}
	j.Throughput = tp
}

// Exclusive returns job j's runtime alone on its nominal GPUs, on one
// server of its fastest type, following its own batch schedule: the
// denominator of finish-time fairness.
func (p *Physics) Exclusive(j *policy.Job) time.Duration {
	t := p.Jobs[j.ID]
	if t == nil {
		return seconds(j.StepsTotal / slices.Max(append(slices.Collect(maps.Values(j.Throughput)), 0)))
	}
	best := slices.Max(append(slices.Collect(maps.Values(t.Base)), 0))
	var secs float64
	for _, part := range t.parts(64) {
		own := t.GPUs * part.batch
		secs += j.StepsTotal * (part.to - part.from) / (best * t.scaling(t.GPUs, own, own, t.noiseAt((part.from+part.to)/2)))
	}
	return seconds(secs)
}

// part is a slice of training, as fractions of it, at one own batch.
type part struct {
	from, to float64
	batch    int
}

// parts cuts training into at least n slices, none crossing a stage, for
// integrating over the smoothly varying noise scale.
func (t *Truth) parts(n int) []part {
	stages := t.Stages
	epochs := t.Epochs
	if len(stages) == 0 || epochs <= 0 {
		stages, epochs = []Stage{{Batch: t.Batch, End: 1}}, 1
	}
	var out []part
	from := 0
	for _, st := range stages {
		a, b := float64(from)/float64(epochs), float64(st.End)/float64(epochs)
		k := max(1, int(math.Ceil((b-a)*float64(n))))
		for i := range k {
			out = append(out, part{a + (b-a)*float64(i)/float64(k), a + (b-a)*float64(i+1)/float64(k), st.Batch})
		}
		from = st.End
	}
	return out
}

// m0 is the initial global batch.
func (t *Truth) m0() int { return max(1, t.GPUs*t.Batch) }

// perGPU returns the per-GPU batch of epoch e.
func (t *Truth) perGPU(e int) int {
	if len(t.Stages) == 0 {
		return t.Batch
	}
	i, _ := slices.BinarySearchFunc(t.Stages, e, func(st Stage, e int) int { return cmp.Compare(st.End, e+1) })
	return t.Stages[min(i, len(t.Stages)-1)].Batch
}

// epoch returns the epoch under way at progress done of total.
func (t *Truth) epoch(done, total float64) int {
	if t.Epochs <= 0 || !(total > 0) {
		return 0
	}
	return min(max(int(done/total*float64(t.Epochs)), 0), t.Epochs-1)
}

// noise returns φ at job j's progress.
func (t *Truth) noise(j *policy.Job) float64 {
	if !(j.StepsTotal > 0) {
		return t.noiseAt(0)
	}
	return t.noiseAt(min(max(j.StepsDone/j.StepsTotal, 0), 1))
}

// noiseAt returns φ at fraction done of training: NoiseStart·(NoiseEnd /
// NoiseStart)^done.
func (t *Truth) noiseAt(done float64) float64 {
	if !(t.NoiseStart > 0 && t.NoiseEnd > 0) {
		return math.Inf(1)
	}
	return t.NoiseStart * math.Pow(t.NoiseEnd/t.NoiseStart, done)
}

// scaling returns the speed of k GPUs at global batch b, when the job's
// own schedule would run own and the noise scale is φ, relative to the
// nominal run:
//
//	scaling = X(k, b)/X(n, M0) · E(b)/E(own),  E(x) = min(1, (φ + M0)/(φ + x)),
//
// with X the examples per second of Perf on one server (a batch split into
// micro-batches of at most LocalMax) and E Pollux's statistical efficiency,
// capped at 1 (a batch below M0 counts as no more efficient than M0). The
// job's own schedule is taken to converge in its epochs (Shockwave's
// premise), so it runs at E = 1; a batch the policy chooses instead gains
// or loses the efficiency between the two (Pollux's). Zero Perf scales
// linearly: X(k, ·) = k.
func (t *Truth) scaling(k, b, own int, phi float64) float64 {
	if k <= 0 || b <= 0 || own <= 0 || t.GPUs <= 0 {
		return 0
	}
	m0 := float64(t.m0())
	eff := func(x int) float64 {
		if math.IsInf(phi, 1) {
			return 1
		}
		return min(1, (phi+m0)/(phi+float64(x)))
	}
	rel := eff(b) / eff(own)
	if t.Perf == (throughput.Params{}) {
		return float64(k) / float64(t.GPUs) * rel
	}
	m, s := efficiency.Split(b, k, t.LocalMax)
	m1, s1 := efficiency.Split(t.m0(), t.GPUs, t.LocalMax)
	nominal := t.Perf.Throughput(1, t.GPUs, float64(m1), s1)
	if !(nominal > 0) {
		return 0
	}
	return t.Perf.Throughput(1, k, float64(m), s) / nominal * rel
}

// spread returns the run's locality factor: Spread when its GPUs span
// servers, 1 otherwise.
func (t *Truth) spread(run placement.Run) float64 {
	if t.Spread == 0 || len(run.Assignments) < 2 {
		return 1
	}
	first := run.Assignments[0].Server
	for _, a := range run.Assignments[1:] {
		if a.Server != first {
			return t.Spread
		}
	}
	return 1
}
