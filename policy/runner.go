package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlsched/dlsched/allocation"
)

// DefaultMinInterval is the least time between two recomputations of a
// Runner whose MinInterval is zero.
const DefaultMinInterval = time.Second

// maxRetryInterval caps the wait before a Runner retries after consecutive
// failures (unless MinInterval is longer).
const maxRetryInterval = time.Minute

// Runner keeps a policy's latest decision ready for a scheduler's hot paths.
//
// An embedding scheduler runs Run in a goroutine of its own, calls Trigger
// whenever jobs arrive or finish, and reads the latest decision with Decision
// or Share, which never block and cost one atomic load. Run recomputes the
// decision — Snapshot, then Policy.Allocate — at once when it starts, after a
// Trigger, and when the last decision's Wake comes due, never starting two
// recomputations less than MinInterval apart. Triggers that arrive while a
// recomputation waits for MinInterval, or before its snapshot is taken,
// coalesce into that one recomputation; a Trigger that arrives after the
// snapshot was taken is never lost: it causes one more recomputation.
//
// Decision.Wake is on the clock of Snapshot.Now, an epoch of the caller's
// choice, so the Runner converts it to wall time: it records the wall time t
// at which Snapshot returned and wakes at t + (Wake − Now), or as soon as
// MinInterval allows if that is already past. Wake zero means no wake-up.
//
// A panic in Snapshot or Allocate is recovered into an error wrapping
// ErrPanicked, with the panic value and the stack, and handled as a
// failure; a policy that panicked is restored from the state saved with
// the last good decision, if State is set. Failures counts them all.
//
// When Snapshot or Allocate fails, the previous decision stays published,
// the error goes to OnError, and Run retries on its own after
// max(MinInterval, DefaultMinInterval), doubling that wait after each
// consecutive failure up to one minute (or MinInterval, if longer); a
// Trigger retries sooner, subject to MinInterval.
//
// A policy's memory across rounds survives a restart of the scheduler when
// State is set and Policy is Stateful: Run restores the state saved last
// before its first recomputation, and saves the policy's state after each
// decision it publishes, so that a scheduler started again after a crash,
// or a new leader, goes on from the last decision saved rather than from
// scratch.
//
// Published decisions are shared by every reader: they are immutable, and
// neither the Runner's users nor the policy may modify a decision once
// Allocate has returned it.
//
// The Runner is runtime plumbing, not a policy: it reads the wall clock
// through the time package, so tests that drive it can use testing/synctest
// for deterministic, instant fake time. The zero Runner is not usable until
// Policy and Snapshot are set; fields must not change while Run is running,
// and a Runner must not be copied after first use.
type Runner struct {
	// Policy computes the decisions; required. Allocate is only called from
	// Run's goroutine, one call at a time, so a stateful policy needs no
	// locking of its own.
	Policy Policy
	// Snapshot returns the current state of the cluster and its jobs;
	// required. It is called from Run's goroutine with Run's ctx, right
	// before each Allocate. The Runner hands the snapshot to Allocate and
	// then drops it.
	Snapshot func(ctx context.Context) (*Snapshot, error)
	// MinInterval is the least time between the starts of two
	// recomputations, a rate limit for bursts of triggers. Zero means
	// DefaultMinInterval (1 s); a negative value means no limit.
	MinInterval time.Duration
	// OnError, if not nil, receives each error of Snapshot or Allocate (or a
	// nil snapshot or decision) and of saving the policy's state, called
	// from Run's goroutine. Errors caused by the end of Run's ctx are not
	// reported: Run returns ctx.Err().
	OnError func(error)
	// OnDecision, if not nil, is called from Run's goroutine with each new
	// decision right after it is published. It delays the next
	// recomputation, so it should return quickly, and must not modify the
	// decision.
	OnDecision func(*Decision)
	// State, if not nil, persists the state of a Policy that implements
	// Stateful; nil means no persistence, and so does a Policy that keeps
	// no state. Each Run calls State.Load once, before its first
	// recomputation, and restores what it returns into the policy
	// (Stateful.RestoreState); an empty state, nothing saved yet, leaves
	// the policy as it is. If Load or the restore fails, Run returns the
	// error at once: a scheduler never silently starts from scratch. After
	// each decision is published (and OnDecision has returned), Run saves
	// the policy's state (Stateful.SaveState, then State.Save); an error
	// there goes to OnError, the decision stays published, and the next
	// decision saves again. Load and Save are called from Run's goroutine
	// with Run's ctx.
	State StateStore

	once    sync.Once
	trigger chan struct{} // capacity 1: a pending request
	running atomic.Bool
	latest  atomic.Pointer[Decision]
	failed  atomic.Uint64
}

// Failures returns how many recomputations have failed since the Runner
// was made: errors and panics of Snapshot or Allocate, and nil snapshots or
// decisions. It is safe to call at any time.
func (r *Runner) Failures() uint64 { return r.failed.Load() }

// report passes a non-nil err to OnError, if set.
func (r *Runner) report(err error) {
	if err != nil && r.OnError != nil {
		r.OnError(err)
	}
}

// StateStore keeps a Stateful policy's state for a Runner across restarts
// of the scheduler: in a file, a Kubernetes ConfigMap, a database row. The
// state is opaque JSON; a store keeps the last one saved.
type StateStore interface {
	// Load returns the state saved last, or an empty one (nil) if none
	// has been saved yet.
	Load(ctx context.Context) (json.RawMessage, error)
	// Save replaces the saved state with state. The Runner does not use
	// state after Save returns.
	Save(ctx context.Context, state json.RawMessage) error
}

func (r *Runner) init() {
	r.once.Do(func() { r.trigger = make(chan struct{}, 1) })
}

// Trigger asks Run to recompute the decision, typically because jobs arrived
// or finished. It never blocks and is safe to call from any goroutine, also
// before Run starts (Run computes at once anyway) or while it is not running
// (the request waits for the next Run).
func (r *Runner) Trigger() {
	r.init()
	select {
	case r.trigger <- struct{}{}:
	default: // a request is already pending; this one coalesces with it
	}
}

// Decision returns the latest published decision, or nil before the first.
// It never blocks and is safe to call from any goroutine. The decision is
// shared: callers must not modify it.
func (r *Runner) Decision() *Decision {
	return r.latest.Load()
}

// Share returns the latest decision's time share of job on accelerator type
// acc, alone and co-located (see allocation.Allocation.Share), or zero before
// the first decision. It never blocks, costs one atomic load and a map
// lookup, and is safe to call from any goroutine.
func (r *Runner) Share(job string, acc allocation.Accelerator) float64 {
	d := r.latest.Load()
	if d == nil {
		return 0
	}
	return d.Allocation.Share(job, acc)
}

// Run recomputes and publishes decisions until ctx is done, then returns
// ctx.Err(); see Runner for when it recomputes. The first recomputation
// starts at once, after the policy's state is restored when State is set.
// Run returns an error wrapping ErrInvalidConfig if Policy or Snapshot is
// nil, an error if another Run of the same Runner is still running, and the
// error of State.Load or of the restore (which wraps ErrInvalidConfig for a
// state the policy cannot use) before it decides anything. A Runner may be
// run again after Run returns, and keeps its latest decision published in
// between; the new Run loads the state again, which may have been saved
// meanwhile by another scheduler (a new leader).
func (r *Runner) Run(ctx context.Context) error {
	if r.Policy == nil || r.Snapshot == nil {
		return fmt.Errorf("%w: policy.Runner needs a Policy and a Snapshot function", ErrInvalidConfig)
	}
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("policy: Runner.Run called while the Runner is already running")
	}
	defer r.running.Store(false)
	r.init()
	if err := r.restore(ctx); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return err
	}

	minInterval := r.MinInterval
	switch {
	case minInterval == 0:
		minInterval = DefaultMinInterval
	case minInterval < 0:
		minInterval = 0
	}
	var (
		pending  = true    // a recomputation is requested
		last     time.Time // start of the last recomputation; zero before the first
		wakeAt   time.Time // wall time of the last decision's Wake; zero if none
		retryAt  time.Time // wall time of the next retry after a failure; zero if none
		failures int       // consecutive failures
	)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		if !wakeAt.IsZero() && !now.Before(wakeAt) {
			pending, wakeAt = true, time.Time{}
		}
		if !retryAt.IsZero() && !now.Before(retryAt) {
			pending, retryAt = true, time.Time{}
		}
		if pending && (last.IsZero() || now.Sub(last) >= minInterval) {
			pending, last = false, now
			wake, err := r.recompute(ctx)
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if err != nil {
				failures++
				r.failed.Add(1)
				retryAt = last.Add(retryDelay(minInterval, failures))
				r.report(err)
				if errors.Is(err, ErrPanicked) {
					// Its memory may be half updated: go on from the
					// state saved with the last good decision.
					r.report(r.restore(ctx))
				}
			} else {
				failures, retryAt, wakeAt = 0, time.Time{}, wake
			}
			continue
		}

		var due time.Time
		if pending {
			due = last.Add(minInterval)
		}
		for _, t := range []time.Time{wakeAt, retryAt} {
			if !t.IsZero() && (due.IsZero() || t.Before(due)) {
				due = t
			}
		}
		var timer *time.Timer
		var fired <-chan time.Time
		if !due.IsZero() {
			timer = time.NewTimer(due.Sub(now))
			fired = timer.C
		}
		select {
		case <-ctx.Done():
		case <-r.trigger:
			pending = true
		case <-fired:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// recompute takes a snapshot, asks the policy and publishes its decision. It
// returns the wall time of the decision's Wake, zero if none.
func (r *Runner) recompute(ctx context.Context) (time.Time, error) {
	// The snapshot taken below answers every trigger received so far.
	select {
	case <-r.trigger:
	default:
	}
	s, err := guard(r.Policy.Name()+"'s snapshot", func() (*Snapshot, error) { return r.Snapshot(ctx) })
	if err != nil {
		return time.Time{}, fmt.Errorf("policy runner: snapshot: %w", err)
	}
	if s == nil {
		return time.Time{}, fmt.Errorf("policy runner: snapshot: %w: nil snapshot", ErrInvalidSnapshot)
	}
	taken := time.Now()
	d, err := guard(r.Policy.Name(), func() (*Decision, error) { return r.Policy.Allocate(ctx, s) })
	if err != nil {
		return time.Time{}, fmt.Errorf("policy runner: allocate: %w", err)
	}
	if d == nil {
		return time.Time{}, fmt.Errorf("policy runner: allocate: %s returned a nil decision", r.Policy.Name())
	}
	r.latest.Store(d)
	if r.OnDecision != nil {
		r.OnDecision(d)
	}
	if err := r.save(ctx); err != nil && ctx.Err() == nil && r.OnError != nil {
		r.OnError(err)
	}
	if d.Wake == 0 {
		return time.Time{}, nil
	}
	return taken.Add(max(d.Wake-s.Now, 0)), nil
}

// ErrPanicked wraps a panic that a Runner recovered from a policy's
// Allocate or from its Snapshot function; the error's text holds the panic
// value and the goroutine's stack.
var ErrPanicked = errors.New("panicked")

// guard calls f and turns a panic in it into an error wrapping
// ErrPanicked, so that a faulty policy fails one recomputation instead of
// the process that embeds it.
func guard[T any](who string, f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			v, err = zero, fmt.Errorf("%s %w: %v\n%s", who, ErrPanicked, p, debug.Stack())
		}
	}()
	return f()
}

// stateful returns the policy as a Stateful when its state is persisted.
func (r *Runner) stateful() (Stateful, bool) {
	if r.State == nil {
		return nil, false
	}
	sp, ok := r.Policy.(Stateful)
	return sp, ok
}

// restore loads the saved state and restores it into the policy.
func (r *Runner) restore(ctx context.Context) error {
	sp, ok := r.stateful()
	if !ok {
		return nil
	}
	b, err := r.State.Load(ctx)
	if err != nil {
		return fmt.Errorf("policy runner: load state: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil // nothing saved yet
	}
	if err := sp.RestoreState(b); err != nil {
		return fmt.Errorf("policy runner: restore state of %s: %w", sp.Name(), err)
	}
	return nil
}

// save saves the policy's state.
func (r *Runner) save(ctx context.Context) error {
	sp, ok := r.stateful()
	if !ok {
		return nil
	}
	b, err := sp.SaveState()
	if err != nil {
		return fmt.Errorf("policy runner: save state of %s: %w", sp.Name(), err)
	}
	if err := r.State.Save(ctx, b); err != nil {
		return fmt.Errorf("policy runner: save state: %w", err)
	}
	return nil
}

// retryDelay is the wait before the retry that follows the given number of
// consecutive failures: base = max(minInterval, DefaultMinInterval), doubled
// after each failure, capped at max(base, maxRetryInterval).
func retryDelay(minInterval time.Duration, failures int) time.Duration {
	base := max(minInterval, DefaultMinInterval)
	limit := max(base, maxRetryInterval)
	d := base
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
