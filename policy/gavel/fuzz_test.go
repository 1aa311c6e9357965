package gavel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
	"github.com/google/go-cmp/cmp"
)

// Fuzz inputs larger than this are skipped, so that each run stays fast on
// the pure-Go engine.
const (
	fuzzMaxJobs    = 12
	fuzzMaxServers = 64
)

// acceptable are the errors Allocate may return for a snapshot that passes
// Validate: facts this policy needs beyond Validate's (a GPU count), and the
// pure-Go engine's size guard. Max-min programs are always feasible (X = 0)
// and bounded (t ≤ each job's best term), so infeasible, unbounded or
// numerical failures are bugs.
var acceptable = []error{
	policy.ErrInvalidSnapshot,
	allocation.ErrTooLarge,
}

// fuzzSeeds are JSON snapshots: valid ones and edge cases.
var fuzzSeeds = []string{
	// Gavel's worked example.
	`{"now": 10, "cluster": {"servers": [{"id": "node-1", "accelerator": "v100", "gpus": 1},
		{"id": "node-2", "accelerator": "k80", "gpus": 2}]},
	  "jobs": [{"id": "A", "gpus": 1, "arrival": 1, "throughput": {"v100": 4, "k80": 1}},
		{"id": "B", "gpus": 1, "arrival": 2, "weight": 2, "throughput": {"v100": 2, "k80": 1}}]}`,
	// Multi-GPU jobs, one too big for a type, one that cannot run on a type.
	`{"cluster": {"servers": [{"id": "a", "accelerator": "k80", "gpus": 8},
		{"id": "b", "accelerator": "v100", "gpus": 2}, {"id": "c", "accelerator": "p100", "gpus": 4, "cpus": 32, "memory_gb": 128}]},
	  "jobs": [{"id": "big", "gpus": 4, "throughput": {"k80": 1, "v100": 5, "p100": 3}},
		{"id": "oom", "gpus": 1, "throughput": {"k80": 0, "v100": 3}},
		{"id": "any", "gpus": 2, "throughput": {"k80": 1, "v100": 2, "p100": 1.5}, "placement": [{"server": "a", "gpus": 2}]}]}`,
	// No jobs; empty cluster; empty document.
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 4}]}, "jobs": []}`,
	`{"cluster": {"servers": []}, "jobs": []}`,
	`{}`,
	// Zero-GPU servers.
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 0}, {"id": "t", "accelerator": "k80", "gpus": 1}]},
	  "jobs": [{"id": "A", "gpus": 1, "throughput": {"v100": 5, "k80": 1}}]}`,
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 0}]},
	  "jobs": [{"id": "A", "gpus": 1, "throughput": {"v100": 5}}]}`,
	// Huge and tiny numbers.
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 4}, {"id": "t", "accelerator": "k80", "gpus": 4}]},
	  "jobs": [{"id": "A", "gpus": 1, "throughput": {"v100": 1e308, "k80": 1}},
		{"id": "B", "gpus": 1, "weight": 1e308, "throughput": {"v100": 1e-308}}]}`,
	// Elastic jobs: no GPU count, no throughput.
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 4}]},
	  "jobs": [{"id": "E", "gpus": 0, "elastic": {"batch_size": 32}},
		{"id": "F", "gpus": 8, "throughput": {"v100": 2}, "elastic": {"batch_size": 32, "max_gpus": 16}},
		{"id": "R", "gpus": 1, "throughput": {"v100": 2}}]}`,
	// Co-location and per-system facts.
	`{"now": 100, "cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 2}]},
	  "jobs": [{"id": "A", "gpus": 1, "arrival": 5, "deadline": 500, "throughput": {"v100": 3}, "colocated": {"B": {"v100": 2}},
		"adaptive": {"regimes": [16, 32], "epoch_seconds": [60, 45], "epochs": 9, "history": [1, 2]}},
		{"id": "B", "gpus": 2, "throughput": {"v100": 1}, "colocated": {"A": {"v100": 0.5}},
		"sensitivity": {"cpus": [1, 2], "memory_gb": [8], "speedup": [[0.5], [1]]}}]}`,
	// Invalid input.
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 4}]},
	  "jobs": [{"id": "A", "gpus": 1, "throughput": {"tpu": 1}}]}`,
	`{"cluster": {"servers": [{"id": "s", "accelerator": "v100", "gpus": 4}, {"id": "s", "accelerator": "k80", "gpus": 4}]}}`,
	`{"now": 1, "jobs": [{"id": "A", "arrival": 2}]}`,
	`{"now": 1e300}`,
	`[1, 2, 3]`,
	`null`,
}

func FuzzAllocate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s policy.Snapshot
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		if len(s.Jobs) > fuzzMaxJobs || len(s.Cluster.Servers) > fuzzMaxServers {
			t.Skip("too large")
		}
		for _, agnostic := range []bool{false, true} {
			checkAllocate(t, data, &s, agnostic)
		}
	})
}

// checkAllocate runs one policy on s, which data decodes to, with the
// pure-Go engine, checks the outcome, and returns the decision (nil on error).
func checkAllocate(t *testing.T, data []byte, s *policy.Snapshot, agnostic bool) *policy.Decision {
	t.Helper()
	var before policy.Snapshot
	if err := json.Unmarshal(data, &before); err != nil {
		t.Fatalf("second decode: %v", err)
	}
	return check(t, &before, s, &gavel.MaxMinFairness{Agnostic: agnostic, Solver: allocation.PureGo})
}

// check runs p on s, whose deep copy is before, and checks the outcome. It
// returns the decision, or nil if Allocate failed acceptably.
func check(t *testing.T, before, s *policy.Snapshot, p *gavel.MaxMinFairness) *policy.Decision {
	t.Helper()
	// Only a snapshot malformed as a whole fails; Screen's jobs are left out.
	_, left, invalid := policy.Screen(s)
	d, err := allocateWithin(t, p, s)
	if diff := cmp.Diff(before, s); diff != "" {
		t.Fatalf("%s modified the snapshot (-before +after):\n%s", p.Name(), diff)
	}
	if err != nil {
		if d != nil {
			t.Errorf("%s returned a decision with error %v", p.Name(), err)
		}
		if invalid != nil {
			if !errors.Is(err, policy.ErrInvalidSnapshot) || err.Error() != invalid.Error() {
				t.Fatalf("%s: error %v, want Screen's %v", p.Name(), err, invalid)
			}
			return nil
		}
		for _, sentinel := range acceptable {
			if errors.Is(err, sentinel) {
				return nil
			}
		}
		t.Fatalf("%s: valid snapshot, unexpected error: %v", p.Name(), err)
	}
	if invalid != nil {
		t.Fatalf("%s accepted a snapshot Screen rejects: %v", p.Name(), invalid)
	}
	for id, why := range left {
		if d.Unscheduled[id] != why {
			t.Errorf("%s: job %q left out for %q, want Screen's %q", p.Name(), id, d.Unscheduled[id], why)
		}
	}
	if d.Policy != p.Name() {
		t.Errorf("decision policy %q, want %q", d.Policy, p.Name())
	}
	if math.IsNaN(d.Objective) || math.IsInf(d.Objective, 0) || d.Objective < -1e-9 {
		t.Errorf("%s: objective %v is not a finite non-negative number", p.Name(), d.Objective)
	}
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatalf("%s: invalid allocation: %v\n%+v", p.Name(), err, d.Allocation)
	}
	if len(d.Allocation)+len(d.Unscheduled) != len(s.Jobs) {
		t.Errorf("%s: %d grants and %d left out for %d jobs", p.Name(), len(d.Allocation), len(d.Unscheduled), len(s.Jobs))
	}
	for _, j := range s.Jobs {
		if why, out := d.Unscheduled[j.ID]; out {
			if _, ok := d.Allocation[j.ID]; ok || why == "" {
				t.Errorf("%s: job %q left out for %q and granted", p.Name(), j.ID, why)
			}
			continue
		}
		g, ok := d.Allocation[j.ID]
		if !ok {
			t.Errorf("%s: no grant for job %q", p.Name(), j.ID)
			continue
		}
		if g.GPUs != j.GPUs {
			t.Errorf("%s: job %q granted %d GPUs, wants %d", p.Name(), j.ID, g.GPUs, j.GPUs)
		}
		for k, x := range g.Shares {
			if math.IsNaN(x) || x < 0 || x > 1 {
				t.Errorf("%s: job %q share %v on %s is outside [0,1]", p.Name(), j.ID, x, k)
			}
			if x > 0 && (j.Throughput[k] <= 0 || j.GPUs > s.Cluster.GPUs(k)) {
				t.Errorf("%s: job %q (%d GPUs, throughput %v) has time %v on %s (%d GPUs), where it cannot run",
					p.Name(), j.ID, j.GPUs, j.Throughput[k], x, k, s.Cluster.GPUs(k))
			}
		}
		if b := g.Busy(); b > 1+allocation.Tolerance {
			t.Errorf("%s: job %q runs %v of the time", p.Name(), j.ID, b)
		}
	}
	return d
}

// fuzzTimeLimit bounds one Allocate call. The programs are small (at most 12
// jobs), so a call that takes this long is stuck; the LP engines cannot be
// interrupted, so a stuck call would otherwise hang the test.
const fuzzTimeLimit = 10 * time.Second

// allocateWithin runs p.Allocate and fails the test, rather than hanging or
// crashing, if it does not return within fuzzTimeLimit or panics.
func allocateWithin(t *testing.T, p *gavel.MaxMinFairness, s *policy.Snapshot) (*policy.Decision, error) {
	t.Helper()
	type result struct {
		d     *policy.Decision
		err   error
		panic any
		stack []byte
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- result{panic: r, stack: debug.Stack()}
			}
		}()
		d, err := p.Allocate(context.Background(), s)
		ch <- result{d: d, err: err}
	}()
	timer := time.NewTimer(fuzzTimeLimit)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.panic != nil {
			t.Fatalf("%s (%v) panicked: %v\n%s", p.Name(), p.Solver, r.panic, r.stack)
		}
		return r.d, r.err
	case <-timer.C:
		t.Fatalf("%s (%v) did not return within %v", p.Name(), p.Solver, fuzzTimeLimit)
		return nil, nil
	}
}

// choices turns fuzz bytes into a stream of small decisions; once the bytes
// run out every choice is 0.
type choices []byte

func (c *choices) pick(n int) int {
	if len(*c) == 0 {
		return 0
	}
	b := (*c)[0]
	*c = (*c)[1:]
	return int(b) % n
}

func pickFrom[T any](c *choices, values []T) T { return values[c.pick(len(values))] }

// Values within the range a real cluster produces: the generated snapshots
// are valid and not extreme, so every failure is a bug.
var (
	genTypes      = []allocation.Accelerator{"k80", "p100", "v100", "a100"}
	genServerGPUs = []int{0, 1, 2, 4, 4, 8, 8, 16}
	genJobGPUs    = []int{1, 1, 1, 2, 4, 8, 16, 3}
	genWeights    = []float64{0, 0, 1, 2, 0.5, 4, 0.25, 5}
	genTputs      = []float64{0, 1, 2.5, 0.1, 10, 40.5, 0.5, 5}
)

// generate builds a valid snapshot of at most 4 types, 16 servers and 12
// jobs from c.
func generate(c *choices) *policy.Snapshot {
	s := &policy.Snapshot{Now: time.Hour}
	nk := 1 + c.pick(len(genTypes))
	types := genTypes[:nk]
	for _, t := range types {
		for i := range 1 + c.pick(4) {
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{
				ID:          fmt.Sprintf("%s-%d", t, i),
				Accelerator: t,
				GPUs:        pickFrom(c, genServerGPUs),
			})
		}
	}
	for j := range c.pick(fuzzMaxJobs + 1) {
		job := policy.Job{
			ID:         fmt.Sprintf("job-%02d", (j*7)%13), // IDs not in slice order
			GPUs:       pickFrom(c, genJobGPUs),
			Weight:     pickFrom(c, genWeights),
			Throughput: map[allocation.Accelerator]float64{},
		}
		for _, t := range types {
			if x := pickFrom(c, genTputs); x > 0 || c.pick(2) == 0 {
				job.Throughput[t] = x
			}
		}
		if c.pick(16) == 0 {
			// An elastic job with a GPU count that fits runs under LAS
			// like any other job.
			job.Elastic = &policy.Elastic{BatchSize: 32}
		}
		s.Jobs = append(s.Jobs, job)
	}
	// Make the snapshot valid for LAS: drop jobs that fit nowhere.
	valid := s.Jobs[:0]
	for _, j := range s.Jobs {
		one := *s
		one.Jobs = []policy.Job{j}
		if policy.Validate(&one) == nil && j.Runnable(s.Cluster) == nil {
			valid = append(valid, j)
		}
	}
	s.Jobs = valid
	return s
}

// FuzzGeneratedSnapshot explores valid snapshots of realistic size and
// magnitude, and compares the engines: they must agree on t*.
func FuzzGeneratedSnapshot(f *testing.F) {
	for _, seed := range []string{"", "\x03\x01\x03\x02\x05\x0c\x00\x02\x01\x07", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := choices(data)
		s := generate(&c)
		if err := policy.Validate(s); err != nil {
			t.Fatalf("generated an invalid snapshot: %v", err)
		}
		before := generate(new(choices(data)))
		for _, agnostic := range []bool{false, true} {
			var objectives []float64
			var engines []allocation.Solver
			for _, solver := range allocation.Solvers() {
				d := check(t, before, s, &gavel.MaxMinFairness{Agnostic: agnostic, Solver: solver})
				if d == nil {
					t.Fatalf("agnostic=%v %v: valid snapshot of realistic size failed", agnostic, solver)
				}
				// Every job's term reaches t*: the allocation attains the
				// objective it reports, up to CLP's 1e-7 primal tolerance
				// magnified by term coefficients of up to ΣN/N_k.
				for id, v := range gavel.Terms(s, d, agnostic) {
					if v < d.Objective*(1-1e-5)-1e-9 {
						t.Errorf("agnostic=%v %v: job %s has term %v below t* = %v", agnostic, solver, id, v, d.Objective)
					}
				}
				objectives = append(objectives, d.Objective)
				engines = append(engines, solver)
			}
			for i, o := range objectives[1:] {
				if math.Abs(o-objectives[0]) > 1e-6*max(1, math.Abs(objectives[0])) {
					t.Errorf("agnostic=%v: %v finds t* = %v, %v finds %v", agnostic, engines[0], objectives[0], engines[i+1], o)
				}
			}
		}
	})
}
