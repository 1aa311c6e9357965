package policy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

// screenSnapshot is validSnapshot with a third job, C, paired with B both
// ways, and B paired with A.
func screenSnapshot() *policy.Snapshot {
	s := validSnapshot()
	s.Jobs = append(s.Jobs, policy.Job{
		ID: "C", GPUs: 1, Throughput: tputs{"v100": 1},
		Colocated: map[string]tputs{"B": {"v100": 0.5}},
	})
	s.Jobs[1].Colocated["C"] = tputs{"v100": 0.6}
	return s
}

// Screen leaves out the invalid job and the one that can never fit, with
// reasons that name the field, keeps the others in their order, drops the
// co-location facts about left-out partners, and does not touch its input.
func TestScreen(t *testing.T) {
	s := screenSnapshot()
	s.Jobs[0].Weight = -1 // A: invalid
	s.Jobs[2].GPUs = 8    // C: never fits on 4 V100s
	before := screenSnapshot()
	before.Jobs[0].Weight, before.Jobs[2].GPUs = -1, 8

	kept, out, err := policy.Screen(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, s); diff != "" {
		t.Fatalf("Screen modified its input (-before +after):\n%s", diff)
	}
	if len(out) != 2 || !strings.HasPrefix(out["A"], "weight: ") || !strings.HasPrefix(out["C"], "gpus: ") {
		t.Errorf("left out %q; want A (weight) and C (gpus)", out)
	}
	if len(kept.Jobs) != 1 || kept.Jobs[0].ID != "B" || kept.Now != s.Now || !cmp.Equal(kept.Cluster, s.Cluster) {
		t.Fatalf("kept %+v; want B alone, with the snapshot's time and cluster", kept)
	}
	if len(kept.Jobs[0].Colocated) != 0 {
		t.Errorf("B's co-location facts %v; want those about A and C dropped", kept.Jobs[0].Colocated)
	}
	if len(s.Jobs[1].Colocated) != 2 {
		t.Errorf("the input's B lost its co-location facts: %v", s.Jobs[1].Colocated)
	}
	// What Screen keeps passes Validate.
	if err := policy.Validate(kept); err != nil {
		t.Errorf("the screened snapshot fails Validate: %v", err)
	}

	// A partner that stays keeps its fact.
	s = screenSnapshot()
	s.Jobs[0].Weight = -1
	kept, out, err = policy.Screen(s)
	if err != nil || len(out) != 1 {
		t.Fatalf("left out %v, %v; want A", out, err)
	}
	if b := kept.Jobs[0]; b.ID != "B" || len(b.Colocated) != 1 || b.Colocated["C"]["v100"] != 0.6 {
		t.Errorf("B's co-location facts %v; want C's only", b.Colocated)
	}

	// Nothing to leave out: s itself and no map.
	s = validSnapshot()
	if kept, out, err := policy.Screen(s); err != nil || kept != s || out != nil {
		t.Errorf("valid snapshot: %p, %v, %v; want the input, nil, nil", kept, out, err)
	}
}

// Only a snapshot malformed as a whole is an error.
func TestScreenWhole(t *testing.T) {
	for name, mutate := range map[string]func(*policy.Snapshot){
		"duplicate id": func(s *policy.Snapshot) { s.Jobs[1].ID = "A" },
		"empty id":     func(s *policy.Snapshot) { s.Jobs[0].ID = "" },
		"negative now": func(s *policy.Snapshot) { s.Now = -1 },
		"bad cluster": func(s *policy.Snapshot) {
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: "n1", Accelerator: "v100", GPUs: 1})
		},
	} {
		s := validSnapshot()
		mutate(s)
		if _, _, err := policy.Screen(s); !errors.Is(err, policy.ErrInvalidSnapshot) {
			t.Errorf("%s: %v; want ErrInvalidSnapshot", name, err)
		}
	}
	if _, _, err := policy.Screen(nil); !errors.Is(err, policy.ErrInvalidSnapshot) {
		t.Errorf("nil: %v; want ErrInvalidSnapshot", err)
	}
	s := validSnapshot()
	s.Jobs[1].ID = "A"
	if _, _, err := policy.Screen(s); err == nil || !strings.Contains(err.Error(), `job "A": id: duplicate`) {
		t.Errorf("duplicate id: %v; want it named", err)
	}
}

// leaving schedules every job Screen keeps and leaves out the others, plus
// any it is told to.
type leaving struct{ also string }

func (leaving) Name() string { return "test.leaving" }

func (l leaving) Allocate(_ context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, err
	}
	d := &policy.Decision{Policy: "test.leaving", Allocation: allocation.Allocation{}, Unscheduled: out}
	for _, j := range s.Jobs {
		if j.ID == l.also {
			d.Leave(j.ID, "steps_total: unknown; test.leaving needs it")
			continue
		}
		d.Allocation[j.ID] = allocation.Grant{GPUs: j.GPUs}
	}
	return d, nil
}

// Strict fails the round, naming the job, where the policy would leave a
// job out: one that fails Validate, or one the policy itself leaves out.
func TestStrict(t *testing.T) {
	ctx := context.Background()
	s := validSnapshot()
	s.Jobs[1].Weight = -1
	if d, err := (leaving{}).Allocate(ctx, s); err != nil || len(d.Unscheduled) != 1 {
		t.Fatalf("not strict: %+v, %v; want B left out", d, err)
	}
	_, err := policy.Strict(leaving{}).Allocate(ctx, s)
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "B": weight`) {
		t.Errorf("Strict, invalid job: %v; want ErrInvalidSnapshot naming B's weight", err)
	}
	_, err = policy.Strict(leaving{also: "A"}).Allocate(ctx, validSnapshot())
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "A": steps_total: unknown`) {
		t.Errorf("Strict, job the policy leaves out: %v; want ErrInvalidSnapshot naming A", err)
	}
	d, err := policy.Strict(leaving{}).Allocate(ctx, validSnapshot())
	if err != nil || len(d.Allocation) != 2 {
		t.Errorf("Strict, nothing left out: %+v, %v; want the decision", d, err)
	}
	if p := policy.Strict(leaving{}); p.Name() != "test.leaving" {
		t.Errorf("Strict's name %q", p.Name())
	}
	// A Stateful policy stays Stateful.
	if _, ok := policy.Strict(&policy.Rounds{Shares: leaving{}}).(policy.Stateful); !ok {
		t.Error("Strict of a Stateful policy is not Stateful")
	}
	if _, ok := policy.Strict(leaving{}).(policy.Stateful); ok {
		t.Error("Strict of a stateless policy is Stateful")
	}
}
