package throughput

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// paperParams are the parameters of the paper's fit_test.py; realParams
// those of its scheduler tests (a realistic job).
var (
	paperParams = Params{0.1, 0.01, 0.5, 1.0, 1e-6, 1e-6, 1.2}
	realParams  = Params{0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14}
)

// placement is a (nodes, replicas, local batch) triple.
type placement struct {
	nodes, replicas int
	m               float64
}

// trainingPlacements are the placements the synthetic samples come from:
// 1 to 4 nodes, up to 16 GPUs, local batches from 16 to 256.
func trainingPlacements() []placement {
	var out []placement
	for nodes := 1; nodes <= 4; nodes++ {
		for _, perNode := range []int{1, 2, 4} {
			k := nodes * perNode
			if nodes == 1 && perNode == 4 {
				// Also 8 GPUs on one node.
				for _, m := range []float64{16, 32, 64, 128, 256} {
					out = append(out, placement{1, 8, m})
				}
			}
			for _, m := range []float64{16, 32, 64, 128, 256} {
				out = append(out, placement{nodes, k, m})
			}
		}
	}
	return out
}

// heldOut are placements absent from trainingPlacements.
var heldOut = []placement{
	{6, 24, 64}, {6, 24, 100}, {1, 3, 48}, {1, 6, 200}, {2, 6, 80},
	{3, 12, 24}, {5, 10, 150}, {1, 1, 40}, {2, 16, 120}, {1, 16, 64},
}

// synthetic draws n samples from p at random training placements, with
// multiplicative Gaussian noise of relative size noise.
func synthetic(p Params, n int, noise float64, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 1))
	places := trainingPlacements()
	out := make([]Sample, n)
	for i := range out {
		pl := places[rng.IntN(len(places))]
		jitter := func() float64 { return math.Max(1+noise*rng.NormFloat64(), 0.5) }
		out[i] = Sample{
			Nodes: pl.nodes, Replicas: pl.replicas, LocalBatch: pl.m,
			AccumTime: p.AccumTime(pl.m) * jitter(),
			OptimTime: p.OptimTime(pl.nodes, pl.replicas, pl.m) * jitter(),
		}
	}
	return out
}

func mustFit(t testing.TB, samples []Sample) Params {
	t.Helper()
	p, err := Fit(samples)
	if err != nil {
		t.Fatalf("Fit: %v", err)
	}
	return p
}

func TestFitSynthetic(t *testing.T) {
	tests := []struct {
		name  string
		truth Params
	}{
		{"paper", paperParams},
		{"realistic", realParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := synthetic(tt.truth, 1000, 0.01, 42)
			got := mustFit(t, samples)
			lossFit, lossTrue := Loss(got, samples), Loss(tt.truth, samples)
			t.Logf("fit %+v", got)
			t.Logf("Loss(fit) = %.6g, Loss(true) = %.6g, ratio %.4f", lossFit, lossTrue, lossFit/lossTrue)
			if !(lossFit <= 1.1*lossTrue) {
				t.Errorf("Loss(fit) = %g > 1.1 × Loss(true) = %g", lossFit, 1.1*lossTrue)
			}
			for _, pl := range heldOut {
				for _, s := range []int{0, 3} {
					want := tt.truth.Throughput(pl.nodes, pl.replicas, pl.m, s)
					have := got.Throughput(pl.nodes, pl.replicas, pl.m, s)
					if rel := math.Abs(have/want - 1); !(rel <= 0.05) {
						t.Errorf("Throughput(%d, %d, %g, %d) = %g, want %g ± 5%% (off by %.1f%%)",
							pl.nodes, pl.replicas, pl.m, s, have, want, 100*rel)
					}
				}
			}
		})
	}
}

// TestObjectiveGradient checks the analytic gradient of the internal
// objective against central differences, and its value against Loss.
func TestObjectiveGradient(t *testing.T) {
	samples := synthetic(realParams, 200, 0.05, 7)
	o := newObjective(samples)
	for _, p := range []Params{realParams, paperParams, {0.2, 0.003, 0.05, 0.02, 0.01, 0.001, 3.5}} {
		v := toVec(p)
		var grad [nParams]float64
		f := o.value(v, &grad)
		if want := Loss(p, samples); math.Abs(f-want) > 1e-12*math.Abs(want) {
			t.Errorf("objective(%v) = %.15g, Loss = %.15g", p, f, want)
		}
		for i := range nParams {
			h := 1e-6 * v[i]
			up, dn := v, v
			up[i] += h
			dn[i] -= h
			num := (o.value(up, nil) - o.value(dn, nil)) / (2 * h)
			if math.Abs(grad[i]-num) > 1e-5*math.Max(1, math.Abs(num)) {
				t.Errorf("%v: ∂loss/∂p[%d] = %g, central difference %g", p, i, grad[i], num)
			}
		}
	}
}

// from returns 1 %-noise samples of p at the given placements, each
// placement repeated three times.
func from(p Params, places []placement, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 2))
	var out []Sample
	for range 3 {
		for _, pl := range places {
			out = append(out, Sample{
				Nodes: pl.nodes, Replicas: pl.replicas, LocalBatch: pl.m,
				AccumTime: p.AccumTime(pl.m) * (1 + 0.01*rng.NormFloat64()),
				OptimTime: p.OptimTime(pl.nodes, pl.replicas, pl.m) * (1 + 0.01*rng.NormFloat64()),
			})
		}
	}
	return out
}

func TestFitPinning(t *testing.T) {
	tests := []struct {
		name   string
		places []placement
		// check returns a description of what is wrong with got.
		check func(got Params, samples []Sample) string
	}{{
		name: "rule 1: one local batch pins α_c to half the mean compute time",
		places: []placement{
			{1, 1, 64}, {1, 2, 64}, {1, 4, 64}, {2, 4, 64}, {2, 8, 64}, {4, 16, 64},
		},
		check: func(got Params, samples []Sample) string {
			var sum float64
			for _, s := range samples {
				sum += s.AccumTime
			}
			if want := sum / float64(len(samples)) / 2; got.AlphaC != want {
				return cmp.Diff(want, got.AlphaC)
			}
			return ""
		},
	}, {
		name:   "rule 2: no multi-node sample pins α_n = β_n = 1e-8 (then the prior lifts them)",
		places: []placement{{1, 1, 32}, {1, 1, 128}},
		check: func(got Params, _ []Sample) string {
			// Rules 2, 3 and 4 all apply; the prior makes α_n, β_n
			// 1.1 × the pinned α_r, β_r.
			want := Params{got.AlphaC, got.BetaC, 1.1e-8, 1.1e-8, 1e-8, 1e-8, got.Gamma}
			return cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool {
				return a == b || math.Abs(a-b) <= 1e-15*math.Abs(a)
			}))
		},
	}, {
		name: "rule 3: no single-node multi-GPU sample pins α_r = β_r = 1e-8",
		places: []placement{
			{1, 1, 32}, {1, 1, 128}, {2, 4, 32}, {2, 8, 64}, {4, 16, 128}, {3, 6, 32},
		},
		check: func(got Params, _ []Sample) string {
			return cmp.Diff([2]float64{1e-8, 1e-8}, [2]float64{got.AlphaR, got.BetaR})
		},
	}, {
		name: "rule 4: no sample beyond 2 GPUs pins β_n = β_r = 1e-8",
		places: []placement{
			{1, 1, 32}, {1, 1, 128}, {1, 2, 32}, {1, 2, 128}, {2, 2, 64}, {2, 2, 256},
		},
		check: func(got Params, _ []Sample) string {
			if d := cmp.Diff([2]float64{1e-8, 1e-8}, [2]float64{got.BetaN, got.BetaR}); d != "" {
				return d
			}
			if got.AlphaN <= 1e-6 || got.AlphaR <= 1e-6 {
				return "α_n or α_r was not fitted"
			}
			return ""
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := from(realParams, tt.places, 3)
			got := mustFit(t, samples)
			if msg := tt.check(got, samples); msg != "" {
				t.Errorf("Fit = %+v: %s", got, msg)
			}
		})
	}
}

// TestPinningRules checks the pinned starting values directly.
func TestPinningRules(t *testing.T) {
	one := []Sample{{1, 1, 64, 0.3, 0.3}, {1, 1, 64, 0.5, 0.5}}
	start, pinned, multi := pinning(one)
	wantStart := [nParams]float64{0.2, 0.01, 1e-8, 1e-8, 1e-8, 1e-8, 1.001}
	wantPinned := [nParams]bool{true, false, true, true, true, true, false}
	if diff := cmp.Diff(wantStart, start); diff != "" {
		t.Errorf("start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPinned, pinned); diff != "" {
		t.Errorf("pinned (-want +got):\n%s", diff)
	}
	if multi {
		t.Error("multiNode = true, want false")
	}
	all := []Sample{{1, 1, 64, 0.3, 0.3}, {1, 4, 32, 0.3, 0.4}, {2, 8, 128, 0.5, 0.7}}
	start, pinned, multi = pinning(all)
	if diff := cmp.Diff(initial, start); diff != "" || pinned != [nParams]bool{} || !multi {
		t.Errorf("pinning(all rules off) = %v, %v, %v; want the paper's start, nothing pinned, multi-node", start, pinned, multi)
	}
}

func TestFitPrior(t *testing.T) {
	single := []placement{{1, 1, 32}, {1, 1, 128}, {1, 2, 64}, {1, 4, 32}, {1, 8, 128}, {1, 8, 256}}
	got := mustFit(t, from(realParams, single, 5))
	// No multi-node sample: inter-node is 10 % slower than intra-node.
	if got.AlphaN != 1.1*got.AlphaR || got.BetaN != 1.1*got.BetaR {
		t.Errorf("single node: Fit = %+v, want α_n = 1.1·α_r and β_n = 1.1·β_r", got)
	}
	if got.AlphaR < 1e-3 {
		t.Errorf("single node: α_r = %g, want it fitted (about %g)", got.AlphaR, realParams.AlphaR)
	}
	// With multi-node samples the prior does not apply: a fast network
	// stays faster than the local interconnect.
	fast := realParams
	fast.AlphaN = realParams.AlphaR / 3
	multi := append(single, placement{2, 4, 64}, placement{2, 8, 32}, placement{4, 16, 128})
	got = mustFit(t, from(fast, multi, 5))
	if !(got.AlphaN < got.AlphaR) {
		t.Errorf("multi-node: Fit = %+v, want α_n < α_r as in the truth", got)
	}
}

func TestFitInvalid(t *testing.T) {
	ok := Sample{Nodes: 1, Replicas: 1, LocalBatch: 32, AccumTime: 0.1, OptimTime: 0.1}
	with := func(f func(*Sample)) []Sample {
		bad := ok
		f(&bad)
		return []Sample{ok, ok, bad}
	}
	tests := []struct {
		name    string
		samples []Sample
		want    []string // substrings of the error
	}{
		{"nil", nil, []string{"no samples"}},
		{"empty", []Sample{}, []string{"no samples"}},
		{"nodes 0", with(func(s *Sample) { s.Nodes = 0 }), []string{"sample 2", "Nodes"}},
		{"nodes negative", with(func(s *Sample) { s.Nodes = -1 }), []string{"sample 2", "Nodes"}},
		{"replicas < nodes", with(func(s *Sample) { s.Nodes, s.Replicas = 2, 1 }), []string{"sample 2", "Replicas"}},
		{"replicas 0", with(func(s *Sample) { s.Replicas = 0 }), []string{"sample 2", "Replicas"}},
		{"batch 0", with(func(s *Sample) { s.LocalBatch = 0 }), []string{"sample 2", "LocalBatch"}},
		{"batch negative", with(func(s *Sample) { s.LocalBatch = -4 }), []string{"sample 2", "LocalBatch"}},
		{"batch NaN", with(func(s *Sample) { s.LocalBatch = math.NaN() }), []string{"sample 2", "LocalBatch"}},
		{"batch Inf", with(func(s *Sample) { s.LocalBatch = math.Inf(1) }), []string{"sample 2", "LocalBatch"}},
		{"accum 0", with(func(s *Sample) { s.AccumTime = 0 }), []string{"sample 2", "AccumTime"}},
		{"accum NaN", with(func(s *Sample) { s.AccumTime = math.NaN() }), []string{"sample 2", "AccumTime"}},
		{"accum Inf", with(func(s *Sample) { s.AccumTime = math.Inf(1) }), []string{"sample 2", "AccumTime"}},
		{"optim negative", with(func(s *Sample) { s.OptimTime = -0.1 }), []string{"sample 2", "OptimTime"}},
		{"optim NaN", with(func(s *Sample) { s.OptimTime = math.NaN() }), []string{"sample 2", "OptimTime"}},
		{"optim Inf", with(func(s *Sample) { s.OptimTime = math.Inf(1) }), []string{"sample 2", "OptimTime"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Fit(tt.samples)
			if err == nil {
				t.Fatalf("Fit = %+v, nil; want an error", p)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Fit error %q does not mention %q", err, w)
				}
			}
			if p != (Params{}) {
				t.Errorf("Fit = %+v with an error, want zero Params", p)
			}
		})
	}
}

func TestFitDeterministic(t *testing.T) {
	samples := synthetic(realParams, 300, 0.02, 11)
	first := mustFit(t, samples)
	for range 5 {
		if diff := cmp.Diff(first, mustFit(t, samples)); diff != "" {
			t.Fatalf("Fit is not deterministic (-first +again):\n%s", diff)
		}
	}
}

// TestFitBounds checks the bounds on fits of awkward data.
func TestFitBounds(t *testing.T) {
	tests := []struct {
		name    string
		samples []Sample
	}{
		{"one sample", []Sample{{1, 1, 32, 0.2, 0.2}}},
		{"optim faster than accum", []Sample{{1, 1, 32, 0.2, 0.01}, {2, 8, 64, 0.3, 0.02}, {1, 4, 16, 0.1, 0.001}}},
		{"huge overlap", from(Params{0.1, 0.01, 0.5, 0.1, 0.2, 0.05, 9.9}, trainingPlacements(), 1)},
		{"tiny times", []Sample{{1, 1, 1, 1e-12, 1e-12}, {2, 4, 1e6, 1e-9, 1e-3}, {1, 3, 5, 1e-10, 1e-10}}},
		{"huge times", []Sample{{1, 1, 1, 1e12, 1e13}, {2, 4, 3, 1e15, 1e15}, {1, 3, 5, 1e14, 1e16}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBounds(t, mustFit(t, tt.samples))
		})
	}
}

func checkBounds(t *testing.T, p Params) {
	t.Helper()
	v := toVec(p)
	for i, x := range v[:iGamma] {
		if !(x >= MinParam) || math.IsInf(x, 0) {
			t.Errorf("Fit = %+v: parameter %d = %g, want finite and ≥ %g", p, i, x, MinParam)
		}
	}
	if !(p.Gamma >= MinGamma && p.Gamma <= MaxGamma) {
		t.Errorf("Fit = %+v: γ = %g, want in [%g, %g]", p, p.Gamma, MinGamma, MaxGamma)
	}
}

// FuzzFit builds samples from 8 bytes each and checks that Fit returns
// finite parameters within bounds, or an error, and never panics.
func FuzzFit(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 64, 100, 120, 0, 0, 0})
	f.Add([]byte{1, 1, 64, 100, 120, 0, 0, 0, 2, 4, 32, 90, 140, 1, 2, 3})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		var samples []Sample
		for len(data) >= 8 && len(samples) < 64 {
			b := data[:8]
			data = data[8:]
			nodes := int(b[0]%6) - 1        // -1..4: some invalid
			replicas := nodes * int(b[1]%5) // 0..4 per node: some invalid
			if b[1]&0x80 != 0 {
				replicas += int(b[1] >> 5 & 3)
			}
			// Times span 1e-6 s to 1e6 s, batches 2^-1 to 2^14.
			timeOf := func(x byte) float64 { return math.Pow(10, float64(x)/255*12-6) }
			batch := math.Ldexp(1, int(b[2]%16)-1)
			if b[7]&1 != 0 {
				batch = float64(binary.LittleEndian.Uint16(b[5:7])%1000) - 1 // may be ≤ 0
			}
			samples = append(samples, Sample{
				Nodes: nodes, Replicas: replicas, LocalBatch: batch,
				AccumTime: timeOf(b[3]), OptimTime: timeOf(b[4]),
			})
		}
		p, err := Fit(samples)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "throughput: Fit: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			return
		}
		checkBounds(t, p)
		if l := Loss(p, samples); math.IsNaN(l) || math.IsInf(l, 0) {
			t.Errorf("Loss(Fit) = %g, want finite", l)
		}
	})
}

func benchmarkFit(b *testing.B, n int) {
	samples := synthetic(realParams, n, 0.01, 99)
	for b.Loop() {
		if _, err := Fit(samples); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFit100(b *testing.B)  { benchmarkFit(b, 100) }
func BenchmarkFit1000(b *testing.B) { benchmarkFit(b, 1000) }
