package all_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/internal/statetest"
)

// Crash and restart: every stateful policy, driven by a policy.Runner that
// saves its state after each decision, is killed before random rounds of
// a long run and a fresh one restored from the store goes on. Its
// decisions equal those of the run never stopped, round for round, so no
// job is lost, duplicated or moved by a restart. (Run without the store,
// 20 of the 25 diverge: the state matters, and the test can fail.)
func TestEveryStatefulPolicySurvivesRestarts(t *testing.T) {
	rounds := 60
	if testing.Short() {
		rounds = 20
	}
	for _, st := range settings() {
		p, err := policy.New(st.name, []byte(st.config))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(policy.Stateful); !ok {
			continue
		}
		t.Run(st.label, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(len(st.label))))
			w := soakWorld(r, rounds)
			fresh := func() policy.Stateful {
				q, err := policy.New(st.name, []byte(st.config))
				if err != nil {
					t.Fatal(err)
				}
				return q.(policy.Stateful)
			}
			kills := r.Perm(rounds - 1)[:rounds/6]
			for i := range kills {
				kills[i]++
			}
			slices.Sort(kills)
			want := statetest.Soak(t, w, fresh, nil)
			got := statetest.Soak(t, w, fresh, kills)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("killed before rounds %v: decisions differ from the run never stopped (-never stopped +restarted):\n%s", kills, diff)
			}
		})
	}
}

// soakWorld is a random cluster of two types and jobs of 1 to 4 GPUs that
// arrive over the first third of the run, in rounds of 2 minutes.
func soakWorld(r *rand.Rand, rounds int) statetest.World {
	w := statetest.World{Round: 2 * time.Minute, Rounds: rounds, Cluster: allocation.Cluster{Servers: []allocation.Server{
		{ID: "v0", Accelerator: "v100", GPUs: 4}, {ID: "v1", Accelerator: "v100", GPUs: 4}, {ID: "k0", Accelerator: "k80", GPUs: 4},
	}}}
	for i := range 14 {
		gpus := []int{1, 1, 2, 4}[r.IntN(4)]
		arrival := time.Duration(r.IntN(rounds/3)) * w.Round
		w.Jobs = append(w.Jobs, policy.Job{ID: fmt.Sprintf("j%02d", i), GPUs: gpus, Arrival: arrival, Weight: 1,
			StepsTotal: float64(600 + r.IntN(3000)),
			Throughput: map[allocation.Accelerator]float64{"v100": 1 + r.Float64(), "k80": 0.3 + 0.5*r.Float64()}})
	}
	return w
}
