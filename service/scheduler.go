package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/dlsched/dlsched/policy"
)

// Status describes one scheduler.
type Status struct {
	Name string `json:"name"`
	Spec
	// Decisions counts the decisions served since it was created.
	Decisions int64 `json:"decisions"`
}

// scheduler is one named policy instance. Its calls take turns through
// turn, a lock that a waiting request can give up on when its context
// ends.
type scheduler struct {
	name string
	spec Spec
	file string // "" when kept in memory only

	turn      chan struct{}
	p         policy.Policy
	saved     json.RawMessage // the policy's state after its last decision
	decisions atomic.Int64
}

// record is a scheduler's file.
type record struct {
	Spec
	State     json.RawMessage `json:"state,omitempty"`
	Decisions int64           `json:"decisions"`
}

func newScheduler(name string, spec Spec, file string) (*scheduler, error) {
	p, err := spec.build()
	if err != nil {
		return nil, err
	}
	return &scheduler{name: name, spec: spec, file: file, turn: make(chan struct{}, 1), p: p}, nil
}

// load reads a scheduler saved by persist.
func load(file, name string) (*scheduler, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("service: loading scheduler %q: %w", name, err)
	}
	var r record
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("service: loading scheduler %q from %s: %w", name, file, err)
	}
	sc, err := newScheduler(name, r.Spec, file)
	if err != nil {
		return nil, fmt.Errorf("service: loading scheduler %q from %s: %w", name, file, err)
	}
	if err := sc.restore(r.State); err != nil {
		return nil, fmt.Errorf("service: loading scheduler %q from %s: %w", name, file, err)
	}
	sc.decisions.Store(r.Decisions)
	return sc, nil
}

// restore puts state into a fresh instance of the scheduler's policy, so
// that nothing a failed decision left behind survives.
func (sc *scheduler) restore(state json.RawMessage) error {
	p, err := sc.spec.build()
	if err != nil {
		return err
	}
	if st, ok := p.(policy.Stateful); ok && len(state) > 0 {
		if err := st.RestoreState(state); err != nil {
			return err
		}
	}
	sc.p, sc.saved = p, state
	return nil
}

// decide runs one round: it waits for its turn (or for ctx), decides, and
// saves the new state before it returns. A failed decision or save puts
// the policy back to its last saved state.
func (sc *scheduler) decide(ctx context.Context, snap *policy.Snapshot) (*policy.Decision, error) {
	select {
	case sc.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-sc.turn }()
	d, err := sc.p.Allocate(ctx, snap)
	if err == nil {
		var state json.RawMessage
		if st, ok := sc.p.(policy.Stateful); ok {
			state, err = st.SaveState()
		}
		if err == nil {
			err = sc.persist(state, sc.decisions.Load()+1)
		}
	}
	if err != nil {
		if rerr := sc.restore(sc.saved); rerr != nil {
			return nil, fmt.Errorf("%w (and restoring the last state: %v)", err, rerr)
		}
		return nil, err
	}
	return d, nil
}

// persist records the state after n decisions: in the file, atomically,
// when there is one, and then in memory. Called with the turn held, or
// before the scheduler is shared.
func (sc *scheduler) persist(state json.RawMessage, n int64) error {
	if sc.file != "" {
		b, err := json.Marshal(record{Spec: sc.spec, State: state, Decisions: n})
		if err != nil {
			return stateError{err}
		}
		if err := writeFile(sc.file, b); err != nil {
			return stateError{err}
		}
	}
	sc.saved = state
	sc.decisions.Store(n)
	return nil
}

// stateError is a failure to save a scheduler's state.
type stateError struct{ error }

func (e stateError) Error() string { return "saving state: " + e.error.Error() }
func (e stateError) Unwrap() error { return e.error }

// writeFile replaces file by data so that a crash at any moment leaves
// either the old file or the new one: a temporary file in the same
// directory, synced, renamed over it, and the directory synced.
func writeFile(file string, data []byte) error {
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (sc *scheduler) status() Status {
	return Status{Name: sc.name, Spec: sc.spec, Decisions: sc.decisions.Load()}
}
