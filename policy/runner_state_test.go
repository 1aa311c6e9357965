package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

// counterPolicy is a fake Stateful policy whose state is a counter: each
// Allocate increments it and reports it as the Objective. It writes what
// happens to it into a shared event log, and can be made to fail SaveState.
type counterPolicy struct {
	log     *eventLog
	mu      sync.Mutex
	count   int
	saveErr error
	panics  bool // Allocate counts, then panics
}

type counterState struct {
	Count int `json:"count"`
}

func (p *counterPolicy) Name() string { return "fake.counter" }

func (p *counterPolicy) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	p.log.add("allocate %d", p.count)
	if p.panics {
		panic(fmt.Sprintf("fake.counter fails at %d", p.count))
	}
	d := &policy.Decision{Policy: p.Name(), Objective: float64(p.count), Allocation: allocation.Allocation{}}
	for _, j := range s.Jobs {
		d.Allocation[j.ID] = allocation.Grant{GPUs: j.GPUs, Shares: map[allocation.Accelerator]float64{"v100": 1}}
	}
	return d, nil
}

func (p *counterPolicy) SaveState() (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.saveErr != nil {
		return nil, p.saveErr
	}
	return policy.SaveState(counterState{Count: p.count})
}

func (p *counterPolicy) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[counterState](b)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count = st.Count
	p.log.add("restore %s", b)
	return nil
}

func (p *counterPolicy) set(f func(p *counterPolicy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

var _ policy.Stateful = (*counterPolicy)(nil)

// eventLog records, in order, what the policy, the store and the hooks saw.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf(format, args...))
}

// take returns the events so far and forgets them.
func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// memStore is a StateStore in memory that logs its calls and can be made
// to fail, or to block Load until its ctx is done.
type memStore struct {
	log       *eventLog
	mu        sync.Mutex
	state     json.RawMessage
	loadErr   error
	saveErr   error
	blockLoad bool
}

func (s *memStore) Load(ctx context.Context) (json.RawMessage, error) {
	s.mu.Lock()
	state, err, block := s.state, s.loadErr, s.blockLoad
	s.mu.Unlock()
	s.log.add("load")
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return state, err
}

func (s *memStore) Save(ctx context.Context, state json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.add("save %s", state)
	if s.saveErr != nil {
		return s.saveErr
	}
	s.state = append(json.RawMessage(nil), state...)
	return nil
}

func (s *memStore) set(f func(s *memStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *memStore) saved() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.state)
}

// stateHarness runs a Runner over a counterPolicy and a memStore.
type stateHarness struct {
	t      *testing.T
	log    *eventLog
	p      *counterPolicy
	store  *memStore
	r      *policy.Runner
	cancel context.CancelFunc
	done   chan error

	mu   sync.Mutex
	errs []error // reported to OnError
}

func newStateHarness(t *testing.T, store *memStore) *stateHarness {
	log := store.log
	h := &stateHarness{t: t, log: log, p: &counterPolicy{log: log}, store: store}
	h.r = h.runner(h.p)
	return h
}

// runner returns a Runner of p over h's store that logs its hooks.
func (h *stateHarness) runner(p policy.Policy) *policy.Runner {
	return &policy.Runner{
		Policy:   p,
		Snapshot: newRunnerSource("a", "b").Snapshot,
		State:    h.store,
		OnError: func(err error) {
			h.log.add("error")
			h.mu.Lock()
			defer h.mu.Unlock()
			h.errs = append(h.errs, err)
		},
		OnDecision: func(d *policy.Decision) { h.log.add("decision %v", d.Objective) },
	}
}

// start runs the Runner in a goroutine of the bubble, until stop or the end
// of the test (a failed test ends the Run, too, rather than deadlock).
func (h *stateHarness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	h.t.Cleanup(cancel)
	go func() { h.done <- h.r.Run(ctx) }()
}

func (h *stateHarness) stop() {
	h.t.Helper()
	h.cancel()
	synctest.Wait()
	select {
	case err := <-h.done:
		if !errors.Is(err, context.Canceled) {
			h.t.Errorf("Run returned %v, want context.Canceled", err)
		}
	default:
		h.t.Fatal("Run did not return after ctx was cancelled")
	}
}

func (h *stateHarness) hookErrors() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

func (h *stateHarness) wantEvents(want ...string) {
	h.t.Helper()
	if diff := cmp.Diff(want, h.log.take()); diff != "" {
		h.t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func newMemStore(state string) *memStore {
	s := &memStore{log: &eventLog{}}
	if state != "" {
		s.state = json.RawMessage(state)
	}
	return s
}

// Run restores the saved state before the first Allocate and saves the
// state after each published decision, after OnDecision.
func TestRunnerStateRestoreAndSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newStateHarness(t, newMemStore(`{"count":41}`))
		h.start()
		synctest.Wait()
		h.wantEvents("load", `restore {"count":41}`, "allocate 42", "decision 42", `save {"count":42}`)
		if d := h.r.Decision(); d == nil || d.Objective != 42 {
			t.Fatalf("first decision %+v, want objective 42", d)
		}
		h.r.Trigger()
		time.Sleep(time.Second)
		synctest.Wait()
		h.wantEvents("allocate 43", "decision 43", `save {"count":43}`)
		if got := h.store.saved(); got != `{"count":43}` {
			t.Errorf("store holds %s, want {\"count\":43}", got)
		}
		h.stop()
		if errs := h.hookErrors(); len(errs) != 0 {
			t.Errorf("OnError saw %v", errs)
		}
	})
}

// An empty store leaves the policy as it is: nothing is restored.
func TestRunnerStateEmptyStore(t *testing.T) {
	for _, empty := range []string{"", " \n"} {
		synctest.Test(t, func(t *testing.T) {
			h := newStateHarness(t, newMemStore(empty))
			h.p.set(func(p *counterPolicy) { p.count = 7 }) // configured with a state of its own
			h.start()
			synctest.Wait()
			h.wantEvents("load", "allocate 8", "decision 8", `save {"count":8}`)
			h.stop()
		})
	}
}

// A failing Load or restore is Run's error, before anything is decided;
// OnError does not see it.
func TestRunnerStateLoadErrors(t *testing.T) {
	errDown := errors.New("store down")
	for _, c := range []struct {
		name  string
		store *memStore
		want  error
	}{
		{"load", &memStore{loadErr: errDown}, errDown},
		{"garbage", &memStore{state: json.RawMessage(`{"count":"many"}`)}, policy.ErrInvalidConfig},
		{"unknown-field", &memStore{state: json.RawMessage(`{"count":1,"extra":2}`)}, policy.ErrInvalidConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c.store.log = &eventLog{}
				h := newStateHarness(t, c.store)
				// Run returns at once; the timeout only ends a Run that,
				// wrongly, went on.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				err := h.r.Run(ctx)
				if !errors.Is(err, c.want) {
					t.Fatalf("Run = %v, want an error wrapping %v", err, c.want)
				}
				h.wantEvents("load")
				if d := h.r.Decision(); d != nil {
					t.Errorf("a decision was published: %+v", d)
				}
				if errs := h.hookErrors(); len(errs) != 0 {
					t.Errorf("OnError saw %v", errs)
				}
				// The Runner can be run again once the store is fixed.
				c.store.set(func(s *memStore) { s.loadErr, s.state = nil, json.RawMessage(`{"count":5}`) })
				h.start()
				synctest.Wait()
				h.wantEvents("load", `restore {"count":5}`, "allocate 6", "decision 6", `save {"count":6}`)
				h.stop()
			})
		})
	}
}

// A Load that waits until Run's ctx is done makes Run return ctx.Err().
func TestRunnerStateLoadCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore(`{"count":1}`)
		store.blockLoad = true
		h := newStateHarness(t, store)
		h.start()
		synctest.Wait()
		h.stop()
		h.wantEvents("load")
		if errs := h.hookErrors(); len(errs) != 0 {
			t.Errorf("OnError saw %v", errs)
		}
	})
}

// A failing save goes to OnError; the decision stays published, no retry
// follows, and the next decision saves again.
func TestRunnerStateSaveErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newStateHarness(t, newMemStore(""))
		errFull := errors.New("disk full")
		h.store.set(func(s *memStore) { s.saveErr = errFull })
		h.start()
		synctest.Wait()
		h.wantEvents("load", "allocate 1", "decision 1", `save {"count":1}`, "error")
		if d := h.r.Decision(); d == nil || d.Objective != 1 {
			t.Fatalf("after a failed save the decision is %+v, want the new one", d)
		}
		if errs := h.hookErrors(); len(errs) != 1 || !errors.Is(errs[0], errFull) {
			t.Fatalf("OnError saw %v, want one error wrapping %v", errs, errFull)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		h.wantEvents() // a failed save is no failed recomputation: no retry

		// The policy's SaveState fails.
		errState := errors.New("state too large")
		h.store.set(func(s *memStore) { s.saveErr = nil })
		h.p.set(func(p *counterPolicy) { p.saveErr = errState })
		h.r.Trigger()
		synctest.Wait()
		h.wantEvents("allocate 2", "decision 2", "error")
		if errs := h.hookErrors(); len(errs) != 2 || !errors.Is(errs[1], errState) {
			t.Fatalf("OnError saw %v, want a second error wrapping %v", errs, errState)
		}
		if got := h.store.saved(); got != "" {
			t.Errorf("store holds %s, want nothing saved yet", got)
		}

		// Both work again: the next decision is saved.
		h.p.set(func(p *counterPolicy) { p.saveErr = nil })
		h.r.Trigger()
		time.Sleep(time.Second)
		synctest.Wait()
		h.wantEvents("allocate 3", "decision 3", `save {"count":3}`)
		if got := h.store.saved(); got != `{"count":3}` {
			t.Errorf("store holds %s, want {\"count\":3}", got)
		}
		h.stop()
	})
}

// A scheduler restarted with a fresh policy and the same store goes on
// from the state saved last, and so does a Runner run again after another
// scheduler (a new leader) saved its state meanwhile.
func TestRunnerStateRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore("")
		h := newStateHarness(t, store)
		h.start()
		synctest.Wait()
		for range 2 {
			h.r.Trigger()
			time.Sleep(time.Second)
			synctest.Wait()
		}
		h.stop()
		h.wantEvents("load", "allocate 1", "decision 1", `save {"count":1}`,
			"allocate 2", "decision 2", `save {"count":2}`, "allocate 3", "decision 3", `save {"count":3}`)

		// The restart: a fresh policy, a fresh Runner, the same store.
		fresh := &counterPolicy{log: store.log}
		h.p, h.r = fresh, h.runner(fresh)
		h.start()
		synctest.Wait()
		h.wantEvents("load", `restore {"count":3}`, "allocate 4", "decision 4", `save {"count":4}`)
		h.stop()

		// Another scheduler moved the state on; this Runner, run again,
		// loads it.
		store.set(func(s *memStore) { s.state = json.RawMessage(`{"count":100}`) })
		h.start()
		synctest.Wait()
		h.wantEvents("load", `restore {"count":100}`, "allocate 101", "decision 101", `save {"count":101}`)
		h.stop()
		if errs := h.hookErrors(); len(errs) != 0 {
			t.Errorf("OnError saw %v", errs)
		}
	})
}

// A policy that keeps no state is run as usual: the store is not used.
func TestRunnerStateStatelessPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore(`{"count":3}`)
		h := newStateHarness(t, store)
		h.r = h.runner(&fairPolicy{})
		h.start()
		synctest.Wait()
		if h.r.Decision() == nil {
			t.Fatal("no decision")
		}
		h.stop()
		h.wantEvents("decision 1") // no load, no save
		if got := store.saved(); got != `{"count":3}` {
			t.Errorf("store holds %s, want it untouched", got)
		}
	})
}

// A panic in Allocate fails that recomputation, not the process: the error
// wraps ErrPanicked with the panic value and the stack, the last decision
// stays published, Failures counts it, and the policy, whose counter the
// panic left half updated, is restored from the state saved with the last
// good decision before it decides again.
func TestRunnerRecoversPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newStateHarness(t, newMemStore(""))
		h.start()
		synctest.Wait()
		h.wantEvents("load", "allocate 1", "decision 1", `save {"count":1}`)
		first := h.r.Decision()
		h.p.set(func(p *counterPolicy) { p.panics = true })
		h.r.Trigger()
		time.Sleep(time.Second)
		synctest.Wait()
		h.wantEvents("allocate 2", "error", "load", `restore {"count":1}`)
		errs := h.hookErrors()
		if len(errs) != 1 || !errors.Is(errs[0], policy.ErrPanicked) ||
			!strings.Contains(errs[0].Error(), "fake.counter fails at 2") || !strings.Contains(errs[0].Error(), "runner_state_test.go") {
			t.Fatalf("OnError saw %v, want one ErrPanicked with the value and the stack", errs)
		}
		if h.r.Decision() != first || h.r.Failures() != 1 {
			t.Fatalf("decision %+v and %d failures, want the first and 1", h.r.Decision(), h.r.Failures())
		}
		h.p.set(func(p *counterPolicy) { p.panics = false })
		time.Sleep(time.Second)
		synctest.Wait()
		h.wantEvents("allocate 2", "decision 2", `save {"count":2}`)
		h.stop()
	})
}
