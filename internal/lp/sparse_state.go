package lp

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// nbState is where a variable sits.
type nbState uint8

const (
	isBasic nbState = iota
	atLower
	atUpper
	atZero // free and nonbasic at 0
	atValue
	// atValue: nonbasic strictly between its bounds, where an artificial
	// bound left it (see sparse.go); the primal simplex moves it.
)

// Tolerances of the sparse engine, on the scaled model.
const (
	spTolPrimal = 1e-9  // a basic value this far outside its bounds is infeasible
	spTolDual   = 1e-9  // a reduced cost this far of the wrong sign is dual infeasible
	spTolPivot  = 1e-9  // smaller entries of a pivot row or column are never pivots
	spCheckCtx  = 32    // iterations between looks at the context
	spBigM      = 1e6   // first artificial bound, see makeDualFeasible
	spMaxBigM   = 1e13  // artificial bounds grow no further
	spMinWeight = 1e-12 // floor of a steepest-edge weight
	spShiftCost = 1e-6  // wrong reduced costs up to this are shifted away, not boxed
)

// sparseSolver is the state of one solve of a sparseModel.
type sparseSolver struct {
	*sparseModel
	rowPartition
	ctx context.Context

	lo, up []float64 // working bounds: the model's, or artificial ones
	tolD   []float64 // dual tolerances, see dualTolerances
	c      []float64 // working costs: the model's, or perturbed
	art    []bool    // variable has an artificial bound
	bigM   float64
	x, d   []float64 // values and reduced costs of all n+m variables
	state  []nbState
	head   []int // basis position → variable
	pos    []int // variable → basis position, or −1
	lu     luFactor
	dse    []float64 // dual steepest-edge weights, by basis position

	iter, maxIter int

	// Work vectors: rho and rhs by row, col, tau and unit by position,
	// alpha over all variables. rhs and unit are zero between uses, and
	// the lists say where the others may be nonzero.
	rho, rhs, col, tau, unit []float64
	alpha                    []float64
	touched                  []int // entries of alpha that may be nonzero
	colNZ, tauNZ             []int
	rhoNZ                    []int     // in increasing order
	rhsNZ                    []int     // rows of rhs being filled
	infList                  []int     // positions that may be infeasible
	inInf                    []bool    // by position: in infList
	score                    []float64 // by position: chooseRow's, 0 if feasible
	suspects                 []int     // positions whose score may be stale
	suspected                []bool    // by position: in suspects
	mark                     []bool    // j is in touched
	stale                    bool      // the factors need a factorization
	warm                     bool      // the solve started from a given basis: no perturbation
	one                      []int
	minusOne                 []float64
	cands                    []ratioCand
}

func newSparseSolver(ctx context.Context, md *sparseModel, maxIter int) *sparseSolver {
	nt, m := md.n+md.m, md.m
	s := &sparseSolver{
		sparseModel: md, ctx: ctx, maxIter: maxIter, bigM: spBigM,
		lo: append([]float64(nil), md.lower...), up: append([]float64(nil), md.upper...),
		c: append([]float64(nil), md.cost...), art: make([]bool, nt), tolD: md.dualTolerances(),
		x: make([]float64, nt), d: make([]float64, nt), state: make([]nbState, nt),
		head: make([]int, m), pos: make([]int, nt), dse: ones(m),
		rho: make([]float64, m), rhs: make([]float64, m), col: make([]float64, m),
		tau: make([]float64, m), unit: make([]float64, m), alpha: make([]float64, nt),
		mark: make([]bool, nt), inInf: make([]bool, m),
		score: make([]float64, m), suspected: make([]bool, m),
		one: make([]int, 1), minusOne: make([]float64, 1),
	}
	s.initRows()
	return s
}

// initBasis sets the starting basis: start's if it is given (repaired to
// m basic variables), all logicals otherwise.
func (s *sparseSolver) initBasis(start *Basis) {
	n, m := s.n, s.m
	for j := range s.pos {
		s.pos[j] = -1
	}
	k := 0
	if start != nil {
		for j := 0; j < n+m && k < m; j++ {
			if spStatus(start, j, n) == Basic {
				s.head[k], s.pos[j] = j, k
				k++
			}
		}
	}
	for i := 0; i < m && k < m; i++ {
		if s.pos[n+i] < 0 {
			s.head[k], s.pos[n+i] = n+i, k
			k++
		}
	}
	for j := range s.pos {
		if s.pos[j] >= 0 {
			s.state[j] = isBasic
			continue
		}
		hint := AtLower
		if start != nil {
			hint = spStatus(start, j, n)
		}
		s.place(j, hint == AtUpper)
	}
}

func spStatus(b *Basis, j, n int) BasisStatus {
	if j < n {
		return b.Vars[j]
	}
	return b.Rows[j-n]
}

// place makes j nonbasic at a bound: the upper one if upper and finite,
// else the lower one if finite, else the upper one, else 0.
func (s *sparseSolver) place(j int, upper bool) {
	lo, up := s.lo[j], s.up[j]
	switch {
	case upper && !math.IsInf(up, 1) || math.IsInf(lo, -1) && !math.IsInf(up, 1):
		s.state[j], s.x[j] = atUpper, up
	case !math.IsInf(lo, -1):
		s.state[j], s.x[j] = atLower, lo
	default:
		s.state[j], s.x[j] = atZero, 0
	}
}

// factor factorizes the basis, replacing the columns of a singular basis
// by logicals of the rows left without a pivot.
func (s *sparseSolver) factor() error {
	for range 4 {
		badCols, badRows := s.lu.factorize(s.m, func(k int) ([]int, []float64) {
			return s.column(s.head[k], s.one, s.minusOne)
		})
		if len(badCols) == 0 {
			return nil
		}
		for t, k := range badCols {
			old, nu := s.head[k], s.n+badRows[t]
			if s.pos[nu] >= 0 {
				return fmt.Errorf("lp: sparse: cannot repair a singular basis: %w", ErrNumerical)
			}
			s.pos[old] = -1
			s.place(old, false)
			s.partitioned = false
			s.head[k], s.pos[nu], s.state[nu] = nu, k, isBasic
		}
	}
	return fmt.Errorf("lp: sparse: basis stays singular: %w", ErrNumerical)
}

// refresh refactorizes and recomputes x_B and d from scratch, which also
// clears the round-off the updates accumulated.
func (s *sparseSolver) refresh() error {
	if err := s.factor(); err != nil {
		return err
	}
	if !s.partitioned { // swap keeps the partition up to date
		s.partitionRows()
	}
	s.stale = false
	s.computeXB()
	s.computeDuals()
	return nil
}

// computeXB solves B·x_B = −N·x_N.
func (s *sparseSolver) computeXB() {
	clear(s.rhs)
	for j, st := range s.state {
		if st == isBasic || s.x[j] == 0 {
			continue
		}
		idx, val := s.column(j, s.one, s.minusOne)
		for t, i := range idx {
			s.rhs[i] -= val[t] * s.x[j]
		}
	}
	s.ftranInto(s.col, &s.colNZ, nil, false)
	for k, j := range s.head {
		s.x[j] = s.col[k]
	}
	s.listInfeasible()
}

// ftranInto sets z to B⁻¹rhs, rhs's nonzeros among idx (nil: anywhere),
// and *zNZ to the list of z's nonzeros, which it held before; with keep,
// the factors keep the spike an update needs (see luFactor.ftran).
func (s *sparseSolver) ftranInto(z []float64, zNZ *[]int, idx []int, keep bool) {
	for _, k := range *zNZ {
		z[k] = 0
	}
	s.lu.ftran(s.rhs, idx, z, keep)
	*zNZ = append((*zNZ)[:0], s.lu.nz...)
}

// computeDuals sets rho to the row prices y = B⁻ᵀc_B and d to c − Aᵀy.
func (s *sparseSolver) computeDuals() {
	for k, j := range s.head {
		s.col[k] = s.c[j]
	}
	s.lu.btran(s.col, nil, s.rho)
	clear(s.col)
	s.colNZ = s.colNZ[:0]
	s.setRhoNZ()
	for j := range s.d {
		s.d[j] = 0
		if s.state[j] != isBasic {
			s.d[j] = s.c[j] - s.dot(j, s.rho)
		}
	}
}

// dot returns yᵀa_j.
func (s *sparseSolver) dot(j int, y []float64) float64 {
	if j >= s.n {
		return -y[j-s.n]
	}
	var v float64
	for k := s.colStart[j]; k < s.colStart[j+1]; k++ {
		v += y[s.colRow[k]] * s.colVal[k]
	}
	return v
}

// ftranColumn sets col to B⁻¹a_j, and keeps the spike an update needs.
func (s *sparseSolver) ftranColumn(j int) {
	idx, val := s.column(j, s.one, s.minusOne)
	for t, i := range idx {
		s.rhs[i] = val[t]
	}
	s.ftranInto(s.col, &s.colNZ, idx, true)
}

// setRhoNZ lists the rows of rho that btran set, in increasing order,
// which keeps pivotRow's sums in the order of a loop over all rows: a
// long list is read off rho, a short one sorted.
func (s *sparseSolver) setRhoNZ() {
	if nz := s.lu.ynz; len(nz) <= s.m/32 {
		s.rhoNZ = append(s.rhoNZ[:0], nz...)
		slices.Sort(s.rhoNZ)
		return
	}
	s.rhoNZ = s.rhoNZ[:0]
	for i, v := range s.rho {
		if v != 0 {
			s.rhoNZ = append(s.rhoNZ, i)
		}
	}
}

// pivotRow sets rho to row r of B⁻¹ and alpha to row r of B⁻¹A over the
// nonbasic variables (basic structurals are left at 0); it returns ‖rho‖².
func (s *sparseSolver) pivotRow(r int) float64 {
	for _, i := range s.rhoNZ {
		s.rho[i] = 0
	}
	s.unit[r] = 1
	s.one[0] = r
	s.lu.btran(s.unit, s.one, s.rho)
	s.unit[r] = 0
	s.setRhoNZ()
	for _, j := range s.touched {
		s.alpha[j], s.mark[j] = 0, false
	}
	s.touched = s.touched[:0]
	var norm float64
	for _, i := range s.rhoNZ {
		y := s.rho[i]
		if y == 0 {
			continue
		}
		norm += y * y
		for k := s.rowStart[i]; k < s.rowNB[i]; k++ {
			j := s.rowCol[k]
			s.alpha[j] += y * s.rowVal[k]
			s.touch(j)
		}
		s.alpha[s.n+i] = -y
		s.touch(s.n + i)
	}
	return norm
}

// touch lists j among the entries of alpha that may be nonzero: the
// pivot row is often much sparser than the variables.
func (s *sparseSolver) touch(j int) {
	if !s.mark[j] {
		s.mark[j] = true
		s.touched = append(s.touched, j)
	}
}

// tick counts an iteration, looks at the context now and then, and
// factorizes when the last update asked for it (see luFactor.update).
func (s *sparseSolver) tick() error {
	s.iter++
	if s.iter%spCheckCtx == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if s.iter > s.maxIter {
		return fmt.Errorf("lp: sparse: %d iterations: %w", s.maxIter, ErrTimeLimit)
	}
	if s.stale {
		return s.refresh()
	}
	return nil
}

// swap makes q basic in position r in place of head[r], which leaves at
// the bound its state says; spike must be a_q's (see ftranColumn).
func (s *sparseSolver) swap(r, q int, leave nbState) {
	p := s.head[r]
	s.pos[p], s.state[p] = -1, leave
	switch leave {
	case atLower:
		s.x[p] = s.lo[p]
	case atUpper:
		s.x[p] = s.up[p]
	}
	s.head[r], s.pos[q], s.state[q] = q, r, isBasic
	if p < s.n {
		s.moveEntries(p, false)
	}
	if q < s.n {
		s.moveEntries(q, true)
	}
	s.suspect(r)
	s.d[q] = 0
	s.stale = !s.lu.update(r)
}

// infeasibility returns how far basic position k lies outside its bounds,
// negative below the lower one.
func (s *sparseSolver) infeasibility(k int) float64 {
	j := s.head[k]
	switch v := s.x[j]; {
	case v < s.lo[j]-spTolPrimal:
		return v - s.lo[j]
	case v > s.up[j]+spTolPrimal:
		return v - s.up[j]
	}
	return 0
}

// improvable returns by how much nonbasic j's reduced cost has the wrong
// sign for where it sits, 0 if by no more than its tolerance or if j is
// fixed or basic.
func (s *sparseSolver) improvable(j int) float64 {
	var v float64
	switch {
	case s.lo[j] == s.up[j]:
	case s.state[j] == atLower:
		v = -s.d[j]
	case s.state[j] == atUpper:
		v = s.d[j]
	case s.state[j] == atZero || s.state[j] == atValue:
		v = math.Abs(s.d[j])
	}
	if v <= s.tolD[j] {
		return 0
	}
	return v
}

// dualTolerances returns each variable's dual tolerance: spTolDual on the
// scaled problem, tighter for a variable whose scaling shrank its cost
// (by γ·C_j, at most a millionfold), so that a reduced cost the scaling
// made tiny still counts where it matters in the problem's own units.
func (md *sparseModel) dualTolerances() []float64 {
	tol := make([]float64, md.n+md.m)
	for j := range tol {
		var f float64
		if j < md.n {
			f = md.costScale * md.colScale[j]
		} else {
			f = md.costScale / md.rowScale[j-md.n]
		}
		tol[j] = spTolDual * min(max(f, 1e-6), 1)
	}
	return tol
}

// feasible reports whether x_B lies within its bounds and whether every
// reduced cost has its sign, within tolerance.
func (s *sparseSolver) feasible() (primal, dual bool) {
	primal, dual = true, true
	for k := range s.head {
		if s.infeasibility(k) != 0 {
			primal = false
			break
		}
	}
	for j := range s.d {
		if s.improvable(j) > 0 {
			dual = false
			break
		}
	}
	return primal, dual
}
