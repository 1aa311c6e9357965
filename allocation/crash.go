package allocation

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/dlsched/dlsched/internal/lp"
)

// Crash's effort: cutting planes per price search, and searches after the
// first. Each basis entry the prices get wrong costs the engine a pivot,
// dear on these LPs, so the search closes on the prices' optimum: with
// these, its level equals t* on TestCrashSameOptimum's programs.
const (
	// crashFrom is the fewest expressions crash starts: below it the
	// slack start is quicker than the crash (BenchmarkLAS at 32 jobs took
	// 2.0 ms from the slack basis, 3.2–3.8 ms from crash's; at 128 equal-
	// weight jobs crash saved 0.8–1.8 ms of 4.2–4.8, BenchmarkLASEqualWeights;
	// ee678b5, before any crash, against the crash without this floor,
	// run in turn).
	crashFrom   = 100
	crashCuts   = 30
	crashRounds = 2
	// tieCuts caps the tie-break's price search: at 30, the search fell
	// short of the tie-break's optimum on 8 of TestCrashSameOptimum's 125
	// priced programs (its dual check), at 60 on none.
	tieCuts = 60
)

// crash returns a starting basis for the max-min LP prob (built by
// MaximizeMin over exprs, with t its variable and its max-min rows from
// first on) at prices lambda and level, which search found. The program
// must be plain: one expression per job, each its job's X_jk alone and
// without a constant, with no pairs and no constrained rows.
//
// From the slack basis, the simplex takes thousands of pivots on these
// LPs, and when most jobs end at t* (equal weights) each pivot is dear:
// stage one over 2048 such jobs took 257 ms with CLP, and 20.3 ms from
// crash's basis, the crash included (BenchmarkCrash in docs/performance.md
// at commit 6c76ef9; marginLevel now solves that stage without the whole
// LP, and crash's basis is its fallback).
// The basis comes from the prices λ_k of the capacity rows instead. With
// the capacity rows priced rather than enforced, the jobs part ways: job j
// reaches t at the least cost cost_j(t, λ) in priced GPUs, by one type
// or, if no type alone reaches t within a round, by two that share the
// whole round. By LP duality,
//
//	t* = max { t : C(t, λ) ≤ 1 for all λ ≥ 0 with Σ_k N_k λ_k = 1 },   C(t, λ) = Σ_j cost_j(t, λ),
//
// C is convex and increasing in t, and concave in λ. Crash alternates
// between the two: cutting planes for the λ that maximizes C at the current
// t (see prices), then Newton's method for the t where C = 1 at that λ (see
// level). The basis then holds t, each job's cheapest X_jk (both, and its
// time row at its bound, where the job shares a round), the capacity rows
// of priced types at their bound, and, to fill the count, the second
// cheapest X_jk of the jobs closest to a tie, who are the jobs split
// between types at the optimum. The engine starts there and pivots to the
// optimum; at the prices' optimum the basis is optimal but for ties.
func (g *lagrangian) crash(p *Program, m *maxMinLP, lambda []float64, level float64) *lp.Basis {
	t, first := m.t, m.first
	b := &lp.Basis{Vars: make([]lp.BasisStatus, m.numVars()), Rows: make([]lp.BasisStatus, m.numRows())}
	for v := range b.Vars {
		b.Vars[v] = lp.AtLower
	}
	b.Vars[t] = lp.Basic
	basics := 1
	full := make([]bool, len(g.a))
	var ties []tie
	for j := range g.a {
		pl, ok := g.cheapest(lambda, j, level)
		if !ok {
			return nil
		}
		b.Vars[p.x[j][pl.k]] = lp.Basic
		b.Rows[first+j] = lp.AtLower
		basics++
		if pl.l >= 0 {
			b.Vars[p.x[j][pl.l]] = lp.Basic
			basics++
			full[j] = true
			continue
		}
		next, gap := -1, math.Inf(1) // the next cheapest type per unit
		for k := range g.a[j] {
			if r := g.round(lambda, j, k); k != pl.k && !math.IsInf(r, 1) {
				if d := r/g.a[j][k] - pl.growth; d < gap {
					next, gap = k, d
				}
			}
		}
		if next >= 0 {
			ties = append(ties, tie{p.x[j][next], gap / max(pl.growth, math.SmallestNonzeroFloat64)})
		}
	}
	return p.complete(b, basics, full, lambda, ties)
}

// search returns the prices and the level crash builds its basis at, or
// false where capacity does not hold t* back (see capped), where crash's
// basis would be the wrong one. It gives up, with false, once ctx is done.
func (g *lagrangian) search(ctx context.Context) ([]float64, float64, bool) {
	lambda := g.uniform()
	// The first search prices t per unit, as if no job's round were full:
	// C is then linear in t, and its root comes at once.
	if lambda = g.prices(lambda, 0); lambda == nil {
		return nil, 0, false
	}
	growth, _, _, _ := g.plans(lambda, 0, nil)
	level := g.level(lambda, min(1/growth, g.reach))
	for range crashRounds {
		if ctx.Err() != nil {
			return nil, 0, false
		}
		if lambda = g.prices(lambda, level); lambda == nil {
			return nil, 0, false
		}
		level = g.level(lambda, level)
	}
	// fits can miss a t* at the reach; C below 1 there tells.
	c, _, _, ok := g.plans(lambda, level, nil)
	return lambda, level, ok && c >= 1-1e-9
}

// uniform returns prices that weigh every GPU of the cluster alike, split
// evenly among the types: Σ_k N_k λ_k = 1.
func (g *lagrangian) uniform() []float64 {
	lambda := make([]float64, len(g.capacity))
	for k := range lambda {
		lambda[k] = 1 / (float64(len(lambda)) * g.capacity[k])
	}
	return lambda
}

// capped returns, where capacity does not hold t* back, the jobs' cheapest
// plans at their reach, which is then t*: no job reaches beyond it, and
// the plans, which reach it, fit every type. It tries one set of prices,
// uniform; false leaves the question to the LP. Weighted gavel.las has
// this shape, where t* is the least weighted job's whole round, and the
// LP from the slack basis walked the jobs one by one to what the plans
// show at once.
func (g *lagrangian) capped() ([]plan, bool) {
	plans := make([]plan, len(g.a))
	_, _, u, ok := g.plans(g.uniform(), g.reach, plans)
	if !ok {
		return nil, false
	}
	for k, x := range u {
		if x > g.capacity[k] {
			return nil, false
		}
	}
	return plans, true
}

// lagrangian is a max-min program seen through the prices of its
// capacity rows. Each job has an expression, which must reach t, or a
// floor, which its floor row (a Constrain row over its own shares, with no
// upper bound) sets and 0 where it has none.
type lagrangian struct {
	a        [][]float64 // a[j][k]: job j's expression or floor row per unit of X_jk; 0 where it cannot run on k
	gpus     []float64   // per job: the GPUs of type k one unit of X_jk holds
	capacity []float64
	reach    float64   // the largest t every job with an expression can reach within a round
	expr     []int     // per job: the index of its expression, or -1
	floor    []float64 // per job without an expression: its floor
	at       []int     // per variable of the base program: j·nk + k if it is X_jk, else -1
	// plain: job j has expression j, and there are no floor rows; crash's
	// bases know only this shape.
	plain bool
	flat  []float64 // backs a, one allocation for every job
}

// row returns job j's part of flat, for a[j].
func (g *lagrangian) row(j int) []float64 {
	nk := len(g.capacity)
	return g.flat[j*nk : (j+1)*nk : (j+1)*nk]
}

// lagrangian returns the program's view for max-min over exprs, or false
// if the program is not of its shape: no pairs, every type with GPUs, each
// expression one job's own shares with no constant and positive on each
// of them, at most one per job, and every Constrain row a floor row of a
// job without an expression.
func (p *Program) lagrangian(exprs []Expr) (*lagrangian, bool) {
	if len(p.pairs) > 0 || slices.ContainsFunc(p.capacity, func(n float64) bool { return !(n > 0) }) {
		return nil, false // a type without GPUs would have no price
	}
	n, at := len(p.gpus), p.shares()
	g := &lagrangian{a: make([][]float64, n), gpus: make([]float64, n), capacity: p.capacity, reach: math.Inf(1),
		expr: make([]int, n), floor: make([]float64, n), at: at, plain: len(exprs) == n, flat: make([]float64, n*len(p.types))}
	for j := range n {
		g.expr[j] = -1
		g.gpus[j] = float64(p.Count(j) * p.gpus[j])
	}
	for i, e := range exprs {
		j, ok := p.own(g, at, e.terms)
		if !ok || e.constant != 0 || g.expr[j] >= 0 {
			return nil, false
		}
		g.expr[j], g.plain = i, g.plain && i == j
		g.reach = min(g.reach, slices.Max(g.a[j]))
	}
	for _, r := range p.rows {
		if r.s.kind != slotRow {
			continue
		}
		lower, upper, terms := p.prob.Row(r.s.n)
		j, ok := p.own(g, at, terms)
		if !ok || upper != lp.Inf || g.expr[j] >= 0 || g.floor[j] != 0 {
			return nil, false
		}
		g.floor[j], g.plain = max(lower, 0), false
	}
	for j, a := range g.a {
		if a == nil { // no expression, no floor: any share will do
			g.a[j] = g.row(j)
			for k, v := range p.x[j] {
				if v >= 0 {
					g.a[j][k] = 1
				}
			}
		}
	}
	return g, true
}

// need returns what job j must reach at level t: t itself where it has an
// expression, else its floor.
func (g *lagrangian) need(j int, t float64) float64 {
	if g.expr[j] >= 0 {
		return t
	}
	return g.floor[j]
}

// own sets g.a[j] to terms' coefficients and returns j, where terms are
// job j's own shares, each with a positive coefficient, and g has no row
// of j's yet.
func (p *Program) own(g *lagrangian, at []int, terms []lp.Term) (int, bool) {
	nk, j := len(p.types), -1
	for _, tm := range terms {
		if tm.Var >= len(at) || at[tm.Var] < 0 || j >= 0 && at[tm.Var]/nk != j {
			return 0, false
		}
		j = at[tm.Var] / nk
	}
	if j < 0 || g.a[j] != nil {
		return 0, false
	}
	g.a[j] = g.row(j)
	for _, tm := range terms {
		g.a[j][at[tm.Var]%nk] += tm.Coef
	}
	for k, v := range p.x[j] {
		if v >= 0 && !(g.a[j][k] > 0) {
			return 0, false
		}
	}
	return j, true
}

// round is what a round of job j on type k costs at prices lambda, +Inf
// where it cannot run there.
func (g *lagrangian) round(lambda []float64, j, k int) float64 {
	if !(g.a[j][k] > 0) {
		return math.Inf(1)
	}
	return lambda[k] * g.gpus[j]
}

// plan is a job's cheapest way to reach t: type k alone for t/a_jk of a
// round (l = -1), or k and l sharing the whole round, l for share xl; or
// nothing (k = -1) where it need reach nothing.
type plan struct {
	k, l         int
	xl           float64
	cost, growth float64 // the cost, and its slope in t
	next         float64 // the next cheapest plan's cost
}

// idle is the plan of a job that need reach nothing.
var idle = plan{k: -1, l: -1}

// cheapest returns job j's plan at prices lambda. With t = 0 it prices t
// per unit as if a round held any share, so that the cost is t times its
// growth; false means t is out of j's reach.
func (g *lagrangian) cheapest(lambda []float64, j int, t float64) (plan, bool) {
	a := g.a[j]
	var buf [8]float64 // each type's round, worked out once for the pairs
	rounds := buf[:0]
	for k := range a {
		rounds = append(rounds, g.round(lambda, j, k))
	}
	best := plan{k: -1, l: -1, cost: math.Inf(1), growth: math.Inf(1), next: math.Inf(1)}
	for k, rk := range rounds {
		switch {
		case math.IsInf(rk, 1):
		case t == 0:
			if c := rk / a[k]; c < best.growth {
				best = plan{k: k, l: -1, growth: c}
			}
		case a[k] >= t:
			best.consider(plan{k: k, l: -1, cost: t * rk / a[k], growth: rk / a[k]})
		default: // k alone falls short of t: share the round with a faster l
			for l, rl := range rounds {
				if math.IsInf(rl, 1) || a[l] < t {
					continue
				}
				xl := (t - a[k]) / (a[l] - a[k])
				best.consider(plan{k: k, l: l, xl: xl, cost: rk + (rl-rk)*xl, growth: (rl - rk) / (a[l] - a[k])})
			}
		}
	}
	return best, best.k >= 0
}

// consider makes pl the best plan where it costs less, and keeps the
// runner-up's cost in next.
func (best *plan) consider(pl plan) {
	switch {
	case pl.cost < best.cost:
		pl.next = best.cost
		*best = pl
	case pl.cost < best.next:
		best.next = pl.cost
	}
}

// plans returns C(t, λ), its slope in t and the GPUs of each type the
// jobs' cheapest plans hold, and sets keep[j], if keep is not nil, to job
// j's plan; false if t is out of some job's reach. With t = 0, C is the
// per-unit growth and the GPUs are per unit of t (see cheapest).
func (g *lagrangian) plans(lambda []float64, t float64, keep []plan) (c, slope float64, u []float64, ok bool) {
	u = make([]float64, len(g.capacity))
	for j := range g.a {
		need := g.need(j, t)
		if g.expr[j] < 0 && (t == 0 || !(need > 0)) {
			if keep != nil {
				keep[j] = idle
			}
			continue // per unit of t floors cost nothing, nor does no floor
		}
		pl, ok := g.cheapest(lambda, j, need)
		if !ok {
			return 0, 0, nil, false
		}
		if keep != nil {
			keep[j] = pl
		}
		g.use(u, j, pl, need)
		switch {
		case t == 0:
			c += pl.growth
		default:
			c += pl.cost
		}
		if g.expr[j] >= 0 {
			slope += pl.growth
		}
	}
	return c, slope, u, true
}

// prices returns the λ, from start, that maximizes C(t, λ) over
// Σ_k N_k λ_k = 1 (with t = 0, the per-unit growth), by Kelley's cutting
// planes: C is the minimum of the linear functions U·λ, U the GPUs the
// jobs' plans use of each type, so each plan found is a cut, and the
// master program over the cuts is a small matrix game (maximin). It
// returns nil if some job cannot reach t.
func (g *lagrangian) prices(start []float64, t float64) []float64 {
	lambda, best, bestC := slices.Clone(start), slices.Clone(start), math.Inf(-1)
	var cuts [][]float64 // per unit of each type's capacity
	for range crashCuts {
		c, _, u, ok := g.plans(lambda, t, nil)
		if !ok {
			return nil
		}
		if c > bestC {
			copy(best, lambda)
			bestC = c
		}
		for k := range u {
			u[k] /= g.capacity[k]
		}
		cuts = append(cuts, u)
		mu, bound := maximin(cuts)
		if bound-bestC <= 1e-10*bound {
			break
		}
		for k := range lambda {
			lambda[k] = mu[k] / g.capacity[k]
		}
	}
	return best
}

// use adds to u the GPUs of each type plan pl of job j holds at level t
// (with t = 0, per unit of t).
func (g *lagrangian) use(u []float64, j int, pl plan, t float64) {
	switch {
	case t == 0:
		u[pl.k] += g.gpus[j] / g.a[j][pl.k]
	case pl.l < 0:
		u[pl.k] += g.gpus[j] * t / g.a[j][pl.k]
	default:
		u[pl.k] += g.gpus[j] * (1 - pl.xl)
		u[pl.l] += g.gpus[j] * pl.xl
	}
}

// level returns the t where C(t, λ) = 1, by Newton's method from t0 (C is
// convex in t, so that from the right every step stays right of the root
// and closes on it), capped at the jobs' reach.
func (g *lagrangian) level(lambda []float64, t0 float64) float64 {
	t := min(t0, g.reach)
	for range 50 {
		c, slope, _, ok := g.plans(lambda, t, nil)
		if !ok || math.Abs(c-1) <= 1e-13 || !(slope > 0) {
			return t
		}
		next := min(t-(c-1)/slope, g.reach)
		if next == t {
			return t
		}
		t = next
	}
	return t
}

// pricedTieBreak is MaximizeMin's second stage, maximize tieBreak subject
// to every expression at least floor (t's lower bound), seen through the
// prices of the capacity rows. Stage one's basis makes a slow start there;
// the slack basis, thousands of dear pivots, as in stage one.
//
// With the capacity rows priced, each job j picks, alone, the shares that
// earn the most tie-break net of their priced GPUs,
//
//	max_x Σ_k (d_jk − λ_k c_jk) x_k   subject to   a_j·x ≥ floor,   Σ_k x_k ≤ 1,   x ≥ 0,
//
// a vertex of its own small polytope: one type at the floor or for the
// whole round, or two types sharing the whole round at the floor. The
// prices that minimize the dual function D(λ) = λ·N + Σ_j profit_j(λ)
// are found by cutting planes (D is the maximum of the affine functions
// its plans define). From them, margin solves the stage over the few jobs
// near a tie, or basis starts the engine on the whole of it.
type pricedTieBreak struct {
	g     *lagrangian
	d     [][]float64 // d[j][k]: the tie-break per unit of X_jk
	floor float64
}

// priceTieBreak returns the second stage seen through its prices, or
// false where there is no crash's view g, the program is not of crash's
// shape, or tieBreak holds anything but X_jk.
func (p *Program) priceTieBreak(g *lagrangian, tieBreak Expr, floor float64) (*pricedTieBreak, bool) {
	if g == nil || !(floor > 0) {
		return nil, false
	}
	d, ok := g.perShare(tieBreak)
	if !ok {
		return nil, false
	}
	return &pricedTieBreak{g: g, d: d, floor: floor}, true
}

// shares returns, for each variable of the base program, j·nk + k if it is
// X_jk, else -1: owners' table in short, built here because owners caches
// its own, which concurrent solves would race on.
func (p *Program) shares() []int {
	nk := len(p.types)
	at := make([]int, p.prob.NumVars())
	for v := range at {
		at[v] = -1
	}
	for j, row := range p.x {
		for k, v := range row {
			if v >= 0 {
				at[v] = j*nk + k
			}
		}
	}
	return at
}

// perShare returns e's coefficient on each X_jk, or false if e holds
// another variable.
func (g *lagrangian) perShare(e Expr) ([][]float64, bool) {
	nk, at := len(g.capacity), g.at
	d, flat := make([][]float64, len(g.a)), make([]float64, len(g.a)*nk)
	for j := range d {
		d[j] = flat[j*nk : (j+1)*nk : (j+1)*nk]
	}
	for _, tm := range e.terms {
		if tm.Var >= len(at) || at[tm.Var] < 0 {
			return nil, false
		}
		d[at[tm.Var]/nk][at[tm.Var]%nk] += tm.Coef
	}
	return d, true
}

// vertex is a job's plan in the tie-break: type k (l = -1) at share xk,
// or k and l sharing the whole round, l for share xl.
type vertex struct {
	k, l   int
	xk, xl float64
}

// best returns job j's most profitable vertex at prices lambda, its
// profit, and the profit of the next most profitable; false if the floor
// is out of the job's reach. It runs for every job at every price margin
// tries, so each type's profit per share is worked out once (gain's
// products, in gain's order).
func (g *lagrangian) best(d [][]float64, lambda []float64, j int, floor float64) (vertex, float64, float64, bool) {
	a, dj, per := g.a[j], d[j], g.gpus[j]
	var buf [8]float64
	profit := buf[:0]
	for k := range a {
		profit = append(profit, dj[k]-lambda[k]*per)
	}
	r := ranking{out: vertex{k: -1, l: -1}, most: math.Inf(-1), next: math.Inf(-1)}
	for k := range a {
		if !(a[k] > 0) || a[k] < floor {
			continue
		}
		xk := floor / a[k]
		r.try(vertex{k: k, l: -1, xk: xk}, xk*profit[k])
		r.try(vertex{k: k, l: -1, xk: 1}, profit[k])
	}
	for k := range a {
		if !(a[k] > 0) || a[k] >= floor {
			continue
		}
		for l := range a {
			if a[l] > floor {
				xl := (floor - a[k]) / (a[l] - a[k])
				xk := 1 - xl
				r.try(vertex{k: k, l: l, xk: xk, xl: xl}, xk*profit[k]+xl*profit[l])
			}
		}
	}
	if !(floor > 0) {
		r.try(vertex{k: -1, l: -1}, 0) // idle
	}
	return r.out, r.most, r.next, r.found
}

// ranking keeps best's most profitable vertex and the two best profits.
type ranking struct {
	out        vertex
	most, next float64
	found      bool
}

func (r *ranking) try(v vertex, gain float64) {
	r.found = true
	switch {
	case gain > r.most:
		r.out, r.most, r.next = v, gain, r.most
	case gain > r.next:
		r.next = gain
	}
}

// gain is what vertex v earns job j at prices lambda: its tie-break net of
// its priced GPUs.
func (g *lagrangian) gain(d [][]float64, lambda []float64, j int, v vertex) float64 {
	if v.k < 0 {
		return 0
	}
	gain := v.xk * (d[j][v.k] - lambda[v.k]*g.gpus[j])
	if v.l >= 0 {
		gain += v.xl * (d[j][v.l] - lambda[v.l]*g.gpus[j])
	}
	return gain
}

// tieBreakPrices returns the prices, in [0, Λ] for a Λ far above any
// job's profit per GPU, that minimize D, and D there, which is the second
// stage's optimum once the search has closed on it (LP duality). It runs
// Kelley's cutting planes within a trust region around the best prices so
// far, which doubles on a step that lowers D and halves on one that does
// not: plain cutting planes, thrown to the corners of the box, took over
// a hundred cuts where this takes a few dozen (see tieCuts).
func (g *lagrangian) tieBreakPrices(ctx context.Context, d [][]float64, floor float64) ([]float64, float64, bool) {
	nk := len(g.capacity)
	top := 0.0
	for j := range d {
		for k := range d[j] {
			top = max(top, math.Abs(d[j][k])/g.gpus[j])
		}
	}
	top = max(top, 1e-12)
	ceiling := 1e3 * top
	lambda, best, upper, radius := make([]float64, nk), make([]float64, nk), math.Inf(1), top
	var cuts []cut
	for range tieCuts {
		if ctx.Err() != nil {
			return nil, 0, false
		}
		value, u, ok := g.tieBreakPlans(d, lambda, floor)
		if !ok {
			return nil, 0, false
		}
		// D(λ') ≥ value + (N − u)·λ' for every λ', with equality at λ.
		c := cut{value, make([]float64, nk)}
		for k := range nk {
			c.slope[k] = g.capacity[k] - u[k]
		}
		if dl := c.at(lambda); dl < upper {
			upper = dl
			copy(best, lambda)
			radius = min(2*radius, ceiling)
		} else {
			radius /= 2
		}
		cuts = append(cuts, c)
		lo, hi := make([]float64, nk), make([]float64, nk)
		for k := range nk {
			lo[k], hi[k] = max(0, best[k]-radius), min(ceiling, best[k]+radius)
		}
		next, model := lowest(cuts, lo, hi)
		// By convexity the model's least value near the best prices is
		// its least anywhere, and there it is exact.
		if upper-model <= 1e-10*max(1, math.Abs(upper)) || radius <= 1e-12*top {
			break
		}
		lambda = next
	}
	return best, upper, true
}

// cut is an affine minorant of the dual function: value + slope·λ.
type cut struct {
	value float64
	slope []float64
}

func (c cut) at(lambda []float64) float64 {
	v := c.value
	for k, s := range c.slope {
		v += s * lambda[k]
	}
	return v
}

// lowest returns the prices in the box [lo, hi] where the cuts' maximum
// is least, and that least value. With λ = lo + y and w = W − z, W the
// cuts' maximum at lo, it is the small program
//
//	maximize z   subject to   z + slope_m·y ≤ W − cut_m(lo),   y ≤ hi − lo,   z, y ≥ 0,
//
// whose right-hand sides are non-negative, as small needs.
func lowest(cuts []cut, lo, hi []float64) ([]float64, float64) {
	nk := len(lo)
	top := math.Inf(-1)
	for _, c := range cuts {
		top = max(top, c.at(lo))
	}
	a, b := make([][]float64, 0, len(cuts)+nk), make([]float64, 0, len(cuts)+nk)
	for _, c := range cuts {
		row := make([]float64, 1+nk)
		row[0] = 1
		copy(row[1:], c.slope)
		a, b = append(a, row), append(b, top-c.at(lo))
	}
	for k := range nk {
		row := make([]float64, 1+nk)
		row[1+k] = 1
		a, b = append(a, row), append(b, hi[k]-lo[k])
	}
	obj := make([]float64, 1+nk)
	obj[0] = 1
	x, z := small(obj, a, b)
	lambda := make([]float64, nk)
	for k := range nk {
		lambda[k] = lo[k] + x[1+k]
	}
	return lambda, top - z
}

// tieBreakPlans returns the tie-break the jobs' best plans at prices
// lambda earn, and the GPUs of each type they hold.
func (g *lagrangian) tieBreakPlans(d [][]float64, lambda []float64, floor float64) (float64, []float64, bool) {
	value, u := 0.0, make([]float64, len(g.capacity))
	for j := range g.a {
		v, _, _, ok := g.best(d, lambda, j, g.need(j, floor))
		switch {
		case !ok:
			return 0, nil, false
		case v.k < 0:
			continue
		}
		value += v.xk * d[j][v.k]
		u[v.k] += v.xk * g.gpus[j]
		if v.l >= 0 {
			value += v.xl * d[j][v.l]
			u[v.l] += v.xl * g.gpus[j]
		}
	}
	return value, u, true
}

// basis returns a starting basis for the second stage, m: each job's
// best plan at the prices, and the jobs nearest a tie to fill the count.
func (s *pricedTieBreak) basis(p *Program, m *maxMinLP, lambda []float64) *lp.Basis {
	g, d, floor, first := s.g, s.d, s.floor, m.first
	b := &lp.Basis{Vars: make([]lp.BasisStatus, m.numVars()), Rows: make([]lp.BasisStatus, m.numRows())}
	for v := range b.Vars {
		b.Vars[v] = lp.AtLower
	}
	basics := 0 // t stays at its bound, the floor
	full := make([]bool, len(g.a))
	var ties []tie
	for j := range g.a {
		v, gain, _, ok := g.best(d, lambda, j, floor)
		if !ok {
			return nil
		}
		b.Vars[p.x[j][v.k]] = lp.Basic
		basics++
		atFloor := v.xk < 1 || v.l >= 0
		full[j] = v.xk == 1 || v.l >= 0
		if v.l >= 0 {
			b.Vars[p.x[j][v.l]] = lp.Basic
			basics++
		}
		b.Rows[first+j] = lp.Basic
		if atFloor {
			b.Rows[first+j] = lp.AtLower
		} else {
			basics++
		}
		next, gap := -1, math.Inf(1) // the next best single type, at the floor
		for k := range g.a[j] {
			if k == v.k || !(g.a[j][k] >= floor) {
				continue
			}
			alt := floor / g.a[j][k] * (d[j][k] - lambda[k]*g.gpus[j])
			if gain-alt < gap {
				next, gap = k, gain-alt
			}
		}
		if next >= 0 {
			ties = append(ties, tie{p.x[j][next], gap})
		}
	}
	return p.complete(b, basics, full, lambda, ties)
}

// tie is a variable a crash basis may take to fill its count, and how far
// its job is from choosing it.
type tie struct {
	v   int
	gap float64
}

// complete completes crash basis b, which has basics basic entries so
// far: a job's time row at its bound where the job is full, else basic;
// a type's capacity row at its bound where the type is priced, else basic;
// and the ties closest to choice basic, as many as the count needs.
func (p *Program) complete(b *lp.Basis, basics int, full []bool, lambda []float64, ties []tie) *lp.Basis {
	for i, r := range p.rows {
		switch {
		case r.kind == slotTime && full[r.j]:
			b.Rows[i] = lp.AtUpper
		case r.kind == slotTime, lambda[r.s.n] <= 0:
			b.Rows[i] = lp.Basic
			basics++
		default:
			b.Rows[i] = lp.AtUpper
		}
	}
	slices.SortStableFunc(ties, func(x, y tie) int { return cmp.Compare(x.gap, y.gap) })
	for _, x := range ties[:max(0, min(len(b.Rows)-basics, len(ties)))] {
		b.Vars[x.v] = lp.Basic
	}
	return b
}
