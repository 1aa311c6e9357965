package placement_test

import (
	"fmt"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

// Gavel's hand-worked case: one V100 and two K80s, job A should get 4/9 of
// its time on the V100 and 5/9 on a K80, job B the reverse. The mechanism
// alternates them so that each converges to its shares.
func ExampleMechanism_Next() {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "k80-1", Accelerator: "k80", GPUs: 1},
		{ID: "k80-2", Accelerator: "k80", GPUs: 1},
		{ID: "v100-1", Accelerator: "v100", GPUs: 1},
	}}
	a := allocation.Allocation{
		"A": {GPUs: 1, Shares: map[allocation.Accelerator]float64{"v100": 4.0 / 9, "k80": 5.0 / 9}},
		"B": {GPUs: 1, Shares: map[allocation.Accelerator]float64{"v100": 5.0 / 9, "k80": 4.0 / 9}},
	}
	var m placement.Mechanism // 360 s rounds
	var l placement.Ledger    // empty before the first round
	onV100 := map[string]int{}
	for i := range 9 {
		r, next, err := m.Next(l, c, a)
		if err != nil {
			panic(err)
		}
		l = next // pass the ledger back next round
		if i < 4 {
			for _, run := range r.Runs {
				fmt.Printf("round %d: %s on %v (extended %v)\n", i, run.Job, run.Assignments, run.Extended)
			}
		}
		for _, run := range r.Runs {
			if run.Accelerator == "v100" {
				onV100[run.Job]++
			}
		}
	}
	fmt.Println("rounds on the V100 out of 9:", onV100)
	// Output:
	// round 0: A on [{k80-1 1}] (extended false)
	// round 0: B on [{v100-1 1}] (extended false)
	// round 1: A on [{v100-1 1}] (extended false)
	// round 1: B on [{k80-1 1}] (extended false)
	// round 2: A on [{k80-1 1}] (extended false)
	// round 2: B on [{v100-1 1}] (extended false)
	// round 3: A on [{v100-1 1}] (extended false)
	// round 3: B on [{k80-1 1}] (extended false)
	// rounds on the V100 out of 9: map[A:4 B:5]
}

// A job whose round is cut short (here: the scheduler stopped after 90 s)
// is credited only the time it actually ran.
func ExampleLedger_Shorten() {
	c := allocation.Cluster{Servers: []allocation.Server{{ID: "s1", Accelerator: "v100", GPUs: 4}}}
	a := allocation.Allocation{"x": {GPUs: 4, Shares: map[allocation.Accelerator]float64{"v100": 1}}}
	var m placement.Mechanism
	r, l, err := m.Next(placement.Ledger{}, c, a)
	if err != nil {
		panic(err)
	}
	fmt.Println("credited:", l.Accounts[0].Types[0].Received, "s")
	l, err = l.Shorten(r, r.Length/4)
	if err != nil {
		panic(err)
	}
	fmt.Println("after Shorten:", l.Accounts[0].Types[0].Received, "s")
	r, _, err = m.Next(l, c, a)
	if err != nil {
		panic(err)
	}
	fmt.Println("next round:", r.Runs[0].Assignments, "extended:", r.Runs[0].Extended)
	// Output:
	// credited: 360 s
	// after Shorten: 90 s
	// next round: [{s1 4}] extended: true
}
