package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// precheck rejects data no engine can use (NaN, infinite coefficients) and
// settles infeasibility that is visible without solving: a variable or row
// whose bounds cross, and a row with no terms whose bounds exclude 0. Doing
// this once, before either engine runs, makes both engines report these cases
// identically.
func precheck(p *Problem) error {
	for j := range p.obj {
		l, u, c := p.Var(j)
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("%w: objective coefficient %v of variable %d", ErrNumerical, c, j)
		}
		if math.IsNaN(l) || math.IsNaN(u) {
			return fmt.Errorf("%w: NaN bound on variable %d", ErrNumerical, j)
		}
		if l > u || math.IsInf(l, 1) || math.IsInf(u, -1) {
			return fmt.Errorf("%w: variable %d has empty bounds [%v, %v]", ErrInfeasible, j, l, u)
		}
	}
	for i := range p.rowLower {
		l, u, terms := p.Row(i)
		if math.IsNaN(l) || math.IsNaN(u) {
			return fmt.Errorf("%w: NaN bound on row %d", ErrNumerical, i)
		}
		if l > u || math.IsInf(l, 1) || math.IsInf(u, -1) {
			return fmt.Errorf("%w: row %d has empty bounds [%v, %v]", ErrInfeasible, i, l, u)
		}
		if len(terms) == 0 && (l > 0 || u < 0) {
			return fmt.Errorf("%w: row %d has no terms and bounds [%v, %v] exclude 0", ErrInfeasible, i, l, u)
		}
		for _, t := range terms {
			if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
				return fmt.Errorf("%w: coefficient %v of variable %d in row %d", ErrNumerical, t.Coef, t.Var, i)
			}
		}
	}
	return nil
}

// failed returns the Solution that accompanies err when err names an outcome
// (infeasible, unbounded, stopped), and nil otherwise.
func failed(err error, engine string) *Solution {
	var s Status
	switch {
	case errors.Is(err, ErrInfeasible):
		s = Infeasible
	case errors.Is(err, ErrUnbounded):
		s = Unbounded
	case errors.Is(err, ErrTimeLimit):
		s = Stopped
	default:
		return nil
	}
	return &Solution{Status: s, Objective: math.NaN(), Engine: engine}
}

// finish clamps x into its bounds (engines satisfy bounds only within their
// tolerance, and callers such as allocation validators check them exactly)
// and computes the objective from the clamped x, so that Objective always
// agrees with X.
func finish(p *Problem, x, duals []float64, engine string) *Solution {
	var obj float64
	for j := range x {
		x[j] = min(max(x[j], p.colLower[j]), p.colUpper[j])
		obj += p.obj[j] * x[j]
	}
	return &Solution{Status: Optimal, Objective: obj, X: x, Duals: duals, Engine: engine}
}

// noVars solves a problem without variables: every row is empty, and precheck
// has already verified that each contains 0.
func noVars(p *Problem, engine string) *Solution {
	return &Solution{
		Status: Optimal,
		X:      []float64{},
		Duals:  make([]float64, p.NumRows()),
		Engine: engine,
	}
}

// ctxError reports a context that ended before a solve did. A passed deadline
// is also ErrTimeLimit, so that callers can treat it like a solver limit.
func ctxError(engine, when string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("lp: %s: %s: %w: %w", engine, when, ErrTimeLimit, err)
	}
	return fmt.Errorf("lp: %s: %s: %w", engine, when, err)
}

// begin makes the checks every engine makes before it solves: a context
// already done, a malformed problem, a problem without variables. When
// done, sol and err are the engine's answer.
func begin(ctx context.Context, p *Problem, engine string) (sol *Solution, done bool, err error) {
	if err := ctx.Err(); err != nil {
		err = ctxError(engine, "not started", err)
		return failed(err, engine), true, err
	}
	if err := precheck(p); err != nil {
		return failed(err, engine), true, err
	}
	if p.NumVars() == 0 {
		// Nothing to factorize; precheck already settled the rows.
		return noVars(p, engine), true, nil
	}
	return nil, false, nil
}
