package shockwave_test

import (
	"context"
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/shockwave"
)

// Three new jobs share two GPUs. Every job is short next to the 40-minute
// window, so no plan can keep them all fair: Shockwave takes the
// λ-priority path. The short job a gains most welfare per round and the
// long job c leaves most work after the window, so they run first.
func Example() {
	job := func(id string, epochs int, seconds float64) policy.Job {
		return policy.Job{ID: id, GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1 / seconds},
			Adaptive: &policy.Adaptive{Regimes: []int{32, 64}, EpochSeconds: []float64{seconds, seconds / 2}, Epochs: epochs}}
	}
	p := &shockwave.Shockwave{}
	d, err := p.Allocate(context.Background(), &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s0", Accelerator: "v100", GPUs: 2}}},
		Jobs:    []policy.Job{job("a", 10, 60), job("b", 30, 60), job("c", 90, 60)},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("relaxed:", p.State.Relaxed)
	fmt.Println("first rounds:", p.State.Plan[:3])
	for _, id := range []string{"a", "b", "c"} {
		fmt.Printf("%s runs on %v\n", id, d.Placement[id])
	}
	// Output:
	// relaxed: true
	// first rounds: [[a c] [a c] [a c]]
	// a runs on [{s0 1}]
	// b runs on []
	// c runs on [{s0 1}]
}
