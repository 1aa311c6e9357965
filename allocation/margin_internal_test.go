package allocation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Margin's second stage and capped's first reach the optimum the slack
// start does: the same t*, the same tie-break total, every term at the
// floor, shares within capacity. Margin holds every job here, so that it
// runs on small programs; the cases cover each of its paths: solved at
// once, jobs its prices bring in, and fixed plans that overfill a type;
// half of them from random prices, as warm starts keep them, rather than
// from the tie-break's optimum.
func TestMarginSameOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	var trace marginTrace
	capped := 0
	const cases = 300
	for i := range cases {
		cc := newCrashCase(r)
		for _, s := range Solvers() {
			fast := cc.program(s)
			fast.marginAll, fast.trace = true, &trace
			if i%2 == 1 { // far from the optimum: most fixed plans are wrong
				fast.Remember(&Warm{}, ids(len(cc.gpus)))
				random := make([]float64, len(fast.types))
				for k := range random {
					random[k] = r.Float64() * 10 / fast.capacity[k]
				}
				fast.keepPrices(random)
			}
			terms := cc.terms(fast)
			if terms == nil {
				continue
			}
			got, want := sameOptimum(t, i, cc, fast, terms)
			if got.Engine == byReach {
				capped++
				checkBottlenecks(t, i, got.Bottleneck, want.Bottleneck)
			}
		}
	}
	t.Logf("capped %d, margin %v (solved, LPs, infeasible, priced)", capped, trace)
	if capped < cases/10 || trace[traceSolved] < cases/2 || trace[traceInfeasible] == 0 || trace[tracePriced] == 0 {
		t.Errorf("capped %d of %d cases; margin solved %d, was infeasible %d times, priced %d jobs in",
			capped, cases, trace[traceSolved], trace[traceInfeasible], trace[tracePriced])
	}
}

// checkBottlenecks checks a capped result's bottlenecks against the LP's:
// at least one, and each one the LP's as well (whose duals may name more
// where the optimum is degenerate).
func checkBottlenecks(t *testing.T, i int, got, want []bool) {
	t.Helper()
	if !slices.Contains(got, true) {
		t.Errorf("case %d: no bottleneck", i)
	}
	for j, b := range got {
		if b && !want[j] {
			t.Errorf("case %d: expression %d is a bottleneck, but not the LP's", i, j)
		}
	}
}

// ids returns n job IDs.
func ids(n int) []string {
	out := make([]string, n)
	for j := range out {
		out[j] = fmt.Sprint("job-", j)
	}
	return out
}
