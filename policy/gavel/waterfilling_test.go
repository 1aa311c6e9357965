package gavel

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// A job that saturates early: B (weight 4) reaches its largest term, 1/4,
// by running all the time on one of the two GPUs. LAS stops at t* = 1/4 for
// everyone; water-filling freezes B and lets A and C share the other GPU.
func TestWaterFillingSaturation(t *testing.T) {
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 2}}},
		Jobs: []policy.Job{
			{ID: "A", GPUs: 1, Throughput: shares{"v100": 1}},
			{ID: "B", GPUs: 1, Weight: 4, Throughput: shares{"v100": 1}},
			{ID: "C", GPUs: 1, Throughput: shares{"v100": 1}},
		},
	}
	for _, solver := range allocation.Solvers() {
		las, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := (&WaterFilling{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d.Objective-0.25) > 1e-9 || math.Abs(las.Objective-0.25) > 1e-9 {
			t.Errorf("%s: first level %v, LAS t* %v; want both 1/4", solver, d.Objective, las.Objective)
		}
		for id, want := range map[string]float64{"A": 0.5, "B": 1, "C": 0.5} {
			if got := d.Allocation[id].Shares["v100"]; math.Abs(got-want) > 1e-7 {
				t.Errorf("%s: job %s share %v, want %v", solver, id, got, want)
			}
		}
		// Every job that did not freeze at the first level ends strictly
		// above it.
		z := terms(s, d, false)
		if !(z["A"] > 0.25+1e-6 && z["C"] > 0.25+1e-6) {
			t.Errorf("%s: terms %v; A and C should rise above LAS's 1/4", solver, z)
		}
	}
}

// leximinViolation reports a job that could rise above its level while
// every job at or below that level keeps its own: the allocation is then
// not leximin-optimal. It checks each job with an LP of its own.
func leximinViolation(t *testing.T, s *policy.Snapshot, z map[string]float64, solver allocation.Solver) string {
	t.Helper()
	mm := &MaxMinFairness{Solver: solver}
	jobs := sortedJobs(s.Jobs)
	for j, job := range jobs {
		m := mm.build(s.Cluster, jobs, false)
		prog, exprs, unit := m.prog, m.terms, m.unit
		for i, other := range jobs {
			if i != j && z[other.ID] <= z[job.ID]*(1+1e-6) { // "at or below", up to solver tolerance
				prog.Constrain(exprs[i], z[other.ID]/unit*(1-1e-7), math.Inf(1))
			}
		}
		res, err := prog.Maximize(context.Background(), exprs[j])
		if err != nil {
			t.Fatalf("job %s: %v", job.ID, err)
		}
		if best := res.Objective * unit; best > z[job.ID]*(1+1e-5)+1e-9 {
			return job.ID
		}
	}
	return ""
}

func TestWaterFillingLeximin(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for i := range 25 {
		s := randomSnapshot(rng, 2+rng.IntN(14), 1+rng.IntN(3), 1+rng.IntN(10))
		var firsts []float64
		for _, solver := range allocation.Solvers() {
			d, err := (&WaterFilling{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("instance %d %s: %v", i, solver, err)
			}
			if err := d.Allocation.Validate(s.Cluster); err != nil {
				t.Errorf("instance %d %s: %v", i, solver, err)
			}
			las, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			// The first level is LAS's optimum, and nobody ends below it.
			if math.Abs(d.Objective-las.Objective) > 1e-7*max(1, las.Objective) {
				t.Errorf("instance %d %s: first level %v, LAS %v", i, solver, d.Objective, las.Objective)
			}
			z := terms(s, d, false)
			for id, v := range z {
				if v < las.Objective*(1-1e-6) {
					t.Errorf("instance %d %s: job %s at %v, below LAS's %v", i, solver, id, v, las.Objective)
				}
			}
			if id := leximinViolation(t, s, z, solver); id != "" {
				t.Errorf("instance %d %s: job %s could rise without lowering anyone at or below it; terms %v", i, solver, id, z)
			}
			firsts = append(firsts, d.Objective)
		}
		for _, f := range firsts[1:] {
			if math.Abs(f-firsts[0]) > 1e-7*max(1, firsts[0]) {
				t.Errorf("instance %d: engines disagree on the first level: %v", i, firsts)
			}
		}
	}
}

// roomySnapshot returns n random jobs on a cluster of n/3 to 4n/3 GPUs per
// type, where capacity often binds only after some jobs reach their most.
func roomySnapshot(rng *rand.Rand, n int) (*policy.Snapshot, int) {
	return randomSnapshot(rng, n, 1+rng.IntN(3), n/3+rng.IntN(n)), n
}

// fillOneByOne is fill without reach runs: one max-min LP per level, as
// WaterFilling describes it. TestWaterFillingReachRuns checks fill
// against it.
func fillOneByOne(ctx context.Context, prog *allocation.Program, terms []allocation.Expr, total allocation.Expr) (float64, *allocation.Result, error) {
	frozen := make([]bool, len(terms))
	first := math.NaN()
	for left := len(terms); left > 0; {
		var open []int
		var exprs []allocation.Expr
		for j, done := range frozen {
			if !done {
				open, exprs = append(open, j), append(exprs, terms[j])
			}
		}
		res, err := prog.MaximizeMin(ctx, exprs, allocation.Expr{})
		if err != nil {
			return 0, nil, err
		}
		if math.IsNaN(first) {
			first = res.Objective
		}
		stuck := slices.Contains(res.Bottleneck, true)
		for i, j := range open {
			if res.Bottleneck[i] || !stuck {
				frozen[j] = true
				left--
				prog.Constrain(terms[j], res.Objective-1e-9*math.Abs(res.Objective), math.Inf(1))
			}
		}
	}
	res, err := prog.Maximize(ctx, total)
	return first, res, err
}

// Where capacity is slack, many jobs freeze at their own reach before it
// binds: fill finds those runs by a search (reachRun) and must end where
// freezing them one LP at a time does, with the same first level and
// every job's term the same.
func TestWaterFillingReachRuns(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	runs := 0
	for i := range 20 {
		s, n := roomySnapshot(rng, 10+rng.IntN(30))
		jobs := sortedJobs(s.Jobs)
		for _, solver := range allocation.Solvers() {
			got, want := (&MaxMinFairness{Solver: solver}).build(s.Cluster, jobs, false), (&MaxMinFairness{Solver: solver}).build(s.Cluster, jobs, false)
			_, run, _, err := reachRun(ctx, got.prog, got.terms, got.prog.Reach(got.terms), make([]bool, n))
			if err != nil {
				t.Fatalf("instance %d %s: %v", i, solver, err)
			}
			if run > 1 {
				runs++
			}
			levels, res, err := fill(ctx, got.prog, got.terms, got.total)
			if err != nil {
				t.Fatalf("instance %d %s: %v", i, solver, err)
			}
			first, wres, err := fillOneByOne(ctx, want.prog, want.terms, want.total)
			if err != nil {
				t.Fatalf("instance %d %s: one by one: %v", i, solver, err)
			}
			if math.Abs(levels[0]-first) > 1e-7*max(1, first) {
				t.Errorf("instance %d %s: first level %v, one by one %v", i, solver, levels[0], first)
			}
			for j := range n {
				a, b := got.prog.Eval(got.terms[j], res), want.prog.Eval(want.terms[j], wres)
				if math.Abs(a-b) > 1e-6*max(1, b) {
					t.Errorf("instance %d %s: job %s's term %v, one by one %v", i, solver, jobs[j].ID, a, b)
				}
			}
		}
	}
	if runs < 10 {
		t.Errorf("%d instances started with a run of two or more jobs at their reach: too few to test the runs", runs)
	}
}

// A failing test(m) at t* shows every test whose reach is above t* to
// fail (see reachRun): each test it names, solved, must fail, and passing
// must be monotone, on random programs where capacity binds part way.
func TestReachTestsFailures(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	named := 0
	for i := range 8 {
		s, _ := roomySnapshot(rng, 6+rng.IntN(12))
		m := (&MaxMinFairness{}).build(s.Cluster, sortedJobs(s.Jobs), false)
		reach := m.prog.Reach(m.terms)
		open := byReach(make([]bool, len(m.terms)), reach)
		tests := reachTests{ctx, m.prog, m.terms, reach, open}
		fails := make([]int, len(open)+1)
		for k := 1; k <= len(open); k++ {
			f, _, err := tests.test(k)
			if err != nil {
				t.Fatalf("instance %d: test(%d): %v", i, k, err)
			}
			fails[k] = f
			if f < 0 || f > k {
				t.Errorf("instance %d: test(%d) names %d", i, k, f)
			}
			if k > 1 && f == 0 && fails[k-1] != 0 {
				t.Errorf("instance %d: test(%d) passes, test(%d) fails", i, k, k-1)
			}
		}
		for k, f := range fails {
			if f > 0 && f < k {
				named++
				if fails[f] == 0 {
					t.Errorf("instance %d: test(%d) named test(%d) a failure, which passes", i, k, f)
				}
			}
		}
	}
	if named < 5 {
		t.Errorf("only %d failing tests named an earlier failure: too few to test the bound", named)
	}
}

// gallop finds the largest passing m, for every n and every answer, with
// O(log m) tests, whatever failures a test also reports below its own m,
// and hands back test(1)'s result where nothing passes.
func TestGallop(t *testing.T) {
	level := &allocation.Result{Objective: 0.5}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 70; n++ {
		for k := 0; k <= n; k++ {
			var calls []int
			test := func(m int) (int, *allocation.Result, error) {
				if m < 1 || m > n {
					t.Fatalf("n=%d: test(%d)", n, m)
				}
				calls = append(calls, m)
				if m <= k {
					return 0, level, nil
				}
				return k + 1 + rng.IntN(m-k), level, nil // any failure in (k, m]
			}
			m, res, err := gallop(n, test)
			if err != nil || m != k {
				t.Fatalf("n=%d, passing up to %d: gallop returned %d, %v", n, k, m, err)
			}
			if (res != nil) != (k == 0) {
				t.Errorf("n=%d, passing up to %d: result %v", n, k, res)
			}
			if most := 2*bits.Len(uint(k)) + 1; len(calls) > most {
				t.Errorf("n=%d, passing up to %d: %d tests %v, more than %d", n, k, len(calls), calls, most)
			}
		}
	}
	// An error from any test the search runs is returned.
	var seq []int
	pass5 := func(m int) (int, *allocation.Result, error) {
		if m <= 5 {
			return 0, level, nil
		}
		return m, level, nil
	}
	gallop(9, func(m int) (int, *allocation.Result, error) { seq = append(seq, m); return pass5(m) })
	boom := errors.New("boom")
	for _, bad := range seq {
		_, _, err := gallop(9, func(m int) (int, *allocation.Result, error) {
			if m == bad {
				return 0, nil, boom
			}
			return pass5(m)
		})
		if !errors.Is(err, boom) {
			t.Errorf("an error at test(%d) of %v: gallop returned %v", bad, seq, err)
		}
	}
}
