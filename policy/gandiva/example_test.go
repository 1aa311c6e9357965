package gandiva_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gandiva"
)

// Three 2-GPU jobs share a 4-GPU server: two run at a time, and every
// quantum the two that ran go to the back of the queue.
func Example() {
	job := func(id string) policy.Job {
		return policy.Job{ID: id, GPUs: 2, StepsTotal: 1000,
			Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	}
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s0", Accelerator: "v100", GPUs: 4}}},
		Jobs:    []policy.Job{job("a"), job("b"), job("c")},
	}
	p := &gandiva.Gandiva{NoPacking: true}
	for range 3 {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			panic(err)
		}
		fmt.Printf("at %v: %v run, next slice at %v\n", s.Now, slices.Sorted(maps.Keys(d.Placement)), d.Wake)
		s.Now = d.Wake
	}
	fmt.Printf("class %d set on %v, queue %v\n", p.State.Sets[0].Class, p.State.Sets[0].Servers, p.State.Sets[0].Jobs)
	// Output:
	// at 0s: [a b] run, next slice at 1m0s
	// at 1m0s: [a c] run, next slice at 2m0s
	// at 2m0s: [b c] run, next slice at 3m0s
	// class 2 set on [s0], queue [b c a]
}

// Recommendation (batch size 2048) and ResNet-50 (batch size 64) packed on
// a V100 do less together than apart: a trial pair of them is reverted.
func ExampleNormSum() {
	a := policy.Job{ID: "rec", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 7.4696},
		Colocated: map[string]map[allocation.Accelerator]float64{"resnet": {"v100": 1.5329}}}
	b := policy.Job{ID: "resnet", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 4.3948},
		Colocated: map[string]map[allocation.Accelerator]float64{"rec": {"v100": 2.6086}}}
	fmt.Printf("norm_sum %.3f, keep %v\n", gandiva.NormSum(&a, &b, "v100"), gandiva.NormSum(&a, &b, "v100") >= gandiva.KeepThreshold)
	// Output:
	// norm_sum 0.799, keep false
}

// Targets splits a cluster's GPUs among affinity classes in proportion to
// the GPUs their jobs request, never more than they request.
func ExampleTargets() {
	t := gandiva.Targets(map[int]int{1: 6, 2: 10}, 8)
	fmt.Println(t[1], t[2])
	// Output:
	// 3 5
}
