package market

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrInfeasible reports a volatile market whose lower bounds on rounds
// cannot all be met.
var ErrInfeasible = errors.New("market: lower bounds cannot all be met")

// Volatile is Shockwave's multi-round market: buyers are jobs, the goods are
// the GPU-rounds of the next Rounds rounds, Capacity GPUs each, and a buyer
// holds its whole gang of Width GPUs in every round it buys. A buyer that
// holds n rounds reaches progress z(n) = min(1, z₀ + g·n) and leaves
// S(n) = max(0, R̂ − Δ·min(n, (1−z₀)/g)) seconds of work after the window.
// The market maximizes
//
//	(1/(J·T)) Σᵢ Bᵢ·log̃ zᵢ(nᵢ) − k·maxᵢ Sᵢ(nᵢ)
//
// over whole round counts nᵢ ∈ [Minᵢ, T] that pack into the rounds, where
// log̃ is the piecewise-linear interpolation of log on Breakpoints: the
// Eisenberg–Gale (budget-weighted Nash welfare) objective over time-expanded
// goods, with Shockwave's makespan regulariser. The zero value needs only
// Rounds and Capacity.
//
// Every term depends on the plan only through the counts nᵢ, so Solve
// replaces Shockwave's mixed-integer program by an exact search: for each
// candidate value M of the largest remaining time (one of the finitely many
// values Sᵢ(n)), the counts must reach the least n with Sᵢ(n) ≤ M, and the
// capacity left is spent on the units of log-welfare with the largest gain
// per GPU-round; log̃ is concave, so each buyer's gains fall with n and the
// greedy choice is optimal for a fixed M. With unit widths this is the exact
// optimum (Plan.Bound = Plan.Objective). With gangs the greedy is that of
// a knapsack and packing rounds can fail; Plan.Bound then bounds the optimum
// from above by the fractional relaxation, and the gap is at most the gain
// of one buyer-round per M plus what packing dropped.
type Volatile struct {
	// Rounds is the planning window T; Capacity the GPUs in each round.
	Rounds   int
	Capacity int
	// Seconds is the length Δ of a round; zero means 120 (Shockwave's).
	Seconds float64
	// Breakpoints are the progress values, ascending from 0 to 1, on which
	// log is interpolated; nil means Shockwave's 0, 0.2, …, 1.
	Breakpoints []float64
	// Origin stands for the progress at breakpoint 0, whose log is -∞;
	// zero means Shockwave's 10⁻⁶.
	Origin float64
	// Makespan is the weight k of the largest remaining time, per second;
	// zero leaves it out.
	Makespan float64
}

// Buyer is one job in a volatile market.
type Buyer struct {
	// Budget is the buyer's weight Bᵢ > 0 (1 for all on Shockwave's fair
	// path, the priority on its relaxed path).
	Budget float64
	// Width is the GPUs the buyer holds in each round it buys.
	Width int
	// Progress is z₀, the fraction of its work done, in [0,1]; Gain is g,
	// the fraction one round adds.
	Progress, Gain float64
	// Remaining is R̂, the forecast seconds of work left before the window.
	Remaining float64
	// Min is the least number of rounds the buyer must get.
	Min int
}

// Plan is the outcome of a volatile market.
type Plan struct {
	// Counts holds the rounds nᵢ each buyer gets.
	Counts []int
	// Schedule lists, for each round, the buyers holding their gang in it,
	// ascending.
	Schedule [][]int
	// Objective is the market's objective at Counts; Bound is an upper
	// bound on it over all plans, equal to Objective when every Width is 1.
	Objective, Bound float64
}

var defaultBreakpoints = []float64{0, 0.2, 0.4, 0.6, 0.8, 1}

// Left returns S(n), the seconds of work the buyer has left after holding n
// rounds of Δ seconds.
func (b Buyer) Left(n int, seconds float64) float64 {
	done := 0.0
	if b.Gain > 0 {
		done = seconds * math.Min(float64(n), (1-b.Progress)/b.Gain)
	}
	return math.Max(0, b.Remaining-done)
}

// Log returns log̃ z, the piecewise-linear log on the market's breakpoints,
// with z clamped to [0,1].
func (v Volatile) Log(z float64) float64 {
	bp := v.Breakpoints
	if bp == nil {
		bp = defaultBreakpoints
	}
	origin := cmp.Or(v.Origin, 1e-6)
	lg := func(x float64) float64 {
		if x == 0 {
			return math.Log(origin)
		}
		return math.Log(x)
	}
	z = math.Min(math.Max(z, 0), 1)
	k, _ := slices.BinarySearch(bp, z)
	if k == 0 {
		return lg(bp[0])
	}
	if k == len(bp) {
		k--
	}
	a, b := bp[k-1], bp[k]
	return lg(a) + (z-a)/(b-a)*(lg(b)-lg(a))
}

func (v Volatile) validate(buyers []Buyer) error {
	switch {
	case v.Rounds < 1:
		return fmt.Errorf("%w: rounds: %d; plan at least one round", ErrInvalid, v.Rounds)
	case v.Capacity < 1:
		return fmt.Errorf("%w: capacity: %d; a round needs a GPU", ErrInvalid, v.Capacity)
	case v.Seconds < 0 || math.IsNaN(v.Seconds) || math.IsInf(v.Seconds, 0):
		return fmt.Errorf("%w: seconds: %v is not a finite non-negative number", ErrInvalid, v.Seconds)
	case v.Origin < 0 || v.Origin >= 1 || math.IsNaN(v.Origin):
		return fmt.Errorf("%w: origin: %v is not in [0, 1)", ErrInvalid, v.Origin)
	case v.Makespan < 0 || math.IsNaN(v.Makespan) || math.IsInf(v.Makespan, 0):
		return fmt.Errorf("%w: makespan: %v is not a finite non-negative number", ErrInvalid, v.Makespan)
	}
	if bp := v.Breakpoints; bp != nil {
		if len(bp) < 2 || bp[0] != 0 || bp[len(bp)-1] != 1 {
			return fmt.Errorf("%w: breakpoints: %v must run from 0 to 1", ErrInvalid, bp)
		}
		for k := 1; k < len(bp); k++ {
			if !(bp[k] > bp[k-1]) {
				return fmt.Errorf("%w: breakpoints: %v must be strictly ascending", ErrInvalid, bp)
			}
		}
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for i, b := range buyers {
		switch {
		case !(b.Budget > 0) || !finite(b.Budget):
			return fmt.Errorf("%w: buyer %d: budget: %v is not a finite positive number", ErrInvalid, i, b.Budget)
		case b.Width < 1:
			return fmt.Errorf("%w: buyer %d: width: %d; a buyer holds at least one GPU", ErrInvalid, i, b.Width)
		case !(b.Progress >= 0 && b.Progress <= 1):
			return fmt.Errorf("%w: buyer %d: progress: %v is not in [0, 1]", ErrInvalid, i, b.Progress)
		case !(b.Gain >= 0) || !finite(b.Gain):
			return fmt.Errorf("%w: buyer %d: gain: %v is not a finite non-negative number", ErrInvalid, i, b.Gain)
		case !(b.Remaining >= 0) || !finite(b.Remaining):
			return fmt.Errorf("%w: buyer %d: remaining: %v is not a finite non-negative number", ErrInvalid, i, b.Remaining)
		case b.Min < 0:
			return fmt.Errorf("%w: buyer %d: min: %d is negative", ErrInvalid, i, b.Min)
		}
	}
	return nil
}

// unit is one buyer-round beyond a buyer's lower bound, in the order the
// greedy takes them.
type unit struct {
	buyer, n int
	gain     float64 // welfare gained by the buyer's (n+1)-th round
	width    int
}

// Solve returns the optimal plan (see Volatile). Buyers are placed into rounds
// in order of Budget, descending, then index, each taking the rounds with the
// most free GPUs, earliest first, so that with unit widths every count vector
// within capacity packs; the schedule is then re-ranked so that the first
// buyers run earliest (see pack). It returns
// ErrInfeasible when the lower bounds Min cannot be met, and an error
// wrapping ctx.Err() once ctx is done.
func (v Volatile) Solve(ctx context.Context, buyers []Buyer) (Plan, error) {
	if err := v.validate(buyers); err != nil {
		return Plan{}, err
	}
	if err := ctx.Err(); err != nil {
		return Plan{}, fmt.Errorf("market: %w", err)
	}
	plan := Plan{Counts: make([]int, len(buyers)), Schedule: make([][]int, v.Rounds)}
	if len(buyers) == 0 {
		return plan, nil
	}
	tb, capacity, err := v.tabulate(buyers)
	if err != nil {
		return Plan{}, err
	}
	units := tb.units(buyers, v.Rounds, v.Capacity)
	bestM, bound, err := v.search(ctx, buyers, &tb, units, capacity)
	if err != nil {
		return Plan{}, err
	}
	v.rebuild(buyers, &tb, units, bestM, plan.Counts)
	if err := v.pack(ctx, buyers, &plan); err != nil {
		return Plan{}, err
	}
	plan.Objective = v.objective(buyers, plan.Counts, tb.welfare, tb.left)
	plan.Bound = math.Max(bound, plan.Objective)
	if !slices.ContainsFunc(buyers, func(b Buyer) bool { return b.Width > 1 }) {
		plan.Bound = plan.Objective // exact; the relaxation differs only by rounding
	}
	return plan, nil
}

// tables holds, per buyer and count n ≤ T, the welfare and the time left,
// and the lower bounds from Min: every term of the objective is a lookup.
type tables struct {
	welfare, left [][]float64
	base          []int
}

// tabulate fills the tables and returns the GPU-rounds the lower bounds
// leave, or ErrInfeasible if they cannot be met.
func (v Volatile) tabulate(buyers []Buyer) (tables, int, error) {
	T, G := v.Rounds, v.Capacity
	delta := cmp.Or(v.Seconds, 120)
	J := len(buyers)
	norm := 1 / float64(J*T)
	tb := tables{welfare: make([][]float64, J), left: make([][]float64, J), base: make([]int, J)}
	capacity := G * T
	for i, b := range buyers {
		tb.welfare[i] = make([]float64, T+1)
		tb.left[i] = make([]float64, T+1)
		for n := 0; n <= T; n++ {
			tb.welfare[i][n] = b.Budget * norm * v.Log(b.Progress+b.Gain*float64(n))
			tb.left[i][n] = b.Left(n, delta)
		}
		if b.Min > 0 && (b.Min > T || b.Width > G) {
			return tables{}, 0, fmt.Errorf("%w: buyer %d needs %d rounds of %d GPUs; the window has %d rounds of %d", ErrInfeasible, i, b.Min, b.Width, T, G)
		}
		tb.base[i] = b.Min
		capacity -= b.Min * b.Width
	}
	if capacity < 0 {
		return tables{}, 0, fmt.Errorf("%w: the lower bounds need %d GPU-rounds; the window has %d", ErrInfeasible, G*T-capacity, G*T)
	}
	return tb, capacity, nil
}

// units returns the units above the lower bounds that add welfare, by gain
// per GPU, then buyer and round so that each buyer's units stay in order:
// the order the greedy takes them in.
func (tb *tables) units(buyers []Buyer, T, G int) []unit {
	var units []unit
	for i, b := range buyers {
		if b.Width > G {
			continue
		}
		prev := math.Inf(1)
		for n := tb.base[i]; n < T; n++ {
			// Clamp rounding noise so that a buyer's gains never rise and
			// its units stay in order.
			g := math.Min(tb.welfare[i][n+1]-tb.welfare[i][n], prev)
			prev = g
			if g > 0 {
				units = append(units, unit{buyer: i, n: n, gain: g, width: b.Width})
			}
		}
	}
	slices.SortFunc(units, func(a, b unit) int {
		return cmp.Or(cmp.Compare(b.gain/float64(b.width), a.gain/float64(a.width)),
			cmp.Compare(a.buyer, b.buyer), cmp.Compare(a.n, b.n))
	})
	return units
}

// search tries the candidate values M of the largest time left, largest
// first, and returns the best and the fractional bound over all of them.
func (v Volatile) search(ctx context.Context, buyers []Buyer, tb *tables, units []unit, capacity int) (float64, float64, error) {
	var f floor
	f.init(buyers, tb, units, capacity, v.Rounds, v.Capacity)
	// The candidates are the values S_i(n) above the lower bounds; above
	// the largest time left at the lower bounds, top, nothing changes.
	// Built here rather than returned, their first appends stay on the
	// stack.
	top := 0.0
	var cands []float64
	for i := range tb.base {
		top = math.Max(top, tb.left[i][tb.base[i]])
		for n := tb.base[i]; n <= v.Rounds; n++ {
			cands = append(cands, tb.left[i][n])
		}
	}
	slices.SortFunc(cands, func(a, b float64) int { return cmp.Compare(b, a) })
	cands = slices.Compact(cands)
	best, bestM, bound := math.Inf(-1), -1.0, math.Inf(-1)
	for c, m := range cands {
		if m > top {
			continue
		}
		if c%256 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, fmt.Errorf("market: %w", err)
			}
		}
		// Smaller values of m need even higher counts, so the first
		// failure ends the search.
		if !f.raise(m) || f.capacity < 0 {
			break
		}
		fill, frac := f.tree.fill(f.capacity)
		value := f.forced + fill - v.Makespan*m
		if value > best {
			best, bestM = value, m
		}
		bound = math.Max(bound, f.forced+frac-v.Makespan*m)
	}
	if bestM < 0 {
		return 0, 0, fmt.Errorf("%w: no plan meets the lower bounds", ErrInfeasible)
	}
	return bestM, bound, nil
}

// floor is the search at one value M: each buyer's least count low that
// leaves at most M, the welfare forced below the counts and the capacity
// they leave, and the units above them in a Fenwick tree by greedy order.
type floor struct {
	buyers []Buyer
	tables
	units    []unit
	T, G     int
	pos      map[[2]int]int // a unit's place in units, by buyer and round
	tree     *fenwick
	low      []int
	forced   float64
	capacity int
	worst    *leftHeap // buyers by time left at low, largest first
}

// init starts the search at the lower bounds.
func (f *floor) init(buyers []Buyer, tb *tables, units []unit, capacity, T, G int) {
	*f = floor{buyers: buyers, tables: *tb, units: units, T: T, G: G, capacity: capacity}
	f.pos = make(map[[2]int]int, len(units))
	for k, u := range units {
		f.pos[[2]int{u.buyer, u.n}] = k
	}
	f.tree = newFenwick(len(units))
	for k, u := range units {
		f.tree.add(k, u.width, u.gain)
	}
	f.low = make([]int, len(buyers))
	copy(f.low, tb.base)
	f.worst = &leftHeap{}
	for i := range buyers {
		f.forced += tb.welfare[i][f.low[i]]
		f.worst.items = append(f.worst.items, leftItem{buyer: i, left: tb.left[i][f.low[i]]})
	}
	heap.Init(f.worst)
}

// raise lifts the buyers leaving more than m to the least count leaving
// at most m, taking their units out of the tree. It reports false when a
// buyer cannot get there.
func (f *floor) raise(m float64) bool {
	for f.worst.items[0].left > m {
		i := f.worst.items[0].buyer
		if f.low[i] == f.T || f.buyers[i].Width > f.G {
			return false
		}
		if k, in := f.pos[[2]int{i, f.low[i]}]; in {
			f.tree.add(k, -f.units[k].width, -f.units[k].gain)
		}
		f.forced += f.welfare[i][f.low[i]+1] - f.welfare[i][f.low[i]]
		f.capacity -= f.buyers[i].Width
		f.low[i]++
		f.worst.items[0].left = f.left[i][f.low[i]]
		heap.Fix(f.worst, 0)
	}
	return true
}

// rebuild sets counts to the plan at the best value bestM: the least counts
// leaving at most bestM, then the units in order while they fit.
func (v Volatile) rebuild(buyers []Buyer, tb *tables, units []unit, bestM float64, counts []int) {
	T := v.Rounds
	capacity := v.Capacity * T
	for i, b := range buyers {
		n := tb.base[i]
		for n < T && tb.left[i][n] > bestM {
			n++
		}
		counts[i] = n
		capacity -= n * b.Width
	}
	for _, u := range units {
		if u.n == counts[u.buyer] && u.width <= capacity {
			counts[u.buyer]++
			capacity -= u.width
		}
	}
}

// objective evaluates the market's objective at counts.
func (v Volatile) objective(buyers []Buyer, counts []int, welfare, left [][]float64) float64 {
	sum, worst := 0.0, 0.0
	for i := range buyers {
		sum += welfare[i][counts[i]]
		worst = math.Max(worst, left[i][counts[i]])
	}
	return sum - v.Makespan*worst
}

// pack places the counts into rounds in two steps, as Shockwave does.
// First each buyer, by Budget then index, takes the rounds with the most
// free GPUs (earliest first), which spreads gangs so that the counts fit; a
// buyer that cannot get all its rounds keeps those it got, and falling
// below Min is ErrInfeasible. Then the schedule is re-ranked so that the
// buyers of highest priority run earliest (rank), as Shockwave's second
// program does: the counts are kept, and the first schedule too if
// re-ranking cannot fit them.
func (v Volatile) pack(ctx context.Context, buyers []Buyer, plan *Plan) error {
	order := make([]int, len(buyers))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(buyers[b].Budget, buyers[a].Budget) })
	var pk picker
	schedule, got := v.place(buyers, plan.Counts, order, v.capacity(), pk.mostFree)
	for i, b := range buyers {
		if got[i] < b.Min {
			return fmt.Errorf("%w: buyer %d fits in %d rounds, fewer than its %d", ErrInfeasible, i, got[i], b.Min)
		}
	}
	copy(plan.Counts, got)
	ranked, ok, err := v.rank(ctx, buyers, plan.Counts, order)
	if err != nil {
		return err
	}
	if ok {
		schedule = ranked
	}
	for t := range schedule {
		slices.Sort(schedule[t])
	}
	plan.Schedule = schedule
	return nil
}

// rank re-places the counts so that they lower, greedily, the
// priority-weighted mean round index Σᵢ Bᵢ·(mean round of i): buyers in
// pack's order (Budget, then index) each take the earliest rounds with
// room, unless the buyers after them, placed as pack first placed them,
// would then no longer all fit; they then take the most free rounds. It
// reports false if neither keeps every count. It takes O(J²·T) for J
// buyers and T rounds, and looks at ctx before each buyer.
func (v Volatile) rank(ctx context.Context, buyers []Buyer, counts, order []int) ([][]int, bool, error) {
	free := v.capacity()
	schedule := make([][]int, v.Rounds)
	placed := make([]bool, len(buyers))
	var pk picker
	for _, i := range order {
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("market: %w", err)
		}
		placed[i] = true
		rest := slices.DeleteFunc(slices.Clone(order), func(k int) bool { return placed[k] })
		ok := false
		for _, pick := range []func([]int) []int{pk.earliest, pk.mostFree} {
			one, got := v.place(buyers, counts, []int{i}, free, pick)
			after := slices.Clone(free)
			for t, run := range one {
				if len(run) > 0 {
					after[t] -= buyers[i].Width
				}
			}
			if _, left := v.place(buyers, counts, rest, after, pk.mostFree); got[i] == counts[i] && fitsAll(left, counts, rest) {
				for t, run := range one {
					schedule[t] = append(schedule[t], run...)
				}
				free, ok = after, true
				break
			}
		}
		if !ok {
			return nil, false, nil
		}
	}
	return schedule, true, nil
}

// fitsAll reports whether every buyer of order got its count.
func fitsAll(got, counts, order []int) bool {
	for _, i := range order {
		if got[i] != counts[i] {
			return false
		}
	}
	return true
}

// capacity returns the free GPUs of empty rounds.
func (v Volatile) capacity() []int {
	free := make([]int, v.Rounds)
	for t := range free {
		free[t] = v.Capacity
	}
	return free
}

// picker orders rounds for place, into memory it reuses: place walks one
// order to its end before it asks for the next, and rank asks O(J²) times.
type picker struct{ rounds, start []int }

// earliest tries rounds in time order.
func (p *picker) earliest(free []int) []int {
	p.rounds = p.rounds[:0]
	for t := range free {
		p.rounds = append(p.rounds, t)
	}
	return p.rounds
}

// mostFree tries rounds with the most free GPUs first, earliest first
// among equals. Free counts are small integers, so a counting sort orders
// the rounds in O(T + most free): rank calls it O(J²) times, where a
// comparison sort made it most of a Shockwave decision.
func (p *picker) mostFree(free []int) []int {
	if len(free) == 0 {
		return nil
	}
	top := slices.Max(free)
	if slices.Min(free) < 0 || top > 4*len(free)+64 {
		rounds := p.earliest(free) // counts too spread for buckets
		slices.SortStableFunc(rounds, func(a, b int) int { return cmp.Compare(free[b], free[a]) })
		return rounds
	}
	p.start = slices.Grow(p.start[:0], top+2)[:top+2] // start[top-f]: where rounds with f free begin
	clear(p.start)
	for _, f := range free {
		p.start[top-f+1]++
	}
	for i := 1; i < len(p.start); i++ {
		p.start[i] += p.start[i-1]
	}
	p.rounds = append(p.rounds[:0], free...)
	for t, f := range free {
		p.rounds[p.start[top-f]] = t
		p.start[top-f]++
	}
	return p.rounds
}

// place gives the buyers, in order, up to their counts of rounds with room
// for their width, trying rounds in the order that pick returns for the
// free GPUs at that point, and returns the schedule and the rounds each got.
func (v Volatile) place(buyers []Buyer, counts, order []int, free []int, pick func(free []int) []int) ([][]int, []int) {
	free = slices.Clone(free)
	schedule := make([][]int, v.Rounds)
	got := make([]int, len(buyers))
	for _, i := range order {
		n, w := counts[i], buyers[i].Width
		for _, t := range pick(free) {
			if got[i] == n {
				break
			}
			if free[t] < w {
				continue
			}
			free[t] -= w
			schedule[t] = append(schedule[t], i)
			got[i]++
		}
	}
	return schedule, got
}

// fenwick keeps the widths and gains of the units still on offer, in greedy
// order, to find the longest prefix within a capacity in O(log n).
type fenwick struct {
	width []int
	gain  []float64
	// each unit's own width and gain, to price the first unit that does
	// not fit
	ownWidth []int
	ownGain  []float64
}

func newFenwick(n int) *fenwick {
	return &fenwick{width: make([]int, n+1), gain: make([]float64, n+1), ownWidth: make([]int, n), ownGain: make([]float64, n)}
}

func (f *fenwick) add(k, w int, g float64) {
	f.ownWidth[k] += w
	f.ownGain[k] += g
	for i := k + 1; i < len(f.width); i += i & -i {
		f.width[i] += w
		f.gain[i] += g
	}
}

// fill returns the gain of the longest prefix of units whose widths fit in
// capacity, and that plus the fraction of the next unit that fits (the
// fractional knapsack's value).
func (f *fenwick) fill(capacity int) (whole, fractional float64) {
	n := len(f.width) - 1
	step := 1
	for step*2 <= n {
		step *= 2
	}
	at, used := 0, 0
	for ; step > 0; step /= 2 {
		if next := at + step; next <= n && used+f.width[next] <= capacity {
			at = next
			used += f.width[next]
			whole += f.gain[next]
		}
	}
	// at is the count of units in the prefix; the next unit on offer with
	// a width is the first that did not fit.
	for k := at; k < n; k++ {
		if f.ownWidth[k] > 0 {
			return whole, whole + f.ownGain[k]*float64(capacity-used)/float64(f.ownWidth[k])
		}
	}
	return whole, whole
}

// leftHeap orders buyers by the time they leave after the window, largest
// first, ties by index.
type leftHeap struct{ items []leftItem }

type leftItem struct {
	buyer int
	left  float64
}

func (h *leftHeap) Len() int { return len(h.items) }
func (h *leftHeap) Less(a, b int) bool {
	x, y := h.items[a], h.items[b]
	return x.left > y.left || (x.left == y.left && x.buyer < y.buyer)
}
func (h *leftHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *leftHeap) Push(x any)    { h.items = append(h.items, x.(leftItem)) }
func (h *leftHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
