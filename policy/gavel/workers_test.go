package gavel

import (
	"context"
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
