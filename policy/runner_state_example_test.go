package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// fileStore keeps a policy's state in a file, replaced atomically.
type fileStore struct{ path string }

func (f fileStore) Load(ctx context.Context) (json.RawMessage, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing saved yet
	}
	return b, err
}

func (f fileStore) Save(ctx context.Context, state json.RawMessage) error {
	tmp := f.path + ".tmp"
	if err := os.WriteFile(tmp, state, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, f.path)
}

// turns is a toy Stateful policy for the example: the jobs take turns on
// the cluster, one per decision, in ID order. Its state is the job whose
// turn it was last.
type turns struct {
	Last string `json:"last,omitempty"`
}

func (*turns) Name() string { return "example.turns" }

func (p *turns) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	d := &policy.Decision{Policy: p.Name(), Allocation: allocation.Allocation{}}
	if len(s.Jobs) == 0 {
		return d, nil
	}
	next := s.Jobs[0] // jobs are sorted by ID
	for _, j := range s.Jobs {
		if j.ID > p.Last {
			next = j
			break
		}
	}
	d.Allocation[next.ID] = allocation.Grant{GPUs: next.GPUs, Shares: map[allocation.Accelerator]float64{"v100": 1}}
	p.Last = next.ID
	return d, nil
}

func (p *turns) SaveState() (json.RawMessage, error) { return policy.SaveState(p) }

func (p *turns) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[turns](b)
	if err != nil {
		return err
	}
	*p = st
	return nil
}

// A scheduler that persists its policy's state goes on after a restart
// where it stopped: here the state is kept in a file, and the jobs go on
// taking turns.
func ExampleRunner_state() {
	dir, err := os.MkdirTemp("", "dlsched")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store := fileStore{filepath.Join(dir, "state.json")}

	// runUntilSaved runs a scheduler, with a fresh policy as after a
	// restart, until its first decision is saved.
	runUntilSaved := func() {
		saved := make(chan struct{}, 1)
		r := &policy.Runner{
			Policy: &turns{},
			Snapshot: func(ctx context.Context) (*policy.Snapshot, error) {
				s := &policy.Snapshot{Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n1", Accelerator: "v100", GPUs: 4}}}}
				for _, id := range []string{"a", "b", "c"} {
					s.Jobs = append(s.Jobs, policy.Job{ID: id, GPUs: 4, Throughput: map[allocation.Accelerator]float64{"v100": 1}})
				}
				return s, nil
			},
			State:   notifyingStore{store, saved},
			OnError: func(err error) { fmt.Println(err) },
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		<-saved
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			fmt.Println(err)
		}
		b, _ := store.Load(context.Background())
		fmt.Printf("share of b: %v, saved: %s\n", r.Share("b", "v100"), b)
	}
	for range 3 {
		runUntilSaved()
	}
	// Output:
	// share of b: 0, saved: {"last":"a"}
	// share of b: 1, saved: {"last":"b"}
	// share of b: 0, saved: {"last":"c"}
}

// notifyingStore tells when a state was saved.
type notifyingStore struct {
	policy.StateStore
	saved chan<- struct{}
}

func (n notifyingStore) Save(ctx context.Context, state json.RawMessage) error {
	err := n.StateStore.Save(ctx, state)
	select {
	case n.saved <- struct{}{}:
	default:
	}
	return err
}
