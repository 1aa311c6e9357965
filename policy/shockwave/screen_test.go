package shockwave_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/shockwave"
)

func epochs(id string, gpus int) policy.Job {
	return policy.Job{
		ID: id, GPUs: gpus, Throughput: map[allocation.Accelerator]float64{"v100": 2, "k80": 1},
		Adaptive: &policy.Adaptive{Regimes: []int{32, 64}, EpochSeconds: []float64{60, 30}, Epochs: 10, History: []int{2, 0}},
	}
}

func running(d *policy.Decision) []string { return slices.Sorted(maps.Keys(d.Placement)) }

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs run, and a left-out job keeps its
// fair-finish-time history.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4},
		{ID: "b", Accelerator: "k80", GPUs: 4},
	}}
	neg := epochs("neg", 1)
	neg.Weight = -1
	s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{epochs("g1", 2), epochs("big", 8), neg, epochs("g2", 4)}}
	for _, p := range []policy.Policy{&shockwave.Shockwave{}, mustNew(t, "shockwave")} {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Allocation.Validate(c); err != nil {
			t.Fatal(err)
		}
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("Unscheduled = %q; want big (gpus) and neg (weight)", d.Unscheduled)
		}
		if got := running(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("running %v; want [g1 g2]", got)
		}
	}

	p := &shockwave.Shockwave{}
	s = &policy.Snapshot{Cluster: c, Jobs: []policy.Job{epochs("g1", 2), epochs("g2", 4)}}
	if _, err := p.Allocate(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(p.State.Fair["g2"])
	s.Now = time.Minute
	s.Jobs[1].Weight = -1
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Unscheduled["g2"]; !ok || !slices.Equal(running(d), []string{"g1"}) {
		t.Fatalf("running %v, left out %v; want g1 running, g2 left out", running(d), d.Unscheduled)
	}
	if diff := cmp.Diff(before, p.State.Fair["g2"]); diff != "" || !slices.Equal(p.State.Jobs, []string{"g1"}) {
		t.Errorf("g2's history (-before +after):\n%s\nplanned for %v; want g1 alone", diff, p.State.Jobs)
	}
}

// Shockwave's fact is Adaptive. A job without it is one regime of its
// steps and is planned; a job with neither Adaptive nor StepsTotal is not
// planned but takes a GPU the round leaves idle. Neither is left out.
func TestScreenNoAdaptive(t *testing.T) {
	one := func(gpus int) allocation.Cluster {
		return allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: gpus}}}
	}
	steps := policy.Job{ID: "steps", GPUs: 1, StepsTotal: 1000, Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	blind := policy.Job{ID: "blind", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	for _, tc := range []struct {
		gpus    int
		want    []string
		planned []string
	}{
		{1, nil, []string{"g", "steps"}}, // one planned job runs, which the plan says
		{2, []string{"g", "steps"}, []string{"g", "steps"}},
		{3, []string{"blind", "g", "steps"}, []string{"g", "steps"}},
	} {
		p := &shockwave.Shockwave{}
		s := &policy.Snapshot{Cluster: one(tc.gpus), Jobs: []policy.Job{epochs("g", 1), steps, blind}}
		s.Jobs[0].Throughput = map[allocation.Accelerator]float64{"v100": 1}
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Unscheduled) != 0 {
			t.Errorf("%d GPUs: left out %v; want none", tc.gpus, d.Unscheduled)
		}
		if got := running(d); tc.gpus > 1 && !slices.Equal(got, tc.want) {
			t.Errorf("%d GPUs: running %v; want %v", tc.gpus, got, tc.want)
		}
		if got := running(d); tc.gpus == 1 && (len(got) != 1 || got[0] == "blind") {
			t.Errorf("1 GPU: running %v; want one planned job", got)
		}
		if !slices.Equal(p.State.Jobs, tc.planned) {
			t.Errorf("%d GPUs: planned for %v; want %v", tc.gpus, p.State.Jobs, tc.planned)
		}
	}
}

func mustNew(t *testing.T, name string) policy.Policy {
	t.Helper()
	p, err := policy.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
