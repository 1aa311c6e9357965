//go:build clp && cgo

package lp

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/lanl/clp"
)

// CLPAlgorithm selects the simplex variant CLP runs.
type CLPAlgorithm int

const (
	// CLPAuto runs the dual simplex. On dlsched's max-min allocation LPs
	// (BenchmarkMaxMin) the two variants tied at 512 and 2048 jobs (about
	// 27 ms and 0.4 s of CPU, averaged over 30 instances), and the dual
	// was faster at 128 jobs (1.7 ms against 2.6 ms).
	CLPAuto CLPAlgorithm = iota
	// CLPDual runs the dual simplex.
	CLPDual
	// CLPPrimal runs the primal simplex.
	CLPPrimal
)

func (a CLPAlgorithm) String() string {
	switch a {
	case CLPAuto:
		return "auto"
	case CLPDual:
		return "dual"
	case CLPPrimal:
		return "primal"
	}
	return fmt.Sprintf("CLPAlgorithm(%d)", int(a))
}

// CLP solves problems with the COIN-OR CLP sparse simplex (through cgo and
// github.com/lanl/clp). It is compiled in, and the default engine, only in
// builds with the clp tag and cgo (see the package documentation); it
// solves the max-min allocation LP for 2048 jobs (6145 variables, 4099
// rows) in about 0.4 s.
//
// CLP cannot be interrupted, so Solve runs it in slices of 20 ms of
// process CPU time, each continuing from the basis the last one left, and
// looks at ctx between them: cancellation ends a solve within about 20 ms
// (TestCLPCancel). A deadline is also CLP's time limit; as CLP measures it
// in process CPU time, under concurrent load it may stop before the
// deadline. Either way the error wraps ErrTimeLimit and
// context.DeadlineExceeded.
//
// The zero value is ready to use. CLP values are safe for concurrent use:
// every Solve builds its own CLP model.
type CLP struct {
	// Algorithm selects the simplex variant; the zero value is CLPAuto.
	Algorithm CLPAlgorithm
	// MaxIterations caps the simplex iterations of each slice of a solve;
	// reaching the cap yields ErrTimeLimit. Zero means no cap beyond CLP's
	// own default.
	MaxIterations int
}

const clpName = "clp"

// Solve implements Engine.
func (e CLP) Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if err := ctx.Err(); err != nil {
		err = ctxError(clpName, "not started", err)
		return failed(err, clpName), err
	}
	if err := precheck(p); err != nil {
		return failed(err, clpName), err
	}
	nr, nc := p.NumRows(), p.NumVars()
	if nc == 0 {
		// CLP has nothing to factorize; precheck already settled the rows.
		return noVars(p, clpName), nil
	}

	pm := buildColumns(p)
	colBounds := make([]clp.Bounds, nc)
	for j := range colBounds {
		colBounds[j] = clp.Bounds{Lower: p.colLower[j], Upper: p.colUpper[j]}
	}
	rowBounds := make([]clp.Bounds, nr)
	for i := range rowBounds {
		rowBounds[i] = clp.Bounds{Lower: p.rowLower[i], Upper: p.rowUpper[i]}
	}

	// A fresh model per solve: lanl/clp leaks when a model is reloaded. The
	// model and matrix carry finalizers that free the C++ objects, so both
	// must stay reachable until CLP is done with them.
	s := clp.NewSimplex()
	defer runtime.KeepAlive(s)
	defer runtime.KeepAlive(pm)
	obj, objScale := scaledObjective(p.obj)
	s.LoadProblem(pm, colBounds, obj, rowBounds, nil)
	s.SetScaling(clp.GeometricScaling)
	if p.Sense == Maximize {
		s.SetOptimizationDirection(clp.Maximize)
	} else {
		s.SetOptimizationDirection(clp.Minimize)
	}
	if e.MaxIterations > 0 {
		s.SetMaxIterations(e.MaxIterations)
	}

	start := time.Now()
	status := e.sliced(ctx, s)
	elapsed := time.Since(start)
	secondary := s.SecondaryStatus()

	if err := ctx.Err(); err != nil {
		err = ctxError(clpName, fmt.Sprintf("context done after %v (status %d, secondary %d)", elapsed, status, secondary), err)
		return failed(err, clpName), err
	}
	_, hasDeadline := ctx.Deadline()
	if status == 3 && hasDeadline && secondary == clp.SecondaryStoppedOnTime {
		// CLP measures its limit in process CPU time, which can run ahead
		// of the wall clock; the limit still came from the deadline.
		err := fmt.Errorf("lp: clp: stopped on the deadline's time limit after %v (secondary status %d): %w: %w",
			elapsed, secondary, ErrTimeLimit, context.DeadlineExceeded)
		return failed(err, clpName), err
	}

	var err error
	switch status {
	case 0:
		// Any secondary status still means optimal for the scaled problem.
		// Secondary status 2 (unscaled primal infeasible) shows up on large
		// max-min LPs with violations near 1e-7; finish clamps x into its
		// bounds, and row violations stay within CLP's tolerance.
		x := s.PrimalColumnSolution()
		// CLP reports row duals in the problem's own sense, which is what
		// Solution.Duals promises.
		duals := s.DualRowSolution()
		for i := range duals {
			duals[i] /= objScale
		}
		return finish(p, x, duals, clpName), nil
	case 1:
		err = fmt.Errorf("lp: clp (%v, secondary status %d): %w", e.Algorithm, secondary, ErrInfeasible)
	case 2:
		err = fmt.Errorf("lp: clp (%v, secondary status %d): %w", e.Algorithm, secondary, ErrUnbounded)
	case 3:
		err = fmt.Errorf("lp: clp stopped after %v (secondary status %d): %w", elapsed, secondary, ErrTimeLimit)
	default:
		err = fmt.Errorf("lp: clp status %d (secondary status %d): %w", status, secondary, ErrNumerical)
	}
	return failed(err, clpName), err
}

// clpSlice is the CPU time CLP runs before Solve looks at its context
// again: cancellation is noticed within about this long.
const clpSlice = 0.02

// sliced runs the simplex in slices of clpSlice seconds, each continuing
// from the basis the last one left, until it ends for a reason other than
// the slice's time limit, ctx is done, or ctx's deadline passes. CLP offers
// no way to interrupt a solve, and measures its time limit in process CPU
// time; a slice is the deadline's time limit when that comes first.
func (e CLP) sliced(ctx context.Context, s *clp.Simplex) clp.SimplexStatus {
	dl, hasDeadline := ctx.Deadline()
	for {
		limit := clpSlice
		if hasDeadline {
			limit = min(limit, max(time.Until(dl).Seconds(), 0))
		}
		s.SetMaxSeconds(limit)
		var status clp.SimplexStatus
		switch e.Algorithm {
		case CLPPrimal:
			status = s.Primal(clp.NoValuesPass, clp.NoStartFinishOptions)
		default:
			status = s.Dual(clp.NoValuesPass, clp.NoStartFinishOptions)
		}
		if status != 3 || s.SecondaryStatus() != clp.SecondaryStoppedOnTime || ctx.Err() != nil ||
			hasDeadline && !time.Now().Before(dl) {
			return status
		}
	}
}

// scaledObjective returns obj scaled by a power of two so that its largest
// coefficient is at most about 1e15, and the scale. CLP aborts the whole
// process on an objective coefficient of 1e25 or more (an assertion in
// createRim). Smaller objectives are left alone: scaling them down would push
// their small coefficients under CLP's absolute dual tolerance.
func scaledObjective(obj []float64) ([]float64, float64) {
	var big float64
	for _, c := range obj {
		big = max(big, math.Abs(c))
	}
	if big < 1e20 {
		return obj, 1
	}
	_, exp := math.Frexp(big)
	scale := math.Ldexp(1, 50-exp)
	scaled := make([]float64, len(obj))
	for i, c := range obj {
		scaled[i] = c * scale
	}
	return scaled, scale
}

// buildColumns converts the row-wise terms of p into CLP's column-major
// packed matrix, summing duplicate terms (AddRow keeps them, CoinPackedMatrix
// must not see them).
func buildColumns(p *Problem) *clp.PackedMatrix {
	nr, nc := p.NumRows(), p.NumVars()
	start := make([]int, nc+1)
	for _, t := range p.terms {
		start[t.Var+1]++
	}
	for j := range nc {
		start[j+1] += start[j]
	}
	end := make([]int, nc) // end[j] is one past column j's last entry so far
	copy(end, start)
	entries := make([]clp.Nonzero, len(p.terms))
	for i := range nr {
		_, _, terms := p.Row(i)
		for _, t := range terms {
			j := t.Var
			if k := end[j] - 1; k >= start[j] && entries[k].Index == i {
				// A duplicate within row i: entries of column j arrive in
				// row order, so it can only follow the previous one.
				entries[k].Value += t.Coef
				if entries[k].Value == 0 {
					end[j]--
				}
				continue
			}
			entries[end[j]] = clp.Nonzero{Index: i, Value: t.Coef}
			end[j]++
		}
	}

	pm := clp.NewPackedMatrix()
	// Without the reservation every append reallocates: O(nnz²) to build.
	pm.Reserve(nc, len(entries), false)
	for j := range nc {
		pm.AppendColumn(entries[start[j]:end[j]])
	}
	// Appending columns only sizes the matrix up to the last row that holds
	// a term; trailing empty rows must be declared.
	pm.SetDimensions(nr, nc)
	return pm
}
