package gavel

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// The agnostic split depends on each job's total time alone: two
// allocations with the same totals, split differently across types, come
// out the same, and within every type's capacity. That holds only where the
// fitting finds a split (otherwise each keeps its own), so these crowded
// random clusters, where one job in eight cannot run on a type, also check
// that it finds one every time.
func TestSplitCanonical(t *testing.T) {
	for c := range 60 {
		rng := rand.New(rand.NewPCG(uint64(c), 11))
		n := 10 + rng.IntN(200)
		s := randomSnapshot(rng, n, 3, max(1, n/(2+rng.IntN(4))))
		for j := range s.Jobs {
			s.Jobs[j].StepsTotal = 1000
		}
		_, jobs, _, err := prepare(context.Background(), "test", s)
		if err != nil {
			t.Fatal(err)
		}
		prog, ids, _ := newProgram(s.Cluster, jobs, allocation.Auto, nil, bestIfAgnostic(true))
		terms := make([]allocation.Expr, len(jobs))
		for j := range jobs {
			terms[j] = prog.Throughput(j)
		}
		res, err := prog.MaximizeMin(context.Background(), terms, allocation.Sum(terms...))
		if err != nil {
			t.Fatal(err)
		}
		other := shuffleSplit(rng, prog, res.X)
		proportionalSplit(prog, res.X)
		proportionalSplit(prog, other)
		if !sameMatrix(res.X, other, 1e-9) {
			t.Fatalf("case %d: the same totals split two ways (no split fitted?)", c)
		}
		if err := prog.Allocation(ids, res).Validate(s.Cluster); err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
	}
}

// shuffleSplit returns x with each job's time moved at random among the
// types it can run on, its total kept.
func shuffleSplit(rng *rand.Rand, prog *allocation.Program, x [][]float64) [][]float64 {
	out := make([][]float64, len(x))
	for j, row := range x {
		out[j] = make([]float64, len(row))
		var busy float64
		for _, v := range row {
			busy += v
		}
		var w []float64
		var sum float64
		for k := range row {
			f := 0.0
			if prog.Allowed(j, k) {
				f = rng.Float64()
			}
			w = append(w, f)
			sum += f
		}
		for k := range row {
			if sum > 0 {
				out[j][k] = busy * w[k] / sum
			}
		}
	}
	return out
}

func sameMatrix(a, b [][]float64, tol float64) bool {
	for j := range a {
		for k := range a[j] {
			if math.Abs(a[j][k]-b[j][k]) > tol {
				return false
			}
		}
	}
	return true
}

// Warm = cold, allocation by allocation, for the agnostic variants whose
// optimum fixes every job's total time: their split then depends on nothing
// else. (gavel.las-agnostic's tie-break can leave totals tied, which the
// package doc says.)
func TestAgnosticWarmEqualsCold(t *testing.T) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		t.Skip("needs CLP")
	}
	mk := map[string]func(warm bool) policy.Policy{
		"ftf":           func(w bool) policy.Policy { return &FinishTimeFairness{Agnostic: true, Warm: w} },
		"las":           func(w bool) policy.Policy { return &MaxMinFairness{Agnostic: true, Warm: w} },
		"makespan":      func(w bool) policy.Policy { return &Makespan{Agnostic: true, Warm: w} },
		"water-filling": func(w bool) policy.Policy { return &WaterFilling{Agnostic: true, Warm: w} },
	}
	for name, f := range mk {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(300, 3))
			s := randomSnapshot(rng, 300, 3, 100)
			for j := range s.Jobs {
				s.Jobs[j].StepsTotal = float64(1000 * (1 + j%7))
			}
			warm, cold := f(true), f(false)
			for step := range 12 {
				dw, err := warm.Allocate(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				dc, err := cold.Allocate(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				if id, diff := shareDiff(dw.Allocation, dc.Allocation); diff > 1e-6 {
					t.Fatalf("step %d: job %s's shares differ by %v warm and cold", step, id, diff)
				}
				s = evolve(rng, s, step)
			}
		})
	}
}

// shareDiff returns the job whose shares differ most between a and b, and
// by how much.
func shareDiff(a, b allocation.Allocation) (string, float64) {
	var worst string
	var diff float64
	for id, g := range a {
		for _, m := range []map[allocation.Accelerator]float64{g.Shares, b[id].Shares} {
			for k := range m {
				if d := math.Abs(g.Shares[k] - b[id].Shares[k]); d > diff {
					worst, diff = id, d
				}
			}
		}
	}
	return worst, diff
}

// By hand: a 4-GPU job that runs only on k80 fills the 4 k80s, so the
// 1-GPU job that could run on either must go to p100 whole. Fitting alone
// only approaches that (its k80 weight shrinks by about a third of itself
// per round); keeping it off the full set {k80} gets there.
func TestSplitFullSet(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "k", Accelerator: "k80", GPUs: 4}, {ID: "p", Accelerator: "p100", GPUs: 4},
	}}
	prog := allocation.NewProgram(c, []int{4, 1}, [][]float64{{1, 0}, {1, 1}})
	x := [][]float64{{1, 0}, {0.5, 0.5}}
	if !proportionalSplit(prog, x) {
		t.Fatal("no split found")
	}
	if want := [][]float64{{1, 0}, {0, 1}}; !sameMatrix(x, want, 1e-12) {
		t.Errorf("split %v, want %v", x, want)
	}
}
