package allocation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/dlsched/dlsched/internal/lp"
)

// Solver selects the LP engine a Program uses. The zero value, Auto, is CLP
// when dlsched is built with the clp tag (go build -tags clp, which needs cgo
// and the CLP library) and the pure-Go sparse simplex otherwise.
type Solver int

const (
	// Auto is CLP when available, PureGo otherwise.
	Auto Solver = iota
	// CLP is COIN-OR CLP through cgo: fast at every size. It is compiled in
	// only with the clp build tag; elsewhere a Program that asks for it
	// fails with ErrNoSolver.
	CLP
	// PureGo is internal/lp's sparse dual simplex in pure Go: no C
	// dependency, a few times slower than CLP on large programs (the
	// max-min LP of 2048 jobs), and ErrTooLarge beyond 32,768 rows.
	PureGo
)

// ErrNoSolver reports that the requested engine is not compiled in.
var ErrNoSolver = errors.New("allocation: LP engine not available in this build")

// Sentinel errors of the LP layer, re-exported so callers can test for them
// with errors.Is.
var (
	ErrInfeasible = lp.ErrInfeasible
	ErrUnbounded  = lp.ErrUnbounded
	ErrTimeLimit  = lp.ErrTimeLimit
	ErrTooLarge   = lp.ErrTooLarge
	ErrNumerical  = lp.ErrNumerical
)

func (s Solver) engine() (lp.Engine, error) {
	if e, ok := lp.Named(s.String()); ok {
		return e, nil
	}
	if s == CLP {
		return nil, fmt.Errorf("%w: CLP needs the clp build tag (go build -tags clp, with cgo and the CLP library)", ErrNoSolver)
	}
	return nil, fmt.Errorf("%w: unknown solver %d", ErrNoSolver, int(s))
}

// String returns the solver's name.
func (s Solver) String() string {
	switch s {
	case Auto:
		return "auto"
	case CLP:
		return "clp"
	case PureGo:
		return "purego"
	}
	return fmt.Sprintf("Solver(%d)", int(s))
}

// Expr is a linear expression over the variables of a Program:
// Σ coefficient·variable + constant. The zero value is the constant 0.
type Expr struct {
	terms    []lp.Term
	constant float64
}

// Plus returns e + f.
func (e Expr) Plus(f Expr) Expr {
	terms := make([]lp.Term, 0, len(e.terms)+len(f.terms))
	terms = append(append(terms, e.terms...), f.terms...)
	return Expr{terms: terms, constant: e.constant + f.constant}
}

// Scale returns a·e.
func (e Expr) Scale(a float64) Expr {
	terms := make([]lp.Term, len(e.terms))
	for i, t := range e.terms {
		terms[i] = lp.Term{Var: t.Var, Coef: a * t.Coef}
	}
	return Expr{terms: terms, constant: a * e.constant}
}

// Div returns e/d. Dividing each coefficient, rather than scaling by 1/d,
// keeps e/d finite when d is so small that 1/d overflows.
func (e Expr) Div(d float64) Expr {
	terms := make([]lp.Term, len(e.terms))
	for i, t := range e.terms {
		terms[i] = lp.Term{Var: t.Var, Coef: t.Coef / d}
	}
	return Expr{terms: terms, constant: e.constant / d}
}

// Sum returns the sum of exprs.
func Sum(exprs ...Expr) Expr {
	var n int
	for _, e := range exprs {
		n += len(e.terms)
	}
	s := Expr{terms: make([]lp.Term, 0, n)}
	for _, e := range exprs {
		s.terms = append(s.terms, e.terms...)
		s.constant += e.constant
	}
	return s
}

// Program is a linear program over the allocation matrix X of a set of jobs
// on a cluster, with the base constraints already in place (see the package
// documentation). A variable X_jk exists only where job j can run on type k:
// its throughput there is positive and the type has at least as many GPUs as
// the job needs at once. Elsewhere X_jk is fixed at zero.
//
// Build one with NewProgram, add constraints, then call one of the solve
// methods; each solve is independent and leaves the program reusable.
type Program struct {
	// Solver is the LP engine; the zero value is Auto.
	Solver Solver

	types    []Accelerator
	capacity []float64 // GPUs per type
	gpus     []int
	count    []int // jobs per row (NewClasses); nil means one
	tput     [][]float64
	x        [][]int // x[j][k] is the LP variable of X_jk, or -1
	pairs    []Pair
	px       [][]int  // px[c][k] is the LP variable of pair c's share of type k, or -1
	owner    []varRef // built by owners: what each variable of the base program is
	prob     lp.Problem
	rows     []place // what each row of prob is (see Remember)
	warm     *Warm
	ids      []string
	partners [][]int // partners[j] are the pairs job j belongs to
	// noCrash starts cold max-min LPs from the slack basis instead of
	// crash's: the reference crash's tests compare against. crashFrom, if
	// positive, replaces crashFrom's default (tests crash small programs).
	noCrash   bool
	crashFrom int
	// marginAll lets margin hold every job (tests reach it on small
	// programs), and trace, if not nil, counts what margin did.
	marginAll bool
	trace     *marginTrace
	// everyPair solves with every pair column from the start instead of
	// by column generation: the reference the tests compare against.
	everyPair bool
}

// Pair declares two jobs, by index, that may share GPUs (space sharing):
// while co-located on type k, job A runs at ThroughputA[k] and job B at
// ThroughputB[k]. Both jobs must need the same number of GPUs; the pair then
// holds that many GPUs, once.
type Pair struct {
	A, B                     int
	ThroughputA, ThroughputB []float64
}

// NewProgram returns the allocation LP for len(gpus) jobs on cluster c. Job j
// needs gpus[j] GPUs at once and has throughput tput[j][k] on type
// c.Types()[k]. Each pair adds variables P_ck for the time the pair shares
// GPUs of type k, where both members' co-located throughputs are positive;
// a pair counts once against capacity and against both jobs' time.
// NewProgram panics if the lengths disagree or a pair joins jobs of unequal
// GPU counts, programming errors; callers validate user data first.
func NewProgram(c Cluster, gpus []int, tput [][]float64, pairs ...Pair) *Program {
	return newProgram(c, gpus, nil, tput, pairs)
}

// NewClasses returns the allocation LP for len(gpus) classes of
// interchangeable jobs on cluster c: class j has count[j] jobs, each of which
// needs gpus[j] GPUs at once, has throughput tput[j][k] on type
// c.Types()[k] and gets the shares X_jk. A class's shares count count[j]
// times against capacity,
//
//	Σ_j count_j s_j X_jk ≤ N_k,
//
// and once against each member's time. Its expressions are one member's: an
// objective over every job weighs class j's by count[j] (see Count).
//
// A program over jobs that are alike in all it sees is symmetric in them,
// and its feasible set is convex, so averaging any optimum over each class
// gives an optimum in which interchangeable jobs get equal shares: the
// optimum of this smaller program. NewClasses panics if the lengths
// disagree or a count is below 1, programming errors.
func NewClasses(c Cluster, gpus, count []int, tput [][]float64) *Program {
	if len(count) != len(gpus) || slices.ContainsFunc(count, func(n int) bool { return n < 1 }) {
		panic("allocation: NewClasses: one count of at least 1 per class needed")
	}
	return newProgram(c, gpus, count, tput, nil)
}

func newProgram(c Cluster, gpus, count []int, tput [][]float64, pairs []Pair) *Program {
	types := c.Types()
	if len(tput) != len(gpus) {
		panic("allocation: NewProgram: len(tput) != len(gpus)")
	}
	capacity := make([]float64, len(types))
	for k, t := range types {
		capacity[k] = float64(c.GPUs(t))
	}
	p := &Program{types: types, capacity: capacity, gpus: gpus, count: count, tput: tput, x: make([][]int, len(gpus)),
		pairs: pairs, px: make([][]int, len(pairs)), partners: make([][]int, len(gpus))}
	n, nk := len(gpus), len(types)
	// Each job or pair variable appears in at most three rows: time
	// (two for a pair), capacity.
	np := len(pairs)
	p.prob.Grow(n*nk+np*nk+1, n+nk+n, 3*n*nk+n+3*np*nk)
	for j := range gpus {
		if len(tput[j]) != nk {
			panic("allocation: NewProgram: throughput row length != number of accelerator types")
		}
		p.x[j] = make([]int, nk)
		for k := range types {
			p.x[j][k] = -1
			if tput[j][k] > 0 && gpus[j] > 0 && float64(gpus[j]) <= capacity[k] {
				p.x[j][k] = p.prob.AddVar(0, 1, 0)
			}
		}
	}
	partners := p.partners
	for c, pr := range pairs {
		if gpus[pr.A] != gpus[pr.B] || pr.A == pr.B || len(pr.ThroughputA) != nk || len(pr.ThroughputB) != nk {
			panic("allocation: NewProgram: a pair needs two distinct jobs of equal GPU counts and a throughput per type")
		}
		p.px[c] = make([]int, nk)
		for k := range types {
			p.px[c][k] = -1
			if pr.ThroughputA[k] > 0 && pr.ThroughputB[k] > 0 && gpus[pr.A] > 0 && float64(gpus[pr.A]) <= capacity[k] {
				p.px[c][k] = p.prob.AddVar(0, 1, 0)
			}
		}
		partners[pr.A] = append(partners[pr.A], c)
		partners[pr.B] = append(partners[pr.B], c)
	}
	row := make([]lp.Term, 0, max(nk, n))
	p.rows = make([]place, 0, n+nk) // a time row per job at most, a capacity row per type
	for j := range gpus {
		row = row[:0]
		for k := range types {
			if v := p.x[j][k]; v >= 0 {
				row = append(row, lp.Term{Var: v, Coef: 1})
			}
		}
		for _, c := range partners[j] {
			for _, v := range p.px[c] {
				if v >= 0 {
					row = append(row, lp.Term{Var: v, Coef: 1})
				}
			}
		}
		if len(row) > 1 { // a single variable is already bounded by 1
			p.prob.AddRow(-lp.Inf, 1, row...)
			p.rows = append(p.rows, place{kind: slotTime, j: j})
		}
	}
	for k := range types {
		row = row[:0]
		for j := range gpus {
			if v := p.x[j][k]; v >= 0 {
				row = append(row, lp.Term{Var: v, Coef: float64(p.Count(j) * gpus[j])})
			}
		}
		for c, pr := range pairs {
			if v := p.px[c][k]; v >= 0 {
				row = append(row, lp.Term{Var: v, Coef: float64(gpus[pr.A])})
			}
		}
		p.prob.AddRow(-lp.Inf, capacity[k], row...)
		p.rows = append(p.rows, place{s: slot{kind: slotCapacity, n: k}})
	}
	return p
}

// Capacity returns each type's GPUs, in the column order of X.
func (p *Program) Capacity() []float64 { return slices.Clone(p.capacity) }

// Types returns the accelerator types, in the column order of X.
func (p *Program) Types() []Accelerator { return p.types }

// NumJobs returns the number of jobs (rows of X).
func (p *Program) NumJobs() int { return len(p.gpus) }

// Allowed reports whether job j may run on the k-th type.
func (p *Program) Allowed(j, k int) bool { return p.x[j][k] >= 0 }

// X returns the expression X_jk (the constant 0 where it is not allowed).
func (p *Program) X(j, k int) Expr {
	if v := p.x[j][k]; v >= 0 {
		return Expr{terms: []lp.Term{{Var: v, Coef: 1}}}
	}
	return Expr{}
}

// Linear returns Σ_k coef[k]·X_jk.
func (p *Program) Linear(j int, coef []float64) Expr {
	e := Expr{terms: make([]lp.Term, 0, len(coef))}
	for k, c := range coef {
		if v := p.x[j][k]; v >= 0 && c != 0 {
			e.terms = append(e.terms, lp.Term{Var: v, Coef: c})
		}
	}
	return e
}

// Throughput returns job j's effective throughput, alone and in its pairs:
// y_j = Σ_k T_jk X_jk + Σ_{pairs c ∋ j} Σ_k T^c_jk P_ck.
func (p *Program) Throughput(j int) Expr {
	e := p.Linear(j, p.tput[j])
	// Sized once: with pairs, a job has O(jobs) terms, and growing them by
	// appends took 20 s of the 177 s gavel.makespan-ss spent allocating at
	// 2000 jobs (CPU profile of dlsched simulate).
	e.terms = slices.Grow(e.terms, len(p.partners[j])*len(p.types))
	for _, c := range p.partners[j] {
		pr := p.pairs[c]
		t := pr.ThroughputA
		if j == pr.B {
			t = pr.ThroughputB
		}
		for k, v := range p.px[c] {
			if v >= 0 {
				e.terms = append(e.terms, lp.Term{Var: v, Coef: t[k]})
			}
		}
	}
	return e
}

// Eval returns the value of e at the result r of this program. It is not
// safe for concurrent use with other calls of Eval on the same Program.
func (p *Program) Eval(e Expr, r *Result) float64 {
	owner := p.owners()
	v := e.constant
	for _, t := range e.terms {
		o := owner[t.Var]
		switch {
		case o.pair < 0:
			v += t.Coef * r.X[o.row][o.k]
		case o.row < len(r.Pairs): // a hand-built Result may have no pairs
			v += t.Coef * r.Pairs[o.row][o.k]
		}
	}
	return v
}

type varRef struct{ pair, row, k int }

// owners returns what each variable of the base program is, built once.
func (p *Program) owners() []varRef {
	if p.owner != nil {
		return p.owner
	}
	p.owner = make([]varRef, p.prob.NumVars())
	for j, row := range p.x {
		for k, v := range row {
			if v >= 0 {
				p.owner[v] = varRef{pair: -1, row: j, k: k}
			}
		}
	}
	for c, row := range p.px {
		for k, v := range row {
			if v >= 0 {
				p.owner[v] = varRef{pair: c, row: c, k: k}
			}
		}
	}
	return p.owner
}

// Time returns Σ_k X_jk, the fraction of time job j runs alone.
func (p *Program) Time(j int) Expr {
	ones := make([]float64, len(p.types))
	for k := range ones {
		ones[k] = 1
	}
	return p.Linear(j, ones)
}

// Constrain adds lower ≤ e ≤ upper. Use ±math.Inf for a one-sided bound.
func (p *Program) Constrain(e Expr, lower, upper float64) {
	p.rows = append(p.rows, place{s: slot{kind: slotRow, n: p.prob.NumRows()}})
	p.prob.AddRow(lower-e.constant, upper-e.constant, e.terms...)
}

// Result is the solution of a Program.
type Result struct {
	// Objective is the optimal value of the (first-stage) objective.
	Objective float64
	// X is the allocation matrix, one row per job in the order given to
	// NewProgram and one column per Types() entry. Values are clamped into
	// [0,1] and rows rescaled to sum to at most 1. Entries may carry solver
	// noise of the order of 1e-8: they are kept here, so that Eval of the
	// program's expressions reproduces the solver's objective (where a
	// job's throughput differs widely across types even a tiny share can
	// be what lifts the job to t*), and dropped by Allocation.
	X [][]float64
	// Pairs holds each pair's shares P_ck, one row per Pair given to
	// NewProgram, cleaned like X.
	Pairs [][]float64
	// Engine names the LP engine that solved the program, or is "reach"
	// where MaximizeMin's t* is the expressions' least upper bound, which
	// capacity did not hold back, and no engine solved for it.
	Engine string
	// Bottleneck, set by MaximizeMin, reports for each expression whether
	// it is certainly held at t*: no allocation keeps every expression at
	// t* or above and lifts this one higher. At least one is true;
	// water-filling freezes these and raises the rest.
	Bottleneck []bool
}

// Maximize solves max e.
func (p *Program) Maximize(ctx context.Context, e Expr) (*Result, error) {
	return p.optimize(ctx, lp.Maximize, e)
}

// Minimize solves min e.
func (p *Program) Minimize(ctx context.Context, e Expr) (*Result, error) {
	return p.optimize(ctx, lp.Minimize, e)
}

func (p *Program) optimize(ctx context.Context, sense lp.Sense, e Expr) (*Result, error) {
	eng, err := p.Solver.engine()
	if err != nil {
		return nil, err
	}
	prob := p.prob.Clone(0, 0, 0)
	prob.Sense = sense
	prob.ClearObjective()
	for _, t := range e.terms {
		_, _, c := prob.Var(t.Var)
		prob.SetObjective(t.Var, c+t.Coef)
	}
	stage := "minimize"
	if sense == lp.Maximize {
		stage = "maximize"
	}
	lay := p.layout(prob.NumVars(), nil)
	sol, _, err := p.solve(ctx, eng, prob, p.start(stage, lay), nil)
	if err != nil {
		return nil, err
	}
	p.keep(stage, lay, sol.Basis)
	x, pairs := p.matrix(sol.X)
	return &Result{Objective: sol.Objective + e.constant, X: x, Pairs: pairs, Engine: sol.Engine}, nil
}

// MaximizeMin solves the max-min program
//
//	maximize t   subject to   e_i ≥ t  for every expression e_i in exprs
//
// and returns t* as the Objective; exprs must not be empty. Max-min optima are rarely unique: only
// the bottleneck expressions are pinned. If tieBreak is not the zero Expr, a
// second program then maximizes tieBreak subject to e_i ≥ t*(1 − 1e-9), so
// that the allocation returned is one canonical optimum rather than whichever
// vertex the engine reaches first. If that second solve fails numerically,
// the first-stage allocation is returned.
func (p *Program) MaximizeMin(ctx context.Context, exprs []Expr, tieBreak Expr) (*Result, error) {
	eng, err := p.Solver.engine()
	if err != nil {
		return nil, err
	}
	if len(exprs) == 0 {
		return nil, fmt.Errorf("%w: MaximizeMin over no expressions", ErrUnbounded)
	}
	bounds := p.upperBounds(exprs)
	m := newMaxMinLP(p, exprs, slices.Min(bounds))
	// Only a solve by the engine needs the layout, to start warm and to
	// keep its basis.
	lay := sync.OnceValue(func() *layout { return p.layout(m.numVars(), p.exprPlaces(exprs)) })
	var g *lagrangian // crash's view of the program, built once for both stages
	if !p.noCrash && len(exprs) >= cmp.Or(p.crashFrom, crashFrom) {
		g, _ = p.lagrangian(exprs)
	}
	res, x, used, err := p.stageOne(ctx, eng, m, g, lay, bounds)
	if err != nil {
		return res, err
	}
	if len(tieBreak.terms) == 0 {
		res.X, res.Pairs = p.matrix(x)
		return res, nil
	}
	tStar := res.Objective
	m.raise(tStar-1e-9*math.Abs(tStar), tieBreak) // relative: t* may be tiny
	return p.stageTwo(ctx, eng, m, g, lay, res, x, used)
}

// stageTwo maximizes m's tie-break, MaximizeMin's second stage with t at
// least its floor, and sets res's shares to the optimum, or to stage
// one's, x, where the whole LP fails numerically. Where crash's
// view g applies, it solves over the jobs near a tie (see margin), from
// the last prices warm kept, else from the prices of the optimum unless
// there is a warm basis to start the engine from. The whole LP, from a
// warm basis or crash's, is its fallback.
func (p *Program) stageTwo(ctx context.Context, eng lp.Engine, m *maxMinLP, g *lagrangian, lay func() *layout, res *Result, x []float64, used []bool) (*Result, error) {
	whole := func(start *lp.Basis) (*Result, error) {
		return p.tieBreakLP(ctx, eng, m.problem(), lay, res, x, used, start)
	}
	s, ok := p.priceTieBreak(g, m.tie, m.lower)
	if !ok {
		return whole(p.start("tie-break", lay()))
	}
	prices := p.lastPrices("tie-break")
	if prices == nil {
		if start := p.start("tie-break", lay()); start != nil {
			return whole(start)
		}
		if prices, _, ok = g.tieBreakPrices(ctx, s.d, m.lower); !ok {
			return whole(nil)
		}
	}
	two, lambda, err := p.margin(ctx, eng, m, s, prices)
	switch {
	case err != nil:
		return nil, err
	case two != nil:
		p.keepPrices("tie-break", lambda)
		res.X, res.Pairs = p.matrix(two)
		return res, nil
	}
	if start := p.start("tie-break", lay()); start != nil || !g.plain {
		return whole(start)
	}
	return whole(s.basis(p, m, prices))
}

// tieBreakLP solves the second stage, prob, whole by the engine from
// start, and sets res's shares to its optimum; where it fails numerically,
// to stage one's, x.
func (p *Program) tieBreakLP(ctx context.Context, eng lp.Engine, prob *lp.Problem, lay func() *layout, res *Result, x []float64, used []bool, start *lp.Basis) (*Result, error) {
	p.keepPrices("tie-break", nil) // the basis is the start to take next
	sol, _, err := p.solve(ctx, eng, prob, start, used)
	switch {
	case err == nil:
		p.keep("tie-break", lay(), sol.Basis)
		res.X, res.Pairs = p.matrix(sol.X)
	case ctx.Err() != nil:
		return nil, err
	case errors.Is(err, lp.ErrInfeasible), errors.Is(err, lp.ErrNumerical):
		// the first-stage optimum is still optimal for t.
		res.X, res.Pairs = p.matrix(x)
	default:
		return nil, err
	}
	return res, nil
}

// byReach is the Engine of a Result whose t* no engine solved for: the
// jobs' reach, which capacity did not hold back (see capped). The
// tie-break, if any, still solves an LP.
const byReach = "reach"

// stageOne maximizes t over m, MaximizeMin's first stage, and returns the
// result without its shares, the values of m's variables at the optimum,
// and the pair columns it used. The shares wait for the caller: stage two
// replaces them but where it fails.
func (p *Program) stageOne(ctx context.Context, eng lp.Engine, m *maxMinLP, g *lagrangian, lay func() *layout, bounds []float64) (*Result, []float64, []bool, error) {
	n := len(bounds)
	res := &Result{Bottleneck: make([]bool, n)}
	var start *lp.Basis
	if g == nil {
		start = p.start("max-min", lay())
	} else {
		if plans, ok := g.capped(); ok {
			res.Objective, res.Engine = slices.Min(bounds), byReach
			for i, b := range bounds {
				res.Bottleneck[i] = reached(b, res.Objective)
			}
			return res, p.planned(m.numVars(), g, plans), nil, nil
		}
		one, basis, err := p.pricedStageOne(ctx, eng, m, g, lay, bounds)
		switch {
		case err != nil:
			return nil, nil, nil, err
		case one != nil:
			res.Objective, res.Engine, res.Bottleneck = one.t, one.engine, one.bottleneck
			return res, one.x, nil, nil
		}
		start = basis
	}
	sol, used, err := p.solve(ctx, eng, m.problem(), start, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	p.keep("max-min", lay(), sol.Basis)
	res.Objective, res.Engine = sol.Objective, sol.Engine
	// Raising e_i's requirement above t* lowers the optimum when its row's
	// dual is nonzero; an expression already at its own upper bound cannot
	// rise either. The duals of these rows and of t's bound sum to 1, so at
	// least one expression qualifies.
	for i := range n {
		res.Bottleneck[i] = math.Abs(sol.Duals[m.first+i]) > 1e-9 || reached(bounds[i], sol.Objective)
	}
	return res, sol.X, used, nil
}

// reached reports whether an expression whose upper bound is bound cannot
// rise above level t: a bottleneck whatever the duals say.
func reached(bound, t float64) bool {
	return bound <= t+1e-9*math.Max(1, math.Abs(t))
}

// pricedStageOne solves a plain program's stage one over the jobs at the
// margin (see marginLevel), from the last prices warm kept, then from
// those crash's search finds. Where it leaves the stage to the whole LP,
// it returns the start for it: a warm basis, or crash's.
//
// Programs with floor rows (water-filling's levels after the first) start
// the engine from the last level's basis instead: from the last level's
// prices, margin's LPs grew past a quarter of the jobs on most levels of
// gavel.water-filling at 1024 jobs, and searching afresh at each level
// took longer than the engine (BenchmarkPolicy, with this function taking
// them).
func (p *Program) pricedStageOne(ctx context.Context, eng lp.Engine, m *maxMinLP, g *lagrangian, lay func() *layout,
	bounds []float64) (*stageOne, *lp.Basis, error) {
	if start := p.start("max-min", lay()); start != nil || !g.plain {
		return nil, start, nil
	}
	solve := func(prices []float64) (*stageOne, error) {
		one, err := p.marginLevel(ctx, eng, m, g, prices, bounds)
		if one != nil {
			p.keepPrices("max-min", one.prices)
		}
		return one, err
	}
	if prices := p.lastPrices("max-min"); prices != nil {
		if one, err := solve(prices); err != nil || one != nil {
			return one, nil, err
		}
	}
	p.keepPrices("max-min", nil)
	prices, level, capacityHolds := g.search(ctx)
	if prices != nil {
		if one, err := solve(prices); err != nil || one != nil {
			return one, nil, err
		}
	}
	if !capacityHolds {
		return nil, nil, nil
	}
	return nil, g.crash(p, m, prices, level), nil
}

// planned returns the values of nv variables, the base program's and t,
// where each job j of g takes plans[j] at g's reach.
func (p *Program) planned(nv int, g *lagrangian, plans []plan) []float64 {
	x := make([]float64, nv)
	for j, pl := range plans {
		switch {
		case pl.k < 0:
			continue
		case pl.l < 0:
			x[p.x[j][pl.k]] = g.need(j, g.reach) / g.a[j][pl.k]
			continue
		}
		x[p.x[j][pl.k]], x[p.x[j][pl.l]] = 1-pl.xl, pl.xl
	}
	return x
}

// matrix extracts X and the pair shares from an LP solution: clamped into
// [0,1], each job's time (alone and in pairs) scaled to at most 1, and any
// type left over capacity by the engine's tolerance shrunk to fit.
func (p *Program) matrix(sol []float64) (x, pairs [][]float64) {
	extract := func(vars [][]int) [][]float64 {
		nk := len(p.types)
		flat := make([]float64, len(vars)*nk)
		out := make([][]float64, len(vars))
		for i, row := range vars {
			out[i] = flat[i*nk : (i+1)*nk : (i+1)*nk]
			for k, v := range row {
				if v >= 0 {
					out[i][k] = min(max(sol[v], 0), 1)
				}
			}
		}
		return out
	}
	x, pairs = extract(p.x), extract(p.px)
	partners := p.partners
	busy := func(j int) float64 {
		var b float64
		for _, v := range x[j] {
			b += v
		}
		for _, c := range partners[j] {
			for _, v := range pairs[c] {
				b += v
			}
		}
		return b
	}
	for j := range x {
		b := busy(j)
		if b <= 1 {
			continue
		}
		scale := func(row []float64) {
			for k := range row {
				row[k] /= b
			}
		}
		scale(x[j])
		for _, c := range partners[j] {
			scale(pairs[c])
		}
		// Division can leave the sum an ulp above 1: take it from the
		// largest entry.
		if excess := busy(j) - 1; excess > 0 {
			row := x[j]
			for _, c := range partners[j] {
				if slices.Max(pairs[c]) > slices.Max(row) {
					row = pairs[c]
				}
			}
			row[slices.Index(row, slices.Max(row))] -= excess
		}
	}
	// Engines meet rows only within their tolerance, which after CLP's
	// scaling can leave a type over capacity by ~1e-6 relative. Shrinking
	// that column keeps the result feasible at a negligible cost.
	for k, n := range p.capacity {
		var used float64
		for j := range x {
			used += float64(p.Count(j)*p.gpus[j]) * x[j][k]
		}
		for c, pr := range p.pairs {
			used += float64(p.gpus[pr.A]) * pairs[c][k]
		}
		if used > n {
			f := n / used
			for j := range x {
				x[j][k] *= f
			}
			for c := range pairs {
				pairs[c][k] *= f
			}
		}
	}
	return x, pairs
}

// ShareQuantum is the grid Program.Allocation rounds shares to.
const ShareQuantum = 1e-8

// Allocation turns a result of this program into an Allocation keyed by ids
// (one per job, in program order). Every job gets a Grant, with its GPU
// count, even if it gets no time; pair shares appear in both members'
// Grant.Pairs. A Result built by hand needs only X; nil Pairs means none.
//
// Shares below Tolerance (1e-6), alone or in a pair, are left out: they are
// solver noise, not decisions (a share of 1e-6 is a third of a millisecond
// of a six-minute round), and a binder or round mechanism would otherwise
// treat such a job as wanting to run on that type. This is the one place
// where every LP policy's X becomes shares, so all of them drop the same
// way; a job left with no share keeps its Grant and GPU count. The shares
// kept are rounded to the nearest multiple of ShareQuantum (1e-8), above
// the engines' noise and the 1e-9 slack of MaximizeMin's tie-break stage
// (CLP gives 0.499999999 and 0.500000001 where the pure-Go engine gives 0.5
// twice): two engines that find the same optimum then give equal shares bit
// for bit, so that the round mechanism, which breaks ties by share, decides
// the same whichever engine solved the program. Rounding moves a type's
// load by at most 5e-9 GPUs per job, inside Tolerance. It never lifts a
// job's time above 1: where the rounded shares of a job that runs all the
// time (three of about 1/3, say) would sum to more than 1/ShareQuantum
// quanta, the excess comes off the job's largest share.
func (p *Program) Allocation(ids []string, r *Result) Allocation {
	q := p.quanta(r)
	a := make(Allocation, len(ids))
	shares := func(row []float64) map[Accelerator]float64 {
		var m map[Accelerator]float64
		for k, t := range p.types {
			if row[k] > 0 {
				if m == nil {
					m = make(map[Accelerator]float64)
				}
				m[t] = row[k] * ShareQuantum
			}
		}
		return m
	}
	for j, id := range ids {
		a[id] = Grant{GPUs: p.gpus[j], Shares: shares(q.x[j])}
	}
	for c, pr := range p.pairs {
		if c >= len(q.pairs) {
			break
		}
		m := shares(q.pairs[c])
		if m == nil {
			continue
		}
		for _, e := range [][2]int{{pr.A, pr.B}, {pr.B, pr.A}} {
			g := a[ids[e[0]]]
			if g.Pairs == nil {
				g.Pairs = make(map[string]map[Accelerator]float64)
			}
			g.Pairs[ids[e[1]]] = m
			a[ids[e[0]]] = g
		}
	}
	return a
}

// quantized holds a result's kept shares in quanta of ShareQuantum: x per
// job and type, pairs per pair and type. Quanta are whole numbers held as
// float64, exact far beyond a round's 10⁸.
type quantized struct{ x, pairs [][]float64 }

// quanta rounds r's shares to whole quanta, zero below Tolerance, and takes
// any excess over a whole round off each job's largest share, alone or in a
// pair (the first in type order, then pair order, among equals). A kept
// share is at least 100 quanta and the excess at most half a quantum per
// share, so the largest always covers it.
func (p *Program) quanta(r *Result) quantized {
	round := func(rows [][]float64, n int) [][]float64 {
		out := make([][]float64, n)
		for i := range out {
			out[i] = make([]float64, len(p.types))
			for k := range out[i] {
				if i < len(rows) && k < len(rows[i]) && rows[i][k] >= Tolerance {
					out[i][k] = math.Round(rows[i][k] / ShareQuantum)
				}
			}
		}
		return out
	}
	q := quantized{x: round(r.X, len(r.X)), pairs: round(r.Pairs, min(len(r.Pairs), len(p.pairs)))}
	const whole = 1 / ShareQuantum
	for j := range q.x {
		total, largest := 0.0, (*float64)(nil)
		visit := func(row []float64) {
			for k := range row {
				total += row[k]
				if largest == nil || row[k] > *largest {
					largest = &row[k]
				}
			}
		}
		visit(q.x[j])
		if j < len(p.partners) {
			for _, c := range p.partners[j] {
				if c < len(q.pairs) {
					visit(q.pairs[c])
				}
			}
		}
		if total > whole {
			*largest -= total - whole
		}
	}
	return q
}

// MarshalText encodes the solver by name, so configurations can say
// "solver": "clp".
func (s Solver) MarshalText() ([]byte, error) {
	if s < Auto || s > PureGo {
		return nil, fmt.Errorf("%w: unknown solver %d", ErrNoSolver, int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes "auto", "clp" or "purego"; empty means Auto.
func (s *Solver) UnmarshalText(b []byte) error {
	for _, c := range []Solver{Auto, CLP, PureGo} {
		if string(b) == c.String() {
			*s = c
			return nil
		}
	}
	if len(b) == 0 {
		*s = Auto
		return nil
	}
	return fmt.Errorf("%w: unknown solver %q (want auto, clp or purego)", ErrNoSolver, b)
}

// Solvers returns the engines compiled into this build, Auto excluded.
func Solvers() []Solver {
	if lp.HasCLP {
		return []Solver{CLP, PureGo}
	}
	return []Solver{PureGo}
}

// GPUs returns the number of GPUs job j needs at once.
func (p *Program) GPUs(j int) int { return p.gpus[j] }

// Count returns the number of jobs row j stands for: count[j] for a
// program from NewClasses, else 1.
func (p *Program) Count(j int) int {
	if p.count == nil {
		return 1
	}
	return p.count[j]
}

// Reach returns, for each expression, a bound no allocation lifts it
// above, whatever capacity allows. For e = c + Σ_jk a_jk·x_jk over jobs'
// own shares it is what e takes when each of its jobs runs a whole round
// on the type that adds most,
//
//	reach(e) = c + Σ_j max(0, max_k a_jk);
//
// shares in pairs can only make it larger than what e can take.
func (p *Program) Reach(exprs []Expr) []float64 { return p.upperBounds(exprs) }

// upperBounds returns, for each expression, a bound that holds for every
// feasible X: job j's variables sum to at most 1, so they add at most their
// largest positive coefficient to an expression. Their minimum bounds t.
// Bounding t this way lets CLP's dual
// simplex start from a bounded basis (internal/lp's BenchmarkMaxMin compares
// t=free with t=bounded).
func (p *Program) upperBounds(exprs []Expr) []float64 {
	nv := p.prob.NumVars()
	owner := make([]int, nv)
	for j, row := range p.x {
		for _, v := range row {
			if v >= 0 {
				owner[v] = j
			}
		}
	}
	coef := make([]float64, nv)       // per variable, summed over repeated terms
	best := make([]float64, len(p.x)) // per job, the largest positive coef
	var vars, jobs []int
	ub := make([]float64, len(exprs))
	for i, e := range exprs {
		vars, jobs = vars[:0], jobs[:0]
		for _, t := range e.terms {
			if coef[t.Var] == 0 {
				vars = append(vars, t.Var)
			}
			coef[t.Var] += t.Coef
		}
		for _, v := range vars {
			j := owner[v]
			if c := coef[v]; c > best[j] {
				if best[j] == 0 {
					jobs = append(jobs, j)
				}
				best[j] = c
			}
			coef[v] = 0
		}
		b := e.constant
		for _, j := range jobs {
			b += best[j]
			best[j] = 0
		}
		ub[i] = b
	}
	return ub
}

// Constant returns the expression c.
func Constant(c float64) Expr { return Expr{constant: c} }
