package allox_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/allox"
)

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs start.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := cluster(server("a", "v100", 4), server("b", "k80", 4))
	big := newJob("big", 8, 0, 100, thr{"v100": 1, "k80": 1})
	neg := newJob("neg", 1, 0, 100, thr{"v100": 1})
	neg.Weight = -1
	s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{
		newJob("g1", 2, 0, 100, thr{"v100": 2, "k80": 1}),
		big,
		neg,
		newJob("g2", 4, 0, 100, thr{"k80": 1}),
	}}
	for _, p := range []policy.Policy{&allox.AlloX{}, mustNew(t, "allox")} {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		checkDecision(t, s, d)
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("Unscheduled = %q; want big (gpus) and neg (weight)", d.Unscheduled)
		}
		if got := d.Allocation.IDs(); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("scheduled %v; want [g1 g2]", got)
		}
	}
}

// AlloX needs a waiting job's length; one without it comes after the jobs
// whose length is known, and a running one keeps its GPUs.
func TestScreenUnknownLength(t *testing.T) {
	c := cluster(server("s", "v100", 1))
	known := newJob("known", 1, 10, 100, thr{"v100": 1})
	unknown := newJob("unknown", 1, 0, 0, thr{"v100": 1}) // waited longer
	s := &policy.Snapshot{Now: sec(20), Cluster: c, Jobs: []policy.Job{known, unknown}}
	d := decide(t, &allox.AlloX{}, s)
	if got := d.Allocation.IDs(); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"known"}) {
		t.Errorf("started %v, left out %v; want known to start and unknown to wait", got, d.Unscheduled)
	}
	unknown.Placement = []allocation.Assignment{{Server: "s", GPUs: 1}}
	s.Jobs = []policy.Job{known, unknown}
	d = decide(t, &allox.AlloX{}, s)
	if got := d.Allocation.IDs(); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"unknown"}) {
		t.Errorf("started %v, left out %v; want the running job of unknown length kept", got, d.Unscheduled)
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
