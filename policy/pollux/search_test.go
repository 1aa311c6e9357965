package pollux

import (
	"context"
	"math"
	mathrand "math/rand"
	"math/rand/v2"
	"slices"
	"testing"
)

// A binary tournament over a population sorted best first is won by the
// lower of two distinct indices drawn uniformly, so among m candidates the
// k-th best wins with probability (m−1−k)/C(m,2); the skipped individual
// never takes part unless it is the only one.
func TestTournament(t *testing.T) {
	const draws = 200_000
	for _, tc := range []struct{ size, skip int }{{6, -1}, {6, 0}, {6, 3}, {6, 5}, {2, -1}, {3, 1}} {
		s := &search{rng: mathrand.New(mathrand.NewSource(1)), pop: make([]*genome, tc.size)}
		wins := make([]int, tc.size)
		for range draws {
			wins[s.tournament(tc.skip)]++
		}
		var cand []int // candidates, best first
		for k := range tc.size {
			if k != tc.skip {
				cand = append(cand, k)
			}
		}
		m := len(cand)
		if tc.skip >= 0 && wins[tc.skip] != 0 {
			t.Errorf("size %d skip %d: the skipped individual won %d times", tc.size, tc.skip, wins[tc.skip])
		}
		for r, k := range cand {
			want := float64(m-1-r) / float64(m*(m-1)/2)
			if got := float64(wins[k]) / draws; math.Abs(got-want) > 0.005 {
				t.Errorf("size %d skip %d: individual %d wins %.4f, want %.4f", tc.size, tc.skip, k, got, want)
			}
		}
	}
	one := &search{rng: mathrand.New(mathrand.NewSource(1)), pop: make([]*genome, 1)}
	if a, b := one.tournament(-1), one.tournament(0); a != 0 || b != 0 {
		t.Errorf("population of one: tournaments gave %d and %d, want 0 and 0", a, b)
	}
	two := &search{rng: mathrand.New(mathrand.NewSource(1)), pop: make([]*genome, 2)}
	if a, b := two.tournament(0), two.tournament(1); a != 1 || b != 0 {
		t.Errorf("population of two: skipping 0 gave %d, skipping 1 gave %d", a, b)
	}
}

// Every generation keeps the population sorted best first and at its size,
// never loses its best fitness, holds only valid genomes whose kept counts
// are their own, and leaves best the fittest genome seen.
func TestGenerationKeeps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for c := range 20 {
		s, _, err := begin(context.Background(), messySnapshot(r), leastElastic)
		if err != nil || len(s.Jobs) == 0 {
			continue
		}
		pr := newProblem(s, &Pollux{})
		rng := mathrand.New(mathrand.NewSource(int64(c)))
		best, pop, err := pr.evolve(context.Background(), [][]int{pr.currentMatrix()}, 8, 0, rng)
		if err != nil {
			t.Fatal(err)
		}
		sr := &search{pr: pr, rng: rng, pop: pop, best: best}
		for g := range 15 {
			top := sr.pop[0].fit
			if err := sr.generation(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(sr.pop) != 8 || !slices.IsSortedFunc(sr.pop, fitter) {
				t.Fatalf("case %d generation %d: population of %d, sorted %v", c, g, len(sr.pop), slices.IsSortedFunc(sr.pop, fitter))
			}
			if sr.pop[0].fit < top || sr.best.fit < sr.pop[0].fit {
				t.Fatalf("case %d generation %d: best %v, top %v → %v", c, g, sr.best.fit, top, sr.pop[0].fit)
			}
			for _, x := range append(sr.pop, sr.best) {
				checkKept(t, pr, x)
			}
		}
	}
}

// A search cancelled before it starts returns ctx's error and no genome.
func TestEvolveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _, err := begin(context.Background(), messySnapshot(rand.New(rand.NewPCG(7, 8))), leastElastic)
	if err != nil || len(s.Jobs) == 0 {
		t.Skip("no jobs drawn")
	}
	pr := newProblem(s, &Pollux{})
	best, pop, err := pr.evolve(ctx, nil, 10, 10, mathrand.New(mathrand.NewSource(1)))
	if err != context.Canceled || best != nil || pop != nil {
		t.Errorf("evolve = %v, %d genomes, %v; want nil, 0, context.Canceled", best, len(pop), err)
	}
}

// The default p = −1 takes the mean's power as a division, which must give
// math.Pow's result bit for bit.
func TestHarmonicMean(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pr := &problem{p: -1, jobs: make([]job, 7)}
	for range 100_000 {
		total := math.Exp(r.Float64()*1400 - 700)
		if got, want := pr.mean(total), math.Pow(total/7, -1); got != want {
			t.Fatalf("mean(%v) = %v, math.Pow gives %v", total, got, want)
		}
	}
}

// survive keeps the n best of parents and children in the sort's own
// order, NaN fitness last, as a stable sort of children then parents would.
func TestSurviveOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fits := []float64{math.NaN(), 0, 0.5, 1, 1, 2}
	for range 1000 {
		s := &search{}
		for range 1 + r.IntN(6) {
			s.pop = append(s.pop, &genome{fit: fits[r.IntN(len(fits))]})
			s.kids = append(s.kids, &genome{fit: fits[r.IntN(len(fits))]})
		}
		slices.SortStableFunc(s.pop, fitter)
		want := slices.Concat(s.kids, s.pop)
		slices.SortStableFunc(want, fitter)
		want = want[:len(s.pop)]
		s.survive()
		if !slices.Equal(s.pop, want) {
			t.Fatalf("survivors %v, want %v", fitness(s.pop), fitness(want))
		}
	}
}

func fitness(gs []*genome) []float64 {
	var f []float64
	for _, g := range gs {
		f = append(f, g.fit)
	}
	return f
}
