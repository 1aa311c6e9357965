package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSparseHandSolved pins the max-min form in small, solved by hand:
// maximize t subject to t ≤ 2x, t ≤ 3y, x + y ≤ 1. At the optimum x = 0.6,
// y = 0.4, t = 1.2, all three rows bind (the two term rows at their lower
// bound 0, the sum at its upper bound 1), and all three variables are
// basic; a unit more of the sum's bound is worth 1.2, a unit more of a
// term row's lower bound costs 0.6 and 0.4.
func TestSparseHandSolved(t *testing.T) {
	p := &Problem{Sense: Maximize}
	tv := p.AddVar(-Inf, Inf, 1)
	x := p.AddVar(0, Inf, 0)
	y := p.AddVar(0, Inf, 0)
	p.AddRow(0, Inf, Term{tv, -1}, Term{x, 2})
	p.AddRow(0, Inf, Term{tv, -1}, Term{y, 3})
	p.AddRow(-Inf, 1, Term{x, 1}, Term{y, 1})
	sol, err := Sparse{}.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	got := want{sol.Objective, sol.X, sol.Duals}
	if diff := cmp.Diff(want{1.2, []float64{1.2, 0.6, 0.4}, []float64{-0.6, -0.4, 1.2}}, got, approx...); diff != "" {
		t.Errorf("Solve mismatch (-want +got):\n%s", diff)
	}
	wantBasis := &Basis{Vars: []BasisStatus{Basic, Basic, Basic}, Rows: []BasisStatus{AtLower, AtLower, AtUpper}}
	if diff := cmp.Diff(wantBasis, sol.Basis); diff != "" {
		t.Errorf("Basis mismatch (-want +got):\n%s", diff)
	}
	if sol.Engine != "sparse" {
		t.Errorf("Engine = %q, want sparse", sol.Engine)
	}
}

// randomGeneral returns a random LP with up to 25 variables and 20 rows and
// every kind of bound, without the guarantees of randomProblem: some are
// infeasible (rows around a point, some moved off it), some unbounded
// (variables with an infinite bound and no box).
func randomGeneral(r *rand.Rand) *Problem {
	nv, nr := 1+r.IntN(25), r.IntN(21)
	p := &Problem{Sense: Sense(r.IntN(2))}
	x0 := make([]float64, nv)
	for j := range nv {
		x0[j] = float64(r.IntN(7) - 3)
		lo, hi := x0[j]-float64(r.IntN(4)), x0[j]+float64(r.IntN(4))
		switch r.IntN(8) {
		case 0:
			lo = -Inf
		case 1:
			hi = Inf
		case 2:
			lo, hi = -Inf, Inf
		case 3:
			lo, hi = x0[j], x0[j]
		}
		p.AddVar(lo, hi, float64(r.IntN(11)-5))
	}
	for range nr {
		var terms []Term
		var act float64
		for j := range nv {
			if r.Float64() < 0.35 {
				c := float64(r.IntN(9) - 4)
				if r.IntN(4) == 0 {
					c = math.Round(r.NormFloat64()*100) / 10
				}
				terms = append(terms, Term{j, c})
				act += c * x0[j]
			}
		}
		if r.IntN(8) == 0 {
			act += float64(r.IntN(9) - 4) // maybe off the point: infeasible
		}
		switch r.IntN(5) {
		case 0:
			p.AddRow(-Inf, act+float64(r.IntN(3)), terms...)
		case 1:
			p.AddRow(act-float64(r.IntN(3)), Inf, terms...)
		case 2:
			p.AddRow(act, act, terms...)
		default:
			p.AddRow(act-float64(r.IntN(3)), act+float64(r.IntN(3)), terms...)
		}
	}
	return p
}

// outcomeOf names how a solve ended, for comparing engines.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return "optimal"
	case errors.Is(err, ErrInfeasible):
		return "infeasible"
	case errors.Is(err, ErrUnbounded):
		return "unbounded"
	}
	return "error: " + err.Error()
}

// compareSparse solves p with Sparse and with the reference engines (CLP's
// dual and primal and the dense Simplex when CLP is compiled in, the dense
// Simplex alone otherwise; a reference that fails on its own, such as on
// Simplex's size guard, is left out). Sparse's outcome must be one a
// reference reached, and an optimum unless no reference found one; its
// optimum must be certified (feasible, duals with the signs of an optimum,
// complementary slackness) and have every optimal reference's objective
// within 1e-7 relative. References may disagree on outcomes: CLP calls
// some feasible problems infeasible, unbounded ones among them, which
// provedUnbounded then settles.
func compareSparse(t *testing.T, name string, p *Problem) {
	t.Helper()
	got, err := Sparse{}.Solve(context.Background(), p)
	o := outcomeOf(err)
	agreed, optimal := false, false
	var outcomes []string
	for _, ref := range sparseReferences() {
		want, werr := ref.Solve(context.Background(), p)
		wo := outcomeOf(werr)
		if strings.HasPrefix(wo, "error") {
			continue
		}
		outcomes = append(outcomes, ref.name+" "+wo)
		agreed = agreed || wo == o
		optimal = optimal || werr == nil
		if werr == nil && err == nil && !sameObjective(got.Objective, want.Objective) {
			t.Errorf("%s: sparse objective %v, %s %v", name, got.Objective, ref.name, want.Objective)
		}
	}
	if !agreed && o == "unbounded" && !optimal && provedUnbounded(t, p) {
		agreed = true // CLP calls some unbounded problems infeasible
	}
	if !agreed || optimal && err != nil {
		t.Errorf("%s: sparse %s, references %v", name, o, outcomes)
		return
	}
	if err != nil {
		if got == nil || got.Status == Optimal || !math.IsNaN(got.Objective) {
			t.Errorf("%s: %v with solution %+v", name, err, got)
		}
		return
	}
	checkOptimal(t, p, got)
}

// provedUnbounded reports whether the reference shows p unbounded: p is
// feasible (its objective cleared, the reference finds a certified point),
// and with every infinite bound replaced by ±1e7 the reference's optimum
// puts some such variable at 1e7.
func provedUnbounded(t *testing.T, p *Problem) bool {
	q := p.Clone(0, 0, 0)
	q.ClearObjective()
	if sol, err := referenceEngine().Solve(context.Background(), q); err != nil || !certified(t, q, sol) {
		return false
	}
	const box = 1e7
	q = p.Clone(0, 0, 0)
	var open []int
	for j := range q.NumVars() {
		lo, hi, _ := q.Var(j)
		if math.IsInf(lo, -1) || math.IsInf(hi, 1) {
			q.SetBounds(j, max(lo, -box), min(hi, box))
			open = append(open, j)
		}
	}
	sol, err := referenceEngine().Solve(context.Background(), q)
	if err != nil {
		return false
	}
	for _, j := range open {
		if math.Abs(sol.X[j]) >= box*(1-1e-9) {
			return true
		}
	}
	return false
}

// TestSparseRandomGeneral compares Sparse with the reference on random
// LPs of every outcome; it fails unless each outcome occurs.
func TestSparseRandomGeneral(t *testing.T) {
	instances := 600
	if testing.Short() || raceEnabled {
		instances = 100
	}
	r := rand.New(rand.NewPCG(21, 22))
	seen := map[string]int{}
	for i := range instances {
		p := randomGeneral(r)
		_, err := Sparse{}.Solve(context.Background(), p)
		seen[outcomeOf(err)]++
		compareSparse(t, fmt.Sprintf("instance %d (%d vars, %d rows)", i, p.NumVars(), p.NumRows()), p)
	}
	for _, o := range []string{"optimal", "infeasible", "unbounded"} {
		if seen[o] < instances/20 {
			t.Errorf("only %d of %d instances %s: %v", seen[o], instances, o, seen)
		}
	}
}

// TestSparseMaxMin compares Sparse with the reference on the allocation
// LPs it is for: random max-min LPs with t free and bounded, both stages
// of random heterogeneity-agnostic programs (degenerate), and random
// feasible LPs after bad rescaling.
func TestSparseMaxMin(t *testing.T) {
	instances := 150
	if testing.Short() || raceEnabled {
		instances = 30
	}
	r := rand.New(rand.NewPCG(23, 24))
	for i := range instances {
		p := maxMin(2+r.IntN(60), uint64(i))
		if i%2 == 1 {
			boundT(p)
		}
		compareSparse(t, fmt.Sprintf("maxMin %d", i), p)
		stage1, stage2 := randomAgnostic(r).stages()
		compareSparse(t, fmt.Sprintf("agnostic %d stage 1", i), stage1)
		if sol, err := referenceEngine().Solve(context.Background(), stage1); err == nil {
			compareSparse(t, fmt.Sprintf("agnostic %d stage 2", i), stage2(sol.Objective))
		}
		q := randomProblem(r)
		row, col := make([]float64, q.NumRows()), make([]float64, q.NumVars())
		for k := range row {
			row[k] = math.Pow(10, -4+8*r.Float64())
		}
		for k := range col {
			col[k] = math.Pow(10, -4.5+8*r.Float64())
		}
		compareSparse(t, fmt.Sprintf("rescaled %d", i), rescale(q, row, col))
	}
}

// TestSparseDegenerate solves the program that made gonum cycle and the
// tie-break stage of larger max-min LPs, where most jobs sit at t*.
func TestSparseDegenerate(t *testing.T) {
	stage1, stage2 := hangSpec().stages()
	sol1, err := solveWithin(t, Sparse{}, stage1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := stage2(sol1.Objective)
	sol2, err := solveWithin(t, Sparse{}, p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkOptimal(t, p, sol2)
	if !sameObjective(sol2.Objective, 922.25) {
		t.Errorf("stage 2: objective %v, want 922.25", sol2.Objective)
	}
	sizes := []int{48, 96} // within the dense Simplex's guard
	if HasCLP {
		sizes = []int{64, 256}
	}
	for _, n := range sizes {
		p := maxMin(n, 4)
		sol, err := Sparse{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		p.SetBounds(0, sol.Objective, sol.Objective)
		p.SetObjective(0, 0)
		for r := range p.NumRows() {
			if _, _, terms := p.Row(r); len(terms) > 0 && terms[0].Var == 0 {
				for _, tm := range terms[1:] {
					p.SetObjective(tm.Var, tm.Coef)
				}
			}
		}
		compareSparse(t, fmt.Sprintf("tie-break n=%d", n), p)
	}
}

// TestSparseWarmEqualsCold solves a sequence of max-min LPs of one shape
// from the previous instance's basis, from the instance's own optimal
// basis (which must need no iteration at all), and from statuses drawn at
// random (not a basis: Sparse repairs it); each reaches the cold optimum.
func TestSparseWarmEqualsCold(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	var prev *Basis
	for i := range 10 {
		p := maxMin(96, uint64(i))
		if i%2 == 0 {
			boundT(p)
		}
		cold, err := Sparse{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		random := &Basis{Vars: make([]BasisStatus, p.NumVars()), Rows: make([]BasisStatus, p.NumRows())}
		for _, s := range [][]BasisStatus{random.Vars, random.Rows} {
			for k := range s {
				s[k] = BasisStatus(r.IntN(int(Fixed) + 1))
			}
		}
		for _, start := range []struct {
			name string
			b    *Basis
			e    Sparse
		}{{"previous", prev, Sparse{}}, {"own", cold.Basis, Sparse{MaxIterations: 1}}, {"random", random, Sparse{}}} {
			if start.b == nil {
				continue
			}
			p.Start(start.b)
			warm, err := start.e.Solve(context.Background(), p)
			if err != nil {
				t.Fatalf("instance %d, %s basis: %v", i, start.name, err)
			}
			checkOptimal(t, p, warm)
			if !sameObjective(warm.Objective, cold.Objective) {
				t.Errorf("instance %d, %s basis: objective %v, cold %v", i, start.name, warm.Objective, cold.Objective)
			}
		}
		p.Start(nil)
		prev = cold.Basis
	}
}

// TestSparseDeterministic: the same problem gives the same solution, bit
// for bit.
func TestSparseDeterministic(t *testing.T) {
	p := maxMin(300, 8)
	first, err := Sparse{}.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Sparse{}.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.X, again.X) || !slices.Equal(first.Duals, again.Duals) {
		t.Error("two solves of one problem differ")
	}
}

// A deadline stops a solve in progress soon after it passes, an iteration
// cap stops it without one, and the size guard refuses what it must.
func TestSparseLimits(t *testing.T) {
	p := maxMin(4096, 7)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	sol, err := Sparse{}.Solve(ctx, p)
	if !errors.Is(err, ErrTimeLimit) || !errors.Is(err, context.DeadlineExceeded) || sol == nil || sol.Status != Stopped {
		t.Errorf("with a 20ms deadline: %v, %+v; want ErrTimeLimit, DeadlineExceeded and Stopped", err, sol)
	}
	// 30ms here alone; the whole solve takes 2s, and CI's load slows both.
	if d := time.Since(start); d > time.Second && !raceEnabled {
		t.Errorf("returned after %v", d)
	}
	_, err = Sparse{MaxIterations: 5}.Solve(context.Background(), maxMin(64, 1))
	if !errors.Is(err, ErrTimeLimit) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("5 iterations: %v, want ErrTimeLimit only", err)
	}
	_, err = Sparse{MaxRows: 66}.Solve(context.Background(), maxMin(32, 1))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "-tags clp") {
		t.Errorf("MaxRows 66, 67 rows: %v, want ErrTooLarge naming the CLP build", err)
	}
}

// FuzzSparse solves arbitrary small problems: Sparse must neither panic
// nor hang, must fail only with the package's sentinels, and must agree
// with the dense Simplex, which settles most disagreements on such
// problems. Simplex is wrong at times: it calls some infeasible problems
// unbounded (the feasibility problem, the objective cleared, then decides)
// and some optimal, with a point that violates a row by 1e-3 (its
// certificate then fails) or by 1e-6 of a row whose terms are 1e-6.
func FuzzSparse(f *testing.F) {
	f.Add([]byte{3, 2, 1, 0, 5, 7, 9, 200, 13, 4, 4, 4, 8, 1, 2, 3})
	f.Add([]byte{1, 1, 0, 0, 0, 0})
	f.Add([]byte{6, 5, 255, 0, 17, 34, 51, 68, 85, 102, 119, 136, 153, 170, 187, 204, 221, 238})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, extreme := fuzzProblem(data)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err := Sparse{}.Solve(ctx, p)
		if err != nil && (strings.Contains(err.Error(), "panic") || errors.Is(err, context.DeadlineExceeded) ||
			!errors.Is(err, ErrInfeasible) && !errors.Is(err, ErrUnbounded) && !errors.Is(err, ErrNumerical)) {
			t.Fatalf("sparse: %v", err)
		}
		if extreme {
			// Values 1e3 apart make answers that depend on tolerances
			// (a reduced cost of 1e-9 after scaling is 0.001 before it):
			// only robustness is checked.
			return
		}
		if err == nil {
			checkOptimal(t, p, got)
			checkWarm(t, p, got, data)
		}
		want, werr := Simplex{}.Solve(context.Background(), p)
		if errors.Is(werr, ErrNumerical) || errors.Is(werr, ErrTimeLimit) {
			return // no reference
		}
		o, wo := outcomeOf(err), outcomeOf(werr)
		switch {
		case o == wo && err == nil && !sameObjective(got.Objective, want.Objective):
			t.Fatalf("sparse objective %v, simplex %v", got.Objective, want.Objective)
		case o == wo:
		case werr == nil && certified(t, p, want) && nearlyExact(p, want.X):
			t.Fatalf("sparse %s, simplex optimal", o)
		case werr == nil: // Simplex's optimum violates a row or bound
			// (checkOptimal's tolerance is absolute: 1e-6 over a row
			// 0.001·x ≤ 0 passes, and Sparse, which scales the row, calls
			// that infeasible)
		case err == nil: // certified above; Simplex is wrong
		case (o == "unbounded") != feasible(t, p):
			t.Fatalf("sparse %s, simplex %s, and the feasibility problem disagrees with sparse", o, wo)
		}
	})
}

// nearlyExact reports whether x satisfies p's rows within 1e-9 of the
// magnitude of their terms.
func nearlyExact(p *Problem, x []float64) bool {
	for i := range p.NumRows() {
		lo, hi, terms := p.Row(i)
		var act, mag float64
		for _, tm := range terms {
			act += tm.Coef * x[tm.Var]
			mag += math.Abs(tm.Coef * x[tm.Var])
		}
		if tol := 1e-9 * (1 + mag); act < lo-tol || act > hi+tol {
			return false
		}
	}
	return true
}

// certified reports whether sol passes checkOptimal.
func certified(t testing.TB, p *Problem, sol *Solution) bool {
	r := &recorder{TB: t}
	checkOptimal(r, p, sol)
	return !r.failed
}

// recorder is a testing.TB that notes failures instead of reporting them.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

// checkWarm solves p again from its optimal basis, which must need no
// iteration unless it has a Superbasic entry (a basis does not say where
// that variable was), and from statuses drawn from data, which Sparse must
// repair: both reach sol's objective.
func checkWarm(t *testing.T, p *Problem, sol *Solution, data []byte) {
	t.Helper()
	random := &Basis{Vars: make([]BasisStatus, p.NumVars()), Rows: make([]BasisStatus, p.NumRows())}
	k := 0
	for _, st := range [][]BasisStatus{random.Vars, random.Rows} {
		for i := range st {
			if k < len(data) {
				st[i] = BasisStatus(data[len(data)-1-k] % (uint8(Fixed) + 1))
				k++
			}
		}
	}
	own := Sparse{MaxIterations: 1}
	if slices.Contains(sol.Basis.Vars, Superbasic) || slices.Contains(sol.Basis.Rows, Superbasic) {
		own = Sparse{}
	}
	defer p.Start(nil)
	for _, start := range []struct {
		b *Basis
		e Sparse
	}{{sol.Basis, own}, {random, Sparse{}}} {
		p.Start(start.b)
		warm, err := start.e.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("from basis %v: %v", start.b, err)
		}
		checkOptimal(t, p, warm)
		if !sameObjective(warm.Objective, sol.Objective) {
			t.Fatalf("from basis %v: objective %v, cold %v", start.b, warm.Objective, sol.Objective)
		}
	}
}

// feasible reports whether either engine finds a point that satisfies p's
// rows and bounds (within checkOptimal's tolerance).
func feasible(t *testing.T, p *Problem) bool {
	q := p.Clone(0, 0, 0)
	q.ClearObjective()
	for _, e := range []Engine{Sparse{}, Simplex{}} {
		if sol, err := e.Solve(context.Background(), q); err == nil && certified(t, q, sol) {
			return true
		}
	}
	return false
}

// fuzzProblem decodes up to 6 variables and 5 rows from data: bounds,
// costs and coefficients from small sets that make degenerate, infeasible
// and unbounded problems common. extreme says whether it used 1e-3 or 1e3.
func fuzzProblem(data []byte) (p *Problem, extreme bool) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	vals := []float64{0, 1, -1, 2, -2, 3, 0.5, -0.5, 4, 1e-3, 1e3, 7}
	val := func() float64 {
		v := vals[next()%len(vals)]
		extreme = extreme || v == 1e-3 || v == 1e3
		return v
	}
	p = &Problem{Sense: Sense(next() % 2)}
	nv, nr := 1+next()%6, next()%6
	for range nv {
		lo, hi := val(), val()
		switch k := next() % 6; {
		case k == 0:
			lo = -Inf
		case k == 1:
			hi = Inf
		case k == 2:
			lo, hi = -Inf, Inf
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		p.AddVar(lo, hi, val())
	}
	for range nr {
		var terms []Term
		for j := range nv {
			if c := val(); next()%2 == 0 {
				terms = append(terms, Term{j, c})
			}
		}
		lo, hi := val(), val()
		switch k := next() % 5; {
		case k == 0:
			lo = -Inf
		case k == 1:
			hi = Inf
		case k == 2:
			lo = hi
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		p.AddRow(lo, hi, terms...)
	}
	return p, extreme
}
