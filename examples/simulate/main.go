// Simulate compares two policies on the same generated workload: Gavel's
// heterogeneity-aware max-min fairness and its agnostic twin, on a small
// cluster of V100s, P100s and K80s, and prints their average JCT, fairness
// and utilization.
package main

import (
	"context"
	"fmt"
	"github.com/dlsched/dlsched/workload"
	"log"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/gavel"
	"github.com/dlsched/dlsched/sim"
)

func main() {
	// 300 single-GPU jobs from Gavel's generator, arriving at 3 per hour.
	jobs, err := workload.Generator{Seed: 1, Jobs: 300, Rate: 3}.Generate()
	if err != nil {
		log.Fatal(err)
	}
	var cluster allocation.Cluster
	for _, acc := range []allocation.Accelerator{"v100", "p100", "k80"} {
		for i := range 2 {
			cluster.Servers = append(cluster.Servers, allocation.Server{
				ID: fmt.Sprintf("%s-%d", acc, i), Accelerator: acc, GPUs: 4,
			})
		}
	}
	fmt.Printf("%-20s %10s %10s %12s\n", "policy", "avg JCT", "worst FTF", "utilization")
	for _, name := range []string{"gavel.las", "gavel.las-agnostic"} {
		p, err := policy.New(name, nil)
		if err != nil {
			log.Fatal(err)
		}
		res, err := (&sim.Simulation{Cluster: cluster, Policy: p}).Run(context.Background(), jobs)
		if err != nil {
			log.Fatal(err)
		}
		s, err := sim.Summarize(res.Jobs, res.Rounds, sim.Options{GPUs: cluster.TotalGPUs()})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-20s %9.1fh %10.2f %11.0f%%\n", name, s.AvgJCT/3600, s.WorstFTF, 100*s.Utilization)
	}
}
