package gandiva

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/policy"
)

var _ policy.Stateful = (*Gandiva)(nil)

// SaveState returns Gandiva's State as JSON: the server sets with their
// affinity class, members in round-robin order and the start of their
// current time slice; the packed pairs (on trial, kept or reverted) with
// their measurements; the GPUs of the elastic jobs that grew; and the
// number of migrations so far.
func (p *Gandiva) SaveState() (json.RawMessage, error) { return policy.SaveState(p.State) }

// RestoreState replaces Gandiva's State with one SaveState returned; empty
// input restores the initial state, with no set, pair or grown job. A state
// that does not decode, or that holds a set without servers or members, a
// pair that is not two distinct jobs or has an unknown status, a grown job
// without GPUs or a negative count, is an error wrapping
// policy.ErrInvalidConfig and leaves p unchanged. What a valid state says
// about servers and jobs that are gone is dropped by the next Allocate.
func (p *Gandiva) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[State](b)
	if err != nil {
		return fmt.Errorf("gandiva: %w", err)
	}
	if err := st.checkSaved(); err != nil {
		return fmt.Errorf("%w: gandiva: state: %w", policy.ErrInvalidConfig, err)
	}
	p.State = st
	return nil
}

// check reports what no Allocate can have saved.
func (st *State) checkSaved() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for i, s := range st.Sets {
		switch {
		case s.Class < 1:
			return fmt.Errorf("sets[%d].class: %d is not a positive GPU count", i, s.Class)
		case len(s.Servers) == 0 || slices.Contains(s.Servers, ""):
			return fmt.Errorf("sets[%d].servers: %q: a set needs servers, named", i, s.Servers)
		case len(s.Jobs) == 0 || slices.Contains(s.Jobs, ""):
			return fmt.Errorf("sets[%d].jobs: %q: a set needs members, named", i, s.Jobs)
		case !finite(s.SliceStart):
			return fmt.Errorf("sets[%d].slice_start: %v is not finite", i, s.SliceStart)
		}
	}
	for i, pr := range st.Pairs {
		switch {
		case pr.Jobs[0] == "" || pr.Jobs[1] == "" || pr.Jobs[0] == pr.Jobs[1]:
			return fmt.Errorf("pairs[%d].jobs: %q is not two distinct jobs", i, pr.Jobs)
		case pr.Status != Trial && pr.Status != Kept && pr.Status != Reverted:
			return fmt.Errorf("pairs[%d].status: %q is none of %q, %q and %q", i, pr.Status, Trial, Kept, Reverted)
		case !finite(pr.NormSum) || !finite(pr.Since):
			return fmt.Errorf("pairs[%d]: norm_sum %v and since %v must be finite", i, pr.NormSum, pr.Since)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(st.Grown)) {
		if st.Grown[id] < 1 {
			return fmt.Errorf("grown[%s]: %d is not a positive GPU count", id, st.Grown[id])
		}
	}
	if st.Migrations < 0 {
		return fmt.Errorf("migrations: %d is negative", st.Migrations)
	}
	return nil
}
