package themis

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/internal/statetest"
)

// stateWorld is a cluster of 4 V100s and 2 K80s with six jobs of 1 and 2
// GPUs that arrive over four minutes, in rounds of 60 s, under leases of
// three rounds: leases are auctioned, expire and are auctioned again, and
// jobs finish, within its 14 rounds.
func stateWorld() statetest.World {
	j := func(id string, gpus int, arrival, steps, v100, k80 float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)), StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{"v100": v100, "k80": k80}}
	}
	return statetest.World{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "v0", Accelerator: "v100", GPUs: 4}, {ID: "k0", Accelerator: "k80", GPUs: 2},
		}},
		Jobs: []policy.Job{
			j("a", 1, 0, 1000, 2, 1), j("b", 2, 0, 700, 1.5, 0.5), j("c", 1, 0, 500, 1, 0.8),
			j("d", 2, 60, 600, 2, 0.4), j("e", 1, 120, 400, 1, 1), j("f", 1, 240, 300, 3, 0.6),
		},
		Round:  time.Minute,
		Rounds: 14,
	}
}

// Themis restored from its saved state decides as one that was never
// stopped. The state matters: a fresh policy forgets the live leases and
// auctions every GPU again, and decides differently (statetest checks it,
// Matters).
func TestStateRestore(t *testing.T) {
	res := statetest.Check(t, statetest.Case{
		World:   stateWorld(),
		New:     func() policy.Stateful { return &Themis{LeaseRounds: 3, RoundSeconds: 60} },
		State:   func(p policy.Stateful) any { return p.(*Themis).State },
		Matters: true,
		Invalid: []string{
			`{"leases": [{"job": "", "accelerator": "v100", "share": 0.5, "expires": 60}]}`,
			`{"leases": [{"job": "a", "accelerator": "", "share": 0.5, "expires": 60}]}`,
			`{"leases": [{"job": "a", "accelerator": "v100", "share": 0, "expires": 60}]}`,
			`{"leases": [{"job": "a", "accelerator": "v100", "share": 1.5, "expires": 60}]}`,
			`{"leases": [{"job": "a", "accelerator": "v100", "share": 0.5, "expires": -1}]}`,
			`{"leases": [{"job": "a", "accelerator": "v100", "share": 0.5, "expires": 60, "price": 1}]}`,
			`{"leases": [{"job": "a", "accelerator": "v100", "share": 1, "expires": 60}, {"job": "a", "accelerator": "k80", "share": 0.25, "expires": 60}]}`,
		},
	})
	t.Logf("a fresh policy diverges when it takes over before rounds %v", res.Diverged)
	// Leases outlive a round, and some expire while their job still runs.
	kept, renewed := false, false
	for i := 1; i < len(res.States); i++ {
		var prev, cur State
		if err := json.Unmarshal(res.States[i-1], &prev); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(res.States[i], &cur); err != nil {
			t.Fatal(err)
		}
		for _, l := range cur.Leases {
			for _, o := range prev.Leases {
				if o.Job == l.Job {
					kept = kept || o == l
					renewed = renewed || o.Expires < l.Expires
				}
			}
		}
	}
	if !kept || !renewed {
		t.Errorf("a lease kept across rounds: %v, a job leased again after expiry: %v; want both", kept, renewed)
	}
}

// A State set by hand, not through RestoreState, may give a job more than
// its whole time; Allocate keeps only the leases that fit in it, so the
// allocation stays valid.
func TestStateOverlappingLeases(t *testing.T) {
	w := stateWorld()
	s := &policy.Snapshot{Now: time.Minute, Cluster: w.Cluster, Jobs: w.Jobs[:3]}
	p := &Themis{LeaseRounds: 3, RoundSeconds: 60, State: State{Leases: []Lease{
		{Job: "a", Accelerator: "v100", Share: 1, Expires: 120},
		{Job: "a", Accelerator: "k80", Share: 1, Expires: 120},
	}}}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatalf("allocation from overlapping leases: %v", err)
	}
	if got := d.Allocation.Share("a", "v100"); got != 1 {
		t.Errorf("job a's first lease (v100, share 1) gives it %v of a v100, want 1", got)
	}
}
