package bayes_test

import (
	"fmt"

	"github.com/dlsched/dlsched/bayes"
)

func ExampleJob_Remaining() {
	// A 23-epoch job with batch-size regimes 10, 20 and 40 has finished 4
	// epochs, all at batch size 10, and runs its fifth at 10 too: 5 seen.
	j := bayes.Job{
		Epochs:       23,
		Done:         4,
		Observed:     []int{5, 0, 0},
		EpochSeconds: []float64{62.87473190072079, 43.84382645076212, 31.86233034465319},
	}
	r, err := j.Remaining()
	if err != nil {
		panic(err)
	}
	fmt.Printf("remaining ≈ %.0f s, %.1f s per epoch so far\n", r, j.EpochMean())
	// Output:
	// remaining ≈ 817 s, 62.9 s per epoch so far
}

func ExampleService_Gittins() {
	s, err := bayes.NewService([]float64{1, 2, 3, 4})
	if err != nil {
		panic(err)
	}
	// After 1.5 s of service, 1 of the 3 jobs still possible ends within the
	// next second, and they use 0.5, 1 and 1 s of it: G = (1/3)/(2.5/3).
	for _, a := range []float64{0, 1.5, 3.5, 4} {
		fmt.Printf("G(%.1f) = %.2f\n", a, s.Gittins(a, 1))
	}
	// Output:
	// G(0.0) = 0.25
	// G(1.5) = 0.40
	// G(3.5) = 2.00
	// G(4.0) = 0.00
}

func ExampleDirichlet_Observe() {
	// The prior of a 23-epoch job with 3 regimes, after one epoch in the first.
	d := bayes.Prior(23, 3).Observe([]int{1, 0, 0})
	fmt.Printf("α = %.3f\nmean = %.3f\n", d.Alpha, d.Mean())
	// Output:
	// α = [8.667 7.667 7.667]
	// mean = [0.361 0.319 0.319]
}
