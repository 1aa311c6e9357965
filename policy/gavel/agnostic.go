package gavel

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
)

// exactTypes is the most accelerator types for which gpuTime solves an
// agnostic max-min program; it works over all 2^K sets of types, so beyond
// this the LP does.
const exactTypes = 12

// byStructure is the Engine of a Result that gpuTime solved; its time is
// split across types already.
const byStructure = "structure"

// gpuTime is an agnostic max-min program seen through its structure. Row
// j's term is β_j·x_j, with x_j = Σ_k X_jk its time, and all the program
// asks of the types is each row's GPU time D_j = n_j s_j x_j (n_j jobs of
// s_j GPUs) on its set T_j of types. By Gale's supply–demand theorem such
// demands fit exactly when
//
//	Σ_{j: T_j ⊆ S} D_j ≤ N(S)  for every set S of types,
//
// N(S) being S's GPUs. With K types that is 2^K − 1 constraints, so both
// programs of MaximizeMin have closed forms:
//
//   - t* = min( min_j β_j, min_S N(S) / Σ_{T_j ⊆ S} n_j s_j/β_j ): every
//     row at exactly t* is the cheapest way to reach it, and x_j ≤ 1;
//   - the tie-break max Σ_j n_j β_j x_j weighs a row's GPU time by β_j/s_j,
//     and the demands that fit form a polymatroid, so filling rows greedily
//     in decreasing β_j/s_j, each as far as it fits, is optimal.
//
// Rows tied in β_j/s_j (in gavel.las-agnostic, rows of equal weight) are
// filled together, their terms rising as one level until a row reaches
// x_j = 1 or a set of types is full: the leximin among them. An LP would instead pick
// whichever optimal vertex its start led to, so warm and cold decisions
// differed; this fill depends on the program alone.
type gpuTime struct {
	k     int       // types
	mask  []int     // T_j as bits over the types; 0 for a row without a term or types
	stuck bool      // some row has a term but no type: t* = 0
	beta  []float64 // β_j: term per unit of time
	gpus  []float64 // n_j s_j: GPU time at x_j = 1
	worth []float64 // β_j/s_j: the tie-break's gain per GPU time
	cap   []float64 // N(S) per set S
	level []float64 // each row's term, as the fill raises it
	held  []float64 // GPU time held by the rows whose set is exactly S
}

// newGPUTime reads the structure of prog, an agnostic program without
// pairs whose row j has the term beta[j]·x_j, or none where beta[j] is 0
// (such a row gets no time). It reports false where the closed forms do not
// apply: too many types, or a term that is not positive and finite per GPU.
func newGPUTime(prog *allocation.Program, beta []float64) (*gpuTime, bool) {
	types := prog.Types()
	if len(types) > exactTypes {
		return nil, false
	}
	g := &gpuTime{k: len(types), mask: typeSets(prog), beta: beta,
		gpus: make([]float64, len(beta)), worth: make([]float64, len(beta)), cap: setGPUs(prog.Capacity())}
	for j := range beta {
		g.gpus[j] = float64(prog.Count(j) * prog.GPUs(j))
		g.worth[j] = beta[j] / float64(prog.GPUs(j))
		switch {
		case beta[j] == 0:
			g.mask[j] = 0
		case g.mask[j] == 0:
			g.stuck = true
		case !(beta[j] > 0 && !math.IsInf(g.gpus[j]/beta[j], 0)):
			return nil, false
		}
	}
	return g, true
}

// typeSets returns each row's types as bits over prog.Types().
func typeSets(prog *allocation.Program) []int {
	masks := make([]int, prog.NumJobs())
	for j := range masks {
		for k := range prog.Types() {
			if prog.Allowed(j, k) {
				masks[j] |= 1 << k
			}
		}
	}
	return masks
}

// setGPUs returns N(S), the GPUs of every set S of types, from each type's.
func setGPUs(gpus []float64) []float64 {
	n := make([]float64, 1<<len(gpus))
	for k, g := range gpus {
		n[1<<k] = g
	}
	return subsetSums(n, len(gpus))
}

// subsetSums returns, for every set S of k types, the sum of v over the
// subsets of S (v is indexed by set; it is overwritten).
func subsetSums(v []float64, k int) []float64 {
	for b := range k {
		for s := range v {
			if s&(1<<b) != 0 {
				v[s] += v[s^(1<<b)]
			}
		}
	}
	return v
}

// maxMin returns t*: the largest level every row can reach at once.
func (g *gpuTime) maxMin() float64 {
	if g.stuck {
		return 0
	}
	need := make([]float64, len(g.cap)) // GPU time per unit of level
	t := math.Inf(1)
	for j, m := range g.mask {
		if m == 0 {
			continue
		}
		need[m] += g.gpus[j] / g.beta[j]
		t = min(t, g.beta[j])
	}
	need = subsetSums(need, g.k)
	for s := 1; s < len(need); s++ {
		if need[s] > 0 {
			t = min(t, g.cap[s]/need[s])
		}
	}
	return t
}

// fill raises every row from tStar by the tie-break (see gpuTime) and
// returns each row's time x_j.
func (g *gpuTime) fill(tStar float64) []float64 {
	g.start(tStar)
	for _, group := range g.ties() {
		g.raise(group, tStar)
	}
	return g.times()
}

// leximin raises every row from 0 as one level, each stopping at x_j = 1
// or a full set of types: progressive filling, whose result on these
// constraints is the leximin of the terms. It returns each row's time x_j
// and the first level at which a row stopped, which is t*.
func (g *gpuTime) leximin() ([]float64, float64) {
	g.start(0)
	var rows []int
	first := math.Inf(1)
	if g.stuck {
		first = 0
	}
	for j, m := range g.mask {
		if m != 0 {
			rows = append(rows, j)
		}
	}
	g.raise(rows, 0)
	for _, j := range rows {
		first = min(first, g.level[j])
	}
	return g.times(), first
}

// start puts every row that can run at level l.
func (g *gpuTime) start(l float64) {
	g.level = make([]float64, len(g.mask))
	g.held = make([]float64, len(g.cap))
	for j, m := range g.mask {
		if m != 0 {
			g.level[j] = l
			g.held[m] += g.gpus[j] * l / g.beta[j]
		}
	}
}

// times returns each row's time x_j at its level.
func (g *gpuTime) times() []float64 {
	x := make([]float64, len(g.mask))
	for j := range x {
		if g.mask[j] != 0 {
			x[j] = min(1, g.level[j]/g.beta[j])
		}
	}
	return x
}

// ties returns the rows that can run somewhere, grouped by their
// tie-break value per GPU time β_j/s_j, highest first; values within 1e-12
// of each other (relative) are tied, and a group keeps row order.
func (g *gpuTime) ties() [][]int {
	var rows []int
	for j, m := range g.mask {
		if m != 0 {
			rows = append(rows, j)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int { return cmp.Compare(g.worth[b], g.worth[a]) })
	var groups [][]int
	for i, j := range rows {
		if i == 0 || g.worth[rows[i-1]]-g.worth[j] > 1e-12*g.worth[rows[i-1]] {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], j)
	}
	return groups
}

// raise lifts the group's rows, all at level from, as one level until each
// is stopped by its own x_j = 1 or by a full set of types.
func (g *gpuTime) raise(group []int, from float64) {
	active := slices.Clone(group)
	for level := from; len(active) > 0; {
		used, rate := g.load(active)
		top := math.Inf(1)
		for _, j := range active {
			top = min(top, g.beta[j]) // x_j = 1
		}
		step := top - level
		for s := 1; s < len(used); s++ {
			if rate[s] > 0 {
				step = min(step, max(0, g.cap[s]-used[s])/rate[s])
			}
		}
		level += step
		full := g.full(used, rate, step)
		still := active[:0]
		for _, j := range active {
			g.held[g.mask[j]] += g.gpus[j] * (level - g.level[j]) / g.beta[j]
			g.level[j] = level
			if g.beta[j] > level*(1+1e-12) && !full(g.mask[j]) {
				still = append(still, j)
			}
		}
		if len(still) == len(active) { // numerical stall: no event fired
			still = still[:0]
		}
		active = still
	}
}

// load returns, for every set S of types, the GPU time in use by the rows
// inside S and the rate at which the active rows inside S draw more per
// unit of level.
func (g *gpuTime) load(active []int) (used, rate []float64) {
	used = slices.Clone(g.held)
	rate = make([]float64, len(g.cap))
	for _, j := range active {
		rate[g.mask[j]] += g.gpus[j] / g.beta[j]
	}
	return subsetSums(used, g.k), subsetSums(rate, g.k)
}

// full reports whether a row's set of types lies inside a set left without
// room once the active rows have drawn rate·step more.
func (g *gpuTime) full(used, rate []float64, step float64) func(mask int) bool {
	var sets []int
	for s := 1; s < len(used); s++ {
		if rate[s] > 0 && g.cap[s]-used[s]-rate[s]*step <= 1e-9*g.cap[s] {
			sets = append(sets, s)
		}
	}
	return func(m int) bool {
		return slices.ContainsFunc(sets, func(s int) bool { return m&s == m })
	}
}

// agnosticMaxMin is prog.MaximizeMin(ctx, terms, tieBreak) for an agnostic
// program without pairs: its terms are beta[j]·x_j, in row order, for the
// rows j where beta[j] is not 0, and tieBreak is empty or the sum of the
// terms, each counted once per member of its row. It is solved by structure
// (gpuTime), which fills leftover time even when tieBreak is empty; where
// that does not apply, by LP.
func agnosticMaxMin(ctx context.Context, prog *allocation.Program, beta []float64,
	terms []allocation.Expr, tieBreak allocation.Expr) (*allocation.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, ok := structured(prog, beta, func(g *gpuTime) ([]float64, float64) {
		t := g.maxMin()
		return g.fill(t), t
	})
	if ok {
		return res, nil
	}
	return prog.MaximizeMin(ctx, terms, tieBreak)
}

// structured returns the allocation that solve finds on the structure of
// prog and beta (see newGPUTime), with the level solve reports as its
// Objective, and reports whether the structure applied. The time is split
// across types by proportionalSplit; should that not fit, it reports false.
func structured(prog *allocation.Program, beta []float64, solve func(*gpuTime) ([]float64, float64)) (*allocation.Result, bool) {
	g, ok := newGPUTime(prog, beta)
	if !ok {
		return nil, false
	}
	x, level := solve(g)
	res := &allocation.Result{Objective: level, X: zeros(len(x), g.k), Engine: byStructure}
	for j, v := range x {
		if k := firstBit(g.mask[j]); k >= 0 {
			res.X[j][k] = v
		}
	}
	if !proportionalSplit(prog, res.X) {
		return nil, false
	}
	return res, true
}

// firstBit returns the lowest set bit of m, or -1.
func firstBit(m int) int {
	for k := 0; m != 0; k++ {
		if m&(1<<k) != 0 {
			return k
		}
	}
	return -1
}
