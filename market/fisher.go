package market

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrInvalid reports a market that cannot be solved as given: no buyers or
// goods, mismatched lengths, a budget, utility or supply that is negative,
// zero where it must be positive, or not finite, or a buyer who values no
// good. The messages name the buyer or good index and the field, e.g.
// "market: buyer 3: budget: -1 is negative"; test with errors.Is.
var ErrInvalid = errors.New("market: invalid market")

// invalidError carries a specific message and matches ErrInvalid.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() error { return ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: "market: " + fmt.Sprintf(format, args...)}
}

// Fisher is a linear Fisher market. Buyer i has budget B_i = Budgets[i] and
// the linear utility
//
//	u_i(x) = Σ_j U_ij x_ij,   U_ij = Utilities[i][j] ≥ 0,
//
// and good j has supply S_j = Supplies[j] > 0 (nil Supplies means S_j = 1
// for every good). Every budget must be positive and every buyer must value
// some good (else ErrInvalid). A good that no buyer values is not an error:
// it is discarded, with price 0, and stays unsold.
type Fisher struct {
	Budgets   []float64   // B_i > 0, one per buyer
	Utilities [][]float64 // U_ij ≥ 0, buyers × goods
	Supplies  []float64   // S_j > 0; nil means 1 for every good
}

// Equilibrium is a market equilibrium, equivalently the optimum of the
// Eisenberg–Gale program
//
//	maximise Σ_i B_i log u_i   s.t.  u_i = Σ_j U_ij x_ij,  Σ_i x_ij ≤ S_j,  x ≥ 0,
//
// whose dual variables on the supply constraints are the prices.
type Equilibrium struct {
	Allocation [][]float64 // x_ij, buyers × goods
	Prices     []float64   // p_j
	Utilities  []float64   // u_i = Σ_j U_ij x_ij
	LogNSW     float64     // Σ_i B_i log u_i
	// Gap is 0 for an exact equilibrium. Otherwise the allocation is
	// feasible, sells every good and spends every budget at Prices, but
	// is approximate, and Gap > 0 is its Eisenberg–Gale duality gap
	//
	//	Σ_i B_i log(α_i B_i / u_i),   α_i = max_j U_ij / p_j,
	//
	// which bounds how far LogNSW is below the optimum: buyer i could buy
	// α_i B_i at the best bang-per-buck, and has u_i.
	Gap float64
}

// supply returns S_j.
func (m Fisher) supply(j int) float64 {
	if m.Supplies == nil {
		return 1
	}
	return m.Supplies[j]
}

// validate checks the market; with budgets false the budgets are ignored and
// the buyers are the rows of Utilities.
func (m Fisher) validate(budgets bool) error {
	n := len(m.Utilities)
	if budgets {
		if len(m.Budgets) == 0 {
			return invalidf("budgets: no buyers")
		}
		if len(m.Utilities) != len(m.Budgets) {
			return invalidf("utilities: %d rows for %d buyers", len(m.Utilities), len(m.Budgets))
		}
	} else if n == 0 {
		return invalidf("utilities: no buyers")
	}
	g := len(m.Utilities[0])
	if g == 0 {
		return invalidf("utilities: no goods")
	}
	if m.Supplies != nil && len(m.Supplies) != g {
		return invalidf("supplies: %d goods, want %d", len(m.Supplies), g)
	}
	for j, s := range m.Supplies {
		if err := positive(s); err != "" {
			return invalidf("good %d: supply: %v %s", j, s, err)
		}
	}
	for i, row := range m.Utilities {
		if budgets {
			if err := positive(m.Budgets[i]); err != "" {
				return invalidf("buyer %d: budget: %v %s", i, m.Budgets[i], err)
			}
		}
		if len(row) != g {
			return invalidf("buyer %d: utilities: %d goods, want %d", i, len(row), g)
		}
		some := false
		for j, u := range row {
			switch {
			case math.IsNaN(u) || math.IsInf(u, 0):
				return invalidf("buyer %d: good %d: utility: %v is not finite", i, j, u)
			case u < 0:
				return invalidf("buyer %d: good %d: utility: %v is negative", i, j, u)
			case u > 0:
				some = true
			}
		}
		if !some {
			return invalidf("buyer %d: utilities: values no good", i)
		}
	}
	return nil
}

// positive describes why v is not a positive finite number, or returns "".
func positive(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "is not finite"
	case v < 0:
		return "is negative"
	case v == 0:
		return "is not positive"
	}
	return ""
}

// Solve returns the market equilibrium. Prices and utilities are unique; the
// allocation need not be, and Solve returns the one described in SolveFrom.
// An exact result (Gap 0) passes Check at 1e-10 (it is verified before being
// returned; rounding is typically about 1e-13); for the rare market where
// no exact point is found, see Gap and SolveFrom. Solve honours
// ctx: when it is done, Solve returns an error wrapping ctx.Err(). It is
// deterministic.
func (m Fisher) Solve(ctx context.Context) (Equilibrium, error) {
	return m.SolveFrom(ctx, nil)
}

// SolveFrom is Solve starting proportional-response dynamics from the given
// bids b_ij (buyers × goods), which must be finite and non-negative with a
// positive sum in every row. Rows are rescaled to sum to B_i and mixed with
// a weight of 1e-6 of the default start, since a zero bid on a good never
// recovers under proportional response. nil bids mean the default start,
// b_ij ∝ U_ij S_j.
//
// # Method
//
// The dynamics b_ij ← B_i U_ij x_ij / u_i, with prices p_j = Σ_i b_ij and
// x_ij = b_ij S_j / p_j, converge to the equilibrium. After 100 iterations,
// and then at iterations growing by half, an exact finishing step is tried.
// It guesses the equality graph: the pairs (i, j) whose bang-per-buck
// U_ij/p_j is within δ (1e-2, then 1e-3, 1e-4, 1e-6, 1e-8) of buyer i's
// best. A spanning forest of the guess, preferring the largest bids, fixes
// prices exactly: along an edge p_j = U_ij/α_i, and in each component the
// scale makes Σ_j p_j S_j equal the component's Σ_i B_i. The prices are then
// repaired combinatorially. At prices p the exact maximum-bang-per-buck
// edges (within 1e-11 relative) carry a maximum flow from the buyers
// (capacity B_i) to the goods (capacity p_j S_j). If it saturates every
// buyer and good (to 1e-11 relative plus 1e-15 of ΣB), the flow is the
// spending. If some budget is unspent, the buyers and goods reachable from
// the source in the residual network have more money than their goods
// cost, and those prices rise by a common factor until the set balances or
// one of its buyers gains a new equality edge; if some good is unsold, the
// set that reaches the sink is lowered symmetrically (at most n+g+16
// rounds). The spending is finally rescaled to the budgets and prices
// (three row/column sweeps) and accepted only if it passes Check at 1e-10;
// otherwise the dynamics continue. After 100 000 iterations, which happens
// only for markets whose budgets or prices span close to the float64
// precision (beyond about 1e12), SolveFrom returns the dynamics' last
// point, an approximate equilibrium with a positive Gap, and no error.
//
// The allocation returned is the maximum flow found by Dinic's algorithm
// with buyers and goods in index order on the exact equality graph. It
// depends only on the market, not on the starting bids, but it is not
// canonical among the equilibrium allocations when that graph has a cycle:
// for U = [[1, 1], [1, 1]] buyer 0 gets good 0 and buyer 1 good 1.
func (m Fisher) SolveFrom(ctx context.Context, bids [][]float64) (Equilibrium, error) {
	if err := m.validate(true); err != nil {
		return Equilibrium{}, err
	}
	um := m.unit()
	var start [][]float64
	if bids != nil {
		var err error
		if start, err = um.startFrom(bids); err != nil {
			return Equilibrium{}, err
		}
	}
	return m.settle(ctx, um, start, func(spend [][]float64, price []float64) bool {
		return m.Check(m.fromUnit(um, spend, price), 1e-10) == nil
	})
}

// settle runs the solver with the acceptance test of an exact point.
func (m Fisher) settle(ctx context.Context, um *unitMarket, start [][]float64, accept func([][]float64, []float64) bool) (Equilibrium, error) {
	spend, price, err := um.solve(ctx, start, accept)
	approximate := errors.Is(err, errApproximate)
	if err != nil && !approximate {
		return Equilibrium{}, err
	}
	e := m.fromUnit(um, spend, price)
	if approximate {
		e.Gap = m.gap(e)
	}
	return e, nil
}

// gap returns the Eisenberg–Gale duality gap of e (see Equilibrium.Gap),
// at least the smallest positive float64 so that it marks e approximate.
func (m Fisher) gap(e Equilibrium) float64 {
	gap := 0.0
	for i, row := range m.Utilities {
		alpha := 0.0
		for j, u := range row {
			if e.Prices[j] > 0 {
				alpha = math.Max(alpha, u/e.Prices[j])
			}
		}
		gap += m.Budgets[i] * (math.Log(alpha) + math.Log(m.Budgets[i]) - math.Log(e.Utilities[i]))
	}
	// Underflowed utilities would make it +Inf, rounding 0 or less.
	return min(max(gap, math.SmallestNonzeroFloat64), math.MaxFloat64)
}

// unitMarket is the market normalised to unit supplies (U'_ij = U_ij S_j,
// then each row scaled to maximum 1) and total budget 1. Prices p'_j =
// p_j S_j / ΣB; spending f_ij = p_j x_ij / ΣB.
type unitMarket struct {
	n, g    int
	budget  []float64   // B_i / ΣB
	u       [][]float64 // normalised utilities
	valued  []bool      // good j is valued by some buyer
	total   float64     // ΣB
	support [][]int     // goods buyer i values, in index order
}

func (m Fisher) unit() *unitMarket {
	n, g := len(m.Utilities), len(m.Utilities[0])
	um := &unitMarket{n: n, g: g, budget: make([]float64, n), u: make([][]float64, n),
		valued: make([]bool, g), support: make([][]int, n)}
	for _, b := range m.Budgets {
		um.total += b
	}
	for i, row := range m.Utilities {
		um.budget[i] = m.Budgets[i] / um.total
		r := make([]float64, g)
		mx := 0.0
		for j, v := range row {
			// Scale by the row maximum first so that U_ij·S_j cannot overflow.
			r[j] = v
			mx = math.Max(mx, v)
		}
		mx2 := 0.0
		for j := range r {
			r[j] = r[j] / mx * m.supply(j)
			mx2 = math.Max(mx2, r[j])
		}
		for j := range r {
			r[j] /= mx2
			if r[j] > 0 {
				um.valued[j] = true
				um.support[i] = append(um.support[i], j)
			}
		}
		um.u[i] = r
	}
	return um
}

// defaultStart returns bids proportional to the normalised utilities.
func (um *unitMarket) defaultStart() [][]float64 {
	b := make([][]float64, um.n)
	for i, row := range um.u {
		b[i] = make([]float64, um.g)
		s := 0.0
		for _, v := range row {
			s += v
		}
		for j, v := range row {
			b[i][j] = um.budget[i] * v / s
		}
	}
	return b
}

// startFrom validates caller bids and turns them into a start.
func (um *unitMarket) startFrom(bids [][]float64) ([][]float64, error) {
	if len(bids) != um.n {
		return nil, invalidf("bids: %d rows for %d buyers", len(bids), um.n)
	}
	const mix = 1e-6
	def := um.defaultStart()
	b := make([][]float64, um.n)
	for i, row := range bids {
		if len(row) != um.g {
			return nil, invalidf("buyer %d: bids: %d goods, want %d", i, len(row), um.g)
		}
		s := 0.0
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, invalidf("buyer %d: good %d: bid: %v is not finite", i, j, v)
			}
			if v < 0 {
				return nil, invalidf("buyer %d: good %d: bid: %v is negative", i, j, v)
			}
			if um.u[i][j] > 0 {
				s += v
			}
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, invalidf("buyer %d: bids: no positive bid on a valued good", i)
		}
		b[i] = make([]float64, um.g)
		for j, v := range row {
			if um.u[i][j] > 0 {
				b[i][j] = (1-mix)*um.budget[i]*(v/s) + mix*def[i][j]
			}
		}
	}
	return b, nil
}

// fromUnit converts unit-market spending and prices to an Equilibrium.
func (m Fisher) fromUnit(um *unitMarket, spend [][]float64, price []float64) Equilibrium {
	e := Equilibrium{
		Allocation: make([][]float64, um.n),
		Prices:     make([]float64, um.g),
		Utilities:  make([]float64, um.n),
	}
	for j := range e.Prices {
		e.Prices[j] = price[j] * um.total / m.supply(j)
	}
	for i := range e.Allocation {
		row := make([]float64, um.g)
		u := 0.0
		for j := range row {
			if price[j] > 0 && spend[i][j] > 0 {
				row[j] = spend[i][j] / price[j] * m.supply(j)
				u += m.Utilities[i][j] * row[j]
			}
		}
		e.Allocation[i] = row
		e.Utilities[i] = u
		e.LogNSW += m.Budgets[i] * math.Log(u)
	}
	return e
}

const maxIterations = 100000

// solve runs proportional response with exact finishing steps. accept
// verifies a candidate in the caller's units.
func (um *unitMarket) solve(ctx context.Context, start [][]float64, accept func([][]float64, []float64) bool) ([][]float64, []float64, error) {
	b := start
	if b == nil {
		b = um.defaultStart()
	}
	price := make([]float64, um.g)
	util := make([]float64, um.n)
	deltas := []float64{1e-2, 1e-3, 1e-4, 1e-6, 1e-8}
	next := 100
	for it := 0; it <= maxIterations; it++ {
		if it%32 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("market: solve: %w", err)
			}
		}
		um.prices(b, price)
		if it == next {
			next = next + next/2 + 8
			for _, d := range deltas {
				if err := ctx.Err(); err != nil {
					return nil, nil, fmt.Errorf("market: solve: %w", err)
				}
				spend, p, ok := um.finish(b, price, d)
				if ok && accept(spend, p) {
					return spend, p, nil
				}
			}
		}
		// Proportional response: x_ij = b_ij/p_j, u_i = Σ_j U_ij x_ij,
		// b_ij ← B_i U_ij x_ij / u_i.
		for i, row := range b {
			u := 0.0
			for _, j := range um.support[i] {
				u += um.u[i][j] * row[j] / price[j]
			}
			util[i] = u
			if !(u > 0) {
				// Underflow only; restart this buyer from its default bids.
				s := 0.0
				for _, j := range um.support[i] {
					s += um.u[i][j]
				}
				for _, j := range um.support[i] {
					row[j] = um.budget[i] * um.u[i][j] / s
				}
				continue
			}
			for _, j := range um.support[i] {
				row[j] = um.budget[i] * um.u[i][j] * (row[j] / price[j]) / u
			}
		}
	}
	// No exact point: the dynamics' last bids are a feasible spending at
	// their own prices, and the best point the dynamics reached.
	um.prices(b, price)
	return b, price, errApproximate
}

// errApproximate marks solve's approximate result.
var errApproximate = errors.New("market: approximate equilibrium")

// prices sets p_j = Σ_i b_ij.
func (um *unitMarket) prices(b [][]float64, p []float64) {
	for j := range p {
		p[j] = 0
	}
	for _, row := range b {
		for j, v := range row {
			p[j] += v
		}
	}
}

type edge struct {
	i, j int
	bid  float64
}

// finish tries the exact finishing step from bids b and their prices p with
// the equality-graph tolerance delta. It returns spending f_ij and prices in
// unit-market terms.
func (um *unitMarket) finish(b [][]float64, p []float64, delta float64) ([][]float64, []float64, bool) {
	cand, ok := um.candidates(b, p, delta)
	if !ok {
		return nil, nil, false
	}
	price, ok := um.forestPrices(um.forest(cand), p)
	if !ok {
		return nil, nil, false
	}
	return um.repair(price)
}

// candidates guesses the equality graph: each buyer's goods within delta of
// its best bang-per-buck at prices p, weighted by its bids b. It fails if a
// valued good is unpriced or on no edge, for then no forest can price it.
func (um *unitMarket) candidates(b [][]float64, p []float64, delta float64) ([]edge, bool) {
	var cand []edge
	covered := make([]bool, um.g)
	for i := range um.n {
		best := 0.0
		for _, j := range um.support[i] {
			if !(p[j] > 0) {
				return nil, false
			}
			best = math.Max(best, um.u[i][j]/p[j])
		}
		for _, j := range um.support[i] {
			if um.u[i][j]/p[j] >= best*(1-delta) {
				cand = append(cand, edge{i, j, b[i][j]})
				covered[j] = true
			}
		}
	}
	for j := range um.g {
		if um.valued[j] && !covered[j] {
			return nil, false
		}
	}
	return cand, true
}

// forest returns the adjacency, by node (buyers 0..n-1, goods n..n+g-1),
// of a maximum spanning forest of cand by bid (Kruskal; ties by index
// order): the largest bids are the edges the dynamics trust most.
func (um *unitMarket) forest(cand []edge) [][]edge {
	n, g := um.n, um.g
	sort.SliceStable(cand, func(a, c int) bool { return cand[a].bid > cand[c].bid })
	parent := make([]int, n+g) // buyers 0..n-1, goods n..n+g-1
	for k := range parent {
		parent[k] = k
	}
	find := func(k int) int {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	adj := make([][]edge, n+g)
	for _, e := range cand {
		a, c := find(e.i), find(n+e.j)
		if a == c {
			continue
		}
		parent[a] = c
		adj[e.i] = append(adj[e.i], e)
		adj[n+e.j] = append(adj[n+e.j], e)
	}
	return adj
}

// forestPrices fixes prices exactly on the forest adj: in each component,
// rooted at a valued good priced p, p_j = U_ij/α_i along its edges, then
// scaled so that the component's prices sum to its budgets. It fails on a
// component whose prices cannot be scaled.
func (um *unitMarket) forestPrices(adj [][]edge, p []float64) ([]float64, bool) {
	n, g := um.n, um.g
	price := make([]float64, g)
	alpha := make([]float64, n)
	seen := make([]bool, n+g)
	for root := n; root < n+g; root++ {
		if seen[root] || !um.valued[root-n] {
			continue
		}
		price[root-n] = p[root-n]
		seen[root] = true
		buyers, goods := um.spread(adj, root, price, alpha, seen)
		var bs, ps float64
		for _, i := range buyers {
			bs += um.budget[i]
		}
		for _, j := range goods {
			ps += price[j]
		}
		if len(buyers) == 0 || !(ps > 0) || math.IsInf(ps, 0) {
			return nil, false
		}
		for _, j := range goods {
			price[j] *= bs / ps
		}
	}
	return price, true
}

// spread propagates prices breadth-first from root, whose price is set,
// along the forest adj: p_j = U_ij/α_i, α_i = U_ij/p_j. It marks the nodes
// it reaches in seen and returns the component's buyers and goods.
func (um *unitMarket) spread(adj [][]edge, root int, price, alpha []float64, seen []bool) (buyers, goods []int) {
	n := um.n
	queue := []int{root}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if v >= n {
			goods = append(goods, v-n)
		} else {
			buyers = append(buyers, v)
		}
		for _, e := range adj[v] {
			w := e.i
			if v < n {
				w = n + e.j
			}
			if seen[w] {
				continue
			}
			seen[w] = true
			if w < n {
				alpha[e.i] = um.u[e.i][e.j] / price[e.j]
			} else {
				price[e.j] = um.u[e.i][e.j] / alpha[e.i]
			}
			queue = append(queue, w)
		}
	}
	return buyers, goods
}

// eqTol is the relative tolerance of an exact equality edge and of a
// saturated buyer or good in the flow.
const eqTol = 1e-11

// slack is the residual capacity below which an edge of capacity c counts
// as saturated: eqTol relative plus 1e-15 absolute, a few roundings of the
// total budget, which is 1 in the unit market.
func slack(c float64) float64 { return eqTol*c + 1e-15 }

// balanced is how far from 1 the repair factor of a set may be for the set
// to count as balanced: its budgets and prices agree to rounding.
const balanced = 1e-12

// balance removes the rounding left by the flow: it alternately scales the
// columns of spend to the prices and the rows to the budgets, rows last.
func balance(spend [][]float64, budget, price []float64) {
	col := make([]float64, len(price))
	for range 3 {
		for j := range col {
			col[j] = 0
		}
		for _, row := range spend {
			for j, v := range row {
				col[j] += v
			}
		}
		for _, row := range spend {
			for j := range row {
				if col[j] > 0 {
					row[j] *= price[j] / col[j]
				}
			}
		}
		for i, row := range spend {
			s := 0.0
			for _, v := range row {
				s += v
			}
			if s > 0 {
				for j := range row {
					row[j] *= budget[i] / s
				}
			}
		}
	}
}

// repair starts from prices that are exact on some forest and corrects them
// combinatorially. At the prices p it takes the exact equality graph and a
// maximum flow from the buyers (capacity B_i) through it to the goods
// (capacity p_j). If the flow saturates everything, p is the equilibrium
// and the flow the spending. Otherwise, if some budget is unspent, the set
// R reachable from the source in the residual network is a set of buyers
// and all their equality goods whose budgets exceed the goods' prices; the
// prices of R's goods are raised by a common factor until R balances or one
// of its buyers gains an equality edge out of R. If instead some good is
// unsold, the set T that reaches the sink is symmetric and its prices are
// lowered. The loop runs at most n+g+16 times.
func (um *unitMarket) repair(price []float64) ([][]float64, []float64, bool) {
	n, g := um.n, um.g
	// Made once: every round rewrites them.
	buyerEdge := make([]int, n)
	goodEdge := make([]int, g)
	inSet := make([]bool, n+g+2)
	var mids []mid
	for round := 0; round < n+g+16; round++ {
		fn := newFlow(n + g + 2) // made here, it stays off the heap
		mids = um.network(fn, price, buyerEdge, goodEdge, mids[:0])
		fn.maxflow(n+g, n+g+1)
		short, unsold := um.left(fn, price, buyerEdge, goodEdge)
		if !short && !unsold {
			return um.spending(fn, mids, price), price, true
		}
		um.mark(fn, price, short, inSet)
		factor, ok := um.factor(price, short, inSet)
		if !ok {
			return nil, nil, false
		}
		if math.Abs(factor-1) <= balanced {
			// The set balances to rounding: what the flow left over is the
			// rounding of thousands of small budgets, which exceeds each
			// buyer's slack but not the final Check.
			return um.spending(fn, mids, price), price, true
		}
		if short && !(factor > 1) || !short && !(factor < 1) {
			return nil, nil, false
		}
		for j := range g {
			if inSet[n+j] {
				price[j] *= factor
			}
		}
	}
	return nil, nil, false
}

// network fills the empty fn with the flow network at prices price:
// source → buyer i (capacity B_i), buyer → good on the exact equality
// edges, good j → sink (capacity p_j). It records the edges of the source
// and the sink in buyerEdge and goodEdge, and appends the equality edges
// to mids.
func (um *unitMarket) network(fn *flow, price []float64, buyerEdge, goodEdge []int, mids []mid) []mid {
	n, g := um.n, um.g
	src, sink := n+g, n+g+1
	for i := range n {
		buyerEdge[i] = fn.add(src, i, um.budget[i])
	}
	for i := range n {
		best := 0.0
		for _, j := range um.support[i] {
			best = math.Max(best, um.u[i][j]/price[j])
		}
		for _, j := range um.support[i] {
			if um.u[i][j]/price[j] >= best*(1-eqTol) {
				mids = append(mids, mid{i, j, fn.add(i, n+j, math.Inf(1))})
			}
		}
	}
	for j := range g {
		goodEdge[j] = fn.add(n+j, sink, price[j])
	}
	return mids
}

// left reports whether the flow fn leaves some budget unspent (short) and
// some good unsold, beyond their slack.
func (um *unitMarket) left(fn *flow, price []float64, buyerEdge, goodEdge []int) (short, unsold bool) {
	for i := range um.n {
		if fn.cap[buyerEdge[i]] > slack(um.budget[i]) {
			short = true
		}
	}
	for j := range um.g {
		if fn.cap[goodEdge[j]] > slack(price[j]) {
			unsold = true
		}
	}
	return short, unsold
}

// mark sets inSet to the set whose prices are wrong: if short, R, the
// nodes reachable from the source in the residual network; otherwise T,
// those that reach the sink.
func (um *unitMarket) mark(fn *flow, price []float64, short bool, inSet []bool) {
	n, g := um.n, um.g
	src, sink := n+g, n+g+1
	// open reports whether residual edge e counts as usable: a source or
	// sink edge within its slack of saturation does not. A closure, so
	// that it inlines into the searches below.
	open := func(e int) bool {
		switch {
		case e < 2*n && e%2 == 0: // source → buyer
			return fn.cap[e] > slack(um.budget[fn.to[e]])
		case e >= len(fn.to)-2*g && e%2 == 0: // good → sink
			return fn.cap[e] > slack(price[fn.to[e^1]-n])
		}
		return fn.cap[e] > 0
	}
	for k := range inSet {
		inSet[k] = false
	}
	if short {
		inSet[src] = true
		queue := []int{src}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, e := range fn.head[v] {
				if w := fn.to[e]; !inSet[w] && open(e) {
					inSet[w] = true
					queue = append(queue, w)
				}
			}
		}
		return
	}
	inSet[sink] = true
	queue := []int{sink}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range fn.head[v] { // e is v → w; its pair w → v
			if w := fn.to[e]; !inSet[w] && open(e^1) {
				inSet[w] = true
				queue = append(queue, w)
			}
		}
	}
}

// factor returns the factor by which the prices of the set's goods move:
// up for R until it balances or one of its buyers gains an equality edge
// out of it, down for T symmetrically. It reports false if the set has no
// budget or no price.
func (um *unitMarket) factor(price []float64, short bool, inSet []bool) (float64, bool) {
	n := um.n
	var bs, ps float64
	for i := range n {
		if inSet[i] {
			bs += um.budget[i]
		}
	}
	for j := range um.g {
		if inSet[n+j] {
			ps += price[j]
		}
	}
	if !(bs > 0) || !(ps > 0) {
		return 0, false
	}
	factor := bs / ps // balance
	for i := range n {
		best, other := 0.0, 0.0
		for _, j := range um.support[i] {
			r := um.u[i][j] / price[j]
			best = math.Max(best, r)
			if inSet[n+j] != short {
				other = math.Max(other, r)
			}
		}
		switch {
		case short && inSet[i] && other > 0:
			// An R buyer's best outside R: the rise stops at best/other.
			factor = math.Min(factor, best/other)
		case !short && !inSet[i] && other > 0:
			// Outside T, a T good becomes tight at other/best.
			factor = math.Max(factor, other/best)
		}
	}
	return factor, true
}

// mid is an equality edge of the flow network: buyer i, good j, edge e.
type mid struct{ i, j, e int }

// spending returns the flow over the equality edges, rescaled to the
// budgets and prices.
func (um *unitMarket) spending(fn *flow, mids []mid, price []float64) [][]float64 {
	spend := make([][]float64, um.n)
	for i := range spend {
		spend[i] = make([]float64, um.g)
	}
	for _, md := range mids {
		spend[md.i][md.j] = fn.cap[md.e^1] // the flow is the reverse residual
	}
	balance(spend, um.budget, price)
	return spend
}

// flow is a residual network for Dinic's maximum-flow algorithm. Edge e and
// its reverse e^1 are stored in pairs.
type flow struct {
	head  [][]int // edges leaving each node, in insertion order
	to    []int
	cap   []float64 // residual capacity
	level []int
	iter  []int
}

func newFlow(nodes int) *flow {
	return &flow{head: make([][]int, nodes), level: make([]int, nodes), iter: make([]int, nodes)}
}

func (f *flow) add(a, b int, c float64) int {
	e := len(f.to)
	f.to = append(f.to, b, a)
	f.cap = append(f.cap, c, 0)
	f.head[a] = append(f.head[a], e)
	f.head[b] = append(f.head[b], e+1)
	return e
}

func (f *flow) maxflow(s, t int) {
	for {
		for k := range f.level {
			f.level[k] = -1
		}
		f.level[s] = 0
		queue := []int{s}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, e := range f.head[v] {
				if f.cap[e] > 0 && f.level[f.to[e]] < 0 {
					f.level[f.to[e]] = f.level[v] + 1
					queue = append(queue, f.to[e])
				}
			}
		}
		if f.level[t] < 0 {
			return
		}
		for k := range f.iter {
			f.iter[k] = 0
		}
		for f.push(s, t, math.Inf(1)) > 0 {
		}
	}
}

// push sends up to limit units along one level path from v to t.
func (f *flow) push(v, t int, limit float64) float64 {
	if v == t {
		return limit
	}
	for ; f.iter[v] < len(f.head[v]); f.iter[v]++ {
		e := f.head[v][f.iter[v]]
		w := f.to[e]
		if f.cap[e] <= 0 || f.level[w] != f.level[v]+1 {
			continue
		}
		if d := f.push(w, t, math.Min(limit, f.cap[e])); d > 0 {
			f.cap[e] -= d
			f.cap[e^1] += d
			return d
		}
	}
	return 0
}

// Check verifies that e is an equilibrium of m within the relative
// tolerance tol:
//
//  1. the market clears: x_ij ≥ −tol·S_j, Σ_i x_ij ≤ S_j(1+tol) for every
//     good, and |Σ_i x_ij − S_j| ≤ tol·S_j for every good with p_j > 0;
//     p_j ≥ 0, and p_j > 0 for every good some buyer values;
//  2. each budget is spent: |Σ_j p_j x_ij − B_i| ≤ tol·B_i;
//  3. each buyer buys only maximum bang-per-buck goods: x_ij > tol·S_j
//     implies U_ij/p_j ≥ (1−tol)·max_k U_ik/p_k (goods priced 0, which no
//     buyer values, are exempt);
//
// and that the reported utilities and LogNSW match the allocation
// (relative to u_i, and to Σ_i B_i (1 + |log u_i|)). Conditions 1–3 are the
// KKT conditions of the Eisenberg–Gale program, so they certify optimality.
// The error names the violated condition, buyer and good; an invalid market
// gives an error wrapping ErrInvalid.
func (m Fisher) Check(e Equilibrium, tol float64) error {
	if err := m.validate(true); err != nil {
		return err
	}
	if !(tol >= 0) {
		return fmt.Errorf("market: check: tolerance %v is not a non-negative number", tol)
	}
	n, g := len(m.Budgets), len(m.Utilities[0])
	switch {
	case len(e.Allocation) != n:
		return fmt.Errorf("market: check: allocation: %d rows for %d buyers", len(e.Allocation), n)
	case len(e.Prices) != g:
		return fmt.Errorf("market: check: prices: %d goods, want %d", len(e.Prices), g)
	case len(e.Utilities) != n:
		return fmt.Errorf("market: check: utilities: %d buyers, want %d", len(e.Utilities), n)
	}
	for j, p := range e.Prices {
		if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
			return fmt.Errorf("market: check: good %d: price: %v is not a non-negative number", j, p)
		}
	}
	sold := make([]float64, g)
	for i, row := range e.Allocation {
		if len(row) != g {
			return fmt.Errorf("market: check: buyer %d: allocation: %d goods, want %d", i, len(row), g)
		}
		for j, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < -tol*m.supply(j) {
				return fmt.Errorf("market: check: buyer %d: good %d: allocation: %v is negative or not finite", i, j, x)
			}
			sold[j] += x
		}
	}
	// (1) Clearing.
	for j, s := range sold {
		S := m.supply(j)
		if s > S*(1+tol) {
			return fmt.Errorf("market: check: good %d: clearing: sold %v of supply %v", j, s, S)
		}
		if e.Prices[j] > 0 && math.Abs(s-S) > tol*S {
			return fmt.Errorf("market: check: good %d: clearing: sold %v of supply %v at price %v", j, s, S, e.Prices[j])
		}
		if e.Prices[j] == 0 {
			for i := range n {
				if m.Utilities[i][j] > 0 {
					return fmt.Errorf("market: check: good %d: clearing: price 0 but buyer %d values it", j, i)
				}
			}
		}
	}
	logNSW, scale := 0.0, 0.0
	for i, row := range e.Allocation {
		// (2) Budget.
		spent, u := 0.0, 0.0
		best, bestJ := 0.0, -1
		for j, x := range row {
			spent += e.Prices[j] * x
			u += m.Utilities[i][j] * x
			if p := e.Prices[j]; p > 0 && m.Utilities[i][j]/p > best {
				best, bestJ = m.Utilities[i][j]/p, j
			}
		}
		if B := m.Budgets[i]; math.Abs(spent-B) > tol*B {
			return fmt.Errorf("market: check: buyer %d: budget: spends %v of %v", i, spent, B)
		}
		// (3) Maximum bang per buck.
		for j, x := range row {
			if p := e.Prices[j]; p > 0 && x > tol*m.supply(j) && m.Utilities[i][j]/p < best*(1-tol) {
				return fmt.Errorf("market: check: buyer %d: good %d: bang per buck: buys %v at U/p = %v below the best %v (good %d)",
					i, j, x, m.Utilities[i][j]/p, best, bestJ)
			}
		}
		if math.Abs(e.Utilities[i]-u) > tol*math.Abs(u) || !(u > 0) {
			return fmt.Errorf("market: check: buyer %d: utility: reported %v, allocation gives %v", i, e.Utilities[i], u)
		}
		logNSW += m.Budgets[i] * math.Log(u)
		scale += m.Budgets[i] * (1 + math.Abs(math.Log(u)))
	}
	if !(math.Abs(e.LogNSW-logNSW) <= tol*scale) {
		return fmt.Errorf("market: check: LogNSW: reported %v, allocation gives %v", e.LogNSW, logNSW)
	}
	return nil
}
