package gavel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gavel.makespan",
		"Gavel minimum makespan, heterogeneity-aware: finishes the last job as early as possible",
		policy.InRounds(variantFactory(false, false, newMakespan)))
	policy.Register("gavel.makespan-agnostic",
		"Gavel minimum makespan, heterogeneity-agnostic baseline: every type as fast as the job's fastest",
		policy.InRounds(variantFactory(true, false, newMakespan)))
	policy.Register("gavel.makespan-ss",
		"Gavel minimum makespan with space sharing: pairs of jobs may share GPUs",
		policy.InRounds(variantFactory(false, true, newMakespan)))
}

func newMakespan() (policy.Policy, switches) {
	p := &Makespan{}
	return p, switches{&p.Agnostic, &p.SpaceSharing}
}

// Makespan minimizes the time until every job finishes at its current rate,
//
//	minimize_X  max_j  R_j / y_j(X)
//
// where R_j is job j's remaining steps. It is solved exactly as one LP,
// maximize u subject to y_j ≥ R_j·u, with makespan 1/u*, rather than by
// Gavel's bisection to within 5 %; a second LP then maximizes Σ_j y_j/R_j at
// u*, so that jobs off the critical path finish sooner (see MaxMinFairness).
// Jobs without steps left get no time. The Decision's Objective is the
// makespan in seconds.
//
// With Agnostic set, a job's throughput on every type it can run on is taken
// to be its best one: Gavel's agnostic baseline assumes every GPU is a V100.
type Makespan struct {
	Agnostic bool `json:"agnostic,omitempty"`
	// SpaceSharing lets pairs of jobs share GPUs, as in MaxMinFairness
	// ("gavel.makespan-ss").
	SpaceSharing bool `json:"space_sharing,omitempty"`
	// Solver selects the LP engine; the zero value is allocation.Auto.
	Solver allocation.Solver `json:"solver,omitempty"`
	// Warm starts each call's LPs where the last call's ended
	// (allocation.Warm): faster when the jobs change a little; results
	// equal a cold start's within CLP's tolerance, not bit for bit.
	Warm  bool `json:"warm,omitempty"`
	bases *allocation.Warm
	// byLP solves an agnostic program by LP too: what its structure is
	// tested against.
	byLP bool
}

// Name returns "gavel.makespan", "gavel.makespan-agnostic" or
// "gavel.makespan-ss".
func (p *Makespan) Name() string { return variant("gavel.makespan", p.Agnostic, p.SpaceSharing) }

// Facts implements policy.Reader: every job's length, and per its switches heterogeneity and co-location.
func (p *Makespan) Facts() (uses, needs policy.Facts) {
	return variantFacts(policy.FactLength, p.Agnostic, p.SpaceSharing), policy.FactLength
}

// Allocate solves the program for the snapshot's jobs.
func (p *Makespan) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, jobs, out, err := prepare(ctx, p.Name(), s)
	if err == nil {
		jobs, out = needSteps(p.Name(), jobs, out)
	}
	if err != nil || len(jobs) == 0 {
		return empty(p.Name(), out, err)
	}
	pp, warnings, err := variantPairs(p.Name(), s.Cluster, jobs, p.Agnostic, p.SpaceSharing)
	if err != nil {
		return nil, err
	}
	prog, ids, tput := newProgram(s.Cluster, jobs, p.Solver, warmBases(p.Warm, &p.bases), bestIfAgnostic(p.Agnostic), pp...)
	// The terms are y_j·T/R_j, T the longest time alone, so that u* is near
	// 1 whatever the units: at R/y of 10¹⁸ s, y_j/R_j fell below CLP's
	// tolerances and u* came back 0.
	longest := 0.0
	for _, job := range jobs {
		fastest := 0.0
		for _, x := range job.Throughput {
			fastest = math.Max(fastest, x)
		}
		if fastest > 0 {
			longest = math.Max(longest, (job.StepsTotal-job.StepsDone)/fastest)
		}
	}
	var terms []allocation.Expr
	beta := make([]float64, len(jobs)) // an agnostic term per unit of time
	for j, job := range jobs {
		if remaining := job.StepsTotal - job.StepsDone; remaining > 0 {
			terms = append(terms, prog.Throughput(j).Div(remaining/longest))
			beta[j] = slices.Max(tput[j]) / (remaining / longest)
		}
	}
	d := &policy.Decision{Policy: p.Name(), Unscheduled: out, Warnings: warnings}
	if len(terms) == 0 { // every job is done
		zero := make([][]float64, len(ids))
		for j := range zero {
			zero[j] = make([]float64, len(prog.Types()))
		}
		d.Allocation = prog.Allocation(ids, &allocation.Result{X: zero})
		return d, nil
	}
	var res *allocation.Result
	if p.Agnostic && !p.byLP {
		res, err = agnosticMaxMin(ctx, prog, beta, terms, allocation.Sum(terms...))
	} else {
		res, err = prog.MaximizeMin(ctx, terms, allocation.Sum(terms...))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name(), err)
	}
	if !(res.Objective > 0) {
		return nil, fmt.Errorf("%s: %w: the solver found no makespan (u* = %v)", p.Name(), allocation.ErrNumerical, res.Objective)
	}
	d.Objective = longest / res.Objective
	d.Allocation = allocationOf(prog, ids, res, p.Agnostic)
	return d, nil
}

// bestIfAgnostic returns the throughput a policy sees: the job's own, or,
// when agnostic, its best on every type where it can run (Gavel's agnostic
// baselines take every GPU to be a V100).
func bestIfAgnostic(agnostic bool) func(*policy.Job, allocation.Accelerator) float64 {
	return func(j *policy.Job, t allocation.Accelerator) float64 {
		x := j.Throughput[t]
		if agnostic && x > 0 {
			for _, y := range j.Throughput {
				x = max(x, y)
			}
		}
		return x
	}
}
