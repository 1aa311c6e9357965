package allocation

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/dlsched/dlsched/internal/lp"
)

// Margin's effort (and marginLevel's): the LPs it solves before it leaves
// a stage to the whole LP, and the share of the jobs it may hold in them.
const (
	marginRounds = 16
	marginShare  = 4 // at most 1/marginShare of the jobs
	// marginFew is the fewest jobs a first LP holds, and the most the
	// prices bring in at a round (see enter). At 2048 jobs, 12 and 32 took
	// the same time within the noise (gavel's BenchmarkLAS,
	// BenchmarkLASEqualWeights and BenchmarkWarm's /parts, run in turn);
	// TestMarginFewJobs holds the LPs to 64 jobs.
	marginFew = 32
)

// margin solves the second stage, m, over the jobs at the margin at
// prices start, and returns m's optimal X (t at the floor) and the
// prices it ended at; nil with no error where it gives the stage to the
// whole LP. Any prices do; the nearer the optimum's, the fewer the jobs and
// the LPs.
//
// At the prices λ* that minimize D, every job whose best plan beats its
// others takes that plan in every optimum; only the jobs near a tie split
// between plans, to fill the priced types exactly. So margin fixes every
// other job at its best plan and solves the LP of the jobs near a tie
// over what capacity the fixed ones leave. That LP's capacity duals λ'
// then price each fixed job: one whose plan no longer earns the most at λ'
// joins the LP, which is solved again. When none does, the fixed plans
// are each optimal for their job at λ', the LP's shares for the rest, and
// λ' is complementary to capacity, so by LP duality the whole is optimal
// for m. Where the fixed plans overfill a type, the LP is infeasible
// and the next jobs nearest a tie join it.
//
// The whole LP holds every job: gavel's BenchmarkLAS at 2048 jobs solved
// in 56.3 ms with it (docs/performance.md at commit 6c76ef9), 6.39 ms
// without (at 3bec50c).
func (p *Program) margin(ctx context.Context, eng lp.Engine, m *maxMinLP, s *pricedTieBreak, start []float64) ([]float64, []float64, error) {
	g := s.g
	n := len(g.a)
	plans := make([]vertex, n)
	gap := make([]float64, n) // how far each job's best plan leads its next
	for j := range n {
		v, most, next, ok := g.best(s.d, start, j, g.need(j, s.floor))
		if !ok {
			return nil, nil, nil
		}
		plans[j], gap[j] = v, most-next
	}
	tol := priceTolerance * max(1, s.largest())
	in, joined := nearTie(gap, tol)
	x := s.fixed(m, plans) // the LP's shares replace those of jobs in it
	for range marginRounds {
		if joined > n/marginShare && !p.marginAll {
			return nil, nil, nil
		}
		p.trace.add(traceLPs, 1)
		p.trace.hold(joined)
		r := g.restrict(m, in, x, nil, false)
		sol, err := eng.Solve(ctx, r.sub)
		switch {
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case errors.Is(err, lp.ErrInfeasible):
			p.trace.add(traceInfeasible, 1)
			joined = joinNext(in, gap, joined, max(joined, 1))
			continue
		case err != nil:
			return nil, nil, nil
		}
		lambda := r.prices(sol)
		var wrong []candidate
		for j := range n {
			if in[j] {
				continue
			}
			_, most, _, _ := g.best(s.d, lambda, j, g.need(j, s.floor))
			if d := most - g.gain(s.d, lambda, j, plans[j]); d > tol {
				wrong = append(wrong, candidate{j, d})
			}
		}
		priced := enter(in, wrong)
		joined += priced
		p.trace.add(tracePriced, priced)
		if priced == 0 {
			for i, v := range r.back {
				x[v] = sol.X[i]
			}
			if !m.satisfies(x) {
				return nil, nil, nil
			}
			p.trace.add(traceSolved, 1)
			return x, lambda, nil
		}
	}
	return nil, nil, nil
}

// nearTie returns which jobs margin's first LP holds, and how many: those
// whose best plan leads by at most tol, and at least the marginFew whose
// lead is least.
func nearTie(gap []float64, tol float64) ([]bool, int) {
	in := make([]bool, len(gap))
	joined := 0
	var nearest []candidate // the least leads beyond tol, least first
	for j, d := range gap {
		if d <= tol {
			in[j] = true
			joined++
			continue
		}
		if len(nearest) == marginFew && d >= nearest[marginFew-1].d {
			continue
		}
		if len(nearest) < marginFew {
			nearest = append(nearest, candidate{})
		}
		i := len(nearest) - 1
		for ; i > 0 && nearest[i-1].d > d; i-- {
			nearest[i] = nearest[i-1]
		}
		nearest[i] = candidate{j, d}
	}
	for _, c := range nearest[:max(0, min(len(nearest), marginFew-joined))] {
		in[c.v] = true
		joined++
	}
	return in, joined
}

// enter marks as in the jobs of wrong, whose plans are wrong by d, the
// most wrong first and at most marginFew of them, and returns how many.
// On TestMarginFewJobs' equal-weight program, the tie-break's wrong plans
// all at once made an LP of 298 jobs; the 32 most wrong, one of 64 that
// was the optimum's.
func enter(in []bool, wrong []candidate) int {
	if len(wrong) > marginFew {
		slices.SortFunc(wrong, func(x, y candidate) int { return cmp.Or(cmp.Compare(y.d, x.d), cmp.Compare(x.v, y.v)) })
		wrong = wrong[:marginFew]
	}
	for _, c := range wrong {
		in[c.v] = true
	}
	return len(wrong)
}

// joinNext marks the more jobs whose best plan leads least of those not
// yet in as in, and returns how many are in.
func joinNext(in []bool, gap []float64, joined, more int) int {
	var out []candidate
	for j, d := range gap {
		if !in[j] {
			out = append(out, candidate{j, d})
		}
	}
	slices.SortFunc(out, func(x, y candidate) int { return cmp.Or(cmp.Compare(x.d, y.d), cmp.Compare(x.v, y.v)) })
	for _, c := range out[:min(more, len(out))] {
		in[c.v] = true
	}
	return joined + min(more, len(out))
}

// fixed returns the values of m's variables where every job takes its
// plan and t is at the floor.
func (s *pricedTieBreak) fixed(m *maxMinLP, plans []vertex) []float64 {
	p := m.p
	x := make([]float64, m.numVars())
	x[m.t] = s.floor
	for j, v := range plans {
		if v.k >= 0 {
			x[p.x[j][v.k]] = v.xk
		}
		if v.l >= 0 {
			x[p.x[j][v.l]] = v.xl
		}
	}
	return x
}

// largest returns the tie-break's largest coefficient, in magnitude.
func (s *pricedTieBreak) largest() float64 {
	var big float64
	for _, row := range s.d {
		for _, c := range row {
			big = max(big, math.Abs(c))
		}
	}
	return big
}

// restriction is a max-min LP over the jobs in alone: every other job's
// shares are fixed, at c + e·t (e nil: at c), and, if t is a variable of
// sub, t stays free; else it is fixed at c[t] too.
type restriction struct {
	sub      *lp.Problem
	back     []int // per variable of sub: the whole LP's
	capacity []int // per type: its capacity row in sub
	rows     []int // per row of the whole LP: its row in sub, or -1
	t        int   // t's variable in sub, or -1
}

// restrict returns m restricted to the jobs in (see restriction). A row
// with no shares left to choose is dropped, save capacity rows, whose
// duals margin needs: the fixed plans keep their own rows, but for the
// bounds on t that their shares between 0 and 1 ask, which the caller
// checks. In g's shape every other row is one job's, so the rows of the
// jobs not in are dropped unread.
func (g *lagrangian) restrict(m *maxMinLP, in []bool, c, e []float64, tFree bool) restriction {
	p := m.p
	r := restriction{sub: &lp.Problem{Sense: lp.Maximize}, capacity: make([]int, len(p.types)), rows: make([]int, m.numRows()), t: -1}
	index := make([]int, m.numVars())
	for v := range index {
		index[v] = -1
	}
	if tFree {
		r.t = r.sub.AddVar(m.variable(m.t))
		index[m.t] = r.t
		r.back = append(r.back, m.t)
	}
	for j, row := range p.x {
		for _, v := range row {
			if v >= 0 && in[j] {
				index[v] = r.sub.AddVar(m.variable(v))
				r.back = append(r.back, v)
			}
		}
	}
	for i := range r.rows {
		r.rows[i] = -1
	}
	put := restrictRow(&r, index, c, e)
	for i, pl := range p.rows {
		lower, upper, row := p.prob.Row(i)
		if pl.kind == slotTime && !in[pl.j] || pl.kind == 0 && pl.s.kind == slotRow && !in[g.job(row)] {
			continue
		}
		isCapacity := pl.kind == 0 && pl.s.kind == slotCapacity
		r.rows[i] = put(lower, upper, row, lp.Term{}, isCapacity)
		if isCapacity {
			r.capacity[pl.s.n] = r.rows[i]
		}
	}
	minusT := lp.Term{Var: m.t, Coef: -1}
	for i, ex := range m.exprs {
		if in[g.job(ex.terms)] {
			r.rows[m.first+i] = put(-ex.constant, lp.Inf, ex.terms, minusT, false)
		}
	}
	return r
}

// job returns the job whose shares a row of g's shape holds, a floor row
// or an expression: its first term's.
func (g *lagrangian) job(row []lp.Term) int {
	return g.at[row[0].Var] / len(g.capacity)
}

// restrictRow returns what adds a row, lower ≤ Σ row + last ≤ upper, to
// r's LP over the variables index names, the others fixed at c + e·t,
// and returns its row there, or -1 where it is dropped (see restrict).
func restrictRow(r *restriction, index []int, c, e []float64) func(lower, upper float64, row []lp.Term, last lp.Term, keep bool) int {
	terms := make([]lp.Term, 0, 16)
	return func(lower, upper float64, row []lp.Term, last lp.Term, keep bool) int {
		terms = terms[:0]
		shift, onT, free := 0.0, 0.0, false
		add := func(tm lp.Term) {
			switch v := index[tm.Var]; {
			case tm.Coef == 0: // as the whole LP's AddRow drops it
			case v == r.t && v >= 0:
				onT += tm.Coef
			case v >= 0:
				terms = append(terms, lp.Term{Var: v, Coef: tm.Coef})
				free = true
			default:
				shift += tm.Coef * c[tm.Var]
				if e != nil {
					onT += tm.Coef * e[tm.Var]
				}
			}
		}
		for _, tm := range row {
			add(tm)
		}
		if last.Coef != 0 {
			add(last)
		}
		if !free && !keep {
			return -1
		}
		if onT != 0 {
			terms = append(terms, lp.Term{Var: r.t, Coef: onT})
		}
		return r.sub.AddRow(lower-shift, upper-shift, terms...)
	}
}

// prices returns the capacity rows' duals in sol, a solution of r's LP,
// at least 0.
func (r restriction) prices(sol *lp.Solution) []float64 {
	lambda := make([]float64, len(r.capacity))
	for k, row := range r.capacity {
		lambda[k] = max(sol.Duals[row], 0)
	}
	return lambda
}

// marginTrace counts, for tests, what margin and marginLevel did: see the
// trace constants. Its methods do nothing on a nil trace.
type marginTrace [6]int

// What a marginTrace counts: the stages solved over the jobs at the
// margin, the LPs solved for them, those that were infeasible, the jobs
// the prices brought in, the most jobs an LP held, and the max-min LPs
// built whole.
const (
	traceSolved = iota
	traceLPs
	traceInfeasible
	tracePriced
	traceMost
	traceWhole
)

func (m *marginTrace) add(event, n int) {
	if m != nil {
		m[event] += n
	}
}

// hold notes an LP of n jobs.
func (m *marginTrace) hold(n int) {
	if m != nil {
		m[traceMost] = max(m[traceMost], n)
	}
}
