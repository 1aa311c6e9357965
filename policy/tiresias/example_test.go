package tiresias_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/tiresias"
)

// A 4-GPU job that has had 3600 GPU-seconds is in the second queue, so a
// new 4-GPU job preempts it; the decision wakes when the new job will have
// had 3250 GPU-seconds, 812.5 s from now.
func Example() {
	p := &tiresias.LAS{}
	cluster := allocation.Cluster{Servers: []allocation.Server{{ID: "s0", Accelerator: "v100", GPUs: 4}}}
	thr := map[allocation.Accelerator]float64{"v100": 1}
	d, err := p.Allocate(context.Background(), &policy.Snapshot{
		Now:     900 * time.Second,
		Cluster: cluster,
		Jobs: []policy.Job{
			{ID: "old", GPUs: 4, Throughput: thr, AttainedGPUSeconds: 3600,
				Placement: []allocation.Assignment{{Server: "s0", GPUs: 4}}},
			{ID: "new", GPUs: 4, Throughput: thr, Arrival: 900 * time.Second},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("runs:", d.Placement)
	fmt.Println("queues:", p.State.Jobs["new"].Queue, p.State.Jobs["old"].Queue)
	fmt.Println("wake:", d.Wake)
	// Output:
	// runs: map[new:[{s0 4}]]
	// queues: 0 1
	// wake: 28m32.5s
}
