package gavel

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// A job that saturates early: B (weight 4) reaches its largest term, 1/4,
// by running all the time on one of the two GPUs. LAS stops at t* = 1/4 for
// everyone; water-filling freezes B and lets A and C share the other GPU.
func TestWaterFillingSaturation(t *testing.T) {
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 2}}},
		Jobs: []policy.Job{
			{ID: "A", GPUs: 1, Throughput: shares{"v100": 1}},
			{ID: "B", GPUs: 1, Weight: 4, Throughput: shares{"v100": 1}},
			{ID: "C", GPUs: 1, Throughput: shares{"v100": 1}},
		},
	}
	for _, solver := range allocation.Solvers() {
		las, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := (&WaterFilling{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d.Objective-0.25) > 1e-9 || math.Abs(las.Objective-0.25) > 1e-9 {
			t.Errorf("%s: first level %v, LAS t* %v; want both 1/4", solver, d.Objective, las.Objective)
		}
		for id, want := range map[string]float64{"A": 0.5, "B": 1, "C": 0.5} {
			if got := d.Allocation[id].Shares["v100"]; math.Abs(got-want) > 1e-7 {
				t.Errorf("%s: job %s share %v, want %v", solver, id, got, want)
			}
		}
		// Every job that did not freeze at the first level ends strictly
		// above it.
		z := terms(s, d, false)
		if !(z["A"] > 0.25+1e-6 && z["C"] > 0.25+1e-6) {
			t.Errorf("%s: terms %v; A and C should rise above LAS's 1/4", solver, z)
		}
	}
}

// leximinViolation reports a job that could rise above its level while
// every job at or below that level keeps its own: the allocation is then
// not leximin-optimal. It checks each job with an LP of its own.
func leximinViolation(t *testing.T, s *policy.Snapshot, z map[string]float64, solver allocation.Solver) string {
	t.Helper()
	mm := &MaxMinFairness{Solver: solver}
	jobs := sortedJobs(s.Jobs)
	for j, job := range jobs {
		m := mm.build(s.Cluster, jobs, false)
		prog, exprs, unit := m.prog, m.terms, m.unit
		for i, other := range jobs {
			if i != j && z[other.ID] <= z[job.ID]*(1+1e-6) { // "at or below", up to solver tolerance
				prog.Constrain(exprs[i], z[other.ID]/unit*(1-1e-7), math.Inf(1))
			}
		}
		res, err := prog.Maximize(context.Background(), exprs[j])
		if err != nil {
			t.Fatalf("job %s: %v", job.ID, err)
		}
		if best := res.Objective * unit; best > z[job.ID]*(1+1e-5)+1e-9 {
			return job.ID
		}
	}
	return ""
}

func TestWaterFillingLeximin(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for i := range 25 {
		s := randomSnapshot(rng, 2+rng.IntN(14), 1+rng.IntN(3), 1+rng.IntN(10))
		var firsts []float64
		for _, solver := range allocation.Solvers() {
			d, err := (&WaterFilling{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("instance %d %s: %v", i, solver, err)
			}
			if err := d.Allocation.Validate(s.Cluster); err != nil {
				t.Errorf("instance %d %s: %v", i, solver, err)
			}
			las, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			// The first level is LAS's optimum, and nobody ends below it.
			if math.Abs(d.Objective-las.Objective) > 1e-7*max(1, las.Objective) {
				t.Errorf("instance %d %s: first level %v, LAS %v", i, solver, d.Objective, las.Objective)
			}
			z := terms(s, d, false)
			for id, v := range z {
				if v < las.Objective*(1-1e-6) {
					t.Errorf("instance %d %s: job %s at %v, below LAS's %v", i, solver, id, v, las.Objective)
				}
			}
			if id := leximinViolation(t, s, z, solver); id != "" {
				t.Errorf("instance %d %s: job %s could rise without lowering anyone at or below it; terms %v", i, solver, id, z)
			}
			firsts = append(firsts, d.Objective)
		}
		for _, f := range firsts[1:] {
			if math.Abs(f-firsts[0]) > 1e-7*max(1, firsts[0]) {
				t.Errorf("instance %d: engines disagree on the first level: %v", i, firsts)
			}
		}
	}
}
