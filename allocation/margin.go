package allocation

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"

	"github.com/dlsched/dlsched/internal/lp"
)

// Margin's effort: the LPs it solves before it leaves the second stage to
// the whole LP, and the share of the jobs it may hold in them.
const (
	marginRounds = 8
	marginShare  = 4 // at most 1/marginShare of the jobs
	// marginFew is the fewest jobs margin's first LP holds. From the last
	// round's prices, after one arrival, BenchmarkWarm's 2048 jobs took
	// LPs of 12, 225 and 891 jobs (and the whole LP after that) starting
	// from 12, and one or two LPs of 32 or 33 starting from 32.
	marginFew = 32
)

// margin solves the second stage, prob, over the jobs at the margin at
// prices start, and returns prob's optimal X (t at the floor) and the
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
// for prob. Where the fixed plans overfill a type, the LP is infeasible
// and the next jobs nearest a tie join it.
//
// The whole LP holds every job: on BenchmarkLAS's 2048 jobs CLP took
// about 26 ms for it, most of it the fixed cost of its 4,000 rows.
func (p *Program) margin(ctx context.Context, eng lp.Engine, prob *lp.Problem, s *pricedTieBreak, start []float64, t int) ([]float64, []float64, error) {
	g := s.g
	n := len(g.a)
	plans := make([]vertex, n)
	gap := make([]float64, n) // how far each job's best plan leads its next
	for j := range n {
		v, most, next, ok := g.best(s.d, start, j, s.floor)
		if !ok {
			return nil, nil, nil
		}
		plans[j], gap[j] = v, most-next
	}
	tol := priceTolerance * max(1, s.largest())
	in, joined := nearTie(gap, tol)
	for range marginRounds {
		if joined > n/marginShare && !p.marginAll {
			return nil, nil, nil
		}
		p.trace.add(traceLPs, 1)
		x, sub, capacity, back := p.restrictJobs(prob, s, plans, in, t)
		sol, err := eng.Solve(ctx, sub)
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
		lambda := make([]float64, len(capacity))
		for k, r := range capacity {
			lambda[k] = max(sol.Duals[r], 0)
		}
		priced := 0
		for j := range n {
			if in[j] {
				continue
			}
			_, most, _, _ := g.best(s.d, lambda, j, s.floor)
			if most-g.gain(s.d, lambda, j, plans[j]) > tol {
				in[j] = true
				joined++
				priced++
			}
		}
		p.trace.add(tracePriced, priced)
		if priced == 0 {
			p.trace.add(traceSolved, 1)
			for i, v := range back {
				x[v] = sol.X[i]
			}
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

// restrictJobs returns the second stage, prob, with every job not in at
// its plan and t at the floor: x holds those values over prob's
// variables, sub is the LP over the rest, capacity is each type's capacity
// row in sub, and back is the variable of prob each of sub's is. A row
// with nothing left to choose is dropped (the plans keep their own time
// and floor rows), save capacity rows, whose duals margin needs.
func (p *Program) restrictJobs(prob *lp.Problem, s *pricedTieBreak, plans []vertex, in []bool, t int) (x []float64, sub *lp.Problem, capacity, back []int) {
	x = make([]float64, prob.NumVars())
	x[t] = s.floor
	index := make([]int, prob.NumVars())
	for v := range index {
		index[v] = -1
	}
	sub = &lp.Problem{Sense: prob.Sense}
	for j, row := range p.x {
		if !in[j] {
			x[row[plans[j].k]] = plans[j].xk
			if plans[j].l >= 0 {
				x[row[plans[j].l]] = plans[j].xl
			}
			continue
		}
		for _, v := range row {
			if v >= 0 {
				index[v] = sub.AddVar(prob.Var(v))
				back = append(back, v)
			}
		}
	}
	capacity = make([]int, len(p.types))
	terms := make([]lp.Term, 0, 16)
	for i := range prob.NumRows() {
		lower, upper, row := prob.Row(i)
		terms = terms[:0]
		fixed := 0.0
		for _, tm := range row {
			if v := index[tm.Var]; v >= 0 {
				terms = append(terms, lp.Term{Var: v, Coef: tm.Coef})
			} else {
				fixed += tm.Coef * x[tm.Var]
			}
		}
		isCapacity := i < len(p.rows) && p.rows[i].kind == 0 && p.rows[i].s.kind == slotCapacity
		if len(terms) == 0 && !isCapacity {
			continue
		}
		r := sub.AddRow(lower-fixed, upper-fixed, terms...)
		if isCapacity {
			capacity[p.rows[i].s.n] = r
		}
	}
	return x, sub, capacity, back
}

// marginTrace counts, for tests, what margin did: see the trace constants.
// Its add does nothing on a nil trace.
type marginTrace [4]int

// What a marginTrace counts: the second stages margin solved, the LPs it
// solved for them, those that were infeasible, and the jobs its prices
// brought in.
const (
	traceSolved = iota
	traceLPs
	traceInfeasible
	tracePriced
)

func (m *marginTrace) add(event, n int) {
	if m != nil {
		m[event] += n
	}
}
