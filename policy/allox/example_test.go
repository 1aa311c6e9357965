package allox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/allox"
)

// One v100 and one k80 are free and three jobs wait. Job a is 5× faster on
// the v100, b only 1.5×, c is long. The least total completion time runs a
// then c on the v100 and b on the k80: a and b start now, c waits for the
// next decision.
func Example() {
	job := func(id string, steps, v100, k80 float64) policy.Job {
		return policy.Job{ID: id, GPUs: 1, StepsTotal: steps,
			Throughput: map[allocation.Accelerator]float64{"v100": v100, "k80": k80}}
	}
	s := &policy.Snapshot{
		Now: time.Minute,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "k", Accelerator: "k80", GPUs: 1},
			{ID: "v", Accelerator: "v100", GPUs: 1},
		}},
		Jobs: []policy.Job{job("a", 600, 10, 2), job("b", 600, 3, 2), job("c", 3000, 10, 5)},
	}
	d, err := (&allox.AlloX{}).Allocate(context.Background(), s)
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		fmt.Println(id, d.Placement[id])
	}
	// a ends at 60 s, c at 360 s on the v100, b at 300 s on the k80, each
	// after waiting 60 s.
	fmt.Printf("total completion time %.0f s\n", d.Objective)
	// Output:
	// a [{v 1}]
	// b [{k 1}]
	// c []
	// total completion time 900 s
}
