package workload

import (
	"context"
	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/sim"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/gavel"
)

func simulate(t *testing.T, name string, c allocation.Cluster, jobs []policy.Job, recompute time.Duration) *sim.Result {
	t.Helper()
	p, err := policy.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := (&sim.Simulation{Cluster: c, Policy: p, Recompute: recompute}).Run(context.Background(), jobs)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s: %d rounds in %v", name, len(res.Rounds), time.Since(start).Round(time.Millisecond))
	return res
}

// A static trace of 100 multi-GPU jobs: the makespan policy finishes no
// later than FIFO or LAS.
func TestMakespanPolicyFinishesFirst(t *testing.T) {
	if testing.Short() || !slices.Contains(allocation.Solvers(), allocation.CLP) {
		t.Skip("simulates three policies over a 100-job trace; needs CLP (-tags clp)")
	}
	jobs, err := Generator{Seed: 1, Jobs: 100, MultiGPU: true}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	c := simtest.Cluster(16)
	makespan := map[string]time.Duration{}
	for _, name := range []string{"gavel.makespan", "gavel.fifo", "gavel.las"} {
		res := simulate(t, name, c, jobs, 0)
		for _, r := range res.Jobs {
			if !r.Finished {
				t.Fatalf("%s: job %s unfinished", name, r.ID)
			}
			makespan[name] = max(makespan[name], r.Finish)
		}
	}
	t.Logf("makespans: %v", makespan)
	// The makespan policy re-plans at every completion; the round mechanism
	// can cost it up to a round against the LP's plan.
	slack := sim.DefaultRound
	if m := makespan["gavel.makespan"]; m > makespan["gavel.fifo"]+slack || m > makespan["gavel.las"]+slack {
		t.Errorf("makespan policy %v, FIFO %v, LAS %v", m, makespan["gavel.fifo"], makespan["gavel.las"])
	}
}

// Gavel's headline result: on 36 V100 + 36 P100 + 36 K80 with single-GPU
// jobs arriving continuously, heterogeneity-aware LAS cuts the average JCT
// of jobs 4000–4999 well below the agnostic baseline's at high load (the
// paper's notebook: 96.0 h vs 29.0 h at 5.6 jobs/hour, 3.3×). At 2 jobs/hour
// the cluster is lightly loaded and both stay close to the jobs' own run
// time. Gavel reports 15–25 h there for its seed; the bound here is relative
// to this trace's window, whose mean run time alone on the fastest GPU is
// 14.1 h (seed 0), so an absolute 15 h floor would be unreachable. Gavel's
// reset interval is 1920 s.
func TestGavelHeadline(t *testing.T) {
	if testing.Short() || raceEnabled || !slices.Contains(allocation.Solvers(), allocation.CLP) {
		t.Skip("simulates 6000 jobs four times; needs CLP (-tags clp) and no race detector")
	}
	window := sim.Options{Window: sim.Window{Start: 4000, End: 5000}, GPUs: 108}
	run := func(rate float64, name string) (avg, exclusive float64) {
		jobs, err := Generator{Seed: 0, Jobs: 6000, Rate: rate}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		res := simulate(t, name, simtest.Cluster(36), jobs, 1920*time.Second)
		s, err := sim.Summarize(res.Jobs, res.Rounds, window)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Jobs[4000:5000] {
			exclusive += r.Exclusive.Hours() / 1000
		}
		t.Logf("rate %.1f %s: average JCT %.1f h (window's mean exclusive run time %.1f h)", rate, name, s.AvgJCT/3600, exclusive)
		return s.AvgJCT / 3600, exclusive
	}
	aware, _ := run(5.6, "gavel.las")
	agnostic, _ := run(5.6, "gavel.las-agnostic")
	if ratio := agnostic / aware; ratio < 2.5 {
		t.Errorf("at 5.6 jobs/h: agnostic/aware JCT %.2f, want ≥ 2.5", ratio)
	}
	for _, name := range []string{"gavel.las", "gavel.las-agnostic"} {
		if h, ex := run(2.0, name); h < ex || h > 1.8*ex {
			t.Errorf("at 2.0 jobs/h: %s average JCT %.1f h, want within [1, 1.8] × %.1f h", name, h, ex)
		}
	}
}
