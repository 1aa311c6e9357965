package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type namedEngine struct {
	name string
	Engine
}

var approx = []cmp.Option{cmpopts.EquateApprox(1e-7, 1e-9), cmpopts.EquateEmpty()}

// want is what a hand-solved case pins down. X or Duals is nil where the
// optimum does not determine it.
type want struct {
	Objective float64
	X         []float64
	Duals     []float64
}

type lpCase struct {
	name string
	p    func() *Problem
	want want
	err  error // the sentinel expected; nil for an optimum
}

// lin builds a Problem from compact data: vars holds {lower, upper, obj}.
func lin(sense Sense, vars [][3]float64, rows ...rowSpec) func() *Problem {
	return func() *Problem {
		p := &Problem{Sense: sense}
		for _, v := range vars {
			p.AddVar(v[0], v[1], v[2])
		}
		for _, r := range rows {
			p.AddRow(r.lo, r.hi, r.terms...)
		}
		return p
	}
}

type rowSpec struct {
	lo, hi float64
	terms  []Term
}

// row returns the row lo ≤ Σ_j coefs[j]·x_j ≤ hi.
func row(lo, hi float64, coefs ...float64) rowSpec {
	var ts []Term
	for j, c := range coefs {
		if c != 0 {
			ts = append(ts, Term{j, c})
		}
	}
	return rowSpec{lo, hi, ts}
}

// v returns a variable for lin; nonneg is x ≥ 0 with objective 0.
func v(lo, hi, obj float64) [3]float64 { return [3]float64{lo, hi, obj} }

var nonneg = v(0, math.Inf(1), 0)

func handCases() []lpCase {
	inf := math.Inf(1)
	return []lpCase{{
		name: "max two rows",
		p:    lin(Maximize, [][3]float64{v(0, inf, 1), v(0, inf, 1)}, row(-inf, 4, 1, 2), row(-inf, 6, 3, 1)),
		want: want{2.8, []float64{1.6, 1.2}, []float64{0.4, 0.2}},
	}, {
		name: "min with >= rows",
		p:    lin(Minimize, [][3]float64{v(0, inf, 2), v(0, inf, 3)}, row(4, inf, 1, 1), row(6, inf, 1, 3)),
		want: want{9, []float64{3, 1}, []float64{1.5, 0.5}},
	}, {
		name: "equality row",
		p:    lin(Minimize, [][3]float64{v(0, 2, 1), v(0, inf, 2)}, row(3, 3, 1, 1)),
		want: want{4, []float64{2, 1}, []float64{2}},
	}, {
		name: "upper-bounded variable",
		p:    lin(Maximize, [][3]float64{v(0, 3, 3), v(0, inf, 2)}, row(-inf, 4, 1, 1)),
		want: want{11, []float64{3, 1}, []float64{2}},
	}, {
		name: "ranged row binding above",
		p:    lin(Maximize, [][3]float64{v(0, 2, 1), v(0, 2, 2)}, row(1, 3, 1, 1)),
		want: want{5, []float64{1, 2}, []float64{1}},
	}, {
		name: "ranged row binding below",
		p:    lin(Minimize, [][3]float64{v(0, inf, 1), v(0, inf, 2)}, row(1, 3, 1, 1)),
		want: want{1, []float64{1, 0}, []float64{1}},
	}, {
		name: "free variable",
		p:    lin(Minimize, [][3]float64{v(-inf, inf, 1), v(0, 1, 0)}, row(-2, inf, 1, 1)),
		want: want{-3, []float64{-3, 1}, []float64{1}},
	}, {
		// max t s.t. t ≤ 2x, t ≤ 3y, x + y ≤ 1: the max-min form in small.
		name: "free variable max-min",
		p: lin(Maximize, [][3]float64{v(-inf, inf, 1), nonneg, nonneg},
			row(0, inf, -1, 2, 0), row(0, inf, -1, 0, 3), row(-inf, 1, 0, 1, 1)),
		want: want{1.2, []float64{1.2, 0.6, 0.4}, []float64{-0.6, -0.4, 1.2}},
	}, {
		name: "variable bounded only above",
		p:    lin(Maximize, [][3]float64{v(-inf, 3, 1), v(-inf, 1, 2)}, row(-5, inf, 1, 1)),
		want: want{5, []float64{3, 1}, []float64{0}},
	}, {
		name: "negative lower bounds",
		p:    lin(Minimize, [][3]float64{v(-3, inf, 2), v(-4, inf, 1)}, row(-5, inf, 1, 1)),
		want: want{-8, []float64{-3, -2}, []float64{1}},
	}, {
		name: "fixed variables",
		p: lin(Maximize, [][3]float64{v(0, 4, 2), v(3, 3, 1), v(0, 2, 1), v(-1, -1, 5)},
			row(-inf, 8, 1, 1, 1), row(1, 5, 0, 1), row(-inf, 0, 0, 0, 0, 1)),
		want: want{7, []float64{4, 3, 1, -1}, []float64{1, 0, 0}},
	}, {
		name: "duplicate terms",
		p: func() *Problem {
			p := &Problem{Sense: Maximize}
			x := p.AddVar(0, inf, 1)
			y := p.AddVar(0, inf, 1)
			p.AddRow(-inf, 4, Term{x, 1}, Term{y, 2}, Term{x, 0.5}, Term{x, -0.5})
			p.AddRow(-inf, 6, Term{x, 1}, Term{y, 1}, Term{x, 2})
			return p
		},
		want: want{2.8, []float64{1.6, 1.2}, []float64{0.4, 0.2}},
	}, {
		name: "dependent equalities",
		p: lin(Minimize, [][3]float64{v(0, inf, 1), v(0, inf, 2), v(0, inf, 3)},
			row(2, 2, 1, 1, 1), row(4, 4, 2, 2, 2), row(1, 1, 0, 1, 1), row(3, 3, 1, 2, 2)),
		want: want{Objective: 3, X: []float64{1, 1, 0}},
	}, {
		name: "no rows",
		p:    lin(Minimize, [][3]float64{v(1, 2, 1), v(-1, 3, 1), v(-inf, inf, 0)}),
		want: want{0, []float64{1, -1, 0}, []float64{}},
	}, {
		name: "row with no terms",
		p: lin(Maximize, [][3]float64{v(0, inf, 1), v(0, inf, 1)},
			row(-inf, 4, 1, 2), row(-1, 1), row(-inf, 6, 3, 1), row(0, 0)),
		want: want{2.8, []float64{1.6, 1.2}, []float64{0.4, 0, 0.2, 0}},
	}, {
		name: "free row",
		p:    lin(Maximize, [][3]float64{v(0, 1, 1)}, row(-inf, inf, 1)),
		want: want{1, []float64{1}, []float64{0}},
	}, {
		name: "empty problem",
		p:    func() *Problem { return &Problem{} },
		want: want{0, []float64{}, []float64{}},
	}, {
		name: "infeasible row bounds",
		p:    lin(Minimize, [][3]float64{v(-inf, inf, 1)}, row(5, inf, 1), row(-inf, 3, 1)),
		err:  ErrInfeasible,
	}, {
		name: "infeasible equalities",
		p:    lin(Minimize, [][3]float64{nonneg, nonneg}, row(1, 1, 1, 1), row(2, 2, 1, 1)),
		err:  ErrInfeasible,
	}, {
		name: "infeasible inequalities",
		p:    lin(Maximize, [][3]float64{v(0, 1, 1), v(0, 1, 1)}, row(3, inf, 1, 1)),
		err:  ErrInfeasible,
	}, {
		name: "infeasible empty row",
		p:    lin(Maximize, [][3]float64{v(0, 1, 1)}, row(1, 2)),
		err:  ErrInfeasible,
	}, {
		name: "crossed variable bounds",
		p:    lin(Maximize, [][3]float64{v(2, 1, 1)}),
		err:  ErrInfeasible,
	}, {
		name: "crossed row bounds",
		p:    lin(Maximize, [][3]float64{v(0, 1, 1)}, row(2, 1, 1)),
		err:  ErrInfeasible,
	}, {
		name: "infeasible with a variable unbounded in no row",
		p:    lin(Minimize, [][3]float64{v(-inf, inf, 1), v(0, inf, 0)}, row(5, inf, 0, 1), row(-inf, 3, 0, 1)),
		err:  ErrInfeasible,
	}, {
		name: "rows without variables",
		p:    lin(Minimize, nil, row(-1, 1), row(0, inf)),
		want: want{0, []float64{}, []float64{0, 0}},
	}, {
		name: "NaN coefficient",
		p:    lin(Minimize, [][3]float64{v(0, 1, 1)}, row(0, 1, math.NaN())),
		err:  ErrNumerical,
	}, {
		name: "unbounded",
		p:    lin(Maximize, [][3]float64{v(0, inf, 1), v(0, inf, 1)}, row(-inf, 1, 1, -1)),
		err:  ErrUnbounded,
	}, {
		name: "unbounded variable in no row",
		p:    lin(Minimize, [][3]float64{v(-inf, 0, 1), v(0, 1, 1)}, row(-inf, 1, 0, 1)),
		err:  ErrUnbounded,
	}}
}

func TestHandSolved(t *testing.T) {
	for _, tc := range handCases() {
		for _, e := range testEngines() {
			t.Run(tc.name+"/"+e.name, func(t *testing.T) {
				p := tc.p()
				sol, err := e.Solve(context.Background(), p)
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("Solve error = %v, want %v", err, tc.err)
					}
					wantStatus, ok := map[error]Status{ErrInfeasible: Infeasible, ErrUnbounded: Unbounded}[tc.err]
					if ok && (sol == nil || sol.Status != wantStatus) {
						t.Errorf("Solve solution = %+v, want Status %v", sol, wantStatus)
					}
					if !ok && sol != nil {
						t.Errorf("Solve solution = %+v, want nil", sol)
					}
					return
				}
				if err != nil {
					t.Fatalf("Solve: %v", err)
				}
				got := want{Objective: sol.Objective}
				if tc.want.X != nil {
					got.X = sol.X
				}
				if tc.want.Duals != nil {
					got.Duals = sol.Duals
				}
				if diff := cmp.Diff(tc.want, got, approx...); diff != "" {
					t.Errorf("Solve mismatch (-want +got):\n%s", diff)
				}
				checkOptimal(t, p, sol)
			})
		}
	}
}

// checkOptimal verifies that sol is an optimum of p by checking its
// certificate: X satisfies every bound and row, and the duals with the
// reduced costs they imply have the signs of an optimum, with each nonzero
// one at a bound it prices (complementary slackness). It checks Duals
// semantics as well, for duals that are not unique.
func checkOptimal(t testing.TB, p *Problem, sol *Solution) {
	t.Helper()
	const tol = 1e-6
	if sol.Status != Optimal || len(sol.X) != p.NumVars() || len(sol.Duals) != p.NumRows() {
		t.Fatalf("solution has status %v, %d values, %d duals; want Optimal, %d, %d",
			sol.Status, len(sol.X), len(sol.Duals), p.NumVars(), p.NumRows())
	}
	s := 1.0 // prices below are for the minimization form
	if p.Sense == Maximize {
		s = -1
	}
	var obj float64
	red := make([]float64, p.NumVars())
	for j := range red {
		_, _, c := p.Var(j)
		red[j] = s * c
		obj += c * sol.X[j]
	}
	if d := math.Abs(obj - sol.Objective); d > 1e-9*(1+math.Abs(obj)) {
		t.Errorf("Objective = %v, but X gives %v", sol.Objective, obj)
	}
	for i := range p.NumRows() {
		lo, hi, terms := p.Row(i)
		y := s * sol.Duals[i]
		var act, mag float64
		for _, tm := range terms {
			act += tm.Coef * sol.X[tm.Var]
			mag += math.Abs(tm.Coef * sol.X[tm.Var])
			red[tm.Var] -= tm.Coef * y
		}
		slack := tol * (1 + mag)
		if act < lo-slack || act > hi+slack {
			t.Errorf("row %d: activity %v outside [%v, %v]", i, act, lo, hi)
		}
		if y > tol && act > lo+slack || y < -tol && act < hi-slack {
			t.Errorf("row %d: dual %v, but activity %v is not at the bound it prices in [%v, %v]", i, sol.Duals[i], act, lo, hi)
		}
	}
	for j, x := range sol.X {
		lo, hi, _ := p.Var(j)
		if x < lo || x > hi {
			t.Errorf("x[%d] = %v outside [%v, %v]", j, x, lo, hi)
		}
		slack := tol * (1 + math.Abs(x))
		if red[j] > tol && x > lo+slack || red[j] < -tol && x < hi-slack {
			t.Errorf("x[%d] = %v in [%v, %v] with reduced cost %v: not optimal", j, x, lo, hi, s*red[j])
		}
	}
}

// randomProblem returns a feasible, bounded LP with up to 30 variables and
// 20 rows, mixing every kind of bound. Rows are built around a known
// feasible point; variables with an infinite bound also get a box row, which
// keeps the problem bounded.
func randomProblem(r *rand.Rand) *Problem {
	inf := math.Inf(1)
	nv, nr := 1+r.IntN(30), r.IntN(21)
	p := &Problem{Sense: Sense(r.IntN(2))}
	// Integral data makes degenerate vertices and tied optima common.
	integral := r.IntN(2) == 0
	frac := func(scale float64) float64 {
		if integral {
			return float64(r.IntN(int(scale) + 1))
		}
		return r.Float64() * scale
	}
	x0 := make([]float64, nv)
	var boxed []int
	for j := range nv {
		x0[j] = math.Round(r.NormFloat64()*300) / 100
		if integral {
			x0[j] = math.Round(x0[j])
		}
		lo, hi := x0[j]-frac(3), x0[j]+frac(3)
		switch r.IntN(10) {
		case 0:
			lo, hi = x0[j], x0[j]
		case 1:
			lo, hi = -inf, inf
			boxed = append(boxed, j)
		case 2:
			hi = inf
			boxed = append(boxed, j)
		case 3:
			lo = -inf
			boxed = append(boxed, j)
		}
		obj := math.Round(r.NormFloat64()*100) / 10
		if integral {
			obj = math.Round(obj)
		}
		p.AddVar(lo, hi, obj)
	}
	for range nr {
		var terms []Term
		var act float64
		for j := range nv {
			if r.Float64() < 0.3 {
				c := float64(r.IntN(11) - 5)
				if !integral && r.IntN(2) == 0 {
					c = math.Round(r.NormFloat64()*100) / 10
				}
				terms = append(terms, Term{j, c})
				act += c * x0[j]
			}
		}
		switch r.IntN(5) {
		case 0:
			p.AddRow(-inf, act+frac(1), terms...)
		case 1:
			p.AddRow(act-frac(1), inf, terms...)
		case 2:
			p.AddRow(act, act, terms...)
		case 3:
			p.AddRow(act-frac(1), act+frac(1), terms...)
		default:
			p.AddRow(act-frac(2), act, terms...)
		}
	}
	for _, j := range boxed {
		p.AddRow(-20, 20, Term{j, 1})
	}
	return p
}

func TestRandom(t *testing.T) {
	engines := testEngines()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		p := randomProblem(r)
		var ref *Solution
		for _, e := range engines {
			sol, err := e.Solve(context.Background(), p)
			if err != nil {
				t.Errorf("instance %d (%d vars, %d rows), %s: %v", i, p.NumVars(), p.NumRows(), e.name, err)
				continue
			}
			checkOptimal(t, p, sol)
			if ref == nil {
				ref = sol
				continue
			}
			if d := math.Abs(sol.Objective - ref.Objective); d > 1e-7*max(1, math.Abs(ref.Objective)) {
				t.Errorf("instance %d: %s objective %v, %s objective %v", i, e.name, sol.Objective, engines[0].name, ref.Objective)
			}
		}
	}
}

// maxMin builds the Gavel max-min allocation LP for n jobs on 3 accelerator
// types: maximize t subject to Σ_k a_jk X_jk ≥ t and Σ_k X_jk ≤ 1 for each
// job j, and Σ_j s_j X_jk ≤ N_k = n/4 for each type k, with X_jk ∈ [0, 1]
// and t free. Job scale factors s_j are 1, 2, 4, 8 with probability 70, 10,
// 15 and 5 %.
func maxMin(n int, seed uint64) *Problem {
	r := rand.New(rand.NewPCG(seed, 0x6a76))
	const types = 3
	p := &Problem{Sense: Maximize}
	p.Grow(types*n+1, 2*n+types, (2*types+1)*n+types*n)
	t := p.AddVar(math.Inf(-1), math.Inf(1), 1)
	x := make([][types]int, n)
	for j := range x {
		for k := range types {
			x[j][k] = p.AddVar(0, 1, 0)
		}
	}
	speed := [types]float64{1, 2.2, 3.1} // faster types help every job, unevenly
	for j := range n {
		terms := []Term{{t, -1}}
		for k := range types {
			a := speed[k] * (0.5 + r.Float64()) / (speed[types-1] * 1.5)
			terms = append(terms, Term{x[j][k], a})
		}
		p.AddRow(0, math.Inf(1), terms...)
	}
	for j := range n {
		p.AddRow(math.Inf(-1), 1, Term{x[j][0], 1}, Term{x[j][1], 1}, Term{x[j][2], 1})
	}
	scale := make([]float64, n)
	for j := range scale {
		switch u := r.Float64(); {
		case u < 0.70:
			scale[j] = 1
		case u < 0.80:
			scale[j] = 2
		case u < 0.95:
			scale[j] = 4
		default:
			scale[j] = 8
		}
	}
	for k := range types {
		terms := make([]Term, n)
		for j := range n {
			terms[j] = Term{x[j][k], scale[j]}
		}
		p.AddRow(math.Inf(-1), float64(n)/4, terms...)
	}
	return p
}

func TestMaxMin(t *testing.T) {
	for _, n := range []int{8, 24, 64} {
		p := maxMin(n, uint64(n))
		var ref *Solution
		for _, e := range testEngines() {
			sol, err := e.Solve(context.Background(), p)
			if err != nil {
				t.Fatalf("n=%d %s: %v", n, e.name, err)
			}
			checkOptimal(t, p, sol)
			if ref == nil {
				ref = sol
			} else if d := math.Abs(sol.Objective - ref.Objective); d > 1e-7*max(1, math.Abs(ref.Objective)) {
				t.Errorf("n=%d: %s objective %v, reference %v", n, e.name, sol.Objective, ref.Objective)
			}
		}
	}
}

// TestConcurrent solves one Problem from several goroutines at once: engines
// must neither share state between solves nor write to the Problem (the
// race detector checks both).
func TestConcurrent(t *testing.T) {
	p := maxMin(16, 9)
	for _, e := range testEngines() {
		want, err := e.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				got, err := e.Solve(context.Background(), p)
				if err != nil {
					t.Errorf("%s: %v", e.name, err)
					return
				}
				if diff := cmp.Diff(want, got, approx...); diff != "" {
					t.Errorf("%s: concurrent solve differs (-sequential +concurrent):\n%s", e.name, diff)
				}
			})
		}
		wg.Wait()
	}
}

func TestSimplexTooLarge(t *testing.T) {
	p := maxMin(32, 1) // 67 rows, none of them implied bounds
	for _, e := range []Simplex{{MaxRows: 66}, {}} {
		if e.MaxRows == 0 {
			p = maxMin(2048, 1)
		}
		_, err := e.Solve(context.Background(), p)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("Simplex{MaxRows: %d}.Solve(%d rows) error = %v, want ErrTooLarge", e.MaxRows, p.NumRows(), err)
		}
	}
	if _, err := (Simplex{MaxRows: 67}).Solve(context.Background(), maxMin(32, 1)); err != nil {
		t.Errorf("Simplex{MaxRows: 67}.Solve(67 rows): %v", err)
	}
}

// Few rows over many columns (pair variables) are refused too, by the
// column guard, with an error naming the CLP build; within it they solve.
func TestSimplexTooManyColumns(t *testing.T) {
	p := maxMin(32, 1) // 97 variables over 67 rows: up to 165 standard columns
	_, err := (Simplex{MaxCols: 164}).Solve(context.Background(), p)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "-tags clp") || !strings.Contains(err.Error(), "columns") {
		t.Errorf("Simplex{MaxCols: 164}: %v, want ErrTooLarge naming the columns and the CLP build", err)
	}
	if _, err := (Simplex{MaxCols: 165}).Solve(context.Background(), p); err != nil {
		t.Errorf("Simplex{MaxCols: 165}: %v", err)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range testEngines() {
		_, err := e.Solve(ctx, maxMin(8, 1))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Solve with a canceled context: error = %v, want context.Canceled", e.name, err)
		}
	}
}

func TestDeadlinePassed(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, e := range testEngines() {
		sol, err := e.Solve(ctx, maxMin(8, 1))
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTimeLimit) {
			t.Errorf("%s: error = %v, want ErrTimeLimit and context.DeadlineExceeded", e.name, err)
		}
		if sol == nil || sol.Status != Stopped {
			t.Errorf("%s: solution = %+v, want Status Stopped", e.name, sol)
		}
	}
}

func TestDefault(t *testing.T) {
	sol, err := Default().Solve(context.Background(), lin(Maximize, [][3]float64{v(0, 1, 1)})())
	if err != nil {
		t.Fatal(err)
	}
	wantEngine := "sparse"
	if HasCLP {
		wantEngine = "clp"
	}
	if sol.Engine != wantEngine || sol.X[0] != 1 {
		t.Errorf("Default().Solve = %+v, want engine %s and x = 1", sol, wantEngine)
	}
}

// BenchmarkMaxMin solves the Gavel max-min LP; build-ns/op is the time to
// build the Problem, solve-ns/op the time Solve takes.
// BenchmarkMaxMin solves Gavel's max-min form with t free ("free") and with
// t bounded by min_j max_k a_jk ("bounded"), as allocation.Program does.
func BenchmarkMaxMin(b *testing.B) {
	for _, bound := range []string{"free", "bounded"} {
		for _, e := range testEngines() {
			benchmarkMaxMin(b, e, bound)
		}
	}
}

func benchmarkMaxMin(b *testing.B, e namedEngine, bound string) {
	{
		for _, n := range []int{32, 128, 512, 2048} {
			if _, ok := e.Engine.(Simplex); ok && n > 128 {
				continue
			}
			eng := e.Engine
			if s, ok := eng.(Simplex); ok {
				s.MaxRows = 1 << 20
				eng = s
			}
			b.Run(fmt.Sprintf("t=%s/%s/n=%d", bound, e.name, n), func(b *testing.B) {
				var build, solve time.Duration
				for i := 0; b.Loop(); i++ {
					t0 := time.Now()
					p := maxMin(n, uint64(i))
					if bound == "bounded" {
						boundT(p)
					}
					t1 := time.Now()
					if _, err := eng.Solve(context.Background(), p); err != nil {
						b.Fatal(err)
					}
					build += t1.Sub(t0)
					solve += time.Since(t1)
				}
				b.ReportMetric(float64(build.Nanoseconds())/float64(b.N), "build-ns/op")
				b.ReportMetric(float64(solve.Nanoseconds())/float64(b.N), "solve-ns/op")
			})
		}
	}
}

// boundT bounds the t of a maxMin problem (variable 0) by the smallest of
// the jobs' best coefficients: no job's term can exceed that.
func boundT(p *Problem) {
	ub := math.Inf(1)
	for r := range p.NumRows() {
		_, _, terms := p.Row(r)
		if len(terms) == 0 || terms[0].Var != 0 {
			continue // not a job's term row
		}
		best := 0.0
		for _, t := range terms[1:] {
			best = max(best, t.Coef)
		}
		ub = min(ub, best)
	}
	p.SetBounds(0, math.Inf(-1), ub)
}
