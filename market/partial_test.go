package market

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPartialHand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        Fisher
		fraction []float64
		alloc    [][]float64
		leftover []float64
	}{
		{
			// One buyer keeps everything.
			name:     "alone",
			m:        Fisher{Utilities: [][]float64{{1, 2}}},
			fraction: []float64{1}, alloc: [][]float64{{1, 1}}, leftover: []float64{0, 0},
		},
		{
			// Each buyer values only its own good: A* gives each its good, and
			// removing one buyer does not change the other's value, so c = 1
			// and nothing is left over.
			name:     "separate",
			m:        Fisher{Utilities: [][]float64{{1, 0}, {0, 1}}},
			fraction: []float64{1, 1}, alloc: [][]float64{{1, 0}, {0, 1}}, leftover: []float64{0, 0},
		},
		{
			// U = [[1, 1], [1, 1]]: A* gives each buyer value 1 (the solver
			// returns one good each). Without buyer 1, buyer 0 gets both goods,
			// value 2, so c_1 = V_0(A*)/V_0(A*_{−1}) = 1/2; symmetrically
			// c_0 = 1/2. Each keeps half its good; the leftover sums to 1.
			name:     "competitive",
			m:        Fisher{Utilities: [][]float64{{1, 1}, {1, 1}}, Supplies: []float64{1, 1}},
			fraction: []float64{0.5, 0.5}, alloc: [][]float64{{0.5, 0}, {0, 0.5}}, leftover: []float64{0.5, 0.5},
		},
		{
			// U = [[2, 1], [1, 2]]: at p = [1, 1] A* is the identity with
			// V = [2, 2]. Without buyer 1, buyer 0 gets both goods, V_0 = 3, so
			// c_1 = 2/3; symmetrically c_0 = 2/3, and 1/3 of each good is left.
			name:     "asymmetric",
			m:        Fisher{Utilities: [][]float64{{2, 1}, {1, 2}}},
			fraction: []float64{2.0 / 3, 2.0 / 3}, alloc: [][]float64{{2.0 / 3, 0}, {0, 2.0 / 3}}, leftover: []float64{1.0 / 3, 1.0 / 3},
		},
		{
			// U = [[1, 1], [1, 0]] with budgets 1: buyer 1 wants only good 0.
			// A*: p = [1, 1], buyer 0 takes good 1, buyer 1 good 0, V = [1, 1].
			// Without buyer 1, buyer 0 gets both: V_0 = 2, so c_1 = 1/2.
			// Without buyer 0, buyer 1 gets good 0 (good 1 is discarded):
			// V_1 = 1, so c_0 = 1. Budgets are ignored.
			name:     "discarded good",
			m:        Fisher{Budgets: []float64{5, 7}, Utilities: [][]float64{{1, 1}, {1, 0}}},
			fraction: []float64{1, 0.5}, alloc: [][]float64{{0, 1}, {0.5, 0}}, leftover: []float64{0.5, 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.m.PartialAllocation(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			nearSlice(t, "fraction", p.Fraction, tc.fraction, 1e-12)
			nearSlice(t, "leftover", p.Leftover, tc.leftover, 1e-12)
			for i := range tc.alloc {
				nearSlice(t, "allocation row", p.Allocation[i], tc.alloc[i], 1e-12)
			}
		})
	}
}

func TestPartialRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ctx := context.Background()
	for k := range 20 {
		m := randomMarket(rng, 30, 6)
		m.Budgets = nil // ignored
		p, err := m.PartialAllocation(ctx)
		if err != nil {
			t.Fatalf("market %d: %v", k, err)
		}
		fair := Fisher{Budgets: ones(len(m.Utilities)), Utilities: m.Utilities, Supplies: m.Supplies}
		if err := fair.Check(p.Fair, 1e-9); err != nil {
			t.Errorf("market %d: fair allocation: %v", k, err)
		}
		for i, c := range p.Fraction {
			if !(c >= 0 && c <= 1) {
				t.Errorf("market %d: c_%d = %v", k, i, c)
			}
		}
		for j := range p.Leftover {
			sum := p.Leftover[j]
			for i := range p.Allocation {
				a := p.Allocation[i][j]
				if a > p.Fair.Allocation[i][j] || a < 0 {
					t.Errorf("market %d: buyer %d keeps %v of good %d, fair share %v", k, i, a, j, p.Fair.Allocation[i][j])
				}
				sum += a
			}
			if p.Leftover[j] < -1e-12 || math.Abs(sum-fair.supply(j)) > 1e-12*fair.supply(j) {
				t.Errorf("market %d: good %d: leftover %v, kept + leftover = %v, supply %v", k, j, p.Leftover[j], sum, fair.supply(j))
			}
		}
	}
}

func TestPartialInvalid(t *testing.T) {
	m := Fisher{Utilities: [][]float64{{1, 0}, {0, 0}}}
	if _, err := m.PartialAllocation(context.Background()); err == nil || err.Error() != "market: buyer 1: utilities: values no good" {
		t.Errorf("PartialAllocation = %v", err)
	}
	if _, err := (Fisher{}).PartialAllocation(context.Background()); err == nil || err.Error() != "market: utilities: no buyers" {
		t.Errorf("PartialAllocation = %v", err)
	}
}

func BenchmarkPartial50x4(b *testing.B) {
	m := sizedMarket(rand.New(rand.NewPCG(8, 9)), 50, 4)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.PartialAllocation(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
