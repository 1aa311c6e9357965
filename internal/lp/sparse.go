package lp

import (
	"context"
	"fmt"
	"math"
)

// DefaultSparseMaxRows is the size guard Sparse applies when MaxRows is
// zero: about 16,000 jobs of a max-min allocation LP. Time, not memory,
// bounds Sparse: its work grows about with the square of the rows; 4096
// jobs (8195 rows) of BenchmarkMaxMin's LP took 2.0 s against CLP's 0.8
// to 1.1 s.
const DefaultSparseMaxRows = 1 << 15

// Sparse solves problems with a sparse bounded dual simplex in pure Go, the
// default engine of builds without the clp tag. On the max-min allocation
// LP it takes 1 to 3 times CLP's time from 32 to 4096 jobs
// (BenchmarkMaxMin), and about 2.5 times on gavel.las's two stages at 2048
// jobs (policy/gavel BenchmarkLAS: 121 against 49 ms, the best of five
// runs), whose iterations are hypersparse.
//
// It works on the problem as given, with no standard form: each row is a
// logical variable bounded by the row's bounds (sparse_model.go, which also
// scales the problem by powers of two), and a basis is m of the n+m
// variables, factorized by a sparse LU with Markowitz pivoting and a
// threshold, and updated by Forrest–Tomlin between factorizations
// (sparse_lu.go), whose solves visit only the steps that a sparse
// right-hand side reaches (hypersparse FTRAN and BTRAN). The dual simplex
// (sparse_dual.go) prices the infeasible rows by dual steepest edge,
// computes the pivot row from a row copy that keeps nonbasic columns first
// (sparse_rows.go), and takes its ratio test with bound flipping and
// Harris' tolerance; costs are perturbed to break the ties of dual
// degenerate problems, the allocation LPs above all. A primal simplex
// (sparse_primal.go) then removes what the perturbation left. A variable
// that keeps the start from being dual feasible (the free t of a max-min
// LP) gets an artificial bound, which the primal simplex removes at the
// end, and which widens when an infeasibility depends on it: an
// infeasibility is reported only when the row that shows it proves it
// with the true bounds. Tolerances are 1e-9 on the scaled problem.
//
// A starting basis (Problem.Start) that fits the problem is used, repaired
// if it is not one; every optimal Solution carries its Basis, in CLP's
// conventions, so bases pass between the two. A solve from a given basis
// leaves the costs unperturbed: such a start is usually a few pivots from
// the optimum, which the perturbation made far longer (policy/gavel
// BenchmarkWarm/purego at 2048 jobs, a decision after one arrival: 48 ms
// perturbed, 13 ms not, in one run; cold, 114 ms). Solve looks at the
// context every 32 iterations and stops at MaxIterations. The same problem
// always gives the same solution: the perturbation is pseudo-random with a
// fixed seed.
//
// The zero value is ready to use. Sparse values are safe for concurrent
// use.
type Sparse struct {
	// MaxRows caps the problem's rows; larger problems fail with
	// ErrTooLarge. Zero means DefaultSparseMaxRows.
	MaxRows int
	// MaxIterations caps the simplex iterations; reaching it yields
	// ErrTimeLimit. Zero means 20·(rows + variables) + 1000.
	MaxIterations int
}

const sparseName = "sparse"

// Solve implements Engine.
func (e Sparse) Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if sol, done, err := begin(ctx, p, sparseName); done {
		return sol, err
	}
	maxRows := e.MaxRows
	if maxRows <= 0 {
		maxRows = DefaultSparseMaxRows
	}
	if p.NumRows() > maxRows {
		err := fmt.Errorf("lp: sparse: %d rows, guard is %d: %w; %s", p.NumRows(), maxRows, ErrTooLarge, tooLargeHint)
		return failed(err, sparseName), err
	}
	sol, err := e.solve(ctx, p)
	if cerr := ctx.Err(); cerr != nil && err != nil {
		err = ctxError(sparseName, "context done during the solve", cerr)
	}
	if err != nil {
		return failed(err, sparseName), err
	}
	return sol, nil
}

// solve runs the engine, turning a panic (a bug) into ErrNumerical rather
// than taking the caller down.
func (e Sparse) solve(ctx context.Context, p *Problem) (sol *Solution, err error) {
	defer func() {
		if r := recover(); r != nil {
			sol, err = nil, fmt.Errorf("lp: sparse: panic: %v: %w", r, ErrNumerical)
		}
	}()
	md := newSparseModel(p)
	maxIter := e.MaxIterations
	if maxIter <= 0 {
		maxIter = 20*(md.n+md.m) + 1000
	}
	s := newSparseSolver(ctx, md, maxIter)
	start := p.startFor()
	s.initBasis(start)
	s.warm = start != nil
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.solution(p), nil
}

// spMaxRounds bounds the alternations of dual and primal phases.
const spMaxRounds = 20

// run alternates the dual simplex (while x_B is infeasible) and the primal
// simplex (while reduced costs are), each from a fresh factorization,
// until the basis is optimal for the unperturbed problem.
func (s *sparseSolver) run() error {
	for round := range spMaxRounds {
		if err := s.refresh(); err != nil {
			return err
		}
		primal, dual := s.feasible()
		switch {
		case primal && dual:
			return nil
		case primal && round > 0:
			out, err := s.primal()
			if err != nil {
				return err
			}
			if out == phaseUnbounded {
				return fmt.Errorf("lp: sparse: %w", ErrUnbounded)
			}
		default:
			if err := s.dualPhase(round == 0 && !s.warm); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("lp: sparse: no optimal basis after %d rounds: %w", spMaxRounds, ErrNumerical)
}

// dualPhase makes the basis dual feasible, runs the dual simplex to the
// optimum of the working problem, and restores the model.
func (s *sparseSolver) dualPhase(perturb bool) error {
	for i := range s.dse {
		s.dse[i] = 1
	}
	s.makeDualFeasible(perturb)
	for {
		out, r, err := s.dual()
		if err != nil {
			return err
		}
		if out == phaseOptimal {
			break
		}
		infeasible, helps := s.certify(r)
		switch {
		case infeasible:
			return fmt.Errorf("lp: sparse: row %d proves infeasibility: %w", r, ErrInfeasible)
		case helps:
			if !s.growArtificial() {
				return fmt.Errorf("lp: sparse: artificial bounds reached %g: %w", s.bigM, ErrNumerical)
			}
		default:
			if err := s.shift(r); err != nil {
				return err
			}
		}
	}
	s.unperturb()
	s.restoreBounds()
	return nil
}

// shift moves the violated bound of head[r] to its value, for the rest of
// the solve: certify found the violation too small to prove the problem
// infeasible (1e-6 relative), yet no pivot can repair it, as when a bound
// is fixed at another engine's optimum, feasible within that engine's
// tolerance. The solution is then optimal for bounds relaxed that little.
// A larger violation is not relaxed but reported: an optimum for bounds
// moved further would be a wrong answer.
func (s *sparseSolver) shift(r int) error {
	p := s.head[r]
	if v := math.Abs(s.infeasibility(r)); v > spLastFlip*(1+math.Abs(s.x[p])) {
		return fmt.Errorf("lp: sparse: no pivot repairs row %d's violation %g, too large to relax: %w", r, v, ErrNumerical)
	}
	if s.x[p] < s.lo[p] {
		s.lo[p], s.lower[p] = s.x[p], min(s.lower[p], s.x[p])
	} else {
		s.up[p], s.upper[p] = s.x[p], max(s.upper[p], s.x[p])
	}
	s.suspect(r)
	return nil
}

// solution unscales x, computes the row duals and the basis.
func (s *sparseSolver) solution(p *Problem) *Solution {
	x := make([]float64, s.n)
	for j := range x {
		x[j] = s.x[j] * s.colScale[j]
	}
	duals := make([]float64, s.m)
	for i := range duals {
		duals[i] = s.sense*s.rho[i]*s.rowScale[i]/s.costScale + 0
	}
	sol := finish(p, x, duals, sparseName)
	sol.Basis = s.basis()
	return sol
}

// basis reports the status of every variable and row.
func (s *sparseSolver) basis() *Basis {
	b := &Basis{Vars: make([]BasisStatus, s.n), Rows: make([]BasisStatus, s.m)}
	for j, st := range s.state {
		v := Basic
		switch st {
		case atLower:
			v = AtLower
		case atUpper:
			v = AtUpper
		case atZero:
			v = Free
		case atValue:
			v = Superbasic
		}
		if j < s.n {
			b.Vars[j] = v
		} else {
			b.Rows[j-s.n] = v
		}
	}
	return b
}
