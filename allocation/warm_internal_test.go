package allocation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/internal/lp"
)

// A warm start matches a pair's shares by the pair's job IDs and type, in
// whichever order and orientation the next program lists the jobs: started
// from the same record, a program over the same jobs in reverse order (so
// every pair's A and B swap) gets, share by share, the statuses the first
// program gets; a share of a pair with a new job starts at zero.
func TestWarmPairsByID(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := Cluster{Servers: []Server{{ID: "a", Accelerator: "k80", GPUs: 3}, {ID: "b", Accelerator: "v100", GPUs: 2}}}
	n := 9
	ids := make([]string, n)
	gpus := make([]int, n)
	tput := make([][]float64, n)
	for j := range n {
		ids[j], gpus[j] = fmt.Sprintf("j%d", j), 1
		tput[j] = []float64{0.2 + rng.Float64(), 0.5 + rng.Float64()}
	}
	var pairs []Pair
	for a := range n {
		for b := a + 1; b < n; b++ {
			pairs = append(pairs, Pair{A: a, B: b, ThroughputA: []float64{0.8 * tput[a][0], 0.9 * tput[a][1]}, ThroughputB: []float64{0.8 * tput[b][0], 0.7 * tput[b][1]}})
		}
	}
	w := new(Warm)
	first := NewProgram(c, gpus, tput, pairs...)
	first.Remember(w, ids)
	exprs := make([]Expr, n)
	for j := range exprs {
		exprs[j] = first.Throughput(j)
	}
	if _, err := first.MaximizeMin(context.Background(), exprs, Expr{}); err != nil {
		t.Skip(err) // the pure-Go engine may refuse it; the mapping is the same
	}
	if w.stages["max-min"] == nil {
		t.Skip("the engine reports no basis to start from")
	}

	// The same jobs in reverse, and a new job that pairs with all of them.
	m := n + 1
	rev := func(j int) int { return n - 1 - j } // first's index → second's
	ids2, gpus2, tput2 := make([]string, m), make([]int, m), make([][]float64, m)
	for j := range n {
		ids2[rev(j)], gpus2[rev(j)], tput2[rev(j)] = ids[j], 1, tput[j]
	}
	ids2[n], gpus2[n], tput2[n] = "new", 1, []float64{1, 1}
	var pairs2 []Pair
	for _, pr := range pairs {
		pairs2 = append(pairs2, Pair{A: rev(pr.B), B: rev(pr.A), ThroughputA: pr.ThroughputB, ThroughputB: pr.ThroughputA})
	}
	for j := range n {
		pairs2 = append(pairs2, Pair{A: j, B: n, ThroughputA: []float64{0.5, 0.5}, ThroughputB: []float64{0.5, 0.5}})
	}
	second := NewProgram(c, gpus2, tput2, pairs2...)
	second.Remember(w, ids2)

	got := pairStarts(second, "max-min")
	want := pairStarts(first, "max-min")
	moved := 0
	for key, st := range got {
		if slices.Contains(key[:2], "new") {
			if st != lp.AtLower {
				t.Errorf("share %v of a new pair starts %v, want at lower", key, st)
			}
			continue
		}
		if st != want[key] {
			t.Errorf("share %v starts %v, the first program's %v", key, st, want[key])
		}
		if st != lp.AtLower {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no pair share off zero: the test checks nothing")
	}
}

// pairStarts returns the starting status of each of p's pair shares for a
// max-min stage, keyed by the pair's IDs in ID order and the type.
func pairStarts(p *Program, stage string) map[[3]string]lp.BasisStatus {
	prob := p.prob.Clone(1, 0, 0)
	prob.AddVar(-lp.Inf, lp.Inf, 1) // t, as MaximizeMin adds it
	exprs := make([]Expr, len(p.gpus))
	for j := range exprs {
		exprs[j] = p.Throughput(j)
	}
	lay := p.layout(prob.NumVars(), p.exprPlaces(exprs))
	b := p.start(stage, lay)
	out := make(map[[3]string]lp.BasisStatus)
	for c, row := range p.px {
		for k, v := range row {
			if v >= 0 {
				a, bb := p.ids[p.pairs[c].A], p.ids[p.pairs[c].B]
				if bb < a {
					a, bb = bb, a
				}
				out[[3]string{a, bb, string(p.types[k])}] = b.Vars[v]
			}
		}
	}
	return out
}
