package bayes

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPriorObserveHand(t *testing.T) {
	// E = 23, K = 3: α = 23/3 each; one epoch seen in regime 0 adds 1 to it.
	got := Prior(23, 3).Observe([]int{1, 0, 0})
	want := []float64{26.0 / 3, 23.0 / 3, 23.0 / 3}
	if diff := cmp.Diff(want, got.Alpha, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("alpha (-want +got):\n%s", diff)
	}
	// Σα = 24: mean = (26/72, 23/72, 23/72).
	mean := got.Mean()
	if diff := cmp.Diff([]float64{26.0 / 72, 23.0 / 72, 23.0 / 72}, mean, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
		t.Errorf("mean (-want +got):\n%s", diff)
	}
	if s := mean[0] + mean[1] + mean[2]; math.Abs(s-1) > 1e-15 {
		t.Errorf("mean sums to %v", s)
	}
}

func TestPriorEmpty(t *testing.T) {
	if d := Prior(10, 0); len(d.Alpha) != 0 {
		t.Errorf("Prior(10, 0) = %v, want empty", d)
	}
}

func TestObserveDoesNotModify(t *testing.T) {
	d := Prior(6, 2)
	_ = d.Observe([]int{3, 1})
	if d.Alpha[0] != 3 || d.Alpha[1] != 3 {
		t.Errorf("receiver changed: %v", d.Alpha)
	}
}

func TestObservePanicsOnLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	Prior(6, 2).Observe([]int{1})
}

func TestMeanEdges(t *testing.T) {
	for _, tc := range []struct {
		alpha, want []float64
	}{
		{[]float64{0, 0}, []float64{0.5, 0.5}},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, []float64{0.5, 0.5}}, // Σα overflows
		{[]float64{math.Inf(1), 1, math.Inf(1)}, []float64{0.5, 0, 0.5}},
		{[]float64{math.NaN(), 1, 3}, []float64{0, 0.25, 0.75}},
	} {
		if diff := cmp.Diff(tc.want, Dirichlet{tc.alpha}.Mean()); diff != "" {
			t.Errorf("Mean(%v) (-want +got):\n%s", tc.alpha, diff)
		}
	}
}

func onSimplex(t *testing.T, x []float64) {
	t.Helper()
	s := 0.0
	for _, v := range x {
		if math.IsNaN(v) || v < 0 || v > 1 {
			t.Fatalf("draw %v: component %v off the simplex", x, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-12 {
		t.Fatalf("draw %v sums to %v", x, s)
	}
}

func TestSampleDeterministic(t *testing.T) {
	d := Dirichlet{[]float64{0.3, 2, 7.5}}
	a := d.Sample(rand.New(rand.NewPCG(1, 2)))
	b := d.Sample(rand.New(rand.NewPCG(1, 2)))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different draws:\n%s", diff)
	}
	c := d.Sample(rand.New(rand.NewPCG(3, 4)))
	if cmp.Equal(a, c) {
		t.Errorf("different seeds gave the same draw %v", a)
	}
}

func sampleMean(t *testing.T, d Dirichlet, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	m := make([]float64, len(d.Alpha))
	for range n {
		x := d.Sample(r)
		onSimplex(t, x)
		for b, v := range x {
			m[b] += v / float64(n)
		}
	}
	return m
}

func TestSampleMean(t *testing.T) {
	// α = (4, 6, 10): the sd of x_0 is √(4·16/(20²·21)) ≈ 0.087, so over
	// 20000 draws its mean has an sd of 6e-4, a third of 1 % of 0.2.
	d := Dirichlet{[]float64{4, 6, 10}}
	got := sampleMean(t, d, 20000, 7)
	if diff := cmp.Diff(d.Mean(), got, cmpopts.EquateApprox(0.01, 0)); diff != "" {
		t.Errorf("sample mean (-want +got):\n%s", diff)
	}
}

func TestSampleMeanSmallAlpha(t *testing.T) {
	// α < 1 takes the boosted path; the draws are spikier, so compare with a
	// looser 5 % (the sd of the mean of x_0 is about 1.5 % of 0.05).
	d := Dirichlet{[]float64{0.5, 3, 6.5}}
	got := sampleMean(t, d, 20000, 8)
	if diff := cmp.Diff(d.Mean(), got, cmpopts.EquateApprox(0.05, 0)); diff != "" {
		t.Errorf("sample mean (-want +got):\n%s", diff)
	}
}

func TestSampleTinyAlpha(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, alpha := range [][]float64{
		{1e-300, 1e-300, 1e-300},
		{1e-320, 1e-300, 1e-320},
		{1e-320, 1e-320},
		{5e-324},
		{0, 0, 0},
		{math.NaN(), -1, 0},
		{math.MaxFloat64, math.MaxFloat64},
		{math.Inf(1), 1},
	} {
		for range 200 {
			onSimplex(t, Dirichlet{alpha}.Sample(r))
		}
	}
	// With α = 1e-300 the Dirichlet sits on a vertex: each draw is a unit
	// vector (the log-gammas differ by ~1e300), and every regime is hit.
	hit := make([]int, 3)
	for range 300 {
		x := Dirichlet{[]float64{1e-300, 1e-300, 1e-300}}.Sample(r)
		for b, v := range x {
			if v == 1 {
				hit[b]++
			}
		}
	}
	if hit[0]+hit[1]+hit[2] != 300 || hit[0] == 0 || hit[1] == 0 || hit[2] == 0 {
		t.Errorf("vertex hits %v, want 300 unit vectors spread over all regimes", hit)
	}
}

func TestSampleFallback(t *testing.T) {
	// Every log-gamma of a subnormal α is −∞ (log U/α overflows unless U = 1),
	// so the mass goes to the largest α, lowest index among ties.
	r := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		alpha []float64
		want  int
	}{
		{[]float64{1e-320, 2e-320, 2e-320}, 1},
		{[]float64{0, 0, 0}, 0},
		{[]float64{math.NaN(), 0, -1}, 1},
		{[]float64{1, math.Inf(1), math.Inf(1)}, 1},
	} {
		x := Dirichlet{tc.alpha}.Sample(r)
		if x[tc.want] != 1 {
			t.Errorf("Sample(%v) = %v, want all mass on %d", tc.alpha, x, tc.want)
		}
	}
	if x := (Dirichlet{}).Sample(r); len(x) != 0 {
		t.Errorf("empty Sample = %v", x)
	}
}
