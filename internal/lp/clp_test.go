//go:build clp && cgo

package lp

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// TestCLPLarge solves a max-min LP of the size dlsched meets on a large
// cluster with both CLP variants; CLP ends such solves with secondary status
// 2 at times (scaled optimal, unscaled slightly infeasible).
func TestCLPLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large LP")
	}
	p := maxMin(1024, 3)
	var objs []float64
	for _, e := range []CLP{{Algorithm: CLPDual}, {Algorithm: CLPPrimal}} {
		sol, err := e.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%v: %v", e.Algorithm, err)
		}
		checkOptimal(t, p, sol)
		objs = append(objs, sol.Objective)
	}
	if math.Abs(objs[0]-objs[1]) > 1e-7*math.Abs(objs[0]) {
		t.Errorf("dual objective %v, primal objective %v", objs[0], objs[1])
	}
}

func TestCLPDeadline(t *testing.T) {
	p := maxMin(2048, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	sol, err := CLP{}.Solve(ctx, p)
	if !errors.Is(err, ErrTimeLimit) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Solve with a 20ms deadline: error = %v, want ErrTimeLimit and context.DeadlineExceeded", err)
	}
	if sol == nil || sol.Status != Stopped {
		t.Errorf("Solve with a 20ms deadline: solution = %+v, want Status Stopped", sol)
	}
}

func TestCLPIterationLimit(t *testing.T) {
	_, err := CLP{MaxIterations: 5}.Solve(context.Background(), maxMin(256, 1))
	if !errors.Is(err, ErrTimeLimit) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Solve with 5 iterations: error = %v, want ErrTimeLimit only", err)
	}
}

// CLP aborts the process on objective coefficients of 1e25 or more unless
// the engine scales the objective first.
func TestCLPHugeObjective(t *testing.T) {
	for _, c := range []float64{1e25, 1e300} {
		var p Problem
		p.Sense = Maximize
		x := p.AddVar(0, 1, c)
		y := p.AddVar(0, 1, c/2)
		r := p.AddRow(-Inf, 1.5, Term{Var: x, Coef: 1}, Term{Var: y, Coef: 1})
		sol, err := CLP{}.Solve(context.Background(), &p)
		if err != nil {
			t.Fatalf("c=%g: %v", c, err)
		}
		if want := 1.25 * c; math.Abs(sol.Objective-want) > 1e-12*want {
			t.Errorf("c=%g: objective %g, want %g", c, sol.Objective, want)
		}
		if want := c / 2; math.Abs(sol.Duals[r]-want) > 1e-12*want {
			t.Errorf("c=%g: dual %g, want %g", c, sol.Duals[r], want)
		}
	}
}

// Cancellation ends a solve CLP cannot interrupt within a slice: well
// under issue 19's 100 ms, however large the LP.
func TestCLPCancel(t *testing.T) {
	p := maxMin(4096, 7)
	worst := time.Duration(0)
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		go func() {
			time.Sleep(50 * time.Millisecond)
			cancelled = time.Now()
			cancel()
		}()
		_, err := CLP{}.Solve(ctx, p)
		took := time.Since(cancelled)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Solve cancelled after 50 ms: %v, want context.Canceled", err)
		}
		worst = max(worst, took)
	}
	t.Logf("returned at most %v after cancellation", worst)
	if bound := 100 * time.Millisecond; worst > bound && !raceEnabled || worst > 10*bound {
		t.Errorf("returned %v after cancellation, want within 100 ms", worst)
	}
}
