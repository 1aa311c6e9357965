package statetest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/dlsched/dlsched/policy"
)

// Soak plays w's rounds through a policy.Runner, as a scheduler runs a
// policy: the Runner saves the policy's state after every decision into a
// store, and before each round in kills it is stopped, as if its process
// died, and a new Runner over a fresh policy from New and the same store
// takes over. It returns the rounds, which must equal those of the same
// world played with no kills; Soak itself fails t if a decision places a
// job that is not in its snapshot, or the Runner reports an error.
func Soak(t *testing.T, w World, New func() policy.Stateful, kills []int) []Round {
	t.Helper()
	store := &store{}
	st := world{}
	var (
		out  []Round
		last *policy.Snapshot
		i    int
	)
	for i < w.Rounds {
		ctx, stop := context.WithCancel(context.Background())
		r := &policy.Runner{
			Policy:      New(),
			State:       store,
			MinInterval: -1,
			Snapshot: func(context.Context) (*policy.Snapshot, error) {
				last = w.snapshot(i, st)
				return last, nil
			},
			OnError: func(err error) { t.Errorf("round %d: %v", i, err) },
		}
		r.OnDecision = func(d *policy.Decision) {
			out = append(out, round(t, i, last, d))
			w.advance(last, d, st)
			if i++; i == w.Rounds || slices.Contains(kills, i) {
				stop()
				return
			}
			r.Trigger()
		}
		if err := r.Run(ctx); err != context.Canceled {
			t.Fatalf("round %d: Run returned %v, want context.Canceled", i, err)
		}
		stop()
	}
	return out
}

// round records round i's decision d on snapshot s, checking that it
// names only the snapshot's jobs and places each at most once.
func round(t *testing.T, i int, s *policy.Snapshot, d *policy.Decision) Round {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("round %d: marshal the decision: %v", i, err)
	}
	r := Round{Now: s.Now, Decision: string(b), Wake: d.Wake}
	in := make(map[string]bool, len(s.Jobs))
	for _, j := range s.Jobs {
		r.Jobs = append(r.Jobs, j.ID)
		in[j.ID] = true
	}
	for id := range d.Placement {
		if !in[id] {
			t.Errorf("round %d: job %q is placed but not in the snapshot", i, id)
		}
	}
	return r
}

// store is a policy.StateStore in memory.
type store struct {
	mu    sync.Mutex
	state json.RawMessage
}

func (s *store) Load(context.Context) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.state), nil
}

func (s *store) Save(_ context.Context, b json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = slices.Clone(b)
	return nil
}
