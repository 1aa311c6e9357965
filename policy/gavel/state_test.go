package gavel_test

import (
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
	"github.com/dlsched/dlsched/policy/internal/statetest"
)

// ftfStateWorld is a cluster of 2 V100s, 2 P100s and 2 K80s with six jobs
// of 1 and 2 GPUs, of different speeds on each type, arriving over four
// minutes, in rounds of 60 s: isolated-time accounts are opened, credited
// as jobs progress and closed as they finish, within its 10 rounds.
func ftfStateWorld() statetest.World {
	j := func(id string, gpus int, arrival, steps, v100, p100, k80 float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)), StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{"v100": v100, "p100": p100, "k80": k80}}
	}
	return statetest.World{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "v", Accelerator: "v100", GPUs: 2}, {ID: "p", Accelerator: "p100", GPUs: 2}, {ID: "k", Accelerator: "k80", GPUs: 2},
		}},
		Jobs: []policy.Job{
			j("a", 1, 0, 1500, 4, 2, 1), j("b", 2, 0, 900, 3, 2.5, 1), j("c", 1, 0, 600, 2, 1.5, 1.2),
			j("d", 1, 60, 1200, 5, 2, 0.5), j("e", 2, 120, 500, 2, 2, 1), j("f", 1, 240, 600, 3, 1, 1),
		},
		Round:  time.Minute,
		Rounds: 10,
	}
}

// FinishTimeFairness restored from its saved accounts decides as one that
// was never stopped. The state matters: a fresh policy opens every job's
// account at zero, which changes each job's isolated finish time and so
// the allocation (statetest checks it, Matters).
func TestFTFStateRestore(t *testing.T) {
	for _, agnostic := range []bool{false, true} {
		name := map[bool]string{false: "aware", true: "agnostic"}[agnostic]
		t.Run(name, func(t *testing.T) {
			res := statetest.Check(t, statetest.Case{
				World: ftfStateWorld(),
				// Every round's state is checked for its round trip; three
				// restarts keep the test fast with the pure-Go LP engine.
				Restarts: []int{2, 5, 8},
				New:      func() policy.Stateful { return &gavel.FinishTimeFairness{Agnostic: agnostic} },
				State:    func(p policy.Stateful) any { return p.(*gavel.FinishTimeFairness).State },
				Matters:  true,
				Invalid: []string{
					`{"jobs": {"": {"seconds": 1, "steps_done": 1, "rate": 1}}}`,
					`{"jobs": {"a": {"seconds": -1, "steps_done": 1, "rate": 1}}}`,
					`{"jobs": {"a": {"seconds": 1, "steps_done": -1, "rate": 1}}}`,
					`{"jobs": {"a": {"seconds": 1, "steps_done": 1, "rate": -1}}}`,
					`{"jobs": {"a": {"seconds": 1, "steps_done": 1, "rate": 1, "age": 3}}}`,
				},
			})
			t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
		})
	}
}
