package policy_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

// The Runner tests run in synctest bubbles, where time is fake: time.Sleep
// returns as soon as every goroutine of the bubble is blocked, and
// synctest.Wait returns once the Runner is idle again, so the tests observe
// exactly what the Runner did at each instant, without real waiting.

// fairPolicy is a Gavel-like fake policy: every job gets the same share of
// time, min(1, N/Σ_j GPUs_j), on the one accelerator type of runnerCluster.
// It records the (fake) time of each call, and can be made to fail, to ask
// for a wake-up, to take time, or to wait for a gate.
type fairPolicy struct {
	mu    sync.Mutex
	calls []time.Time
	err   error
	wake  time.Duration   // when not zero, Decision.Wake = Snapshot.Now + wake
	delay time.Duration   // time each Allocate takes
	gate  <-chan struct{} // when not nil, Allocate waits for it or ctx
	nilOK bool            // return a nil decision and no error
}

func (p *fairPolicy) Name() string { return "fake.fair" }

func (p *fairPolicy) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	p.mu.Lock()
	p.calls = append(p.calls, time.Now())
	err, wake, delay, gate, nilOK := p.err, p.wake, p.delay, p.gate, p.nilOK
	p.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, fmt.Errorf("fake.fair: %w", ctx.Err())
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, fmt.Errorf("fake.fair: %w", ctx.Err())
		}
	}
	if err != nil {
		return nil, err
	}
	if nilOK {
		return nil, nil
	}
	if err := policy.Validate(s); err != nil {
		return nil, err
	}
	demand := 0
	for _, j := range s.Jobs {
		demand += j.GPUs
	}
	d := &policy.Decision{Policy: p.Name(), Allocation: allocation.Allocation{}}
	if demand > 0 {
		d.Objective = min(1, float64(s.Cluster.GPUs("v100"))/float64(demand))
	}
	for _, j := range s.Jobs {
		d.Allocation[j.ID] = allocation.Grant{
			GPUs:   j.GPUs,
			Shares: map[allocation.Accelerator]float64{"v100": d.Objective},
		}
	}
	if wake != 0 {
		d.Wake = s.Now + wake
	}
	return d, nil
}

func (p *fairPolicy) set(f func(p *fairPolicy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// callTimes returns the times of the Allocate calls so far, relative to t0.
func (p *fairPolicy) callTimes(t0 time.Time) []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	for _, c := range p.calls {
		out = append(out, c.Sub(t0))
	}
	return out
}

func (p *fairPolicy) numCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// runnerCluster has two V100s.
func runnerCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{{ID: "n1", Accelerator: "v100", GPUs: 2}}}
}

// runnerSource plays the scheduler: its snapshots hold one 1-GPU job per ID
// and Now = offset + the (fake) time since the source was made.
type runnerSource struct {
	mu     sync.Mutex
	epoch  time.Time
	offset time.Duration
	ids    []string
	err    error
	nilOK  bool // return a nil snapshot and no error
	nows   []time.Duration
}

func newRunnerSource(ids ...string) *runnerSource {
	return &runnerSource{epoch: time.Now(), ids: ids}
}

func (s *runnerSource) Snapshot(ctx context.Context) (*policy.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if s.nilOK {
		return nil, nil
	}
	snap := &policy.Snapshot{Now: s.offset + time.Since(s.epoch), Cluster: runnerCluster()}
	for _, id := range s.ids {
		snap.Jobs = append(snap.Jobs, policy.Job{
			ID: id, GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1},
		})
	}
	s.nows = append(s.nows, snap.Now)
	return snap, nil
}

func (s *runnerSource) set(f func(s *runnerSource)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *runnerSource) snapshotNows() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.nows...)
}

// runnerHarness runs a Runner over a fairPolicy and a runnerSource and
// records what reaches its hooks.
type runnerHarness struct {
	t      *testing.T
	t0     time.Time
	p      *fairPolicy
	src    *runnerSource
	r      *policy.Runner
	cancel context.CancelFunc
	done   chan error

	mu        sync.Mutex
	errs      []error
	decisions []*policy.Decision
}

func newRunnerHarness(t *testing.T, ids ...string) *runnerHarness {
	h := &runnerHarness{t: t, t0: time.Now(), p: &fairPolicy{}, src: newRunnerSource(ids...)}
	h.r = &policy.Runner{
		Policy:   h.p,
		Snapshot: h.src.Snapshot,
		OnError: func(err error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.errs = append(h.errs, err)
		},
		OnDecision: func(d *policy.Decision) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.decisions = append(h.decisions, d)
		},
	}
	return h
}

// start runs the Runner in a goroutine of the bubble.
func (h *runnerHarness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.r.Run(ctx) }()
}

// stop cancels Run and checks that it returns context.Canceled at once.
func (h *runnerHarness) stop() {
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

// advance lets d of fake time pass and waits until the Runner is idle.
func (h *runnerHarness) advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func (h *runnerHarness) wantCalls(n int) {
	h.t.Helper()
	if got := h.p.numCalls(); got != n {
		h.t.Fatalf("at %v: %d Allocate calls (at %v), want %d", time.Since(h.t0), got, h.p.callTimes(h.t0), n)
	}
}

func (h *runnerHarness) hookErrors() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

func (h *runnerHarness) hookDecisions() []*policy.Decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*policy.Decision(nil), h.decisions...)
}

func TestRunnerFirstDecision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a", "b", "c", "d")
		if d := h.r.Decision(); d != nil {
			t.Fatalf("Decision before Run = %+v, want nil", d)
		}
		if got := h.r.Share("a", "v100"); got != 0 {
			t.Fatalf("Share before Run = %v, want 0", got)
		}
		h.start()
		synctest.Wait()
		h.wantCalls(1)
		d := h.r.Decision()
		if d == nil {
			t.Fatal("no decision published after the first recomputation")
		}
		if d.Policy != "fake.fair" {
			t.Errorf("Decision().Policy = %q, want fake.fair", d.Policy)
		}
		for _, c := range []struct {
			job  string
			acc  allocation.Accelerator
			want float64
		}{{"a", "v100", 0.5}, {"d", "v100", 0.5}, {"a", "k80", 0}, {"zz", "v100", 0}} {
			if got := h.r.Share(c.job, c.acc); got != c.want {
				t.Errorf("Share(%q, %q) = %v, want %v", c.job, c.acc, got, c.want)
			}
		}
		if ds := h.hookDecisions(); len(ds) != 1 || ds[0] != d {
			t.Errorf("OnDecision saw %v, want exactly the published decision %p", ds, d)
		}
		if errs := h.hookErrors(); len(errs) != 0 {
			t.Errorf("OnError saw %v", errs)
		}
		if got := time.Since(h.t0); got != 0 {
			t.Errorf("the first decision took %v of fake time, want none", got)
		}
		h.stop()
		if h.r.Decision() != d {
			t.Error("the decision was withdrawn when Run returned")
		}
	})
}

func TestRunnerTriggersCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a", "b")
		// Triggers before Run are answered by the first recomputation.
		for range 10 {
			h.r.Trigger()
		}
		h.start()
		synctest.Wait()
		h.wantCalls(1)
		h.advance(time.Hour)
		h.wantCalls(1)

		// A Trigger long after the last recomputation is answered at once.
		h.r.Trigger()
		synctest.Wait()
		h.wantCalls(2)

		// A burst from many goroutines right after it gives one more
		// recomputation, as soon as MinInterval (1 s by default) allows.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 100 {
					h.r.Trigger()
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		h.wantCalls(2)
		h.advance(time.Second - time.Millisecond)
		h.wantCalls(2)
		h.advance(time.Millisecond)
		h.wantCalls(3)
		h.advance(time.Hour)
		h.wantCalls(3)
		if got, want := h.p.callTimes(h.t0), []time.Duration{0, time.Hour, time.Hour + time.Second}; !cmp.Equal(got, want) {
			t.Errorf("Allocate called at %v, want %v", got, want)
		}
		h.stop()
	})
}

func TestRunnerTriggerDuringRecomputeIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a", "b", "c")
		gate := make(chan struct{})
		h.p.set(func(p *fairPolicy) { p.gate = gate })
		h.start()
		synctest.Wait() // Run is inside Allocate, its snapshot taken
		h.wantCalls(1)
		for range 3 {
			h.r.Trigger()
		}
		close(gate)
		synctest.Wait()
		h.wantCalls(1)
		if got, want := h.r.Share("c", "v100"), 2.0/3; got != want {
			t.Errorf("Share = %v, want %v", got, want)
		}
		h.advance(time.Second)
		h.wantCalls(2)
		h.advance(time.Hour)
		h.wantCalls(2)
		h.stop()
	})
}

func TestRunnerMinInterval(t *testing.T) {
	for _, c := range []struct {
		name          string
		min           time.Duration
		step          time.Duration // time between two triggers
		wantMin       time.Duration // least gap between two recomputations
		wantMaxGapPad time.Duration // allowed gap beyond wantMin
	}{
		{"default", 0, 10 * time.Millisecond, time.Second, 10 * time.Millisecond},
		{"5s", 5 * time.Second, 70 * time.Millisecond, 5 * time.Second, 70 * time.Millisecond},
		{"250ms", 250 * time.Millisecond, 3 * time.Millisecond, 250 * time.Millisecond, 3 * time.Millisecond},
		{"unlimited", -1, 10 * time.Millisecond, 10 * time.Millisecond, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newRunnerHarness(t, "a")
				h.r.MinInterval = c.min
				h.start()
				synctest.Wait()
				span := 20 * c.wantMin
				for time.Since(h.t0) < span {
					h.advance(c.step)
					h.r.Trigger()
				}
				h.stop()
				times := h.p.callTimes(h.t0)
				if len(times) < 20 {
					t.Fatalf("%d recomputations in %v of constant triggers, want at least 20: %v", len(times), span, times)
				}
				for i := 1; i < len(times); i++ {
					if gap := times[i] - times[i-1]; gap < c.wantMin || gap > c.wantMin+c.wantMaxGapPad {
						t.Fatalf("recomputations %d and %d are %v apart, want %v to %v (all: %v)",
							i-1, i, gap, c.wantMin, c.wantMin+c.wantMaxGapPad, times)
					}
				}
			})
		})
	}
}

func TestRunnerWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a")
		// The scheduler's epoch is an hour before the Runner starts: Wake
		// must be read relative to Snapshot.Now, not as wall time.
		h.src.set(func(s *runnerSource) { s.offset = time.Hour })
		h.p.set(func(p *fairPolicy) { p.wake = 30 * time.Second })
		h.start()
		synctest.Wait()
		h.wantCalls(1)
		h.advance(30*time.Second - time.Millisecond)
		h.wantCalls(1)
		h.advance(time.Millisecond)
		h.wantCalls(2)

		// A Wake already past recomputes as soon as MinInterval allows.
		h.p.set(func(p *fairPolicy) { p.wake = -10 * time.Second })
		h.advance(30 * time.Second) // the Wake asked for at 30 s
		h.wantCalls(3)
		h.advance(time.Second - time.Millisecond)
		h.wantCalls(3)
		h.advance(time.Millisecond)
		h.wantCalls(4)

		// Wake zero asks for nothing.
		h.p.set(func(p *fairPolicy) { p.wake = 0 })
		h.advance(time.Second)
		h.wantCalls(5)
		h.advance(time.Hour)
		h.wantCalls(5)
		want := []time.Duration{time.Hour, time.Hour + 30*time.Second, time.Hour + 60*time.Second,
			time.Hour + 61*time.Second, time.Hour + 62*time.Second}
		if got := h.src.snapshotNows(); !cmp.Equal(got, want) {
			t.Errorf("snapshots at %v, want %v", got, want)
		}
		h.stop()
	})
}

// The wake-up is anchored at the snapshot, not at the end of a slow Allocate.
func TestRunnerWakeAnchoredAtSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a")
		h.p.set(func(p *fairPolicy) { p.wake, p.delay = 30*time.Second, 10*time.Second })
		h.start()
		h.advance(30*time.Second - time.Millisecond)
		h.wantCalls(1)
		h.advance(time.Millisecond)
		h.wantCalls(2)
		h.stop()
	})
}

func TestRunnerErrorsKeepDecision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a", "b")
		h.start()
		synctest.Wait()
		first := h.r.Decision()
		if first == nil {
			t.Fatal("no first decision")
		}
		errBoom := errors.New("boom")
		h.p.set(func(p *fairPolicy) { p.err = errBoom })
		h.src.set(func(s *runnerSource) { s.ids = append(s.ids, "c", "d") })
		h.r.Trigger()
		h.advance(time.Second)
		h.wantCalls(2)
		if h.r.Decision() != first || h.r.Share("a", "v100") != 1 {
			t.Fatalf("after a failure Decision() = %+v, want the previous one %+v", h.r.Decision(), first)
		}
		errs := h.hookErrors()
		if len(errs) != 1 || !errors.Is(errs[0], errBoom) {
			t.Fatalf("OnError saw %v, want one error wrapping %v", errs, errBoom)
		}

		// Retries back off: 1 s, 2 s, 4 s, … up to a minute.
		h.advance(10 * time.Minute)
		var gaps []time.Duration
		times := h.p.callTimes(h.t0)
		for i := 2; i < len(times); i++ {
			gaps = append(gaps, times[i]-times[i-1])
		}
		s := time.Second
		want := []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s,
			60 * s, 60 * s, 60 * s, 60 * s, 60 * s, 60 * s, 60 * s, 60 * s}
		if !cmp.Equal(gaps, want) {
			t.Fatalf("retries after %v, want %v", gaps, want)
		}
		if n := len(h.hookErrors()); n != len(times)-1 {
			t.Errorf("OnError called %d times for %d failures", n, len(times)-1)
		}

		// The next retry succeeds; then no more retries.
		h.p.set(func(p *fairPolicy) { p.err = nil })
		next := times[len(times)-1] + time.Minute - time.Since(h.t0)
		h.advance(next)
		h.wantCalls(len(times) + 1)
		if d := h.r.Decision(); d == first || h.r.Share("a", "v100") != 0.5 {
			t.Errorf("after recovery Decision() = %+v, want a new one with share 0.5", d)
		}
		h.advance(time.Hour)
		h.wantCalls(len(times) + 1)

		// A failing Snapshot keeps the decision too, and Allocate is not called.
		errSnap := errors.New("api server down")
		h.src.set(func(s *runnerSource) { s.err = errSnap })
		kept, calls, nerr := h.r.Decision(), h.p.numCalls(), len(h.hookErrors())
		h.r.Trigger() // the last recomputation is long past: no rate limit
		synctest.Wait()
		h.wantCalls(calls)
		errs = h.hookErrors()
		if len(errs) != nerr+1 || !errors.Is(errs[nerr], errSnap) {
			t.Errorf("OnError saw %v, want a last error wrapping %v", errs, errSnap)
		}
		if h.r.Decision() != kept {
			t.Error("a failing Snapshot withdrew the decision")
		}
		// The success reset the back-off: the first retry comes after 1 s.
		h.advance(time.Second - time.Millisecond)
		if n := len(h.hookErrors()); n != nerr+1 {
			t.Errorf("%d errors before the first retry, want %d", n, nerr+1)
		}
		h.advance(time.Millisecond)
		if n := len(h.hookErrors()); n != nerr+2 {
			t.Errorf("%d errors after the first retry, want %d", n, nerr+2)
		}
		if n := len(h.hookDecisions()); n != 2 {
			t.Errorf("OnDecision called %d times, want 2", n)
		}
		h.stop()
	})
}

func TestRunnerNilSnapshotOrDecision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a")
		h.src.set(func(s *runnerSource) { s.nilOK = true })
		h.start()
		synctest.Wait()
		h.wantCalls(0)
		if errs := h.hookErrors(); len(errs) != 1 || !errors.Is(errs[0], policy.ErrInvalidSnapshot) {
			t.Errorf("nil snapshot: OnError saw %v, want one error wrapping ErrInvalidSnapshot", errs)
		}
		h.src.set(func(s *runnerSource) { s.nilOK = false })
		h.p.set(func(p *fairPolicy) { p.nilOK = true })
		h.r.Trigger()
		h.advance(time.Second)
		h.wantCalls(1)
		if errs := h.hookErrors(); len(errs) != 2 {
			t.Errorf("nil decision: OnError saw %v, want a second error", errs)
		}
		if d := h.r.Decision(); d != nil {
			t.Errorf("Decision() = %+v, want nil", d)
		}
		h.stop()
	})
}

func TestRunnerCancel(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newRunnerHarness(t, "a")
			h.start()
			synctest.Wait()
			h.stop()
			if got := time.Since(h.t0); got != 0 {
				t.Errorf("Run took %v of fake time to return", got)
			}
		})
	})
	t.Run("rate-limited", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newRunnerHarness(t, "a")
			h.start()
			synctest.Wait()
			h.r.Trigger()
			h.advance(500 * time.Millisecond)
			h.stop()
			h.advance(time.Hour)
			h.wantCalls(1)
		})
	})
	t.Run("during-allocate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newRunnerHarness(t, "a")
			h.p.set(func(p *fairPolicy) { p.gate = make(chan struct{}) })
			h.start()
			synctest.Wait()
			h.wantCalls(1)
			h.stop()
			if errs := h.hookErrors(); len(errs) != 0 {
				t.Errorf("cancellation reached OnError: %v", errs)
			}
			if d := h.r.Decision(); d != nil {
				t.Errorf("Decision() = %+v after a cancelled Allocate, want nil", d)
			}
		})
	})
	t.Run("before-run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newRunnerHarness(t, "a")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := h.r.Run(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
			h.wantCalls(0)
		})
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newRunnerHarness(t, "a")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			if err := h.r.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Run = %v, want context.DeadlineExceeded", err)
			}
			if got := time.Since(h.t0); got != 90*time.Second {
				t.Errorf("Run returned after %v, want 90s", got)
			}
		})
	})
}

func TestRunnerMisuse(t *testing.T) {
	ctx := context.Background()
	for _, r := range []*policy.Runner{
		{},
		{Policy: &fairPolicy{}},
		{Snapshot: newRunnerSource("a").Snapshot},
	} {
		if err := r.Run(ctx); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("Run with Policy set %v, Snapshot set %v = %v, want ErrInvalidConfig",
				r.Policy != nil, r.Snapshot != nil, err)
		}
	}

	// Trigger never blocks, even with no Run to consume it.
	var idle policy.Runner
	for range 1000 {
		idle.Trigger()
	}

	synctest.Test(t, func(t *testing.T) {
		h := newRunnerHarness(t, "a")
		h.start()
		synctest.Wait()
		if err := h.r.Run(context.Background()); err == nil || errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("a second concurrent Run = %v, want an error", err)
		}
		h.stop()

		// Run again: the decision stays published in between, and the new
		// Run recomputes at once.
		first := h.r.Decision()
		h.advance(time.Hour)
		h.start()
		synctest.Wait()
		h.wantCalls(2)
		if d := h.r.Decision(); d == first || d == nil {
			t.Errorf("the second Run did not publish a new decision")
		}
		h.stop()
	})
}

// Readers on many goroutines see whole decisions while Run publishes new ones
// as fast as it can; run with -race.
func TestRunnerConcurrentReaders(t *testing.T) {
	const want = 200
	var (
		n     atomic.Int64 // decisions published
		round atomic.Int64
	)
	// Snapshots alternate between 2 and 4 jobs: shares 1 and 0.5.
	snapshot := func(ctx context.Context) (*policy.Snapshot, error) {
		ids := []string{"a", "b"}
		if round.Add(1)%2 == 0 {
			ids = append(ids, "c", "d")
		}
		s := &policy.Snapshot{Cluster: runnerCluster()}
		for _, id := range ids {
			s.Jobs = append(s.Jobs, policy.Job{ID: id, GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}})
		}
		return s, nil
	}
	r := &policy.Runner{
		Policy:      &fairPolicy{},
		Snapshot:    snapshot,
		MinInterval: -1,
		OnError:     func(err error) { t.Errorf("OnError(%v)", err) },
		OnDecision:  func(*policy.Decision) { n.Add(1) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				r.Trigger()
				runtime.Gosched()
			}
		}
	})
	var reads atomic.Int64
	var sawFull, sawHalf atomic.Bool // readers saw both kinds of decision
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				runtime.Gosched()
				if s := r.Share("a", "v100"); s != 0 && s != 1 && s != 0.5 {
					t.Errorf("Share = %v, want 0, 0.5 or 1", s)
					return
				}
				d := r.Decision()
				if d == nil {
					continue
				}
				reads.Add(1)
				switch d.Objective {
				case 1:
					sawFull.Store(true)
				case 0.5:
					sawHalf.Store(true)
				}
				if got := d.Allocation.Share("b", "v100"); got != d.Objective {
					t.Errorf("a torn decision: share %v, objective %v", got, d.Objective)
					return
				}
			}
		})
	}
	// Wait for both many decisions and many reads, while both go on.
	deadline := time.Now().Add(30 * time.Second)
	for n.Load() < want || reads.Load() < want || !sawFull.Load() || !sawHalf.Load() {
		if time.Now().After(deadline) {
			t.Errorf("timed out: %d decisions published, %d read, saw share 1: %v, saw share 0.5: %v",
				n.Load(), reads.Load(), sawFull.Load(), sawHalf.Load())
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
}
