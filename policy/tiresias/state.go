package tiresias

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/policy"
)

var (
	_ policy.Stateful = (*LAS)(nil)
	_ policy.Stateful = (*Gittins)(nil)
)

// SaveState returns the queues' State as JSON: the time of the last
// decision and each active job's queue, rank in it, service base, pending
// time and promotion count.
func (p *LAS) SaveState() (json.RawMessage, error) { return p.Queues.saveState() }

// RestoreState replaces the queues' State with one SaveState returned;
// empty input restores the initial state, with no job known. A state that
// does not decode, or that places a job outside the configured queues or
// holds a negative clock, is an error wrapping policy.ErrInvalidConfig and
// leaves p unchanged.
func (p *LAS) RestoreState(b json.RawMessage) error { return p.Queues.restoreState(p.Name(), b) }

// SaveState returns the queues' State as JSON: the time of the last
// decision and each active job's queue, rank in it, service base, pending
// time, promotion count and what Tiresias-G knows of its service; and the
// totals of the jobs seen to finish, which the Gittins distribution learns
// from (the configured Samples, or the default prior, are configuration).
func (p *Gittins) SaveState() (json.RawMessage, error) { return p.Queues.saveState() }

// RestoreState replaces the queues' State with one SaveState returned;
// empty input restores the initial state, with no job known. A state that
// does not decode, or that places a job outside the configured queues or
// holds a negative clock, is an error wrapping policy.ErrInvalidConfig and
// leaves p unchanged.
func (p *Gittins) RestoreState(b json.RawMessage) error { return p.Queues.restoreState(p.Name(), b) }

func (q *Queues) saveState() (json.RawMessage, error) { return policy.SaveState(q.State) }

func (q *Queues) restoreState(name string, b json.RawMessage) error {
	st, err := policy.RestoreState[State](b)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	queues := len(DefaultThresholds) + 1
	if q.Thresholds != nil {
		queues = len(q.Thresholds) + 1
	}
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: state: %s: %s", policy.ErrInvalidConfig, name, field, fmt.Sprintf(format, args...))
	}
	if !stateNonNeg(st.Seen) {
		return bad("seen", "%v is not a finite non-negative number", st.Seen)
	}
	for _, id := range slices.Sorted(maps.Keys(st.Jobs)) {
		js := st.Jobs[id]
		switch {
		case js.Queue < 0 || js.Queue >= queues:
			return bad(fmt.Sprintf("jobs[%s].queue", id), "%d is not one of the %d queues", js.Queue, queues)
		case !stateNonNeg(js.Base):
			return bad(fmt.Sprintf("jobs[%s].base", id), "%v is not a finite non-negative number", js.Base)
		case !stateNonNeg(js.Pending):
			return bad(fmt.Sprintf("jobs[%s].pending", id), "%v is not a finite non-negative number", js.Pending)
		case js.Promotions < 0:
			return bad(fmt.Sprintf("jobs[%s].promotions", id), "%d is negative", js.Promotions)
		case !stateNonNeg(js.Service):
			return bad(fmt.Sprintf("jobs[%s].service", id), "%v is not a finite non-negative number", js.Service)
		case js.Running < 0:
			return bad(fmt.Sprintf("jobs[%s].running", id), "%d is negative", js.Running)
		}
	}
	for i, x := range st.Finished {
		if !stateNonNeg(x) {
			return bad(fmt.Sprintf("finished[%d]", i), "%v is not a finite non-negative number", x)
		}
	}
	q.State = st
	return nil
}

// stateNonNeg reports whether a saved clock is a finite non-negative number.
func stateNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
