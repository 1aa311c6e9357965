package allocation_test

import (
	"context"
	"fmt"

	"github.com/dlsched/dlsched/allocation"
)

// Gavel's max-min fairness on one V100 and two K80s: job A runs 4× faster on
// the V100 than on a K80, job B 2× faster. Each job's throughput is
// normalized by what it would get from an equal share of the cluster.
func ExampleProgram() {
	cluster := allocation.Cluster{Servers: []allocation.Server{
		{ID: "v100-0", Accelerator: "v100", GPUs: 1},
		{ID: "k80-0", Accelerator: "k80", GPUs: 2},
	}}
	// Columns follow cluster.Types(): [k80 v100].
	p := allocation.NewProgram(cluster, []int{1, 1}, [][]float64{
		{1, 4}, // A
		{1, 2}, // B
	})
	terms := []allocation.Expr{
		p.Throughput(0).Scale(1 / 2.0), // A's equal-share throughput is 2
		p.Throughput(1).Scale(3 / 4.0), // B's is 4/3
	}
	res, err := p.MaximizeMin(context.Background(), terms, allocation.Sum(terms...))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("objective %.4f\n", res.Objective)
	a := p.Allocation([]string{"A", "B"}, res)
	for _, id := range a.IDs() {
		g := a[id]
		fmt.Printf("%s: k80 %.3f, v100 %.3f\n", id, g.Shares["k80"], g.Shares["v100"])
	}
	// Output:
	// objective 1.1667
	// A: k80 0.556, v100 0.444
	// B: k80 0.444, v100 0.556
}

// Two interchangeable jobs A (1 and 4 steps/s on a K80 and a V100) and a job
// B (1 and 2) on one V100 and two K80s, with A's class as one row counted
// twice: the program's size is the number of classes, and each A job gets
// the class's shares.
func ExampleNewClasses() {
	cluster := allocation.Cluster{Servers: []allocation.Server{
		{ID: "v100-0", Accelerator: "v100", GPUs: 1},
		{ID: "k80-0", Accelerator: "k80", GPUs: 2},
	}}
	p := allocation.NewClasses(cluster, []int{1, 1}, []int{2, 1}, [][]float64{
		{1, 4}, // each A job, over [k80 v100]
		{1, 2}, // B
	})
	terms := []allocation.Expr{p.Throughput(0), p.Throughput(1)}
	// Every job's throughput: A's class counts twice.
	total := allocation.Sum(terms[0].Scale(float64(p.Count(0))), terms[1])
	res, err := p.MaximizeMin(context.Background(), terms, total)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("t* %.2f\n", res.Objective)
	a := p.Allocation([]string{"each A", "B"}, res)
	for _, id := range a.IDs() {
		fmt.Printf("%s: k80 %.2f, v100 %.2f\n", id, a[id].Shares["k80"], a[id].Shares["v100"])
	}
	// Output:
	// t* 1.60
	// B: k80 0.40, v100 0.60
	// each A: k80 0.80, v100 0.20
}

func ExampleAllocation_Validate() {
	cluster := allocation.Cluster{Servers: []allocation.Server{
		{ID: "v100-0", Accelerator: "v100", GPUs: 4},
	}}
	a := allocation.Allocation{
		"a": {GPUs: 4, Shares: map[allocation.Accelerator]float64{"v100": 1}},
		"b": {GPUs: 2, Shares: map[allocation.Accelerator]float64{"v100": 1}},
	}
	fmt.Println(a.Validate(cluster))
	// Output:
	// over capacity: v100: uses 6 GPUs of 4
}
