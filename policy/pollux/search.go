package pollux

import (
	"cmp"
	"context"
	"math/rand"
	"slices"
)

// crossRate is the probability that a child takes its mate's leading rows.
const crossRate = 0.9

// search is the genetic search of one decision. The population is kept
// best first, so a binary tournament's winner is simply the contestant
// with the lower index.
type search struct {
	pr   *problem
	rng  *rand.Rand
	pop  []*genome
	best *genome // the fittest genome any generation held
	kids []*genome
	// merged is the next population's scratch; spare holds the genomes a
	// generation dropped, whose structs the next children reuse.
	merged, spare []*genome
}

// evolve runs the search from the seeds (the rest of the first population
// is the current allocation, mutated) and returns the fittest genome it
// met and the last population, best first. It stops between children with
// ctx's error.
func (pr *problem) evolve(ctx context.Context, seeds [][]int, size, generations int, rng *rand.Rand) (best *genome, pop []*genome, err error) {
	s := &search{pr: pr, rng: rng}
	for i := range size {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var a []int
		if i < len(seeds) {
			a = slices.Clone(seeds[i])
		} else {
			a = pr.currentMatrix()
			pr.mutate(a, pr.freeGPUs(a), rng)
		}
		s.pop = append(s.pop, pr.newGenome(a, rng))
	}
	slices.SortStableFunc(s.pop, fitter)
	s.best = s.pop[0].Clone()
	for range generations {
		if err := s.generation(ctx); err != nil {
			return nil, nil, err
		}
	}
	return s.best, s.pop, nil
}

// fitter orders genomes best first.
func fitter(x, y *genome) int { return cmp.Compare(y.fit, x.fit) }

// generation breeds as many children as the population holds, in pairs of
// tournament winners, and keeps the best of parents and children.
func (s *search) generation(ctx context.Context) error {
	n := len(s.pop)
	s.kids = s.kids[:0]
	for len(s.kids) < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		first := s.tournament(-1)
		x, y := s.clone(s.pop[first]), s.clone(s.pop[s.tournament(first)])
		if s.rng.Float64() < crossRate {
			x.Crossover(y, s.rng)
		}
		x.Mutate(s.rng)
		s.kids = append(s.kids, x)
		if len(s.kids) < n {
			y.Mutate(s.rng)
			s.kids = append(s.kids, y)
		} else {
			s.spare = append(s.spare, y)
		}
	}
	s.survive()
	if fitter(s.pop[0], s.best) < 0 {
		s.best = s.pop[0].Clone()
	}
	s.pr.mats.recycle(s.pop, s.best)
	return nil
}

// survive keeps the n fittest of parents and children as the population,
// best first, children before parents of equal fitness, and makes the rest
// spare. The parents are sorted already, so only the children are sorted
// before the two lists merge.
func (s *search) survive() {
	n := len(s.pop)
	slices.SortStableFunc(s.kids, fitter)
	s.merged = s.merged[:0]
	i, j := 0, 0
	for i < len(s.kids) || j < n {
		if j == n || i < len(s.kids) && fitter(s.kids[i], s.pop[j]) <= 0 {
			s.merged = append(s.merged, s.kids[i])
			i++
		} else {
			s.merged = append(s.merged, s.pop[j])
			j++
		}
	}
	s.spare = append(s.spare, s.merged[n:]...)
	s.pop, s.merged = s.merged[:n], s.pop
}

// clone returns a clone of g in a spare struct when there is one.
func (s *search) clone(g *genome) *genome {
	k := len(s.spare)
	if k == 0 {
		return g.Clone()
	}
	c := s.spare[k-1]
	s.spare = s.spare[:k-1]
	return g.cloneInto(c)
}

// tournament returns the index of the fitter of two individuals drawn at
// random, without replacement, from the population less the one at skip
// (-1: none). With a single candidate it returns that one, and with none
// (a population of one) the one at skip.
func (s *search) tournament(skip int) int {
	m := len(s.pop)
	if skip >= 0 {
		m--
	}
	// at maps a draw among the m candidates to a population index.
	at := func(i int) int {
		if skip >= 0 && i >= skip {
			i++
		}
		return i
	}
	switch m {
	case 0:
		return skip
	case 1:
		return at(0)
	}
	i := s.rng.Intn(m)
	j := s.rng.Intn(m - 1)
	if j >= i {
		j++
	}
	return at(min(i, j))
}
