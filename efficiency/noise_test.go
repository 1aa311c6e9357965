package efficiency

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// gaussianJob draws micro-batch gradients g = G + ε, ε ~ N(0, Σ/m), for a
// per-example covariance Σ = diag(sigma2).
type gaussianJob struct {
	rng    *rand.Rand
	g      []float64 // the true gradient G
	sigma2 []float64 // per-example variances, the diagonal of Σ
}

func newGaussianJob(seed uint64, dim int, gSqr, traceSigma float64) *gaussianJob {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	j := &gaussianJob{rng: rng, g: make([]float64, dim), sigma2: make([]float64, dim)}
	var gs, ss float64
	for i := range dim {
		j.g[i] = rng.NormFloat64()
		j.sigma2[i] = 0.5 + rng.Float64() // unequal variances
		gs += j.g[i] * j.g[i]
		ss += j.sigma2[i]
	}
	for i := range dim {
		j.g[i] *= math.Sqrt(gSqr / gs)
		j.sigma2[i] *= traceSigma / ss
	}
	return j
}

func (j *gaussianJob) draw(out []float64, m int) {
	for i := range out {
		out[i] = j.g[i] + j.rng.NormFloat64()*math.Sqrt(j.sigma2[i]/float64(m))
	}
}

func newGrads(n, dim int) [][]float64 {
	gs := make([][]float64, n)
	for i := range gs {
		gs[i] = make([]float64, dim)
	}
	return gs
}

// TestEstimatorGaussian recovers |G|² within 5 % and tr Σ/M0 within 25 %
// (the spec's bounds) from synthetic Gaussian gradients, on the unbiased
// multi-gradient path and on the differenced single-gradient path.
func TestEstimatorGaussian(t *testing.T) {
	const (
		dim    = 100
		m0     = 128
		gSqr   = 1.0
		trace  = 128.0 // tr Σ per example, so tr Σ/M0 = 1
		steps  = 4000
		wantVr = trace / m0
	)
	tests := []struct {
		name     string
		replicas int // K
		micro    int // micro-steps per optimizer step (accumulation + 1)
		local    int // examples per micro-batch, m
		biased   bool
	}{
		{"4 replicas", 4, 1, 64, false},
		{"2 replicas x 3 micro-steps", 2, 3, 32, false},
		{"16 replicas", 16, 1, 8, false},
		{"single gradient, batch M0", 1, 1, m0, true},
		{"single gradient, batch 2·M0", 1, 1, 2 * m0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				job := newGaussianJob(seed, dim, gSqr, trace)
				count := tc.replicas * tc.micro
				scale := float64(count*tc.local) / m0
				grads := newGrads(count, dim)
				var e Estimator
				for range steps {
					for _, g := range grads {
						job.draw(g, tc.local)
					}
					e.ObserveGradients(grads, scale)
				}
				got := e.Grad()
				if e.Biased() != tc.biased {
					t.Errorf("seed %d: Biased() = %v, want %v", seed, e.Biased(), tc.biased)
				}
				if rel := math.Abs(got.Sqr-gSqr) / gSqr; rel > 0.05 {
					t.Errorf("seed %d: Sqr = %.4f, want %.4f ± 5%% (off %.1f%%)", seed, got.Sqr, gSqr, 100*rel)
				}
				if rel := math.Abs(got.Var-wantVr) / wantVr; rel > 0.25 {
					t.Errorf("seed %d: Var = %.4f, want %.4f ± 25%% (off %.1f%%)", seed, got.Var, wantVr, 100*rel)
				}
				t.Logf("seed %d: %+v", seed, got)
			}
		})
	}
}

func TestEstimatorZeroValue(t *testing.T) {
	var e Estimator
	if got := e.Grad(); got != (Grad{}) {
		t.Errorf("zero Estimator: Grad() = %+v, want Grad{}", got)
	}
	if e.Biased() {
		t.Error("zero Estimator is biased")
	}
	// Steps that cannot estimate anything leave it unmeasured.
	e.Observe(2, 1, 1, 1)                         // one gradient
	e.Observe(2, 1, 4, 0)                         // no scale
	e.ObserveGradients(nil, 1)                    // no gradient
	e.ObserveGradients([][]float64{{1, 2, 3}}, 1) // first single gradient
	if got := e.Grad(); got != (Grad{}) {
		t.Errorf("after steps without an estimate: Grad() = %+v, want Grad{}", got)
	}
	if g := (Goodput{BatchSize: 128, Grad: e.Grad()}); g.Efficiency(1024) != 1 {
		t.Errorf("efficiency of an unmeasured job = %v, want 1", g.Efficiency(1024))
	}
}

// TestEstimatorUpdate pins the estimates and the bias-corrected moving
// average by hand.
func TestEstimatorUpdate(t *testing.T) {
	var e Estimator
	// count 4, local 3, total 2, scale 2:
	// sqr = (4·2 − 3)/3 = 5/3, var = (3 − 2)·2/3 = 2/3.
	e.Observe(3, 2, 4, 2)
	want := Grad{Sqr: 5.0 / 3, Var: 2.0 / 3}
	if got := e.Grad(); !cmp.Equal(got, want, cmpopts.EquateApprox(0, 1e-12)) {
		t.Errorf("one step: Grad() = %+v, want %+v", got, want)
	}
	// count 2, local 5, total 4, scale 1: sqr = 3, var = 1.
	e.Observe(5, 4, 2, 1)
	th1, th2 := math.Pow(0.999, 2), 0.999
	unb := th2*(1-th1) + (1 - th2)
	want = Grad{
		Sqr: (th2*(1-th1)*5.0/3 + (1-th2)*3) / unb,
		Var: (th2*(1-th1)*2.0/3 + (1-th2)*1) / unb,
	}
	if got := e.Grad(); !cmp.Equal(got, want, cmpopts.EquateApprox(0, 1e-12)) {
		t.Errorf("two steps: Grad() = %+v, want %+v", got, want)
	}

	// The floors: a negative |G|² reads 0, a zero variance 1e-6.
	tests := []struct {
		name string
		e    *Estimator
		want Grad
	}{
		{"var floor", func() *Estimator { var e Estimator; e.Observe(1, 1, 2, 1); return &e }(), Grad{Sqr: 1, Var: 1e-6}},
		{"sqr floor", func() *Estimator { var e Estimator; e.Observe(1, 0.25, 2, 1); return &e }(), Grad{Sqr: 0, Var: 0.75}},
	}
	for _, tc := range tests {
		if got := tc.e.Grad(); !cmp.Equal(got, tc.want, cmpopts.EquateApprox(0, 1e-12)) {
			t.Errorf("%s: Grad() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestEstimatorVectorsMatchNorms checks that ObserveGradients computes the
// squared norms Observe and ObserveDifferenced expect.
func TestEstimatorVectorsMatchNorms(t *testing.T) {
	a, b, c := []float64{1, 2, 3}, []float64{-1, 0, 2}, []float64{0.5, 4, -3}
	norm := func(v ...[]float64) float64 { // ‖mean of v‖²
		s := 0.0
		for i := range v[0] {
			x := 0.0
			for _, w := range v {
				x += w[i]
			}
			x /= float64(len(v))
			s += x * x
		}
		return s
	}
	var vec, sc Estimator
	vec.ObserveGradients([][]float64{a, b, c}, 1.5)
	sc.Observe((norm(a)+norm(b)+norm(c))/3, norm(a, b, c), 3, 1.5)
	if !cmp.Equal(vec.Grad(), sc.Grad(), cmpopts.EquateApprox(0, 1e-12)) {
		t.Errorf("multi: vectors give %+v, norms %+v", vec.Grad(), sc.Grad())
	}

	var vs, ss Estimator
	prev := []float64{1, 2, 3}
	vs.ObserveGradients([][]float64{prev}, 1)
	prev[0] = 100 // the estimator must have kept a copy
	vs.ObserveGradients([][]float64{b}, 1)
	ss.ObserveDifferenced(norm(a), norm(b), norm(a, b), 1)
	if !cmp.Equal(vs.Grad(), ss.Grad(), cmpopts.EquateApprox(0, 1e-12)) {
		t.Errorf("single: vectors give %+v, norms %+v", vs.Grad(), ss.Grad())
	}
	if !vs.Biased() || !ss.Biased() {
		t.Error("the single-gradient path is not flagged biased")
	}
}

// TestEstimatorSwitchPaths pins the spec's semantics: returning from the
// differenced (biased) path to the unbiased path restarts the averages;
// going the other way keeps them.
func TestEstimatorSwitchPaths(t *testing.T) {
	a, b, c := []float64{1, 2}, []float64{3, 1}, []float64{2, 2}
	var e Estimator
	e.ObserveGradients([][]float64{a}, 1)
	e.ObserveGradients([][]float64{b}, 1)
	if !e.Biased() || e.Grad() == (Grad{}) {
		t.Fatalf("after two single gradients: biased %v, Grad %+v", e.Biased(), e.Grad())
	}
	e.ObserveGradients([][]float64{a, c}, 2)
	var fresh Estimator
	fresh.ObserveGradients([][]float64{a, c}, 2)
	if e.Biased() || !cmp.Equal(e.Grad(), fresh.Grad()) {
		t.Errorf("back on the unbiased path: biased %v, Grad %+v, want a restart %+v", e.Biased(), e.Grad(), fresh.Grad())
	}

	// Unbiased → biased keeps the averages and drops the kept gradient: the
	// first single gradient afterwards only flags the switch.
	before := e.Grad()
	e.ObserveGradients([][]float64{b}, 1)
	if !e.Biased() || e.Grad() != before {
		t.Errorf("first single gradient after multi: biased %v, Grad %+v, want %+v", e.Biased(), e.Grad(), before)
	}
	e.ObserveGradients([][]float64{c}, 1)
	var diff Estimator
	diff.ObserveGradients([][]float64{b}, 1)
	diff.ObserveGradients([][]float64{c}, 1)
	if g := e.Grad(); g == before || cmp.Equal(g, diff.Grad()) {
		t.Errorf("differenced step after multi: Grad %+v, want a mix of %+v and %+v", g, before, diff.Grad())
	}

	// The scalar API switches the same way.
	var s Estimator
	s.ObserveDifferenced(5, 5, 4, 1)
	s.Observe(3, 2, 4, 2)
	var sf Estimator
	sf.Observe(3, 2, 4, 2)
	if !cmp.Equal(s.Grad(), sf.Grad()) {
		t.Errorf("scalar switch: Grad %+v, want a restart %+v", s.Grad(), sf.Grad())
	}
}

func TestEstimatorSkipsNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	var e Estimator
	e.Observe(3, 2, 4, 2)
	want := e.Grad()
	steps := []struct {
		name string
		f    func()
	}{
		{"Observe NaN local", func() { e.Observe(nan, 2, 4, 2) }},
		{"Observe Inf total", func() { e.Observe(3, inf, 4, 2) }},
		{"Observe NaN scale", func() { e.Observe(3, 2, 4, nan) }},
		{"ObserveDifferenced NaN", func() { e.ObserveDifferenced(1, nan, 1, 1) }},
		{"ObserveGradients NaN", func() { e.ObserveGradients([][]float64{{1, nan}, {1, 2}}, 1) }},
		{"ObserveGradients -Inf", func() { e.ObserveGradients([][]float64{{math.Inf(-1), 1}}, 1) }},
	}
	for _, st := range steps {
		st.f()
		if got := e.Grad(); got != want || e.Biased() {
			t.Errorf("%s: Grad %+v biased %v, want %+v unbiased", st.name, got, e.Biased(), want)
		}
	}
	// A skipped single gradient is not kept for differencing either.
	var d Estimator
	d.ObserveGradients([][]float64{{1, nan}}, 1)
	d.ObserveGradients([][]float64{{1, 2}}, 1)
	if got := d.Grad(); got != (Grad{}) {
		t.Errorf("differenced against a skipped gradient: Grad %+v", got)
	}
}

func TestEstimatorReset(t *testing.T) {
	var e Estimator
	e.ObserveGradients([][]float64{{1, 2}}, 1)
	e.ObserveGradients([][]float64{{2, 2}}, 1)
	e.Reset()
	if e.Grad() != (Grad{}) || e.Biased() {
		t.Errorf("after Reset: Grad %+v biased %v", e.Grad(), e.Biased())
	}
	e.ObserveGradients([][]float64{{1, 2}}, 1) // nothing kept to difference with
	if e.Grad() != (Grad{}) {
		t.Errorf("after Reset and one gradient: Grad %+v", e.Grad())
	}
}

func TestEstimatorPanicsOnRaggedGradients(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for gradients of different lengths")
		}
	}()
	var e Estimator
	e.ObserveGradients([][]float64{{1, 2}, {1}}, 1)
}
