package sim

import (
	"context"
	"errors"
	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/workload"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
	"github.com/google/go-cmp/cmp"
)

// A share policy composed with the round mechanism (what policy.New
// returns for gavel.*) simulates exactly as the bare share policy placed by
// the engine's own mechanism: moving the mechanism into the policy changed
// no number, with and without throttled recomputation.
func TestRoundsMatchEngineMechanism(t *testing.T) {
	jobs, err := workload.Generator{Seed: 3, Jobs: 40, Rate: 6, MultiGPU: true}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, recompute := range []time.Duration{0, 1920 * time.Second} {
		run := func(p policy.Policy) *Result {
			res, err := (&Simulation{Cluster: simtest.Cluster(8), Policy: p, Recompute: recompute}).Run(context.Background(), jobs)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		bare := run(&gavel.MaxMinFairness{})
		composed := run(&policy.Rounds{Shares: &gavel.MaxMinFairness{}})
		if diff := cmp.Diff(bare.Jobs, composed.Jobs); diff != "" {
			t.Errorf("recompute %v: jobs differ (-engine's mechanism +policy.Rounds):\n%s", recompute, diff)
		}
		if len(bare.Rounds) != len(composed.Rounds) {
			t.Errorf("recompute %v: %d rounds, want %d", recompute, len(composed.Rounds), len(bare.Rounds))
		}
	}
}

// A job that can never fit is left out by the policy and dropped by the
// engine, unfinished and with the reason; the others run to completion.
func TestUnscheduledJobsAreDropped(t *testing.T) {
	jobs, err := workload.Generator{Seed: 1, Jobs: 6, Rate: 6}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	big := jobs[2]
	big.ID, big.GPUs = "huge", 64
	jobs = append(jobs, big)
	p, err := policy.New("gavel.las", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&Simulation{Cluster: simtest.Cluster(8), Policy: p}).Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Jobs {
		switch {
		case r.ID == "huge" && (r.Finished || r.Unscheduled == ""):
			t.Errorf("huge: finished %v, unscheduled %q; want dropped with a reason", r.Finished, r.Unscheduled)
		case r.ID != "huge" && !r.Finished:
			t.Errorf("job %s did not finish", r.ID)
		}
	}
}

// idler asks to be woken every second and never runs anything.
type idler struct{}

func (idler) Name() string { return "test.idle" }
func (idler) Allocate(_ context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return &policy.Decision{Placement: map[string][]allocation.Assignment{}, Wake: s.Now + time.Second}, nil
}

// A policy that keeps waking without ever running the waiting jobs stalls
// the simulation with an error, never a hang.
func TestStallWithWake(t *testing.T) {
	jobs, err := workload.Generator{Seed: 1, Jobs: 2}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Simulation{Cluster: simtest.Cluster(4), Policy: idler{}, Events: true}).Run(context.Background(), jobs)
	if !errors.Is(err, ErrStalled) {
		t.Errorf("err = %v, want ErrStalled", err)
	}
}
