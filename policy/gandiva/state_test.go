package gandiva_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gandiva"
	"github.com/dlsched/dlsched/policy/internal/statetest"
)

// stateWorld oversubscribes two 2-GPU servers with 1- and 2-GPU jobs for
// the first half of its 16 rounds of 30 s, so that sets are time-sliced
// with 60 s quanta and pairs are packed on trial and then kept (a and b,
// norm_sum 1.3) or reverted (c and e, 0.8); once the others have finished,
// the elastic job g grows to 2 GPUs.
func stateWorld() statetest.World {
	j := func(id string, gpus int, arrival, steps float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)), StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{v100: 1}}
	}
	colocate := func(a, b *policy.Job, ta, tb float64) {
		a.Colocated = map[string]map[allocation.Accelerator]float64{b.ID: {v100: ta}}
		b.Colocated = map[string]map[allocation.Accelerator]float64{a.ID: {v100: tb}}
	}
	jobs := []policy.Job{
		j("a", 1, 0, 150), j("b", 1, 0, 120), j("c", 1, 0, 100), j("d", 2, 30, 120),
		j("e", 1, 60, 90), j("f", 1, 90, 60), j("g", 1, 120, 400),
	}
	colocate(&jobs[0], &jobs[1], 0.7, 0.6)
	colocate(&jobs[2], &jobs[4], 0.4, 0.4)
	jobs[6].Elastic = &policy.Elastic{MaxGPUs: 2, BatchSize: 32}
	return statetest.World{
		Cluster: servers(2, 2),
		Jobs:    jobs,
		Round:   30 * time.Second,
		Rounds:  16,
	}
}

// Gandiva restored from its saved state decides as one that was never
// stopped. The state matters: a fresh policy forgets the round-robin order
// of each set, when its slice began and which pairs were measured, and
// decides differently (statetest checks it, Matters).
func TestStateRestore(t *testing.T) {
	res := statetest.Check(t, statetest.Case{
		World:   stateWorld(),
		New:     func() policy.Stateful { return &gandiva.Gandiva{} },
		State:   func(p policy.Stateful) any { return p.(*gandiva.Gandiva).State },
		Matters: true,
		Invalid: []string{
			`{"sets": [{"class": 0, "servers": ["s0"], "jobs": ["a"], "slice_start": 0}]}`,
			`{"sets": [{"class": 1, "servers": [], "jobs": ["a"], "slice_start": 0}]}`,
			`{"sets": [{"class": 1, "servers": ["s0"], "jobs": [], "slice_start": 0}]}`,
			`{"pairs": [{"jobs": ["a", "a"], "status": "kept", "since": 0}]}`,
			`{"pairs": [{"jobs": ["a", "b"], "status": "maybe", "since": 0}]}`,
			`{"grown": {"g": 0}}`,
			`{"migrations": -1}`,
		},
	})
	t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
	// The scenario exercises what the state holds.
	var kept, reverted, grown bool
	for _, s := range res.States {
		var st gandiva.State
		if err := json.Unmarshal(s, &st); err != nil {
			t.Fatal(err)
		}
		for _, pr := range st.Pairs {
			kept = kept || pr.Status == gandiva.Kept
			reverted = reverted || pr.Status == gandiva.Reverted
		}
		grown = grown || len(st.Grown) > 0
	}
	if !kept || !reverted || !grown {
		t.Errorf("over the run: a kept pair %v, a reverted pair %v, a grown job %v; want all", kept, reverted, grown)
	}
}
