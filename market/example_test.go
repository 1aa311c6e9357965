package market_test

import (
	"context"
	"fmt"

	"github.com/dlsched/dlsched/market"
)

func ExampleFisher_Solve() {
	// Two buyers with equal budgets, each preferring a different good.
	m := market.Fisher{
		Budgets:   []float64{1, 1},
		Utilities: [][]float64{{2, 1}, {1, 2}},
	}
	e, err := m.Solve(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("prices %.3f\n", e.Prices)
	fmt.Printf("allocation %.3f\n", e.Allocation)
	fmt.Printf("utilities %.3f, log NSW %.4f\n", e.Utilities, e.LogNSW)
	fmt.Println("certificate:", m.Check(e, 1e-9))
	// Output:
	// prices [1.000 1.000]
	// allocation [[1.000 0.000] [0.000 1.000]]
	// utilities [2.000 2.000], log NSW 1.3863
	// certificate: <nil>
}

func ExampleFisher_PartialAllocation() {
	// Without the other, each buyer would get both goods (value 3 instead of
	// 2), so each keeps c = 2/3 of its proportional-fair bundle.
	m := market.Fisher{Utilities: [][]float64{{2, 1}, {1, 2}}}
	p, err := m.PartialAllocation(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("fractions %.4f\n", p.Fraction)
	fmt.Printf("kept %.4f\n", p.Allocation)
	fmt.Printf("leftover %.4f\n", p.Leftover)
	// Output:
	// fractions [0.6667 0.6667]
	// kept [[0.6667 0.0000] [0.0000 0.6667]]
	// leftover [0.3333 0.3333]
}
