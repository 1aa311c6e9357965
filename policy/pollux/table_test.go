package pollux

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// The memoized terms of the fitness equal the goodput model's, on random
// fitted, unfitted and rigid jobs and random placements, in and out of the
// table's range, asked once or again, for several p: the model tells node
// counts apart only as nodeClass does.
func TestTableMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	perf := throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}
	s := &policy.Snapshot{Now: time.Hour}
	for i := range 24 {
		s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("n%02d", i), Accelerator: "t4", GPUs: 8})
	}
	for i := range 16 {
		j := policy.Job{ID: fmt.Sprintf("j%02d", i), Arrival: time.Duration(r.IntN(3600)) * time.Second}
		switch i % 4 {
		case 0:
			j.GPUs = 1 + r.IntN(8)
		case 1:
			j.Elastic = &policy.Elastic{BatchSize: 128, MaxBatchSize: 1 << (8 + r.IntN(8)), LocalBatchMin: 1}
		default:
			j.Elastic = &policy.Elastic{BatchSize: 32 << r.IntN(3), MaxBatchSize: 256 << r.IntN(5), LocalBatchMin: 8 << r.IntN(3),
				LocalBatchMax: 256, Perf: perf, GradSqr: 0.00136, GradVar: 0.000502 * (0.1 + 100*r.Float64()), Restarts: r.IntN(3)}
		}
		s.Jobs = append(s.Jobs, j)
	}
	for _, p := range []float64{-1, 1e-9, 0.5, 1} {
		cached := newProblem(s, &Pollux{P: p})
		cached.p = p // p = 1e-9 stands for the geometric mean; test the log too
		if p == 1e-9 {
			cached.p = 0
		}
		for range 3000 {
			j := r.IntN(len(s.Jobs))
			nodes, replicas := r.IntN(20), r.IntN(cached.jobs[j].maxReplicas+4)
			restarted := r.IntN(2) == 0
			fresh := newProblem(s, &Pollux{P: p})
			fresh.p = cached.p
			want := fresh.term(j, nodes, replicas, restarted)
			if got := cached.cachedTerm(j, nodes, replicas, restarted); got != want {
				t.Fatalf("p %v, job %d on %d nodes × %d GPUs, restarted %v: cached term %v, model %v", p, j, nodes, replicas, restarted, got, want)
			}
		}
	}
}
