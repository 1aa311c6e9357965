package pollux

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("pollux.optimus",
		"Optimus baseline: adds GPUs a worker at a time to the job whose remaining time shrinks most, at its fixed batch size",
		func(config []byte) (policy.Policy, error) {
			p := &Optimus{}
			return p, policy.DecodeConfig(config, p)
		})
	policy.Register("pollux.fixed",
		"fixed-configuration baseline: every job at its own GPU count and batch size, placed in arrival order with backfill",
		func(config []byte) (policy.Policy, error) {
			p := &Fixed{}
			return p, policy.DecodeConfig(config, p)
		})
}

// Optimus is the Optimus baseline of Pollux's evaluation: each job keeps its
// batch size (Elastic.BatchSize) and the policy only chooses GPU counts.
// Jobs get their smallest GPU count in arrival order while GPUs last; then
// GPUs are added a worker at a time (w = Job.Worker() GPUs, one for a job
// without worker size) to the job with the largest
//
//	(T_j(k) − T_j(k+w)) · R_j / w,
//
// the time its remaining R_j steps would save per GPU added, where T_j(k)
// is its iteration time on k GPUs packed on as few nodes as possible (with
// gradient accumulation when the batch does not fit LocalBatchMax per GPU).
// A job's counts are whole workers within [MinGPUs, MaxGPUs]. A job without
// a fitted Perf is taken to scale linearly, and a job without Elastic facts
// gets exactly its GPUs. Jobs are packed onto servers, the largest first,
// each on the fewest servers that hold it in whole workers; an elastic job
// whose workers do not fit the GPUs left in pieces runs on fewer workers,
// down to its smallest count. Optimus keeps no state.
type Optimus struct{}

// Name returns "pollux.optimus".
func (*Optimus) Name() string { return "pollux.optimus" }

// Facts implements policy.Reader: it sizes elastic jobs by the time their remaining steps save.
func (*Optimus) Facts() (uses, needs policy.Facts) {
	return policy.FactElastic | policy.FactLength, policy.FactElastic | policy.FactLength
}

// Allocate assigns GPUs greedily by marginal gain.
func (o *Optimus) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, out, err := begin(ctx, s, leastElastic)
	if err != nil {
		return nil, err
	}
	jobs := byArrival(s.Jobs)
	nodeGPUs := 0
	for _, srv := range s.Cluster.Servers {
		nodeGPUs = max(nodeGPUs, srv.GPUs)
	}
	// Each job runs on one accelerator type, chosen when it is admitted:
	// the usable type with the most free GPUs.
	// Cluster.Types, GPUs and TotalGPUs scan every server: once per call.
	types, total := s.Cluster.Types(), s.Cluster.TotalGPUs()
	free := make(map[allocation.Accelerator]int)
	for _, t := range types {
		free[t] = s.Cluster.GPUs(t)
	}
	gpus := make([]int, len(jobs))
	typ := make([]allocation.Accelerator, len(jobs))
	lo, hi := make([]int, len(jobs)), make([]int, len(jobs))
	for i, j := range jobs {
		lo[i], hi[i] = j.GPUs, j.GPUs
		if e := j.Elastic; e != nil {
			lo[i] = leastElastic(j)
			hi[i] = max(e.MaxBatchSize, e.BatchSize) / max(e.LocalBatchMin, 1)
			if e.MaxGPUs > 0 {
				hi[i] = min(hi[i], e.MaxGPUs)
			}
			hi[i] = min(hi[i], total)
			hi[i] = max(hi[i]-hi[i]%j.Worker(), lo[i])
		}
		for _, t := range types {
			if usable(j, t) && free[t] >= lo[i] && (typ[i] == "" || free[t] > free[typ[i]]) {
				typ[i] = t
			}
		}
		if typ[i] != "" {
			gpus[i] = lo[i]
			free[typ[i]] -= lo[i]
		}
	}
	for {
		best, gain := -1, 0.0
		for i, j := range jobs {
			k, w := gpus[i], j.Worker()
			if k == 0 || k >= hi[i] || free[typ[i]] < w {
				continue
			}
			// Per GPU, so that jobs of large workers are not favoured.
			g := (iterTime(j, k, nodeGPUs) - iterTime(j, k+w, nodeGPUs)) * remaining(j) / float64(w)
			if g > gain {
				best, gain = i, g
			}
		}
		if best < 0 {
			break
		}
		gpus[best] += jobs[best].Worker()
		free[typ[best]] -= jobs[best].Worker()
	}
	d := &policy.Decision{Policy: o.Name(), Allocation: allocation.Allocation{}, Unscheduled: out}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(gpus[b], gpus[a]) })
	g := placement.NewGangs(s.Cluster)
	for _, i := range order {
		// The count fits its type's free GPUs, and with workers of one
		// GPU that is enough; larger workers may need fewer of them.
		for k := gpus[i]; k >= lo[i] && k > 0; k -= jobs[i].Worker() {
			if place(g, d, jobs[i], k, typ[i]) {
				break
			}
		}
	}
	return d, nil
}

// iterTime returns a job's time per step on k GPUs at its fixed batch.
func iterTime(j *policy.Job, k, nodeGPUs int) float64 {
	e := j.Elastic
	if e == nil || !fitted(e) {
		return 1 / float64(k)
	}
	m, s := efficiency.Split(e.BatchSize, k, e.LocalBatchMax)
	nodes := max(ceilDiv(k, max(nodeGPUs, 1)), 1)
	return e.Perf.IterTime(nodes, k, float64(m), s)
}

// remaining returns the steps a job has left, or 1 when its length is
// unknown.
func remaining(j *policy.Job) float64 {
	if j.StepsTotal > 0 {
		return math.Max(j.StepsTotal-j.StepsDone, 0)
	}
	return 1
}

// Fixed runs every job at its own configuration: GPUs (or Elastic.MinGPUs,
// at least 1, for a job that left its count to the policy) and
// Elastic.BatchSize. Running jobs keep their servers; waiting jobs are
// placed in arrival order wherever they fit, on as few servers as possible,
// and a job that does not fit lets later ones pass. Fixed keeps no state.
type Fixed struct{}

// Name returns "pollux.fixed".
func (*Fixed) Name() string { return "pollux.fixed" }

// Facts implements policy.Reader: an elastic job runs at its least GPU count and its own batch size, never adapted.
func (*Fixed) Facts() (uses, needs policy.Facts) { return policy.FactElastic, 0 }

// Allocate keeps running jobs and starts waiting ones that fit.
func (f *Fixed) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, out, err := begin(ctx, s, leastFixed)
	if err != nil {
		return nil, err
	}
	d := &policy.Decision{Policy: f.Name(), Allocation: allocation.Allocation{}, Unscheduled: out}
	g := placement.NewGangs(s.Cluster)
	jobs := byArrival(s.Jobs)
	for _, j := range jobs {
		if len(j.Placement) > 0 {
			if t, ok := g.Keep(j.Placement, j.GPUs, func(t allocation.Accelerator) bool { return usable(j, t) }); ok {
				k := 0
				for _, a := range j.Placement {
					k += a.GPUs
				}
				grant(d, j, k, t, slices.Clone(j.Placement))
			}
		}
	}
	for _, j := range jobs {
		if _, ok := d.Allocation[j.ID]; ok {
			continue
		}
		place(g, d, j, leastFixed(j), "")
	}
	return d, nil
}

// begin screens the snapshot (screen) and checks ctx.
func begin(ctx context.Context, s *policy.Snapshot, least func(*policy.Job) int) (*policy.Snapshot, map[string]string, error) {
	s, out, err := screen(s, least)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("pollux: %w", err)
	}
	return s, out, nil
}

// leastElastic is the fewest GPUs a job runs on when the policy picks an
// elastic job's count: max(MinGPUs, one worker), or a rigid job's GPUs.
func leastElastic(j *policy.Job) int {
	if j.Elastic == nil {
		return j.GPUs
	}
	return max(j.Elastic.MinGPUs, j.Worker())
}

// leastFixed is the GPUs a job runs on under Fixed: its own count, or for an
// elastic job that left it to the policy max(MinGPUs, one worker).
func leastFixed(j *policy.Job) int {
	if j.GPUs == 0 && j.Elastic != nil {
		return max(j.Elastic.MinGPUs, j.Worker())
	}
	return j.GPUs
}

// screen screens s with policy.Screen and also leaves out the elastic jobs
// whose least GPU count no accelerator type they can use holds in whole
// workers (Screen cannot know the count a policy picks for them): they could
// never run. A job without throughputs can use every type. It returns the
// snapshot of the other jobs and the jobs left out, with why.
func screen(s *policy.Snapshot, least func(*policy.Job) int) (*policy.Snapshot, map[string]string, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, nil, err
	}
	var never map[string]bool
	census := policy.NewCensus(s.Cluster)
	types := s.Cluster.Types()
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.Elastic == nil {
			continue // Screen checked its GPU count
		}
		c := *j
		c.GPUs = least(j)
		if len(c.Throughput) == 0 {
			c.Throughput = make(map[allocation.Accelerator]float64)
			for _, t := range types {
				c.Throughput[t] = 1
			}
		}
		if err := census.Runnable(&c); err != nil {
			if out == nil {
				out = make(map[string]string)
			}
			if never == nil {
				never = make(map[string]bool)
			}
			out[j.ID] = policy.Reason(err)
			never[j.ID] = true
		}
	}
	if never == nil {
		return s, out, nil
	}
	kept := &policy.Snapshot{Now: s.Now, Cluster: s.Cluster, Jobs: make([]policy.Job, 0, len(s.Jobs)-len(never))}
	for _, j := range s.Jobs {
		if !never[j.ID] {
			kept.Jobs = append(kept.Jobs, j)
		}
	}
	return kept, out, nil
}

// byArrival returns pointers to the jobs in arrival order, ties by ID.
func byArrival(jobs []policy.Job) []*policy.Job {
	out := make([]*policy.Job, len(jobs))
	for i := range jobs {
		out[i] = &jobs[i]
	}
	slices.SortFunc(out, func(a, b *policy.Job) int {
		return cmp.Or(cmp.Compare(a.Arrival, b.Arrival), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// usable reports whether job j can run on accelerator t.
func usable(j *policy.Job, t allocation.Accelerator) bool {
	return len(j.Throughput) == 0 || j.Throughput[t] > 0
}

// grant gives job j k GPUs of type t at place.
func grant(d *policy.Decision, j *policy.Job, k int, t allocation.Accelerator, place []allocation.Assignment) {
	g := allocation.Grant{GPUs: k, GPUsPerWorker: j.GPUsPerWorker, Shares: map[allocation.Accelerator]float64{t: 1}}
	if j.Elastic != nil {
		g.BatchSize = j.Elastic.BatchSize
	}
	d.Allocation[j.ID] = g
	if d.Placement == nil {
		d.Placement = make(map[string][]allocation.Assignment)
	}
	d.Placement[j.ID] = place
}

// place puts k GPUs of job j in whole workers on the fewest servers of a
// type it can use (only that type, unless only is empty), and reports
// whether they fit.
func place(g *placement.Gangs, d *policy.Decision, j *policy.Job, k int, only allocation.Accelerator) bool {
	where, t, ok := g.Place(k, j.Worker(), func(t allocation.Accelerator) bool { return usable(j, t) && (only == "" || t == only) })
	if ok {
		grant(d, j, k, t, where)
	}
	return ok
}
