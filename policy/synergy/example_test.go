package synergy_test

import (
	"context"
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/synergy"
	"github.com/dlsched/dlsched/throughput"
)

// A ResNet-18 job, which trains 2.4× faster with 9 cores per GPU than with
// 3, and three GNMT jobs, which need 1 core, on a server with 4 GPUs and 12
// cores: Tune gives the ResNet the cores GNMT does not need.
func ExampleTune() {
	grid := func(rows ...float64) *throughput.Sensitivity {
		s := &throughput.Sensitivity{CPUs: []float64{1, 2, 3, 4, 5, 6, 9}, MemoryGB: []float64{62.5}}
		for _, v := range rows {
			s.Speedup = append(s.Speedup, []float64{v})
		}
		return s
	}
	resnet := grid(0.37, 0.72, 1, 1.3, 1.53, 1.75, 2.4)
	gnmt := grid(1, 1, 1, 1, 1, 1, 1)
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "s1", Accelerator: "v100", GPUs: 4, CPUs: 12, MemoryGB: 250},
		}},
	}
	for i, sens := range []*throughput.Sensitivity{resnet, gnmt, gnmt, gnmt} {
		s.Jobs = append(s.Jobs, policy.Job{
			ID: fmt.Sprint("job", i+1), GPUs: 1, Sensitivity: sens,
			Throughput: map[allocation.Accelerator]float64{"v100": 1},
		})
	}
	d, err := (&synergy.Tune{}).Allocate(context.Background(), s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range s.Jobs {
		g := d.Allocation[j.ID]
		fmt.Printf("%s: %v cores, %.1f× proportional\n", j.ID, g.CPUs, j.Sensitivity.At(g.CPUs, g.MemoryGB))
	}
	fmt.Printf("total %.2f (proportional: 4.00)\n", d.Objective)
	// Output:
	// job1: 9 cores, 2.4× proportional
	// job2: 1 cores, 1.0× proportional
	// job3: 1 cores, 1.0× proportional
	// job4: 1 cores, 1.0× proportional
	// total 5.40 (proportional: 4.00)
}
