package all_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
)

// swap replaces the n-th number of a decoded JSON value (depth first, keys
// in order) with v, and reports whether it had that many.
func swap(x any, n *int, v float64) (any, bool) {
	switch y := x.(type) {
	case float64:
		*n--
		if *n < 0 {
			return v, true
		}
	case []any:
		for i := range y {
			var done bool
			if y[i], done = swap(y[i], n, v); done {
				return y, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(y)) {
			var done bool
			if y[k], done = swap(y[k], n, v); done {
				return y, true
			}
		}
	}
	return x, false
}

// Every stateful policy, restored from its own state with one number (each
// in turn, up to 40) made extreme, either refuses the state (ErrInvalidConfig) or goes on
// deciding and saves a state that marshals and restores: a restored ±1e308
// once became an infinity in the next save.
func TestEveryPolicyExtremeState(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	first := randomWorld(r).s
	next := *first
	next.Now += time.Minute
	snaps := []*policy.Snapshot{first, &next}
	for _, st := range settings() {
		p, _ := policy.New(st.name, []byte(st.config))
		sp, ok := p.(policy.Stateful)
		if !ok {
			continue
		}
		if _, err := sp.Allocate(context.Background(), snaps[0]); err != nil {
			t.Fatal(err)
		}
		saved, err := sp.SaveState()
		if err != nil {
			t.Fatal(err)
		}
		for leaf := range 40 {
			for _, v := range extremes {
				for _, v := range []float64{v, -v} {
					ok, err := restoreExtreme(st, saved, leaf, v, snaps[1])
					if !ok {
						break
					}
					if err != nil {
						t.Errorf("%s, number %d = %g: %v", st.label, leaf, v, err)
					}
				}
			}
		}
	}
}

// restoreExtreme restores saved with its leaf-th number set to v and
// decides on s; ok is false when saved has no such number.
func restoreExtreme(st setting, saved json.RawMessage, leaf int, v float64, s *policy.Snapshot) (ok bool, err error) {
	var x any
	if err := json.Unmarshal(saved, &x); err != nil {
		return true, err
	}
	x, ok = swap(x, &leaf, v)
	if !ok {
		return false, nil
	}
	state, _ := json.Marshal(x)
	return true, decideRestored(st, state, s)
}

// decideRestored restores state, decides on s and saves again.
func decideRestored(st setting, state json.RawMessage, s *policy.Snapshot) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	p, _ := policy.New(st.name, []byte(st.config))
	sp := p.(policy.Stateful)
	if err := sp.RestoreState(state); err != nil {
		if errors.Is(err, policy.ErrInvalidConfig) {
			return nil
		}
		return fmt.Errorf("restore %s: %w", state, err)
	}
	d, err := sp.Allocate(context.Background(), s)
	if err != nil && !errors.Is(err, policy.ErrInvalidSnapshot) {
		return fmt.Errorf("restored %s: %w", state, err)
	}
	if _, err := json.Marshal(d); err != nil {
		return fmt.Errorf("restored %s: decision: %w", state, err)
	}
	again, err := sp.SaveState()
	if err != nil {
		return fmt.Errorf("restored %s: save: %w", state, err)
	}
	q, _ := policy.New(st.name, []byte(st.config))
	if err := q.(policy.Stateful).RestoreState(again); err != nil {
		return fmt.Errorf("restored %s: its own state %s is refused: %w", state, again, err)
	}
	return nil
}
