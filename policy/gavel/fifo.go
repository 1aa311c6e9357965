package gavel

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gavel.fifo",
		"Gavel FIFO, heterogeneity-aware: jobs in arrival order take the fastest type with enough free GPUs",
		policy.InRounds(variantFactory(false, false, newFIFO)))
	policy.Register("gavel.fifo-agnostic",
		"Gavel FIFO, heterogeneity-agnostic baseline: jobs in arrival order take the type with the most free GPUs",
		policy.InRounds(variantFactory(true, false, newFIFO)))
}

func newFIFO() (policy.Policy, switches) {
	p := &FIFO{}
	return p, switches{agnostic: &p.Agnostic}
}

// FIFO is Gavel's first-in-first-out baseline. It solves no program: every
// job runs all the time on one accelerator type or waits, so X_jk ∈ {0,1}.
// The zero value is the heterogeneity-aware, non-preemptive policy without
// backfilling.
//
// The queue holds the jobs in order of arrival, ties broken by ID. A round
// has two passes:
//
//  1. Running jobs keep their type (unless Preemptive). In queue order, a job
//     whose Placement is non-empty keeps the accelerator type of the servers
//     it runs on, provided all those servers are of one type, its
//     throughput there is positive and that type still has at least its
//     GPU count free. A running job that cannot keep its type rejoins the
//     queue at its place, and the Decision carries a warning.
//  2. The other jobs, in queue order, each take one type with at least its
//     GPU count free and positive throughput. The aware policy takes the type
//     where the job's throughput is highest, ties broken by type name. The
//     agnostic policy takes the type with the most free GPUs at that moment,
//     ties broken by type name, which spreads jobs over the types without
//     randomness. A job that fits nowhere waits, and so, as in Gavel's code,
//     does every job behind it, unless Backfill is set.
//
// Capacity counts GPUs per type, as Gavel does; server boundaries are left to
// placement. A job never gets a type where its throughput is zero. Every job
// gets a Grant with its GPU count; a waiting job's Grant has no shares. The
// Decision's Objective is the number of jobs scheduled (kept or started).
type FIFO struct {
	// Agnostic ignores how fast each type runs the job: the
	// heterogeneity-agnostic baseline ("gavel.fifo-agnostic").
	Agnostic bool `json:"agnostic,omitempty"`
	// Backfill lets later jobs start when a job ahead of them in the queue
	// fits nowhere. Gavel's code stops at that job.
	Backfill bool `json:"backfill,omitempty"`
	// Preemptive ignores where jobs run now and assigns every job afresh in
	// queue order, as Gavel's heterogeneity-aware FIFO does each round.
	Preemptive bool `json:"preemptive,omitempty"`
}

// Name returns "gavel.fifo" or, when Agnostic, "gavel.fifo-agnostic".
func (p *FIFO) Name() string {
	if p.Agnostic {
		return "gavel.fifo-agnostic"
	}
	return "gavel.fifo"
}

// Facts implements policy.Reader: the aware policy takes each job's fastest type, the agnostic one reads nothing.
func (p *FIFO) Facts() (uses, needs policy.Facts) { return variantFacts(0, p.Agnostic, false), 0 }

// Allocate assigns the snapshot's jobs to types in FIFO order.
func (p *FIFO) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, jobs, out, err := prepare(ctx, p.Name(), s)
	if err != nil || len(jobs) == 0 {
		return empty(p.Name(), out, err)
	}
	// jobs are in ID order, so a stable sort by arrival breaks ties by ID.
	queue := slices.Clone(jobs)
	slices.SortStableFunc(queue, func(a, b *policy.Job) int { return cmp.Compare(a.Arrival, b.Arrival) })

	types := s.Cluster.Types()
	free := make(map[allocation.Accelerator]int, len(types))
	for _, k := range types {
		free[k] = s.Cluster.GPUs(k)
	}
	chosen := make(map[string]allocation.Accelerator, len(queue))
	var warnings []string

	waiting := queue
	if !p.Preemptive {
		serverType := make(map[string]allocation.Accelerator, len(s.Cluster.Servers))
		for _, srv := range s.Cluster.Servers {
			serverType[srv.ID] = srv.Accelerator
		}
		waiting = nil
		for _, j := range queue {
			if len(j.Placement) == 0 {
				waiting = append(waiting, j)
				continue
			}
			k, why := fifoKeep(j, serverType, free)
			if why != "" {
				warnings = append(warnings, fmt.Sprintf("job %q: cannot keep running where it is: %s; it rejoins the queue", j.ID, why))
				waiting = append(waiting, j)
				continue
			}
			chosen[j.ID] = k
			free[k] -= j.GPUs
		}
	}
	for _, j := range waiting {
		k, ok := p.pick(j, types, free)
		if !ok {
			if p.Backfill {
				continue
			}
			break
		}
		chosen[j.ID] = k
		free[k] -= j.GPUs
	}

	a := make(allocation.Allocation, len(jobs))
	for _, j := range jobs {
		g := allocation.Grant{GPUs: j.GPUs}
		if k, ok := chosen[j.ID]; ok {
			g.Shares = map[allocation.Accelerator]float64{k: 1}
		}
		a[j.ID] = g
	}
	return &policy.Decision{
		Policy:      p.Name(),
		Objective:   float64(len(chosen)),
		Allocation:  a,
		Unscheduled: out,
		Warnings:    warnings,
	}, nil
}

// fifoKeep returns the type a running job keeps, or why it cannot keep one.
func fifoKeep(j *policy.Job, serverType map[string]allocation.Accelerator, free map[allocation.Accelerator]int) (allocation.Accelerator, string) {
	k := serverType[j.Placement[0].Server]
	for _, a := range j.Placement[1:] {
		if t := serverType[a.Server]; t != k {
			return "", fmt.Sprintf("it runs on both %s and %s", k, t)
		}
	}
	switch {
	case j.Throughput[k] <= 0:
		return "", fmt.Sprintf("its throughput on %s is zero", k)
	case free[k] < j.GPUs:
		return "", fmt.Sprintf("%s has %d GPUs left for the %d it needs", k, free[k], j.GPUs)
	}
	return k, ""
}

// pick returns the type job j takes given the free GPUs per type, if any:
// among the types with at least j.GPUs free where j's throughput is positive,
// the fastest for j (aware) or the one with the most free GPUs (agnostic),
// ties broken by type name (types is sorted).
func (p *FIFO) pick(j *policy.Job, types []allocation.Accelerator, free map[allocation.Accelerator]int) (allocation.Accelerator, bool) {
	var best allocation.Accelerator
	found := false
	for _, k := range types {
		if free[k] < j.GPUs || j.Throughput[k] <= 0 {
			continue
		}
		better := !found
		if found {
			if p.Agnostic {
				better = free[k] > free[best]
			} else {
				better = j.Throughput[k] > j.Throughput[best]
			}
		}
		if better {
			best, found = k, true
		}
	}
	return best, found
}
