package gavel_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
)

// gavelPolicies are the registered Gavel policies, each composed with the
// round mechanism.
func gavelPolicies(t *testing.T) []policy.Policy {
	t.Helper()
	var ps []policy.Policy
	for _, info := range policy.Registered() {
		if !strings.HasPrefix(info.Name, "gavel.") {
			continue
		}
		p, err := policy.New(info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if len(ps) < 10 {
		t.Fatalf("only %d Gavel policies registered", len(ps))
	}
	return ps
}

func screenJob(id string, gpus int) policy.Job {
	return policy.Job{ID: id, GPUs: gpus, StepsTotal: 1000,
		Throughput: map[allocation.Accelerator]float64{"v100": 2, "k80": 1}}
}

// screenCluster is one 4-GPU server of each of two types.
func screenCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4},
		{ID: "b", Accelerator: "k80", GPUs: 4},
	}}
}

func granted(d *policy.Decision) []string {
	ids := d.Allocation.IDs()
	slices.Sort(ids)
	return ids
}

// A job that can never fit and an invalid job are left out with reasons
// that name the field; every Gavel policy schedules the good jobs.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	neg := screenJob("neg", 1)
	neg.Weight = -1
	s := &policy.Snapshot{Now: time.Minute, Cluster: screenCluster(),
		Jobs: []policy.Job{screenJob("g1", 1), screenJob("big", 8), neg, screenJob("g2", 2)}}
	ps := append(gavelPolicies(t), &gavel.MaxMinFairness{}, &gavel.FIFO{}, &gavel.FinishTimeFairness{})
	for _, p := range ps {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if err := d.Allocation.Validate(s.Cluster); err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("%s: Unscheduled = %q; want big (gpus) and neg (weight)", p.Name(), d.Unscheduled)
		}
		if got := granted(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("%s: scheduled %v; want [g1 g2]", p.Name(), got)
		}
	}
}

// A job of unknown length is left out only by the policies that need it
// (finish-time fairness, makespan); min-cost-slo drops its deadline with a
// warning; the others schedule it.
func TestScreenUnknownLength(t *testing.T) {
	nolen := screenJob("nolen", 1)
	nolen.StepsTotal = 0
	nolen.Deadline = time.Hour
	s := &policy.Snapshot{Now: time.Minute, Cluster: screenCluster(), Jobs: []policy.Job{screenJob("g", 1), nolen}}
	for _, p := range gavelPolicies(t) {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		needs := strings.HasPrefix(p.Name(), "gavel.ftf") || strings.HasPrefix(p.Name(), "gavel.makespan")
		switch why, left := d.Unscheduled["nolen"]; {
		case needs && (!left || !strings.HasPrefix(why, "steps_total")):
			t.Errorf("%s: Unscheduled = %q; want nolen left out for steps_total", p.Name(), d.Unscheduled)
		case !needs && (left || !slices.Equal(granted(d), []string{"g", "nolen"})):
			t.Errorf("%s: scheduled %v, left out %q; want both scheduled", p.Name(), granted(d), d.Unscheduled)
		}
		if p.Name() == "gavel.min-cost-slo" && !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, `"nolen"`) }) {
			t.Errorf("%s: warnings %q; want one about nolen's deadline", p.Name(), d.Warnings)
		}
	}
}
