package tiresias_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/tiresias"
)

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs run, under both policies.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4},
		{ID: "b", Accelerator: "k80", GPUs: 4},
	}}
	both := func(id string, gpus int) policy.Job {
		j := job(id, gpus, 0, 0)
		j.Throughput = map[allocation.Accelerator]float64{"v100": 2, "k80": 1}
		return j
	}
	neg := both("neg", 1)
	neg.Weight = -1
	jobs := []policy.Job{both("g1", 1), both("big", 8), neg, both("g2", 2)}
	for _, name := range []string{"tiresias.las", "tiresias.gittins"} {
		p, err := policy.New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := decide(t, p, c, 10, jobs...)
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("%s: Unscheduled = %q; want big (gpus) and neg (weight)", name, d.Unscheduled)
		}
		if got := runningIDs(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("%s: running %v; want [g1 g2]", name, got)
		}
	}
}

// A job left out keeps its place in the queues while it is in the
// snapshot: its queue and its clocks, here the service base of a promotion,
// which put it back in Q0 when it returns instead of in Q1 as a new job.
func TestScreenKeepsLeftOutPlace(t *testing.T) {
	c := servers(1, 1)
	p := &tiresias.LAS{Queues: tiresias.Queues{Thresholds: []float64{100}, PromoteKnob: 1, State: tiresias.State{
		Seen: 10, Jobs: map[string]tiresias.JobState{"a": {Queue: 0, Order: 0, Base: 1000, Promotions: 1}},
	}}}
	bad := job("a", 1, 0, 1020)
	bad.Placement = []allocation.Assignment{{Server: "nowhere", GPUs: 1}}
	d, err := p.Allocate(context.Background(), &policy.Snapshot{Now: secs(20), Cluster: c, Jobs: []policy.Job{bad, job("b", 1, 5, 200)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Unscheduled["a"], "placement") || !slices.Equal(runningIDs(d), []string{"b"}) {
		t.Fatalf("left out %q, running %v; want a left out for placement, b running", d.Unscheduled, runningIDs(d))
	}
	if st, ok := p.State.Jobs["a"]; !ok || st.Queue != 0 || st.Base != 1000 || st.Promotions != 1 {
		t.Fatalf("state of a: %+v, %v; want kept in Q0 with base 1000", st, ok)
	}
	// Back, a has 20 GPU-seconds of service since its promotion: Q0, ahead
	// of b in Q1.
	if got := runningIDs(decide(t, p, c, 30, job("a", 1, 0, 1020), job("b", 1, 5, 210))); !slices.Equal(got, []string{"a"}) {
		t.Errorf("a is back: running %v, want a", got)
	}
}

// Tiresias reads Skew to consolidate; a job whose skew is unknown (zero) is
// not left out but spread like a model with small tensors.
func TestScreenUnknownSkew(t *testing.T) {
	c := servers(3, 4)
	busy := []policy.Job{job("s1", 1, 0, 10, on("a", 1)), job("s2", 1, 0, 10, on("b", 1))}
	for _, p := range []policy.Policy{&tiresias.LAS{}, &tiresias.Gittins{}} {
		d := decide(t, p, c, 10, append(slices.Clone(busy), job("x", 8, 5, 0))...)
		if got := d.Placement["x"]; len(d.Unscheduled) != 0 || len(got) != 3 {
			t.Errorf("%s: x placed on %v, left out %v; want it spread over 3 servers", p.Name(), got, d.Unscheduled)
		}
	}
}
