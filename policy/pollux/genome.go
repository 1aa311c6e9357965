package pollux

import (
	"math/rand"
	"slices"
)

// genome is one candidate allocation: a row-major jobs × nodes matrix of
// GPU counts, always repaired to satisfy every constraint.
type genome struct {
	pr *problem
	a  []int
	// used is the GPUs a holds on each node and fit its fitness, both left
	// by the last repair, which counts them anyway.
	used []int
	fit  float64
	// shared marks a matrix another genome may hold too: Clone shares it
	// and the first change copies it, since a child is mutated or crossed
	// right away but the best genome's clone never changes.
	shared bool
	// block numbers the matrices block a holds, from 1; 0 for a matrix
	// the search did not get from matrices.
	block int
}

// newGenome repairs a and wraps it.
func (pr *problem) newGenome(a []int, rng *rand.Rand) *genome {
	g := &genome{pr: pr, a: a, used: make([]int, len(pr.nodes))}
	g.repair(rng)
	return g
}

// Mutate applies the paper's three mutations, then repairs.
func (g *genome) Mutate(rng *rand.Rand) {
	if g.shared {
		a, used, block := g.pr.mats.get()
		copy(a, g.a)
		copy(used, g.used)
		g.a, g.used, g.shared, g.block = a, used, false, block
	}
	g.pr.mutate(g.a, g.pr.freeOf(g.used), rng)
	g.repair(rng)
}

// Crossover copies the mate's rows for the jobs before a random point into
// the receiver, then repairs it. Only the receiver changes.
func (g *genome) Crossover(m *genome, rng *rand.Rand) {
	n := len(g.pr.nodes)
	point := rng.Intn(len(g.pr.jobs))
	if g.shared {
		// Build the child in a new matrix rather than copy and overwrite.
		a, used, block := g.pr.mats.get()
		copy(a[point*n:], g.a[point*n:])
		g.a, g.used, g.shared, g.block = a, used, false, block
	}
	copy(g.a[:point*n], m.a[:point*n])
	g.repair(rng)
}

// Clone shares the matrix; whichever genome changes first copies it.
func (g *genome) Clone() *genome { return g.cloneInto(new(genome)) }

// cloneInto makes c a clone of g.
func (g *genome) cloneInto(c *genome) *genome {
	g.shared = true
	*c = *g
	return c
}

// matrices recycles the genomes' matrices and used vectors, each pair in
// one block. After a generation only the population and the best genome
// live on, so every other block can be reused: a search allocates about
// two populations' worth instead of a matrix per child.
type matrices struct {
	cells, nodes int
	made         [][]int
	spare        []int // numbers of blocks free for get
	// live marks, by block number, the blocks a recycle found held.
	live []bool
}

// get returns a matrix and a used vector, with any content, and their
// block's number.
func (m *matrices) get() (a, used []int, block int) {
	if k := len(m.spare); k > 0 {
		block, m.spare = m.spare[k-1], m.spare[:k-1]
	} else {
		m.made = append(m.made, make([]int, m.cells+m.nodes))
		block = len(m.made)
	}
	b := m.made[block-1]
	return b[:m.cells:m.cells], b[m.cells:], block
}

// recycle makes every block spare that neither the population nor best
// holds.
func (m *matrices) recycle(pop []*genome, best *genome) {
	m.live = slices.Grow(m.live[:0], len(m.made)+1)[:len(m.made)+1]
	clear(m.live)
	for _, g := range pop {
		m.live[g.block] = true
	}
	m.live[best.block] = true
	m.spare = m.spare[:0]
	for b := 1; b <= len(m.made); b++ {
		if !m.live[b] {
			m.spare = append(m.spare, b)
		}
	}
}

// repair repairs the matrix and records its GPUs per node and fitness.
func (g *genome) repair(rng *rand.Rand) {
	g.pr.repair(g.a, g.used, rng)
	g.fit = g.pr.repairedFitness(g.a)
}

// Probabilities of the paper's reset and shrink mutations.
const (
	resetRate  = 0.1
	shrinkRate = 0.1
)

// mutate changes a row by row: a row is reset to the job's current
// allocation with probability 0.1; a row is shrunk with probability 0.1 by
// zeroing each of its elements with probability 0.1; and every row grows:
// each node where one more worker's GPUs are free is picked with
// probability p₁ + p₂ − p₁p₂, where p₁ is one over the number of such nodes
// and p₂ one over the number of those the job already uses (if it uses this
// one), and its count is redrawn uniformly among the multiples of the
// worker size between its current value and the node's size. With workers
// of one GPU these are the paper's mutations.
//
// free holds each node's GPUs that no row of a holds; mutate updates it.
func (pr *problem) mutate(a, free []int, rng *rand.Rand) {
	n := len(pr.nodes)
	open := pr.openNodes(free)
	for j := range pr.jobs {
		row := a[j*n : (j+1)*n]
		open = pr.resetShrink(j, row, free, open, rng)
		open = pr.grow(j, row, free, open, rng)
	}
}

// freeGPUs returns each node's GPUs that no row of a holds, in pr.free.
func (pr *problem) freeGPUs(a []int) []int {
	n := len(pr.nodes)
	free := pr.free
	copy(free, pr.gpus)
	for j := range pr.jobs {
		for k, r := range a[j*n : (j+1)*n] {
			free[k] -= r
		}
	}
	return free
}

// freeOf returns each node's GPUs that used leaves, in pr.free.
func (pr *problem) freeOf(used []int) []int {
	free := pr.free
	for k, u := range used {
		free[k] = pr.gpus[k] - u
	}
	return free
}

// openNodes returns the nodes with a GPU free, in order, in pr.open: the
// only nodes where a row can grow.
func (pr *problem) openNodes(free []int) []int {
	open := pr.open[:0]
	for k, f := range free {
		if f > 0 {
			open = append(open, k)
		}
	}
	return open
}

// resetShrink applies the reset and shrink mutations to job j's row and
// returns to free what they take. It returns the open nodes, listed anew
// if the row changed.
func (pr *problem) resetShrink(j int, row, free, open []int, rng *rand.Rand) []int {
	changed := false
	if rng.Float64() < resetRate {
		for k, c := range pr.jobs[j].current {
			free[k] += row[k] - c
			row[k] = c
		}
		changed = true
	}
	if rng.Float64() < shrinkRate {
		for k := range row {
			if rng.Float64() < shrinkRate {
				free[k] += row[k]
				row[k] = 0
			}
		}
		changed = true
	}
	if !changed {
		return open
	}
	return pr.openNodes(free)
}

// grow applies the grow mutation to job j's row, on the open nodes where a
// worker's GPUs are free, and takes what it adds from free. It returns the
// open nodes that still have a GPU free.
func (pr *problem) grow(j int, row, free, open []int, rng *rand.Rand) []int {
	b := &pr.jobs[j]
	w := b.worker
	fits, on := 0, 0
	still := open[:0]
	for _, k := range open {
		if free[k] <= 0 {
			continue
		}
		still = append(still, k)
		if b.allowed[k] && free[k] >= w {
			fits++
			if row[k] > 0 {
				on++
			}
		}
	}
	for _, k := range still {
		if !b.allowed[k] || free[k] < w {
			continue
		}
		p1 := 1 / float64(fits)
		p2 := 0.0
		if row[k] > 0 {
			p2 = 1 / float64(on)
		}
		if rng.Float64() < p1+p2-p1*p2 {
			// Workers that fit on the node beyond the row's; repair trims
			// what other jobs hold.
			more := max(pr.gpus[k]/w*w-row[k], 0) / w
			add := w * rng.Intn(more+1)
			row[k] += add
			free[k] -= add
		}
	}
	return still
}

// repair makes a satisfy every constraint, in the paper's order, after
// restricting each job to the nodes it can use, to whole workers on each
// node (rounding down) and to one accelerator type:
//
//  1. interference avoidance: on each node, only the first job in priority
//     order that spans several nodes keeps its GPUs there;
//  2. each job's largest GPU count, trimming its nodes in random order;
//  3. node capacity in whole workers, jobs earlier in priority order
//     first;
//  4. a job left with fewer GPUs than its smallest count gets none.
//
// It leaves the GPUs used on each node in used, and each row's nodes and
// GPUs in pr.spans and pr.sums. Only the first step reads every cell: it
// lists each row's nonzero cells for the others.
func (pr *problem) repair(a, used []int, rng *rand.Rand) {
	n := len(pr.nodes)
	pr.nz = pr.nz[:0]
	for j := range pr.jobs {
		pr.spans[j], pr.sums[j] = pr.clean(j, a[j*n:(j+1)*n])
		pr.nzEnd[j] = len(pr.nz)
	}
	if pr.avoid {
		pr.avoidInterference(a)
	}
	pr.trimJobs(a, rng)
	pr.trimNodes(a, used)
}

// nonzero returns the nodes where job j's row held GPUs after clean, in
// order; some may hold none since.
func (pr *problem) nonzero(j int) []int {
	start := 0
	if j > 0 {
		start = pr.nzEnd[j-1]
	}
	return pr.nz[start:pr.nzEnd[j]]
}

// clean keeps job j's row to the nodes it can use, whole workers and one
// accelerator type, lists its nonzero cells in pr.nz, and returns the nodes
// and GPUs the row then holds.
func (pr *problem) clean(j int, row []int) (nodes, replicas int) {
	b := &pr.jobs[j]
	w := b.worker
	first, mixed := -1, false
	for k, r := range row {
		if r == 0 {
			continue
		}
		if r < 0 || !b.allowed[k] {
			row[k] = 0
			continue
		}
		if w > 1 && r%w != 0 {
			r -= r % w
			row[k] = r
			if r == 0 {
				continue
			}
		}
		if first < 0 {
			first = pr.typ[k]
		} else if pr.typ[k] != first {
			mixed = true
		}
		nodes++
		replicas += r
		pr.nz = append(pr.nz, k)
	}
	if mixed {
		return pr.oneType(row)
	}
	return nodes, replicas
}

// oneType keeps, of a row on several accelerator types, the type where it
// holds the most GPUs (the first such type in node order), and returns the
// nodes and GPUs left.
func (pr *problem) oneType(row []int) (nodes, replicas int) {
	count := pr.count
	clear(count)
	for k, r := range row {
		count[pr.typ[k]] += r
	}
	keep := pr.typ[firstUsed(row)]
	for k, r := range row { // node order breaks ties
		if r > 0 && count[pr.typ[k]] > count[keep] {
			keep = pr.typ[k]
		}
	}
	for k, r := range row {
		if pr.typ[k] != keep {
			row[k] = 0
		} else if r > 0 {
			nodes++
			replicas += r
		}
	}
	return nodes, replicas
}

// avoidInterference lets, on each node, only the first job in priority
// order that spans several nodes keep its GPUs there.
func (pr *problem) avoidInterference(a []int) {
	n := len(pr.nodes)
	owner := pr.owner
	for k := range owner {
		owner[k] = -1
	}
	for j := range pr.jobs {
		if pr.spans[j] < 2 {
			continue
		}
		row := a[j*n : (j+1)*n]
		for _, k := range pr.nonzero(j) {
			switch r := row[k]; {
			case r == 0:
			case owner[k] < 0:
				owner[k] = j
			case owner[k] != j:
				row[k] = 0
				pr.spans[j]--
				pr.sums[j] -= r
			}
		}
	}
}

// trimJobs cuts each job above its largest GPU count down to it, keeping
// its nodes in random order.
func (pr *problem) trimJobs(a []int, rng *rand.Rand) {
	n := len(pr.nodes)
	var perm []int
	for j := range pr.jobs {
		left := pr.jobs[j].maxReplicas
		if pr.sums[j] <= left {
			continue
		}
		if perm == nil {
			perm = pr.perm
			for k := range perm {
				perm[k] = k
			}
		}
		rng.Shuffle(n, func(x, y int) { perm[x], perm[y] = perm[y], perm[x] })
		row := a[j*n : (j+1)*n]
		for _, k := range perm {
			row[k] = min(row[k], left)
			left -= row[k]
		}
		pr.sums[j] = pr.jobs[j].maxReplicas
	}
}

// trimNodes fits the rows into the nodes' capacity in whole workers, jobs
// in priority order, and empties a row left below its smallest count. It
// leaves the GPUs used on each node in used and each row's final nodes and
// GPUs in pr.spans and pr.sums.
func (pr *problem) trimNodes(a, used []int) {
	n := len(pr.nodes)
	clear(used)
	for j := range pr.jobs {
		if pr.sums[j] == 0 {
			pr.spans[j] = 0
			continue
		}
		row := a[j*n : (j+1)*n]
		w := pr.jobs[j].worker
		nodes, total := 0, 0
		for _, k := range pr.nonzero(j) {
			r := row[k]
			if r == 0 {
				continue
			}
			room := pr.gpus[k] - used[k]
			if w > 1 {
				room = room / w * w
			}
			if r > room {
				r = room
				row[k] = r
			}
			used[k] += r
			total += r
			if r > 0 {
				nodes++
			}
		}
		if total > 0 && total < pr.jobs[j].minReplicas {
			for _, k := range pr.nonzero(j) {
				used[k] -= row[k]
				row[k] = 0
			}
			nodes, total = 0, 0
		}
		pr.spans[j], pr.sums[j] = nodes, total
	}
}

// firstUsed returns the first node a row uses, or 0.
func firstUsed(row []int) int {
	for k, r := range row {
		if r > 0 {
			return k
		}
	}
	return 0
}
