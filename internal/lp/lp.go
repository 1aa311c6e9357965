// Package lp is the linear-programming engine behind dlsched's allocation
// policies: a small problem description and interchangeable engines.
//
// A Problem is
//
//	optimize   cᵀx
//	subject to rowLower ≤ A x ≤ rowUpper
//	           colLower ≤ x ≤ colUpper
//
// with A sparse and bounds possibly infinite. All engines return the same
// Solution for the same Problem up to solver tolerance; where the optimum is not
// unique they may return different optimal vertices, which is why callers pin
// ties themselves.
//
// # Builds
//
// The default build has two engines in pure Go, so that the module builds
// anywhere (go get, go build, CGO_ENABLED=0) without a C library. The
// default, Sparse, is a sparse bounded dual simplex (sparse.go): it solves
// the max-min allocation LP of 2048 jobs over three accelerator types (6145
// variables, 4099 rows) in about half a second, twice CLP's time
// (BenchmarkMaxMin), and of 4096 jobs in about 2 s; it refuses problems of
// more than DefaultSparseMaxRows rows (32,768, about 16,000 jobs) with
// ErrTooLarge. Like CLP it takes and reports a starting basis (Basis).
// Simplex, the older dense simplex on gonum, stays for comparison and
// for Named("simplex"): it refuses problems of more than
// DefaultSimplexMaxRows standard-form rows (400, about 200 jobs) or
// DefaultSimplexMaxCols columns (1,200, which pair variables reach first),
// and the max-min LP of 128 jobs already takes over a second.
//
// The build tag clp adds CLP, COIN-OR's sparse simplex through cgo and its
// C interface, and makes it the Default: go build -tags clp, with cgo on
// and the CLP library where pkg-config finds it (Debian: coinor-libclp-dev
// and pkg-config). CLP handles thousands of jobs in well under a second,
// and takes and reports a starting basis (Basis) for warm starts. The
// tag without cgo is a compile-time error, whose message names the cause
// (clp_build_tag_needs_cgo__set_CGO_ENABLED_1_or_drop_tags_clp), rather than a
// build that silently lacks the engine it asked for.
package lp

import (
	"context"
	"errors"
	"math"
	"strconv"
)

// Inf is an infinite bound.
var Inf = math.Inf(1)

// Sentinel errors. Engines wrap them with detail; test with errors.Is.
var (
	// ErrInfeasible means no x satisfies the constraints.
	ErrInfeasible = errors.New("lp: infeasible")
	// ErrUnbounded means the objective can be improved without limit.
	ErrUnbounded = errors.New("lp: unbounded")
	// ErrTimeLimit means the engine stopped at the context deadline or an
	// iteration limit before proving optimality. When the deadline was the
	// cause, the error also wraps context.DeadlineExceeded.
	ErrTimeLimit = errors.New("lp: time or iteration limit reached")
	// ErrTooLarge means the problem exceeds the engine's size guard.
	ErrTooLarge = errors.New("lp: problem too large for this engine")
	// ErrNumerical means the engine failed for numerical reasons.
	ErrNumerical = errors.New("lp: numerical failure")
)

// Sense is the direction of optimization. The zero value minimizes.
type Sense int

const (
	Minimize Sense = iota
	Maximize
)

// Term is one nonzero coefficient of a row: Coef·x[Var].
type Term struct {
	Var  int
	Coef float64
}

// Problem is a linear program built incrementally. The zero value is an empty
// minimization. Variables and rows are numbered in the order they are added.
type Problem struct {
	Sense Sense

	obj      []float64
	colLower []float64
	colUpper []float64

	rowLower []float64
	rowUpper []float64
	rowStart []int // rowStart[i] is the index in terms of row i's first term
	terms    []Term

	start *Basis // see Start
}

// AddVar adds a variable with bounds [lower, upper] and objective coefficient
// obj, and returns its index. lower may be -Inf and upper +Inf.
func (p *Problem) AddVar(lower, upper, obj float64) int {
	p.obj = append(p.obj, obj)
	p.colLower = append(p.colLower, lower)
	p.colUpper = append(p.colUpper, upper)
	return len(p.obj) - 1
}

// AddRow adds the constraint lower ≤ Σ terms ≤ upper and returns its index.
// It panics if a term names a variable that does not exist: that is a
// programming error. Terms with a zero coefficient are dropped.
func (p *Problem) AddRow(lower, upper float64, terms ...Term) int {
	if len(p.rowStart) == 0 {
		p.rowStart = append(p.rowStart, 0)
	}
	for _, t := range terms {
		if t.Var < 0 || t.Var >= len(p.obj) {
			panic("lp: row term names an unknown variable")
		}
		if t.Coef != 0 {
			p.terms = append(p.terms, t)
		}
	}
	p.rowLower = append(p.rowLower, lower)
	p.rowUpper = append(p.rowUpper, upper)
	p.rowStart = append(p.rowStart, len(p.terms))
	return len(p.rowLower) - 1
}

// Grow reserves room for vars more variables, rows more rows and terms more
// nonzeros, so that building a large problem does not reallocate.
func (p *Problem) Grow(vars, rows, terms int) {
	p.obj = grow(p.obj, vars)
	p.colLower = grow(p.colLower, vars)
	p.colUpper = grow(p.colUpper, vars)
	p.rowLower = grow(p.rowLower, rows)
	p.rowUpper = grow(p.rowUpper, rows)
	if len(p.rowStart) == 0 {
		p.rowStart = append(make([]int, 0, rows+1), 0)
	} else {
		p.rowStart = grow(p.rowStart, rows)
	}
	p.terms = grow(p.terms, terms)
}

func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	out := make([]T, len(s), len(s)+n)
	copy(out, s)
	return out
}

// SetObjective sets the objective coefficient of variable v.
func (p *Problem) SetObjective(v int, c float64) { p.obj[v] = c }

// SetBounds sets the bounds of variable v.
func (p *Problem) SetBounds(v int, lower, upper float64) {
	p.colLower[v], p.colUpper[v] = lower, upper
}

// SetRowBounds sets the bounds of row r.
func (p *Problem) SetRowBounds(r int, lower, upper float64) {
	p.rowLower[r], p.rowUpper[r] = lower, upper
}

// NumVars returns the number of variables.
func (p *Problem) NumVars() int { return len(p.obj) }

// NumRows returns the number of rows.
func (p *Problem) NumRows() int { return len(p.rowLower) }

// Var returns the bounds and objective coefficient of variable v.
func (p *Problem) Var(v int) (lower, upper, obj float64) {
	return p.colLower[v], p.colUpper[v], p.obj[v]
}

// Row returns the bounds and the terms of row r. The terms slice aliases the
// problem's storage and must not be modified.
func (p *Problem) Row(r int) (lower, upper float64, terms []Term) {
	return p.rowLower[r], p.rowUpper[r], p.terms[p.rowStart[r]:p.rowStart[r+1]]
}

// Status describes how a solve ended.
type Status int

const (
	// Optimal means x is optimal within the engine's tolerances.
	Optimal Status = iota
	// Infeasible accompanies ErrInfeasible.
	Infeasible
	// Unbounded accompanies ErrUnbounded.
	Unbounded
	// Stopped accompanies ErrTimeLimit.
	Stopped
)

func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	case Stopped:
		return "stopped"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Solution is the result of a solve.
type Solution struct {
	Status    Status
	Objective float64
	// X holds the primal values, one per variable.
	X []float64
	// Duals holds one dual value per row: the rate of change of the optimal
	// objective per unit increase of the row's binding bound, in the problem's
	// own sense (non-negative for a binding upper bound when maximizing).
	Duals []float64
	// Engine names the engine that produced the solution.
	Engine string
	// Basis is the optimal basis, from engines that report one (CLP,
	// Sparse), for warm-starting a later solve (Problem.Start); nil
	// otherwise.
	Basis *Basis
}

// Engine solves linear programs. Implementations must be safe for concurrent
// use by multiple goroutines, must not retain p, and must return an error
// wrapping ctx.Err() when the context is done before the solve finishes.
//
// Solve returns an optimal Solution and a nil error, or an error. When the
// error wraps ErrInfeasible, ErrUnbounded or ErrTimeLimit, Solve also
// returns a Solution that holds only the matching Status, a NaN Objective
// and the Engine name; after any other error the Solution is nil.
type Engine interface {
	Solve(ctx context.Context, p *Problem) (*Solution, error)
}

// Default returns the engine used when a caller names none: CLP when the
// package is built with the clp tag (and cgo), Sparse otherwise.
func Default() Engine { return defaultEngine() }

// Named returns the engine with the given name: "auto" (Default), "clp",
// "purego" (the pure-Go default, Sparse), "sparse" or "simplex" (the dense
// engine); false when the name is unknown or the engine is not compiled
// into this build.
func Named(name string) (Engine, bool) {
	switch name {
	case "auto":
		return Default(), true
	case "clp":
		e := clpEngine()
		return e, e != nil
	case "purego", "sparse":
		return Sparse{}, true
	case "simplex":
		return Simplex{}, true
	}
	return nil, false
}
