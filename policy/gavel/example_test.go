package gavel_test

import (
	"context"
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
)

// Two single-GPU jobs share one V100 and two K80s. Job A gains 4× from the
// V100, job B only 2×, so A gets more V100 time, and both end up with the
// same throughput relative to an equal share of the cluster.
func ExampleMaxMinFairness() {
	snap := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "node-1", Accelerator: "v100", GPUs: 1},
			{ID: "node-2", Accelerator: "k80", GPUs: 2},
		}},
		Jobs: []policy.Job{
			{ID: "A", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 4, "k80": 1}},
			{ID: "B", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 2, "k80": 1}},
		},
	}
	d, err := (&gavel.MaxMinFairness{}).Allocate(context.Background(), snap)
	if err != nil {
		panic(err)
	}
	fmt.Printf("objective %.4f\n", d.Objective)
	for _, id := range d.Allocation.IDs() {
		s := d.Allocation[id].Shares
		fmt.Printf("%s: v100 %.4f, k80 %.4f\n", id, s["v100"], s["k80"])
	}
	// Output:
	// objective 1.1667
	// A: v100 0.4444, k80 0.5556
	// B: v100 0.5556, k80 0.4444
}

// Policies are found by name, with an optional JSON configuration.
func ExampleMaxMinFairness_registry() {
	p, err := policy.New("gavel.las", []byte(`{"agnostic": true}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name())
	// Output: gavel.las-agnostic
}
