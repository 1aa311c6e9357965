package pollux

import (
	"context"
	"fmt"
	mathrand "math/rand"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// messySnapshot draws servers of two types and jobs of every kind, some of
// 2-GPU workers, some running where they may no longer fit.
func messySnapshot(r *rand.Rand) *policy.Snapshot {
	perf := throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}
	s := &policy.Snapshot{Now: time.Hour}
	types := []allocation.Accelerator{"t4", "v100"}
	for i := range 2 + r.IntN(10) {
		s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("s%02d", i), Accelerator: types[r.IntN(2)], GPUs: 2 * (1 + r.IntN(4))})
	}
	for i := range 1 + r.IntN(25) {
		j := policy.Job{ID: fmt.Sprintf("j%02d", i), Arrival: time.Duration(r.IntN(3600)) * time.Second, GPUsPerWorker: r.IntN(3)}
		w := j.Worker()
		switch r.IntN(3) {
		case 0:
			j.GPUs = w * (1 + r.IntN(2))
		case 1:
			j.Elastic = &policy.Elastic{BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64, MinGPUs: w * r.IntN(2)}
		default:
			j.Elastic = &policy.Elastic{BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64, LocalBatchMax: 256,
				Perf: perf, GradSqr: 0.00136, GradVar: 0.000502 * (0.1 + 100*r.Float64()), Restarts: r.IntN(3)}
		}
		if r.IntN(3) == 0 {
			j.Throughput = map[allocation.Accelerator]float64{types[r.IntN(2)]: 1}
		}
		for range r.IntN(3) {
			srv := s.Cluster.Servers[r.IntN(len(s.Cluster.Servers))]
			j.Placement = append(j.Placement, allocation.Assignment{Server: srv.ID, GPUs: w * (1 + r.IntN(srv.GPUs/w))})
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// A genome keeps the GPUs per node and the fitness its last repair
// counted, for mutate and Evaluate: after any sequence of crossovers and
// mutations they are its allocation's.
func TestGenomeKeeps(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for c := range 30 {
		s, _, err := begin(context.Background(), messySnapshot(r), leastElastic)
		if err != nil || len(s.Jobs) == 0 {
			continue
		}
		pr := newProblem(s, &Pollux{AllowInterference: c%3 == 0})
		rng := mathrand.New(mathrand.NewSource(int64(c)))
		var pop []*genome
		for range 6 {
			a := pr.currentMatrix()
			pr.mutate(a, pr.freeGPUs(a), rng)
			pop = append(pop, pr.newGenome(a, rng))
		}
		for range 100 {
			g := pop[r.IntN(len(pop))].Clone()
			if r.IntN(2) == 0 {
				g.Crossover(pop[r.IntN(len(pop))], rng)
			} else {
				g.Mutate(rng)
			}
			checkKept(t, pr, g)
			pop[r.IntN(len(pop))] = g
		}
	}
}

// checkKept checks what a genome keeps about its allocation.
func checkKept(t *testing.T, pr *problem, g *genome) {
	t.Helper()
	n := len(pr.nodes)
	used := make([]int, n)
	for i, x := range g.a {
		used[i%n] += x
	}
	if !slices.Equal(g.used, used) {
		t.Fatalf("used %v, allocation uses %v", g.used, used)
	}
	if err := pr.validate(g.a); err != nil {
		t.Fatal(err)
	}
	if f := pr.fitness(g.a); g.fit != f {
		t.Fatalf("kept fitness %v, allocation's %v", g.fit, f)
	}
}
