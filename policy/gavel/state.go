package gavel

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/policy"
)

var _ policy.Stateful = (*FinishTimeFairness)(nil)

// SaveState returns the policy's FTFState as JSON: each active job's
// isolated-time account, the time its progress so far would have taken
// under its isolated allocation, with its progress and isolated throughput
// at the last call.
func (p *FinishTimeFairness) SaveState() (json.RawMessage, error) { return policy.SaveState(p.State) }

// RestoreState replaces the policy's FTFState with one SaveState returned;
// empty input restores the initial state, with no account. A state that
// does not decode, or that holds an account without a job ID or with a
// negative or infinite number, is an error wrapping policy.ErrInvalidConfig
// and leaves p unchanged. Accounts of jobs that are gone are dropped by
// the next Allocate.
func (p *FinishTimeFairness) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[FTFState](b)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	ok := func(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
	for _, id := range slices.Sorted(maps.Keys(st.Jobs)) {
		a := st.Jobs[id]
		if id == "" || !ok(a.Seconds) || !ok(a.StepsDone) || !ok(a.Rate) {
			return fmt.Errorf("%w: %s: state: jobs[%s]: %+v: an account needs a job ID and finite non-negative numbers",
				policy.ErrInvalidConfig, p.Name(), id, a)
		}
	}
	p.State = st
	return nil
}
