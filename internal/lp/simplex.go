package lp

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// DefaultSimplexMaxRows is the size guard Simplex applies when MaxRows is
// zero. gonum's simplex refactorizes a dense basis three times per iteration,
// so a solve costs O(rows³) per iteration: a max-min allocation LP of 128
// jobs (259 standard-form rows) takes over a second (BenchmarkMaxMin).
const DefaultSimplexMaxRows = 400

// DefaultSimplexMaxCols is the guard on the standard form's columns
// (variables and slacks) when MaxCols is zero. Each column costs pricing at
// every iteration and usually some iterations: the 195-job max-min program
// with space sharing (18,915 pair variables, under 400 rows) ran for more
// than 10 minutes. Without pairs, the 400-row guard allows about 1,000
// columns.
const DefaultSimplexMaxCols = 1200

// tooLargeHint names the way out of a size guard.
const tooLargeHint = "the CLP engine (go build -tags clp, with cgo and the CLP library) has no such guard"

// Simplex solves problems with gonum's dense simplex
// (gonum.org/v1/gonum/optimize/convex/lp), in pure Go. It was the default
// engine of builds without the clp tag before Sparse; it is meant for small
// problems, and the tests compare Sparse with it.
//
// gonum accepts only min cᵀx subject to Ax = b, x ≥ 0, so Solve rewrites the
// problem into that standard form: finite lower bounds are shifted to zero,
// variables bounded only above are negated, free variables are split,
// inequality rows get slack columns, ranged rows and finite upper bounds get
// extra rows (except upper bounds implied by a single row), fixed variables
// are substituted, and linearly dependent equality rows are dropped (gonum
// needs full row rank). Solve then scales the standard form by powers of
// two (see scaling), so that gonum's absolute tolerances fit data that
// spans many orders of magnitude, and solves it with gonum in two phases,
// with the right-hand side perturbed so that no vertex is degenerate:
// gonum's pivoting rules cycle on degenerate problems. Solve recovers the
// optimal basis from gonum's answer and computes the exact primal and dual
// solutions of the unperturbed problem from it (gonum reports no duals).
// core.go explains the method and why it terminates.
//
// Every gonum call reads its matrix through a guard that checks the
// context and an iteration budget, so Solve stops, with an error wrapping
// ErrTimeLimit and the context's error, soon after the context's deadline
// passes or the context is canceled.
//
// The zero value is ready to use. Simplex values are safe for concurrent use.
type Simplex struct {
	// MaxRows caps the number of rows of the standard form (counted before
	// dependent equality rows are dropped); larger problems fail with
	// ErrTooLarge. Zero means DefaultSimplexMaxRows.
	MaxRows int
	// MaxCols caps the number of columns of the standard form, variables
	// and slacks; larger problems fail with ErrTooLarge. Zero means
	// DefaultSimplexMaxCols.
	MaxCols int
}

const simplexName = "simplex"

// Solve implements Engine.
func (e Simplex) Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if sol, done, err := begin(ctx, p, simplexName); done {
		return sol, err
	}
	maxRows, maxCols := e.MaxRows, e.MaxCols
	if maxRows <= 0 {
		maxRows = DefaultSimplexMaxRows
	}
	if maxCols <= 0 {
		maxCols = DefaultSimplexMaxCols
	}
	sf, err := toStandard(p, maxRows, maxCols)
	if err != nil {
		return failed(err, simplexName), err
	}
	xs, ys, err := sf.solve(ctx)
	if cerr := ctx.Err(); cerr != nil {
		err = ctxError(simplexName, "context done during the solve", cerr)
		return failed(err, simplexName), err
	}
	if err == nil && sf.unbounded >= 0 {
		// The rest of the problem is feasible, so the variable that appears
		// in no row can improve the objective without limit.
		err = fmt.Errorf("lp: simplex: variable %d is in no row and improves the objective without limit: %w", sf.unbounded, ErrUnbounded)
	}
	if err != nil {
		return failed(err, simplexName), err
	}
	return finish(p, sf.primal(xs), sf.duals(ys), simplexName), nil
}

// standard is a Problem rewritten as min cᵀx', Ax' = b, x' ≥ 0. Each original
// variable is x_j = shift[j] + sign[j]·x'[pos[j]] − x'[neg[j]], where a
// missing column (pos or neg < 0) contributes nothing.
type standard struct {
	m, n int
	a    *mat.Dense // nil when m == 0
	b, c []float64

	shift, sign []float64
	pos, neg    []int
	// rowOf[i] is the standard row whose dual is original row i's dual, or
	// -1 for rows that were dropped (free, empty or dependent rows: dual 0).
	rowOf []int
	// sense is +1 when minimizing and −1 when maximizing: c = sense·obj.
	sense float64
	// unbounded is a variable in no row that can improve the objective
	// without limit, or -1.
	unbounded int
}

// entry is one coefficient of a row during the rewrite.
type entry struct {
	col int
	val float64
}

// stdRow is row orig of a Problem rewritten over the columns of the
// standard form, before slacks: lo ≤ Σ es ≤ hi.
type stdRow struct {
	orig   int
	es     []entry
	lo, hi float64
}

// toStandard rewrites p; it fails with ErrTooLarge when the standard form
// would have more than maxRows rows or maxCols columns, and with
// ErrInfeasible when the rewrite itself proves infeasibility.
func toStandard(p *Problem, maxRows, maxCols int) (*standard, error) {
	b := newStdBuilder(p)
	if err := b.collect(); err != nil {
		return nil, err
	}
	b.chooseColumns()
	b.rewrite()
	b.dropImpliedBounds()
	if err := b.checkSize(maxRows, maxCols); err != nil {
		return nil, err
	}
	// gonum needs full row rank. Every row but an equality has a slack
	// column of its own, so only equality rows can be dependent.
	keep, err := independentEqualities(b.rows, b.nStruct)
	if err != nil {
		return nil, err
	}
	b.shape(keep)
	if b.sf.m > 0 {
		b.fill(keep)
	}
	return b.sf, nil
}

// stdBuilder carries the rewrite of toStandard from pass to pass.
type stdBuilder struct {
	p  *Problem
	sf *standard
	// rowTerms[i] holds row i's terms over the variables, duplicates summed
	// and fixed variables moved into rowConst[i]; nil for a row that
	// constrains nothing.
	rowTerms [][]entry
	rowConst []float64
	boundRow []bool // variable j needs a row x' + s = upper − lower
	// Columns: positive parts [0, nPos), negative parts of free variables
	// [nPos, nStruct); colVar maps a column back to its variable.
	nPos, nStruct int
	colVar        []int
	rows          []stdRow
	final         func(col int) int // a column's index in the final order
}

func newStdBuilder(p *Problem) *stdBuilder {
	nv, nr := p.NumVars(), p.NumRows()
	sf := &standard{
		shift:     make([]float64, nv),
		sign:      make([]float64, nv),
		pos:       make([]int, nv),
		neg:       make([]int, nv),
		rowOf:     make([]int, nr),
		sense:     1,
		unbounded: -1,
	}
	if p.Sense == Maximize {
		sf.sense = -1
	}
	return &stdBuilder{p: p, sf: sf, rowTerms: make([][]entry, nr), rowConst: make([]float64, nr), boundRow: make([]bool, nv)}
}

func (b *stdBuilder) fixed(j int) bool { return b.p.colLower[j] == b.p.colUpper[j] }

// collect is pass 1: it sums duplicate terms, moves fixed variables into a
// constant, and finds the rows that constrain anything.
func (b *stdBuilder) collect() error {
	p := b.p
	scratch := make([]float64, p.NumVars())
	var touched []int
	for i := range p.NumRows() {
		b.sf.rowOf[i] = -1
		lo, hi, terms := p.Row(i)
		if math.IsInf(lo, -1) && math.IsInf(hi, 1) {
			continue // a free row constrains nothing
		}
		var k float64
		touched = touched[:0]
		for _, t := range terms {
			if b.fixed(t.Var) {
				k += t.Coef * p.colLower[t.Var]
				continue
			}
			if scratch[t.Var] == 0 {
				touched = append(touched, t.Var)
			}
			scratch[t.Var] += t.Coef
		}
		var es []entry
		for _, j := range touched {
			if scratch[j] != 0 {
				es = append(es, entry{j, scratch[j]})
			}
			scratch[j] = 0
		}
		if len(es) == 0 {
			if !within(k, lo, hi) {
				return fmt.Errorf("lp: simplex: row %d reduces to the constant %v outside [%v, %v]: %w", i, k, lo, hi, ErrInfeasible)
			}
			continue
		}
		b.rowTerms[i], b.rowConst[i] = es, k
	}
	return nil
}

// chooseColumns is pass 2: it chooses each variable's columns. A variable
// in no row is set to its best bound right away.
func (b *stdBuilder) chooseColumns() {
	p, sf := b.p, b.sf
	used := make([]bool, p.NumVars())
	for _, es := range b.rowTerms {
		for _, e := range es {
			used[e.col] = true
		}
	}
	n := 0
	for j := range p.NumVars() {
		lo, hi, c := p.Var(j)
		sf.pos[j], sf.neg[j], sf.sign[j] = -1, -1, 1
		switch {
		case b.fixed(j):
			sf.shift[j] = lo
		case !used[j]:
			b.unused(j, lo, hi, c*sf.sense)
		case !math.IsInf(lo, -1):
			sf.shift[j], sf.pos[j] = lo, n
			n++
			b.boundRow[j] = !math.IsInf(hi, 1)
		case !math.IsInf(hi, 1):
			sf.shift[j], sf.sign[j], sf.pos[j] = hi, -1, n
			n++
		default:
			sf.pos[j], sf.neg[j] = n, -2 // numbered below
			n++
		}
	}
	b.numberNegatives(n)
}

// unused sets variable j, in no row and of cost c in the minimization, to
// its best bound, or notes that it is unbounded.
func (b *stdBuilder) unused(j int, lo, hi, c float64) {
	sf := b.sf
	switch {
	case c > 0 && !math.IsInf(lo, -1):
		sf.shift[j] = lo
	case c < 0 && !math.IsInf(hi, 1):
		sf.shift[j] = hi
	case c != 0:
		sf.unbounded = j
		fallthrough
	default:
		sf.shift[j] = min(max(0, lo), hi)
	}
}

// numberNegatives numbers the negative parts of free variables after the
// nPos positive parts, and maps every column back to its variable. They
// come last in the final order, after the slacks too (see shape). gonum's
// replaceBland takes the first column with a reduced cost below −1e-14,
// and the negative part of a free variable whose positive part is basic
// has reduced cost 0 up to round-off along a direction that changes
// nothing; scanning columns that truly improve first keeps gonum off such
// pivots.
func (b *stdBuilder) numberNegatives(nPos int) {
	sf, n := b.sf, nPos
	for j := range sf.neg {
		if sf.neg[j] == -2 {
			sf.neg[j] = n
			n++
		}
	}
	b.nPos, b.nStruct = nPos, n
	b.colVar = make([]int, n)
	for j := range sf.neg {
		if sf.pos[j] >= 0 {
			b.colVar[sf.pos[j]] = j
		}
		if sf.neg[j] >= 0 {
			b.colVar[sf.neg[j]] = j
		}
	}
}

// rewrite is pass 3: it rewrites the rows over the columns, with bounds
// lo ≤ a·x' ≤ hi.
func (b *stdBuilder) rewrite() {
	p, sf := b.p, b.sf
	for i, es := range b.rowTerms {
		if es == nil {
			continue
		}
		k := b.rowConst[i]
		out := make([]entry, 0, len(es))
		for _, e := range es {
			j := e.col
			k += e.val * sf.shift[j]
			out = append(out, entry{sf.pos[j], e.val * sf.sign[j]})
			if sf.neg[j] >= 0 {
				out = append(out, entry{sf.neg[j], -e.val})
			}
		}
		b.rows = append(b.rows, stdRow{i, out, p.rowLower[i] - k, p.rowUpper[i] - k})
	}
}

// dropImpliedBounds spares the rows of the upper bounds that one row
// already implies: a row a·x' ≤ hi with a ≥ 0 bounds each x'_k by hi/a_k,
// as all x' ≥ 0. This keeps e.g. X ≤ 1 out of max-min LPs that also have
// Σ_k X_k ≤ 1.
func (b *stdBuilder) dropImpliedBounds() {
	p := b.p
	for _, r := range b.rows {
		for _, s := range [2]float64{1, -1} {
			side := r.hi
			if s < 0 {
				side = -r.lo // −a·x' ≤ −lo
			}
			if math.IsInf(side, 1) || slices.ContainsFunc(r.es, func(e entry) bool { return s*e.val < 0 }) {
				continue
			}
			for _, e := range r.es {
				j := b.colVar[e.col]
				if b.boundRow[j] && side/(s*e.val) <= p.colUpper[j]-p.colLower[j] {
					b.boundRow[j] = false
				}
			}
		}
	}
}

// checkSize fails with ErrTooLarge when the standard form would exceed the
// guards.
func (b *stdBuilder) checkSize(maxRows, maxCols int) error {
	m := len(b.rows)
	for _, r := range b.rows {
		if r.lo != r.hi && !math.IsInf(r.lo, -1) && !math.IsInf(r.hi, 1) {
			m++ // a ranged row needs a second row
		}
	}
	for _, need := range b.boundRow {
		if need {
			m++
		}
	}
	nv, nr := b.p.NumVars(), b.p.NumRows()
	if m > maxRows {
		return fmt.Errorf("lp: simplex: standard form has %d rows (problem: %d variables, %d rows), guard is %d: %w; %s",
			m, nv, nr, maxRows, ErrTooLarge, tooLargeHint)
	}
	if cols := b.nStruct + m; cols > maxCols { // at most one slack per row
		return fmt.Errorf("lp: simplex: standard form has up to %d columns (problem: %d variables, %d rows), guard is %d: %w; %s",
			cols, nv, nr, maxCols, ErrTooLarge, tooLargeHint)
	}
	return nil
}

// shape counts the final rows and columns, the rows kept, and sets the
// final column order: positive parts, slacks, negative parts.
func (b *stdBuilder) shape(keep []bool) {
	m, n := 0, b.nStruct
	for k, r := range b.rows {
		if keep[k] {
			m++
		}
		switch {
		case r.lo == r.hi:
		case math.IsInf(r.lo, -1) || math.IsInf(r.hi, 1):
			n++
		default:
			m++
			n += 2
		}
	}
	for _, need := range b.boundRow {
		if need {
			m++
			n++
		}
	}
	sf, nPos, nNeg := b.sf, b.nPos, b.nStruct-b.nPos
	sf.m, sf.n = m, n
	b.final = func(k int) int {
		if k < nPos {
			return k
		}
		return k - nPos + n - nNeg
	}
	for j := range sf.neg {
		if sf.neg[j] >= 0 {
			sf.neg[j] = b.final(sf.neg[j])
		}
	}
}

// fill writes the dense matrix, b and c.
func (b *stdBuilder) fill(keep []bool) {
	sf := b.sf
	sf.a = mat.NewDense(sf.m, sf.n, nil)
	sf.b = make([]float64, sf.m)
	sf.c = make([]float64, sf.n)
	for j, obj := range b.p.obj {
		c := sf.sense * obj
		if sf.pos[j] >= 0 {
			sf.c[sf.pos[j]] = c * sf.sign[j]
		}
		if sf.neg[j] >= 0 {
			sf.c[sf.neg[j]] = -c
		}
	}
	ri, col := b.fillRows(keep)
	ri, col = b.fillRanged(ri, col)
	for j, need := range b.boundRow {
		if need {
			sf.a.Set(ri, sf.pos[j], 1)
			sf.a.Set(ri, col, 1)
			sf.b[ri] = b.p.colUpper[j] - b.p.colLower[j]
			ri++
			col++
		}
	}
}

// fillRows writes the rows kept, each with its slack if it has one side,
// and returns the next row and slack column.
func (b *stdBuilder) fillRows(keep []bool) (ri, col int) {
	sf := b.sf
	col = b.nPos
	for k, r := range b.rows {
		if !keep[k] {
			continue
		}
		for _, e := range r.es {
			sf.a.Set(ri, b.final(e.col), e.val)
		}
		sf.rowOf[r.orig] = ri
		switch {
		case r.lo == r.hi:
			sf.b[ri] = r.lo
		case math.IsInf(r.lo, -1):
			sf.a.Set(ri, col, 1)
			sf.b[ri] = r.hi
			col++
		case math.IsInf(r.hi, 1):
			sf.a.Set(ri, col, -1)
			sf.b[ri] = r.lo
			col++
		}
		ri++
	}
	return ri, col
}

// fillRanged writes the ranged rows: a·x' − s = lo in the row itself,
// s + t = hi − lo below. The first row's dual prices whichever bound
// binds: at the upper bound s is basic, so both rows have the same dual; at
// the lower bound t is basic, so the second row's dual is 0.
func (b *stdBuilder) fillRanged(ri, col int) (int, int) {
	sf := b.sf
	for _, r := range b.rows {
		if r.lo == r.hi || math.IsInf(r.lo, -1) || math.IsInf(r.hi, 1) {
			continue
		}
		first := sf.rowOf[r.orig]
		sf.a.Set(first, col, -1)
		sf.b[first] = r.lo
		sf.a.Set(ri, col, 1)
		sf.a.Set(ri, col+1, 1)
		sf.b[ri] = r.hi - r.lo
		ri++
		col += 2
	}
	return ri, col
}

// within reports whether v lies in [lo, hi] up to rounding.
func within(v, lo, hi float64) bool {
	tol := 1e-9 * (1 + math.Abs(v))
	return v >= lo-tol && v <= hi+tol
}

// independentEqualities marks the rows to keep: all rows but equality rows
// that are linear combinations of earlier equality rows. A dependent row
// whose right-hand side disagrees with the combination makes the problem
// infeasible. It eliminates each equality row against the earlier
// independent ones (Gaussian elimination with the largest entry as pivot).
func independentEqualities(rows []stdRow, ncols int) ([]bool, error) {
	keep := make([]bool, len(rows))
	type pivotRow struct {
		v     []float64
		rhs   float64
		pivot int
	}
	var basis []pivotRow
	for i, r := range rows {
		keep[i] = true
		if r.lo != r.hi {
			continue
		}
		es, rhs := r.es, r.lo
		v := make([]float64, ncols)
		var scale float64
		for _, e := range es {
			v[e.col] = e.val
			scale = max(scale, math.Abs(e.val))
		}
		rhs0 := rhs
		for _, b := range basis {
			f := v[b.pivot]
			if f == 0 {
				continue
			}
			for k, bv := range b.v {
				if bv != 0 {
					v[k] -= f * bv
				}
			}
			v[b.pivot] = 0
			rhs -= f * b.rhs
		}
		pivot, big := -1, 0.0
		for k, x := range v {
			if math.Abs(x) > big {
				pivot, big = k, math.Abs(x)
			}
		}
		if big <= 1e-9*scale {
			if math.Abs(rhs) > 1e-9*(1+math.Abs(rhs0)) {
				return nil, fmt.Errorf("lp: simplex: equality row %d contradicts earlier equality rows (residual %v): %w", r.orig, rhs, ErrInfeasible)
			}
			keep[i] = false
			continue
		}
		f := 1 / v[pivot]
		for k := range v {
			v[k] *= f
		}
		v[pivot] = 1
		basis = append(basis, pivotRow{v, rhs * f, pivot})
	}
	return keep, nil
}

// solve solves the standard form and returns the primal solution and the
// duals of the standard rows (for min cᵀx'). It drops zero columns (gonum
// rejects them; they stay at 0 unless their cost is negative, which makes a
// feasible problem unbounded), scales the rest (see scaling) and solves
// the scaled problem with core.
func (sf *standard) solve(ctx context.Context) (xs, ys []float64, err error) {
	m, n := sf.m, sf.n
	xs = make([]float64, n)
	if m == 0 {
		return xs, nil, nil
	}
	raw := sf.a.RawMatrix()
	var active, zero []int
	for j := range n {
		nonzero := false
		for i := range m {
			if raw.Data[i*raw.Stride+j] != 0 {
				nonzero = true
				break
			}
		}
		if nonzero {
			active = append(active, j)
		} else {
			zero = append(zero, j)
		}
	}
	na := len(active)
	if na < m {
		return nil, nil, fmt.Errorf("lp: simplex: %d rows but %d nonzero columns: %w", m, na, ErrNumerical)
	}
	a := make([]float64, m*na)
	c := make([]float64, na)
	for q, j := range active {
		for i := range m {
			a[i*na+q] = raw.Data[i*raw.Stride+j]
		}
		c[q] = sf.c[j]
	}
	sc := computeScaling(m, na, a, sf.b, c)
	as, bs, cs := sc.apply(m, na, a, sf.b, c)
	for _, v := range slices.Concat(as, bs, cs) {
		// precheck rejected such data, and scaling cannot create it; but
		// gonum never stops on NaN costs, so make sure.
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, nil, fmt.Errorf("lp: simplex: scaled data out of the float64 range: %w", ErrNumerical)
		}
	}
	xh, yh, err := newCore(ctx, m, na, as, bs, cs).solve()
	if err != nil {
		return nil, nil, err
	}
	sc.unscale(xh, yh)
	for _, v := range slices.Concat(xh, yh) {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, nil, fmt.Errorf("lp: simplex: solution out of the float64 range: %w", ErrNumerical)
		}
	}
	for q, j := range active {
		xs[j] = xh[q]
	}
	for _, j := range zero {
		if sf.c[j] < 0 {
			return nil, nil, fmt.Errorf("lp: simplex: column %d is in no row and improves the objective without limit: %w", j, ErrUnbounded)
		}
	}
	return xs, yh, nil
}

// primal maps the standard-form solution back to the original variables.
func (sf *standard) primal(xs []float64) []float64 {
	x := make([]float64, len(sf.shift))
	for j := range x {
		v := sf.shift[j]
		if k := sf.pos[j]; k >= 0 {
			v += sf.sign[j] * xs[k]
		}
		if k := sf.neg[j]; k >= 0 {
			v -= xs[k]
		}
		x[j] = v
	}
	return x
}

// duals maps standard-form duals (of min cᵀx') to the rows of the problem,
// in its own sense.
func (sf *standard) duals(ys []float64) []float64 {
	d := make([]float64, len(sf.rowOf))
	for i, r := range sf.rowOf {
		if r >= 0 {
			d[i] = sf.sense*ys[r] + 0 // + 0 turns −0 into 0
		}
	}
	return d
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
