//go:build clp && cgo

package lp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
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

// TestSparseMediumGeneral compares Sparse with CLP on general LPs of up to
// 450 variables and 330 rows, beyond the dense Simplex's guard, and fails
// unless both optima and unbounded problems occur.
func TestSparseMediumGeneral(t *testing.T) {
	if testing.Short() {
		t.Skip("medium LPs")
	}
	r := rand.New(rand.NewPCG(5, 6))
	seen := map[string]int{}
	for i := range 24 {
		n, m := 50+r.IntN(400), 30+r.IntN(300)
		p := mediumGeneral(r, n, m)
		_, err := Sparse{}.Solve(context.Background(), p)
		seen[outcomeOf(err)]++
		compareSparse(t, fmt.Sprintf("instance %d (%d vars, %d rows)", i, n, m), p)
	}
	if seen["optimal"] < 5 || seen["unbounded"] < 5 {
		t.Errorf("outcomes %v, want at least 5 optima and 5 unbounded", seen)
	}
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

// mediumGeneral returns an LP of n variables and m rows of 2 to 7 terms
// around a known point, every kind of row, and box rows on most variables:
// optimal or unbounded, at sizes beyond the dense Simplex's guard.
func mediumGeneral(r *rand.Rand, n, m int) *Problem {
	p := &Problem{Sense: Sense(r.IntN(2))}
	x0 := make([]float64, n)
	for j := range n {
		x0[j] = math.Round(r.NormFloat64()*300) / 100
		lo, hi := x0[j]-3*r.Float64(), x0[j]+3*r.Float64()
		switch r.IntN(6) {
		case 0:
			lo = -Inf
		case 1:
			hi = Inf
		}
		p.AddVar(lo, hi, math.Round(r.NormFloat64()*10)/10)
	}
	for range m {
		var terms []Term
		var act float64
		for range 2 + r.IntN(6) {
			j, c := r.IntN(n), math.Round(r.NormFloat64()*100)/10
			terms = append(terms, Term{j, c})
			act += c * x0[j]
		}
		switch r.IntN(4) {
		case 0:
			p.AddRow(-Inf, act+r.Float64(), terms...)
		case 1:
			p.AddRow(act-r.Float64(), Inf, terms...)
		case 2:
			p.AddRow(act, act, terms...)
		default:
			p.AddRow(act-r.Float64(), act+r.Float64(), terms...)
		}
	}
	for j := range n {
		if r.IntN(8) != 0 {
			p.AddRow(-50, 50, Term{j, 1})
		}
	}
	return p
}
