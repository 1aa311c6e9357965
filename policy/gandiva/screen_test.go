package gandiva_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gandiva"
)

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs run.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4},
		{ID: "b", Accelerator: "k80", GPUs: 4},
	}}
	both := func(id string, gpus int) policy.Job {
		j := job(id, gpus)
		j.Throughput = map[allocation.Accelerator]float64{"v100": 2, "k80": 1}
		return j
	}
	neg := both("neg", 1)
	neg.Weight = -1
	s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{both("g1", 1), both("big", 8), neg, both("g2", 2)}}
	p := &gandiva.Gandiva{}
	for range 2 { // and again, from the state the first call left
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, d)
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("Unscheduled = %q; want big (gpus) and neg (weight)", d.Unscheduled)
		}
		if got := slices.Sorted(maps.Keys(d.Placement)); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("running %v; want [g1 g2]", got)
		}
		for _, set := range p.State.Sets {
			if slices.Contains(set.Jobs, "big") || slices.Contains(set.Jobs, "neg") {
				t.Errorf("state keeps a left-out job in set %+v", set)
			}
		}
	}
}

// Gandiva reads Colocated for introspection; a pair without it is packed
// for a trial quantum, measures norm_sum 0, and is then time-sliced, never
// failing a round.
func TestScreenNoColocated(t *testing.T) {
	dr := newDriver(t, &gandiva.Gandiva{}, servers(1, 1), job("a", 1), job("b", 1))
	d := dr.at(0)
	if len(d.Unscheduled) != 0 || len(d.Placement) != 2 {
		t.Fatalf("at 0: running %v, left out %v; want a and b packed on trial", dr.running(), d.Unscheduled)
	}
	d = dr.at(time.Minute)
	if len(d.Unscheduled) != 0 || len(d.Placement) != 1 {
		t.Fatalf("at 1m: running %v, left out %v; want one job, the pair reverted", dr.running(), d.Unscheduled)
	}
	if ps := dr.p.State.Pairs; len(ps) != 1 || ps[0].Status != gandiva.Reverted || ps[0].NormSum != 0 {
		t.Errorf("pairs %+v; want a and b reverted at norm_sum 0", ps)
	}
}

// A reverted pair stays reverted while one of its jobs is left out.
func TestScreenKeepsRevertedPair(t *testing.T) {
	p := &gandiva.Gandiva{State: gandiva.State{Pairs: []gandiva.Pair{{Jobs: [2]string{"a", "b"}, Status: gandiva.Reverted}}}}
	b := job("b", 1)
	b.Arrival = time.Hour // after now: left out
	s := &policy.Snapshot{Cluster: servers(1, 1), Jobs: []policy.Job{job("a", 1), b}}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Unscheduled["b"], "arrival") {
		t.Errorf("Unscheduled = %q; want b left out for arrival", d.Unscheduled)
	}
	if ps := p.State.Pairs; len(ps) != 1 || ps[0].Status != gandiva.Reverted {
		t.Errorf("pairs %+v; want a and b still reverted", ps)
	}
}
