package gavel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// duplicated returns a random snapshot in which each job has 0 to 3
// interchangeable copies (IDs "<id>-c<i>"), and whose own jobs are tied
// with some probability too: equal weight and throughputs from one pool.
func duplicated(rng *rand.Rand, n, nk, gpusPerType int) *policy.Snapshot {
	s := randomSnapshot(rng, n, nk, gpusPerType)
	for j := range s.Jobs {
		for c := range rng.IntN(4) {
			cp := s.Jobs[j]
			cp.ID = fmt.Sprintf("%s-c%d", cp.ID, c)
			s.Jobs = append(s.Jobs, cp)
		}
	}
	return s
}

func TestClassify(t *testing.T) {
	tp := func(v, k float64) map[allocation.Accelerator]float64 {
		return map[allocation.Accelerator]float64{"v100": v, "k80": k}
	}
	jobs := []*policy.Job{
		{ID: "a", GPUs: 1, Throughput: tp(4, 1)},
		{ID: "b", GPUs: 1, Throughput: tp(4, 1), Weight: 1}, // weight 1 is the zero weight
		{ID: "c", GPUs: 2, Throughput: tp(4, 1)},
		{ID: "d", GPUs: 1, Throughput: tp(4, 1), Weight: 2},
		{ID: "e", GPUs: 1, Throughput: tp(4, 1.5)},
		{ID: "f", GPUs: 2, Throughput: tp(4, 1)},
	}
	c := allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 4}, {ID: "t", Accelerator: "k80", GPUs: 4}}}
	_, _, tput := matrixOf(c, jobs, func(j *policy.Job, a allocation.Accelerator) float64 { return j.Throughput[a] })
	cl := classify(jobs, tput)
	if want := []int{0, 0, 1, 2, 3, 1}; !slices.Equal(cl.of, want) {
		t.Errorf("classes %v, want %v", cl.of, want)
	}
	if want := []int{2, 2, 1, 1}; !slices.Equal(cl.count, want) {
		t.Errorf("counts %v, want %v", cl.count, want)
	}
	if want := []int{0, 2, 3, 4}; !slices.Equal(cl.first, want) {
		t.Errorf("first members %v, want %v", cl.first, want)
	}
}

// TestClassesEqualJobs checks that the program over classes has the
// optimum of the program over jobs, in both of MaximizeMin's stages, and
// that its decision gives interchangeable jobs equal shares within capacity.
// Without the counts in the capacity rows the decision overfills types; without
// them in the tie-break's total the second stage's optimum differs.
func TestClassesEqualJobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for i := range 60 {
		n, nk := 1+rng.IntN(25), 1+rng.IntN(3)
		s := duplicated(rng, n, nk, 1+rng.IntN(2*n))
		for _, agnostic := range []bool{false, true} {
			for _, solver := range allocation.Solvers() {
				p := &MaxMinFairness{Agnostic: agnostic, Solver: solver}
				name := fmt.Sprintf("instance %d %s %s", i, p.Name(), solver)
				d, jobs := classedDecision(t, name, p, s)
				one := p.build(s.Cluster, jobs, false)
				want, err := one.prog.MaximizeMin(context.Background(), one.terms, one.total)
				if err != nil {
					t.Fatalf("%s: per job: %v", name, err)
				}
				if got := d.Objective / one.unit; math.Abs(got-want.Objective) > 1e-7*max(1, want.Objective) {
					t.Errorf("%s: t* %v over classes, %v over jobs", name, got, want.Objective)
				}
				z := terms(s, d, agnostic)
				var total float64
				for _, v := range z {
					total += v / one.unit
				}
				if best := one.prog.Eval(one.total, want); math.Abs(total-best) > 1e-6*max(1, best) {
					t.Errorf("%s: tie-break total %v over classes, %v over jobs", name, total, best)
				}
			}
		}
	}
}

// classedDecision decides s with p, checks that the decision fits the
// cluster and gives copies their original's shares (sameShares), and
// returns it with the jobs p's program sees.
func classedDecision(t *testing.T, name string, p policy.Policy, s *policy.Snapshot) (*policy.Decision, []*policy.Job) {
	t.Helper()
	d := fittedDecision(t, name, p, s)
	sameShares(t, name, s, d)
	_, jobs, _, err := prepare(context.Background(), p.Name(), s)
	if err != nil {
		t.Fatal(err)
	}
	return d, jobs
}

// sameShares checks that every copy of a job made by duplicated has its
// original's shares.
func sameShares(t *testing.T, name string, s *policy.Snapshot, d *policy.Decision) {
	t.Helper()
	for _, j := range s.Jobs {
		var orig string
		var c int
		if _, err := fmt.Sscanf(j.ID, "job-%03d-c%d", new(int), &c); err != nil {
			continue
		}
		orig = j.ID[:len("job-000")]
		a, b := d.Allocation[orig].Shares, d.Allocation[j.ID].Shares
		for _, k := range s.Cluster.Types() {
			if math.Abs(a[k]-b[k]) > 1e-12 {
				t.Errorf("%s: %s has %v, its copy %s %v", name, orig, a, j.ID, b)
				break
			}
		}
	}
}

// TestWaterFillingClasses checks that water-filling over classes reaches the
// leximin of water-filling over jobs: the sorted terms, which a leximin
// optimum fixes, agree.
func TestWaterFillingClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	for i := range 25 {
		n, nk := 1+rng.IntN(10), 1+rng.IntN(3)
		s := duplicated(rng, n, nk, 1+rng.IntN(10))
		for _, agnostic := range []bool{false, true} {
			p := &WaterFilling{Agnostic: agnostic}
			name := fmt.Sprintf("instance %d %s", i, p.Name())
			d, jobs := classedDecision(t, name, p, s)
			one := (&MaxMinFairness{Agnostic: agnostic}).build(s.Cluster, jobs, false)
			_, x, err := fill(context.Background(), one.prog, one.terms, one.total)
			if err != nil {
				t.Fatalf("%s: per job: %v", name, err)
			}
			var want, got []float64
			for _, e := range one.terms {
				want = append(want, one.prog.Eval(e, x))
			}
			for _, v := range terms(s, d, agnostic) {
				got = append(got, v/one.unit)
			}
			slices.Sort(want)
			slices.Sort(got)
			for k := range want {
				if math.Abs(want[k]-got[k]) > 1e-6*max(1, want[k]) {
					t.Errorf("%s: sorted terms over classes %v, over jobs %v", name, got, want)
					break
				}
			}
		}
	}
}

// TestThroughputClasses checks that gavel.max-throughput and gavel.min-cost
// over classes reach the optimum of their programs over jobs (a needs slice
// of zeros keeps the rows per job) and give copies their original's shares
// within capacity. Without the counts in the objective, the optimum over
// classes differs.
func TestThroughputClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	for i := range 40 {
		n, nk := 1+rng.IntN(25), 1+rng.IntN(3)
		s := duplicated(rng, n, nk, 1+rng.IntN(2*n))
		for _, p := range []policy.Policy{&MaxThroughput{}, &MinCost{Prices: map[allocation.Accelerator]float64{"k80": 0.9, "p100": 1.5, "v100": 3.1}}} {
			name := fmt.Sprintf("instance %d %s", i, p.Name())
			d, jobs := classedDecision(t, name, p, s)
			var price []float64
			if mc, ok := p.(*MinCost); ok {
				for _, k := range s.Cluster.Types() {
					price = append(price, mc.Prices[k])
				}
			}
			_, want, err := throughputProgram(context.Background(), s.Cluster, jobs, allocation.Auto, nil, price, make([]float64, len(jobs)))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(d.Objective-want) > 1e-7*max(1, want) {
				t.Errorf("%s: objective %v over classes, %v over jobs", name, d.Objective, want)
			}
		}
	}
}
