package allocation

import (
	"context"
	"errors"
	"math"

	"github.com/dlsched/dlsched/internal/lp"
)

// stageOne is the optimum of MaximizeMin's first stage that marginLevel
// found: t*, the values of the max-min LP's variables, each expression's
// bottleneck flag, and the capacity prices it ended at.
type stageOne struct {
	t          float64
	x          []float64
	bottleneck []bool
	prices     []float64
	engine     string
}

// marginLevel solves a plain program's first stage, m (maximize t),
// over the jobs at the margin at prices start, as margin solves the
// second; nil with no error where it gives the stage to the whole LP.
//
// At the prices, Newton's method finds the level where the jobs' cheapest
// plans cost the whole priced cluster (see level), and each job's plan
// there fixes its type or pair of types. A fixed plan's shares are affine
// in t (t/a_jk of a round on one type; on two, the split that reaches t
// in a whole round), so the LP keeps t free and each type's row carries
// the fixed jobs' GPUs as a multiple of t. Its capacity duals λ' then
// price each fixed job at its need at the LP's t: one whose plan is no
// longer its cheapest, or no longer valid there (a share outside [0, 1]),
// joins the LP. When none does, every fixed plan is optimal for its job
// at λ', and with the LP's own duals that makes a dual solution of m
// whose value is the LP's t, so t is t* (TestMarginSameOptimum).
func (p *Program) marginLevel(ctx context.Context, eng lp.Engine, m *maxMinLP, g *lagrangian, start []float64, bounds []float64) (*stageOne, error) {
	lambda := normalize(start, g.capacity)
	if lambda == nil { // no type was full: any prices will do to start
		lambda = g.uniform()
	}
	level := g.level(lambda, g.reach)
	n := len(g.a)
	plans, gap := make([]plan, n), make([]float64, n)
	for j := range n {
		pl, ok := g.cheapest(lambda, j, level)
		if !ok {
			return nil, nil
		}
		plans[j], gap[j] = pl, pl.next-pl.cost
	}
	in, joined := nearTie(gap, 1e-9) // the plans cost 1 in all
	c, e := g.affine(p, m.numVars(), plans)
	for range marginRounds {
		if joined > n/marginShare && !p.marginAll {
			return nil, nil
		}
		p.trace.add(traceLPs, 1)
		p.trace.hold(joined)
		r := g.restrict(m, in, c, e, true)
		sol, err := eng.Solve(ctx, r.sub)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, lp.ErrInfeasible):
			p.trace.add(traceInfeasible, 1)
			joined = joinNext(in, gap, joined, max(joined, 1))
			continue
		case err != nil:
			return nil, nil
		}
		level, lambda = sol.X[r.t], r.prices(sol)
		moved := g.reprice(plans, in, lambda, level)
		joined += moved
		p.trace.add(tracePriced, moved)
		if moved == 0 {
			one := g.levelResult(p, sol, r, c, e, plans, in, lambda, bounds, m.first)
			if !m.satisfies(one.x) {
				return nil, nil
			}
			p.trace.add(traceSolved, 1)
			return one, nil
		}
	}
	return nil, nil
}

// normalize returns lambda scaled so that Σ_k N_k λ_k = 1, or nil where
// that sum is not positive.
func normalize(lambda, capacity []float64) []float64 {
	var sum float64
	for k, x := range lambda {
		sum += x * capacity[k]
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		return nil
	}
	out := make([]float64, len(lambda))
	for k, x := range lambda {
		out[k] = x / sum
	}
	return out
}

// affine returns, for every share, its value c + e·t under its job's
// plan: t/a_jk on one type; on two, the split that reaches t in a whole
// round. Every job has an expression: marginLevel takes plain programs
// alone. Only the values of jobs not in the LP are read.
func (g *lagrangian) affine(p *Program, nv int, plans []plan) (c, e []float64) {
	c, e = make([]float64, nv), make([]float64, nv)
	for j, pl := range plans {
		a, vk := g.a[j], p.x[j][pl.k]
		if pl.l < 0 {
			e[vk] = 1 / a[pl.k]
			continue
		}
		vl, span := p.x[j][pl.l], a[pl.l]-a[pl.k]
		c[vl], e[vl] = -a[pl.k]/span, 1/span
		c[vk], e[vk] = 1-c[vl], -e[vl]
	}
	return c, e
}

// reprice marks as in, and counts, the jobs not in whose plan is no longer
// valid at level t, or no longer their cheapest at prices lambda (see
// enter).
func (g *lagrangian) reprice(plans []plan, in []bool, lambda []float64, t float64) int {
	var total float64
	for k, x := range lambda {
		total += x * g.capacity[k]
	}
	// Relative to the plan's cost: costs scale with the level, and near a
	// level of 0 an absolute tolerance would pass a plan on a priced type
	// where a type at no price costs nothing.
	tiny := 1e-15 * total
	var wrong []candidate
	for j, pl := range plans {
		if in[j] {
			continue
		}
		best, ok := g.cheapest(lambda, j, t)
		cost := g.costAt(lambda, j, pl, t)
		switch d := cost - best.cost; {
		case !g.valid(j, pl, t) || !ok:
			wrong = append(wrong, candidate{j, math.Inf(1)})
		case d > 1e-9*cost+tiny:
			wrong = append(wrong, candidate{j, d / cost})
		}
	}
	return enter(in, wrong)
}

// valid reports whether plan pl of job j reaches need with shares in
// [0, 1], to a relative 1e-9.
func (g *lagrangian) valid(j int, pl plan, need float64) bool {
	a, slack := g.a[j], 1e-9*max(1, math.Abs(need))
	if pl.l < 0 {
		return need >= -slack && need <= a[pl.k]+slack
	}
	return need >= a[pl.k]-slack && need <= a[pl.l]+slack
}

// costAt returns what plan pl costs job j at prices lambda to reach need.
func (g *lagrangian) costAt(lambda []float64, j int, pl plan, need float64) float64 {
	a, per := g.a[j], g.gpus[j]
	if pl.l < 0 {
		return need / a[pl.k] * lambda[pl.k] * per
	}
	xl := (need - a[pl.k]) / (a[pl.l] - a[pl.k])
	return ((1-xl)*lambda[pl.k] + xl*lambda[pl.l]) * per
}

// levelResult assembles marginLevel's optimum from sol, the last LP's. An
// expression is a bottleneck where its row's dual is nonzero, or where it
// is at its own upper bound; a fixed job's dual is the price of the GPUs
// its plan adds per unit of t.
func (g *lagrangian) levelResult(p *Program, sol *lp.Solution, r restriction, c, e []float64, plans []plan, in []bool, lambda, bounds []float64, first int) *stageOne {
	level := sol.X[r.t]
	x := make([]float64, len(c))
	for v := range x {
		x[v] = c[v] + e[v]*level
	}
	for i, v := range r.back {
		x[v] = sol.X[i]
	}
	out := &stageOne{t: level, x: x, bottleneck: make([]bool, len(bounds)), prices: lambda, engine: sol.Engine}
	for j := range plans {
		i := g.expr[j]
		var dual float64
		if in[j] {
			dual = sol.Duals[r.rows[first+i]]
		} else {
			for k, v := range p.x[j] {
				if v >= 0 {
					dual += lambda[k] * g.gpus[j] * e[v]
				}
			}
		}
		out.bottleneck[i] = math.Abs(dual) > 1e-9 || reached(bounds[i], level)
	}
	return out
}
