package efficiency

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/throughput"
)

// The realistic parameters of the scheduler's tests (spec §e).
var (
	specPerf = throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}
	specGrad = Grad{Sqr: 0.00136, Var: 0.000502}
	specJob  = Goodput{Perf: specPerf, Grad: specGrad, BatchSize: 128}
	specLim  = Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256}
)

func approx(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestNoise(t *testing.T) {
	tests := []struct {
		g    Grad
		m0   float64
		want float64
	}{
		{Grad{Sqr: 1, Var: 2}, 128, 256},
		{Grad{Sqr: 0.00136, Var: 0.000502}, 128, 0.000502 / 0.00136 * 128},
		{Grad{Sqr: 2, Var: 0}, 64, 0},
		{Grad{Sqr: 0, Var: 1}, 128, math.Inf(1)},
		{Grad{}, 128, math.Inf(1)},
	}
	for _, tc := range tests {
		if got := tc.g.Noise(tc.m0); !(got == tc.want || approx(got, tc.want, 1e-12)) {
			t.Errorf("%+v.Noise(%v) = %v, want %v", tc.g, tc.m0, got, tc.want)
		}
	}
}

func TestEfficiencyHand(t *testing.T) {
	tests := []struct {
		name string
		grad Grad
		m    float64
		want float64
	}{
		{"at M0", specGrad, 128, 1},
		{"spec 512", specGrad, 512, 0.31336},
		{"no measurement", Grad{}, 4096, 1},
		{"GradParams(0,1)", Grad{Sqr: 0, Var: 1}, 1000, 1},
		{"GradParams(0,1) at M0", Grad{Sqr: 0, Var: 1}, 128, 1},
		{"no noise", Grad{Sqr: 1, Var: 0}, 512, 0.25},
		{"no noise 1280", Grad{Sqr: 3, Var: 0}, 1280, 0.1},
		{"φ = M0", Grad{Sqr: 1, Var: 1}, 384, 0.5}, // (128+128)/(128+384)
	}
	for _, tc := range tests {
		g := Goodput{Perf: specPerf, Grad: tc.grad, BatchSize: 128}
		if got := g.Efficiency(tc.m); !approx(got, tc.want, 1e-5) {
			t.Errorf("%s: Efficiency(%v) = %v, want %v", tc.name, tc.m, got, tc.want)
		}
		if got, want := g.Gain(tc.m), tc.want*tc.m/128; !approx(got, want, 1e-4) {
			t.Errorf("%s: Gain(%v) = %v, want %v", tc.name, tc.m, got, want)
		}
	}
}

// randomGoodput draws parameters like the library's tests, gamma(2, 2)
// (here as a sum of two exponentials of mean 2).
func randomGoodput(rng *rand.Rand) Goodput {
	gam := func() float64 { return 2 * (rng.ExpFloat64() + rng.ExpFloat64()) }
	return Goodput{
		Perf: throughput.Params{
			AlphaC: gam() * 1e-2, BetaC: gam() * 1e-3,
			AlphaN: gam() * 1e-2, BetaN: gam() * 1e-3,
			AlphaR: gam() * 1e-3, BetaR: gam() * 1e-4,
			Gamma: 1 + gam()/4,
		},
		Grad:      Grad{Sqr: gam() * 1e-3, Var: gam() * 1e-3},
		BatchSize: 1 + rng.IntN(512),
	}
}

func TestEfficiencyProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		g := randomGoodput(rng)
		m0 := float64(g.BatchSize)
		if e := g.Efficiency(m0); !approx(e, 1, 1e-12) {
			t.Fatalf("case %d %+v: Efficiency(M0) = %v", i, g, e)
		}
		prev := 1.0
		for m := m0; m <= 64*m0; m *= 1.3 {
			e := g.Efficiency(m)
			if !(e > 0 && e <= 1+1e-12) {
				t.Fatalf("case %d %+v: Efficiency(%v) = %v outside (0, 1]", i, g, m, e)
			}
			if e > prev+1e-12 {
				t.Fatalf("case %d %+v: Efficiency(%v) = %v > %v at a smaller batch", i, g, m, e, prev)
			}
			prev = e
		}
		nodes := 1 + rng.IntN(4)
		replicas := nodes * (1 + rng.IntN(8))
		local := 1 + rng.Float64()*256
		accum := rng.IntN(4)
		want := g.Perf.Throughput(nodes, replicas, local, accum) * g.Efficiency(float64(replicas)*local*float64(accum+1))
		if got := g.Evaluate(nodes, replicas, local, accum); !approx(got, want, 1e-9*want) {
			t.Fatalf("case %d: Evaluate = %v, want throughput × efficiency = %v", i, got, want)
		}
	}
}

// TestSpecHandValues pins the numbers worked out in the spec (§e).
func TestSpecHandValues(t *testing.T) {
	g := specJob
	if got := g.Perf.Throughput(2, 8, 64, 0); !approx(got, 975.60, 0.01) {
		t.Errorf("throughput(2, 8, 64, 0) = %v, want 975.60", got)
	}
	if got := g.Efficiency(512); !approx(got, 0.31336, 1e-5) {
		t.Errorf("efficiency(512) = %v, want 0.31336", got)
	}
	if got := g.Evaluate(2, 8, 64, 0); !approx(got, 305.717, 1e-3) {
		t.Errorf("Evaluate(2, 8, 64, 0) = %v, want 305.717", got)
	}
	if got := g.Evaluate(1, 1, 128, 0); !approx(got, 150.936, 1e-3) {
		t.Errorf("Evaluate(1, 1, 128, 0) = %v, want 150.936", got)
	}
	if got := NewSpeedup(g, specLim, 1, 1).At(2, 8); !approx(got, 2.025, 1e-3) {
		t.Errorf("SPEEDUP(2, 8) = %v, want 2.025", got)
	}
}

func TestOptimizeSpecCases(t *testing.T) {
	tests := []struct {
		name            string
		nodes, replicas int
		lim             Limits
		wantLocal       int
		wantAccum       int
		wantBatch       int
		wantGoodput     float64 // 0: only check it is positive
	}{
		{"spec (2,8)", 2, 8, specLim, 64, 0, 512, 305.717},
		{"spec (1,1)", 1, 1, specLim, 128, 0, 128, 150.936},
		{"optimize(1,3)", 1, 3, Limits{}, 43, 0, 129, 0},
		{"optimize(1,1,(64,256))", 1, 1, Limits{LocalMin: 64, LocalMax: 256}, 128, 0, 128, 0},
		{"optimize(4,4,1024,(128,128))", 4, 4, Limits{MaxBatch: 1024, LocalMin: 128, LocalMax: 128}, 128, 0, 512, 0},
	}
	for _, tc := range tests {
		c, ok := specJob.Optimize(tc.nodes, tc.replicas, tc.lim)
		if !ok || c.LocalBatch != tc.wantLocal || c.Accum != tc.wantAccum || c.Batch(tc.replicas) != tc.wantBatch || !(c.Goodput > 0) {
			t.Errorf("%s: Optimize = %+v, %v (batch %d), want m %d, s %d, batch %d, positive goodput",
				tc.name, c, ok, c.Batch(tc.replicas), tc.wantLocal, tc.wantAccum, tc.wantBatch)
		}
		if tc.wantGoodput != 0 && !approx(c.Goodput, tc.wantGoodput, 1e-3) {
			t.Errorf("%s: goodput %v, want %v", tc.name, c.Goodput, tc.wantGoodput)
		}
	}
}

// TestOptimizeAccumulation follows the library's test: with accumulation,
// at most 15 extra micro-steps, and a single replica accumulates unless it
// runs the batch M0.
func TestOptimizeAccumulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	jobs := []Goodput{specJob}
	for range 30 {
		g := randomGoodput(rng)
		g.BatchSize = 128
		jobs = append(jobs, g)
	}
	jobs = append(jobs, Goodput{Perf: specPerf, Grad: Grad{Sqr: 1e-9, Var: 1}, BatchSize: 128})
	lim := Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256, Accumulation: true}
	for i, g := range jobs {
		for _, p := range [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 8}, {4, 16}} {
			c, ok := g.Optimize(p[0], p[1], lim)
			if !ok {
				t.Errorf("job %d %v: refused", i, p)
				continue
			}
			if c.Accum > 15 {
				t.Errorf("job %d %v: %+v has more than 15 extra micro-steps", i, p, c)
			}
			if p[1] == 1 && c.Accum == 0 && c.Batch(1) != 128 {
				t.Errorf("job %d %v: %+v runs batch %d on one GPU without accumulating", i, p, c, c.Batch(1))
			}
		}
	}
	// The noisy job wants the largest batch: on one GPU it accumulates.
	noisy := jobs[len(jobs)-1]
	if c, _ := noisy.Optimize(1, 1, lim); c.Accum == 0 || c.Batch(1) < 1024 {
		t.Errorf("noisy job on one GPU: %+v (batch %d), want accumulation towards 1280", c, c.Batch(1))
	}
}

// checkConfig reports what is wrong with c as Optimize's answer.
func checkConfig(g Goodput, nodes, replicas int, l Limits, c Config) string {
	m0 := g.BatchSize
	maxBatch := max(l.MaxBatch, m0)
	lo := max(l.LocalMin, 1)
	hi := l.LocalMax
	if hi <= 0 {
		hi = maxBatch
	}
	steps := replicas * (c.Accum + 1)
	b := c.Batch(replicas)
	switch {
	case c.LocalBatch < lo || c.LocalBatch > hi:
		return "local batch outside [LocalMin, LocalMax]"
	case b < m0:
		return "batch below M0"
	case b > max(maxBatch, (m0+steps-1)/steps*steps):
		return "batch above MaxBatch"
	case c.Accum < 0 || (!l.Accumulation && c.Accum != 0):
		return "accumulation not allowed"
	case !approx(c.Goodput, g.Evaluate(nodes, replicas, float64(c.LocalBatch), c.Accum), 1e-9*c.Goodput):
		return "goodput is not Evaluate's"
	}
	return ""
}

func TestOptimizeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	refused := 0
	for i := range 3000 {
		g := randomGoodput(rng)
		nodes := 1 + rng.IntN(4)
		replicas := nodes * (1 + rng.IntN(16))
		l := Limits{Accumulation: rng.IntN(2) == 0}
		if rng.IntN(4) > 0 {
			l.MaxBatch = rng.IntN(8 * g.BatchSize)
		}
		if rng.IntN(3) > 0 {
			l.LocalMin = rng.IntN(128)
		}
		if rng.IntN(3) > 0 {
			l.LocalMax = l.LocalMin + rng.IntN(512)
		}
		if rng.IntN(8) == 0 { // a narrow local range, where clamping bites
			l.LocalMax = l.LocalMin + rng.IntN(4)
		}
		if rng.IntN(4) == 0 { // noise dominates: large batches win
			g.Grad.Sqr *= 1e-6
		}
		c, ok := g.Optimize(nodes, replicas, l)
		if !ok {
			refused++
			if c != (Config{}) {
				t.Errorf("case %d: refused with %+v", i, c)
			}
			continue
		}
		if msg := checkConfig(g, nodes, replicas, l, c); msg != "" {
			t.Errorf("case %d: Optimize(%d, %d, %+v) of M0 %d = %+v (batch %d): %s",
				i, nodes, replicas, l, g.BatchSize, c, c.Batch(replicas), msg)
		}
	}
	if refused == 0 || refused > 2000 {
		t.Errorf("%d of 3000 placements refused; the generator is off", refused)
	}
}

// TestOptimizeGuards pins the two pitfalls of the original and the
// accumulation case that clamping pushed above MaxBatch.
func TestOptimizeGuards(t *testing.T) {
	tests := []struct {
		name            string
		nodes, replicas int
		lim             Limits
		wantOK          bool
	}{
		// The paper's code returned 4096 here.
		{"LocalMin·K > MaxBatch", 4, 64, Limits{MaxBatch: 1280, LocalMin: 64}, false},
		{"LocalMin·K > MaxBatch with accumulation", 4, 64, Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256, Accumulation: true}, false},
		{"LocalMin·K = MaxBatch", 4, 20, Limits{MaxBatch: 1280, LocalMin: 64}, true},
		// The paper's code failed its efficiency assertion here.
		{"LocalMax < M0 on one GPU", 1, 1, Limits{MaxBatch: 1280, LocalMin: 16, LocalMax: 64}, false},
		{"LocalMax < M0 on one GPU, accumulating", 1, 1, Limits{MaxBatch: 1280, LocalMin: 16, LocalMax: 64, Accumulation: true}, true},
		{"LocalMax < LocalMin", 1, 2, Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 32}, false},
		// m clamped up to LocalMin on two micro-steps would give 256 > 200.
		{"accumulation clamped above MaxBatch", 1, 1, Limits{MaxBatch: 200, LocalMin: 128, LocalMax: 128, Accumulation: true}, true},
		{"accumulation clamped above MaxBatch, 2 GPUs", 1, 2, Limits{MaxBatch: 300, LocalMin: 100, LocalMax: 100, Accumulation: true}, true},
		{"invalid placement", 2, 1, specLim, false},
		{"empty placement", 0, 0, specLim, false},
	}
	// A noisy job prefers the largest batch it is offered.
	noisy := Goodput{Perf: specPerf, Grad: Grad{Sqr: 1e-9, Var: 1}, BatchSize: 128}
	for _, tc := range tests {
		for _, g := range []Goodput{specJob, noisy} {
			c, ok := g.Optimize(tc.nodes, tc.replicas, tc.lim)
			if ok != tc.wantOK {
				t.Errorf("%s, %+v: Optimize = %+v, %v (batch %d), want ok %v", tc.name, g.Grad, c, ok, c.Batch(tc.replicas), tc.wantOK)
				continue
			}
			if ok {
				if msg := checkConfig(g, tc.nodes, tc.replicas, tc.lim, c); msg != "" {
					t.Errorf("%s, %+v: %+v (batch %d): %s", tc.name, g.Grad, c, c.Batch(tc.replicas), msg)
				}
			}
		}
	}
	if _, ok := (Goodput{Perf: specPerf}).Optimize(1, 1, Limits{}); ok {
		t.Error("Optimize with M0 = 0 not refused")
	}
}

// TestOptimizeMonotoneInMaxBatch: allowing larger batches never hurts.
func TestOptimizeMonotoneInMaxBatch(t *testing.T) {
	jobs := map[string]Goodput{
		"spec":  specJob,
		"noisy": {Perf: specPerf, Grad: Grad{Sqr: 1e-6, Var: 1e-3}, BatchSize: 128},
		"quiet": {Perf: specPerf, Grad: Grad{Sqr: 1, Var: 0}, BatchSize: 128},
	}
	for name, g := range jobs {
		for _, p := range [][2]int{{1, 1}, {1, 4}, {2, 8}, {4, 16}} {
			for _, accum := range []bool{false, true} {
				prev := 0.0
				for mb := 128; mb <= 8192; mb *= 2 {
					c, ok := g.Optimize(p[0], p[1], Limits{MaxBatch: mb, LocalMax: 512, Accumulation: accum})
					if !ok {
						t.Fatalf("%s %v accum %v max %d: refused", name, p, accum, mb)
					}
					// With accumulation the optimum can fall between grid
					// points, which move with MaxBatch: allow 1 %.
					tol := 1e-12
					if accum {
						tol = 1e-2
					}
					if c.Goodput < prev*(1-tol) {
						t.Errorf("%s %v accum %v: goodput %v at MaxBatch %d < %v at half", name, p, accum, c.Goodput, mb, prev)
					}
					prev = c.Goodput
				}
			}
		}
	}
}

// TestOptimizeNoiseSteersBatch: without noise a larger batch only costs
// (goodput = M0/T_iter), so the smallest batch wins; with overwhelming noise
// every example counts and the largest allowed batch wins.
func TestOptimizeNoiseSteersBatch(t *testing.T) {
	quiet := Goodput{Perf: specPerf, Grad: Grad{Sqr: 1, Var: 0}, BatchSize: 128}
	noisy := Goodput{Perf: specPerf, Grad: Grad{Sqr: 1e-9, Var: 1}, BatchSize: 128}
	lim := Limits{MaxBatch: 2048, LocalMax: 512, Accumulation: true}
	for _, p := range [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 8}, {4, 16}} {
		k := p[1]
		cq, _ := quiet.Optimize(p[0], k, lim)
		cn, _ := noisy.Optimize(p[0], k, lim)
		cs, _ := specJob.Optimize(p[0], k, lim)
		if b, near := cq.Batch(k), (128+k-1)/k*k; b != near {
			t.Errorf("quiet job %v: batch %d, want the smallest, %d", p, b, near)
		}
		if b := cn.Batch(k); b < 1900 || b > 2048 {
			t.Errorf("noisy job %v: batch %d, want about MaxBatch 2048", p, b)
		}
		if !(cq.Batch(k) <= cs.Batch(k) && cs.Batch(k) <= cn.Batch(k)) {
			t.Errorf("%v: batches quiet %d, spec %d, noisy %d not ordered", p, cq.Batch(k), cs.Batch(k), cn.Batch(k))
		}
	}
}

func TestGeomspace(t *testing.T) {
	got := geomspace(1, 1000, 4)
	want := []float64{1, 10, 100, 1000}
	if !cmp.Equal(got, want, cmpopts.EquateApprox(1e-12, 0)) {
		t.Errorf("geomspace(1, 1000, 4) = %v, want %v", got, want)
	}
	if g := geomspace(128, 1280, 50); g[0] != 128 || g[49] != 1280 {
		t.Errorf("ends not exact: %v, %v", g[0], g[49])
	}
}

// Split uses the fewest micro-steps that fit localMax and rounds the
// per-GPU batch up.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		batch, replicas, localMax int
		m, s                      int
	}{
		{128, 1, 0, 128, 0},    // no limit: one step
		{128, 3, 0, 43, 0},     // 42.67 rounds up
		{2000, 4, 200, 167, 2}, // 500 per GPU: 3 micro-steps of 167
		{1024, 2, 256, 256, 1}, // exactly 2 micro-steps of 256
		{100, 8, 32, 13, 0},    // fits in one step
		{1, 4, 0, 1, 0},        // less than one example per GPU
	} {
		if m, s := Split(c.batch, c.replicas, c.localMax); m != c.m || s != c.s {
			t.Errorf("Split(%d, %d, %d) = %d, %d; want %d, %d", c.batch, c.replicas, c.localMax, m, s, c.m, c.s)
		}
	}
}
