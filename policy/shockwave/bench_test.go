package shockwave

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
)

// BenchmarkPlan measures one planning call (forecasts, fair finish times,
// the market, the round's placement) at the paper's trace sizes: 120 jobs
// on 32 GPUs and 900 on 256.
func BenchmarkPlan(b *testing.B) {
	for _, size := range []struct{ jobs, servers int }{{120, 8}, {900, 64}} {
		r := rand.New(rand.NewPCG(9, 9))
		jobs := make([]policy.Job, size.jobs)
		for i := range jobs {
			jobs[i] = adaptive(fmt.Sprintf("j%03d", i), []int{1, 1, 1, 1, 1, 1, 2, 2, 2, 4}[r.IntN(10)], 10+r.IntN(200), r.IntN(10), 30+r.Float64()*200)
			jobs[i].Arrival = time.Duration(r.IntN(5000)) * time.Second
		}
		s := &policy.Snapshot{Now: 5000 * time.Second, Cluster: cluster(size.servers, 4), Jobs: jobs}
		b.Run(fmt.Sprintf("jobs=%d", size.jobs), func(b *testing.B) {
			for b.Loop() {
				p := &Shockwave{}
				if _, err := p.Allocate(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
