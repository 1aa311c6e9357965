package allocation

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/dlsched/dlsched/internal/lp"
)

// priceTolerance is how favourable, relative to the objective's largest
// coefficient, a left-out column's reduced cost must be to enter.
const priceTolerance = 1e-9

// Each job proposes its proposals most favourable columns, and a round
// adds at most perJob columns of any one job. On gavel.las-ss at 1024 jobs
// (BenchmarkScaling), 16 and 4 took 18 rounds and 3,110 pair columns; 4
// and 1 took 146 rounds; the best 256 columns by reduced cost alone took
// 58 rounds and 14,336 columns.
const (
	proposals = 16
	perJob    = 4
)

// columns is one solve's column generation over the pair variables of
// prob, the whole LP: the restricted LP holds every other variable and the
// pair variables in active.
type columns struct {
	prob   *lp.Problem
	pair   []int    // the pair variables of prob
	jobs   [][2]int // per entry of pair: its two jobs
	active []bool   // per variable of prob: in the restricted LP
	sense  float64
	tol    float64
	acc    []float64     // per variable: Σ_i y_i a_iv, scratch for price
	best   [][]candidate // per job: its proposals, scratch for price
}

// candidate is a left-out column, by its index in pair, and its
// favourable reduced cost.
type candidate struct {
	v int
	d float64
}

// newColumns starts column generation on prob with the pair variables in
// seed active, and those the start basis uses (not at zero), so that a warm
// start keeps its basis.
func (p *Program) newColumns(prob *lp.Problem, seed []bool, start *lp.Basis) *columns {
	c := &columns{prob: prob, active: make([]bool, prob.NumVars()), sense: 1}
	if prob.Sense == lp.Minimize {
		c.sense = -1
	}
	for i := range c.active {
		c.active[i] = true
	}
	c.pair = make([]int, 0, len(p.px)*len(p.types))
	c.jobs = make([][2]int, 0, cap(c.pair))
	for pc, row := range p.px {
		for _, v := range row {
			if v >= 0 {
				c.pair = append(c.pair, v)
				c.jobs = append(c.jobs, [2]int{p.pairs[pc].A, p.pairs[pc].B})
				c.active[v] = seed != nil && seed[v] || start != nil && start.Vars[v] != lp.AtLower
			}
		}
	}
	var big float64
	for v := range prob.NumVars() {
		_, _, obj := prob.Var(v)
		big = max(big, abs(obj))
	}
	c.tol = priceTolerance * max(1, big)
	c.best = make([][]candidate, len(p.gpus))
	return c
}

func abs(x float64) float64 { return max(x, -x) }

// restrict returns the restricted LP and, for each of its variables, the
// variable of prob it is.
func (c *columns) restrict() (*lp.Problem, []int) {
	index := make([]int, len(c.active))
	var back []int
	sub := &lp.Problem{Sense: c.prob.Sense}
	active := 0
	for _, in := range c.active {
		if in {
			active++
		}
	}
	// A variable is in at most five rows (a pair's: two times, capacity,
	// two expressions), and a max-min row also holds t.
	sub.Grow(active, c.prob.NumRows(), 5*active+c.prob.NumRows())
	for v, in := range c.active {
		index[v] = -1
		if in {
			index[v] = sub.AddVar(c.prob.Var(v))
			back = append(back, v)
		}
	}
	terms := make([]lp.Term, 0, 64)
	for i := range c.prob.NumRows() {
		lower, upper, row := c.prob.Row(i)
		terms = terms[:0]
		for _, t := range row {
			if v := index[t.Var]; v >= 0 {
				terms = append(terms, lp.Term{Var: v, Coef: t.Coef})
			}
		}
		sub.AddRow(lower, upper, terms...)
	}
	return sub, back
}

// narrow returns b, a basis of prob, for the restricted LP; the columns
// left out are at zero in b.
func narrow(b *lp.Basis, back []int) *lp.Basis {
	if b == nil {
		return nil
	}
	out := &lp.Basis{Vars: make([]lp.BasisStatus, len(back)), Rows: b.Rows}
	for i, v := range back {
		out.Vars[i] = b.Vars[v]
	}
	return out
}

// widen returns sol, a solution of the restricted LP, as one of prob: the
// columns left out are nonbasic at zero.
func (c *columns) widen(sol *lp.Solution, back []int) *lp.Solution {
	out := *sol
	out.X = make([]float64, len(c.active))
	for i, v := range back {
		out.X[v] = sol.X[i]
	}
	if sol.Basis != nil {
		out.Basis = &lp.Basis{Vars: make([]lp.BasisStatus, len(c.active)), Rows: sol.Basis.Rows}
		for v := range out.Basis.Vars {
			out.Basis.Vars[v] = lp.AtLower
		}
		for i, v := range back {
			out.Basis.Vars[v] = sol.Basis.Vars[i]
		}
	}
	return &out
}

// price returns left-out pair variables whose reduced cost c_v − yᵀa_v
// is favourable under the row duals y. Duals are in the problem's sense
// (∂objective/∂bound), so raising a variable from zero changes the
// objective at c_v − yᵀa_v. The columns most favourable overall all
// serve the same few jobs, and a job's time row takes few of them; so each
// job proposes its most favourable columns, and the proposals enter most
// favourable first, each job in at most perJob of them.
func (c *columns) price(y []float64) []int {
	if c.acc == nil {
		c.acc = make([]float64, len(c.active))
	}
	for i, yi := range y {
		if yi == 0 {
			continue
		}
		_, _, row := c.prob.Row(i)
		for _, t := range row {
			if !c.active[t.Var] {
				c.acc[t.Var] += yi * t.Coef
			}
		}
	}
	for j := range c.best {
		c.best[j] = c.best[j][:0]
	}
	for i, v := range c.pair {
		if c.active[v] {
			continue
		}
		_, _, obj := c.prob.Var(v)
		d := c.sense * (obj - c.acc[v])
		c.acc[v] = 0
		if d <= c.tol {
			continue
		}
		for _, j := range c.jobs[i] {
			c.best[j] = propose(c.best[j], candidate{i, d})
		}
	}
	return c.choose()
}

// propose keeps top, a job's proposals, the proposals most favourable
// first, at most proposals of them.
func propose(top []candidate, x candidate) []candidate {
	if len(top) == proposals && x.d <= top[len(top)-1].d {
		return top
	}
	if len(top) < proposals {
		top = append(top, x)
	}
	i := len(top) - 1
	for ; i > 0 && top[i-1].d < x.d; i-- {
		top[i] = top[i-1]
	}
	top[i] = x
	return top
}

// choose returns the proposed columns, most favourable first, each job in
// at most perJob of them.
func (c *columns) choose() []int {
	var all []candidate
	for _, top := range c.best {
		all = append(all, top...)
	}
	slices.SortFunc(all, func(x, y candidate) int { return cmp.Or(cmp.Compare(y.d, x.d), cmp.Compare(x.v, y.v)) })
	all = slices.Compact(all) // a column both its jobs propose
	used := make(map[int]int)
	var out []int
	for _, x := range all {
		a, b := c.jobs[x.v][0], c.jobs[x.v][1]
		if used[a] < perJob && used[b] < perJob {
			used[a]++
			used[b]++
			out = append(out, c.pair[x.v])
		}
	}
	return out
}

// solve solves prob from start by column generation over the pair
// variables, beginning with those in seed (nil: none) and those start uses.
// It returns an optimum of the whole of prob, with X, duals and basis in
// prob's indexing, and the variables of the last restricted LP. The
// optimum is exact: the last restricted LP's duals price out no column left
// out, so they are dual feasible for prob as well, and its primal optimum
// is then prob's.
//
// A result from a start must satisfy every row (see satisfies); one that
// does not is solved again from the slack basis.
func (p *Program) solve(ctx context.Context, eng lp.Engine, prob *lp.Problem, start *lp.Basis, seed []bool) (*lp.Solution, []bool, error) {
	sol, used, err := p.generate(ctx, eng, prob, start, seed)
	if err == nil && start != nil && !satisfies(prob, sol.X) {
		return p.generate(ctx, eng, prob, nil, seed)
	}
	return sol, used, err
}

// generate is solve without the check of a started result.
func (p *Program) generate(ctx context.Context, eng lp.Engine, prob *lp.Problem, start *lp.Basis, seed []bool) (*lp.Solution, []bool, error) {
	if p.everyPair || len(p.pairs) == 0 {
		prob.Start(start)
		sol, err := eng.Solve(ctx, prob)
		return sol, nil, err
	}
	c := p.newColumns(prob, seed, start)
	basis := start
	for {
		sub, back := c.restrict()
		sub.Start(narrow(basis, back))
		sol, err := eng.Solve(ctx, sub)
		if errors.Is(err, lp.ErrInfeasible) && len(back) < len(c.active) {
			// Only columns left out can make prob feasible (a Constrain
			// row may need a pair): solve it whole.
			for v := range c.active {
				c.active[v] = true
			}
			basis = nil
			continue
		}
		if err != nil {
			return sol, nil, err
		}
		whole := c.widen(sol, back)
		enter := c.price(sol.Duals)
		if len(enter) == 0 {
			return whole, c.active, nil
		}
		for _, v := range enter {
			c.active[v] = true
		}
		basis = whole.Basis
	}
}
