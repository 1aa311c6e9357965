package gavel

import (
	"context"
	"reflect"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// A job of one 4-GPU worker gets no time on V100s spread over servers of 2,
// 1 and 1 GPUs, though they add up to 4: its worker fits only on the K80
// server. Every program sees the types its workers fit on.
func TestProgramsHonourWorkers(t *testing.T) {
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "s0", Accelerator: "v100", GPUs: 2},
			{ID: "s1", Accelerator: "k80", GPUs: 4},
			{ID: "s3", Accelerator: "v100", GPUs: 1},
			{ID: "s4", Accelerator: "v100", GPUs: 1},
		}},
		Jobs: []policy.Job{
			{ID: "w4", GPUs: 4, GPUsPerWorker: 4, StepsTotal: 1000, Throughput: shares{"k80": 1, "v100": 2}},
			{ID: "w1", GPUs: 4, StepsTotal: 1000, Throughput: shares{"k80": 1, "v100": 2}},
		},
	}
	for _, p := range []policy.Policy{&MaxMinFairness{}, &Makespan{}, &MaxThroughput{}, &FIFO{}, &FinishTimeFairness{}, &WaterFilling{}} {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if x := d.Allocation["w4"].Shares["v100"]; x != 0 {
			t.Errorf("%s: the job of 4-GPU workers got %v of the V100s", p.Name(), x)
		}
		if d.Allocation["w4"].Busy() == 0 && d.Allocation["w1"].Shares["v100"] == 0 {
			t.Errorf("%s: %v: neither job gets time", p.Name(), d.Allocation)
		}
	}
}

// Both LP engines give equal jobs bit-identical shares (Program.Allocation
// rounds to allocation.ShareQuantum), so that the round mechanism, which
// breaks ties by share, places the same way whichever engine solved.
func TestEnginesGiveEqualShares(t *testing.T) {
	thr := shares{"v100": 1}
	s := &policy.Snapshot{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s1", Accelerator: "v100", GPUs: 4}, {ID: "s2", Accelerator: "v100", GPUs: 4}}},
		Jobs: []policy.Job{
			{ID: "a", GPUs: 4, Throughput: thr}, {ID: "b", GPUs: 4, Throughput: thr},
			{ID: "c", GPUs: 2, Throughput: thr}, {ID: "d", GPUs: 2, Throughput: thr},
		},
	}
	var first allocation.Allocation
	for _, solver := range allocation.Solvers() {
		d, err := (&MaxMinFairness{Solver: solver}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := d.Allocation["a"].Shares["v100"], d.Allocation["b"].Shares["v100"]; a != 0.5 || b != 0.5 {
			t.Errorf("%s: shares %.17g and %.17g, want 0.5 each", solver, a, b)
		}
		if first == nil {
			first = d.Allocation
		} else if !reflect.DeepEqual(first, d.Allocation) {
			t.Errorf("%s: allocation %v differs from %v", solver, d.Allocation, first)
		}
	}
}
