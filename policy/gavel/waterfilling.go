package gavel

import (
	"context"
	"fmt"
	"math"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gavel.water-filling",
		"Gavel water-filling max-min fairness (leximin), heterogeneity-aware: raises every job that can still rise",
		policy.InRounds(variantFactory(false, false, newWaterFilling)))
	policy.Register("gavel.water-filling-agnostic",
		"Gavel water-filling max-min fairness (leximin), heterogeneity-agnostic baseline",
		policy.InRounds(variantFactory(true, false, newWaterFilling)))
}

func newWaterFilling() (policy.Policy, switches) {
	p := &WaterFilling{}
	return p, switches{agnostic: &p.Agnostic}
}

// WaterFilling is the leximin refinement of MaxMinFairness: after the
// bottleneck jobs reach t*, the others keep rising until each hits a limit
// of its own. With the terms z_j = (s_j/w_j)·y_j/T^prop_j of
// MaxMinFairness, level ℓ is found by
//
//	maximize ℓ  subject to  z_j ≥ ℓ for every unfrozen job,  z_j ≥ F_j for every frozen one,
//
// and every unfrozen job that cannot rise above ℓ is frozen at F_j = ℓ,
// until all jobs are frozen. A job is known to be stuck when the dual of its
// row is nonzero (raising its requirement would lower ℓ) or when ℓ already
// equals the most it could ever reach; the duals and that bound together
// always name at least one job, so each level costs one LP, where Gavel
// solves a MILP per level. A final LP maximizes Σ_j z_j at the frozen levels
// to pin the allocation. The agnostic program needs no LP: see the package
// documentation. The Decision's Objective is the first level, which
// equals MaxMinFairness' t*.
type WaterFilling struct {
	// Agnostic treats every accelerator type on which a job can run as
	// equally fast (see MaxMinFairness).
	Agnostic bool `json:"agnostic,omitempty"`
	// Solver selects the LP engine; the zero value is allocation.Auto.
	Solver allocation.Solver `json:"solver,omitempty"`
	// Warm starts each call's LPs where the last call's ended
	// (allocation.Warm): faster when the jobs change a little; results
	// equal a cold start's within CLP's tolerance, not bit for bit.
	Warm  bool `json:"warm,omitempty"`
	bases *allocation.Warm
	// byLP solves an agnostic program by LP too: what progressive
	// filling is tested against.
	byLP bool
}

// Name returns "gavel.water-filling" or "gavel.water-filling-agnostic".
func (p *WaterFilling) Name() string {
	if p.Agnostic {
		return "gavel.water-filling-agnostic"
	}
	return "gavel.water-filling"
}

// Facts implements policy.Reader: weights and, unless agnostic, heterogeneity.
func (p *WaterFilling) Facts() (uses, needs policy.Facts) {
	return variantFacts(policy.FactWeight, p.Agnostic, false), 0
}

// Allocate computes the leximin allocation for the snapshot's jobs.
func (p *WaterFilling) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, jobs, out, err := prepare(ctx, p.Name(), s)
	mm := &MaxMinFairness{Agnostic: p.Agnostic, Solver: p.Solver, Warm: true, bases: chainBases(p.Warm, &p.bases)}
	if err == nil {
		jobs, out = mm.check(jobs, out)
	}
	if err != nil || len(jobs) == 0 {
		return empty(p.Name(), out, err)
	}
	m := mm.program(s.Cluster, jobs)
	first, x, err := m.leximin(ctx, p.Agnostic && !p.byLP)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name(), err)
	}
	return &policy.Decision{
		Policy:      p.Name(),
		Objective:   first * m.unit,
		Allocation:  m.allocation(x, p.Agnostic),
		Unscheduled: out,
	}, nil
}

// leximin returns m's first level (t*) and its leximin allocation: by
// progressive filling if agnostic (see gpuTime.leximin) unless the
// structure does not apply, else by fill.
func (m *maxMin) leximin(ctx context.Context, agnostic bool) (float64, *allocation.Result, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if agnostic {
		if res, ok := structured(m.prog, m.scale, (*gpuTime).leximin); ok {
			return res.Objective, res, nil
		}
	}
	levels, res, err := fill(ctx, m.prog, m.terms, m.total)
	if err != nil {
		return 0, nil, err
	}
	return levels[0], res, nil
}

// fill raises terms level by level (see WaterFilling) and returns the levels
// in the order they were reached and the final allocation, which maximizes
// total among those that keep every level. It adds the frozen levels to
// prog as constraints.
func fill(ctx context.Context, prog *allocation.Program, terms []allocation.Expr, total allocation.Expr) ([]float64, *allocation.Result, error) {
	frozen := make([]bool, len(terms))
	var reached []float64
	var last *allocation.Result
	for left := len(terms); left > 0; {
		var open []int
		var exprs []allocation.Expr
		for j, done := range frozen {
			if !done {
				open = append(open, j)
				exprs = append(exprs, terms[j])
			}
		}
		res, err := prog.MaximizeMin(ctx, exprs, allocation.Expr{})
		if err != nil {
			return nil, nil, err
		}
		level := res.Objective
		reached = append(reached, level)
		stuck := false
		for i := range open {
			stuck = stuck || res.Bottleneck[i]
		}
		for i, j := range open {
			// Should the certificate name nobody (numerical trouble),
			// freezing everyone still at the level ends the loop safely.
			if res.Bottleneck[i] || !stuck {
				frozen[j] = true
				left--
				prog.Constrain(terms[j], level-1e-9*math.Abs(level), math.Inf(1))
			}
		}
		last = res
	}
	res, err := prog.Maximize(ctx, total)
	switch {
	case err == nil:
		last = res
	case ctx.Err() != nil:
		return nil, nil, err
	}
	return reached, last, nil
}
