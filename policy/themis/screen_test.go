package themis_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/themis"
)

func leased(d *policy.Decision) []string {
	var ids []string
	for id, g := range d.Allocation {
		if g.Busy() > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs get leases.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4},
		{ID: "b", Accelerator: "k80", GPUs: 4},
	}}
	mk := func(id string, gpus int) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, StepsTotal: 1000, Throughput: map[allocation.Accelerator]float64{"v100": 2, "k80": 1}}
	}
	neg := mk("neg", 1)
	neg.Weight = -1
	s := &policy.Snapshot{Now: time.Minute, Cluster: c, Jobs: []policy.Job{mk("g1", 1), mk("big", 8), neg, mk("g2", 2)}}
	p, err := policy.New("themis", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []policy.Policy{&themis.Themis{}, p} {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("%T: Unscheduled = %q; want big (gpus) and neg (weight)", p, d.Unscheduled)
		}
		if got := leased(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("%T: leased to %v; want [g1 g2]", p, got)
		}
	}
}

// Themis needs a job's length for its ρ. A job without one never bids, but
// gets the GPUs the bidders leave, and is never left out.
func TestScreenUnknownLength(t *testing.T) {
	one := func(gpus int) allocation.Cluster {
		return allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: gpus}}}
	}
	known := policy.Job{ID: "known", GPUs: 1, StepsTotal: 1000, Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	blind := policy.Job{ID: "blind", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	for gpus, want := range map[int][]string{1: {"known"}, 2: {"blind", "known"}} {
		p := &themis.Themis{}
		d, err := p.Allocate(context.Background(), &policy.Snapshot{Now: time.Minute, Cluster: one(gpus), Jobs: []policy.Job{blind, known}})
		if err != nil {
			t.Fatal(err)
		}
		if got := leased(d); len(d.Unscheduled) != 0 || !slices.Equal(got, want) {
			t.Errorf("%d GPUs: leased to %v, left out %v; want %v", gpus, got, d.Unscheduled, want)
		}
		if !(d.Objective > 1) { // the known job has waited a minute
			t.Errorf("%d GPUs: objective %v; want the known job's ρ > 1", gpus, d.Objective)
		}
	}
}
