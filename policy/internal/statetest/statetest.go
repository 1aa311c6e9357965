// Package statetest checks implementations of policy.Stateful on a small
// simulated cluster: a policy that is stopped after some rounds and whose
// saved state is restored into a fresh instance of the same configuration
// must go on deciding exactly as the policy that was never stopped.
//
// It is a helper for the policies' tests and is imported by nothing else.
package statetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// World is a tiny deterministic scheduler that plays the rounds around a
// policy. Round i happens at Now = i·Round. Its snapshot holds the jobs that
// have arrived by then and not finished, in ID order, each with the
// placement the previous decision gave it (none if it was left out) and the
// progress it has made. After the decision every job advances for one Round
// at the rate its grant gives it,
//
//	steps/s = Σ_t Shares[t]·Throughput[t] + Σ_partner Σ_t Pairs[partner][t]·Colocated[partner][t],
//	GPU-seconds/s = GPUs × Busy (the grant's GPUs, else the job's),
//
// and a job leaves once StepsDone reaches StepsTotal.
type World struct {
	Cluster allocation.Cluster
	// Jobs are the jobs of the run, as they arrive: each needs a positive
	// StepsTotal; StepsDone, AttainedGPUSeconds and Placement are
	// overwritten with the job's progress. Colocated facts about partners
	// that are not in a round's snapshot are dropped from it.
	Jobs []policy.Job
	// Round is the time between two rounds.
	Round time.Duration
	// Rounds is the number of rounds.
	Rounds int
}

// progress is one job's state in the world.
type progress struct {
	steps, attained float64
	placement       []allocation.Assignment
}

// world is the world's state before a round: each job's progress, by ID.
type world map[string]progress

func (w world) clone() world {
	out := make(world, len(w))
	for id, p := range w {
		p.placement = slices.Clone(p.placement)
		out[id] = p
	}
	return out
}

// Round is what happened in one round.
type Round struct {
	Now time.Duration
	// Jobs are the IDs of the jobs in the snapshot.
	Jobs []string
	// Decision is the decision as JSON; Wake is not in it.
	Decision string
	Wake     time.Duration
}

// snapshot returns round i's snapshot.
func (w *World) snapshot(i int, st world) *policy.Snapshot {
	now := time.Duration(i) * w.Round
	s := &policy.Snapshot{Now: now, Cluster: w.Cluster}
	for _, j := range w.Jobs {
		p := st[j.ID]
		if j.Arrival > now || p.steps >= j.StepsTotal {
			continue
		}
		j.StepsDone, j.AttainedGPUSeconds, j.Placement = p.steps, p.attained, slices.Clone(p.placement)
		s.Jobs = append(s.Jobs, j)
	}
	slices.SortFunc(s.Jobs, func(a, b policy.Job) int { return strings.Compare(a.ID, b.ID) })
	in := make(map[string]bool, len(s.Jobs))
	for _, j := range s.Jobs {
		in[j.ID] = true
	}
	for k := range s.Jobs {
		j := &s.Jobs[k]
		if len(j.Colocated) == 0 {
			continue
		}
		j.Colocated = maps.Clone(j.Colocated)
		maps.DeleteFunc(j.Colocated, func(id string, _ map[allocation.Accelerator]float64) bool { return !in[id] })
		if len(j.Colocated) == 0 {
			j.Colocated = nil
		}
	}
	return s
}

// advance moves the jobs of s on by one round under decision d.
func (w *World) advance(s *policy.Snapshot, d *policy.Decision, st world) {
	dt := w.Round.Seconds()
	for k := range s.Jobs {
		j := &s.Jobs[k]
		p := st[j.ID]
		p.placement = slices.Clone(d.Placement[j.ID])
		if g, ok := d.Allocation[j.ID]; ok {
			rate := 0.0
			for t, x := range g.Shares {
				rate += x * j.Throughput[t]
			}
			for partner, shares := range g.Pairs {
				for t, x := range shares {
					rate += x * j.Colocated[partner][t]
				}
			}
			gpus := g.GPUs
			if gpus == 0 {
				gpus = j.GPUs
			}
			p.steps = min(p.steps+rate*dt, j.StepsTotal)
			p.attained += float64(gpus) * g.Busy() * dt
		}
		st[j.ID] = p
	}
}

// play runs rounds from to w.Rounds−1 with p, starting from st (which it
// changes). After each round it calls after, if not nil, and it calls
// before, if not nil, before each round with the world's state.
func (w *World) play(t *testing.T, p policy.Policy, from int, st world, before func(i int, st world), after func(i int)) []Round {
	t.Helper()
	var out []Round
	for i := from; i < w.Rounds; i++ {
		if before != nil {
			before(i, st)
		}
		s := w.snapshot(i, st)
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("round %d (now %v): %v", i, s.Now, err)
		}
		out = append(out, round(t, i, s, d))
		w.advance(s, d, st)
		if after != nil {
			after(i)
		}
	}
	return out
}

// Case is one check of a Stateful policy.
type Case struct {
	World World
	// New returns a fresh policy of the configuration under test.
	New func() policy.Stateful
	// State, if not nil, returns the policy's state value: a state restored
	// from JSON must equal the saved one (empty and nil slices and maps
	// alike).
	State func(policy.Stateful) any
	// Restarts are the rounds k before which the policy is restarted; nil
	// means every round from 1 to Rounds−1.
	Restarts []int
	// Matters asks Check to make sure that the state matters: for some
	// restart round, a fresh policy without the restored state must decide
	// differently in some later round than the uninterrupted one.
	Matters bool
	// Invalid lists states that decode but that RestoreState must reject.
	Invalid []string
}

// Result is what Check observed.
type Result struct {
	// Rounds are the uninterrupted run's rounds.
	Rounds []Round
	// States are the saved states after each round.
	States []json.RawMessage
	// Diverged lists the rounds k for which a fresh policy without the
	// state, taking over before round k, decided differently afterwards.
	Diverged []int
}

// garbage are inputs no state decodes from.
var garbage = []string{`{`, `[]`, `42`, `"state"`, `true`, `{"no_such_field": 1}`, `{} {}`, `{}x`}

// Check runs c.World with one policy throughout, then for every restart
// round k (c.Restarts) restores the state saved after round k−1 into a
// fresh policy and replays rounds k onwards: every decision (JSON and Wake)
// must be the same. It checks that every saved state survives a JSON round
// trip unchanged, that empty input restores the initial state, and that
// garbage and c.Invalid are rejected with an error wrapping
// policy.ErrInvalidConfig that leaves the policy unchanged; and, with
// c.Matters, that a fresh policy without the state diverges for some k.
func Check(t *testing.T, c Case) Result {
	t.Helper()
	w := &c.World
	if w.Rounds < 2 {
		t.Fatalf("statetest: %d rounds; a restart needs at least 2", w.Rounds)
	}
	var res Result
	initial := save(t, c.New())

	// The uninterrupted run, recording the world before each round and the
	// state after it, and checking each state's round trip.
	ref := c.New()
	var worlds []world
	record := func(_ int, st world) { worlds = append(worlds, st.clone()) }
	res.Rounds = w.play(t, ref, 0, world{}, record, func(i int) {
		b := save(t, ref)
		res.States = append(res.States, b)
		q := c.New()
		if err := q.RestoreState(b); err != nil {
			t.Fatalf("round %d: RestoreState of the state SaveState returned: %v\nstate: %s", i, err, b)
		}
		if again := save(t, q); !bytes.Equal(again, b) {
			t.Errorf("round %d: the state changed in a save–restore–save round trip:\n%s", i, cmp.Diff(string(b), string(again)))
		}
		if c.State != nil {
			if diff := cmp.Diff(c.State(ref), c.State(q), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("round %d: the restored state differs from the saved one (-saved +restored):\n%s", i, diff)
			}
		}
	})
	changed := false
	for _, b := range res.States {
		changed = changed || !bytes.Equal(b, initial)
	}
	if !changed {
		t.Errorf("the state never changed from the initial %s: the scenario does not exercise it", initial)
	}

	// Restart before round k.
	restarts := c.Restarts
	if restarts == nil {
		for k := 1; k < w.Rounds; k++ {
			restarts = append(restarts, k)
		}
	}
	for _, k := range restarts {
		if k < 1 || k >= w.Rounds {
			t.Fatalf("statetest: restart before round %d of %d", k, w.Rounds)
		}
		p := c.New()
		if err := p.RestoreState(res.States[k-1]); err != nil {
			t.Fatalf("restart before round %d: RestoreState: %v", k, err)
		}
		got := w.play(t, p, k, worlds[k].clone(), nil, nil)
		if diff := cmp.Diff(res.Rounds[k:], got); diff != "" {
			t.Errorf("restored before round %d: decisions differ from the uninterrupted run (-uninterrupted +restored):\n%s", k, diff)
		}
		fresh := w.play(t, c.New(), k, worlds[k].clone(), nil, nil)
		if !cmp.Equal(res.Rounds[k:], fresh) {
			res.Diverged = append(res.Diverged, k)
		}
	}
	if c.Matters && len(res.Diverged) == 0 {
		t.Errorf("a fresh policy without the restored state decides as the uninterrupted one at every restart round: the check cannot fail")
	}

	// Empty input restores the initial state: the whole run again.
	for _, empty := range []string{"", " \n\t"} {
		if err := ref.RestoreState(json.RawMessage(empty)); err != nil {
			t.Fatalf("RestoreState(%q): %v", empty, err)
		}
		if got := save(t, ref); !bytes.Equal(got, initial) {
			t.Errorf("after RestoreState(%q) the state is %s, want the initial %s", empty, got, initial)
		}
	}
	if diff := cmp.Diff(res.Rounds, w.play(t, ref, 0, world{}, nil, nil)); diff != "" {
		t.Errorf("restored to the initial state: decisions differ from a fresh policy's (-fresh +restored):\n%s", diff)
	}

	// Bad states are rejected and change nothing.
	mid := res.States[w.Rounds/2]
	if err := ref.RestoreState(mid); err != nil {
		t.Fatal(err)
	}
	for _, bad := range slices.Concat(garbage, c.Invalid) {
		err := ref.RestoreState(json.RawMessage(bad))
		if !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("RestoreState(%s) = %v, want an error wrapping ErrInvalidConfig", bad, err)
		}
		if got := save(t, ref); !bytes.Equal(got, mid) {
			t.Errorf("RestoreState(%s) changed the state to %s, want it kept at %s", bad, got, mid)
		}
	}
	return res
}

func save(t *testing.T, p policy.Stateful) json.RawMessage {
	t.Helper()
	b, err := p.SaveState()
	if err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	return b
}
