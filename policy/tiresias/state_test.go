package tiresias_test

import (
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/internal/statetest"
	"github.com/dlsched/dlsched/policy/tiresias"
)

// stateWorld is a contended 4-GPU cluster on two servers with six jobs of
// 1 to 4 GPUs that arrive over two minutes and run for 60 to 300 s, in
// rounds of 30 s: with queue limits of 60 and 240 GPU-seconds, jobs are
// demoted, preempted, promoted back and finish within its 16 rounds.
func stateWorld() statetest.World {
	j := func(id string, gpus int, arrival, steps float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)), StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	}
	return statetest.World{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "a", Accelerator: "v100", GPUs: 2}, {ID: "b", Accelerator: "v100", GPUs: 2},
		}},
		Jobs: []policy.Job{
			j("j1", 2, 0, 300), j("j2", 1, 0, 120), j("j3", 2, 30, 200),
			j("j4", 1, 60, 90), j("j5", 4, 90, 150), j("j6", 1, 120, 60),
		},
		Round:  30 * time.Second,
		Rounds: 16,
	}
}

// stateQueues are the queues of the test: three, with promotion.
func stateQueues() tiresias.Queues {
	return tiresias.Queues{Thresholds: []float64{60, 240}, PromoteKnob: 1}
}

// A Tiresias policy restored from its saved state decides as one that was
// never stopped. The state matters: a fresh policy forgets the order in
// which jobs entered their queues and the promotion clocks, and decides
// differently (statetest checks it, Matters).
func TestStateRestore(t *testing.T) {
	invalid := []string{
		`{"seen": -1}`,
		`{"seen": 0, "jobs": {"j1": {"queue": 3, "order": 0}}}`, // three queues: 0 to 2
		`{"seen": 0, "jobs": {"j1": {"queue": -1, "order": 0}}}`,
		`{"seen": 0, "jobs": {"j1": {"queue": 1, "order": 0, "pending": -5}}}`,
		`{"seen": 0, "jobs": {"j1": {"queue": 1, "order": 0, "base": -1}}}`,
		`{"seen": 0, "jobs": {"j1": {"queue": 1, "order": 0, "promotions": -1}}}`,
		`{"seen": 0, "jobs": {"j1": {"queue": 1, "order": 0, "extra": 1}}}`,
	}
	t.Run("las", func(t *testing.T) {
		res := statetest.Check(t, statetest.Case{
			World:   stateWorld(),
			New:     func() policy.Stateful { return &tiresias.LAS{Queues: stateQueues()} },
			State:   func(p policy.Stateful) any { return p.(*tiresias.LAS).State },
			Matters: true,
			Invalid: invalid,
		})
		t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
	})
	t.Run("gittins", func(t *testing.T) {
		res := statetest.Check(t, statetest.Case{
			World: stateWorld(),
			New: func() policy.Stateful {
				return &tiresias.Gittins{Queues: stateQueues(), Samples: []float64{60, 120, 200, 400, 600, 1200}, Quantum: 100}
			},
			State:   func(p policy.Stateful) any { return p.(*tiresias.Gittins).State },
			Matters: true,
			Invalid: invalid,
		})
		t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
	})
}
