package shockwave_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/internal/statetest"
	"github.com/dlsched/dlsched/policy/shockwave"
)

// stateWorld is a contended cluster of two 2-GPU servers with seven jobs
// of 1 and 2 GPUs that arrive over five minutes, in rounds of 60 s: plans
// of a 6-round window are made when jobs arrive or finish (at the latest
// every 3 rounds) and kept in between, and the fair-finish-time histories
// grow, until every job has finished in its 12 rounds.
func stateWorld() statetest.World {
	j := func(id string, gpus int, arrival, steps, speed float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)), StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{"v100": speed}}
	}
	return statetest.World{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "s0", Accelerator: "v100", GPUs: 2}, {ID: "s1", Accelerator: "v100", GPUs: 2},
		}},
		Jobs: []policy.Job{
			j("a", 1, 0, 300, 1), j("b", 2, 0, 600, 2), j("c", 1, 0, 240, 1), j("d", 1, 0, 420, 1),
			j("e", 2, 120, 360, 1.5), j("f", 1, 180, 120, 1), j("g", 1, 300, 200, 1),
		},
		Round:  time.Minute,
		Rounds: 12,
	}
}

// Shockwave restored from its saved state decides as one that was never
// stopped. The state matters: a fresh policy has no plan, so it plans again
// at once and from a later start, and it forgets the fair-finish-time
// history; it decides differently (statetest checks it, Matters).
func TestStateRestore(t *testing.T) {
	res := statetest.Check(t, statetest.Case{
		World:   stateWorld(),
		New:     func() policy.Stateful { return &shockwave.Shockwave{Rounds: 6, RoundSeconds: 60, Replan: 3} },
		State:   func(p policy.Stateful) any { return p.(*shockwave.Shockwave).State },
		Matters: true,
		Invalid: []string{
			`{"start": -60}`,
			`{"plan": [["b", "a"]], "jobs": ["a", "b"]}`,
			`{"plan": [["a", "a"]], "jobs": ["a"]}`,
			`{"plan": [[""]], "jobs": [""]}`,
			`{"plan": [["a"]], "jobs": ["b", "a"]}`,
			`{"fair": {"": [{"at": 0, "finish": 60}]}}`,
			`{"fair": {"a": [{"at": 0, "finish": 60, "weight": 1}]}}`,
		},
	})
	t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
	// The plan is kept for some rounds, and made again.
	plans := map[float64]bool{}
	longest := 0
	for _, b := range res.States {
		var st shockwave.State
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		plans[st.Start] = true
		for _, es := range st.Fair {
			longest = max(longest, len(es))
		}
	}
	if len(plans) < 3 || len(plans) >= len(res.States) || longest < 2 {
		t.Errorf("%d plans in %d rounds, histories of up to %d estimates; want several plans, some kept, and a history", len(plans), len(res.States), longest)
	}
}
