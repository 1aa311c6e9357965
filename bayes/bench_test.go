package bayes

import (
	"math/rand/v2"
	"testing"
)

var sink float64

func BenchmarkRemaining(b *testing.B) {
	j := Job{
		Epochs:       200,
		Done:         57,
		Observed:     []int{20, 15, 10, 8, 5},
		EpochSeconds: []float64{60, 45, 33, 27, 24},
	}
	for b.Loop() {
		r, err := j.Remaining()
		if err != nil {
			b.Fatal(err)
		}
		sink += r
	}
}

func BenchmarkGittins(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([]float64, 10000)
	for i := range samples {
		samples[i] = r.ExpFloat64() * 5000
	}
	s, err := NewService(samples)
	if err != nil {
		b.Fatal(err)
	}
	a := 0.0
	for b.Loop() {
		sink += s.Gittins(a, 3250)
		a += 7
		if a > 30000 {
			a = 0
		}
	}
}
