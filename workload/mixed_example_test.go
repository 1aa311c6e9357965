package workload_test

import (
	"fmt"

	"github.com/dlsched/dlsched/workload"
)

// ExampleMixed draws a few jobs of the mixed workload: each carries
// Gavel's per-type throughputs, Pollux's elastic facts, Shockwave's
// regimes and Synergy's sensitivity, and the Physics that the simulator
// advances them by.
func ExampleMixed() {
	jobs, phys, err := workload.Mixed{Seed: 1, Jobs: 5, Rate: 6, Scale: 0.1}.Generate()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range jobs {
		t := phys.Jobs[j.ID]
		fmt.Printf("%s %-14s %d GPU(s), batch %4d, %5.0f examples/s on v100, %d epochs, regimes %v, %v alone\n",
			j.ID, t.Model, j.GPUs, t.Batch, j.Throughput["v100"], j.Adaptive.Epochs, j.Adaptive.Regimes, phys.Exclusive(&j).Round(60e9))
	}
	// Output:
	// job-00000 Transformer    8 GPU(s), batch   16,  9171 examples/s on v100, 15798 epochs, regimes [16], 4h47m0s alone
	// job-00001 LM             8 GPU(s), batch   20, 79568 examples/s on v100, 672 epochs, regimes [20], 8m0s alone
	// job-00002 Recommendation 1 GPU(s), batch 8192, 23282 examples/s on v100, 109 epochs, regimes [8192], 5m0s alone
	// job-00003 ResNet-50      1 GPU(s), batch  128,   320 examples/s on v100, 4 epochs, regimes [128], 21m0s alone
	// job-00004 ResNet-18      8 GPU(s), batch   16, 48973 examples/s on v100, 789 epochs, regimes [16 256], 7m0s alone
}
