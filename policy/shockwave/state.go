package shockwave

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dlsched/dlsched/policy"
)

var _ policy.Stateful = (*Shockwave)(nil)

// SaveState returns Shockwave's State as JSON: the current plan (when its
// first round began, the jobs planned for each round of the window, the
// jobs it was made for, its objective and whether it took the relaxed
// path) and each job's history of fair-finish-time estimates.
func (p *Shockwave) SaveState() (json.RawMessage, error) { return policy.SaveState(p.State) }

// RestoreState replaces Shockwave's State with one SaveState returned;
// empty input restores the initial state, with no plan and no history. A
// state that does not decode, or whose start is negative, whose plan rounds
// or job list are not sorted sets of job IDs, or whose history has an
// unnamed job, is an error wrapping policy.ErrInvalidConfig and leaves p
// unchanged.
func (p *Shockwave) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[State](b)
	if err != nil {
		return fmt.Errorf("shockwave: %w", err)
	}
	if err := st.checkSaved(); err != nil {
		return fmt.Errorf("%w: shockwave: state: %w", policy.ErrInvalidConfig, err)
	}
	p.State = st
	return nil
}

// checkSaved reports what no Allocate can have saved.
func (st *State) checkSaved() error {
	sortedIDs := func(ids []string) bool {
		for i, id := range ids {
			if id == "" || i > 0 && ids[i-1] >= id {
				return false
			}
		}
		return true
	}
	if !(st.Start >= 0) {
		return fmt.Errorf("start: %v is negative", st.Start)
	}
	for t, ids := range st.Plan {
		if !sortedIDs(ids) {
			return fmt.Errorf("plan[%d]: %q is not a sorted set of job IDs", t, ids)
		}
	}
	if !sortedIDs(st.Jobs) {
		return fmt.Errorf("jobs: %q is not a sorted set of job IDs", st.Jobs)
	}
	if slices.Contains(slices.Collect(maps.Keys(st.Fair)), "") {
		return fmt.Errorf("fair: a history without a job ID")
	}
	return nil
}
