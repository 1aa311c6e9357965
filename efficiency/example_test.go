package efficiency_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/throughput"
)

var job = efficiency.Goodput{
	Perf:      throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14},
	Grad:      efficiency.Grad{Sqr: 0.00136, Var: 0.000502},
	BatchSize: 128,
}

func ExampleGoodput_Efficiency() {
	fmt.Printf("noise scale φ = %.1f examples\n", job.Grad.Noise(128))
	for _, m := range []float64{128, 512, 1280} {
		fmt.Printf("M = %4.0f: efficiency %.4f, gain %.3f\n", m, job.Efficiency(m), job.Gain(m))
	}
	unmeasured := efficiency.Goodput{BatchSize: 128}
	fmt.Printf("unmeasured job at M = 1280: %.0f\n", unmeasured.Efficiency(1280))
	// Output:
	// noise scale φ = 47.2 examples
	// M =  128: efficiency 1.0000, gain 1.000
	// M =  512: efficiency 0.3134, gain 1.253
	// M = 1280: efficiency 0.1320, gain 1.320
	// unmeasured job at M = 1280: 1
}

func ExampleGoodput_Optimize() {
	lim := efficiency.Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256}
	c, ok := job.Optimize(2, 8, lim)
	fmt.Printf("%v: m = %d, s = %d, M = %d, goodput %.3f\n", ok, c.LocalBatch, c.Accum, c.Batch(8), c.Goodput)
	// 64 GPUs of at least 64 examples exceed MaxBatch: refused.
	_, ok = job.Optimize(4, 64, lim)
	fmt.Println(ok)
	// Output:
	// true: m = 64, s = 0, M = 512, goodput 305.717
	// false
}

func ExampleNewSpeedup() {
	lim := efficiency.Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256}
	s := efficiency.NewSpeedup(job, lim, 1, 1)
	for _, p := range [][2]int{{0, 0}, {1, 1}, {1, 2}, {2, 8}} {
		fmt.Printf("SPEEDUP(%d, %d) = %.3f\n", p[0], p[1], s.At(p[0], p[1]))
	}
	// Output:
	// SPEEDUP(0, 0) = 0.000
	// SPEEDUP(1, 1) = 1.000
	// SPEEDUP(1, 2) = 1.728
	// SPEEDUP(2, 8) = 2.025
}

func ExampleEstimator() {
	// Four replicas compute gradients of 32 examples each around the true
	// gradient G = (1, 1, 1, 1) with per-example variance 4 per coordinate:
	// |G|² = 4 and tr Σ/M0 = 16/128 = 0.125 for M0 = 128.
	rng := rand.New(rand.NewPCG(1, 1))
	var e efficiency.Estimator
	fmt.Printf("before any step: %+v\n", e.Grad())
	grads := make([][]float64, 4)
	for step := 0; step < 2000; step++ {
		for i := range grads {
			grads[i] = grads[i][:0]
			for range 4 {
				grads[i] = append(grads[i], 1+rng.NormFloat64()*2/math.Sqrt(32))
			}
		}
		e.ObserveGradients(grads, 4*32/128.0)
	}
	g := e.Grad()
	fmt.Printf("|G|² ≈ %.1f, tr Σ/M0 ≈ %.2f, biased %v\n", g.Sqr, g.Var, e.Biased())
	// Output:
	// before any step: {Sqr:0 Var:0}
	// |G|² ≈ 4.0, tr Σ/M0 ≈ 0.13, biased false
}
