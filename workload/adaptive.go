package workload

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

// Adaptation is the truth about one adaptive job: the batch size of each
// epoch and the seconds an epoch takes at each batch size on the job's
// GPUs. It must not change once a simulation has used it.
type Adaptation struct {
	// Batch is the batch size of each epoch.
	Batch []int
	// EpochSeconds is the duration of an epoch at each batch size of
	// Batch, on the job's GPUs.
	EpochSeconds map[int]float64
}

// adaptRun is a run of consecutive epochs at one batch size.
type adaptRun struct {
	bs  int
	end int // one past its last epoch
}

// adaptIndex is what Adaptive computes once per Adaptation.
type adaptIndex struct {
	// prefix[k] is the time of epochs [0, k); len(Batch)+1 entries.
	prefix []float64
	runs   []adaptRun
}

// Adaptive simulates jobs whose batch size changes during training, as in
// Shockwave's workloads (GNS and Accordion, see Schedule). Set a
// Simulation's Speed, Observe and Exclusive to the methods of the same
// Adaptive; ReadShockwaveTrace returns one for its jobs.
//
// For an adaptive job a step is an epoch: StepsTotal is the number of
// epochs and StepsDone the fractional epochs done. Its Throughput on the
// type it runs on is the epochs per second at the batch size in force now,
// 1/EpochSeconds[bs], so what the job reports depends on its batch size;
// Observe updates it, with the job's Adaptive facts (History, BatchSize),
// as the job crosses regimes. The Adaptation is the truth on whatever type
// the job runs on (Shockwave's clusters are homogeneous).
//
// Speed walks the job's remaining epochs from StepsDone, each at its own
// duration, for one Round of work (or until the job finishes) and returns
// the mean epochs per second over that walk. A round that crosses regimes
// thus runs each epoch at its own speed, and a job that finishes within
// the round finishes at the exact time. When a restart (Simulation.Restart
// or Reallocate) shortens the round, the job runs for the shorter time at
// that mean rate, which slightly misplaces its progress when the round
// crosses regimes; a job whose remaining epochs take at most the shortened
// round still finishes at the exact time. A job without an Adaptation
// runs at its Throughput on the run's type.
//
// Exclusive returns the job's post-adaptation runtime alone on its GPUs,
// Σ_e EpochSeconds[Batch[e]], the denominator of Shockwave's finish-time
// fairness. An Adaptive may be shared by simulations that run at the same
// time.
type Adaptive struct {
	// Jobs maps a job ID to its Adaptation.
	Jobs map[string]*Adaptation
	// Round is the simulation's round length, over which Speed averages;
	// zero means DefaultRound.
	Round time.Duration

	mu    sync.Mutex
	index map[*Adaptation]*adaptIndex
}

// indexOf returns the prefix sums and runs of ad, computing them once.
func (a *Adaptive) indexOf(ad *Adaptation) *adaptIndex {
	a.mu.Lock()
	defer a.mu.Unlock()
	if x := a.index[ad]; x != nil {
		return x
	}
	x := &adaptIndex{prefix: make([]float64, len(ad.Batch)+1)}
	for e, b := range ad.Batch {
		x.prefix[e+1] = x.prefix[e] + ad.EpochSeconds[b]
		if n := len(x.runs); n > 0 && x.runs[n-1].bs == b {
			x.runs[n-1].end = e + 1
		} else {
			x.runs = append(x.runs, adaptRun{bs: b, end: e + 1})
		}
	}
	if a.index == nil {
		a.index = make(map[*Adaptation]*adaptIndex)
	}
	a.index[ad] = x
	return x
}

// Prepare sets what the adaptive jobs report at submission, at StepsDone
// zero: their Adaptive History (zeros) and BatchSize (the first epoch's),
// and their Throughput, 1/EpochSeconds of that batch size, on every type
// where it is positive. It checks that each job with an Adaptation has
// StepsTotal equal to its number of epochs, a positive finite duration at
// each of its batch sizes and, if it has Adaptive facts, Epochs equal to
// the number of epochs, every batch size among Regimes and EpochSeconds
// matching the Adaptation's. Errors wrap ErrAdaptation. Jobs without an
// Adaptation are left alone.
func (a *Adaptive) Prepare(jobs []policy.Job) error {
	for i := range jobs {
		j := &jobs[i]
		ad := a.Jobs[j.ID]
		if ad == nil {
			continue
		}
		if err := adaptConsistent(j, ad); err != nil {
			return fmt.Errorf("%w: job %q: %w", ErrAdaptation, j.ID, err)
		}
		bs := ad.Batch[0]
		if j.Adaptive != nil {
			x := *j.Adaptive
			x.History = make([]int, len(x.Regimes))
			x.BatchSize = bs
			j.Adaptive = &x
		}
		tp := maps.Clone(j.Throughput)
		for acc, v := range tp {
			if v > 0 {
				tp[acc] = 1 / ad.EpochSeconds[bs]
			}
		}
		j.Throughput = tp
	}
	return nil
}

// adaptConsistent checks a job against its Adaptation.
func adaptConsistent(j *policy.Job, ad *Adaptation) error {
	n := len(ad.Batch)
	if n == 0 {
		return fmt.Errorf("no epochs")
	}
	if j.StepsTotal != float64(n) {
		return fmt.Errorf("steps_total %v is not its %d epochs", j.StepsTotal, n)
	}
	for _, b := range slices.Sorted(maps.Keys(ad.EpochSeconds)) {
		if s := ad.EpochSeconds[b]; !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("batch size %d: %v seconds per epoch", b, s)
		}
	}
	for _, b := range ad.Batch {
		if _, ok := ad.EpochSeconds[b]; !ok {
			return fmt.Errorf("batch size %d: no epoch duration", b)
		}
	}
	x := j.Adaptive
	if x == nil {
		return nil
	}
	if x.Epochs != n {
		return fmt.Errorf("adaptive.epochs %d is not its %d epochs", x.Epochs, n)
	}
	if len(x.EpochSeconds) != len(x.Regimes) {
		return fmt.Errorf("adaptive: %d epoch durations for %d regimes", len(x.EpochSeconds), len(x.Regimes))
	}
	for i, b := range x.Regimes {
		if s, ok := ad.EpochSeconds[b]; ok && s != x.EpochSeconds[i] {
			return fmt.Errorf("adaptive.epoch_seconds[%d]: %v, but batch size %d takes %v", i, x.EpochSeconds[i], b, s)
		}
	}
	for _, b := range ad.Batch {
		if !slices.Contains(x.Regimes, b) {
			return fmt.Errorf("batch size %d is not among adaptive.regimes %v", b, x.Regimes)
		}
	}
	return nil
}

// Speed returns the epochs per second job j makes in run: the mean over
// one Round of work from its progress, see Adaptive. It does not modify j.
func (a *Adaptive) Speed(j *policy.Job, g allocation.Grant, run placement.Run) float64 {
	ad := a.Jobs[j.ID]
	if ad == nil || len(ad.Batch) == 0 {
		return j.Throughput[run.Accelerator]
	}
	x := a.indexOf(ad)
	n := len(ad.Batch)
	pos := min(max(j.StepsDone, 0), float64(n))
	if pos >= float64(n) {
		return 1 / ad.EpochSeconds[ad.Batch[n-1]]
	}
	k := int(pos)
	t0 := x.prefix[k] + (pos-float64(k))*ad.EpochSeconds[ad.Batch[k]]
	round := cmp.Or(a.Round, placement.DefaultRound).Seconds()
	t1 := t0 + round
	if total := x.prefix[n]; t1 >= total {
		if total <= t0 { // rounding at the very end
			return 1 / ad.EpochSeconds[ad.Batch[n-1]]
		}
		return (float64(n) - pos) / (total - t0)
	}
	// The epoch under way at t1: the last k with prefix[k] ≤ t1.
	k1 := sort.Search(n+1, func(i int) bool { return x.prefix[i] > t1 }) - 1
	k1 = min(max(k1, k), n-1)
	end := float64(k1) + (t1-x.prefix[k1])/ad.EpochSeconds[ad.Batch[k1]]
	return (end - pos) / round
}

// Observe updates what job j reports after it ran: its Adaptive History
// (completed epochs per regime) and BatchSize (that of the epoch under
// way, or of the last epoch once done), and its Throughput on the run's
// type, 1/EpochSeconds of that batch size. The job's Adaptive and
// Throughput are replaced, not modified, so that snapshots given out
// earlier keep their values.
func (a *Adaptive) Observe(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration) {
	ad := a.Jobs[j.ID]
	if ad == nil || len(ad.Batch) == 0 {
		return
	}
	x := a.indexOf(ad)
	n := len(ad.Batch)
	done := min(max(int(j.StepsDone), 0), n)
	bs := ad.Batch[min(done, n-1)]
	if j.Adaptive != nil {
		y := *j.Adaptive
		y.History = make([]int, len(y.Regimes))
		from := 0
		for _, r := range x.runs {
			if from >= done {
				break
			}
			if i := slices.Index(y.Regimes, r.bs); i >= 0 {
				y.History[i] += min(r.end, done) - from
			}
			from = r.end
		}
		y.BatchSize = bs
		j.Adaptive = &y
	}
	if v := 1 / ad.EpochSeconds[bs]; j.Throughput[run.Accelerator] != v {
		tp := maps.Clone(j.Throughput)
		if tp == nil {
			tp = make(map[allocation.Accelerator]float64, 1)
		}
		tp[run.Accelerator] = v
		j.Throughput = tp
	}
}

// Exclusive returns job j's runtime alone on its GPUs: Σ_e
// EpochSeconds[Batch[e]] for an adaptive job, its post-adaptation runtime
// (Shockwave's finish-time-fairness denominator), and otherwise StepsTotal
// over its best Throughput, as a Simulation computes without the hook.
func (a *Adaptive) Exclusive(j *policy.Job) time.Duration {
	ad := a.Jobs[j.ID]
	if ad == nil || len(ad.Batch) == 0 {
		return seconds(j.StepsTotal / slices.Max(append(slices.Collect(maps.Values(j.Throughput)), 0)))
	}
	x := a.indexOf(ad)
	return seconds(x.prefix[len(ad.Batch)])
}
