package throughput_test

import (
	"fmt"

	"github.com/dlsched/dlsched/throughput"
)

func ExampleReference_Estimate() {
	// Normalized co-location throughputs of four reference jobs on one
	// accelerator type: row i beside column j, relative to i alone.
	ref := throughput.Reference{
		Names: []string{"resnet18", "resnet50", "transformer", "lm"},
		Pair: [][]float64{
			{0.95, 0.80, 0.85, 1.00},
			{0.60, 0.45, 0.50, 0.90},
			{0.75, 0.55, 0.30, 0.95},
			{0.90, 0.85, 0.80, 0.40},
		},
	}
	// A new job, profiled beside two of them only.
	e, err := ref.Estimate(map[int]float64{0: 0.62, 3: 0.88})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("matches %s (cosine distance %.4f)\n", ref.Names[e.Match], e.Distance)
	fmt.Printf("completed row: %.2f\n", e.Row)
	// Gavel multiplies by the isolated throughputs: here 12 steps/s for
	// the job and 30 for lm.
	fmt.Printf("beside lm: %.1f steps/s, lm beside it: %.1f steps/s\n",
		12*e.Beside(3), 30*e.Partner(3))
	// Output:
	// matches resnet50 (cosine distance 0.0022)
	// completed row: [0.62 0.46 0.41 0.88]
	// beside lm: 10.8 steps/s, lm beside it: 25.5 steps/s
}

func ExampleEMA() {
	// Measured steps/s of three rounds, starting from an estimate of 10.
	e := throughput.EMA{Value: 10}
	for _, m := range []float64{14, 13, 0} {
		fmt.Println(e.Observe(m))
	}
	// Output:
	// 12
	// 12.5
	// 6.25
}

func ExampleFailures() {
	var f throughput.Failures // Gavel's limit: 5 in a row
	for attempt := 1; attempt <= 8; attempt++ {
		if attempt == 3 {
			f.Succeed() // resets the count
			continue
		}
		if f.Fail() {
			fmt.Println("drop after attempt", attempt)
			break
		}
	}
	// Output:
	// drop after attempt 8
}
