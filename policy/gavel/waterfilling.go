package gavel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

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
// solves a MILP per level. Levels where a job freezes at its own most,
// capacity still slack, come in runs, and a search takes O(log m) LPs for
// a run of m (see fill). A final LP maximizes Σ_j z_j at the frozen levels
// to pin the allocation; where the last level freezes every job left, it
// is that level's tie-break. The agnostic program needs no LP: see the package
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
// total among those that keep every level (see lastLevel). It adds the
// frozen levels to prog as constraints.
//
// Where capacity is slack, jobs freeze one at a time at their own reach,
// one LP each. fill skips those runs (see reachRun): only the level where
// capacity binds needs an LP of its own.
func fill(ctx context.Context, prog *allocation.Program, terms []allocation.Expr, total allocation.Expr) ([]float64, *allocation.Result, error) {
	frozen := make([]bool, len(terms))
	reach := prog.Reach(terms)
	var reached []float64
	var last *allocation.Result
	freeze := func(j int, level float64) {
		frozen[j] = true
		prog.Constrain(terms[j], level-1e-9*math.Abs(level), math.Inf(1))
	}
	for left := len(terms); left > 0; {
		open, run, res, err := reachRun(ctx, prog, terms, reach, frozen)
		if err != nil {
			return nil, nil, err
		}
		for _, j := range open[:run] {
			if n := len(reached); n == 0 || reached[n-1] != reach[j] {
				reached = append(reached, reach[j])
			}
			freeze(j, reach[j])
		}
		left -= run
		if res == nil {
			continue
		}
		level := res.Objective
		reached = append(reached, level)
		// Should the certificate name nobody (numerical trouble), freezing
		// everyone still at the level ends the loop safely.
		stuck := slices.Contains(res.Bottleneck, true)
		if !stuck || !slices.Contains(res.Bottleneck, false) {
			res, err = lastLevel(ctx, prog, terms, open, total, res)
			if err != nil {
				return nil, nil, err
			}
			for _, j := range open {
				freeze(j, level)
			}
			return reached, res, nil
		}
		for i, j := range open {
			if res.Bottleneck[i] {
				freeze(j, level)
				left--
			}
		}
		last = res
	}
	res, err := prog.Maximize(ctx, total)
	switch {
	case err == nil:
		last = res
	case ctx.Err() != nil || last == nil: // every job froze at its reach: no level's result to fall back on
		return nil, nil, err
	}
	return reached, last, nil
}

// lastLevel returns the allocation of a level that freezes every open job,
// whose max-min is res: the same program solved again with total as its
// tie-break, which is then the final LP (see fill). Its first stage
// restarts from its own optimal basis, and allocation solves the
// tie-break over the jobs near a tie, a small LP, where the final LP
// alone is the whole program from the slack basis. Where the tie-break
// fails numerically, res stands.
func lastLevel(ctx context.Context, prog *allocation.Program, terms []allocation.Expr, open []int, total allocation.Expr, res *allocation.Result) (*allocation.Result, error) {
	exprs := make([]allocation.Expr, len(open))
	for i, j := range open {
		exprs[i] = terms[j]
	}
	final, err := prog.MaximizeMin(ctx, exprs, total)
	switch {
	case err == nil:
		return final, nil
	case ctx.Err() != nil:
		return nil, err
	}
	return res, nil
}

// reachRun returns the open jobs in order of reach, r_1 ≤ r_2 ≤ …, and how
// many of them, from the first, can all reach their own reach while the
// rest rise to the last one's: the largest m that passes test(m). Where
// that is none, it also returns the open jobs' max-min, in that order, as
// the level's result.
//
// test(m) is the max-min program with each of the first m jobs' terms
// scaled by r_m/r_j, so that it reaches r_m just where the job reaches its
// own r_j; it passes when t* is r_m, the bound of every scaled term.
// Passing is monotone in m, and test(1) is the open jobs' max-min, so a
// run of m jobs that one by one would have cost m LPs takes O(log m) (see
// gallop). A test that fails at t* < r_m also fails every m' whose r_m'
// is above t*: an allocation that passed test(m') would hold each scaled
// term of test(m) at r_m' or more.
//
// The order of reach also lets each test start from the last one's basis.
// In the jobs' own order a program of every job is one that allocation
// solves by its prices instead, and on gavel.water-filling at 1024 jobs
// (BenchmarkPolicy) those restricted LPs grew test after test, which made
// the decision slower.
func reachRun(ctx context.Context, prog *allocation.Program, terms []allocation.Expr, reach []float64, frozen []bool) ([]int, int, *allocation.Result, error) {
	open := byReach(frozen, reach)
	s := reachTests{ctx, prog, terms, reach, open}
	if r := reach[open[0]]; !(r > 0) || math.IsInf(r, 1) {
		_, res, err := s.test(0) // no run can be scaled to r
		return open, 0, res, err
	}
	m, res, err := gallop(len(open), s.test)
	return open, m, res, err
}

// byReach returns the jobs not frozen in order of reach, by index among
// equals.
func byReach(frozen []bool, reach []float64) []int {
	var open []int
	for j, done := range frozen {
		if !done {
			open = append(open, j)
		}
	}
	slices.SortStableFunc(open, func(a, b int) int { return cmp.Compare(reach[a], reach[b]) })
	return open
}

// reachTests are reachRun's programs over the open jobs, in order of reach.
type reachTests struct {
	ctx   context.Context
	prog  *allocation.Program
	terms []allocation.Expr
	reach []float64
	open  []int
}

// test solves test(m) (see reachRun) and returns 0 where it passes, else
// the least m' it shows to fail, at most m; and its max-min result.
func (s reachTests) test(m int) (int, *allocation.Result, error) {
	r := s.reach[s.open[max(m, 1)-1]]
	exprs := make([]allocation.Expr, len(s.open))
	for i, j := range s.open {
		exprs[i] = s.terms[j]
		if i < m && s.reach[j] != r {
			exprs[i] = s.terms[j].Scale(r / s.reach[j])
		}
	}
	res, err := s.prog.MaximizeMin(s.ctx, exprs, allocation.Expr{})
	if err != nil {
		return 0, nil, err
	}
	t, tol := res.Objective, 1e-9*math.Max(1, math.Abs(r))
	if t >= r-tol {
		return 0, res, nil
	}
	above := sort.Search(len(s.open), func(i int) bool { return s.reach[s.open[i]] > t+tol })
	return min(m, above+1), res, nil
}

// gallop returns the largest m in [0, n] for which test passes, where
// passing is monotone (test(m) passes where test(m+1) does): it doubles m
// to the first failure and bisects back, O(log m) tests in all. A test
// returns 0 where it passes, else the least m it shows to fail, at most
// its own. Where test(1) fails, gallop returns that test's result too.
func gallop(n int, test func(m int) (int, *allocation.Result, error)) (int, *allocation.Result, error) {
	fails, res, err := test(1)
	if err != nil || fails > 0 {
		return 0, res, err
	}
	pass, fail := 1, n+1 // test(n+1) fails: there is no such run
	for fail-pass > 1 {
		m := (pass + fail) / 2
		if fail > n { // no failure yet: double
			m = min(2*pass, n)
		}
		if fails, _, err = test(m); err != nil {
			return 0, nil, err
		}
		if fails == 0 {
			pass = m
		} else {
			fail = max(pass+1, min(fail, fails)) // past pass, whatever numerical noise says
		}
	}
	return pass, nil, nil
}
