package policy_test

import (
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// A job that claims a negative throughput is rejected with a one-line error
// naming the job and the field.
func ExampleValidate() {
	snap := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "n1", Accelerator: "v100", GPUs: 4},
			{ID: "n2", Accelerator: "k80", GPUs: 2},
		}},
		Jobs: []policy.Job{
			{ID: "A", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 4, "k80": 1}},
			{ID: "B", GPUs: 2, Throughput: map[allocation.Accelerator]float64{"v100": 3, "k80": -1}},
		},
	}
	fmt.Println(policy.Validate(snap))

	snap.Jobs[1].Throughput["k80"] = 1.5
	fmt.Println(policy.Validate(snap))
	// Output:
	// invalid snapshot: job "B": throughput[k80]: -1 is not a finite non-negative number
	// <nil>
}
