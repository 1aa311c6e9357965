package pollux_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
	"github.com/dlsched/dlsched/throughput"
)

func ExamplePollux() {
	perf := throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}
	job := func(id string, gradVar float64) policy.Job {
		return policy.Job{ID: id, Elastic: &policy.Elastic{
			BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64, LocalBatchMax: 256,
			Perf: perf, GradSqr: 0.00136, GradVar: gradVar,
		}}
	}
	s := &policy.Snapshot{
		Now: time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "n0", Accelerator: "t4", GPUs: 4},
			{ID: "n1", Accelerator: "t4", GPUs: 4},
		}},
		// A noisy gradient (large GradVar) makes big batches efficient, so
		// that job profits most from more GPUs.
		Jobs: []policy.Job{job("quiet", 0.0000502), job("noisy", 0.0502)},
	}
	p := &pollux.Pollux{Seed: 1}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range d.Allocation.IDs() { // sorted
		g := d.Allocation[id]
		fmt.Printf("%s: %d GPUs, batch %d\n", id, g.GPUs, g.BatchSize)
	}
	// Output:
	// noisy: 6 GPUs, batch 864
	// quiet: 2 GPUs, batch 128
}

func ExampleOptimus() {
	job := func(id string, steps float64) policy.Job {
		return policy.Job{ID: id, StepsTotal: steps, Elastic: &policy.Elastic{BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64}}
	}
	s := &policy.Snapshot{
		Now:     time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n0", Accelerator: "t4", GPUs: 4}}},
		// Unfitted jobs scale linearly: the longer job gains most per GPU.
		Jobs: []policy.Job{job("short", 100), job("long", 400)},
	}
	d, err := (&pollux.Optimus{}).Allocate(context.Background(), s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range d.Allocation.IDs() {
		g := d.Allocation[id]
		fmt.Printf("%s: %d GPUs, batch %d\n", id, g.GPUs, g.BatchSize)
	}
	// Output:
	// long: 3 GPUs, batch 128
	// short: 1 GPUs, batch 128
}
