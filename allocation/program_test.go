package allocation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/internal/lp"
)

// approxX compares allocation matrices and objectives up to the engines'
// tolerance.
var approxX = cmpopts.EquateApprox(1e-6, 1e-7)

// forEachSolver runs f once per engine compiled into this build.
func forEachSolver(t *testing.T, f func(t *testing.T, s allocation.Solver)) {
	t.Helper()
	for _, s := range allocation.Solvers() {
		t.Run(s.String(), func(t *testing.T) { f(t, s) })
	}
}

// gavelCluster is Gavel's hand example: 1 V100 and 2 K80 (on two servers).
// Its types are [k80 v100].
func gavelCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{
		{ID: "v100-0", Accelerator: "v100", GPUs: 1},
		{ID: "k80-0", Accelerator: "k80", GPUs: 1},
		{ID: "k80-1", Accelerator: "k80", GPUs: 1},
	}}
}

// gavelProgram has jobs A = {k80: 1, v100: 4} and B = {k80: 1, v100: 2},
// each on one GPU.
func gavelProgram(s allocation.Solver) *allocation.Program {
	p := allocation.NewProgram(gavelCluster(), []int{1, 1}, [][]float64{{1, 4}, {1, 2}})
	p.Solver = s
	return p
}

// gavelTerms are a_j = y_j / T^prop_j with T^prop_A = 2 and T^prop_B = 4/3.
func gavelTerms(p *allocation.Program) []allocation.Expr {
	return []allocation.Expr{p.Throughput(0).Scale(1.0 / 2), p.Throughput(1).Scale(3.0 / 4)}
}

type solved struct {
	Objective float64
	X         [][]float64
}

func TestProgramAccessors(t *testing.T) {
	p := allocation.NewProgram(gavelCluster(), []int{1, 2, 3}, [][]float64{{1, 4}, {0, 2}, {1, 1}})
	if diff := cmp.Diff([]allocation.Accelerator{"k80", "v100"}, p.Types()); diff != "" {
		t.Errorf("Types() mismatch (-want +got):\n%s", diff)
	}
	if got := p.NumJobs(); got != 3 {
		t.Errorf("NumJobs() = %d, want 3", got)
	}
	if diff := cmp.Diff([]int{1, 2, 3}, []int{p.GPUs(0), p.GPUs(1), p.GPUs(2)}); diff != "" {
		t.Errorf("GPUs() mismatch (-want +got):\n%s", diff)
	}
	var allowed [][]bool
	for j := range p.NumJobs() {
		allowed = append(allowed, []bool{p.Allowed(j, 0), p.Allowed(j, 1)})
	}
	// Job 1 has no throughput on k80 and needs 2 GPUs, more than the one
	// V100; job 2 needs 3 GPUs, more than any type has.
	want := [][]bool{{true, true}, {false, false}, {false, false}}
	if diff := cmp.Diff(want, allowed); diff != "" {
		t.Errorf("Allowed() mismatch (-want +got):\n%s", diff)
	}
}

func TestNewProgramPanics(t *testing.T) {
	tests := []struct {
		name string
		gpus []int
		tput [][]float64
	}{
		{name: "fewer rows", gpus: []int{1, 1}, tput: [][]float64{{1, 1}}},
		{name: "short row", gpus: []int{1}, tput: [][]float64{{1}}},
		{name: "long row", gpus: []int{1}, tput: [][]float64{{1, 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewProgram(%v, %v) did not panic", tt.gpus, tt.tput)
				}
			}()
			allocation.NewProgram(gavelCluster(), tt.gpus, tt.tput)
		})
	}
}

func TestProgramGavelHandCase(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		ctx := context.Background()
		tests := []struct {
			name  string
			solve func(p *allocation.Program) (*allocation.Result, error)
			want  solved
		}{
			{
				// V100 to A (4), a K80 to B (1): total 5, and the only optimum.
				name: "max total throughput",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					return p.Maximize(ctx, allocation.Sum(p.Throughput(0), p.Throughput(1)))
				},
				want: solved{Objective: 5, X: [][]float64{{0, 1}, {1, 0}}},
			},
			{
				// With full rows and the V100 shared, a_A = (1+3x)/2 and
				// a_B = 3/4·(2−x) for A's V100 time x: equal at x = 4/9.
				name: "max-min fairness",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					terms := gavelTerms(p)
					return p.MaximizeMin(ctx, terms, allocation.Sum(terms...))
				},
				want: solved{Objective: 7.0 / 6, X: [][]float64{{5.0 / 9, 4.0 / 9}, {4.0 / 9, 5.0 / 9}}},
			},
			{
				// A's V100 time ≤ 1/4 caps a_A at (1+3/4)/2 = 7/8; B then
				// takes the remaining 3/4 of the V100 (the tie-break).
				name: "max-min with a constraint",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					p.Constrain(p.X(0, 1), math.Inf(-1), 0.25)
					terms := gavelTerms(p)
					return p.MaximizeMin(ctx, terms, allocation.Sum(terms...))
				},
				want: solved{Objective: 7.0 / 8, X: [][]float64{{0.75, 0.25}, {0.25, 0.75}}},
			},
			{
				// A's max-min optimum without a tie-break: only the
				// objective is pinned, so X is checked elsewhere.
				name: "max-min without tie-break",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					return p.MaximizeMin(ctx, gavelTerms(p), allocation.Expr{})
				},
				want: solved{Objective: 7.0 / 6},
			},
			{
				// min a_k + a_v subject to a_k + 4·a_v ≥ 2: a_v = 1/2.
				name: "minimize time for a throughput target",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					p.Constrain(p.Throughput(0), 2, math.Inf(1))
					res, err := p.Minimize(ctx, p.Time(0))
					if res != nil {
						res.X = res.X[:1] // B's row is not determined
					}
					return res, err
				},
				want: solved{Objective: 0.5, X: [][]float64{{0, 0.5}}},
			},
			{
				// One expression summing both jobs: the max-min is the max
				// total throughput.
				name: "max-min of one expression mixing two jobs",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					return p.MaximizeMin(ctx, []allocation.Expr{p.Throughput(0).Plus(p.Throughput(1))}, allocation.Expr{})
				},
				want: solved{Objective: 5, X: [][]float64{{0, 1}, {1, 0}}},
			},
			{
				// min(y_A + y_B, y_A + 2·y_B): the first is the binding one;
				// its maximum 5 puts B on K80 (y_B = 1), so the second is 6.
				name: "max-min of expressions mixing two jobs",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					e1 := p.Throughput(0).Plus(p.Throughput(1))
					e2 := p.Throughput(0).Plus(p.Throughput(1).Scale(2))
					return p.MaximizeMin(ctx, []allocation.Expr{e1, e2}, allocation.Expr{})
				},
				want: solved{Objective: 5, X: [][]float64{{0, 1}, {1, 0}}},
			},
			{
				// min(e1, e2) with e1 = y_A = a_k + 4·a_v and
				// e2 = y_A + y_B − 4·a_k = −3·a_k + 4·a_v + b_k + 2·b_v.
				// e1 ≤ 4, reached only with A on the V100; then e2 = 4 + b_k,
				// so the optimum is 4. The tie-break y_B puts B on a K80.
				name: "max-min with a negative coefficient",
				solve: func(p *allocation.Program) (*allocation.Result, error) {
					e1 := p.Throughput(0)
					e2 := p.Throughput(0).Plus(p.Throughput(1)).Plus(p.X(0, 0).Scale(-4))
					return p.MaximizeMin(ctx, []allocation.Expr{e1, e2}, p.Throughput(1))
				},
				want: solved{Objective: 4, X: [][]float64{{0, 1}, {1, 0}}},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := gavelProgram(s)
				res, err := tt.solve(p)
				if err != nil {
					t.Fatalf("solve: %v", err)
				}
				got := solved{Objective: res.Objective, X: res.X}
				if tt.want.X == nil {
					got.X = nil
				}
				if diff := cmp.Diff(tt.want, got, approxX); diff != "" {
					t.Errorf("result mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestProgramEngineName(t *testing.T) {
	want := map[allocation.Solver]string{allocation.CLP: "clp", allocation.PureGo: "sparse"}
	solvers := append([]allocation.Solver{allocation.Auto}, allocation.Solvers()...)
	for _, s := range solvers {
		t.Run(s.String(), func(t *testing.T) {
			p := gavelProgram(s)
			res, err := p.Maximize(context.Background(), p.Time(0))
			if err != nil {
				t.Fatal(err)
			}
			w := want[s]
			if s == allocation.Auto {
				w = want[allocation.PureGo]
				if lp.HasCLP {
					w = want[allocation.CLP]
				}
			}
			if res.Engine != w {
				t.Errorf("Engine = %q, want %q", res.Engine, w)
			}
		})
	}
}

func TestProgramNotAllowed(t *testing.T) {
	// Job 0 has no throughput on k80; job 1 needs 2 GPUs but there is only
	// one V100; job 2 is an ordinary job; job 3 needs no GPUs.
	c := gavelCluster()
	gpus := []int{1, 2, 1, 0}
	tput := [][]float64{{0, 3}, {5, 9}, {1, 1}, {1, 1}}
	notAllowed := [][2]int{{0, 0}, {1, 1}, {3, 0}, {3, 1}}
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		for _, jk := range notAllowed {
			j, k := jk[0], jk[1]
			t.Run(fmt.Sprintf("job%d_type%d", j, k), func(t *testing.T) {
				p := allocation.NewProgram(c, gpus, tput)
				p.Solver = s
				if p.Allowed(j, k) {
					t.Errorf("Allowed(%d, %d) = true, want false", j, k)
				}
				if diff := cmp.Diff(allocation.Expr{}, p.X(j, k), cmp.AllowUnexported(allocation.Expr{})); diff != "" {
					t.Errorf("X(%d, %d) is not the zero Expr (-want +got):\n%s", j, k, diff)
				}
				ctx := context.Background()
				// Maximizing the job's time or its throughput puts it on
				// every type it may use, never on type k.
				for name, e := range map[string]allocation.Expr{
					"time": p.Time(j), "throughput": p.Throughput(j), "x": p.X(j, k),
					"weighted": p.Linear(j, []float64{7, 7}),
				} {
					res, err := p.Maximize(ctx, e)
					if err != nil {
						t.Fatalf("Maximize(%s): %v", name, err)
					}
					if got := res.X[j][k]; got != 0 {
						t.Errorf("Maximize(%s): X[%d][%d] = %v, want 0", name, j, k, got)
					}
				}
				res, err := p.MaximizeMin(ctx, []allocation.Expr{p.Time(j).Plus(p.X(2, 0))}, p.Time(j))
				if err != nil {
					t.Fatalf("MaximizeMin: %v", err)
				}
				if got := res.X[j][k]; got != 0 {
					t.Errorf("MaximizeMin: X[%d][%d] = %v, want 0", j, k, got)
				}
			})
		}
		// What the allowed variables reach, to show the solves are real.
		p := allocation.NewProgram(c, gpus, tput)
		p.Solver = s
		ctx := context.Background()
		tests := []struct {
			name string
			e    allocation.Expr
			want float64
		}{
			{name: "job0 throughput", e: p.Throughput(0), want: 3},
			{name: "job0 time", e: p.Time(0), want: 1},
			{name: "job1 throughput", e: p.Throughput(1), want: 5},
			{name: "job3 time", e: p.Time(3), want: 0},
			{name: "disallowed x", e: p.X(1, 1), want: 0},
		}
		for _, tt := range tests {
			res, err := p.Maximize(ctx, tt.e)
			if err != nil {
				t.Fatalf("Maximize(%s): %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, res.Objective, approxX); diff != "" {
				t.Errorf("Maximize(%s) objective (-want +got):\n%s", tt.name, diff)
			}
		}
	})
}

func TestProgramInfeasible(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		ctx := context.Background()
		solves := map[string]func(p *allocation.Program) (*allocation.Result, error){
			"Maximize": func(p *allocation.Program) (*allocation.Result, error) {
				return p.Maximize(ctx, p.Throughput(0))
			},
			"Minimize": func(p *allocation.Program) (*allocation.Result, error) {
				return p.Minimize(ctx, p.Time(1))
			},
			"MaximizeMin": func(p *allocation.Program) (*allocation.Result, error) {
				terms := gavelTerms(p)
				return p.MaximizeMin(ctx, terms, allocation.Sum(terms...))
			},
		}
		for name, solve := range solves {
			t.Run(name, func(t *testing.T) {
				p := gavelProgram(s)
				p.Constrain(p.Time(0), 2, math.Inf(1))
				res, err := solve(p)
				if !errors.Is(err, allocation.ErrInfeasible) {
					t.Errorf("err = %v, want ErrInfeasible", err)
				}
				if res != nil {
					t.Errorf("result = %+v, want nil", res)
				}
			})
		}
	})
}

func TestProgramMaximizeMinRepeatedTerms(t *testing.T) {
	one := allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 1}}}
	two := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s", Accelerator: "v100", GPUs: 1}, {ID: "k", Accelerator: "k80", GPUs: 1},
	}}
	tests := []struct {
		name  string
		c     allocation.Cluster
		gpus  []int
		tput  [][]float64
		exprs func(p *allocation.Program) []allocation.Expr
		want  solved
	}{
		{
			name: "X plus X", c: one, gpus: []int{1}, tput: [][]float64{{1}},
			exprs: func(p *allocation.Program) []allocation.Expr {
				return []allocation.Expr{p.X(0, 0).Plus(p.X(0, 0))}
			},
			want: solved{Objective: 2, X: [][]float64{{1}}},
		},
		{
			name: "Sum of X three times", c: one, gpus: []int{1}, tput: [][]float64{{1}},
			exprs: func(p *allocation.Program) []allocation.Expr {
				return []allocation.Expr{allocation.Sum(p.X(0, 0), p.X(0, 0), p.X(0, 0).Scale(0.5))}
			},
			want: solved{Objective: 2.5, X: [][]float64{{1}}},
		},
		{
			name: "repeated throughput", c: one, gpus: []int{1}, tput: [][]float64{{3}},
			exprs: func(p *allocation.Program) []allocation.Expr {
				return []allocation.Expr{p.Throughput(0).Plus(p.Throughput(0)), p.Throughput(0).Scale(2.5)}
			},
			want: solved{Objective: 6, X: [][]float64{{1}}},
		},
		{
			// X + X − X: the net coefficient is 1.
			name: "repeated with cancellation", c: one, gpus: []int{1}, tput: [][]float64{{1}},
			exprs: func(p *allocation.Program) []allocation.Expr {
				return []allocation.Expr{allocation.Sum(p.X(0, 0), p.X(0, 0), p.X(0, 0).Scale(-1))}
			},
			want: solved{Objective: 1, X: [][]float64{{1}}},
		},
		{
			// Two variables of one job: at most 1 in total, and the
			// repeated one is worth 2, so all time goes there.
			name: "repeated beside another variable of the job", c: two, gpus: []int{1}, tput: [][]float64{{1, 1}},
			exprs: func(p *allocation.Program) []allocation.Expr {
				return []allocation.Expr{allocation.Sum(p.X(0, 0), p.X(0, 1), p.X(0, 1))}
			},
			want: solved{Objective: 2, X: [][]float64{{0, 1}}},
		},
		{
			// Two jobs, one GPU per type: job 0 doubled on k80 (type 0).
			name: "repeated across two jobs", c: two, gpus: []int{1, 1}, tput: [][]float64{{1, 1}, {1, 1}},
			exprs: func(p *allocation.Program) []allocation.Expr {
				return []allocation.Expr{allocation.Sum(p.X(0, 0), p.X(0, 0), p.X(1, 1), p.X(1, 1), p.X(1, 1))}
			},
			want: solved{Objective: 5, X: [][]float64{{1, 0}, {0, 1}}},
		},
	}
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := allocation.NewProgram(tt.c, tt.gpus, tt.tput)
				p.Solver = s
				res, err := p.MaximizeMin(context.Background(), tt.exprs(p), allocation.Expr{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, solved{Objective: res.Objective, X: res.X}, approxX); diff != "" {
					t.Errorf("result mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestProgramResultCleaning(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		ctx := context.Background()
		t.Run("entry at 2e-7 is kept", func(t *testing.T) {
			p := gavelProgram(s)
			p.Constrain(p.X(0, 0), 0, 2e-7)
			p.Constrain(p.X(0, 1), 0, 0)
			res, err := p.Maximize(ctx, p.X(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]float64{2e-7, 0}, res.X[0], cmpopts.EquateApprox(1e-6, 1e-12)); diff != "" {
				t.Errorf("X[0] (-want +got):\n%s", diff)
			}
		})
		t.Run("properties", func(t *testing.T) {
			p := gavelProgram(s)
			for name, e := range map[string]allocation.Expr{
				"sum":     allocation.Sum(p.Throughput(0), p.Throughput(1)),
				"time":    allocation.Sum(p.Time(0), p.Time(1)),
				"mixed":   p.X(0, 1).Scale(3).Plus(p.X(1, 0)),
				"nothing": {},
			} {
				res, err := p.Maximize(ctx, e)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := checkMatrix(res.X, 2, 2); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	})
}

// checkMatrix reports an X that is not n×nk, has entries outside [0,1], or
// a row summing to more than 1.
func checkMatrix(x [][]float64, n, nk int) error {
	if len(x) != n {
		return fmt.Errorf("X has %d rows, want %d", len(x), n)
	}
	for j, row := range x {
		if len(row) != nk {
			return fmt.Errorf("X[%d] has %d entries, want %d", j, len(row), nk)
		}
		var sum float64
		for k, v := range row {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("X[%d][%d] = %v", j, k, v)
			}
			sum += v
		}
		if sum > 1 {
			return fmt.Errorf("X[%d] sums to %v > 1", j, sum)
		}
	}
	return nil
}

func TestProgramAllocation(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		c := gavelCluster()
		// Job c fits nowhere (3 GPUs): it still gets a Grant.
		p := allocation.NewProgram(c, []int{1, 1, 3}, [][]float64{{1, 4}, {1, 2}, {1, 1}})
		p.Solver = s
		res, err := p.Maximize(context.Background(), allocation.Sum(p.Throughput(0), p.Throughput(1)))
		if err != nil {
			t.Fatal(err)
		}
		a := p.Allocation([]string{"a", "b", "c"}, res)
		want := allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 1}},
			"b": {GPUs: 1, Shares: shares{"k80": 1}},
			"c": {GPUs: 3},
		}
		if diff := cmp.Diff(want, a, approxX); diff != "" {
			t.Errorf("Allocation mismatch (-want +got):\n%s", diff)
		}
		if err := a.Validate(c); err != nil {
			t.Errorf("Validate() = %v", err)
		}
	})
	t.Run("hand matrix", func(t *testing.T) {
		p := gavelProgram(allocation.PureGo)
		a := p.Allocation([]string{"x", "y"}, &allocation.Result{X: [][]float64{{0.25, 0}, {0, 0}}})
		want := allocation.Allocation{"x": {GPUs: 1, Shares: shares{"k80": 0.25}}, "y": {GPUs: 1}}
		if diff := cmp.Diff(want, a); diff != "" {
			t.Errorf("Allocation mismatch (-want +got):\n%s", diff)
		}
	})
}

// Solver noise below Tolerance never reaches a decision (a share of 1.67e-9
// was seen in one). A share of exactly Tolerance stays, a pair whose every
// share is noise disappears from both members, and the Result itself keeps
// the noise for Eval.
func TestProgramAllocationDropsNoise(t *testing.T) {
	p := allocation.NewProgram(gavelCluster(), []int{1, 1, 1}, [][]float64{{1, 4}, {1, 2}, {1, 3}},
		allocation.Pair{A: 0, B: 1, ThroughputA: []float64{0.5, 2}, ThroughputB: []float64{0.5, 1}},
		allocation.Pair{A: 1, B: 2, ThroughputA: []float64{0.5, 1}, ThroughputB: []float64{0.5, 1}})
	res := &allocation.Result{
		// Columns: k80, v100.
		X:     [][]float64{{1.67e-9, 0.5}, {allocation.Tolerance, 1e-7}, {0, 9.99e-7}},
		Pairs: [][]float64{{0.3, 2e-7}, {5e-7, 0}},
	}
	a := p.Allocation([]string{"a", "b", "c"}, res)
	want := allocation.Allocation{
		"a": {GPUs: 1, Shares: shares{"v100": 0.5}, Pairs: pair("b", shares{"k80": 0.3})},
		"b": {GPUs: 1, Shares: shares{"k80": allocation.Tolerance}, Pairs: pair("a", shares{"k80": 0.3})},
		"c": {GPUs: 1},
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("Allocation mismatch (-want +got):\n%s", diff)
	}
	if got, want := p.Eval(p.Throughput(0), res), 1.67e-9+4*0.5+0.5*0.3+2*2e-7; math.Abs(got-want) > 1e-15 {
		t.Errorf("Eval(Throughput(0)) = %v, want %v: the Result lost its small shares", got, want)
	}
}

// Rounding to ShareQuantum never lifts a job's time above a whole round:
// three shares that each round up lose the excess from the largest, and a
// job whose largest share is one it shares gives it up there (its
// partner's time only falls).
func TestProgramAllocationWholeRound(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a-0", Accelerator: "a", GPUs: 1}, {ID: "b-0", Accelerator: "b", GPUs: 1}, {ID: "c-0", Accelerator: "c", GPUs: 1},
	}}
	ones := []float64{1, 1, 1}
	p := allocation.NewProgram(c, []int{1, 1, 1}, [][]float64{ones, ones, ones},
		allocation.Pair{A: 1, B: 2, ThroughputA: ones, ThroughputB: ones})
	res := &allocation.Result{
		X: [][]float64{
			{0.400000006, 0.300000006, 0.299999988}, // 40000001 + 30000001 + 29999999 quanta
			{0.100000006, 0, 0},
			{0, 0, 0.099999994},
		},
		Pairs: [][]float64{{0, 0.450000006, 0.450000006}},
	}
	a := p.Allocation([]string{"x", "y", "z"}, res)
	both := shares{"b": 0.44999998, "c": 0.45000001}
	want := allocation.Allocation{
		"x": {GPUs: 1, Shares: shares{"a": 0.4, "b": 0.30000001, "c": 0.29999999}},
		"y": {GPUs: 1, Shares: shares{"a": 0.10000001}, Pairs: pair("z", both)},
		"z": {GPUs: 1, Shares: shares{"c": 0.09999999}, Pairs: pair("y", both)},
	}
	if diff := cmp.Diff(want, a, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
		t.Errorf("Allocation mismatch (-want +got):\n%s", diff)
	}
	// Random jobs of time 1: x over three types, y over two and a pair.
	rng := rand.New(rand.NewPCG(7, 7))
	whole := func(w []float64) []float64 {
		sum := 0.0
		for i := range w {
			w[i] = rng.Float64()
			sum += w[i]
		}
		for i := range w {
			w[i] /= sum
		}
		return w
	}
	quanta := func(ms ...map[allocation.Accelerator]float64) int64 {
		n := int64(0)
		for _, m := range ms {
			for _, v := range m {
				n += int64(math.Round(v / allocation.ShareQuantum))
			}
		}
		return n
	}
	over := 0
	for range 2000 {
		x, y := whole(make([]float64, 3)), whole(make([]float64, 3))
		r := &allocation.Result{X: [][]float64{x, {y[0], y[1], 0}, {0, 0, 0}}, Pairs: [][]float64{{0, 0, y[2]}}}
		a := p.Allocation([]string{"x", "y", "z"}, r)
		if n := quanta(a["x"].Shares); n > 1e8 {
			t.Fatalf("job x's shares from %v: %d quanta, more than a whole round", x, n)
		} else if n < 1e8-1 {
			t.Fatalf("job x's shares from %v: %d quanta, more than one lost", x, n)
		}
		if n := quanta(a["y"].Shares, a["y"].Pairs["z"]); n > 1e8 {
			t.Fatalf("job y's shares from %v: %d quanta, more than a whole round", y, n)
		}
		if math.Round(x[0]/allocation.ShareQuantum)+math.Round(x[1]/allocation.ShareQuantum)+math.Round(x[2]/allocation.ShareQuantum) > 1e8 {
			over++
		}
	}
	if over == 0 {
		t.Error("no random job's shares rounded above a whole round: the test checks nothing")
	}
}

// Capacity is each type's GPUs in column order, and a copy.
func TestProgramCapacity(t *testing.T) {
	p := gavelProgram(allocation.PureGo)
	got := p.Capacity()
	if want := []float64{2, 1}; !slices.Equal(got, want) { // k80, v100
		t.Fatalf("Capacity() = %v, want %v", got, want)
	}
	got[0] = 99
	if p.Capacity()[0] != 2 {
		t.Error("Capacity() shares the program's own slice")
	}
}

func TestSolverText(t *testing.T) {
	tests := []struct {
		s    allocation.Solver
		text string
	}{
		{allocation.Auto, "auto"},
		{allocation.CLP, "clp"},
		{allocation.PureGo, "purego"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			b, err := tt.s.MarshalText()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.text || tt.s.String() != tt.text {
				t.Errorf("MarshalText() = %q, String() = %q, want %q", b, tt.s.String(), tt.text)
			}
			got := allocation.Solver(99)
			if err := got.UnmarshalText([]byte(tt.text)); err != nil {
				t.Fatal(err)
			}
			if got != tt.s {
				t.Errorf("UnmarshalText(%q) = %v, want %v", tt.text, got, tt.s)
			}
			// Through encoding/json, as configurations use it.
			type config struct {
				Solver allocation.Solver `json:"solver"`
			}
			j, err := json.Marshal(config{Solver: tt.s})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"solver":"` + tt.text + `"}`; string(j) != want {
				t.Errorf("json.Marshal = %s, want %s", j, want)
			}
			var back config
			if err := json.Unmarshal(j, &back); err != nil || back.Solver != tt.s {
				t.Errorf("json round trip = %v, %v; want %v", back.Solver, err, tt.s)
			}
		})
	}
	t.Run("empty is Auto", func(t *testing.T) {
		s := allocation.PureGo
		if err := s.UnmarshalText(nil); err != nil || s != allocation.Auto {
			t.Errorf("UnmarshalText(nil) = %v, solver %v; want nil, auto", err, s)
		}
	})
	for _, bad := range []string{"CLP", "glpk", " clp", "Solver(7)"} {
		t.Run("unknown "+bad, func(t *testing.T) {
			s := allocation.PureGo
			err := s.UnmarshalText([]byte(bad))
			if !errors.Is(err, allocation.ErrNoSolver) {
				t.Errorf("UnmarshalText(%q) = %v, want ErrNoSolver", bad, err)
			}
			if s != allocation.PureGo {
				t.Errorf("UnmarshalText(%q) changed the solver to %v", bad, s)
			}
		})
	}
	if got := allocation.Solver(7).String(); got != "Solver(7)" {
		t.Errorf("Solver(7).String() = %q", got)
	}
}

func TestSolvers(t *testing.T) {
	want := []allocation.Solver{allocation.PureGo}
	if lp.HasCLP {
		want = []allocation.Solver{allocation.CLP, allocation.PureGo}
	}
	if diff := cmp.Diff(want, allocation.Solvers()); diff != "" {
		t.Errorf("Solvers() mismatch (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	for _, s := range []allocation.Solver{allocation.Auto, allocation.CLP, allocation.PureGo, allocation.Solver(7)} {
		t.Run(s.String(), func(t *testing.T) {
			available := s == allocation.Auto || slices.Contains(allocation.Solvers(), s)
			p := gavelProgram(s)
			terms := gavelTerms(p)
			_, err1 := p.Maximize(ctx, p.Time(0))
			_, err2 := p.Minimize(ctx, p.Time(0))
			_, err3 := p.MaximizeMin(ctx, terms, allocation.Sum(terms...))
			for i, err := range []error{err1, err2, err3} {
				if available && err != nil {
					t.Errorf("solve %d: %v", i, err)
				}
				if !available && !errors.Is(err, allocation.ErrNoSolver) {
					t.Errorf("solve %d: err = %v, want ErrNoSolver", i, err)
				}
			}
		})
	}
}

func TestProgramCancelled(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := gavelProgram(s)
		terms := gavelTerms(p)
		for name, solve := range map[string]func() (*allocation.Result, error){
			"Maximize": func() (*allocation.Result, error) { return p.Maximize(ctx, p.Throughput(0)) },
			"Minimize": func() (*allocation.Result, error) { return p.Minimize(ctx, p.Throughput(0)) },
			"MaximizeMin": func() (*allocation.Result, error) {
				return p.MaximizeMin(ctx, terms, allocation.Sum(terms...))
			},
		} {
			res, err := solve()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: err = %v, want context.Canceled", name, err)
			}
			if res != nil {
				t.Errorf("%s: result = %+v, want nil", name, res)
			}
		}
	})
}

// randomCase is a random max-min program: jobs, a cluster, and per job the
// coefficients of its term a_j = Σ_k coef[j][k]·X_jk.
type randomCase struct {
	c    allocation.Cluster
	gpus []int
	tput [][]float64
	coef [][]float64
}

func newRandomCase(seed uint64) randomCase {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	names := []allocation.Accelerator{"k80", "p100", "v100"}
	nk := 1 + r.IntN(len(names))
	var rc randomCase
	for k := range nk {
		for i := range 1 + r.IntN(3) {
			rc.c.Servers = append(rc.c.Servers, allocation.Server{
				ID:          fmt.Sprintf("%s-%d", names[k], i),
				Accelerator: names[k],
				GPUs:        []int{1, 2, 4, 8}[r.IntN(4)],
				CPUs:        32,
				MemoryGB:    256,
			})
		}
	}
	r.Shuffle(len(rc.c.Servers), func(i, j int) {
		rc.c.Servers[i], rc.c.Servers[j] = rc.c.Servers[j], rc.c.Servers[i]
	})
	n := 1 + r.IntN(25)
	for range n {
		g := []int{1, 2, 4}[r.IntN(3)]
		weight := float64(1 + r.IntN(3))
		prop := 0.5 + 2*r.Float64()
		tput := make([]float64, nk)
		coef := make([]float64, nk)
		for k := range nk {
			if r.IntN(6) > 0 {
				tput[k] = 0.1 + 10*r.Float64()
			}
			coef[k] = float64(g) * tput[k] / (weight * prop)
		}
		rc.gpus = append(rc.gpus, g)
		rc.tput = append(rc.tput, tput)
		rc.coef = append(rc.coef, coef)
	}
	return rc
}

// runnable returns the jobs of p that can run on some type.
func runnable(p *allocation.Program) []int {
	var jobs []int
	for j := range p.NumJobs() {
		for k := range p.Types() {
			if p.Allowed(j, k) {
				jobs = append(jobs, j)
				break
			}
		}
	}
	return jobs
}

// solve builds the program and maximizes min_j a_j over the jobs that can
// run somewhere, breaking ties by Σ_j a_j.
func (rc randomCase) solve(s allocation.Solver) (*allocation.Program, []int, *allocation.Result, error) {
	p := allocation.NewProgram(rc.c, rc.gpus, rc.tput)
	p.Solver = s
	jobs := runnable(p)
	var terms []allocation.Expr
	for _, j := range jobs {
		terms = append(terms, p.Linear(j, rc.coef[j]))
	}
	if len(terms) == 0 {
		return p, nil, nil, nil
	}
	res, err := p.MaximizeMin(context.Background(), terms, allocation.Sum(terms...))
	return p, jobs, res, err
}

func TestProgramRandomMaxMin(t *testing.T) {
	const seeds = 100
	solvers := allocation.Solvers()
	// The property checks below are vacuous for a program where no job can
	// run; make sure the generator rarely produces one.
	nonTrivial := 0
	for seed := range uint64(seeds) {
		rc := newRandomCase(seed)
		if len(runnable(allocation.NewProgram(rc.c, rc.gpus, rc.tput))) > 0 {
			nonTrivial++
		}
	}
	if nonTrivial < seeds*9/10 {
		t.Errorf("only %d of %d random programs have a job that can run", nonTrivial, seeds)
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rc := newRandomCase(seed)
			objectives := map[allocation.Solver]float64{}
			for _, s := range solvers {
				p, jobs, res, err := rc.solve(s)
				if err != nil {
					t.Fatalf("%v: %v", s, err)
				}
				if res == nil {
					continue // no job can run anywhere
				}
				objectives[s] = res.Objective
				if err := checkMatrix(res.X, len(rc.gpus), len(p.Types())); err != nil {
					t.Errorf("%v: %v", s, err)
				}
				ids := make([]string, len(rc.gpus))
				for j := range ids {
					ids[j] = fmt.Sprintf("job%02d", j)
				}
				if err := p.Allocation(ids, res).Validate(rc.c); err != nil {
					t.Errorf("%v: Validate: %v", s, err)
				}
				if !(res.Objective > 0) {
					t.Errorf("%v: objective %v, want > 0", s, res.Objective)
				}
				for _, j := range jobs {
					var a float64
					for k, x := range res.X[j] {
						a += rc.coef[j][k] * x
					}
					if a < res.Objective*(1-1e-6) {
						t.Errorf("%v: job %d term %v < objective %v", s, j, a, res.Objective)
					}
				}
				for j := range rc.gpus {
					for k := range p.Types() {
						if !p.Allowed(j, k) && res.X[j][k] != 0 {
							t.Errorf("%v: X[%d][%d] = %v on a disallowed type", s, j, k, res.X[j][k])
						}
					}
				}
				// Determinism: the same seed gives a bit-identical Result.
				// Checked on a quarter of the seeds to keep -race fast.
				if seed%4 == 0 {
					_, _, again, err := newRandomCase(seed).solve(s)
					if err != nil {
						t.Fatalf("%v: second solve: %v", s, err)
					}
					if diff := cmp.Diff(res, again); diff != "" {
						t.Errorf("%v: second solve differs (-first +second):\n%s", s, diff)
					}
				}
			}
			if clp, ok := objectives[allocation.CLP]; ok {
				pure := objectives[allocation.PureGo]
				if math.Abs(clp-pure) > 1e-7*math.Max(1, math.Abs(clp)) {
					t.Errorf("objective CLP %v, PureGo %v", clp, pure)
				}
			}
		})
	}
}

// Strings in errors from an unavailable engine name the engine.
func TestNoSolverMessage(t *testing.T) {
	if lp.HasCLP {
		t.Skip("CLP is compiled in")
	}
	p := gavelProgram(allocation.CLP)
	_, err := p.Maximize(context.Background(), p.Time(0))
	if !errors.Is(err, allocation.ErrNoSolver) || !strings.Contains(err.Error(), "CLP") {
		t.Errorf("err = %v, want ErrNoSolver naming CLP", err)
	}
}

// A Program may be solved from several goroutines at once: each solve works
// on its own copy of the LP (run with -race).
func TestProgramConcurrentSolves(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		p := gavelProgram(s)
		terms := gavelTerms(p)
		const n = 4
		got := make([]solved, 2*n)
		errs := make([]error, 2*n)
		done := make(chan struct{})
		for i := range n {
			go func() {
				defer func() { done <- struct{}{} }()
				res, err := p.MaximizeMin(context.Background(), terms, allocation.Sum(terms...))
				if errs[2*i] = err; err == nil {
					got[2*i] = solved{Objective: res.Objective, X: res.X}
				}
			}()
			go func() {
				defer func() { done <- struct{}{} }()
				res, err := p.Maximize(context.Background(), allocation.Sum(p.Throughput(0), p.Throughput(1)))
				if errs[2*i+1] = err; err == nil {
					got[2*i+1] = solved{Objective: res.Objective, X: res.X}
				}
			}()
		}
		for range 2 * n {
			<-done
		}
		want := make([]solved, 2*n)
		for i := range n {
			want[2*i] = solved{Objective: 7.0 / 6, X: [][]float64{{5.0 / 9, 4.0 / 9}, {4.0 / 9, 5.0 / 9}}}
			want[2*i+1] = solved{Objective: 5, X: [][]float64{{0, 1}, {1, 0}}}
		}
		if diff := cmp.Diff(make([]error, 2*n), errs, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("errors (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, got, approxX); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
	})
}

// TestNewClasses solves by hand a class of two interchangeable jobs (1 and
// 4 steps/s on a K80 and a V100) and a job B (1 and 2) on one V100 and two
// K80s. Giving B a fraction v of its time on the V100 and the rest on a
// K80, and each A job what is left, B gets 1+v and each A (1+v)/2 + 2(1−v):
// equal at v = 0.6, so t* = 1.6 with A at [0.8, 0.2] and B at [0.4, 0.6],
// every GPU and every job's time used. The same three jobs listed one by one
// reach the same t*.
func TestNewClasses(t *testing.T) {
	tput := [][]float64{{1, 4}, {1, 2}}
	p := allocation.NewClasses(gavelCluster(), []int{1, 1}, []int{2, 1}, tput)
	if p.NumJobs() != 2 || p.Count(0) != 2 || p.Count(1) != 1 || p.GPUs(0) != 1 {
		t.Errorf("NumJobs %d, Count %d %d, GPUs %d; want 2, 2 1, 1", p.NumJobs(), p.Count(0), p.Count(1), p.GPUs(0))
	}
	for _, s := range allocation.Solvers() {
		p.Solver = s
		terms := []allocation.Expr{p.Throughput(0), p.Throughput(1)}
		res, err := p.MaximizeMin(context.Background(), terms, allocation.Sum(terms[0].Scale(2), terms[1]))
		if err != nil {
			t.Fatal(err)
		}
		want := [][]float64{{0.8, 0.2}, {0.4, 0.6}}
		if res.Objective < 1.6-1e-7 || res.Objective > 1.6+1e-7 ||
			!cmp.Equal(res.X, want, cmpopts.EquateApprox(0, 1e-7)) {
			t.Errorf("%s: t* %v, X %v; want 1.6, %v", s, res.Objective, res.X, want)
		}
		one := allocation.NewProgram(gavelCluster(), []int{1, 1, 1}, [][]float64{tput[0], tput[0], tput[1]})
		one.Solver = s
		jobs := []allocation.Expr{one.Throughput(0), one.Throughput(1), one.Throughput(2)}
		r1, err := one.MaximizeMin(context.Background(), jobs, allocation.Sum(jobs...))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r1.Objective-res.Objective) > 1e-7 {
			t.Errorf("%s: t* %v over classes, %v over jobs", s, res.Objective, r1.Objective)
		}
	}
	if q := allocation.NewProgram(gavelCluster(), []int{1}, [][]float64{{1, 1}}); q.Count(0) != 1 {
		t.Errorf("NewProgram's Count is %d, want 1", q.Count(0))
	}
}

func TestNewClassesPanics(t *testing.T) {
	for _, count := range [][]int{{1}, {1, 0}, {2, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewClasses with counts %v did not panic", count)
				}
			}()
			allocation.NewClasses(gavelCluster(), []int{1, 1}, count, [][]float64{{1, 1}, {1, 1}})
		}()
	}
}

// Reach is each expression's most with its jobs alone: a job adds its
// largest positive coefficient once, as its shares sum to at most 1.
// Maximizing each, capacity included, never passes it, and reaches it
// where the job's best type is free.
func TestProgramReach(t *testing.T) {
	p := allocation.NewProgram(gavelCluster(), []int{1, 1, 1}, [][]float64{{1, 4}, {0, 2}, {1, 1}})
	exprs := []allocation.Expr{
		p.Throughput(0),
		allocation.Sum(p.Throughput(0), p.Throughput(1), allocation.Constant(0.5)),
		p.X(2, 0).Scale(-1),
		p.Time(0),
		p.X(1, 1).Scale(3).Plus(p.X(1, 1)),
	}
	want := []float64{4, 6.5, 0, 1, 4}
	got := p.Reach(exprs)
	if !cmp.Equal(got, want) {
		t.Fatalf("Reach = %v, want %v", got, want)
	}
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		p.Solver = s
		for i, e := range exprs {
			res, err := p.Maximize(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			if res.Objective > got[i]+1e-9 || i == 0 && math.Abs(res.Objective-got[i]) > 1e-9 {
				t.Errorf("expression %d: max %v against reach %v", i, res.Objective, got[i])
			}
		}
	})
}
