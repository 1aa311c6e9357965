package baseline_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/baseline"
)

// On one 4-GPU server, a 3-GPU job runs and a 4-GPU job waits. FIFO keeps a
// later 1-GPU job waiting behind it (head-of-line blocking); SRTF ranks the
// 4-GPU job, the longest, last, and the 1-GPU job runs on the free GPU.
func Example() {
	job := func(id string, gpus int, arrival time.Duration, seconds float64) policy.Job {
		return policy.Job{ID: id, GPUs: gpus, Arrival: arrival, StepsTotal: seconds,
			Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	}
	s := &policy.Snapshot{
		Now:     time.Minute,
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s0", Accelerator: "v100", GPUs: 4}}},
		Jobs:    []policy.Job{job("big", 3, 0, 600), job("wide", 4, 10*time.Second, 1200), job("small", 1, 20*time.Second, 900)},
	}
	for _, name := range []string{"baseline.fifo", "baseline.srtf"} {
		p, err := policy.New(name, nil)
		if err != nil {
			panic(err)
		}
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s:", name)
		for _, id := range []string{"big", "wide", "small"} {
			if as, ok := d.Placement[id]; ok {
				fmt.Printf(" %s on %v", id, as)
			}
		}
		fmt.Println()
	}
	// Output:
	// baseline.fifo: big on [{s0 3}]
	// baseline.srtf: big on [{s0 3}] small on [{s0 1}]
}
