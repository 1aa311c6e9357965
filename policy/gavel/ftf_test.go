package gavel

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFTFHandSolved(t *testing.T) {
	// With t = t^iso = 0, ρ* = 1/(max-min of y_j/T^iso_j); here T^iso equals
	// T^prop, so the allocation is LAS's and ρ* = 6/7.
	for _, solver := range allocation.Solvers() {
		p := &FinishTimeFairness{Solver: solver}
		d, err := p.Allocate(context.Background(), handSnapshot())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d.Objective-6.0/7) > 1e-7 {
			t.Errorf("%s: ρ* = %.9f, want 6/7", solver, d.Objective)
		}
		want := map[string]shares{"A": {"v100": 4.0 / 9, "k80": 5.0 / 9}, "B": {"v100": 5.0 / 9, "k80": 4.0 / 9}}
		if diff := cmp.Diff(want, rows(d), cmpopts.EquateApprox(0, 1e-6)); diff != "" {
			t.Errorf("%s: shares (-want +got):\n%s", solver, diff)
		}
		// The isolated allocation gives each job 1/3 V100, 2/3 K80:
		// T^iso_A = 2, T^iso_B = 4/3.
		wantState := FTFState{Jobs: map[string]IsolatedAccount{"A": {Rate: 2}, "B": {Rate: 4.0 / 3}}}
		if diff := cmp.Diff(wantState, p.State, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
			t.Errorf("%s: state (-want +got):\n%s", solver, diff)
		}
	}
}

func TestFTFIsolatedAccount(t *testing.T) {
	p := &FinishTimeFairness{}
	s := handSnapshot()
	if _, err := p.Allocate(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	// A made 100 steps and B 40 since the last call: at their isolated
	// rates (2 and 4/3 steps/s) that is 50 s and 30 s of isolated time. A
	// new job C starts with an empty account.
	s.Now = 60 * time.Second
	s.Jobs[0].StepsDone, s.Jobs[1].StepsDone = 100, 40
	s.Jobs = append(s.Jobs, policy.Job{ID: "C", GPUs: 1, Arrival: 60 * time.Second, StepsTotal: 500,
		Throughput: shares{"v100": 1, "k80": 1}})
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for id, a := range p.State.Jobs {
		got[id] = a.Seconds
	}
	if diff := cmp.Diff(map[string]float64{"A": 50, "B": 30, "C": 0}, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("isolated seconds (-want +got):\n%s", diff)
	}
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Error(err)
	}
	// A job that leaves leaves the state; the same snapshot twice credits
	// nothing twice.
	s.Jobs = s.Jobs[1:]
	for range 2 {
		if _, err := p.Allocate(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := p.State.Jobs["A"]; ok || p.State.Jobs["B"].Seconds != 30 {
		t.Errorf("state after A left = %+v", p.State.Jobs)
	}
}

// The state survives JSON, and a restored policy decides bit-identically.
func TestFTFStateRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	s := randomSnapshot(rng, 12, 3, 8)
	for j := range s.Jobs {
		s.Jobs[j].StepsTotal = 1000
	}
	p := &FinishTimeFairness{}
	if _, err := p.Allocate(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q FinishTimeFairness
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	s.Now = 100 * time.Second
	for j := range s.Jobs {
		s.Jobs[j].StepsDone = float64(10 * j)
	}
	want, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || !cmp.Equal(p.State, q.State) {
		t.Errorf("restored policy decided differently (-want +got):\n%s", diff)
	}
}

func TestFTFRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for i := range 25 {
		s := randomSnapshot(rng, 1+rng.IntN(20), 3, 1+rng.IntN(12))
		s.Now = time.Hour
		for j := range s.Jobs {
			s.Jobs[j].StepsTotal = float64(100 + rng.IntN(5000))
			s.Jobs[j].StepsDone = float64(rng.IntN(100))
			s.Jobs[j].Arrival = time.Duration(rng.IntN(3600)) * time.Second
		}
		var objectives []float64
		for _, solver := range allocation.Solvers() {
			p := &FinishTimeFairness{Solver: solver}
			d, err := p.Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("instance %d %s: %v", i, solver, err)
			}
			if err := d.Allocation.Validate(s.Cluster); err != nil {
				t.Errorf("instance %d %s: %v", i, solver, err)
			}
			// Never worse than the isolated allocation, which the search
			// starts from.
			prog, _, tput := newProgram(s.Cluster, sortedJobs(s.Jobs), solver, nil, func(j *policy.Job, a allocation.Accelerator) float64 { return j.Throughput[a] })
			iso, isoX := isolated(prog, tput)
			var active []ftfJob
			for j, job := range sortedJobs(s.Jobs) {
				r := job.StepsTotal - job.StepsDone
				active = append(active, ftfJob{j: j, age: (s.Now - job.Arrival).Seconds(), remaining: r, isolated: r / iso[j]})
			}
			f := newFTFSearch(context.Background(), prog, active)
			if limit := f.ratio(&allocation.Result{X: isoX}); d.Objective > limit*(1+1e-9) {
				t.Errorf("instance %d %s: ρ = %v, worse than the isolated allocation's %v", i, solver, d.Objective, limit)
			}
			objectives = append(objectives, d.Objective)
		}
		for _, o := range objectives[1:] {
			if math.Abs(o-objectives[0]) > 1e-6*objectives[0] {
				t.Errorf("instance %d: engines disagree on ρ*: %v", i, objectives)
			}
		}
	}
}

func TestFTFInvalid(t *testing.T) {
	// A job of unknown length is left out; its account waits for it.
	p := &FinishTimeFairness{}
	if _, err := p.Allocate(context.Background(), handSnapshot()); err != nil {
		t.Fatal(err)
	}
	before := p.State.Jobs["B"]
	s := handSnapshot()
	s.Jobs[1].StepsTotal = 0
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if why := d.Unscheduled["B"]; len(d.Unscheduled) != 1 || !strings.HasPrefix(why, "steps_total: unknown") {
		t.Errorf("Unscheduled = %v, want B left out for steps_total", d.Unscheduled)
	}
	if _, ok := d.Allocation["B"]; ok || len(d.Allocation) != len(s.Jobs)-1 {
		t.Errorf("Allocation = %v, want every job but B", d.Allocation)
	}
	if got, ok := p.State.Jobs["B"]; !ok || got != before {
		t.Errorf("B's account = %+v, %v; want it kept as %+v", got, ok, before)
	}
	_, err = policy.Strict(&FinishTimeFairness{}).Allocate(context.Background(), s)
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "B": steps_total`) {
		t.Errorf("Strict: err = %v, want ErrInvalidSnapshot naming job B's steps_total", err)
	}
}
