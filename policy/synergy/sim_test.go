package synergy_test

import (
	"context"
	"github.com/dlsched/dlsched/workload"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
)

// avgJCT simulates the jobs under the policy on c with Synergy's 300 s
// rounds and CPU/memory-sensitive speeds, and returns the average JCT in
// hours over the measured window.
func avgJCT(t *testing.T, name string, c allocation.Cluster, jobs []policy.Job, window sim.Window) float64 {
	t.Helper()
	p, err := policy.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Simulation{Cluster: c, Policy: p, Round: workload.SynergyRound, Speed: workload.Resources{Cluster: c}.Speed}
	res, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sum, err := sim.Summarize(res.Jobs, res.Rounds, sim.Options{Window: window, GPUs: c.TotalGPUs()})
	if err != nil {
		t.Fatal(err)
	}
	return sum.AvgJCT / 3600
}

// TestReproduction is the paper's headline on its simulated cluster: 128
// GPUs in 16 servers of 8 GPUs, 24 cores and 500 GB, single-GPU jobs split
// (20, 70, 10) over image, language and speech, FIFO, 300 s rounds, the
// average JCT of jobs 4000–4999 of 5000 as in Synergy's runner. Tune is
// never worse than GPU-proportional; its gain grows with load until
// proportional saturates (about 7.6 jobs/h: 128 GPUs over a mean job of
// 16.8 h) and stays above 1.5× beyond, where both queues grow for as long as
// jobs arrive.
func TestReproduction(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("about a minute of simulation; skipped in -short and under the race detector")
	}
	c := cluster(16)    // Synergy's simulated cluster: 16 servers of 8 GPUs, 24 cores, 500 GB
	const saturated = 8 // jobs per hour: proportional can no longer keep up
	w := sim.Window{Start: 4000, End: 5000}
	prev := 0.0
	for _, rate := range []float64{3, 5, 7, 8, 9, 10} {
		jobs, err := workload.SynergyGenerator{Seed: 1, Jobs: 5000, Rate: rate}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		prop := avgJCT(t, "synergy.proportional", c, jobs, w)
		tune := avgJCT(t, "synergy.tune", c, jobs, w)
		ratio := prop / tune
		t.Logf("%2g jobs/h: proportional %6.2f h, tune %6.2f h, %.2f×", rate, prop, tune, ratio)
		if tune > prop {
			t.Errorf("%g jobs/h: tune %.2f h is worse than proportional %.2f h", rate, tune, prop)
		}
		if rate <= saturated && ratio < prev*0.99 {
			t.Errorf("%g jobs/h: the gain fell from %.2f× to %.2f× below saturation", rate, prev, ratio)
		}
		if rate >= saturated && ratio < 1.5 {
			t.Errorf("%g jobs/h: the gain is %.2f×, want at least 1.5× once proportional saturates", rate, ratio)
		}
		prev = ratio
	}
}

// The headline at the knee, over seeds: at 8 jobs/h, where proportional
// saturates and Tune still keeps up, one seed's queue decides the average,
// so the gain is held as the mean over seeds 0–4 (2.74× measured, the
// paper up to 3.4×) and by seed (1.70–3.78×): the mean at least 2.2× and
// every seed at least 1.5×.
func TestReproductionSeeds(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("about a minute of simulation; skipped in -short and under the race detector")
	}
	c := cluster(16)
	w := sim.Window{Start: 4000, End: 5000}
	sum := 0.0
	for seed := range uint64(5) {
		jobs, err := workload.SynergyGenerator{Seed: seed, Jobs: 5000, Rate: 8}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		prop := avgJCT(t, "synergy.proportional", c, jobs, w)
		tune := avgJCT(t, "synergy.tune", c, jobs, w)
		t.Logf("seed %d: proportional %6.2f h, tune %6.2f h, %.2f×", seed, prop, tune, prop/tune)
		if prop/tune < 1.5 {
			t.Errorf("seed %d: the gain is %.2f×, want at least 1.5×", seed, prop/tune)
		}
		sum += prop / tune
	}
	if mean := sum / 5; mean < 2.2 {
		t.Errorf("mean gain over seeds 0–4 is %.2f×, want at least 2.2× (measured 2.74×)", mean)
	}
}
