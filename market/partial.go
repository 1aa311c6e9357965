package market

import (
	"context"
	"math"
)

// Partial is the outcome of the partial-allocation mechanism.
type Partial struct {
	// Fair is the proportional-fair allocation A*: the Fisher equilibrium
	// with every budget 1, which maximises Π_i V_i(A).
	Fair Equilibrium
	// Fraction is c_i = Π_{k≠i} V_k(A*) / Π_{k≠i} V_k(A*_{−i}) ∈ [0, 1],
	// where A*_{−i} is the proportional-fair allocation without buyer i.
	Fraction []float64
	// Allocation is c_i·A*_i, what each buyer keeps (buyers × goods).
	Allocation [][]float64
	// Leftover is S_j − Σ_i c_i·A*_ij per good: the hidden payments, which
	// the caller may give to others.
	Leftover []float64
	// Gap is the largest Equilibrium.Gap of the n + 1 markets solved: 0
	// when all are exact.
	Gap float64
}

// PartialAllocation runs the partial-allocation mechanism of Cole,
// Gkatzelis and Goel ("Mechanism design for fair division", EC'13), which
// Themis (Mahajan et al., NSDI'20) uses to auction GPUs, over the buyers'
// linear valuations V_i(A) = Σ_j U_ij A_ij and the supplies. The buyers are
// the rows of Utilities; Budgets are ignored, since every buyer has budget
// 1. It computes the proportional-fair allocation A* (Fair) and, for each
// buyer i, the proportional-fair allocation A*_{−i} of the same goods among
// the others, and lets buyer i keep the fraction
//
//	c_i = Π_{k≠i} V_k(A*) / Π_{k≠i} V_k(A*_{−i})
//
// of its bundle A*_i: the loss its presence imposes on the others, which
// makes truthful reporting a dominant strategy. The products are taken in
// log space; c_i is clamped into [0, 1] against rounding, and with one buyer
// c = 1. A good that no buyer values, in A* or once buyer i is removed, is
// discarded (price 0) in that market. Leftover is clamped at 0 against
// rounding. PartialAllocation solves n + 1 markets and honours ctx.
func (m Fisher) PartialAllocation(ctx context.Context) (Partial, error) {
	if err := m.validate(false); err != nil {
		return Partial{}, err
	}
	n := len(m.Utilities)
	fair := Fisher{Budgets: ones(n), Utilities: m.Utilities, Supplies: m.Supplies}
	eq, err := fair.Solve(ctx)
	if err != nil {
		return Partial{}, err
	}
	out := Partial{Fair: eq, Fraction: make([]float64, n), Allocation: make([][]float64, n), Gap: eq.Gap}
	for i := range n {
		if n == 1 {
			out.Fraction[i] = 1
			break
		}
		others := make([][]float64, 0, n-1)
		others = append(others, m.Utilities[:i]...)
		others = append(others, m.Utilities[i+1:]...)
		sub, err := Fisher{Budgets: ones(n - 1), Utilities: others, Supplies: m.Supplies}.Solve(ctx)
		if err != nil {
			return Partial{}, err
		}
		out.Gap = max(out.Gap, sub.Gap)
		logc := 0.0
		for k, v := range sub.Utilities {
			kk := k
			if k >= i {
				kk++
			}
			logc += math.Log(eq.Utilities[kk]) - math.Log(v)
		}
		out.Fraction[i] = math.Max(0, math.Min(1, math.Exp(logc)))
	}
	g := len(m.Utilities[0])
	out.Leftover = make([]float64, g)
	for j := range g {
		out.Leftover[j] = fair.supply(j)
	}
	for i, row := range eq.Allocation {
		out.Allocation[i] = make([]float64, g)
		for j, x := range row {
			out.Allocation[i][j] = out.Fraction[i] * x
			out.Leftover[j] -= out.Allocation[i][j]
		}
	}
	for j, l := range out.Leftover {
		out.Leftover[j] = math.Max(0, l)
	}
	return out, nil
}

func ones(n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	return b
}
