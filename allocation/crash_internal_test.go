package allocation

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/internal/lp"
)

// Hand-solved games, and random ones against the same LP solved by an
// engine.
func TestMaximin(t *testing.T) {
	for _, c := range []struct {
		v     [][]float64
		mu    []float64
		value float64
	}{
		{[][]float64{{1, 0}, {0, 1}}, []float64{0.5, 0.5}, 0.5},
		{[][]float64{{2, 1}}, []float64{1, 0}, 2},
		// 3μ₁ = μ₂ = 1 − μ₁
		{[][]float64{{3, 0}, {0, 1}}, []float64{0.25, 0.75}, 0.75},
		{[][]float64{{3, 0}, {0, 1}, {3, 0}, {0, 1}}, []float64{0.25, 0.75}, 0.75},
		{[][]float64{{0, 0}, {1, 1}}, nil, 0},
		{[][]float64{{5}}, []float64{1}, 5},
	} {
		mu, value := maximin(c.v)
		if math.Abs(value-c.value) > 1e-12 {
			t.Errorf("maximin(%v) = %v, want %v", c.v, value, c.value)
		}
		for k := range c.mu {
			if math.Abs(mu[k]-c.mu[k]) > 1e-12 {
				t.Errorf("maximin(%v): μ = %v, want %v", c.v, mu, c.mu)
				break
			}
		}
	}
	eng, _ := lp.Named("sparse")
	r := rand.New(rand.NewPCG(3, 9))
	for i := range 2000 {
		nk, m := 1+r.IntN(5), 1+r.IntN(40)
		v := make([][]float64, m)
		for j := range v {
			v[j] = make([]float64, nk)
			for k := range v[j] {
				if r.IntN(4) > 0 {
					v[j][k] = 10 * r.Float64()
				}
			}
		}
		mu, value := maximin(v)
		sum, worst := 0.0, math.Inf(1)
		for _, x := range mu {
			sum += x
		}
		for _, row := range v {
			d := 0.0
			for k, x := range row {
				d += x * mu[k]
			}
			worst = min(worst, d)
		}
		if slices.Min(mu) < 0 || sum > 1+1e-9 || math.Abs(worst-value) > 1e-9*max(1, value) {
			t.Fatalf("game %d: μ = %v (Σ %v) is worth %v, maximin says %v", i, mu, sum, worst, value)
		}
		want := gameByLP(t, eng, v)
		if math.Abs(value-want) > 1e-9*max(1, want) {
			t.Fatalf("game %d: value %v, LP %v", i, value, want)
		}
	}
}

func gameByLP(t *testing.T, eng lp.Engine, v [][]float64) float64 {
	t.Helper()
	p := &lp.Problem{Sense: lp.Maximize}
	z := p.AddVar(0, lp.Inf, 1)
	ones := []lp.Term{}
	for range v[0] {
		ones = append(ones, lp.Term{Var: p.AddVar(0, lp.Inf, 0), Coef: 1})
	}
	p.AddRow(-lp.Inf, 1, ones...)
	for _, row := range v {
		terms := []lp.Term{{Var: z, Coef: 1}}
		for k, x := range row {
			terms = append(terms, lp.Term{Var: 1 + k, Coef: -x})
		}
		p.AddRow(-lp.Inf, 0, terms...)
	}
	sol, err := eng.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return sol.Objective
}

// A job of speeds 1 and 4 on types A and B, one GPU. At level 2 only B
// reaches alone; sharing a whole round, A and B reach 2 with B a third of
// it. Which is cheaper depends on the prices.
func TestCheapestByHand(t *testing.T) {
	g := &lagrangian{a: [][]float64{{1, 4}}, gpus: []float64{1}, capacity: []float64{1, 1}}
	for _, c := range []struct {
		lambda []float64
		t      float64
		want   plan
	}{
		{[]float64{1, 1}, 0.5, plan{k: 1, l: -1, cost: 0.125, growth: 0.25}},
		{[]float64{1, 1}, 0, plan{k: 1, l: -1, growth: 0.25}},
		// B alone at half a round: 2·1/4·... = 0.5; A and B: 1 + 0·⅓ = 1.
		{[]float64{1, 1}, 2, plan{k: 1, l: -1, cost: 0.5, growth: 0.25}},
		// B alone: 2·10/4 = 5; A for ⅔ and B for ⅓: 1 + 9/3 = 4, growing 9/3.
		{[]float64{1, 10}, 2, plan{k: 0, l: 1, xl: 1.0 / 3, cost: 4, growth: 3}},
		// A alone at t = 0.5: 0.5·1 = 0.5 against B's 0.5·10/4 = 1.25.
		{[]float64{1, 10}, 0.5, plan{k: 0, l: -1, cost: 0.5, growth: 1}},
	} {
		got, ok := g.cheapest(c.lambda, 0, c.t)
		if !ok || got.k != c.want.k || got.l != c.want.l || math.Abs(got.xl-c.want.xl) > 1e-15 ||
			math.Abs(got.cost-c.want.cost) > 1e-15 || math.Abs(got.growth-c.want.growth) > 1e-15 {
			t.Errorf("λ %v, t %v: %+v, want %+v", c.lambda, c.t, got, c.want)
		}
	}
	if _, ok := g.cheapest([]float64{1, 1}, 0, 4.5); ok {
		t.Error("t = 4.5 is out of the job's reach, but it has a plan")
	}
}

// The tie-break's plans for a job of speeds 1 and 4 on types A and B, one
// GPU, earning its throughput, with the floor at 2 (A alone falls short)
// or 0.5: B alone at the floor (half a round), B all round, or A for ⅔ and
// B for ⅓ of the round.
func TestBestByHand(t *testing.T) {
	g := &lagrangian{a: [][]float64{{1, 4}}, gpus: []float64{1}, capacity: []float64{1, 1}}
	d := [][]float64{{1, 4}}
	for _, c := range []struct {
		lambda []float64
		floor  float64
		want   vertex
		gain   float64
		next   float64 // the runner-up's gain
	}{
		// B at the floor and the pair at the floor each earn 2.
		{[]float64{0, 0}, 2, vertex{k: 1, l: -1, xk: 1}, 4, 2},
		// per share A earns 1, B 0.5: ⅔·1 + ⅓·0.5 beats B's 0.5 and 0.25.
		{[]float64{0, 3.5}, 2, vertex{k: 0, l: 1, xk: 2.0 / 3, xl: 1.0 / 3}, 5.0 / 6, 0.5},
		// B loses 6 a share: the pair loses least.
		{[]float64{0, 10}, 2, vertex{k: 0, l: 1, xk: 2.0 / 3, xl: 1.0 / 3}, 2.0/3 - 2, -3},
		// A alone reaches 0.5, and earns 1 all round.
		{[]float64{0, 10}, 0.5, vertex{k: 0, l: -1, xk: 1}, 1, 0.5},
		// B at the floor, ⅛ of a round, loses 6/8; A at the floor loses 1.
		{[]float64{3, 10}, 0.5, vertex{k: 1, l: -1, xk: 0.125}, -0.75, -1},
	} {
		got, gain, next, ok := g.best(d, c.lambda, 0, c.floor)
		if !ok || got.k != c.want.k || got.l != c.want.l || math.Abs(got.xk-c.want.xk) > 1e-15 ||
			math.Abs(got.xl-c.want.xl) > 1e-15 || math.Abs(gain-c.gain) > 1e-15 || math.Abs(next-c.next) > 1e-15 {
			t.Errorf("λ %v, floor %v: %+v earning %v (next %v), want %+v earning %v (next %v)",
				c.lambda, c.floor, got, gain, next, c.want, c.gain, c.next)
		}
	}
	if _, _, _, ok := g.best(d, []float64{0, 0}, 0, 5); ok {
		t.Error("a floor of 5 is out of the job's reach, but it has a plan")
	}
}

// crashCase is a random max-min program of crash's shape: every job can
// run somewhere, weights equal or not, counts of 1 or more.
type crashCase struct {
	c       Cluster
	gpus    []int
	count   []int
	tput    [][]float64
	weights []float64
}

func newCrashCase(r *rand.Rand) crashCase {
	names := []Accelerator{"k80", "p100", "v100", "a100"}
	nk := 1 + r.IntN(len(names))
	var cc crashCase
	for k := range nk {
		for i := range 1 + r.IntN(3) {
			cc.c.Servers = append(cc.c.Servers, Server{ID: fmt.Sprintf("%s-%d", names[k], i), Accelerator: names[k], GPUs: []int{1, 2, 4, 8}[r.IntN(4)]})
		}
	}
	types := cc.c.Types()
	equal, classes := r.IntN(2) == 0, r.IntN(4) == 0
	for range 2 + r.IntN(60) {
		g := []int{1, 1, 1, 2, 4}[r.IntN(5)]
		row := make([]float64, nk)
		for k := range row {
			if r.IntN(5) > 0 {
				row[k] = 0.1 + 10*r.Float64()
			}
		}
		fits := slices.IndexFunc(types, func(a Accelerator) bool { return cc.c.GPUs(a) >= g })
		if fits < 0 {
			continue
		}
		if !slices.ContainsFunc(row, func(x float64) bool { return x > 0 }) {
			row[fits] = 1
		}
		w, n := 1.0, 1
		if !equal {
			w = float64(1 + r.IntN(3))
		}
		if classes {
			n = 1 + r.IntN(4)
		}
		cc.gpus, cc.tput, cc.weights, cc.count = append(cc.gpus, g), append(cc.tput, row), append(cc.weights, w), append(cc.count, n)
	}
	return cc
}

func (cc crashCase) program(s Solver) *Program {
	p := newProgram(cc.c, cc.gpus, cc.count, cc.tput, nil)
	p.Solver = s
	p.crashFrom = 1
	return p
}

// terms are the jobs' throughputs over their weights, or nil if some job
// cannot run anywhere (the program is then not of crash's shape).
func (cc crashCase) terms(p *Program) []Expr {
	var out []Expr
	for j := range cc.gpus {
		if !slices.ContainsFunc(p.x[j], func(v int) bool { return v >= 0 }) {
			return nil
		}
		out = append(out, p.Throughput(j).Scale(1/cc.weights[j]))
	}
	return out
}

// Crash's start reaches the optimum a slack start does: the same t*, the
// same tie-break total, a feasible allocation. Its search alone finds t*
// on these small programs, and the cases cover jobs that need two types
// for a full round, which is where a wrong plan would show.
func TestCrashSameOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	var searched, shared, tieBroken int
	const cases = 150
	for i := range cases {
		cc := newCrashCase(r)
		for _, s := range Solvers() {
			crashed := cc.program(s)
			terms := cc.terms(crashed)
			if terms == nil {
				continue
			}
			_, want := sameOptimum(t, i, cc, crashed, terms)
			tie := Sum(terms...)
			g, ok := crashed.lagrangian(terms)
			if !ok {
				t.Fatalf("case %d: not of crash's shape", i)
			}
			if s == Solvers()[0] {
				d, _ := g.perShare(tie)
				if _, dual, ok := g.tieBreakPrices(context.Background(), d, want.Objective*(1-1e-9)); ok {
					tieBroken++
					if !nearRel(dual, crashed.Eval(tie, want), 1e-6) {
						t.Errorf("case %d: the tie-break's dual value %v, its optimum %v", i, dual, crashed.Eval(tie, want))
					}
				}
			}
			lambda, level, ok := g.search(context.Background())
			if !ok || s != Solvers()[0] {
				continue
			}
			searched++
			if !nearRel(level, want.Objective, 1e-6) {
				t.Errorf("case %d: crash's level %v, t* %v", i, level, want.Objective)
			}
			for j := range g.a {
				if pl, _ := g.cheapest(lambda, j, level); pl.l >= 0 {
					shared++
					break
				}
			}
		}
	}
	t.Logf("searched %d shared %d tie-break %d", searched, shared, tieBroken)
	if searched < cases/4 || shared < cases/20 || tieBroken < cases/2 {
		t.Errorf("only %d of %d cases searched, %d with a job on two types, %d priced in the tie-break", searched, cases, shared, tieBroken)
	}
}

// sameOptimum solves MaximizeMin over terms on p, which has cc's jobs,
// and on cc's program from the slack basis, checks that both reach the
// same t* and tie-break total (the sum of the terms) and that p's
// allocation is feasible, and returns the two results.
func sameOptimum(t *testing.T, i int, cc crashCase, p *Program, terms []Expr) (got, want *Result) {
	t.Helper()
	slack := cc.program(p.Solver)
	slack.noCrash = true
	got, err := p.MaximizeMin(context.Background(), terms, Sum(terms...))
	if err != nil {
		t.Fatalf("case %d, %v: %v", i, p.Solver, err)
	}
	want, err = slack.MaximizeMin(context.Background(), cc.terms(slack), Sum(cc.terms(slack)...))
	if err != nil {
		t.Fatalf("case %d, %v, slack start: %v", i, p.Solver, err)
	}
	// The engines hold rows to 1e-7 (CLP's primal tolerance): a start can
	// end a little below the floor, and a little above the total.
	tie := Sum(terms...)
	if !nearRel(got.Objective, want.Objective, 1e-7) || !nearRel(p.Eval(tie, got), slack.Eval(tie, want), 1e-6) {
		t.Errorf("case %d, %v: t* %v and total %v, from the slack basis %v and %v",
			i, p.Solver, got.Objective, p.Eval(tie, got), want.Objective, slack.Eval(tie, want))
	}
	for j, e := range terms {
		if y := p.Eval(e, got); y < got.Objective*(1-1e-7) {
			t.Errorf("case %d, %v: job %d's term %v under t* = %v", i, p.Solver, j, y, got.Objective)
		}
	}
	checkShares(t, p, got)
	return got, want
}

func nearRel(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// checkShares checks r's shares: each in [0,1], each job's time at most
// a round, each type's GPUs within its capacity.
func checkShares(t *testing.T, p *Program, r *Result) {
	t.Helper()
	used := make([]float64, len(p.types))
	for j, row := range r.X {
		busy := 0.0
		for k, x := range row {
			if !(x >= 0 && x <= 1) {
				t.Fatalf("X[%d][%d] = %v", j, k, x)
			}
			busy += x
			used[k] += float64(p.Count(j)*p.gpus[j]) * x
		}
		if busy > 1+1e-9 {
			t.Fatalf("job %d busy %v of a round", j, busy)
		}
	}
	for k, u := range used {
		if u > p.capacity[k]*(1+1e-9) {
			t.Fatalf("type %v: %v GPUs of %v", p.types[k], u, p.capacity[k])
		}
	}
}

// The shapes the prices leave alone: a two-sided constrained row, a floor
// row on a job with an expression, a constant, a pair, an expression of
// two jobs, a type without GPUs; and those crash's bases leave alone, where
// some job has no expression (with a floor row or without).
func TestCrashShape(t *testing.T) {
	c := Cluster{Servers: []Server{{ID: "a", Accelerator: "v100", GPUs: 1}}}
	build := func(pairs ...Pair) (*Program, []Expr) {
		p := NewProgram(c, []int{1, 1}, [][]float64{{1}, {2}}, pairs...)
		return p, []Expr{p.Throughput(0), p.Throughput(1)}
	}
	p, e := build()
	if g, ok := p.lagrangian(e); !ok || !g.plain {
		t.Fatal("two plain jobs: not of crash's shape")
	}
	for name, f := range map[string]func() (*Program, []Expr){
		"two-sided": func() (*Program, []Expr) { p, e := build(); p.Constrain(e[1], 0.1, 1); return p, e[:1] },
		"floor on an expression": func() (*Program, []Expr) {
			p, e := build()
			p.Constrain(e[0], 0.1, math.Inf(1))
			return p, e
		},
		"constant": func() (*Program, []Expr) { p, e := build(); e[1] = e[1].Plus(Constant(1)); return p, e },
		"pair": func() (*Program, []Expr) {
			return build(Pair{A: 0, B: 1, ThroughputA: []float64{0.5}, ThroughputB: []float64{0.5}})
		},
		"two jobs": func() (*Program, []Expr) { p, e := build(); e[0] = e[0].Plus(e[1]); return p, e },
		"a type without GPUs": func() (*Program, []Expr) {
			c := Cluster{Servers: []Server{{ID: "a", Accelerator: "v100", GPUs: 1}, {ID: "b", Accelerator: "k80"}}}
			p := NewProgram(c, []int{1, 1}, [][]float64{{1, 1}, {2, 2}})
			return p, []Expr{p.Throughput(0), p.Throughput(1)}
		},
	} {
		if p, e := f(); func() bool { _, ok := p.lagrangian(e); return ok }() {
			t.Errorf("%s: of the prices' shape", name)
		}
	}
	for name, f := range map[string]func() (*Program, []Expr){
		"one term": func() (*Program, []Expr) { p, e := build(); return p, e[:1] },
		"a floor":  func() (*Program, []Expr) { p, e := build(); p.Constrain(e[1], 0.1, math.Inf(1)); return p, e[:1] },
	} {
		p, e := f()
		if g, ok := p.lagrangian(e); !ok || g.plain {
			t.Errorf("%s: of the prices' shape %v, plain %v; want true, false", name, ok, ok && g.plain)
		}
	}
}

// BenchmarkCrash times stage one of MaximizeMin (no tie-break) by its
// prices (crash=true: marginLevel, or crash's basis where it gives up) and
// from the slack basis, with each engine, on lasLike's jobs with equal
// weights, every job's term its throughput.
func BenchmarkCrash(b *testing.B) {
	for _, n := range []int{512, 2048} {
		c, gpus, tput := lasLike(n)
		for _, crashed := range []bool{true, false} {
			for _, s := range Solvers() {
				b.Run(fmt.Sprintf("%v/jobs=%d/crash=%v", s, n, crashed), func(b *testing.B) {
					benchCrash(b, s, c, gpus, tput, crashed)
				})
			}
		}
	}
}

// lasLike returns a setup like BenchmarkLAS's in package gavel, for n
// jobs: its mix of jobs needing 1, 2, 4 or 8 GPUs (70/10/15/5 %), on three
// types of n/4 GPUs each (one server per type), with throughputs drawn
// from [0.2, 1.2], [0.5, 2.5] and [1, 4].
func lasLike(n int) (Cluster, []int, [][]float64) {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	var c Cluster
	for _, a := range []Accelerator{"k80", "p100", "v100"} {
		c.Servers = append(c.Servers, Server{ID: string(a), Accelerator: a, GPUs: n / 4})
	}
	gpus, tput := make([]int, n), make([][]float64, n)
	for j := range n {
		switch u := r.Float64(); {
		case u < 0.7:
			gpus[j] = 1
		case u < 0.8:
			gpus[j] = 2
		case u < 0.95:
			gpus[j] = 4
		default:
			gpus[j] = 8
		}
		tput[j] = []float64{0.2 + r.Float64(), 0.5 + 2*r.Float64(), 1 + 3*r.Float64()}
	}
	return c, gpus, tput
}

func benchCrash(b *testing.B, s Solver, c Cluster, gpus []int, tput [][]float64, crashed bool) {
	n := len(gpus)
	for b.Loop() {
		p := NewProgram(c, gpus, tput)
		p.Solver = s
		p.noCrash = !crashed
		terms := make([]Expr, n)
		for j := range terms {
			terms[j] = p.Throughput(j)
		}
		if _, err := p.MaximizeMin(context.Background(), terms, Expr{}); err != nil {
			b.Fatal(err)
		}
	}
}
