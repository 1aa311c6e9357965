package lp_test

import (
	"context"
	"fmt"

	"github.com/dlsched/dlsched/internal/lp"
)

// Maximize x + y subject to x + 2y ≤ 4 and 3x + y ≤ 6, with x, y ≥ 0.
func Example() {
	var p lp.Problem
	p.Sense = lp.Maximize
	x := p.AddVar(0, lp.Inf, 1)
	y := p.AddVar(0, lp.Inf, 1)
	p.AddRow(-lp.Inf, 4, lp.Term{Var: x, Coef: 1}, lp.Term{Var: y, Coef: 2})
	p.AddRow(-lp.Inf, 6, lp.Term{Var: x, Coef: 3}, lp.Term{Var: y, Coef: 1})

	sol, err := lp.Default().Solve(context.Background(), &p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("objective %.4f at x = %.4f, y = %.4f\n", sol.Objective, sol.X[x], sol.X[y])
	// Each extra unit of capacity in the first row is worth 0.4.
	fmt.Printf("duals %.4f %.4f\n", sol.Duals[0], sol.Duals[1])
	// Output:
	// objective 2.8000 at x = 1.6000, y = 1.2000
	// duals 0.4000 0.2000
}
