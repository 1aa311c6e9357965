//go:build clp && cgo

package lp

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSparseAgainstCLPLarge compares Sparse with CLP on the allocation LPs
// at the sizes it is for: the max-min LP with t free and bounded, and its
// degenerate tie-break stage.
func TestSparseAgainstCLPLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large LPs")
	}
	for _, tc := range []struct {
		n     int
		bound bool
	}{{512, false}, {1024, true}, {2048, true}} {
		p := maxMin(tc.n, uint64(tc.n))
		if tc.bound {
			boundT(p)
		}
		compareSparse(t, fmt.Sprintf("maxMin n=%d bounded=%v", tc.n, tc.bound), p)
	}
	compareSparse(t, "tie-break n=512", tieBreak(t, 512, 3))
}

// Where the optimum is unique and not degenerate, Sparse reports CLP's
// basis and duals: the same statuses, rows' AtLower and AtUpper saying
// which bound the activity sits at, and duals in the problem's sense.
func TestSparseBasisMatchesCLP(t *testing.T) {
	names := map[string]bool{
		"max two rows": true, "min with >= rows": true, "upper-bounded variable": true,
		"ranged row binding above": true, "ranged row binding below": true, "free variable max-min": true,
	}
	n := 0
	for _, tc := range handCases() {
		if !names[tc.name] {
			continue
		}
		n++
		p := tc.p()
		want, err := CLP{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: clp: %v", tc.name, err)
		}
		got, err := Sparse{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: sparse: %v", tc.name, err)
		}
		if diff := cmp.Diff(want.Basis, got.Basis); diff != "" {
			t.Errorf("%s: basis (-clp +sparse):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(want.Duals, got.Duals, approx...); diff != "" {
			t.Errorf("%s: duals (-clp +sparse):\n%s", tc.name, diff)
		}
	}
	if n != len(names) {
		t.Errorf("found %d of the %d cases", n, len(names))
	}
}

// Bases pass between the engines: CLP's optimal basis is optimal for
// Sparse (it needs no iteration), and CLP started from Sparse's reaches
// the same optimum.
func TestSparseWarmFromCLP(t *testing.T) {
	for _, n := range []int{64, 256} {
		p := maxMin(n, 5)
		boundT(p)
		ref, err := CLP{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		p.Start(ref.Basis)
		got, err := Sparse{MaxIterations: 1}.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("n=%d: sparse from CLP's basis: %v", n, err)
		}
		checkOptimal(t, p, got)
		if !sameObjective(got.Objective, ref.Objective) {
			t.Errorf("n=%d: sparse from CLP's basis: objective %v, clp %v", n, got.Objective, ref.Objective)
		}
		p.Start(got.Basis)
		back, err := CLP{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("n=%d: clp from sparse's basis: %v", n, err)
		}
		if !sameObjective(back.Objective, ref.Objective) {
			t.Errorf("n=%d: clp from sparse's basis: objective %v, want %v", n, back.Objective, ref.Objective)
		}
	}
}
