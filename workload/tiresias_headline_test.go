package workload

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
	"github.com/dlsched/dlsched/sim"
)

// Tiresias' headline on a Tiresias-like workload: the mixed workload's
// jobs as Tiresias sees them (Philly's GPU counts and durations at a
// tenth, rigid, with model skew, slowed when spread over servers), 400 of
// them at 8 an hour with a diurnal burst of 0.8, on 64 V100s in 4-GPU
// servers, event-driven, 30 s per restart: what `dlsched compare
// --workload tiresias --jobs 400 --rate 8 --burst 0.8` runs. YARN-CS's
// average JCT over 2D-LAS's and over 2D-Gittins', averaged over seeds
// 0–4, must land in the range Tiresias' own simulator gives on its traces,
// 2.5–3.4× (the paper reports up to 5.5×). Measured: 2.75× for LAS
// (1.34–3.29× per seed) and 3.02× for Gittins (1.42–3.70×): the
// heavy-tailed durations make single seeds vary, so the test averages.
func TestTiresiasHeadline(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("long: 15 simulations of 400 jobs")
	}
	var c allocation.Cluster
	for i := range 16 {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("v100-%d", i), Accelerator: "v100", GPUs: 4})
	}
	ratio := map[string]float64{}
	for seed := range uint64(5) {
		avg := map[string]float64{}
		for _, name := range []string{"tiresias.las", "tiresias.gittins", "baseline.yarn-cs"} {
			jobs, phys, err := Mixed{Seed: seed, Jobs: 400, Rate: 8, Burst: 0.8, Scale: 0.1,
				Facts: policy.FactSkew | policy.FactLength}.Generate()
			if err != nil {
				t.Fatal(err)
			}
			p, err := policy.New(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := &sim.Simulation{Cluster: c, Policy: p, Events: true, Restart: 30 * time.Second,
				Speed: phys.Speed, Observe: phys.Observe, Exclusive: phys.Exclusive}
			res, err := s.Run(context.Background(), jobs)
			if err != nil {
				t.Fatalf("%s seed %d: %v", name, seed, err)
			}
			sum, err := res.Summary(sim.Options{GPUs: c.TotalGPUs()})
			if err != nil {
				t.Fatal(err)
			}
			avg[name] = sum.AvgJCT
		}
		for _, name := range []string{"tiresias.las", "tiresias.gittins"} {
			r := avg["baseline.yarn-cs"] / avg[name]
			t.Logf("seed %d: YARN-CS / %s = %.2f", seed, name, r)
			ratio[name] += r / 5
		}
	}
	for name, r := range ratio {
		if r < 2.5 || r > 3.4 {
			t.Errorf("YARN-CS / %s = %.2f× over seeds 0–4, want 2.5–3.4× (Tiresias' simulator)", name, r)
		}
	}
}
