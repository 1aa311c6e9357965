package themis

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dlsched/dlsched/policy"
)

var _ policy.Stateful = (*Themis)(nil)

// SaveState returns Themis' State as JSON: the live leases, each a job's
// time share of its gang on one accelerator type and when it expires.
func (p *Themis) SaveState() (json.RawMessage, error) { return policy.SaveState(p.State) }

// RestoreState replaces Themis' State with one SaveState returned; empty
// input restores the initial state, with no lease. A state that does not
// decode, or that holds a lease without a job or type, with a share outside
// (0, 1] or an expiry that is negative, is an error wrapping
// policy.ErrInvalidConfig and leaves p unchanged. Leases of jobs that are
// gone, or that have expired, are dropped by the next Allocate.
func (p *Themis) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[State](b)
	if err != nil {
		return fmt.Errorf("themis: %w", err)
	}
	held := make(map[string]float64) // each job's time in leases so far
	for i, l := range st.Leases {
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("%w: themis: state: leases[%d].%s: %s", policy.ErrInvalidConfig, i, field, fmt.Sprintf(format, args...))
		}
		switch {
		case l.Job == "":
			return bad("job", "empty")
		case l.Accelerator == "":
			return bad("accelerator", "empty")
		case !(l.Share > 0 && l.Share <= 1):
			return bad("share", "%v is not in (0, 1]", l.Share)
		case !(l.Expires >= 0) || math.IsInf(l.Expires, 1):
			return bad("expires", "%v is not a finite non-negative time", l.Expires)
		case held[l.Job]+l.Share > 1+1e-9:
			return bad("share", "job %s's leases add up to %v, more than its whole time", l.Job, held[l.Job]+l.Share)
		}
		held[l.Job] += l.Share
	}
	p.State = st
	return nil
}
