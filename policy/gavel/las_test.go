package gavel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type shares = map[allocation.Accelerator]float64

// handCluster is Gavel's worked example: 1 V100 and 2 K80.
func handCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{
		{ID: "s-k80", Accelerator: "k80", GPUs: 2},
		{ID: "s-v100", Accelerator: "v100", GPUs: 1},
	}}
}

func handJobs() []policy.Job {
	return []policy.Job{
		{ID: "A", GPUs: 1, Throughput: shares{"v100": 4, "k80": 1}},
		{ID: "B", GPUs: 1, Throughput: shares{"v100": 2, "k80": 1}},
	}
}

func TestMaxMinFairnessHandSolved(t *testing.T) {
	weighted := handJobs()
	weighted[0].Weight = 2
	tests := []struct {
		name     string
		policy   MaxMinFairness
		snap     policy.Snapshot
		want     float64
		wantRows map[string]shares
	}{{
		name: "aware",
		snap: policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()},
		want: 7.0 / 6,
		wantRows: map[string]shares{
			"A": {"v100": 4.0 / 9, "k80": 5.0 / 9},
			"B": {"v100": 5.0 / 9, "k80": 4.0 / 9},
		},
	}, {
		name: "weighted",
		snap: policy.Snapshot{Cluster: handCluster(), Jobs: weighted},
		want: 0.875,
		wantRows: map[string]shares{
			"A": {"v100": 5.0 / 6, "k80": 1.0 / 6},
			"B": {"v100": 1.0 / 6, "k80": 5.0 / 6},
		},
	}, {
		name:   "agnostic",
		policy: MaxMinFairness{Agnostic: true},
		snap:   policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()},
		want:   1,
		// Each job runs all the time, split in proportion to GPU counts.
		wantRows: map[string]shares{
			"A": {"v100": 1.0 / 3, "k80": 2.0 / 3},
			"B": {"v100": 1.0 / 3, "k80": 2.0 / 3},
		},
	}, {
		name: "scale factor in the numerator only",
		snap: policy.Snapshot{
			Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 2}}},
			Jobs: []policy.Job{
				{ID: "A", GPUs: 2, Throughput: shares{"v100": 10}},
				{ID: "B", GPUs: 1, Throughput: shares{"v100": 4}},
			},
		},
		want: 1,
		wantRows: map[string]shares{
			"A": {"v100": 0.5},
			"B": {"v100": 1},
		},
	}}
	for _, solver := range allocation.Solvers() {
		for _, tc := range tests {
			t.Run(solver.String()+"/"+tc.name, func(t *testing.T) {
				p := tc.policy
				p.Solver = solver
				d, err := p.Allocate(context.Background(), &tc.snap)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(d.Objective-tc.want) > 1e-7 {
					t.Errorf("objective = %.9f, want %.9f", d.Objective, tc.want)
				}
				got := make(map[string]shares)
				for id, g := range d.Allocation {
					got[id] = g.Shares
				}
				if diff := cmp.Diff(tc.wantRows, got, cmpopts.EquateApprox(0, 1e-7)); diff != "" {
					t.Errorf("shares (-want +got):\n%s", diff)
				}
				if err := d.Allocation.Validate(tc.snap.Cluster); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// randomSnapshot draws n jobs on a cluster with gpusPerType GPUs of each of
// nk types (on 4-GPU servers). GPU counts are 1, 2, 4, 8 with probability
// 70/10/15/5 %, as in Gavel's generator; throughputs are a base rate times a
// per-type speed, with some zeros.
func randomSnapshot(rng *rand.Rand, n, nk, gpusPerType int) *policy.Snapshot {
	names := []allocation.Accelerator{"k80", "p100", "v100", "a100"}[:nk]
	speed := []float64{0.25, 0.6, 1, 1.8}
	s := &policy.Snapshot{}
	for k, name := range names {
		for g, i := gpusPerType, 0; g > 0; i++ {
			c := min(g, 4)
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{
				ID: fmt.Sprintf("%s-%d", name, i), Accelerator: name, GPUs: c,
			})
			g -= c
		}
		_ = k
	}
	for j := range n {
		job := policy.Job{
			ID:         fmt.Sprintf("job-%03d", j),
			Throughput: map[allocation.Accelerator]float64{},
		}
		switch u := rng.Float64(); {
		case u < 0.70:
			job.GPUs = 1
		case u < 0.80:
			job.GPUs = 2
		case u < 0.95:
			job.GPUs = 4
		default:
			job.GPUs = 8
		}
		job.GPUs = min(job.GPUs, gpusPerType)
		if rng.IntN(5) == 0 {
			job.Weight = float64(1 + rng.IntN(4))
		}
		base := 0.5 + 4.5*rng.Float64()
		for k, name := range names {
			if k > 0 && rng.IntN(8) == 0 {
				continue // cannot run on this type
			}
			job.Throughput[name] = base * speed[k] * (0.7 + 0.6*rng.Float64())
		}
		s.Jobs = append(s.Jobs, job)
	}
	return s
}

// terms recomputes each job's max-min term (s_j/w_j)·y_j/T^prop_j from a
// decision, independently of the LP.
func terms(s *policy.Snapshot, d *policy.Decision, agnostic bool) map[string]float64 {
	types := s.Cluster.Types()
	var total float64
	for _, k := range types {
		total += float64(s.Cluster.GPUs(k))
	}
	out := make(map[string]float64)
	for _, j := range s.Jobs {
		var y, prop float64
		for _, k := range types {
			tp := j.Throughput[k]
			if agnostic && tp > 0 {
				tp = 1
			}
			y += tp * d.Allocation[j.ID].Shares[k]
			prop += tp * float64(s.Cluster.GPUs(k)) / total
		}
		if agnostic {
			prop = 1
		}
		out[j.ID] = float64(j.GPUs) / j.EffectiveWeight() * y / prop
	}
	return out
}

func TestMaxMinFairnessRandom(t *testing.T) {
	instances := 200
	if testing.Short() || raceEnabled {
		instances = 40
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range instances {
		n, nk := 1+rng.IntN(60), 1+rng.IntN(3)
		s := randomSnapshot(rng, n, nk, 1+rng.IntN(2*n))
		for _, agnostic := range []bool{false, true} {
			var objectives []float64
			for _, solver := range allocation.Solvers() {
				p := &MaxMinFairness{Agnostic: agnostic, Solver: solver}
				d, err := p.Allocate(context.Background(), s)
				if err != nil {
					t.Fatalf("instance %d (%d jobs, %d types) %s: %v", i, n, nk, p.Name(), err)
				}
				if err := d.Allocation.Validate(s.Cluster); err != nil {
					t.Errorf("instance %d %s %s: %v", i, p.Name(), solver, err)
				}
				// The allocation achieves the objective, and no job falls below it.
				lowest := math.Inf(1)
				for id, v := range terms(s, d, agnostic) {
					if v < d.Objective*(1-1e-6)-1e-9 {
						t.Errorf("instance %d %s %s: job %s term %v below objective %v", i, p.Name(), solver, id, v, d.Objective)
					}
					lowest = min(lowest, v)
				}
				if math.Abs(lowest-d.Objective) > 1e-6*max(1, d.Objective) {
					t.Errorf("instance %d %s %s: min term %v, objective %v", i, p.Name(), solver, lowest, d.Objective)
				}
				objectives = append(objectives, d.Objective)
			}
			for _, o := range objectives[1:] {
				if math.Abs(o-objectives[0]) > 1e-7*max(1, math.Abs(objectives[0])) {
					t.Errorf("instance %d agnostic=%v: engines disagree: %v", i, agnostic, objectives)
				}
			}
		}
	}
}

func TestMaxMinFairnessPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20 {
		s := randomSnapshot(rng, 5+rng.IntN(40), 3, 8)
		for _, agnostic := range []bool{false, true} {
			p := &MaxMinFairness{Agnostic: agnostic}
			want, err := p.Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			// Shuffle jobs and servers (hence the order types are met in).
			q := *s
			q.Jobs = append([]policy.Job(nil), s.Jobs...)
			q.Cluster.Servers = append([]allocation.Server(nil), s.Cluster.Servers...)
			rng.Shuffle(len(q.Jobs), func(a, b int) { q.Jobs[a], q.Jobs[b] = q.Jobs[b], q.Jobs[a] })
			rng.Shuffle(len(q.Cluster.Servers), func(a, b int) {
				q.Cluster.Servers[a], q.Cluster.Servers[b] = q.Cluster.Servers[b], q.Cluster.Servers[a]
			})
			got, err := p.Allocate(context.Background(), &q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("instance %d agnostic=%v: shuffled input changed the decision:\n%s", i, agnostic, diff)
			}
			// Renaming jobs so that their ID order reverses changes the LP's
			// column order. The optimum t* is unique and the allocation must
			// still attain it; which of several tied jobs receives leftover
			// capacity may change (see the package documentation).
			r := q
			r.Jobs = append([]policy.Job(nil), q.Jobs...)
			for j := range r.Jobs {
				r.Jobs[j].ID = rename(r.Jobs[j].ID)
			}
			renamed, err := p.Allocate(context.Background(), &r)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(renamed.Objective-want.Objective) > 1e-7*max(1, want.Objective) {
				t.Errorf("instance %d agnostic=%v: renamed jobs changed t* from %v to %v", i, agnostic, want.Objective, renamed.Objective)
			}
			for id, v := range terms(&r, renamed, agnostic) {
				if v < want.Objective*(1-1e-6) {
					t.Errorf("instance %d agnostic=%v: renamed job %s below t*: %v < %v", i, agnostic, id, v, want.Objective)
				}
			}
		}
	}
}

// rename maps job-NNN to an ID that sorts in the reverse order, and back.
func rename(id string) string {
	var n int
	if _, err := fmt.Sscanf(id, "job-%d", &n); err == nil {
		return fmt.Sprintf("rev-%03d", 999-n)
	}
	fmt.Sscanf(id, "rev-%d", &n)
	return fmt.Sprintf("job-%03d", 999-n)
}

func TestMaxMinFairnessDeterministic(t *testing.T) {
	s := randomSnapshot(rand.New(rand.NewPCG(5, 6)), 50, 3, 16)
	var first []byte
	for range 3 {
		d, err := (&MaxMinFairness{}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(d)
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatal("same input gave different decisions")
		}
	}
}

func TestMaxMinFairnessNoTimeWhereItCannotRun(t *testing.T) {
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "a", Accelerator: "k80", GPUs: 8},
			{ID: "b", Accelerator: "v100", GPUs: 2},
		}},
		Jobs: []policy.Job{
			{ID: "big", GPUs: 4, Throughput: shares{"k80": 1, "v100": 5}}, // too big for the V100s
			{ID: "oom", GPUs: 1, Throughput: shares{"k80": 0, "v100": 3}}, // cannot run on K80
			{ID: "any", GPUs: 1, Throughput: shares{"k80": 1, "v100": 2}},
		},
	}
	for _, agnostic := range []bool{false, true} {
		d, err := (&MaxMinFairness{Agnostic: agnostic}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if x := d.Allocation["big"].Shares["v100"]; x != 0 {
			t.Errorf("agnostic=%v: 4-GPU job got %v of the 2 V100s", agnostic, x)
		}
		if x := d.Allocation["oom"].Shares["k80"]; x != 0 {
			t.Errorf("agnostic=%v: job with zero K80 throughput got %v on K80", agnostic, x)
		}
	}
}

// A share of a few 1e-9 on a type where the job is 1000× faster can be what
// lifts it to t* (found by FuzzGeneratedSnapshot). Decisions drop shares
// below allocation.Tolerance, which no binder can carry out (a job run for
// 1e-9 of a round), so such a job falls short of t* by what the dropped
// share was worth: here 3.7e-5 of t*, and never more than 1e-6 of its
// time on each type times its throughput there.
func TestMaxMinFairnessTinySharesCount(t *testing.T) {
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "k80-0", Accelerator: "k80", GPUs: 1},
			{ID: "p100-0", Accelerator: "p100", GPUs: 1},
			{ID: "p100-1", Accelerator: "p100", GPUs: 2},
		}},
		Jobs: []policy.Job{
			{ID: "a", Weight: 100, GPUs: 1, Throughput: shares{"k80": 2.5, "p100": 1}},
			{ID: "b", GPUs: 1, Throughput: shares{"k80": 1, "p100": 1}},
			{ID: "c", Weight: 0.01, GPUs: 1, Throughput: shares{"k80": 1000, "p100": 1}},
			{ID: "d", GPUs: 3, Throughput: shares{"p100": 1}},
		},
	}
	for _, solver := range allocation.Solvers() {
		d, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		for id, v := range terms(s, d, false) {
			if v < d.Objective*(1-1e-4) {
				t.Errorf("%s: job %s term %v below t* %v (relative %.2g)", solver, id, v, d.Objective, 1-v/d.Objective)
			}
		}
		for id, g := range d.Allocation {
			for k, x := range g.Shares {
				if x > 0 && x < allocation.Tolerance {
					t.Errorf("%s: job %s keeps a share of %v on %s", solver, id, x, k)
				}
			}
		}
	}
}

// With weights 10⁴ apart t* is tiny relative to the largest term; the
// second-stage bound on t must be relative, or the tie-break LP may take
// time from the bottleneck job. (Found by FuzzGeneratedSnapshot.)
func TestMaxMinFairnessTinyObjective(t *testing.T) {
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "k", Accelerator: "k80", GPUs: 16}}},
		Jobs: []policy.Job{
			{ID: "light", Weight: 100, GPUs: 1, Throughput: shares{"k80": 1}},
			{ID: "heavy", Weight: 0.01, GPUs: 16, Throughput: shares{"k80": 1}},
		},
	}
	for _, solver := range allocation.Solvers() {
		d, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		// light runs all the time (term 0.01); heavy takes the other 15 GPUs.
		want := map[string]shares{"light": {"k80": 1}, "heavy": {"k80": 15.0 / 16}}
		got := map[string]shares{"light": d.Allocation["light"].Shares, "heavy": d.Allocation["heavy"].Shares}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-8, 0)); diff != "" || math.Abs(d.Objective-0.01) > 1e-9 {
			t.Errorf("%s: objective %v (want 0.01), shares (-want +got):\n%s", solver, d.Objective, diff)
		}
	}
}

func TestMaxMinFairnessCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
	_, err := (&MaxMinFairness{}).Allocate(ctx, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestMaxMinFairnessInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*policy.Job)
		want   string
	}{
		{"unknown accelerator", func(j *policy.Job) { j.Throughput = shares{"tpu": 3} }, "throughput"},
		// An elastic job passes Validate without a GPU count, but LAS has no
		// term for it: it must not silently pin t* to 0.
		{"elastic without GPUs", func(j *policy.Job) { j.GPUs, j.Elastic = 0, &policy.Elastic{BatchSize: 32} }, "gpus: 0"},
		{"weight overflows the term", func(j *policy.Job) { j.Weight = 1e-310 }, "weight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
			tc.mutate(&s.Jobs[1])
			// B is left out with its reason; the others share the cluster.
			for _, p := range []policy.Policy{&MaxMinFairness{}, &WaterFilling{}} {
				d, err := p.Allocate(context.Background(), s)
				if err != nil {
					t.Fatalf("%s: %v", p.Name(), err)
				}
				if why := d.Unscheduled["B"]; len(d.Unscheduled) != 1 || !strings.HasPrefix(why, tc.want) {
					t.Errorf("%s: Unscheduled = %v, want B left out for %s", p.Name(), d.Unscheduled, tc.want)
				}
				if _, ok := d.Allocation["B"]; ok || len(d.Allocation) != len(s.Jobs)-1 || !(d.Objective > 0) {
					t.Errorf("%s: Allocation = %v, objective %v; want every job but B, t* > 0", p.Name(), d.Allocation, d.Objective)
				}
				_, err = policy.Strict(p).Allocate(context.Background(), s)
				if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "B": `+tc.want) {
					t.Fatalf("Strict %s: err = %v, want ErrInvalidSnapshot naming job B and %s", p.Name(), err, tc.want)
				}
			}
		})
	}
}

// Throughputs and weights far from 1 must not break the LP: terms are
// normalized by T^prop before the weight is applied. The scales span the
// snapshot's range ([policy.MinPositive, policy.MaxMagnitude]); beyond it
// a job is left out (policy/all's TestEveryPolicyExtremeNumbers).
func TestMaxMinFairnessExtremeScales(t *testing.T) {
	for _, scale := range []float64{1e-11, 1e-6, 1e6, 1e14} {
		s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
		for i := range s.Jobs {
			for k, v := range s.Jobs[i].Throughput {
				s.Jobs[i].Throughput[k] = v * scale
			}
		}
		for _, solver := range allocation.Solvers() {
			d, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("scale %g %s: %v", scale, solver, err)
			}
			if math.Abs(d.Objective-7.0/6) > 1e-7 {
				t.Errorf("scale %g %s: objective %v, want 7/6", scale, solver, d.Objective)
			}
		}
	}
	// Weights 1e24 apart, the range's ends: coefficients of 1e30 once
	// aborted CLP.
	for _, w := range []float64{policy.MinPositive, policy.MaxMagnitude} {
		s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
		s.Jobs[0].Weight = w
		for _, solver := range allocation.Solvers() {
			d, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("weight %g %s: %v", w, solver, err)
			}
			if err := d.Allocation.Validate(s.Cluster); err != nil || len(d.Unscheduled) > 0 {
				t.Errorf("weight %g %s: %v, left out %v", w, solver, err, d.Unscheduled)
			}
		}
	}
}

func TestMaxMinFairnessEmpty(t *testing.T) {
	d, err := (&MaxMinFairness{}).Allocate(context.Background(), &policy.Snapshot{Cluster: handCluster()})
	if err != nil || len(d.Allocation) != 0 || d.Objective != 0 {
		t.Fatalf("got %+v, %v; want an empty decision", d, err)
	}
}

func TestRegistered(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"gavel.las", "", "gavel.las"},
		{"gavel.las-agnostic", "", "gavel.las-agnostic"},
		{"gavel.las", `{"agnostic": true, "solver": "purego"}`, "gavel.las-agnostic"},
	} {
		p, err := policy.New(tc.name, []byte(tc.config))
		if err != nil {
			t.Fatal(err)
		}
		if p.Name() != tc.want {
			t.Errorf("New(%q, %s).Name() = %q, want %q", tc.name, tc.config, p.Name(), tc.want)
		}
	}
	if _, err := policy.New("gavel.las", []byte(`{"agnostik": true}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("misspelt knob: err = %v, want ErrInvalidConfig", err)
	}
	if _, err := policy.New("gavel.las", []byte(`{"solver": "cplex"}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("unknown solver: err = %v, want ErrInvalidConfig", err)
	}
}
