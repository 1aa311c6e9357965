// Package market divides resources fairly through prices: the linear Fisher
// market equilibrium (Eisenberg–Gale program), the multi-round volatile
// market of Shockwave (Zheng et al., NSDI'23), and the partial-allocation
// mechanism used by Themis (Mahajan et al., NSDI'20).
//
// # Fisher markets
//
// Fisher is a linear Fisher market: buyer i has budget Bᵢ and utility
// uᵢ = Σⱼ Uᵢⱼ·xᵢⱼ, good j has supply Sⱼ. Its equilibrium (Solve) is the
// optimum of the Eisenberg–Gale program
//
//	maximize Σᵢ Bᵢ·log uᵢ  subject to  Σᵢ xᵢⱼ ≤ Sⱼ, x ≥ 0,
//
// and the prices pⱼ are the duals of the supply constraints. Equivalently
// (Check), every good with a positive price is sold out, every buyer spends
// exactly Bᵢ, and buys only goods of maximum bang-per-buck Uᵢⱼ/pⱼ. Prices
// and utilities are unique; the allocation need not be, and Solve picks one
// by a fixed rule. A good nobody values is discarded with price 0.
//
// Solve runs proportional-response dynamics (bᵢⱼ ← Bᵢ·Uᵢⱼ·xᵢⱼ/uᵢ,
// pⱼ = Σᵢ bᵢⱼ) and then finishes exactly: it guesses the equality graph from
// the approximate prices, fixes prices on a spanning forest (each component
// scaled so that its prices pay for its budgets), and repairs them
// combinatorially, raising the prices of an over-demanded set or lowering
// those of an under-demanded one found by a maximum flow from budgets to
// goods over the equality edges, until that flow saturates; the flow is the
// spending. The result is verified with Check at 10⁻¹⁰ before it is
// returned. A set that balances to rounding (its repair factor within
// 10⁻¹² of 1) is accepted as it is, so that thousands of small budgets do
// not defeat the per-buyer tolerance. Should no exact point be found after
// 100 000 iterations, Solve returns the dynamics' last point, a feasible
// approximate equilibrium whose Gap, the Eisenberg–Gale duality gap, is
// positive: it never fails a solvable market.
//
// # Partial allocation
//
// PartialAllocation is the mechanism of Cole, Gkatzelis and Goel with which
// Themis auctions GPUs: with equal budgets it computes the proportional-fair
// allocation A* = argmax Πᵢ Vᵢ(A), and lets buyer i keep only the fraction
//
//	cᵢ = Π_{k≠i} V_k(A*) / Π_{k≠i} V_k(A*₋ᵢ)
//
// of its bundle, where A*₋ᵢ is the proportional-fair allocation without i.
// The withheld share (Leftover) is the hidden payment that makes truthful
// bidding a dominant strategy; Themis hands it to other jobs.
//
// # Volatile markets
//
// Volatile is Shockwave's market over time: the goods are the GPU-rounds of
// a planning window, a buyer holds its whole gang in each round it buys, its
// utility is a piecewise-linear log of its progress at the window's end, and
// a regulariser weighs the largest work left after the window. Every term
// depends only on how many rounds each buyer gets, so Solve finds the
// optimum by an exact search instead of the paper's mixed-integer program:
// exact for single-GPU buyers (checked against every schedule of small
// markets), and within a reported fractional bound for gangs. See Volatile.
package market
