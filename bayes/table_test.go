package bayes_test

import (
	"math"
	"testing"

	"github.com/dlsched/dlsched/bayes"
)

// Tiresias' simulator's table, by hand, for samples 10, 20, 30, 40 and
// Δ = 15 (entries at a = s_k − 1):
//   - a = 9: P = 2/4, E = (10 + 20 + 15·2)/4 = 15: round₄(33333.33…)/10⁶;
//   - a = 19: P = round₅(2/3) = 0.66667, E = round₅(65/3) = 21.66667:
//     round₄(666670/21.66667)/10⁶ = 0.0307693799 (as Python computes it);
//   - a = 29: a + Δ passes 39, so j = N − 1 = 3: P = 1/2, E = (30 + 15)/2:
//     0.0222222;
//   - a = 39: nothing finishes within the quantum: 0.
//
// A job is looked up at the first sample above its attained service, so a
// job at 10 gets the entry at 19, and one at or past 40 gets 0.
func TestSimulatorTable(t *testing.T) {
	s, err := bayes.NewService([]float64{40, 10, 30, 20})
	if err != nil {
		t.Fatal(err)
	}
	tab := s.SimulatorTable(15)
	for _, c := range []struct{ a, want float64 }{
		{0, round4(0.5e6/15) / 1e6}, {5, round4(0.5e6/15) / 1e6}, {9.5, round4(0.5e6/15) / 1e6},
		{10, 0.0307693799}, {19.9, 0.0307693799},
		{25, round4(0.5e6/22.5) / 1e6},
		{35, 0}, {40, 0}, {41, 0}, {math.NaN(), 0},
	} {
		if got := tab.At(c.a); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("At(%v) = %.10g, want %.10g", c.a, got, c.want)
		}
	}
	// The exact index at 10 differs: the table's grid point is 19.
	if exact := s.GittinsSimulator(10, 15); math.Abs(exact-tab.At(10)) < 1e-6 {
		t.Errorf("the formula at 10 (%v) equals the table's entry at 19 (%v)", exact, tab.At(10))
	}
	if got := (bayes.GittinsTable{}).At(1); got != 0 {
		t.Errorf("zero table: %v", got)
	}
	if got := s.SimulatorTable(0).At(1); got != 0 {
		t.Errorf("no quantum: %v", got)
	}
}

func round4(x float64) float64 { return math.RoundToEven(x*1e4) / 1e4 }
