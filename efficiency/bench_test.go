package efficiency

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkOptimize(b *testing.B) {
	lim := Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256, Accumulation: true}
	for b.Loop() {
		specJob.Optimize(2, 8, lim)
	}
}

// BenchmarkSpeedup fills a cold table of 16 nodes × 64 replicas.
func BenchmarkSpeedup(b *testing.B) {
	lim := Limits{MaxBatch: 4096, LocalMin: 16, LocalMax: 256, Accumulation: true}
	for b.Loop() {
		s := NewSpeedup(specJob, lim, 1, 1)
		for n := 1; n <= 16; n++ {
			for k := 1; k <= 64; k++ {
				s.At(n, k)
			}
		}
	}
}

// BenchmarkEstimator observes one step of 8 gradients of 10 000 parameters.
func BenchmarkEstimator(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	grads := newGrads(8, 10000)
	for _, g := range grads {
		for i := range g {
			g[i] = rng.NormFloat64()
		}
	}
	var e Estimator
	for b.Loop() {
		e.ObserveGradients(grads, 2)
	}
}
