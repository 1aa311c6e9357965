package lp

import (
	"fmt"
	"math"
)

// primal runs the primal simplex from a primal feasible basis until no
// reduced cost has the wrong sign, or a column shows the objective
// unbounded. It cleans up after the dual simplex: the reduced costs that
// removing the cost perturbation leaves with the wrong sign, and the
// variables that artificial bounds held. Pricing is Dantzig's (largest
// reduced cost), the ratio test Harris'.
func (s *sparseSolver) primal() (outcome, error) {
	for {
		if err := s.tick(); err != nil {
			return 0, err
		}
		q := s.chooseColumn()
		if q < 0 {
			return phaseOptimal, nil
		}
		s.ftranColumn(q)
		dir := 1.0
		if s.d[q] > 0 {
			dir = -1
		}
		r, step, ok := s.primalRatio(q, dir)
		if !ok {
			return phaseUnbounded, nil
		}
		if r >= 0 {
			s.pivotRow(r)
			if !s.consistent(r, q) {
				if s.lu.updates() > 0 {
					if err := s.refresh(); err != nil {
						return 0, err
					}
					continue
				}
				if math.Abs(s.alpha[q]) <= spTolPivot {
					return 0, fmt.Errorf("lp: sparse: pivot %g vanishes on a fresh factorization: %w", s.alpha[q], ErrNumerical)
				}
			}
		}
		s.primalStep(q, r, dir, step)
	}
}

// chooseColumn returns the nonbasic variable whose reduced cost has the
// wrong sign by the most, or −1.
func (s *sparseSolver) chooseColumn() int {
	best, q := 0.0, -1
	for j, st := range s.state {
		if st == isBasic {
			continue
		}
		if v := s.improvable(j); v > best {
			best, q = v, j
		}
	}
	return q
}

// primalRatio returns the position that leaves when q moves in direction
// dir (−1 for a bound flip of q) and the step. Pass one finds the longest
// step that keeps every basic variable within its bounds widened by the
// primal tolerance; pass two takes, among the positions that block within
// it, the one with the largest pivot. ok is false when nothing blocks.
func (s *sparseSolver) primalRatio(q int, dir float64) (r int, step float64, ok bool) {
	limit := math.Inf(1)
	for _, k := range s.colNZ {
		if a := dir * s.col[k]; math.Abs(a) > spTolPivot {
			limit = min(limit, s.room(k, a, spTolPrimal)/math.Abs(a))
		}
	}
	own := s.up[q] - s.x[q]
	if dir < 0 {
		own = s.x[q] - s.lo[q]
	}
	if own <= limit {
		return -1, own, !math.IsInf(own, 1)
	}
	r, big := -1, 0.0
	for _, k := range s.colNZ {
		a := dir * s.col[k]
		if math.Abs(a) <= spTolPivot || math.Abs(a) <= big {
			continue
		}
		if t := s.room(k, a, 0) / math.Abs(a); t <= limit {
			r, big, step = k, math.Abs(a), t
		}
	}
	return r, step, r >= 0
}

// room returns how far basic position k may move, widened by tol, in the
// direction that a positive step of the entering variable moves it: down
// if a > 0.
func (s *sparseSolver) room(k int, a, tol float64) float64 {
	j := s.head[k]
	if a > 0 {
		return max(s.x[j]-s.lo[j]+tol, 0)
	}
	return max(s.up[j]-s.x[j]+tol, 0)
}

// primalStep moves q by step in direction dir; if r ≥ 0, head[r] leaves
// at the bound it reached and the reduced costs move along the pivot row
// (alpha), else q flips to its other bound.
func (s *sparseSolver) primalStep(q, r int, dir, step float64) {
	for _, k := range s.colNZ {
		s.x[s.head[k]] -= dir * step * s.col[k]
	}
	s.x[q] += dir * step
	if r < 0 {
		if dir > 0 {
			s.state[q], s.x[q] = atUpper, s.up[q]
		} else {
			s.state[q], s.x[q] = atLower, s.lo[q]
		}
		return
	}
	p := s.head[r]
	leave := atLower
	if dir*s.col[r] < 0 {
		leave = atUpper
	}
	theta := s.d[q] / s.alpha[q]
	for _, j := range s.touched {
		if s.state[j] != isBasic {
			s.d[j] -= theta * s.alpha[j]
		}
	}
	s.d[p] = -theta
	s.swap(r, q, leave)
}
