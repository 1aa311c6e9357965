package pollux

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// The memoized speedup equals the goodput model's on random jobs and
// placements, in and out of the table's range, asked once or again.
func TestTableMatchesSpeedup(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	perf := throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}
	s := &policy.Snapshot{Now: time.Hour}
	for i := range 24 {
		s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("n%02d", i), Accelerator: "t4", GPUs: 8})
	}
	for i := range 12 {
		e := &policy.Elastic{BatchSize: 32 << r.IntN(3), MaxBatchSize: 256 << r.IntN(5), LocalBatchMin: 8 << r.IntN(3),
			LocalBatchMax: 256, Perf: perf, GradSqr: 0.00136, GradVar: 0.000502 * (0.1 + 100*r.Float64())}
		s.Jobs = append(s.Jobs, policy.Job{ID: fmt.Sprintf("j%02d", i), Elastic: e})
	}
	cached := newProblem(context.Background(), s, &Pollux{})
	for range 5000 {
		j := r.IntN(len(s.Jobs))
		nodes, replicas := r.IntN(tableNodes+4)-1, r.IntN(cached.jobs[j].maxReplicas+4)-1
		fresh := newProblem(context.Background(), s, &Pollux{}).jobs[j].speedup.At(nodes, replicas)
		if got := cached.speedup(j, nodes, replicas); got != fresh {
			t.Fatalf("job %d on %d nodes × %d GPUs: cached speedup %v, model %v", j, nodes, replicas, got, fresh)
		}
	}
}
