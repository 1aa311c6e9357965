package workload_test

import (
	"fmt"
	"github.com/dlsched/dlsched/workload"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

// Resources turns the CPU cores and memory a Synergy policy grants into
// speed: res18 on one GPU of a default server runs 2.4 times as fast with
// its ideal 9 cores as with the GPU-proportional 3.
func ExampleResources() {
	server := allocation.Server{ID: "s0", Accelerator: "v100", GPUs: 8, CPUs: 24, MemoryGB: 500}
	r := workload.Resources{Cluster: allocation.Cluster{Servers: []allocation.Server{server}}}
	m := workload.SynergyModels()["res18"]
	j := &policy.Job{ID: "r", GPUs: 1, Sensitivity: &m.Sensitivity,
		Throughput: map[allocation.Accelerator]float64{"v100": 1 / m.IterSeconds}}
	run := placement.Run{Job: "r", Accelerator: "v100", Assignments: []allocation.Assignment{{Server: "s0", GPUs: 1}}}
	for _, g := range []allocation.Grant{
		{GPUs: 1}, // the proportional share: 3 cores, 62.5 GB
		{GPUs: 1, CPUs: 9, MemoryGB: 62.5},
		{GPUs: 1, CPUs: 1, MemoryGB: 62.5},
	} {
		v := r.Speed(j, g, run)
		fmt.Printf("%g cores, %g GB: %.4g it/s, %.2f it per %v round\n", g.CPUs, g.MemoryGB, v, v*workload.SynergyRound.Seconds(), workload.SynergyRound)
	}
	// Output:
	// 0 cores, 0 GB: 1.562 it/s, 468.75 it per 5m0s round
	// 9 cores, 62.5 GB: 3.75 it/s, 1125.00 it per 5m0s round
	// 1 cores, 62.5 GB: 0.5781 it/s, 173.44 it per 5m0s round
}
