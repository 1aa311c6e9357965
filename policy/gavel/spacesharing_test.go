package gavel

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// sharedPair is one V100 and two 1-GPU jobs that each keep a fraction f of
// their speed when they share it.
func sharedPair(f float64) *policy.Snapshot {
	return &policy.Snapshot{
		Cluster: oneType(1),
		Jobs: []policy.Job{
			{ID: "A", GPUs: 1, StepsTotal: 1000, Throughput: shares{"v100": 1},
				Colocated: map[string]map[allocation.Accelerator]float64{"B": {"v100": f}}},
			{ID: "B", GPUs: 1, StepsTotal: 1000, Throughput: shares{"v100": 1},
				Colocated: map[string]map[allocation.Accelerator]float64{"A": {"v100": f}}},
		},
	}
}

func TestSpaceSharing(t *testing.T) {
	for _, solver := range allocation.Solvers() {
		// Sharing at 0.75 each (normalized pair throughput 1.5): the pair
		// runs all the time and both jobs reach 0.75, where time-slicing
		// gives each 0.5.
		helps := sharedPair(0.75)
		las, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), helps)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := (&MaxMinFairness{SpaceSharing: true, Solver: solver}).Allocate(context.Background(), helps)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(las.Objective-0.5) > 1e-7 || math.Abs(ss.Objective-0.75) > 1e-7 {
			t.Errorf("%s: LAS %v, LAS-SS %v; want 0.5 and 0.75", solver, las.Objective, ss.Objective)
		}
		if got := ss.Allocation["A"].Pairs["B"]["v100"]; math.Abs(got-1) > 1e-7 {
			t.Errorf("%s: pair share %v, want 1", solver, got)
		}
		if err := ss.Allocation.Validate(helps.Cluster); err != nil {
			t.Errorf("%s: %v", solver, err)
		}
		mk, err := (&Makespan{SpaceSharing: true, Solver: solver}).Allocate(context.Background(), helps)
		if err != nil || math.Abs(mk.Objective-1000/0.75) > 1e-4 {
			t.Errorf("%s: makespan-ss %v, %v; want 1000/0.75 s", solver, mk, err)
		}
		ftf, err := (&FinishTimeFairness{SpaceSharing: true, Solver: solver}).Allocate(context.Background(), helps)
		// Isolated: each job has half the GPU, 0.5 steps/s; shared: 0.75.
		if err != nil || math.Abs(ftf.Objective-0.5/0.75) > 1e-6 {
			t.Errorf("%s: ftf-ss %v, %v; want ρ = 2/3", solver, ftf, err)
		}

		// Sharing at 0.4 each (0.8 < 1): pairing would lose, so it never
		// happens.
		hurts := sharedPair(0.4)
		ss, err = (&MaxMinFairness{SpaceSharing: true, Solver: solver}).Allocate(context.Background(), hurts)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss.Allocation["A"].Pairs) != 0 || math.Abs(ss.Objective-0.5) > 1e-7 {
			t.Errorf("%s: harmful pair used: %+v, objective %v", solver, ss.Allocation["A"], ss.Objective)
		}
	}
}

func TestSpaceSharingInvalid(t *testing.T) {
	s := sharedPair(0.75)
	s.Cluster = oneType(2)
	s.Jobs[1].GPUs = 2
	// Jobs of unequal GPU counts do not pair; both run, and a warning
	// names the pair.
	for _, p := range []policy.Policy{&MaxMinFairness{SpaceSharing: true}, &Makespan{SpaceSharing: true}, &FinishTimeFairness{SpaceSharing: true}} {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if len(d.Unscheduled) != 0 || len(d.Allocation) != 2 {
			t.Errorf("%s: Unscheduled %v, Allocation %v; want both jobs scheduled", p.Name(), d.Unscheduled, d.Allocation)
		}
		for id, g := range d.Allocation {
			if len(g.Pairs) != 0 {
				t.Errorf("%s: job %s pairs %v, want no pair", p.Name(), id, g.Pairs)
			}
		}
		if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "colocated[B]") {
			t.Errorf("%s: warnings %q, want one naming colocated[B]", p.Name(), d.Warnings)
		}
	}
	if _, err := policy.New("gavel.las-ss", []byte(`{"agnostic": true}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("agnostic space sharing: err = %v, want ErrInvalidConfig", err)
	}
}

func TestSpaceSharingRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for i := range 20 {
		s := randomSnapshot(rng, 2+rng.IntN(10), 3, 2+rng.IntN(8))
		for a := range s.Jobs {
			s.Jobs[a].StepsTotal = 1000
			for b := range a {
				ja, jb := &s.Jobs[a], &s.Jobs[b]
				if ja.GPUs != jb.GPUs || rng.IntN(2) == 0 {
					continue
				}
				fa, fb := 0.3+0.6*rng.Float64(), 0.3+0.6*rng.Float64()
				for _, e := range []struct {
					j    *policy.Job
					with string
					f    float64
				}{{ja, jb.ID, fa}, {jb, ja.ID, fb}} {
					m := map[allocation.Accelerator]float64{}
					for k, v := range e.j.Throughput {
						m[k] = v * e.f
					}
					if e.j.Colocated == nil {
						e.j.Colocated = map[string]map[allocation.Accelerator]float64{}
					}
					e.j.Colocated[e.with] = m
				}
			}
		}
		var objectives []float64
		for _, solver := range allocation.Solvers() {
			las, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			d, err := (&MaxMinFairness{SpaceSharing: true, Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("instance %d %s: %v", i, solver, err)
			}
			if err := d.Allocation.Validate(s.Cluster); err != nil {
				t.Errorf("instance %d %s: %v", i, solver, err)
			}
			// Pairs only add options: never worse than time-slicing.
			if d.Objective < las.Objective*(1-1e-7) {
				t.Errorf("instance %d %s: LAS-SS %v below LAS %v", i, solver, d.Objective, las.Objective)
			}
			objectives = append(objectives, d.Objective)
		}
		for _, o := range objectives[1:] {
			if math.Abs(o-objectives[0]) > 1e-7*max(1, objectives[0]) {
				t.Errorf("instance %d: engines disagree: %v", i, objectives)
			}
		}
	}
}
