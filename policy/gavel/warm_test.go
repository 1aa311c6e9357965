package gavel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// evolve returns the next snapshot of a sequence: up to two jobs finish
// and up to two arrive, drawn like randomSnapshot's, with fresh IDs.
func evolve(rng *rand.Rand, s *policy.Snapshot, step int) *policy.Snapshot {
	next := &policy.Snapshot{Now: s.Now + 360e9, Cluster: s.Cluster, Jobs: slices.Clone(s.Jobs)}
	for range rng.IntN(3) {
		if len(next.Jobs) > 1 {
			i := rng.IntN(len(next.Jobs))
			next.Jobs = slices.Delete(next.Jobs, i, i+1)
		}
	}
	born := randomSnapshot(rng, rng.IntN(3), len(s.Cluster.Types()), s.Cluster.GPUs(s.Cluster.Types()[0]))
	for i, j := range born.Jobs {
		j.ID = fmt.Sprintf("new-%03d-%d", step, i)
		j.StepsTotal = float64(1000 * (1 + rng.IntN(7)))
		next.Jobs = append(next.Jobs, j)
	}
	return next
}

// warmPolicies are the LP policies with warm starts, each as a pair: one
// that warm-starts and one that does not.
func warmPolicies(solver allocation.Solver) map[string][2]policy.Policy {
	pair := func(mk func(warm bool) policy.Policy) [2]policy.Policy { return [2]policy.Policy{mk(true), mk(false)} }
	return map[string][2]policy.Policy{
		"las":            pair(func(w bool) policy.Policy { return &MaxMinFairness{Solver: solver, Warm: w} }),
		"ftf":            pair(func(w bool) policy.Policy { return &FinishTimeFairness{Solver: solver, Warm: w} }),
		"makespan":       pair(func(w bool) policy.Policy { return &Makespan{Solver: solver, Warm: w} }),
		"max-throughput": pair(func(w bool) policy.Policy { return &MaxThroughput{Solver: solver, Warm: w} }),
		"min-cost": pair(func(w bool) policy.Policy {
			return &MinCost{Prices: map[allocation.Accelerator]float64{"k80": 1, "p100": 2, "v100": 4}, Solver: solver, Warm: w}
		}),
		"water-filling": pair(func(w bool) policy.Policy { return &WaterFilling{Solver: solver, Warm: w} }),
		"hierarchical": pair(func(w bool) policy.Policy {
			return &Hierarchical{Tenants: map[string]Tenant{"t0": {Weight: 2}, "t1": {Weight: 1}}, Solver: solver, Warm: w}
		}),
	}
}

// Warm = cold: over sequences of snapshots where jobs come and go, a policy
// that starts each call from the last one's bases reaches the optimum a cold
// policy reaches: the same objective within CLP's tolerance, and a valid
// allocation. (The pure-Go engine takes no start.)
func TestWarmEqualsCold(t *testing.T) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		t.Skip("only CLP warm-starts")
	}
	for _, n := range []int{40, 300} {
		for name, ps := range warmPolicies(allocation.CLP) {
			t.Run(fmt.Sprintf("%s/jobs=%d", name, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(len(name))))
				s := randomSnapshot(rng, n, 3, n/3)
				for j := range s.Jobs {
					s.Jobs[j].StepsTotal = float64(1000 * (1 + j%7))
					s.Jobs[j].Tenant = fmt.Sprintf("t%d", j%2)
				}
				for step := range 20 {
					var obj [2]float64
					for i, p := range ps {
						d, err := p.Allocate(context.Background(), s)
						if err != nil {
							t.Fatalf("step %d: %v", step, err)
						}
						if err := d.Allocation.Validate(s.Cluster); err != nil {
							t.Fatalf("step %d: %v", step, err)
						}
						obj[i] = d.Objective
					}
					if math.Abs(obj[0]-obj[1]) > 1e-6*math.Max(1, math.Abs(obj[1])) {
						t.Errorf("step %d: warm objective %v, cold %v", step, obj[0], obj[1])
					}
					s = evolve(rng, s, step)
					for j := range s.Jobs {
						s.Jobs[j].Tenant = fmt.Sprintf("t%d", j%2)
					}
				}
			})
		}
	}
}

// BenchmarkWarm times gavel.las on BenchmarkLAS's setup when one job has
// arrived or left since the last call: cold, and warm-started from the last
// call's bases, with the default engine and, under purego/, the pure-Go
// one (both warm-start). Each /parts run times the same decisions built,
// solved and extracted, as BenchmarkLAS does.
func BenchmarkWarm(b *testing.B) {
	for _, solver := range []allocation.Solver{allocation.Auto, allocation.PureGo} {
		prefix := ""
		if solver == allocation.PureGo {
			prefix = "purego/"
		}
		for _, n := range []int{512, 2048} {
			s := randomSnapshot(rand.New(rand.NewPCG(uint64(n), 7)), n, 3, n/4)
			more := &policy.Snapshot{Cluster: s.Cluster, Jobs: append(slices.Clone(s.Jobs), policy.Job{
				ID: "arrival", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"k80": 0.3, "p100": 0.7, "v100": 1.1},
			})}
			for _, warm := range []bool{false, true} {
				b.Run(fmt.Sprintf("%sjobs=%d/warm=%v", prefix, n, warm), func(b *testing.B) {
					benchWarm(b, &MaxMinFairness{Warm: warm, Solver: solver}, s, more)
				})
				b.Run(fmt.Sprintf("%sjobs=%d/warm=%v/parts", prefix, n, warm), func(b *testing.B) {
					benchLAS(b, &MaxMinFairness{Warm: warm, Solver: solver}, more, s)
				})
			}
		}
	}
}

// benchWarm decides for s, then alternately for more and s.
func benchWarm(b *testing.B, p *MaxMinFairness, s, more *policy.Snapshot) {
	if _, err := p.Allocate(context.Background(), s); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		next := more
		if i%2 == 1 {
			next = s
		}
		if _, err := p.Allocate(context.Background(), next); err != nil {
			b.Fatal(err)
		}
	}
}

// policy.SetWarm reaches every registered LP policy of the package, also
// inside the Rounds that wraps it, and turns it off again; FIFO solves no
// LP and has no switch.
func TestSetWarmRegistered(t *testing.T) {
	n := 0
	for _, info := range policy.Registered() {
		if !strings.HasPrefix(info.Name, "gavel.") {
			continue
		}
		p, err := policy.New(info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		policy.SetWarm(p, true)
		if want := !strings.HasPrefix(info.Name, "gavel.fifo"); Warm(p) != want {
			t.Errorf("%s: warm %v after SetWarm(true), want %v", info.Name, Warm(p), want)
		}
		policy.SetWarm(p, false)
		if Warm(p) {
			t.Errorf("%s: still warm after SetWarm(false)", info.Name)
		}
		n++
	}
	if n < 15 {
		t.Errorf("%d gavel policies registered, want all of them", n)
	}
}
