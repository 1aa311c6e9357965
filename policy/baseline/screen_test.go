package baseline_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/baseline"
)

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs run, under every policy (FIFO's head
// is not blocked by a job that can never run).
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4},
		{ID: "b", Accelerator: "k80", GPUs: 4},
	}}
	both := func(id string, gpus int, arrival float64) policy.Job {
		j := job(id, gpus, arrival, 100)
		j.Throughput = map[allocation.Accelerator]float64{"v100": 2, "k80": 1}
		return j
	}
	neg := both("neg", 1, 2)
	neg.Weight = -1
	jobs := []policy.Job{both("big", 8, 0), neg, both("g1", 1, 1), both("g2", 2, 3)}
	for _, p := range policies() {
		d := allocate(t, p, c, jobs...)
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("%s: Unscheduled = %q; want big (gpus) and neg (weight)", p.Name(), d.Unscheduled)
		}
		if got := running(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("%s: running %v; want [g1 g2]", p.Name(), got)
		}
	}
}

// SRTF and SRSF need a job's length; without it the job ranks last and is
// scheduled when GPUs are left, never failing the round.
func TestScreenUnknownLength(t *testing.T) {
	unknown := job("u", 2, 0, 0)
	for _, p := range []policy.Policy{&baseline.SRTF{}, &baseline.SRSF{}} {
		d := allocate(t, p, servers(4), unknown, job("a", 2, 5, 100), job("b", 2, 6, 50))
		if got := running(d); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("%s: running %v, left out %v; want a and b ahead of u", p.Name(), got, d.Unscheduled)
		}
		d = allocate(t, p, servers(4), unknown, job("a", 2, 5, 100))
		if got := running(d); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"a", "u"}) {
			t.Errorf("%s: running %v, left out %v; want a and u", p.Name(), got, d.Unscheduled)
		}
	}
}
