package lp

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"
	gonumlp "gonum.org/v1/gonum/optimize/convex/lp"
)

// gonum's lp.Simplex has neither an iteration limit nor a context, and its
// pivoting rules can cycle on degenerate problems (see core.go). Simplex
// therefore never hands it a *mat.Dense: it passes a guardedMatrix, which
// counts the elements gonum reads and stops the solve, by panicking out of
// gonum, when a budget is spent or the context is done. safeSimplex turns
// that panic back into an error.
//
// This bounds the whole solve because every pass of gonum's main loop reads
// at least one column of A through At (computeMove extracts the entering
// column with mat.Col, which reads a matrix that is not a RawMatrixer element
// by element), and because Simplex always supplies the initial basis, so
// gonum never runs its own phase 1, which would iterate on a private dense
// copy of A that the guard cannot see.

// gonumIterations is the number of ordinary pivots one gonum call may make
// before the guard stops it, as a function of its shape. A simplex solve
// normally takes between m and 3m pivots; the margin is wide because the
// guard is a last resort, not a tuning knob.
func gonumIterations(m, n int) int { return 20*(m+n) + 1000 }

// errIterationLimit reports a gonum call stopped by its read budget.
var errIterationLimit = fmt.Errorf("lp: simplex: gonum iteration limit reached: %w", ErrTimeLimit)

// guardedMatrix is an m×n row-major matrix as gonum sees it.
type guardedMatrix struct {
	m, n int
	data []float64
	ctx  context.Context
	// left is the number of element reads left; untilCheck counts down
	// to the next look at the context.
	left, untilCheck int
}

// guardStop is the panic value of a guardedMatrix that stops a solve.
type guardStop struct{ err error }

func newGuarded(ctx context.Context, m, n int, data []float64) *guardedMatrix {
	// gonum reads A a few times in full before it pivots (input checks,
	// the nonbasic columns), then about one column per pivot.
	return &guardedMatrix{
		m: m, n: n, data: data, ctx: ctx,
		left:       m * (4*n + gonumIterations(m, n)),
		untilCheck: m,
	}
}

func (g *guardedMatrix) Dims() (int, int) { return g.m, g.n }

func (g *guardedMatrix) T() mat.Matrix { return mat.Transpose{Matrix: g} }

func (g *guardedMatrix) At(i, j int) float64 {
	g.left--
	if g.left < 0 {
		panic(guardStop{errIterationLimit})
	}
	g.untilCheck--
	if g.untilCheck <= 0 {
		// About once per column read, that is per pivot: negligible next
		// to the dense factorizations gonum makes at every pivot.
		g.untilCheck = g.m
		if err := g.ctx.Err(); err != nil {
			panic(guardStop{err})
		}
	}
	if uint(i) >= uint(g.m) || uint(j) >= uint(g.n) {
		panic(mat.ErrIndexOutOfRange)
	}
	return g.data[i*g.n+j]
}

// safeSimplex runs gonum's simplex on the m×n row-major matrix a from the
// feasible basis basis, under a guard. It turns gonum's panics (shape and
// basis checks) into ErrNumerical, and a guard's stop into its error.
func safeSimplex(ctx context.Context, c []float64, m, n int, a, b []float64, tol float64, basis []int) (x []float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			x = nil
			if s, ok := r.(guardStop); ok {
				err = s.err
				return
			}
			err = fmt.Errorf("lp: simplex: gonum panicked: %v: %w", r, ErrNumerical)
		}
	}()
	_, x, err = gonumlp.Simplex(c, newGuarded(ctx, m, n, a), b, tol, basis)
	return x, err
}
