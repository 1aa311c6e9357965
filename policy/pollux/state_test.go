package pollux_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/internal/statetest"
	"github.com/dlsched/dlsched/policy/pollux"
	"github.com/dlsched/dlsched/throughput"
)

// stateWorld is five 4-GPU T4 servers shared by eight fitted elastic jobs,
// with gradient noise from low to high, and one fixed 2-GPU job, arriving
// over four minutes, in rounds of 60 s: each round's search starts from
// the last one's population, and jobs finish, within its 10 rounds.
func stateWorld() statetest.World {
	perf := throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}
	elastic := func(id string, arrival, steps, noise float64) policy.Job {
		return policy.Job{ID: id, Arrival: time.Duration(arrival * float64(time.Second)), StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{"t4": 1},
			Elastic: &policy.Elastic{BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64, LocalBatchMax: 256,
				Perf: perf, GradSqr: 0.00136, GradVar: 0.000502 * noise}}
	}
	fixed := policy.Job{ID: "x", GPUs: 2, Arrival: time.Minute, StepsTotal: 240,
		Throughput: map[allocation.Accelerator]float64{"t4": 1}}
	return statetest.World{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "n0", Accelerator: "t4", GPUs: 4}, {ID: "n1", Accelerator: "t4", GPUs: 4}, {ID: "n2", Accelerator: "t4", GPUs: 4},
			{ID: "n3", Accelerator: "t4", GPUs: 4}, {ID: "n4", Accelerator: "t4", GPUs: 4},
		}},
		Jobs: []policy.Job{
			elastic("a", 0, 420, 0.1), elastic("b", 0, 300, 1), elastic("c", 60, 480, 10), fixed,
			elastic("d", 120, 300, 100), elastic("e", 240, 300, 1), elastic("f", 0, 400, 3), elastic("g", 60, 500, 30),
			elastic("h", 180, 350, 0.3),
		},
		Round:  time.Minute,
		Rounds: 10,
	}
}

// statePollux is the configuration of the test: a small, fast search.
func statePollux() policy.Stateful {
	return &pollux.Pollux{Population: 10, Generations: 3, Seed: 3}
}

// Pollux restored from its saved population decides as one that was never
// stopped. The state matters: a fresh policy starts its search cold, and
// with a search this short (3 generations of 10) on 9 jobs × 5 nodes it
// decides differently for most restart rounds (statetest checks that it
// does for some, Matters).
func TestStateRestore(t *testing.T) {
	res := statetest.Check(t, statetest.Case{
		World:   stateWorld(),
		New:     statePollux,
		State:   func(p policy.Stateful) any { return p.(*pollux.Pollux).State },
		Matters: true,
		Invalid: []string{
			`{"jobs": ["a", "a"], "nodes": ["n0"], "population": [[1, 1]]}`,
			`{"jobs": ["a"], "nodes": [""], "population": [[1]]}`,
			`{"jobs": ["a", "b"], "nodes": ["n0"], "population": [[1]]}`,
			`{"jobs": ["a"], "nodes": ["n0"], "population": [[-1]]}`,
			`{"jobs": ["a"], "nodes": ["n0"], "population": [[1.5]]}`,
		},
	})
	t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
	var st pollux.State
	if err := json.Unmarshal(res.States[len(res.States)/2], &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Population) != 10 || len(st.Jobs) < 3 {
		t.Errorf("mid-run state holds %d individuals over %d jobs, want 10 over several", len(st.Population), len(st.Jobs))
	}
}
