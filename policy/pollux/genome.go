package pollux

import (
	"math/rand"
	"slices"

	"github.com/MaxHalford/eaopt"
)

// genome is one candidate allocation: a row-major jobs × nodes matrix of
// GPU counts, always repaired to satisfy every constraint.
type genome struct {
	pr *problem
	a  []int
}

// Evaluate returns the negated fitness, since eaopt minimizes. It fails
// once the search's context is done, which stops a long first generation.
func (g *genome) Evaluate() (float64, error) {
	if err := g.pr.ctx.Err(); err != nil {
		return 0, err
	}
	return -g.pr.fitness(g.a), nil
}

// Mutate applies the paper's three mutations, then repairs.
func (g *genome) Mutate(rng *rand.Rand) {
	g.pr.mutate(g.a, rng)
	g.pr.repair(g.a, rng)
}

// Crossover copies the mate's rows for the jobs before a random point into
// the receiver, then repairs it. Only the receiver changes: eaopt marks the
// mate unevaluated on a copy, so changing the mate would leave it with a
// stale fitness.
func (g *genome) Crossover(mate eaopt.Genome, rng *rand.Rand) {
	m := mate.(*genome)
	n := len(g.pr.nodes)
	point := rng.Intn(len(g.pr.jobs))
	copy(g.a[:point*n], m.a[:point*n])
	g.pr.repair(g.a, rng)
}

func (g *genome) Clone() eaopt.Genome {
	return &genome{pr: g.pr, a: slices.Clone(g.a)}
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
func (pr *problem) mutate(a []int, rng *rand.Rand) {
	n := len(pr.nodes)
	free := make([]int, n)
	for k, node := range pr.nodes {
		free[k] = node.GPUs
	}
	for i, r := range a {
		free[i%n] -= r
	}
	before := make([]int, n)
	for j := range pr.jobs {
		row := a[j*n : (j+1)*n]
		copy(before, row)
		if rng.Float64() < resetRate {
			copy(row, pr.jobs[j].current)
		}
		if rng.Float64() < shrinkRate {
			for k := range row {
				if rng.Float64() < shrinkRate {
					row[k] = 0
				}
			}
		}
		w := pr.jobs[j].worker
		fits, on := 0, 0
		for k := range row {
			if pr.jobs[j].allowed[k] && free[k]+before[k]-row[k] >= w {
				fits++
				if row[k] > 0 {
					on++
				}
			}
		}
		for k := range row {
			f := free[k] + before[k] - row[k]
			if !pr.jobs[j].allowed[k] || f < w {
				continue
			}
			p1 := 1 / float64(fits)
			p2 := 0.0
			if row[k] > 0 {
				p2 = 1 / float64(on)
			}
			if rng.Float64() < p1+p2-p1*p2 {
				// Workers that fit on the node beyond the row's; repair
				// trims what other jobs hold.
				more := max(pr.nodes[k].GPUs/w*w-row[k], 0) / w
				row[k] += w * rng.Intn(more+1)
			}
		}
		for k := range row {
			free[k] += before[k] - row[k]
		}
	}
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
func (pr *problem) repair(a []int, rng *rand.Rand) {
	n := len(pr.nodes)
	for j := range pr.jobs {
		row := a[j*n : (j+1)*n]
		mixed, first := false, -1
		for k := range row {
			if row[k] < 0 || !pr.jobs[j].allowed[k] {
				row[k] = 0
			}
			row[k] -= row[k] % pr.jobs[j].worker
			if row[k] > 0 {
				if first < 0 {
					first = pr.typ[k]
				}
				mixed = mixed || pr.typ[k] != first
			}
		}
		if mixed {
			count := make([]int, pr.types)
			for k, r := range row {
				count[pr.typ[k]] += r
			}
			keep := pr.typ[firstUsed(row)]
			for k, r := range row { // node order breaks ties
				if r > 0 && count[pr.typ[k]] > count[keep] {
					keep = pr.typ[k]
				}
			}
			for k := range row {
				if pr.typ[k] != keep {
					row[k] = 0
				}
			}
		}
	}
	if pr.avoid {
		owner := make([]int, n)
		for k := range owner {
			owner[k] = -1
		}
		for j := range pr.jobs {
			row := a[j*n : (j+1)*n]
			if spans(row) < 2 {
				continue
			}
			for k, r := range row {
				switch {
				case r == 0:
				case owner[k] < 0:
					owner[k] = j
				case owner[k] != j:
					row[k] = 0
				}
			}
		}
	}
	var perm []int
	for j := range pr.jobs {
		row := a[j*n : (j+1)*n]
		if sum(row) <= pr.jobs[j].maxReplicas {
			continue
		}
		if perm == nil {
			perm = make([]int, n)
			for k := range perm {
				perm[k] = k
			}
		}
		rng.Shuffle(n, func(x, y int) { perm[x], perm[y] = perm[y], perm[x] })
		left := pr.jobs[j].maxReplicas
		for _, k := range perm {
			row[k] = min(row[k], left)
			left -= row[k]
		}
	}
	used := make([]int, n)
	for j := range pr.jobs {
		row := a[j*n : (j+1)*n]
		total := 0
		w := pr.jobs[j].worker
		for k := range row {
			row[k] = min(row[k], (pr.nodes[k].GPUs-used[k])/w*w)
			used[k] += row[k]
			total += row[k]
		}
		if total > 0 && total < pr.jobs[j].minReplicas {
			for k := range row {
				used[k] -= row[k]
				row[k] = 0
			}
		}
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

// spans returns the number of nodes a row uses.
func spans(row []int) int {
	n := 0
	for _, r := range row {
		if r > 0 {
			n++
		}
	}
	return n
}
