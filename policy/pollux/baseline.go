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
		"Optimus baseline: adds GPUs one at a time to the job whose remaining time shrinks most, at its fixed batch size",
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
// GPUs are added one at a time to the job with the largest
//
//	(T_j(k) − T_j(k+1)) · R_j,
//
// the time its remaining R_j steps would save, where T_j(k) is its
// iteration time on k GPUs packed on as few nodes as possible (with
// gradient accumulation when the batch does not fit LocalBatchMax per GPU).
// A job without a fitted Perf is taken to scale linearly, and a job without
// Elastic facts gets exactly its GPUs. Jobs are packed onto servers, the
// largest first, each on the fewest servers that hold it. Optimus keeps no
// state.
type Optimus struct{}

// Name returns "pollux.optimus".
func (*Optimus) Name() string { return "pollux.optimus" }

// Allocate assigns GPUs greedily by marginal gain.
func (o *Optimus) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := begin(ctx, s); err != nil {
		return nil, err
	}
	jobs := byArrival(s.Jobs)
	nodeGPUs := 0
	for _, srv := range s.Cluster.Servers {
		nodeGPUs = max(nodeGPUs, srv.GPUs)
	}
	// Each job runs on one accelerator type, chosen when it is admitted:
	// the usable type with the most free GPUs.
	free := make(map[allocation.Accelerator]int)
	for _, t := range s.Cluster.Types() {
		free[t] = s.Cluster.GPUs(t)
	}
	gpus := make([]int, len(jobs))
	typ := make([]allocation.Accelerator, len(jobs))
	lo, hi := make([]int, len(jobs)), make([]int, len(jobs))
	for i, j := range jobs {
		lo[i], hi[i] = j.GPUs, j.GPUs
		if e := j.Elastic; e != nil {
			lo[i] = max(e.MinGPUs, 1)
			hi[i] = max(e.MaxBatchSize, e.BatchSize) / max(e.LocalBatchMin, 1)
			if e.MaxGPUs > 0 {
				hi[i] = min(hi[i], e.MaxGPUs)
			}
			hi[i] = max(min(hi[i], s.Cluster.TotalGPUs()), lo[i])
		}
		for _, t := range s.Cluster.Types() {
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
			k := gpus[i]
			if k == 0 || k >= hi[i] || free[typ[i]] == 0 {
				continue
			}
			g := (iterTime(j, k, nodeGPUs) - iterTime(j, k+1, nodeGPUs)) * remaining(j)
			if g > gain {
				best, gain = i, g
			}
		}
		if best < 0 {
			break
		}
		gpus[best]++
		free[typ[best]]--
	}
	d := &policy.Decision{Policy: o.Name(), Allocation: allocation.Allocation{}}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(gpus[b], gpus[a]) })
	g := placement.NewGangs(s.Cluster)
	for _, i := range order {
		if gpus[i] > 0 {
			place(g, d, jobs[i], gpus[i], typ[i])
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

// Allocate keeps running jobs and starts waiting ones that fit.
func (f *Fixed) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := begin(ctx, s); err != nil {
		return nil, err
	}
	d := &policy.Decision{Policy: f.Name(), Allocation: allocation.Allocation{}}
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
		k := j.GPUs
		if k == 0 && j.Elastic != nil {
			k = max(j.Elastic.MinGPUs, 1)
		}
		place(g, d, j, k, "")
	}
	return d, nil
}

// begin validates the snapshot and checks ctx.
func begin(ctx context.Context, s *policy.Snapshot) error {
	if err := policy.Validate(s); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pollux: %w", err)
	}
	return nil
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

// maxOnType returns the most GPUs job j can get on one accelerator type.
func maxOnType(c allocation.Cluster, j *policy.Job) int {
	best := 0
	for _, t := range c.Types() {
		if usable(j, t) {
			best = max(best, c.GPUs(t))
		}
	}
	return best
}

// grant gives job j k GPUs of type t at place.
func grant(d *policy.Decision, j *policy.Job, k int, t allocation.Accelerator, place []allocation.Assignment) {
	g := allocation.Grant{GPUs: k, Shares: map[allocation.Accelerator]float64{t: 1}}
	if j.Elastic != nil {
		g.BatchSize = j.Elastic.BatchSize
	}
	d.Allocation[j.ID] = g
	if d.Placement == nil {
		d.Placement = make(map[string][]allocation.Assignment)
	}
	d.Placement[j.ID] = place
}

// place puts k GPUs of job j on the fewest servers of a type it can use
// (only that type, unless only is empty).
func place(g *placement.Gangs, d *policy.Decision, j *policy.Job, k int, only allocation.Accelerator) {
	where, t, ok := g.Place(k, func(t allocation.Accelerator) bool { return usable(j, t) && (only == "" || t == only) })
	if ok {
		grant(d, j, k, t, where)
	}
}
