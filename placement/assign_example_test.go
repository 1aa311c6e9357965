package placement_test

import (
	"fmt"
	"math"

	"github.com/dlsched/dlsched/placement"
)

// Three jobs and two GPUs, a fast one and a slow one. Each cost is the
// job's run time on the GPU; job c cannot run on the slow GPU. The
// assignment keeps the total run time least, and one job waits.
func ExampleAssign() {
	cost := [][]float64{
		// fast, slow
		{2, 5},           // a
		{3, 4},           // b
		{1, math.Inf(1)}, // c
	}
	got, err := placement.Assign(cost)
	if err != nil {
		panic(err)
	}
	for i, j := range got {
		fmt.Printf("%c: %d\n", 'a'+i, j)
	}
	// Output:
	// a: -1
	// b: 1
	// c: 0
}
