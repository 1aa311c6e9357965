package gavel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gavel.hierarchical",
		"Gavel hierarchical max-min fairness: water-filling across weighted tenants, fairness or FIFO within each",
		policy.InRounds(func(config []byte) (policy.Policy, error) {
			p := &Hierarchical{}
			if err := policy.DecodeConfig(config, p); err != nil {
				return nil, err
			}
			return p, p.check()
		}))
}

// Hierarchical is Gavel's hierarchical (multi-level) fairness: tenants share
// the cluster by water-filling in proportion to their weights, and each
// tenant shares its part among its jobs either fairly, by job weight, or in
// FIFO order.
//
// Following Gavel, each round of water-filling gives every unfrozen job j a
// weight w_j from its tenant e of weight W_e: under "fairness",
// w_j = W_e·p_j / Σ p_i over e's unfrozen jobs, p being the jobs' own
// weights; under "fifo", the tenant's oldest unfrozen job (by arrival, then
// ID) gets W_e and the others 0. With z_j = y_j/T^prop_j and levels L_j
// (initially 0), it solves
//
//	maximize c  subject to  (s_j/w_j)(z_j − L_j) ≥ c  for unfrozen jobs with w_j > 0,
//	                        z_j ≥ L_j for the other unfrozen jobs,  z_j ≥ F_j for frozen ones,
//
// raises L_j by c·w_j/s_j, and freezes at F_j = L_j the jobs that cannot
// rise further (certified by the LP, see WaterFilling), until every job is
// frozen. A final LP maximizes Σ_j s_j·z_j at the frozen levels. The
// Decision's Objective is the first round's c.
//
// Rounds after the cluster is full lift nobody: on a busy cluster most of
// them would freeze a FIFO queue's jobs at 0 one LP at a time (194 of the
// 315 LPs of BenchmarkScaling at 1024 jobs). Once a round lifts nobody and
// every job left is still at 0, one LP that maximizes their Σ z_j decides
// whether any can rise at all; if none can, they are frozen at 0 as those
// rounds would have, and raise ends (TestHierarchicalSettle,
// TestHierarchicalSettleOnlyWhenStuck).
//
// Jobs of a tenant not listed in Tenants, and jobs without a tenant, form
// tenants of weight 1 under "fairness".
type Hierarchical struct {
	// Tenants maps a tenant name (Job.Tenant) to its weight and policy.
	Tenants map[string]Tenant `json:"tenants,omitempty"`
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
	// sequential turns settle off, for the tests that compare the two.
	sequential bool
}

// Tenant is one entity of Hierarchical.
type Tenant struct {
	// Weight is the tenant's share weight; zero means 1.
	Weight float64 `json:"weight,omitempty"`
	// Policy is "fairness" (the zero value) or "fifo".
	Policy string `json:"policy,omitempty"`
}

// Name returns "gavel.hierarchical".
func (p *Hierarchical) Name() string { return "gavel.hierarchical" }

// Facts implements policy.Reader: tenants, job weights and, unless agnostic, heterogeneity.
func (p *Hierarchical) Facts() (uses, needs policy.Facts) {
	return variantFacts(policy.FactTenant|policy.FactWeight, p.Agnostic, false), 0
}

func (p *Hierarchical) check() error {
	for name, t := range p.Tenants {
		if math.IsNaN(t.Weight) || math.IsInf(t.Weight, 0) || t.Weight < 0 {
			return fmt.Errorf("%w: %s: tenants[%s].weight: %v is not a finite non-negative number", policy.ErrInvalidConfig, p.Name(), name, t.Weight)
		}
		if t.Policy != "" && t.Policy != "fairness" && t.Policy != "fifo" {
			return fmt.Errorf("%w: %s: tenants[%s].policy: %q (want fairness or fifo)", policy.ErrInvalidConfig, p.Name(), name, t.Policy)
		}
	}
	return nil
}

// Allocate computes the hierarchical allocation for the snapshot's jobs.
func (p *Hierarchical) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s, jobs, out, err := prepare(ctx, p.Name(), s)
	if err != nil || len(jobs) == 0 {
		return empty(p.Name(), out, err)
	}
	prog, ids, z, _ := normalized(s.Cluster, jobs, p.Agnostic, p.Solver, chainBases(p.Warm, &p.bases), false)
	first, x, _, err := p.raise(ctx, prog, jobs, z)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name(), err)
	}
	// Pin the allocation: the most GPU-weighted normalized throughput at the
	// frozen levels, which raise left in prog as constraints.
	sum := make([]allocation.Expr, len(jobs))
	for j := range jobs {
		sum[j] = z[j].Scale(float64(jobs[j].GPUs))
	}
	if res, err := prog.Maximize(ctx, allocation.Sum(sum...)); err == nil {
		x = res
	} else if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", p.Name(), err)
	}
	return &policy.Decision{Policy: p.Name(), Objective: first, Allocation: prog.Allocation(ids, x), Unscheduled: out}, nil
}

// raise lifts the jobs' normalized throughputs z round by round, each
// round raising the open jobs in proportion to this round's weights, and
// returns the first round's lift, the last round's allocation and the LPs
// it solved. A job frozen at level L_j gets the row z_j ≥ L_j in prog,
// once: levels change only while a job is open, and a job stays open from
// the round its weight turns positive until it freezes (a FIFO tenant's
// oldest job keeps being its oldest), so a job that is neither open nor
// frozen is still at level 0, which needs no row.
//
// Once a round lifts nobody (by more than settled) and every job left is
// still at level 0 (a full cluster, FIFO queues behind it), each further
// round would solve an LP only to freeze the next FIFO job at 0. One LP,
// the most Σ z_j over the jobs left, settles them all when it is zero (see
// settle).
func (p *Hierarchical) raise(ctx context.Context, prog *allocation.Program, jobs []*policy.Job, z []allocation.Expr) (float64, *allocation.Result, int, error) {
	level := make([]float64, len(jobs))
	frozen := make([]bool, len(jobs))
	var first float64
	var x *allocation.Result
	// idle: the last round lifted nobody; failed: settle found a job that
	// can rise, and no round has lifted one since.
	idle, failed := false, false
	lps := 0
	for round := 0; slices.Contains(frozen, false); round++ {
		if idle && !failed && !p.sequential {
			lps++
			res, done, err := p.settle(ctx, prog, jobs, z, level, frozen, settled*max(1, slices.Max(level)))
			if err != nil {
				return 0, nil, lps, err
			}
			if done {
				return first, res, lps, nil
			}
			failed = true
		}
		lps++
		res, c, most, err := p.round(ctx, prog, jobs, z, level, frozen)
		if err != nil {
			return 0, nil, lps, err
		}
		if round == 0 {
			first = c
		}
		idle = most <= settled*max(1, slices.Max(level))
		failed = failed && idle
		x = res
	}
	return first, x, lps, nil
}

// round solves one round's LP over the open jobs, lifts their levels by
// c·w_j/s_j and freezes those that cannot rise further; it returns the
// LP's result, c and the largest lift.
func (p *Hierarchical) round(ctx context.Context, prog *allocation.Program, jobs []*policy.Job, z []allocation.Expr, level []float64, frozen []bool) (*allocation.Result, float64, float64, error) {
	w := p.weights(jobs, frozen)
	var open []int
	var exprs []allocation.Expr
	for j := range jobs {
		if !frozen[j] && w[j] > 0 {
			// (s_j/w_j)(z_j − L_j), as an expression with a constant.
			open = append(open, j)
			exprs = append(exprs, z[j].Plus(allocation.Constant(-level[j])).Scale(float64(jobs[j].GPUs)/w[j]))
		}
	}
	res, err := prog.MaximizeMin(ctx, exprs, allocation.Expr{})
	if err != nil {
		return nil, 0, 0, err
	}
	c := max(res.Objective, 0)
	stuck := slices.Contains(res.Bottleneck, true)
	most := 0.0
	for i, j := range open {
		lift := c * w[j] / float64(jobs[j].GPUs)
		level[j] += lift
		most = max(most, lift)
		if res.Bottleneck[i] || !stuck { // see fill
			frozen[j] = true
			prog.Constrain(z[j], level[j]-1e-9*level[j], math.Inf(1))
		}
	}
	return res, c, most, nil
}

// settle tries to end raise at once when every job left is at level 0: if
// even Σ z_j over them cannot rise above tol, no order of rounds lifts any
// of them by more, so each round would freeze its open jobs at 0 (or
// within tol of it). settle freezes them in the order those rounds would
// have, adding the same rows z_j ≥ 0, and returns that LP's allocation and
// true. Otherwise, also when that LP fails, it changes nothing.
func (p *Hierarchical) settle(ctx context.Context, prog *allocation.Program, jobs []*policy.Job, z []allocation.Expr, level []float64, frozen []bool, tol float64) (*allocation.Result, bool, error) {
	var left []allocation.Expr
	for j := range jobs {
		if !frozen[j] {
			if level[j] != 0 {
				return nil, false, nil
			}
			left = append(left, z[j])
		}
	}
	res, err := prog.Maximize(ctx, allocation.Sum(left...))
	switch {
	case ctx.Err() != nil:
		return nil, false, err
	case err != nil || res.Objective > tol:
		return nil, false, nil // the rounds will tell
	}
	for slices.Contains(frozen, false) {
		w := p.weights(jobs, frozen)
		none := !slices.ContainsFunc(w, func(v float64) bool { return v > 0 }) // never, but no hang
		for j := range jobs {
			if !frozen[j] && (w[j] > 0 || none) {
				frozen[j] = true
				prog.Constrain(z[j], 0, math.Inf(1))
			}
		}
	}
	return res, true, nil
}

// settled is the largest lift, relative to the highest level reached, that
// counts as none. Frozen rows give up 1e-9 of their level, so a round after
// the cluster is full still lifts its jobs by about 1e-8: noise, which CLP's
// tolerance (1e-7) cannot tell from zero.
const settled = 1e-7

// weights returns this round's w_j for the unfrozen jobs (0 for frozen ones).
func (p *Hierarchical) weights(jobs []*policy.Job, frozen []bool) []float64 {
	w := make([]float64, len(jobs))
	members := make(map[string][]int)
	var tenants []string
	for j, job := range jobs {
		if frozen[j] {
			continue
		}
		if _, ok := members[job.Tenant]; !ok {
			tenants = append(tenants, job.Tenant)
		}
		members[job.Tenant] = append(members[job.Tenant], j)
	}
	for _, name := range tenants {
		t := p.Tenants[name]
		weight := t.Weight
		if weight == 0 {
			weight = 1
		}
		js := members[name]
		if t.Policy == "fifo" {
			oldest := slices.MinFunc(js, func(a, b int) int {
				if c := cmp.Compare(jobs[a].Arrival, jobs[b].Arrival); c != 0 {
					return c
				}
				return cmp.Compare(jobs[a].ID, jobs[b].ID)
			})
			w[oldest] = weight
			continue
		}
		var total float64
		for _, j := range js {
			total += jobs[j].EffectiveWeight()
		}
		for _, j := range js {
			w[j] = weight * jobs[j].EffectiveWeight() / total
		}
	}
	return w
}
