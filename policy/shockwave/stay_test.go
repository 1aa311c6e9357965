package shockwave

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// A running job whose GPUs the planned job takes waits rather than restart
// on the GPU left idle: on s0 (2 GPUs) and s1 (1), the planned job a of 2
// GPUs goes to s0, where u runs; u does not move to s1.
func TestDecidePreemptedWaits(t *testing.T) {
	s := &policy.Snapshot{Cluster: allocation.Cluster{Servers: []allocation.Server{
		{ID: "s0", Accelerator: "v100", GPUs: 2}, {ID: "s1", Accelerator: "v100", GPUs: 1},
	}}}
	a := &job{j: &policy.Job{ID: "a", GPUs: 2}, width: 2, remaining: 10}
	u := &job{j: &policy.Job{ID: "u", GPUs: 1, Placement: []allocation.Assignment{{Server: "s0", GPUs: 1}}}, width: 1, remaining: 100}
	d := &policy.Decision{Allocation: allocation.Allocation{}}
	(&Shockwave{}).decide(s, []*job{a, u}, []string{"a"}, nil, d)
	want := map[string][]allocation.Assignment{"a": {{Server: "s0", GPUs: 2}}}
	if diff := cmp.Diff(want, d.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
}
