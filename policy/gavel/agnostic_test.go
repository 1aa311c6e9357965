package gavel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// By hand: 4 GPUs of one type; a of 2 GPUs, b of 4 and c of 1, weight 1,
// so unit = 4 and the terms are x_a/2, x_b and x_c/4. c caps t* at 1/4
// (x_c = 1), which leaves 1 GPU of the 4 idle. a and b are tied in what a
// GPU of it adds to Σ terms, so an LP may hand it to either; the fill
// raises their terms together to 3/8, where it is used up: x_a = 3/4,
// x_b = 3/8.
func TestGPUTimeByHand(t *testing.T) {
	s := &policy.Snapshot{Cluster: oneType(4), Jobs: []policy.Job{
		{ID: "a", GPUs: 2, Throughput: map[allocation.Accelerator]float64{"v100": 1}},
		{ID: "b", GPUs: 4, Throughput: map[allocation.Accelerator]float64{"v100": 1}},
		{ID: "c", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}},
	}}
	d, err := (&MaxMinFairness{Agnostic: true}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.Objective-1) > 1e-12 {
		t.Errorf("t* = %v, want 1 (x_c = 1 in Gavel's units)", d.Objective)
	}
	for id, want := range map[string]float64{"a": 0.75, "b": 0.375, "c": 1} {
		if got := d.Allocation[id].Shares["v100"]; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: share %v, want %v", id, got, want)
		}
	}
}

// gavel.las-agnostic by structure gives the LP's t* and tie-break total on
// random snapshots: weights, GPU counts, jobs that cannot run on some
// types, copies (classes) and crowded or roomy clusters, one to four types.
func TestGPUTimeMatchesLP(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	for _, solver := range allocation.Solvers() {
		for i := range 80 {
			n, nk := 1+rng.IntN(30), 1+rng.IntN(4)
			s := duplicated(rng, n, nk, 1+rng.IntN(3*n))
			name := fmt.Sprintf("%s instance %d (%d jobs, %d types)", solver, i, len(s.Jobs), nk)
			got := fittedDecision(t, name, &MaxMinFairness{Agnostic: true, Solver: solver}, s)
			want := fittedDecision(t, name, &MaxMinFairness{Agnostic: true, Solver: solver, byLP: true}, s)
			if math.Abs(got.Objective-want.Objective) > 1e-7*max(1, want.Objective) {
				t.Errorf("%s: t* %v by structure, %v by LP", name, got.Objective, want.Objective)
			}
			var zg, zw float64
			for id, z := range terms(s, got, true) {
				zg += z
				zw += terms(s, want, true)[id]
				if z < got.Objective-1e-6*max(1, got.Objective) { // shares are rounded to 1e-8
					t.Errorf("%s: job %s's term %v below t* %v", name, id, z, got.Objective)
				}
			}
			if math.Abs(zg-zw) > 1e-6*max(1, zw) {
				t.Errorf("%s: tie-break total %v by structure, %v by LP", name, zg, zw)
			}
		}
	}
}

// gavel.makespan-agnostic and gavel.ftf-agnostic by structure reach the
// LP's optimum (the makespan, and ρ*) on random snapshots with lengths, and
// makespan its tie-break total Σ_j y_j/R_j.
func TestGPUTimeMakespanFTF(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 9))
	for i := range 60 {
		n, nk := 1+rng.IntN(30), 1+rng.IntN(4)
		s := randomSnapshot(rng, n, nk, 1+rng.IntN(2*n))
		for j := range s.Jobs {
			s.Jobs[j].StepsTotal = float64(1000 * (1 + rng.IntN(7)))
			s.Jobs[j].StepsDone = float64(rng.IntN(3)) * 300
		}
		name := fmt.Sprintf("instance %d (%d jobs, %d types)", i, n, nk)
		got := fittedDecision(t, name, &Makespan{Agnostic: true}, s)
		want := fittedDecision(t, name, &Makespan{Agnostic: true, byLP: true}, s)
		if math.Abs(got.Objective-want.Objective) > 1e-7*want.Objective {
			t.Errorf("%s: makespan %v by structure, %v by LP", name, got.Objective, want.Objective)
		}
		if zg, zw := speedPerStep(s, got), speedPerStep(s, want); math.Abs(zg-zw) > 1e-6*zw {
			t.Errorf("%s: makespan's tie-break total %v by structure, %v by LP", name, zg, zw)
		}
		got = fittedDecision(t, name, &FinishTimeFairness{Agnostic: true}, s)
		want = fittedDecision(t, name, &FinishTimeFairness{Agnostic: true, byLP: true}, s)
		if math.Abs(got.Objective-want.Objective) > 1e-6*want.Objective {
			t.Errorf("%s: ρ* %v by structure, %v by LP", name, got.Objective, want.Objective)
		}
	}
}

// speedPerStep returns Σ_j y_j/R_j of d, y_j at each job's fastest
// throughput on every type it runs on.
func speedPerStep(s *policy.Snapshot, d *policy.Decision) float64 {
	var z float64
	for _, j := range s.Jobs {
		if r := j.StepsTotal - j.StepsDone; r > 0 {
			var best float64
			for _, v := range j.Throughput {
				best = max(best, v)
			}
			for _, x := range d.Allocation[j.ID].Shares {
				z += best * x / r
			}
		}
	}
	return z
}

// fittedDecision decides s with p and checks that it fits the cluster.
func fittedDecision(t *testing.T, name string, p policy.Policy, s *policy.Snapshot) *policy.Decision {
	t.Helper()
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return d
}

// Progressive filling is the leximin: gavel.water-filling-agnostic by
// structure allocates as by one LP per level, with weights. When every
// weight is equal, all rows are tied in gavel.las-agnostic's tie-break, so
// it fills them together from t* and reaches that same allocation.
func TestGPUTimeLeximin(t *testing.T) {
	if testing.Short() {
		t.Skip("80 water-filling decisions by LP")
	}
	rng := rand.New(rand.NewPCG(5, 40))
	for i := range 40 {
		n, nk := 1+rng.IntN(30), 1+rng.IntN(3)
		s := duplicated(rng, n, nk, 1+rng.IntN(3*n))
		name := fmt.Sprintf("instance %d (%d jobs, %d types)", i, len(s.Jobs), nk)
		byLP := fittedDecision(t, name, &WaterFilling{Agnostic: true, byLP: true}, s)
		wf := fittedDecision(t, name, &WaterFilling{Agnostic: true}, s)
		if id, diff := shareDiff(wf.Allocation, byLP.Allocation); diff > 1e-6 {
			t.Errorf("%s: job %s's water-filling shares differ by %v from the LPs'", name, id, diff)
		}
		if math.Abs(wf.Objective-byLP.Objective) > 1e-7*max(1, byLP.Objective) {
			t.Errorf("%s: first level %v by structure, %v by LP", name, wf.Objective, byLP.Objective)
		}
		for j := range s.Jobs {
			s.Jobs[j].Weight = 0
		}
		byLP = fittedDecision(t, name, &WaterFilling{Agnostic: true, byLP: true}, s)
		las := fittedDecision(t, name, &MaxMinFairness{Agnostic: true}, s)
		if id, diff := shareDiff(las.Allocation, byLP.Allocation); diff > 1e-6 {
			t.Errorf("%s, equal weights: job %s's LAS shares differ by %v from water-filling's", name, id, diff)
		}
	}
}

// The closed forms step aside, and the LP decides, beyond exactTypes types
// and for terms that are not positive, or so small that 1/β overflows.
func TestGPUTimeTooManyTypes(t *testing.T) {
	c := allocation.Cluster{}
	tput := make([][]float64, 1)
	for k := range exactTypes + 1 {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprint(k), Accelerator: allocation.Accelerator(fmt.Sprintf("t%02d", k)), GPUs: 1})
		tput[0] = append(tput[0], 1)
	}
	prog := allocation.NewProgram(c, []int{1}, tput)
	if _, ok := newGPUTime(prog, []float64{1}); ok {
		t.Errorf("%d types: solved by structure, want the LP", exactTypes+1)
	}
	prog = allocation.NewProgram(oneType(1), []int{1}, [][]float64{{1}})
	for _, beta := range []float64{-1, math.NaN(), math.SmallestNonzeroFloat64} {
		if _, ok := newGPUTime(prog, []float64{beta}); ok {
			t.Errorf("a term of %v per unit of time: solved by structure, want the LP", beta)
		}
	}
}
