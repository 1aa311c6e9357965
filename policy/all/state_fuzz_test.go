package all_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/dlsched/dlsched/policy"
)

// FuzzRestoreState feeds every stateful policy arbitrary saved state. A
// state is either rejected with policy.ErrInvalidConfig, or accepted; then
// the policy decides on snapshots, failing at most with a documented
// refusal (ErrInvalidSnapshot: a snapshot older than the state's last
// decision), and saves a state that it accepts again. Nothing panics.
func FuzzRestoreState(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 7))
	snaps := []*policy.Snapshot{randomWorld(r).s, randomWorld(r).s}
	var stateful []setting
	for _, st := range settings() {
		p, err := policy.New(st.name, []byte(st.config))
		if err != nil {
			f.Fatal(err)
		}
		sp, ok := p.(policy.Stateful)
		if !ok {
			continue
		}
		stateful = append(stateful, st)
		// Seed with a real state: the policy's own after two decisions.
		for _, s := range snaps {
			if _, err := sp.Allocate(context.Background(), s); err != nil {
				f.Fatal(err)
			}
		}
		b, err := sp.SaveState()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(len(stateful)-1), []byte(b))
	}
	f.Add(uint8(0), []byte(`{"jobs":{"x":{"queue":-1}}}`))
	f.Add(uint8(1), []byte(`null`))
	f.Fuzz(func(t *testing.T, which uint8, state []byte) {
		st := stateful[int(which)%len(stateful)]
		name := st.label
		p, _ := policy.New(st.name, []byte(st.config))
		sp := p.(policy.Stateful)
		if err := sp.RestoreState(json.RawMessage(state)); err != nil {
			if !errors.Is(err, policy.ErrInvalidConfig) {
				t.Fatalf("%s: restoring %q: %v, want ErrInvalidConfig", name, state, err)
			}
			return
		}
		for _, s := range snaps {
			if _, err := sp.Allocate(context.Background(), s); err != nil && !errors.Is(err, policy.ErrInvalidSnapshot) {
				t.Fatalf("%s: after restoring %q: %v", name, state, err)
			}
		}
		saved, err := sp.SaveState()
		if err != nil {
			t.Fatalf("%s: save after restoring %q: %v", name, state, err)
		}
		q, _ := policy.New(st.name, []byte(st.config))
		if err := q.(policy.Stateful).RestoreState(saved); err != nil {
			t.Fatalf("%s: its own saved state %s is rejected: %v", name, saved, err)
		}
	})
}
