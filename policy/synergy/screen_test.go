package synergy_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func granted(d *policy.Decision) []string {
	var ids []string
	for id, g := range d.Allocation {
		if g.GPUs > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// A job that can never fit and an invalid job are left out with reasons
// that name the field; the good jobs are scheduled by every allocator.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 4, CPUs: 12, MemoryGB: 250},
		{ID: "b", Accelerator: "k80", GPUs: 4, CPUs: 12, MemoryGB: 250},
	}}
	both := func(id string, gpus int) policy.Job {
		j := newJob(id, gpus, 0, gnmt())
		j.Throughput = map[allocation.Accelerator]float64{"v100": 2, "k80": 1}
		return j
	}
	neg := both("neg", 1)
	neg.Weight = -1
	s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{both("g1", 1), both("big", 8), neg, both("g2", 2)}}
	for _, name := range allocators {
		d := allocate(t, name, "", s)
		if len(d.Unscheduled) != 2 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("%s: Unscheduled = %q; want big (gpus) and neg (weight)", name, d.Unscheduled)
		}
		if got := granted(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("%s: scheduled %v; want [g1 g2]", name, got)
		}
	}
}

// Synergy's facts are a job's Sensitivity and the servers' CPU and memory.
// A job without a Sensitivity gets its proportional share; on a cluster
// whose servers report no memory, GPUs are placed alone, with a warning.
func TestScreenMissingFacts(t *testing.T) {
	plain := newJob("plain", 2, 0, nil)
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{plain, newJob("r", 2, 1, res18())}}
	for _, name := range allocators {
		d := allocate(t, name, "", s)
		g := d.Allocation["plain"]
		// 24 cores and 500 GB over 8 GPUs: 3 cores and 62.5 GB per GPU.
		if len(d.Unscheduled) != 0 || g.GPUs != 2 || math.Abs(g.CPUs-6) > 1e-6 || math.Abs(g.MemoryGB-125) > 1e-6 {
			t.Errorf("%s: plain job granted %+v, left out %v; want its proportional 2 GPUs, 6 cores, 125 GB", name, g, d.Unscheduled)
		}
	}
	c := cluster(2)
	for i := range c.Servers {
		c.Servers[i].MemoryGB = 0
	}
	s = &policy.Snapshot{Now: time.Hour, Cluster: c, Jobs: []policy.Job{newJob("r", 8, 0, res18()), newJob("g", 4, 1, gnmt()), plain}}
	for _, name := range allocators {
		d, err := mustNew(t, name).Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := d.Allocation.Validate(c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := granted(d); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"g", "plain", "r"}) {
			t.Errorf("%s: scheduled %v, left out %v; want every job", name, got, d.Unscheduled)
		}
		for id, g := range d.Allocation {
			if g.CPUs != 0 || g.MemoryGB != 0 {
				t.Errorf("%s: job %s granted %v cores and %v GB; want GPUs only", name, id, g.CPUs, g.MemoryGB)
			}
		}
		if len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "memory_gb") {
			t.Errorf("%s: warnings %q; want one about the servers' memory", name, d.Warnings)
		}
	}
}

func mustNew(t *testing.T, name string) policy.Policy {
	t.Helper()
	p, err := policy.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
