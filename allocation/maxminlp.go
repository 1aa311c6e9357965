package allocation

import (
	"math"

	"github.com/dlsched/dlsched/internal/lp"
)

// maxMinLP is MaximizeMin's linear program: the base program, a variable
// t after its variables, and a row after its rows per expression,
//
//	e_i − t ≥ 0,
//
// that maximizes t (stage one), then the tie-break with t at least a floor
// (stage two). It is built whole only when an engine solves it whole
// (problem): the LPs over the jobs at the margin read the base program's
// rows and the expressions where they are, so that a decision they settle
// copies no row. Gavel's BenchmarkWarm at 2048 jobs (/parts, solve-ms)
// re-solved in 2.44 ms against 2.95 ms when every call copied the whole
// LP (three runs each, alternating).
type maxMinLP struct {
	p      *Program
	exprs  []Expr
	t      int // t's variable
	first  int // the first expression's row
	lower  float64
	upper  float64 // t's bounds
	tie    Expr    // stage two's objective; none in stage one
	whole  *lp.Problem
	perVar []float64 // stage two's objective per variable, once summed
}

// newMaxMinLP returns stage one over p's base program, t at most upper.
func newMaxMinLP(p *Program, exprs []Expr, upper float64) *maxMinLP {
	return &maxMinLP{p: p, exprs: exprs, t: p.prob.NumVars(), first: p.prob.NumRows(), lower: -lp.Inf, upper: upper}
}

func (m *maxMinLP) numVars() int { return m.t + 1 }

// two reports whether m is in stage two: MaximizeMin raises m only with
// a tie-break to maximize.
func (m *maxMinLP) two() bool    { return len(m.tie.terms) > 0 }
func (m *maxMinLP) numRows() int { return m.first + len(m.exprs) }

// problem returns the LP whole, built on the first call.
func (m *maxMinLP) problem() *lp.Problem {
	if m.whole != nil {
		return m.whole
	}
	m.p.trace.add(traceWhole, 1)
	nnz := len(m.exprs) // t in every row
	for _, e := range m.exprs {
		nnz += len(e.terms)
	}
	// With pairs the rows are long: growing as they came copied them over
	// and over.
	prob := m.p.prob.Clone(1, len(m.exprs), nnz)
	prob.Sense = lp.Maximize
	prob.AddVar(m.lower, m.upper, 1)
	row := make([]lp.Term, 0, 8)
	for _, e := range m.exprs {
		row = append(append(row[:0], e.terms...), lp.Term{Var: m.t, Coef: -1})
		prob.AddRow(-e.constant, lp.Inf, row...)
	}
	if m.two() {
		m.setObjective(prob)
	}
	m.whole = prob
	return prob
}

// raise makes m stage two: t at least floor, maximizing tieBreak.
func (m *maxMinLP) raise(floor float64, tieBreak Expr) {
	m.lower, m.upper, m.tie = floor, lp.Inf, tieBreak
	if m.whole != nil {
		m.setObjective(m.whole)
	}
}

func (m *maxMinLP) setObjective(prob *lp.Problem) {
	prob.SetBounds(m.t, m.lower, m.upper)
	prob.SetObjective(m.t, 0)
	for _, tm := range m.tie.terms {
		_, _, c := prob.Var(tm.Var)
		prob.SetObjective(tm.Var, c+tm.Coef)
	}
}

// variable returns variable v's bounds and objective coefficient.
func (m *maxMinLP) variable(v int) (lower, upper, obj float64) {
	if v == m.t {
		if m.two() {
			return m.lower, m.upper, 0
		}
		return m.lower, m.upper, 1
	}
	lower, upper, _ = m.p.prob.Var(v) // the base program's objective is 0
	if !m.two() {
		return lower, upper, 0
	}
	if m.perVar == nil {
		m.perVar = make([]float64, m.numVars())
		for _, tm := range m.tie.terms {
			m.perVar[tm.Var] += tm.Coef
		}
	}
	return lower, upper, m.perVar[v]
}

// satisfies reports whether x satisfies every row of m to 1e-7 of the
// row's size (the magnitude of its terms at x and of its bounds). The
// engines hold rows to an absolute tolerance: where t* is tiny beside the
// expressions' coefficients (t* of 5e-5, coefficients of 5e3), CLP left
// floors short by a relative 0.16 %, both over the jobs at the margin and
// from a crash basis (TestWideRangeFloors fails without this check). Such
// a result is solved again: the stage by the whole LP, the whole LP from
// the slack basis.
func (m *maxMinLP) satisfies(x []float64) bool {
	if !satisfies(&m.p.prob, x) {
		return false
	}
	minusT := lp.Term{Var: m.t, Coef: -1}
	for _, e := range m.exprs {
		if !holds(-e.constant, lp.Inf, e.terms, minusT, x) {
			return false
		}
	}
	return true
}

// satisfies reports whether x satisfies every row of prob, as
// maxMinLP.satisfies.
func satisfies(prob *lp.Problem, x []float64) bool {
	for i := range prob.NumRows() {
		lower, upper, row := prob.Row(i)
		if !holds(lower, upper, row, lp.Term{}, x) {
			return false
		}
	}
	return true
}

// holds reports whether lower ≤ Σ row·x + last·x ≤ upper to 1e-7 of the
// row's size; a zero last is no term.
func holds(lower, upper float64, row []lp.Term, last lp.Term, x []float64) bool {
	var v, size float64
	add := func(tm lp.Term) {
		term := tm.Coef * x[tm.Var]
		v += term
		size += math.Abs(term)
	}
	for _, tm := range row {
		add(tm)
	}
	if last.Coef != 0 {
		add(last)
	}
	for _, b := range []float64{lower, upper} {
		if !math.IsInf(b, 0) {
			size = max(size, math.Abs(b))
		}
	}
	tol := 1e-7 * size
	return v >= lower-tol && v <= upper+tol
}
