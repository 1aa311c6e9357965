package baseline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("baseline.fifo",
		"FIFO: jobs run in arrival order, the first that does not fit blocks the rest (head-of-line); any placement",
		policy.Configured[FIFO](nil))
	policy.Register("baseline.yarn-cs",
		"YARN-CS: FIFO with head-of-line blocking and consolidated placement, the YARN capacity scheduler as Tiresias models it",
		policy.Configured[YARNCS](nil))
	policy.Register("baseline.srtf",
		"SRTF: preemptive shortest-remaining-time-first (clairvoyant), backfilling",
		policy.Configured[SRTF](nil))
	policy.Register("baseline.srsf",
		"SRSF: preemptive shortest-remaining-service-first (remaining time × GPUs, clairvoyant), backfilling",
		policy.Configured[SRSF](nil))
}

// FIFO runs jobs in arrival order (ties by ID) and stops at the first one
// that does not fit: head-of-line blocking. Jobs go on any GPUs, on as few
// servers as the free GPUs allow. A running job keeps its GPUs; since a
// later job never runs ahead of an earlier one, no job is preempted.
type FIFO struct{}

// YARNCS is FIFO whose jobs run only consolidated, on the fewest servers
// that could hold them (placement.Gangs.Consolidate), and otherwise wait,
// blocking the jobs behind them: YARN's capacity scheduler as Tiresias
// models it.
type YARNCS struct{}

// SRTF runs the job with the shortest remaining time first, preempting
// running jobs, and backfills: a job that does not fit does not stop those
// after it. A running job keeps its GPUs when it runs again; a preempted
// one waits rather than backfill other GPUs, so no job migrates. A job's remaining time is (StepsTotal − StepsDone) over its
// best Throughput; ties by Arrival, then ID. Every job needs StepsTotal.
type SRTF struct{}

// SRSF is SRTF by remaining service: remaining time × GPUs.
type SRSF struct{}

// Name returns "baseline.fifo".
func (*FIFO) Name() string { return "baseline.fifo" }

// Name returns "baseline.yarn-cs".
func (*YARNCS) Name() string { return "baseline.yarn-cs" }

// Name returns "baseline.srtf".
func (*SRTF) Name() string { return "baseline.srtf" }

// Name returns "baseline.srsf".
func (*SRSF) Name() string { return "baseline.srsf" }

// Facts implements policy.Reader: a job starts on its fastest type with room.
func (*FIFO) Facts() (uses, needs policy.Facts) { return policy.FactHeterogeneity, 0 }

// Facts implements policy.Reader: a job starts on its fastest type with room.
func (*YARNCS) Facts() (uses, needs policy.Facts) { return policy.FactHeterogeneity, 0 }

// Facts implements policy.Reader: it ranks by length (unknown ranks last) and picks the fastest type.
func (*SRTF) Facts() (uses, needs policy.Facts) {
	return policy.FactHeterogeneity | policy.FactLength, policy.FactLength
}

// Facts implements policy.Reader: it ranks by length (unknown ranks last) and picks the fastest type.
func (*SRSF) Facts() (uses, needs policy.Facts) {
	return policy.FactHeterogeneity | policy.FactLength, policy.FactLength
}

// Allocate runs the jobs that fit in arrival order, up to the first that
// does not.
func (p *FIFO) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return decide(ctx, p.Name(), s, nil, true, false)
}

// Allocate runs the jobs that fit consolidated in arrival order, up to the
// first that does not.
func (p *YARNCS) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return decide(ctx, p.Name(), s, nil, true, true)
}

// Allocate runs the jobs with the shortest remaining time that fit.
func (p *SRTF) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return decide(ctx, p.Name(), s, remaining(false), false, false)
}

// Allocate runs the jobs with the shortest remaining service that fit.
func (p *SRSF) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return decide(ctx, p.Name(), s, remaining(true), false, false)
}

// remaining returns the key of SRTF (remaining seconds at the best
// throughput) or, with service, of SRSF (those seconds × GPUs). A job of
// unknown length has key +Inf: it ranks after every job whose length is
// known, in arrival order.
func remaining(service bool) func(j *policy.Job) float64 {
	return func(j *policy.Job) float64 {
		if j.StepsTotal <= 0 {
			return math.Inf(1)
		}
		best := 0.0
		for _, x := range j.Throughput {
			best = math.Max(best, x)
		}
		t := math.Max(j.StepsTotal-j.StepsDone, 0) / best // Validate: best > 0
		if service {
			t *= float64(j.GPUs)
		}
		return t
	}
}

// decide ranks the jobs of s by key (lowest first; nil ranks all alike),
// then Arrival, then ID, and admits them with placement.Priority, with
// head-of-line blocking or backfilling, consolidated or not. Every job that
// runs gets all the time of its GPUs on one type.
func decide(ctx context.Context, name string, s *policy.Snapshot, key func(*policy.Job) float64, headOfLine, consolidate bool) (*policy.Decision, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &policy.Decision{Policy: name, Unscheduled: out}
	type ranked struct {
		j   *policy.Job
		key float64
	}
	jobs := make([]ranked, 0, len(s.Jobs))
	census := policy.NewCensus(s.Cluster)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.GPUs < 1 {
			d.Leave(j.ID, fmt.Sprintf("gpus: %d; %s runs gangs of a fixed size, not elastic jobs", j.GPUs, name))
			continue
		}
		if j.Elastic == nil {
			// Screen checked that its GPU count fits.
		} else if err := census.Runnable(j); err != nil {
			d.Leave(j.ID, policy.Reason(err))
			continue
		}
		r := ranked{j: j}
		if key != nil {
			r.key = key(j)
		}
		jobs = append(jobs, r)
	}
	slices.SortFunc(jobs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.j.Arrival, b.j.Arrival), cmp.Compare(a.j.ID, b.j.ID))
	})
	reqs := make([]placement.Request, len(jobs))
	for i, r := range jobs {
		reqs[i] = placement.Request{ID: r.j.ID, GPUs: r.j.GPUs, Worker: r.j.Worker(), Current: r.j.Placement, Throughput: r.j.Throughput, Consolidate: consolidate}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	runs, err := placement.Priority{HeadOfLine: headOfLine}.Admit(s.Cluster, reqs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	round := placement.Round{Runs: runs}
	d.Allocation, d.Placement = round.Allocation(), round.Placement()
	return d, nil
}
