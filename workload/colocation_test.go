package workload

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
	"github.com/dlsched/dlsched/throughput"
)

// Three templates on one type: a and b share well, c cannot share with a.
func tinyColocation() *Colocation {
	iso := map[string]float64{"a": 10, "b": 4, "c": 2}
	p := Profile{Throughputs: map[ProfileKey]float64{}}
	for name, v := range iso {
		p.Throughputs[ProfileKey{Template: name, Accelerator: "v100", GPUs: 1}] = v
	}
	pairs := Pairs{}
	set := func(a, b string, x, y float64) {
		pairs[PairKey{Template: a, Partner: b, Accelerator: "v100", GPUs: 1, PartnerGPUs: 1}] = [2]float64{x, y}
		pairs[PairKey{Template: b, Partner: a, Accelerator: "v100", GPUs: 1, PartnerGPUs: 1}] = [2]float64{y, x}
	}
	set("a", "a", 6, 6)
	set("b", "b", 3, 3)
	set("c", "c", 1, 1)
	set("a", "b", 8, 2)
	set("a", "c", 0, 0)
	set("b", "c", 2, 1)
	return &Colocation{Profile: p, Pairs: pairs, Templates: map[string]string{"x": "a", "y": "b", "z": "c", "w": "a"}}
}

func tinySnapshot() *policy.Snapshot {
	job := func(id string, gpus int, thr float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Throughput: map[allocation.Accelerator]float64{"v100": thr}}
	}
	return &policy.Snapshot{Jobs: []policy.Job{job("x", 1, 10), job("y", 1, 4), job("z", 1, 2), job("w", 2, 10)}}
}

type col = map[string]map[allocation.Accelerator]float64

// The oracle tells each job its measured throughput beside every partner
// of its GPU count with which both progress: x and z never pair, nor w (2
// GPUs) with anyone.
func TestColocationOracle(t *testing.T) {
	c := tinyColocation()
	s := tinySnapshot()
	c.Inform(s)
	want := []col{
		{"y": {"v100": 8}},
		{"x": {"v100": 2}, "z": {"v100": 2}},
		{"y": {"v100": 1}},
		nil,
	}
	for i, j := range s.Jobs {
		if diff := cmp.Diff(want[i], col(j.Colocated)); diff != "" {
			t.Errorf("job %s (-want +got):\n%s", j.ID, diff)
		}
	}
	run := placement.Run{Job: "x", Partner: "y", Accelerator: "v100"}
	if got := c.Speed(&s.Jobs[1], allocation.Grant{}, run); got != 2 {
		t.Errorf("y beside x runs at %v, want the measured 2", got)
	}
	if got := c.Speed(&s.Jobs[0], allocation.Grant{}, placement.Run{Job: "x", Accelerator: "v100"}); got != 10 {
		t.Errorf("x alone runs at %v, want 10", got)
	}
}

// Profiled beside every reference, each job matches its own template, so
// the estimate is the truth; a pair that runs then measures the truth and
// the estimate stays. A prior that is wrong moves halfway to each
// measurement (α = ½).
func TestColocationEstimate(t *testing.T) {
	c := tinyColocation()
	c.Estimation = &Estimation{Profiled: 1}
	s := tinySnapshot()
	c.Inform(s)
	if got := col(s.Jobs[0].Colocated); !cmp.Equal(got, col{"y": {"v100": 8}}) {
		t.Errorf("x estimated %v, want the truth", got)
	}
	key := pairOf{"x", "y", "v100"}
	c.measured = map[pairOf]*throughput.EMA{key: {Value: 4}}
	run := placement.Run{Job: "x", Partner: "y", Accelerator: "v100"}
	for _, want := range []float64{6, 7, 7.5} {
		c.Observe(&s.Jobs[0], allocation.Grant{}, run, time.Minute)
		if got := c.measured[key].Value; got != want {
			t.Errorf("after a measurement of 8 the estimate is %v, want %v", got, want)
		}
	}
}

// Gavel's comparison of estimated and oracle throughputs, in the setup of
// the paper's figure (its throughput_estimation notebook): single-GPU jobs
// of Gavel's templates on 4 + 4 + 4 GPUs, seeds 0–2; heterogeneity-aware
// LAS without space sharing; with space sharing told the measured pair
// throughputs (oracle); and the same told only estimates, from 16
// reference templates with each job profiled in 20 % of their entries.
// Measured, mean over the seeds: LAS 41.56 h, oracle 34.92 h, estimated
// 36.23 h, so estimates keep 80 % of space sharing's gain (matching each
// type on its own, rather than on Gavel's joint row, kept 40 %). The test
// asks for more than 60 %.
func TestColocationEstimatedVersusOracle(t *testing.T) {
	const file = "../../shared/data/gavel/simulation_throughputs.json"
	if testing.Short() || raceEnabled || !slices.Contains(allocation.Solvers(), allocation.CLP) {
		t.Skip("simulates 160 jobs nine times with space sharing; needs CLP (-tags clp) and no race detector")
	}
	f, err := os.Open(file)
	if err != nil {
		t.Skipf("no Gavel data: %v", err)
	}
	defer f.Close()
	prof, pairs, err := LoadGavelThroughputs(f)
	if err != nil {
		t.Fatal(err)
	}
	var las, oracle, estimated float64
	for seed := range uint64(3) {
		jobs, templates, err := Generator{Seed: seed, Jobs: 160, Rate: 3, Profile: prof}.GenerateTemplates()
		if err != nil {
			t.Fatal(err)
		}
		byID := make(map[string]string, len(jobs))
		for i, j := range jobs {
			byID[j.ID] = templates[i]
		}
		run := func(name string, est *Estimation) float64 {
			return spaceSharing(t, name, jobs, &Colocation{Profile: prof, Pairs: pairs, Templates: byID, Estimation: est})
		}
		l, o, e := run("gavel.las", nil), run("gavel.las-ss", nil), run("gavel.las-ss", &Estimation{References: 16, Profiled: 0.2, Seed: seed})
		t.Logf("seed %d: average JCT: LAS %.2f h, LAS w/ SS oracle %.2f h, estimated %.2f h", seed, l, o, e)
		las, oracle, estimated = las+l/3, oracle+o/3, estimated+e/3
	}
	t.Logf("mean: LAS %.2f h, oracle %.2f h, estimated %.2f h", las, oracle, estimated)
	if !(oracle < las) {
		t.Errorf("space sharing with the truth %.2f h is not below LAS %.2f h", oracle, las)
	}
	if gain := (las - estimated) / (las - oracle); !(gain > 0.6) || math.IsNaN(gain) {
		t.Errorf("estimates keep %.0f %% of space sharing's gain, want more than 60 %%", 100*gain)
	}
}

// spaceSharing returns the average JCT, in hours, of jobs under the
// policy named on 4 + 4 + 4 GPUs, with c's co-location.
func spaceSharing(t *testing.T, name string, jobs []policy.Job, c *Colocation) float64 {
	t.Helper()
	p, err := policy.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	sm := &sim.Simulation{Cluster: simtest.Cluster(4), Policy: p, Recompute: 1920 * time.Second,
		Inform: c.Inform, Speed: c.Speed, Observe: c.Observe}
	res, err := sm.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Summarize(res.Jobs, res.Rounds, sim.Options{GPUs: 12})
	if err != nil {
		t.Fatal(err)
	}
	return s.AvgJCT / 3600
}
