package allocation

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/internal/lp"
)

// restrictWhole is restrict as it reads the whole LP, prob: every row
// scanned, each built by restrictRow, those with no share left to choose
// dropped but capacity rows. It is the reference restrict's shortcut,
// which reads only the rows of the jobs in, and the expressions with t
// added as a last term, must match.
func restrictWhole(p *Program, prob *lp.Problem, in []bool, c, e []float64, t int, tFree bool) restriction {
	r := restriction{sub: &lp.Problem{Sense: prob.Sense}, capacity: make([]int, len(p.types)), rows: make([]int, prob.NumRows()), t: -1}
	index := make([]int, prob.NumVars())
	for v := range index {
		index[v] = -1
	}
	if tFree {
		r.t = r.sub.AddVar(prob.Var(t))
		index[t] = r.t
		r.back = append(r.back, t)
	}
	for j, row := range p.x {
		for _, v := range row {
			if v >= 0 && in[j] {
				index[v] = r.sub.AddVar(prob.Var(v))
				r.back = append(r.back, v)
			}
		}
	}
	put := restrictRow(&r, index, c, e)
	for i := range prob.NumRows() {
		lower, upper, row := prob.Row(i)
		isCapacity := i < len(p.rows) && p.rows[i].kind == 0 && p.rows[i].s.kind == slotCapacity
		r.rows[i] = put(lower, upper, row, lp.Term{}, isCapacity)
		if isCapacity {
			r.capacity[p.rows[i].s.n] = r.rows[i]
		}
	}
	return r
}

// restrict, which reads the base program's rows and the expressions in
// place and skips the rows of jobs not in, builds the very LP that
// restricting the whole LP row by row builds: the same variables, rows,
// bounds and coefficients, bit for bit, and the same maps back. The cases
// are plain programs and programs with floor rows, in both stages, with t
// free and fixed, and shares fixed at random values.
func TestRestrictReadsInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 29))
	n := 0
	for i := range 300 {
		cc := newCrashCase(r)
		p := cc.program(CLP)
		terms := cc.terms(p)
		if terms == nil {
			continue
		}
		exprs := terms
		if i%2 == 1 { // floor rows: half the jobs were frozen
			exprs = nil
			for j, e := range terms {
				if j%2 == 0 {
					exprs = append(exprs, e)
				} else {
					p.Constrain(e, r.Float64(), math.Inf(1))
				}
			}
		}
		g, ok := p.lagrangian(exprs)
		if !ok {
			t.Fatalf("case %d: not of crash's shape", i)
		}
		m := newMaxMinLP(p, exprs, 1+r.Float64())
		if r.IntN(2) == 0 {
			m.raise(r.Float64(), Sum(terms...))
		}
		in := make([]bool, len(cc.gpus))
		for j := range in {
			in[j] = r.IntN(3) == 0
		}
		c, e := make([]float64, m.numVars()), make([]float64, m.numVars())
		for v := range c {
			c[v], e[v] = r.Float64(), r.Float64()-0.5
		}
		tFree := r.IntN(2) == 0
		if !tFree {
			e = nil
		}
		got := g.restrict(m, in, c, e, tFree)
		want := restrictWhole(p, m.problem(), in, c, e, m.t, tFree)
		if msg := sameLP(got.sub, want.sub); msg != "" {
			t.Fatalf("case %d (t free %v): %s", i, tFree, msg)
		}
		if !slices.Equal(got.back, want.back) || !slices.Equal(got.capacity, want.capacity) || !slices.Equal(got.rows, want.rows) || got.t != want.t {
			t.Fatalf("case %d: maps back %v %v %v %d, want %v %v %v %d", i, got.back, got.capacity, got.rows, got.t, want.back, want.capacity, want.rows, want.t)
		}
		n++
	}
	if n < 200 {
		t.Errorf("only %d cases of crash's shape", n)
	}
}

// sameLP describes the first difference between a and b, or returns "".
func sameLP(a, b *lp.Problem) string {
	if a.Sense != b.Sense || a.NumVars() != b.NumVars() || a.NumRows() != b.NumRows() {
		return "sense or size differs"
	}
	for v := range a.NumVars() {
		l1, u1, o1 := a.Var(v)
		l2, u2, o2 := b.Var(v)
		if l1 != l2 || u1 != u2 || o1 != o2 {
			return "variable bounds or objective differ"
		}
	}
	for i := range a.NumRows() {
		l1, u1, r1 := a.Row(i)
		l2, u2, r2 := b.Row(i)
		if l1 != l2 || u1 != u2 || !slices.Equal(r1, r2) {
			return "row differs"
		}
	}
	return ""
}
