package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// maxMinSpec describes a max-min allocation program as
// allocation.Program.MaximizeMin builds it: X_jk ∈ [0, 1] for each job j and
// type k where the job may run (coef[j][k] > 0 and gpus[j] ≤ capacity[k]),
// Σ_k X_jk ≤ 1 for jobs with more than one X, Σ_j gpus[j]·X_jk ≤ capacity[k]
// for each type, and the terms Σ_k coef[j][k]·X_jk ≥ t.
type maxMinSpec struct {
	gpus     []float64
	coef     [][]float64
	capacity []float64
}

// base returns the program without t and the term rows, and the variable
// of each allowed X_jk (−1 elsewhere).
func (s maxMinSpec) base() (*Problem, [][]int) {
	p := &Problem{Sense: Maximize}
	x := make([][]int, len(s.gpus))
	for j := range s.gpus {
		x[j] = make([]int, len(s.capacity))
		for k := range s.capacity {
			x[j][k] = -1
			if s.coef[j][k] > 0 && s.gpus[j] <= s.capacity[k] {
				x[j][k] = p.AddVar(0, 1, 0)
			}
		}
	}
	for j := range s.gpus {
		var row []Term
		for _, v := range x[j] {
			if v >= 0 {
				row = append(row, Term{v, 1})
			}
		}
		if len(row) > 1 {
			p.AddRow(-Inf, 1, row...)
		}
	}
	for k, c := range s.capacity {
		var row []Term
		for j := range s.gpus {
			if v := x[j][k]; v >= 0 {
				row = append(row, Term{v, s.gpus[j]})
			}
		}
		p.AddRow(-Inf, c, row...)
	}
	return p, x
}

// stages returns stage 1 (maximize t, t no larger than any job's best
// coefficient) and, given its optimum tStar, stage 2 (t ≥ t*(1 − 1e-9),
// maximize the sum of the terms).
func (s maxMinSpec) stages() (stage1 *Problem, stage2 func(tStar float64) *Problem) {
	build := func() (*Problem, int, [][]int) {
		p, x := s.base()
		ub := math.Inf(1)
		for j := range s.gpus {
			best := 0.0
			for k, v := range x[j] {
				if v >= 0 {
					best = max(best, s.coef[j][k])
				}
			}
			ub = min(ub, best)
		}
		t := p.AddVar(-Inf, ub, 1)
		for j := range s.gpus {
			var row []Term
			for k, v := range x[j] {
				if v >= 0 {
					row = append(row, Term{v, s.coef[j][k]})
				}
			}
			p.AddRow(0, Inf, append(row, Term{t, -1})...)
		}
		return p, t, x
	}
	stage1, _, _ = build()
	return stage1, func(tStar float64) *Problem {
		p, t, x := build()
		p.SetBounds(t, tStar-1e-9*max(1, math.Abs(tStar)), Inf)
		p.SetObjective(t, 0)
		for j := range s.gpus {
			for k, v := range x[j] {
				if v >= 0 {
					p.SetObjective(v, p.obj[v]+s.coef[j][k])
				}
			}
		}
		return p
	}
}

// agnosticSpec is a heterogeneity-agnostic Gavel program: every throughput
// is 1, so each term coefficient is the job's GPU count over its weight.
func agnosticSpec(gpus, weights []float64, runs [][]bool, capacity []float64) maxMinSpec {
	s := maxMinSpec{gpus: gpus, capacity: capacity, coef: make([][]float64, len(gpus))}
	for j := range gpus {
		s.coef[j] = make([]float64, len(capacity))
		for k := range capacity {
			if runs[j][k] {
				s.coef[j][k] = gpus[j] / weights[j]
			}
		}
	}
	return s
}

// hangSpec is the program of the fuzz input
// policy/gavel/testdata/fuzz/FuzzAllocate/hang-purego-agnostic: 7 jobs on
// a100 (8 GPUs), k80 (2), p100 (16) and v100 (16), all throughputs 1.
// Its stage 2 made the old Simplex cycle forever inside gonum.
func hangSpec() maxMinSpec {
	all := []bool{true, true, true, true}
	noK80 := []bool{true, false, true, true}
	noA100 := []bool{false, true, true, true}
	return agnosticSpec(
		[]float64{16, 1, 8, 1, 16, 8, 1},
		[]float64{4, 4, 2, 0.01, 1, 0.01, 4},
		[][]bool{{false, false, true, true}, all, noK80, noA100, {false, false, true, true}, noK80, all},
		[]float64{8, 2, 16, 16})
}

// solveWithin solves p with e, failing the test if the solve takes longer
// than limit. Simplex honors the context's deadline, so a regression fails
// rather than hangs.
func solveWithin(t *testing.T, e Engine, p *Problem, limit time.Duration) (*Solution, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*limit)
	defer cancel()
	start := time.Now()
	sol, err := e.Solve(ctx, p)
	if d := time.Since(start); d > limit {
		t.Errorf("solve took %v, want under %v", d, limit)
	}
	return sol, err
}

// sameObjective reports whether two objectives agree within 1e-7 relative.
func sameObjective(a, b float64) bool {
	return math.Abs(a-b) <= 1e-7*max(1, math.Abs(b))
}

// TestSimplexDegenerateGavel solves the program that made gonum cycle (see
// core.go). Its stage 2 has the optimum 922.25; CLP agrees.
func TestSimplexDegenerateGavel(t *testing.T) {
	limit := time.Second
	if raceEnabled {
		limit = 10 * time.Second
	}
	stage1, stage2 := hangSpec().stages()
	sol1, err := solveWithin(t, Simplex{}, stage1, limit)
	if err != nil {
		t.Fatalf("stage 1: %v", err)
	}
	checkOptimal(t, stage1, sol1)
	if !sameObjective(sol1.Objective, 0.25) {
		t.Errorf("stage 1: t* = %v, want 0.25", sol1.Objective)
	}
	p := stage2(sol1.Objective)
	sol2, err := solveWithin(t, Simplex{}, p, limit)
	if err != nil {
		t.Fatalf("stage 2: %v", err)
	}
	checkOptimal(t, p, sol2)
	if !sameObjective(sol2.Objective, 922.25) {
		t.Errorf("stage 2: objective %v, want 922.25", sol2.Objective)
	}
	if HasCLP {
		ref, err := referenceEngine().Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("clp: %v", err)
		}
		if !sameObjective(sol2.Objective, ref.Objective) {
			t.Errorf("stage 2: simplex objective %v, clp objective %v", sol2.Objective, ref.Objective)
		}
	}
}

// randomAgnostic returns a random heterogeneity-agnostic program in the
// style of the Gavel fuzz tests: GPU counts, weights and capacities from
// small sets, so that ties, and hence degenerate vertices, abound.
func randomAgnostic(r *rand.Rand) maxMinSpec {
	pick := func(vs ...float64) float64 { return vs[r.IntN(len(vs))] }
	nk := 1 + r.IntN(4)
	capacity := make([]float64, nk)
	for k := range capacity {
		capacity[k] = pick(1, 2, 4, 8, 8, 16, 16, 32)
	}
	n := 1 + r.IntN(12)
	gpus, weights := make([]float64, n), make([]float64, n)
	runs := make([][]bool, n)
	for j := range n {
		gpus[j] = pick(1, 1, 1, 2, 4, 8, 16, 3)
		weights[j] = pick(0.01, 0.5, 1, 1, 2, 4, 100)
		runs[j] = make([]bool, nk)
		for k := range nk {
			runs[j][k] = r.IntN(4) > 0
		}
	}
	return agnosticSpec(gpus, weights, runs, capacity)
}

// TestSimplexDegenerateRandom runs both stages of random degenerate
// max-min programs and compares the objectives with the reference engine
// (CLP when available).
func TestSimplexDegenerateRandom(t *testing.T) {
	instances := 300
	if testing.Short() || raceEnabled {
		instances = 60
	}
	r := rand.New(rand.NewPCG(11, 12))
	ref := referenceEngine()
	for i := range instances {
		stage1, stage2 := randomAgnostic(r).stages()
		want1, err := ref.Solve(context.Background(), stage1)
		if err != nil {
			t.Fatalf("instance %d stage 1: reference: %v", i, err)
		}
		for s, p := range []*Problem{stage1, stage2(want1.Objective)} {
			want, err := ref.Solve(context.Background(), p)
			if err != nil {
				t.Fatalf("instance %d stage %d: reference: %v", i, s+1, err)
			}
			got, err := Simplex{}.Solve(context.Background(), p)
			if err != nil {
				t.Errorf("instance %d stage %d: %v", i, s+1, err)
				continue
			}
			checkOptimal(t, p, got)
			if !sameObjective(got.Objective, want.Objective) {
				t.Errorf("instance %d stage %d: objective %v, reference %v", i, s+1, got.Objective, want.Objective)
			}
		}
	}
}

// referenceEngine is CLP when compiled in, else Simplex itself: without CLP
// the comparisons still check Simplex against certificates (checkOptimal)
// and against the well-scaled form of each problem.
func referenceEngine() Engine {
	if HasCLP {
		return Default()
	}
	return Simplex{}
}

// TestSimplexGuardStopsCycling shows the safety net at work: gonum, run on
// the standard form of the hang program as the old Simplex ran it on a
// retry (rows scaled to a largest coefficient of 1, plus a row Σx + s = M
// that bounds the region) and with its own phase 1, cycles; the guard
// stops it with ErrTimeLimit. The same guard also stops it on a canceled
// context.
func TestSimplexGuardStopsCycling(t *testing.T) {
	_, stage2 := hangSpec().stages()
	sf, err := toStandard(stage2(0.25), DefaultSimplexMaxRows, DefaultSimplexMaxCols)
	if err != nil {
		t.Fatal(err)
	}
	m, n := sf.m+1, sf.n+1
	a := make([]float64, m*n)
	b := make([]float64, m)
	c := make([]float64, n)
	copy(c, sf.c)
	for i := range sf.m {
		var big float64
		for j := range sf.n {
			big = max(big, math.Abs(sf.a.At(i, j)))
		}
		for j := range sf.n {
			a[i*n+j] = sf.a.At(i, j) / big
		}
		b[i] = sf.b[i] / big
	}
	for j := range n {
		a[sf.m*n+j] = 1
	}
	b[sf.m] = 1e4 * max(1, maxAbs(b[:sf.m]))

	start := time.Now()
	_, err = safeSimplex(context.Background(), c, m, n, a, b, 1e-10*max(1, maxAbs(c)), nil)
	if !errors.Is(err, ErrTimeLimit) {
		t.Errorf("gonum on the cycling form: error %v, want ErrTimeLimit from the guard", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the guard stopped gonum after %v", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = safeSimplex(ctx, c, m, n, a, b, 1e-10*max(1, maxAbs(c)), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("gonum with a canceled context: error %v, want context.Canceled", err)
	}
}

// TestSimplexDeadline checks that a deadline stops a solve in progress,
// with the errors and status the Engine contract names.
func TestSimplexDeadline(t *testing.T) {
	p := maxMin(128, 3) // about a second of gonum, twenty under -race
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	sol, err := Simplex{}.Solve(ctx, p)
	if !errors.Is(err, ErrTimeLimit) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Solve with a 20ms deadline: error = %v, want ErrTimeLimit and context.DeadlineExceeded", err)
	}
	if sol == nil || sol.Status != Stopped {
		t.Errorf("Solve with a 20ms deadline: solution = %+v, want Status Stopped", sol)
	}
	// How long the stop takes on the wall clock depends on the machine's
	// load (580ms once, under -race beside other packages' tests);
	// TestSimplexStopsInLoop bounds it against the solve's own pace.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Solve returned %v after its deadline", d)
	}
}

// doneAfter is a context whose Err reports a deadline from its nth call on,
// and which records when it first did.
type doneAfter struct {
	context.Context
	n     int
	calls int
	done  time.Time
}

func (c *doneAfter) Err() error {
	c.calls++
	if c.calls < c.n {
		return nil
	}
	if c.done.IsZero() {
		c.done = time.Now()
	}
	return context.DeadlineExceeded
}

// TestSimplexStopsInLoop checks that the guard reads the context inside
// gonum's loop and stops there. A context that turns done at its 1000th
// read (of about 2,500 in a whole solve, 20ms into its 1.4s) must end the
// solve sooner than it took to get there: the guard stops it within
// 0.1ms, while without the guard the rest of the solve runs on. Both spans
// come from one run, so the machine's load and -race slow them alike.
func TestSimplexStopsInLoop(t *testing.T) {
	p := maxMin(128, 3)
	ctx := &doneAfter{Context: context.Background(), n: 1000}
	start := time.Now()
	_, err := Simplex{}.Solve(ctx, p)
	end := time.Now()
	if ctx.done.IsZero() {
		t.Fatalf("the solve read its context %d times, never %d: no guard in the loop (error %v)", ctx.calls, ctx.n, err)
	}
	if !errors.Is(err, ErrTimeLimit) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want ErrTimeLimit and context.DeadlineExceeded", err)
	}
	before, after := ctx.done.Sub(start), end.Sub(ctx.done)
	if after > before {
		t.Errorf("the solve ran %v after its context was done, %v before", after, before)
	}
}

// badlyScaledCase is a program from the Gavel fuzz corpus whose data spans
// many orders of magnitude, with its known optimum.
type badlyScaledCase struct {
	name string
	spec maxMinSpec
	t1   float64 // t*
	obj2 float64 // the optimum of stage 2
	// full lists X variables stage 2 must set to 1: with the terms so
	// unequal, the tie-break gives every job its whole share.
	full []int
}

func badlyScaledCases() []badlyScaledCase {
	smallWeight := func(w float64) maxMinSpec {
		// Job A needs 999 of 1000 GPUs and has weight w, job B needs 1.
		return maxMinSpec{
			gpus:     []float64{999, 1},
			coef:     [][]float64{{999 / w}, {1}},
			capacity: []float64{1000},
		}
	}
	return []badlyScaledCase{{
		// FuzzAllocate/unbounded-small-weight: gonum found stage 1
		// unbounded.
		name: "weight 1e-6", spec: smallWeight(1e-6), t1: 1, obj2: 999/1e-6 + 1, full: []int{0, 1},
	}, {
		// FuzzAllocate/seed-small-weight: stage 2 failed and job A kept
		// only the 1e-12 of stage 1, which rounds to nothing.
		name: "weight 1e-9", spec: smallWeight(1e-9), t1: 1, obj2: 999/1e-9 + 1, full: []int{0, 1},
	}, {
		// FuzzAllocate/infeasible-large-gpu-counts: a server with 1e8
		// GPUs; gonum found the program infeasible.
		name: "1e8 GPUs",
		spec: maxMinSpec{
			gpus:     []float64{99999999, 1},
			coef:     [][]float64{{99999999}, {1}},
			capacity: []float64{1e8},
		},
		t1: 1, obj2: 1e8, full: []int{0, 1},
	}, {
		// FuzzAllocate/seed-huge-numbers: a coefficient of 4e-308 next to
		// ones.
		name: "4e-308",
		spec: maxMinSpec{
			gpus:     []float64{1, 4},
			coef:     [][]float64{{1}, {4e-308}},
			capacity: []float64{4},
		},
		t1: 4e-308, obj2: 1,
	}}
}

func TestSimplexBadlyScaled(t *testing.T) {
	for _, tc := range badlyScaledCases() {
		t.Run(tc.name, func(t *testing.T) {
			stage1, stage2 := tc.spec.stages()
			for _, e := range testEngines() {
				sol1, err := e.Solve(context.Background(), stage1)
				if err != nil {
					t.Fatalf("%s: stage 1: %v", e.name, err)
				}
				checkOptimal(t, stage1, sol1)
				if !sameObjective(sol1.Objective, tc.t1) {
					t.Errorf("%s: stage 1: t* = %v, want %v", e.name, sol1.Objective, tc.t1)
				}
				p := stage2(sol1.Objective)
				sol2, err := e.Solve(context.Background(), p)
				if err != nil {
					t.Fatalf("%s: stage 2: %v", e.name, err)
				}
				checkOptimal(t, p, sol2)
				if !sameObjective(sol2.Objective, tc.obj2) {
					t.Errorf("%s: stage 2: objective %v, want %v", e.name, sol2.Objective, tc.obj2)
				}
				for _, v := range tc.full {
					if math.Abs(sol2.X[v]-1) > 1e-7 {
						t.Errorf("%s: stage 2: x[%d] = %v, want 1", e.name, v, sol2.X[v])
					}
				}
			}
		})
	}
}

// TestSimplexTinyObjective solves the second stage of the fuzz seed with
// "huge and tiny numbers" (policy/gavel FuzzAllocate seed 7), whose only
// objective coefficient is 2e-308: normalizing the costs must neither
// overflow (gonum never stops on infinite costs) nor lose the direction.
func TestSimplexTinyObjective(t *testing.T) {
	p := &Problem{Sense: Maximize}
	p.AddVar(0, 1, 0)
	p.AddVar(0, 1, 0)
	p.AddVar(0, 1, 2e-308)
	p.AddVar(-1e-09, Inf, 0)
	p.AddRow(-Inf, 1, Term{0, 1}, Term{1, 1})
	p.AddRow(-Inf, 4, Term{0, 1})
	p.AddRow(-Inf, 4, Term{1, 1}, Term{2, 1})
	p.AddRow(0, Inf, Term{3, -1})
	p.AddRow(0, Inf, Term{2, 2e-308}, Term{3, -1})
	// CLP, whose tolerances are absolute, rightly treats the cost as 0.
	sol, err := solveWithin(t, Simplex{}, p, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkOptimal(t, p, sol)
	if sol.X[2] != 1 || sol.Objective != 2e-308 {
		t.Errorf("x = %v, objective %v; want x[2] = 1, objective 2e-308", sol.X, sol.Objective)
	}
}

// rescale returns p with row i multiplied by row[i] and variable j
// replaced by x_j = col[j]·z_j. The two problems have the same optimal
// objective; the new one is as badly scaled as the factors make it.
func rescale(p *Problem, row, col []float64) *Problem {
	q := &Problem{Sense: p.Sense}
	for j := range p.NumVars() {
		lo, hi, c := p.Var(j)
		q.AddVar(lo/col[j], hi/col[j], c*col[j])
	}
	for i := range p.NumRows() {
		lo, hi, terms := p.Row(i)
		ts := make([]Term, len(terms))
		for k, tm := range terms {
			ts[k] = Term{tm.Var, tm.Coef * col[tm.Var] * row[i]}
		}
		q.AddRow(lo*row[i], hi*row[i], ts...)
	}
	return q
}

// coefRange returns the smallest and largest magnitude of p's
// coefficients.
func coefRange(p *Problem) (lo, hi float64) {
	lo = math.Inf(1)
	for _, tm := range p.terms {
		if tm.Coef != 0 {
			lo, hi = min(lo, math.Abs(tm.Coef)), max(hi, math.Abs(tm.Coef))
		}
	}
	return lo, hi
}

// TestSimplexRescaled solves random problems (randomProblem, maxMin and
// agnostic max-min programs) after scaling their rows by 10^[−4, 4] and
// their variables by 10^[−4.5, 3.5], so that coefficients span about 1e-9 to
// 1e8, and compares the objective with the reference engine's on the
// problem before scaling.
func TestSimplexRescaled(t *testing.T) {
	instances := 200
	if testing.Short() || raceEnabled {
		instances = 40
	}
	r := rand.New(rand.NewPCG(13, 14))
	ref := referenceEngine()
	spanLo, spanHi := math.Inf(1), 0.0
	for i := range instances {
		var p *Problem
		switch i % 4 {
		case 0, 1:
			p = randomProblem(r)
		case 2:
			p = maxMin(4+r.IntN(12), uint64(i))
		default:
			p, _ = randomAgnostic(r).stages()
		}
		row, col := make([]float64, p.NumRows()), make([]float64, p.NumVars())
		for k := range row {
			row[k] = math.Pow(10, -4+8*r.Float64())
		}
		for k := range col {
			col[k] = math.Pow(10, -4.5+8*r.Float64())
		}
		q := rescale(p, row, col)
		lo, hi := coefRange(q)
		spanLo, spanHi = min(spanLo, lo), max(spanHi, hi)

		want, err := ref.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("instance %d: reference on the unscaled problem: %v", i, err)
		}
		for _, e := range testEngines() {
			got, err := e.Solve(context.Background(), q)
			if err != nil {
				t.Errorf("instance %d (coefficients %.1e to %.1e), %s: %v", i, lo, hi, e.name, err)
				continue
			}
			if !sameObjective(got.Objective, want.Objective) {
				t.Errorf("instance %d (coefficients %.1e to %.1e), %s: objective %v, want %v",
					i, lo, hi, e.name, got.Objective, want.Objective)
			}
		}
	}
	if spanLo > 1e-8 || spanHi < 1e7 {
		t.Errorf("coefficients span only %.1e to %.1e", spanLo, spanHi)
	}
}

// TestSimplexEachAttempt runs each of core's attempts alone: Simplex
// normally succeeds on the first, so the fallbacks (a larger perturbation,
// then none, whose degenerate optima need basis completion and restarts)
// would otherwise go untested.
func TestSimplexEachAttempt(t *testing.T) {
	instances := 300
	if testing.Short() || raceEnabled {
		instances = 60
	}
	ref := referenceEngine()
	for _, at := range coreAttempts {
		t.Run(fmt.Sprintf("eps=%g", at.eps), func(t *testing.T) {
			defer func(old []coreAttempt) { coreAttempts = old }(coreAttempts)
			coreAttempts = []coreAttempt{at}
			r := rand.New(rand.NewPCG(15, 16))
			for i := range instances {
				var p *Problem
				switch i % 3 {
				case 0:
					p = randomProblem(r)
				case 1:
					p, _ = randomAgnostic(r).stages()
				default:
					stage1, stage2 := randomAgnostic(r).stages()
					sol, err := ref.Solve(context.Background(), stage1)
					if err != nil {
						t.Fatalf("instance %d: reference stage 1: %v", i, err)
					}
					p = stage2(sol.Objective)
				}
				want, err := ref.Solve(context.Background(), p)
				if err != nil {
					t.Fatalf("instance %d: reference: %v", i, err)
				}
				got, err := Simplex{}.Solve(context.Background(), p)
				if err != nil {
					t.Errorf("instance %d: %v", i, err)
					continue
				}
				checkOptimal(t, p, got)
				if !sameObjective(got.Objective, want.Objective) {
					t.Errorf("instance %d: objective %v, reference %v", i, got.Objective, want.Objective)
				}
			}
		})
	}
}
