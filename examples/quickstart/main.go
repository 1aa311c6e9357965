// Quickstart allocates a small heterogeneous cluster among three jobs with
// Gavel's max-min fairness, aware and agnostic of GPU types, and prints each
// job's time shares, effective throughput and where it runs in the next
// round.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/gavel"
)

func main() {
	snap := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "node-a", Accelerator: "v100", GPUs: 2},
			{ID: "node-b", Accelerator: "k80", GPUs: 4},
		}},
		Jobs: []policy.Job{
			{ID: "resnet", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 10, "k80": 2}},
			{ID: "lstm", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 6, "k80": 4}},
			{ID: "bert", GPUs: 2, Throughput: map[allocation.Accelerator]float64{"v100": 8, "k80": 0}},
		},
	}
	for _, name := range []string{"gavel.las", "gavel.las-agnostic"} {
		p, err := policy.New(name, nil)
		if err != nil {
			log.Fatal(err)
		}
		d, err := p.Allocate(context.Background(), snap)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (objective %.3f)\n", name, d.Objective)
		for _, job := range snap.Jobs {
			var y float64
			for acc, x := range d.Allocation[job.ID].Shares {
				y += x * job.Throughput[acc]
			}
			fmt.Printf("  %-7s v100 %.3f  k80 %.3f  -> %.2f steps/s; next round: %v\n", job.ID,
				d.Allocation.Share(job.ID, "v100"), d.Allocation.Share(job.ID, "k80"), y, d.Placement[job.ID])
		}
	}
}
