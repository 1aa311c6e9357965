package themis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/themis"
)

// Three one-GPU jobs share two GPUs. With f = 0.5 the two that waited
// longest bid; each would get a whole GPU, but pays half of it, and the
// payments go to the third.
func Example() {
	job := func(id string, arrival time.Duration) policy.Job {
		return policy.Job{ID: id, GPUs: 1, Arrival: arrival, StepsTotal: 1000,
			Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	}
	f := 0.5
	p := &themis.Themis{Filter: &f}
	d, err := p.Allocate(context.Background(), &policy.Snapshot{
		Now:     time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s0", Accelerator: "v100", GPUs: 2}}},
		Jobs:    []policy.Job{job("old", 0), job("mid", 10*time.Minute), job("new", 50*time.Minute)},
	})
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"old", "mid", "new"} {
		fmt.Printf("%s: share %.2f\n", id, d.Allocation[id].Shares["v100"])
	}
	fmt.Println("leases expire at", d.Wake)
	// Output:
	// old: share 0.50
	// mid: share 0.50
	// new: share 1.00
	// leases expire at 1h20m0s
}
