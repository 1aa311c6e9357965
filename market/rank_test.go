package market

import (
	"cmp"
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// Re-ranking by hand: two rounds of 2 GPUs. The first packing, by budget
// then index with the most free rounds first, puts the gang A (width 2,
// index 0) in round 0 and the priority job B (budget 5) in round 1 with C.
// Re-ranked, B takes round 0, so A (which then could not fit beside it)
// takes round 1, and C joins B: B's mean round index drops from 1 to 0.
func TestPackRanksByPriority(t *testing.T) {
	v := Volatile{Rounds: 2, Capacity: 2}
	buyers := []Buyer{{Budget: 1, Width: 2}, {Budget: 5, Width: 1}, {Budget: 1, Width: 1}}
	plan := Plan{Counts: []int{1, 1, 1}}
	if err := v.pack(context.Background(), buyers, &plan); err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{1, 2}, {0}}; !reflect.DeepEqual(plan.Schedule, want) {
		t.Errorf("schedule %v, want %v", plan.Schedule, want)
	}
}

// Over random markets, re-ranking never changes what the first packing
// gave each buyer and never overfills a round.
func TestPackKeepsCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		v := Volatile{Rounds: 1 + r.IntN(8), Capacity: 1 + r.IntN(8)}
		buyers := make([]Buyer, 1+r.IntN(10))
		counts := make([]int, len(buyers))
		for i := range buyers {
			buyers[i] = Buyer{Budget: float64(1 + r.IntN(3)), Width: 1 + r.IntN(v.Capacity), Remaining: float64(r.IntN(5))}
			counts[i] = r.IntN(v.Rounds + 1)
		}
		order := make([]int, len(buyers))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(buyers[b].Budget, buyers[a].Budget) })
		var pk picker
		_, first := v.place(buyers, counts, order, v.capacity(), pk.mostFree)
		plan := Plan{Counts: slices.Clone(counts)}
		if err := v.pack(context.Background(), buyers, &plan); err != nil {
			t.Fatal(err)
		}
		got := make([]int, len(buyers))
		for k, run := range plan.Schedule {
			width := 0
			for _, i := range run {
				got[i]++
				width += buyers[i].Width
			}
			if width > v.Capacity {
				t.Fatalf("%+v %v: round %d over capacity: %v", v, buyers, k, run)
			}
		}
		if !slices.Equal(got, first) || !slices.Equal(plan.Counts, first) {
			t.Fatalf("%+v %v: rounds per buyer %v, counts %v; the first packing gave %v", v, buyers, got, plan.Counts, first)
		}
	}
}

// mostFree orders rounds as a stable sort by free GPUs, most first, does:
// on random counts, including ties, zeros, negatives and counts too
// spread for its buckets.
func TestMostFreeSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for trial := range 500 {
		free := make([]int, rng.IntN(40))
		top := []int{1, 4, 16, 1000}[trial%4]
		for i := range free {
			free[i] = rng.IntN(top + 1)
			if trial%7 == 0 && rng.IntN(5) == 0 {
				free[i] = -free[i]
			}
		}
		var pk picker
		want := slices.Clone(pk.earliest(free))
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(free[b], free[a]) })
		if got := pk.mostFree(free); !slices.Equal(got, want) {
			t.Fatalf("free %v: order %v, want %v", free, got, want)
		}
	}
}
