package placement_test

import (
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

// A scheduler restarts without its ledger while three jobs fill two
// servers: an 8-GPU job as two workers of 4, one per server, and a 4-GPU
// job beside each worker. Seeding an empty ledger from where they run keeps
// them all on exactly their GPUs; an empty ledger alone would move them.
// (A split gang still moves if a server has room for it whole, to
// consolidate, as it would without the restart.)
func ExampleLedger_Seed() {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 8},
		{ID: "s2", Accelerator: "v100", GPUs: 8},
	}}
	v100 := map[allocation.Accelerator]float64{"v100": 1}
	a := allocation.Allocation{
		"big":   {GPUs: 8, GPUsPerWorker: 4, Shares: v100},
		"small": {GPUs: 4, Shares: v100},
		"other": {GPUs: 4, Shares: v100},
	}
	running := map[string][]allocation.Assignment{
		"big":   {{Server: "s1", GPUs: 4}, {Server: "s2", GPUs: 4}},
		"small": {{Server: "s1", GPUs: 4}},
		"other": {{Server: "s2", GPUs: 4}},
	}
	for _, l := range []placement.Ledger{{}, placement.Ledger{}.Seed(running)} {
		r, _, err := placement.Mechanism{}.Next(l, c, a)
		if err != nil {
			panic(err)
		}
		for _, run := range r.Runs {
			fmt.Printf("%s on %v (extended %v)\n", run.Job, run.Assignments, run.Extended)
		}
	}
	// Output:
	// big on [{s1 8}] (extended false)
	// other on [{s2 4}] (extended false)
	// small on [{s2 4}] (extended false)
	// big on [{s1 4} {s2 4}] (extended true)
	// other on [{s2 4}] (extended true)
	// small on [{s1 4}] (extended true)
}

// A gang of 8 GPUs in workers of 4 goes 4+4 on two servers with 5 GPUs
// free each; in one-GPU workers it takes the most it can from the first.
func ExampleGangs_Place() {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 8},
		{ID: "s2", Accelerator: "v100", GPUs: 8},
	}}
	any := func(allocation.Accelerator) bool { return true }
	for _, w := range []int{1, 4, 8} {
		g := placement.NewGangs(c)
		g.Keep([]allocation.Assignment{{Server: "s1", GPUs: 3}, {Server: "s2", GPUs: 3}}, 6, any)
		as, _, ok := g.Place(8, w, any)
		fmt.Printf("workers of %d: %v %v\n", w, as, ok)
	}
	// Output:
	// workers of 1: [{s1 5} {s2 3}] true
	// workers of 4: [{s1 4} {s2 4}] true
	// workers of 8: [] false
}

// Validate accepts what Next returns and refuses what Next would.
func ExampleLedger_Validate() {
	c := allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 2}}}
	a := allocation.Allocation{"j": {GPUs: 1, Shares: map[allocation.Accelerator]float64{"v100": 1}}}
	_, l, err := placement.Mechanism{}.Next(placement.Ledger{}, c, a)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Validate())
	l.Accounts[0].Job = ""
	fmt.Println(l.Validate())
	fmt.Println(placement.Ledger{Rounds: -1}.Validate())
	// Output:
	// <nil>
	// invalid placement: ledger: account 0: job: empty
	// invalid placement: ledger: rounds: -1 is negative
}
