package pollux

import (
	"encoding/json"
	"fmt"

	"github.com/dlsched/dlsched/policy"
)

var _ policy.Stateful = (*Pollux)(nil)

// SaveState returns Pollux's State as JSON: the last search's final
// population, each individual a jobs × nodes matrix of GPU counts, with the
// job and node IDs that label its rows and columns. The next search starts
// from it.
func (p *Pollux) SaveState() (json.RawMessage, error) { return policy.SaveState(p.State) }

// RestoreState replaces Pollux's State with one SaveState returned; empty
// input restores the initial state, a cold start. A state that does not
// decode, or whose job or node IDs are empty or repeated, or whose
// individuals are not jobs × nodes matrices of non-negative counts, is an
// error wrapping policy.ErrInvalidConfig and leaves p unchanged. Rows and
// columns of jobs and nodes that are gone are dropped by the next Allocate.
func (p *Pollux) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[State](b)
	if err != nil {
		return fmt.Errorf("pollux: %w", err)
	}
	if err := st.checkSaved(); err != nil {
		return fmt.Errorf("%w: pollux: state: %w", policy.ErrInvalidConfig, err)
	}
	p.State = st
	return nil
}

// checkSaved reports what no Allocate can have saved.
func (st *State) checkSaved() error {
	for _, f := range []struct {
		name string
		ids  []string
	}{{"jobs", st.Jobs}, {"nodes", st.Nodes}} {
		seen := make(map[string]bool, len(f.ids))
		for i, id := range f.ids {
			if id == "" || seen[id] {
				return fmt.Errorf("%s[%d]: %q is empty or repeated", f.name, i, id)
			}
			seen[id] = true
		}
	}
	size := len(st.Jobs) * len(st.Nodes)
	for i, a := range st.Population {
		if len(a) != size {
			return fmt.Errorf("population[%d]: %d counts for %d jobs × %d nodes", i, len(a), len(st.Jobs), len(st.Nodes))
		}
		for k, n := range a {
			if n < 0 {
				return fmt.Errorf("population[%d][%d]: %d GPUs is negative", i, k, n)
			}
		}
	}
	return nil
}
