package lp

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// outcome is how a simplex phase ended.
type outcome int

const (
	phaseOptimal outcome = iota
	phaseInfeasible
	phaseUnbounded
)

// makeDualFeasible makes the current basis dual feasible: each boxed
// nonbasic variable moves to the bound its reduced cost favours; a small
// wrong reduced cost of another variable (up to spShiftCost, such as the
// perturbation leaves) is shifted to 0 with its cost; and a larger one gets
// an artificial bound M away on that side, where the variable sits (the
// "big-M box" of dual simplex codes), so that the dual simplex can start. With perturb, the
// costs are first moved by small pseudo-random amounts in the direction
// that keeps each variable where it is: the allocation LPs are massively
// dual degenerate (most costs are 0) and the dual simplex stalls on ties
// without it.
func (s *sparseSolver) makeDualFeasible(perturb bool) {
	if perturb {
		s.perturb()
		s.computeDuals()
	}
	for j, st := range s.state {
		if st == isBasic || s.lo[j] == s.up[j] {
			continue
		}
		lo, up := s.lo[j], s.up[j]
		boxed := !math.IsInf(lo, -1) && !math.IsInf(up, 1)
		switch dj := s.d[j]; {
		case boxed && dj < 0 || st == atUpper && dj <= 0 && boxed:
			s.state[j], s.x[j] = atUpper, up
		case boxed:
			s.state[j], s.x[j] = atLower, lo
		case math.Abs(dj) <= spShiftCost && (dj < -s.tolD[j] && math.IsInf(up, 1) || dj > s.tolD[j] && math.IsInf(lo, -1)):
			s.c[j] -= dj // a shift the costs' restoration undoes
			s.d[j] = 0
		case dj < -s.tolD[j] && math.IsInf(up, 1):
			s.art[j] = true
			s.up[j] = finiteOr(lo, 0) + s.bigM
			s.state[j], s.x[j] = atUpper, s.up[j]
		case dj > s.tolD[j] && math.IsInf(lo, -1):
			s.art[j] = true
			s.lo[j] = finiteOr(up, 0) - s.bigM
			s.state[j], s.x[j] = atLower, s.lo[j]
		}
	}
	s.computeXB()
}

func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) {
		return alt
	}
	return v
}

// perturb adds to each cost a pseudo-random 1e-7 to 2e-7 of its size (at
// least 1), in the direction that favours the bound the variable sits at
// or, for a basic variable, its finite lower bound. The seed is fixed: the
// same problem always takes the same path.
func (s *sparseSolver) perturb() {
	rng := rand.New(rand.NewPCG(0x5eed, 0x7370))
	for j := range s.c {
		e := 1e-7 * (1 + math.Abs(s.c[j])) * (1 + rng.Float64())
		switch {
		case s.lo[j] == s.up[j]:
		case s.state[j] == atUpper:
			s.c[j] -= e
		case s.state[j] == atLower || s.state[j] == isBasic && !math.IsInf(s.lo[j], -1):
			s.c[j] += e
		case s.state[j] == isBasic && !math.IsInf(s.up[j], 1):
			s.c[j] -= e
		}
	}
}

// unperturb restores the model's costs.
func (s *sparseSolver) unperturb() { copy(s.c, s.cost) }

// restoreBounds restores the model's bounds after artificial bounds and
// bound shifts. A nonbasic variable left at an artificial bound stays
// where it is, between its true bounds, for the primal simplex to move; one
// left outside its bounds by a shift goes back to the bound.
func (s *sparseSolver) restoreBounds() {
	copy(s.lo, s.lower)
	copy(s.up, s.upper)
	clear(s.art)
	s.bigM = spBigM
	for j, st := range s.state {
		if st == isBasic {
			continue
		}
		switch x := s.x[j]; {
		case x <= s.lo[j]:
			s.state[j], s.x[j] = atLower, s.lo[j]
		case x >= s.up[j]:
			s.state[j], s.x[j] = atUpper, s.up[j]
		case x == 0 && math.IsInf(s.lo[j], -1) && math.IsInf(s.up[j], 1):
			s.state[j] = atZero
		default:
			s.state[j] = atValue
		}
	}
}

// growArtificial widens every artificial bound a hundredfold; false once
// they are as wide as they may get.
func (s *sparseSolver) growArtificial() bool {
	if s.bigM >= spMaxBigM {
		return false
	}
	s.bigM *= 100
	for j, a := range s.art {
		if !a {
			continue
		}
		if math.IsInf(s.upper[j], 1) {
			s.up[j] = finiteOr(s.lower[j], 0) + s.bigM
		}
		if math.IsInf(s.lower[j], -1) {
			s.lo[j] = finiteOr(s.upper[j], 0) - s.bigM
		}
		switch s.state[j] {
		case atUpper:
			s.x[j] = s.up[j]
		case atLower:
			s.x[j] = s.lo[j]
		}
	}
	s.computeXB()
	return true
}

// dual runs the dual simplex from a dual feasible basis until x_B is
// within its working bounds or a row admits no entering variable; it
// returns that row (or −1).
func (s *sparseSolver) dual() (outcome, int, error) {
	for {
		if err := s.tick(); err != nil {
			return 0, -1, err
		}
		r := s.chooseRow()
		if r < 0 {
			return phaseOptimal, -1, nil
		}
		delta := s.infeasibility(r)
		wr := s.pivotRow(r)
		q, flips := s.dualRatio(delta)
		if q < 0 {
			return phaseInfeasible, r, nil
		}
		s.ftranColumn(q)
		if !s.consistent(r, q) {
			if s.lu.updates() > 0 {
				if err := s.refresh(); err != nil {
					return 0, -1, err
				}
				continue
			}
			if math.Abs(s.col[r]) <= spTolPivot {
				return 0, -1, fmt.Errorf("lp: sparse: pivot %g vanishes on a fresh factorization: %w", s.col[r], ErrNumerical)
			}
		}
		s.dualStep(r, q, delta, wr, flips)
	}
}

// consistent compares the pivot computed from the row (alpha) and from the
// column (col): they differ when the factors have lost accuracy.
func (s *sparseSolver) consistent(r, q int) bool {
	a, b := s.alpha[q], s.col[r]
	return math.Abs(a-b) <= 1e-8*(1+math.Abs(a)) && math.Abs(b) > spTolPivot/10
}

// chooseRow returns the basic position whose infeasibility is largest
// relative to its steepest-edge weight, or −1 if x_B is feasible. Scores
// are kept between iterations: only the suspects' change.
func (s *sparseSolver) chooseRow() int {
	for _, k := range s.suspects {
		s.suspected[k], s.score[k] = false, 0
		if v := s.infeasibility(k); v != 0 {
			s.score[k] = v * v / s.dse[k]
			if !s.inInf[k] {
				s.inInf[k] = true
				s.infList = append(s.infList, k)
			}
		}
	}
	s.suspects = s.suspects[:0]
	best, r := 0.0, -1
	list := s.infList[:0]
	for _, k := range s.infList {
		score := s.score[k]
		if score == 0 {
			s.inInf[k] = false
			continue
		}
		list = append(list, k)
		if score > best || score == best && k < r {
			best, r = score, k
		}
	}
	s.infList = list
	return r
}

// suspect notes that the value, bounds or weight of basic position k may
// have changed: only the positions an iteration moves can, so chooseRow
// need not look at every row.
func (s *sparseSolver) suspect(k int) {
	if !s.suspected[k] {
		s.suspected[k] = true
		s.suspects = append(s.suspects, k)
	}
}

// listInfeasible makes every position a suspect.
func (s *sparseSolver) listInfeasible() {
	for k := range s.head {
		s.suspect(k)
	}
}

// ratioCand is a candidate of the dual ratio test.
type ratioCand struct {
	j                   int
	a, ratio, harris, w float64 // w: the slope its flip uses up
}

// dualRatio chooses the entering variable for a leaving variable with
// infeasibility delta, by the bound flipping ratio test with Harris'
// tolerance: candidates are taken in order of their ratios, a group at a
// time (those within the Harris bound of the rest); while the slope of the
// dual objective stays positive past a group of boxed variables, they flip
// to their other bound instead of entering. Within the group that ends the
// step, the largest pivot enters. It returns −1 if every candidate can
// flip and the slope stays positive: then the row proves the working
// problem infeasible.
func (s *sparseSolver) dualRatio(delta float64) (q int, flips []ratioCand) {
	cands, bound, least := s.ratioCandidates(delta)
	slope := math.Abs(delta)
	// cands[:i] are passed (to flip); each round moves the next group,
	// those within the smallest Harris bound of the rest, to cands[i:g].
	// Groups are few: selecting them beats sorting all candidates.
	for i := 0; i < len(cands); {
		// A reduced cost beyond the tolerance has a negative Harris
		// bound: the group is then at least the smallest ratio.
		g, used, nextBound, nextLeast := takeGroup(cands, i, max(bound, least))
		if g == i { // NaN ratios: take one candidate, never loop
			g, used = i+1, cands[i].w
			nextBound, nextLeast = lowest(cands[g:])
		}
		// Flip the group only if x_p stays infeasible past it: if the flips
		// make it feasible to the tolerance, a variable of the group enters.
		// The last group flips only if x_p stays infeasible by more than
		// certify's tolerance, so that the row then proves something:
		// flipping it on a tiny slope left no candidate, and the solve
		// relaxed x_p's bound by the whole violation (FuzzSparse).
		tol := spTolPrimal + 1e-12*math.Abs(delta)
		if g == len(cands) {
			tol = spLastFlip * (1 + math.Abs(delta))
		}
		if slope-used > tol {
			slope -= used
			i, bound, least = g, nextBound, nextLeast
			continue
		}
		best := i
		for k := i + 1; k < g; k++ {
			if a, b := math.Abs(cands[k].a), math.Abs(cands[best].a); a > b || a == b && cands[k].j < cands[best].j {
				best = k
			}
		}
		return cands[best].j, cands[:i]
	}
	return -1, nil
}

// spLastFlip is how far past the last group of candidates, relative to
// the leaving variable's infeasibility, x_p must stay infeasible for the
// group to flip and the row to count as proof (as certify's tolerance).
const spLastFlip = 1e3 * spTolPrimal

// takeGroup moves the candidates of cands[i:] whose ratio is at most
// bound to cands[i:g], and returns g, the sum of their slopes, and the
// lowest (see lowest) of the others, which the next round needs.
func takeGroup(cands []ratioCand, i int, bound float64) (g int, used, nextBound, nextLeast float64) {
	g, nextBound, nextLeast = i, math.Inf(1), math.Inf(1)
	for k := i; k < len(cands); k++ {
		if c := cands[k]; c.ratio <= bound {
			cands[g], cands[k] = c, cands[g]
			used += c.w
			g++
		} else {
			nextBound, nextLeast = lower(nextBound, c.harris), lower(nextLeast, c.ratio)
		}
	}
	return g, used, nextBound, nextLeast
}

// lowest returns the smallest Harris bound and ratio of cands. Not the
// min builtin: its NaN and signed-zero rules cost here, and a NaN is
// better ignored.
func lowest(cands []ratioCand) (bound, least float64) {
	bound, least = math.Inf(1), math.Inf(1)
	for _, c := range cands {
		bound, least = lower(bound, c.harris), lower(least, c.ratio)
	}
	return bound, least
}

func lower(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

// ratioCandidates lists the nonbasic variables whose reduced cost limits
// the dual step, with a = ±alpha_j signed so that a > 0 limits a
// variable at its lower bound, and their lowest (see lowest).
func (s *sparseSolver) ratioCandidates(delta float64) (cands []ratioCand, bound, least float64) {
	sgn := 1.0
	if delta < 0 {
		sgn = -1
	}
	cands = s.cands[:0]
	bound, least = math.Inf(1), math.Inf(1)
	for _, j := range s.touched {
		aj := s.alpha[j]
		if aj == 0 || s.state[j] == isBasic || s.lo[j] == s.up[j] {
			continue
		}
		a := sgn * aj
		switch s.state[j] {
		case atLower:
			if a <= spTolPivot {
				continue
			}
		case atUpper:
			if a >= -spTolPivot {
				continue
			}
		default:
			if math.Abs(a) <= spTolPivot {
				continue
			}
		}
		dj, tol := s.d[j], s.tolD[j]
		if a < 0 {
			tol = -tol
		}
		w := math.Inf(1)
		if st := s.state[j]; st == atLower || st == atUpper {
			w = math.Abs(a) * (s.up[j] - s.lo[j])
		}
		c := ratioCand{j: j, a: a, ratio: max(dj/a, 0), harris: (dj + tol) / a, w: w}
		bound, least = lower(bound, c.harris), lower(least, c.ratio)
		cands = append(cands, c)
	}
	s.cands = cands
	return cands, bound, least
}

// dualStep carries out the iteration: the reduced costs move along the
// pivot row, the flipped variables change bounds, x_B follows, and q
// replaces the leaving variable, whose steepest-edge weight is exact
// (wr = ‖rho‖²) and the others updated.
func (s *sparseSolver) dualStep(r, q int, delta, wr float64, flips []ratioCand) {
	p := s.head[r]
	theta := s.d[q] / s.alpha[q]
	for _, j := range s.touched {
		if s.state[j] != isBasic {
			s.d[j] -= theta * s.alpha[j]
		}
	}
	s.d[p] = -theta
	s.flip(flips)
	// tau = B⁻¹rho for the weights, before the basis changes.
	for _, i := range s.rhoNZ {
		s.rhs[i] = s.rho[i]
	}
	s.ftranInto(s.tau, &s.tauNZ, s.rhoNZ, false)
	leave, target := atLower, s.lo[p]
	if delta > 0 {
		leave, target = atUpper, s.up[p]
	}
	ar := s.col[r]
	step := (s.x[p] - target) / ar
	for _, k := range s.colNZ {
		s.x[s.head[k]] -= step * s.col[k]
		s.suspect(k)
	}
	s.x[q] += step
	for _, k := range s.colNZ {
		if v := s.col[k]; k != r {
			f := v / ar
			s.dse[k] = max(s.dse[k]-2*f*s.tau[k]+f*f*wr, spMinWeight)
		}
	}
	s.dse[r] = max(wr/(ar*ar), spMinWeight)
	s.swap(r, q, leave)
}

// flip moves each candidate to its other bound and updates x_B.
func (s *sparseSolver) flip(flips []ratioCand) {
	if len(flips) == 0 {
		return
	}
	s.rhsNZ = s.rhsNZ[:0]
	for _, f := range flips {
		j := f.j
		old := s.x[j]
		if s.state[j] == atLower {
			s.state[j], s.x[j] = atUpper, s.up[j]
		} else {
			s.state[j], s.x[j] = atLower, s.lo[j]
		}
		delta := s.x[j] - old
		idx, val := s.column(j, s.one, s.minusOne)
		for t, i := range idx {
			s.rhs[i] -= val[t] * delta
		}
		s.rhsNZ = append(s.rhsNZ, idx...)
	}
	s.ftranInto(s.tau, &s.tauNZ, s.rhsNZ, false)
	for _, k := range s.tauNZ {
		s.x[s.head[k]] += s.tau[k]
		s.suspect(k)
	}
}

// certify decides what a row without an entering variable proves. x_p =
// −Σ_j alpha_j·x_j over the nonbasic j holds at every solution of the
// rows; if x_p cannot reach its bounds with every x_j within its true
// bounds, the problem is infeasible. If it can, only because of a
// variable whose bound on the helpful side is artificial, helps is true:
// larger artificial bounds may make the working problem feasible.
func (s *sparseSolver) certify(r int) (infeasible, helps bool) {
	p := s.head[r]
	below := s.x[p] < s.lo[p]
	if s.art[p] && (below && math.IsInf(s.lower[p], -1) || !below && math.IsInf(s.upper[p], 1)) {
		return false, true
	}
	violation := math.Abs(s.infeasibility(r))
	// best is the value of x_p closest to its violated bound.
	var best float64
	for j, a := range s.alpha {
		if s.state[j] == isBasic {
			continue
		}
		// Entries too small to pivot on leave x_j where it is, unless an
		// artificial bound makes that a sizeable part of x_p's violation:
		// such x_j count at their true bounds.
		if math.Abs(a) <= spTolPivot && (!s.art[j] || math.Abs(a*s.x[j]) <= 1e-3*violation) {
			best -= a * s.x[j]
			continue
		}
		// x_p gains −a·x_j: toward the bound if below == (−a·x_j grows).
		up := below == (a < 0)
		bound := s.lower[j]
		if up {
			bound = s.upper[j]
		}
		if math.IsInf(bound, 0) {
			if s.art[j] {
				return false, true
			}
			return false, false
		}
		best -= a * bound
	}
	tol := 1e3 * spTolPrimal * (1 + math.Abs(best))
	if below {
		return best < s.lower[p]-tol, false
	}
	return best > s.upper[p]+tol, false
}
