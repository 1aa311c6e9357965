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
// would have more than maxRows rows or maxCols columns, and with ErrInfeasible when the rewrite
// itself proves infeasibility.
func toStandard(p *Problem, maxRows, maxCols int) (*standard, error) {
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
	fixed := func(j int) bool { return p.colLower[j] == p.colUpper[j] }

	// Pass 1: sum duplicate terms, move fixed variables into a constant, and
	// find the rows that constrain anything. rowTerms[i] is nil for rows
	// that do not.
	rowTerms := make([][]entry, nr) // col holds the variable here
	rowConst := make([]float64, nr)
	scratch := make([]float64, nv)
	var touched []int
	for i := range nr {
		sf.rowOf[i] = -1
		lo, hi, terms := p.Row(i)
		if math.IsInf(lo, -1) && math.IsInf(hi, 1) {
			continue // a free row constrains nothing
		}
		var k float64
		touched = touched[:0]
		for _, t := range terms {
			if fixed(t.Var) {
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
				return nil, fmt.Errorf("lp: simplex: row %d reduces to the constant %v outside [%v, %v]: %w", i, k, lo, hi, ErrInfeasible)
			}
			continue
		}
		rowTerms[i], rowConst[i] = es, k
	}

	// Pass 2: choose each variable's columns. A variable in no row is set
	// to its best bound right away.
	used := make([]bool, nv)
	for _, es := range rowTerms {
		for _, e := range es {
			used[e.col] = true
		}
	}
	n := 0
	boundRow := make([]bool, nv) // needs a row x' + s = upper − lower
	for j := range nv {
		lo, hi, c := p.Var(j)
		sf.pos[j], sf.neg[j], sf.sign[j] = -1, -1, 1
		switch {
		case fixed(j):
			sf.shift[j] = lo
		case !used[j]:
			c *= sf.sense
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
		case !math.IsInf(lo, -1):
			sf.shift[j], sf.pos[j] = lo, n
			n++
			boundRow[j] = !math.IsInf(hi, 1)
		case !math.IsInf(hi, 1):
			sf.shift[j], sf.sign[j], sf.pos[j] = hi, -1, n
			n++
		default:
			sf.pos[j], sf.neg[j] = n, -2 // numbered below
			n++
		}
	}
	// The negative parts of free variables come last, after the slacks
	// too (see final below). gonum's replaceBland takes the first column
	// with a reduced cost below −1e-14, and the negative part of a free
	// variable whose positive part is basic has reduced cost 0 up to
	// round-off along a direction that changes nothing; scanning columns
	// that truly improve first keeps gonum off such pivots.
	nPos := n
	for j := range nv {
		if sf.neg[j] == -2 {
			sf.neg[j] = n
			n++
		}
	}
	nStruct := n
	colVar := make([]int, nStruct)
	for j := range nv {
		if sf.pos[j] >= 0 {
			colVar[sf.pos[j]] = j
		}
		if sf.neg[j] >= 0 {
			colVar[sf.neg[j]] = j
		}
	}

	// Pass 3: rewrite the rows over the columns, with bounds lo ≤ a·x' ≤ hi.
	var rows []stdRow
	for i, es := range rowTerms {
		if es == nil {
			continue
		}
		k := rowConst[i]
		out := make([]entry, 0, len(es))
		for _, e := range es {
			j := e.col
			k += e.val * sf.shift[j]
			out = append(out, entry{sf.pos[j], e.val * sf.sign[j]})
			if sf.neg[j] >= 0 {
				out = append(out, entry{sf.neg[j], -e.val})
			}
		}
		rows = append(rows, stdRow{i, out, p.rowLower[i] - k, p.rowUpper[i] - k})
	}

	// An upper bound needs no row when one row already implies it: a row
	// a·x' ≤ hi with a ≥ 0 bounds each x'_k by hi/a_k, as all x' ≥ 0. This
	// keeps e.g. X ≤ 1 out of max-min LPs that also have Σ_k X_k ≤ 1.
	for _, r := range rows {
		for _, s := range [2]float64{1, -1} {
			side := r.hi
			if s < 0 {
				side = -r.lo // −a·x' ≤ −lo
			}
			if math.IsInf(side, 1) {
				continue
			}
			ok := true
			for _, e := range r.es {
				if s*e.val < 0 {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			for _, e := range r.es {
				j := colVar[e.col]
				if boundRow[j] && side/(s*e.val) <= p.colUpper[j]-p.colLower[j] {
					boundRow[j] = false
				}
			}
		}
	}

	m := len(rows)
	for _, r := range rows {
		if r.lo != r.hi && !math.IsInf(r.lo, -1) && !math.IsInf(r.hi, 1) {
			m++ // a ranged row needs a second row
		}
	}
	for j := range nv {
		if boundRow[j] {
			m++
		}
	}
	if m > maxRows {
		return nil, fmt.Errorf("lp: simplex: standard form has %d rows (problem: %d variables, %d rows), guard is %d: %w; %s",
			m, nv, nr, maxRows, ErrTooLarge, tooLargeHint)
	}
	if cols := nStruct + m; cols > maxCols { // at most one slack per row
		return nil, fmt.Errorf("lp: simplex: standard form has up to %d columns (problem: %d variables, %d rows), guard is %d: %w; %s",
			cols, nv, nr, maxCols, ErrTooLarge, tooLargeHint)
	}

	// gonum needs full row rank. Every row but an equality has a slack
	// column of its own, so only equality rows can be dependent.
	keep, err := independentEqualities(rows, nStruct)
	if err != nil {
		return nil, err
	}

	// Count the final shape, then fill the dense matrix.
	m, n = 0, nStruct
	for k, r := range rows {
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
	for j := range nv {
		if boundRow[j] {
			m++
			n++
		}
	}
	sf.m, sf.n = m, n
	if m == 0 {
		return sf, nil
	}
	// Final column order: positive parts, slacks, negative parts.
	nNeg := nStruct - nPos
	final := func(k int) int {
		if k < nPos {
			return k
		}
		return k - nPos + n - nNeg
	}
	for j := range nv {
		if sf.neg[j] >= 0 {
			sf.neg[j] = final(sf.neg[j])
		}
	}
	sf.a = mat.NewDense(m, n, nil)
	sf.b = make([]float64, m)
	sf.c = make([]float64, n)
	for j := range nv {
		c := sf.sense * p.obj[j]
		if sf.pos[j] >= 0 {
			sf.c[sf.pos[j]] = c * sf.sign[j]
		}
		if sf.neg[j] >= 0 {
			sf.c[sf.neg[j]] = -c
		}
	}
	ri, col := 0, nPos
	for k, r := range rows {
		if !keep[k] {
			continue
		}
		for _, e := range r.es {
			sf.a.Set(ri, final(e.col), e.val)
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
	// Ranged rows: a·x' − s = lo in the row itself, s + t = hi − lo below.
	// The first row's dual prices whichever bound binds: at the upper bound
	// s is basic, so both rows have the same dual; at the lower bound t is
	// basic, so the second row's dual is 0.
	for _, r := range rows {
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
	for j := range nv {
		if boundRow[j] {
			sf.a.Set(ri, sf.pos[j], 1)
			sf.a.Set(ri, col, 1)
			sf.b[ri] = p.colUpper[j] - p.colLower[j]
			ri++
			col++
		}
	}
	return sf, nil
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
