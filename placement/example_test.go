package placement_test

import (
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

func ExampleFirstFitDecreasing() {
	free, err := placement.NewFree(allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4},
		{ID: "s2", Accelerator: "v100", GPUs: 3},
	}})
	if err != nil {
		panic(err)
	}
	items := []placement.Item{
		{ID: "x", Demand: placement.Demand{GPUs: 3}},
		{ID: "y", Demand: placement.Demand{GPUs: 2}},
		{ID: "z", Demand: placement.Demand{GPUs: 2}},
	}
	p, err := placement.FirstFitDecreasing(free, items, placement.Options{})
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"x", "y"} {
		fmt.Println(id, p.Placed[id])
	}
	fmt.Println("unplaced:", p.Unplaced)
	// Output:
	// x [{s1 3}]
	// y [{s2 2}]
	// unplaced: [z]
}

func ExampleBestFit() {
	free, err := placement.NewFree(allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4},
		{ID: "s2", Accelerator: "v100", GPUs: 3},
	}})
	if err != nil {
		panic(err)
	}
	items := []placement.Item{
		{ID: "x", Demand: placement.Demand{GPUs: 3}},
		{ID: "y", Demand: placement.Demand{GPUs: 2}},
		{ID: "z", Demand: placement.Demand{GPUs: 2}},
	}
	p, err := placement.BestFit(free, items, placement.Options{})
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"x", "y", "z"} {
		fmt.Println(id, p.Placed[id])
	}
	fmt.Println("unplaced:", p.Unplaced)
	// Output:
	// x [{s2 3}]
	// y [{s1 2}]
	// z [{s1 2}]
	// unplaced: []
}

// A 20-GPU gang on four 8-GPU servers, one of them half busy: with Split it
// fills two free servers and puts the remaining 4 GPUs on the busy one,
// keeping the fourth server free.
func ExampleOptions_split() {
	free, err := placement.NewFree(allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 8, CPUs: 64},
		{ID: "s2", Accelerator: "v100", GPUs: 8, CPUs: 64},
		{ID: "s3", Accelerator: "v100", GPUs: 8, CPUs: 64},
		{ID: "s4", Accelerator: "v100", GPUs: 8, CPUs: 64},
	}})
	if err != nil {
		panic(err)
	}
	free, err = free.Take("s2", placement.Demand{GPUs: 4, CPUs: 32})
	if err != nil {
		panic(err)
	}
	gang := placement.Item{ID: "gang", Demand: placement.Demand{GPUs: 20, CPUs: 80}, Accelerator: "v100"}
	p, err := placement.BestFit(free, []placement.Item{gang}, placement.Options{Split: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Placed["gang"])
	for _, s := range p.Free.Servers() {
		fmt.Printf("%s: %d GPUs, %g cores free\n", s.Server, s.Remaining.GPUs, s.Remaining.CPUs)
	}
	// Output:
	// [{s1 8} {s2 4} {s3 8}]
	// s1: 0 GPUs, 32 cores free
	// s2: 0 GPUs, 16 cores free
	// s3: 0 GPUs, 32 cores free
	// s4: 8 GPUs, 64 cores free
}

// Take reserves capacity, e.g. for a job that keeps its server; a server
// that does not track memory reports it as unlimited.
func ExampleFree_Take() {
	free, err := placement.NewFree(allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4, CPUs: 32},
	}})
	if err != nil {
		panic(err)
	}
	after, err := free.Take("s1", placement.Demand{GPUs: 1, CPUs: 8, MemoryGB: 64})
	if err != nil {
		panic(err)
	}
	left, _ := after.Remaining("s1")
	fmt.Printf("%+v\n", left)
	_, err = after.Take("s1", placement.Demand{GPUs: 4})
	fmt.Println(err)
	// Output:
	// {GPUs:3 CPUs:24 MemoryGB:+Inf}
	// over capacity: server "s1": {GPUs:4 CPUs:0 MemoryGB:0} does not fit in {GPUs:3 CPUs:24 MemoryGB:+Inf}
}
