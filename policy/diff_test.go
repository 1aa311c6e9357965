package policy_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

type placements = map[string][]allocation.Assignment

func TestDiff(t *testing.T) {
	prev := placements{
		"keep":    {{Server: "s2", GPUs: 2}, {Server: "s1", GPUs: 2}},
		"stop":    {{Server: "s1", GPUs: 1}},
		"migrate": {{Server: "s1", GPUs: 1}, {Server: "s3", GPUs: 1}},
		"resize":  {{Server: "s3", GPUs: 2}},
		"merged":  {{Server: "s4", GPUs: 1}, {Server: "s4", GPUs: 1}},
		"empty":   {{Server: "s4", GPUs: 0}},
	}
	next := placements{
		"keep":    {{Server: "s1", GPUs: 2}, {Server: "s2", GPUs: 2}},
		"migrate": {{Server: "s3", GPUs: 2}},
		"resize":  {{Server: "s3", GPUs: 4}},
		"start":   {{Server: "s1", GPUs: 1}},
		"merged":  {{Server: "s4", GPUs: 2}},
	}
	as := func(pairs ...any) []allocation.Assignment {
		var out []allocation.Assignment
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, allocation.Assignment{Server: pairs[i].(string), GPUs: pairs[i+1].(int)})
		}
		return out
	}
	want := []policy.Change{
		{Job: "stop", Kind: policy.Stop, From: as("s1", 1)},
		{Job: "migrate", Kind: policy.Migrate, From: as("s1", 1, "s3", 1), To: as("s3", 2)},
		{Job: "resize", Kind: policy.Resize, From: as("s3", 2), To: as("s3", 4)},
		{Job: "start", Kind: policy.Start, To: as("s1", 1)},
		{Job: "keep", Kind: policy.Keep, From: as("s1", 2, "s2", 2), To: as("s1", 2, "s2", 2)},
		{Job: "merged", Kind: policy.Keep, From: as("s4", 2), To: as("s4", 2)},
	}
	if diff := cmp.Diff(want, policy.Diff(prev, next)); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
	if got := policy.Diff(nil, nil); len(got) != 0 {
		t.Errorf("Diff(nil, nil) = %v", got)
	}
}

// Changes starts from where the snapshot's jobs run: a running job that the
// decision leaves out, unscheduled or not, is stopped.
func TestChanges(t *testing.T) {
	s := validSnapshot()
	s.Jobs[1].Placement = []allocation.Assignment{{Server: "n1", GPUs: 2}}
	d := &policy.Decision{
		Placement:   placements{"A": {{Server: "n1", GPUs: 1}}},
		Unscheduled: map[string]string{"B": "weight: -1 is not a finite non-negative number"},
	}
	want := []policy.Change{
		{Job: "B", Kind: policy.Stop, From: []allocation.Assignment{{Server: "n1", GPUs: 2}}},
		{Job: "A", Kind: policy.Keep, From: []allocation.Assignment{{Server: "n1", GPUs: 1}}, To: []allocation.Assignment{{Server: "n1", GPUs: 1}}},
	}
	if diff := cmp.Diff(want, policy.Changes(s, d)); diff != "" {
		t.Errorf("Changes (-want +got):\n%s", diff)
	}
}

// FuzzDiff feeds Diff arbitrary placements, as JSON: it never panics, lists
// each job that runs in either placement once, in kind order, and its
// changes applied to prev give next.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":[{"server":"s1","gpus":2}]}`), []byte(`{"a":[{"server":"s2","gpus":2}],"b":[{"server":"s1","gpus":1}]}`))
	f.Add([]byte(`{"a":[{"server":"s1","gpus":-2},{"server":"s1","gpus":3}]}`), []byte(`{}`))
	f.Add([]byte(`{"a":[{"server":"","gpus":9223372036854775807}]}`), []byte(`{"a":[{"server":"","gpus":1}]}`))
	order := map[policy.Kind]int{policy.Stop: 0, policy.Migrate: 1, policy.Resize: 2, policy.Start: 3, policy.Keep: 4}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var prev, next placements
		if json.Unmarshal(a, &prev) != nil || json.Unmarshal(b, &next) != nil {
			return
		}
		changes := policy.Diff(prev, next)
		seen := map[string]bool{}
		applied := placements{}
		for id, as := range prev {
			if len(normalized(as)) > 0 {
				applied[id] = normalized(as)
			}
		}
		for i, c := range changes {
			if seen[c.Job] {
				t.Fatalf("job %q listed twice", c.Job)
			}
			seen[c.Job] = true
			if i > 0 && order[changes[i-1].Kind] > order[c.Kind] {
				t.Fatalf("change %d (%s) after %s", i, c.Kind, changes[i-1].Kind)
			}
			if c.Kind == policy.Stop {
				delete(applied, c.Job)
			} else {
				applied[c.Job] = c.To
			}
		}
		want := placements{}
		for id, as := range next {
			if len(normalized(as)) > 0 {
				want[id] = normalized(as)
			}
		}
		if diff := cmp.Diff(want, applied); diff != "" {
			t.Fatalf("changes applied to prev do not give next (-want +got):\n%s", diff)
		}
	})
}

// normalized merges entries per server, drops those of no GPUs and sorts by
// server: the test's own statement of what Diff compares.
func normalized(as []allocation.Assignment) []allocation.Assignment {
	per := map[string]int{}
	var order []string
	for _, a := range as {
		if a.GPUs <= 0 {
			continue
		}
		if _, ok := per[a.Server]; !ok {
			order = append(order, a.Server)
		}
		per[a.Server] = min(math.MaxInt-a.GPUs, per[a.Server]) + a.GPUs // saturating, as Diff
	}
	var out []allocation.Assignment
	for _, s := range slices.Sorted(slices.Values(order)) {
		out = append(out, allocation.Assignment{Server: s, GPUs: per[s]})
	}
	return out
}
