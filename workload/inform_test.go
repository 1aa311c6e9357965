package workload

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
)

// The mixed workload with its co-located throughputs told (the main job's
// setup, seed 0) under FTF with space sharing: every job finishes. It
// stalled once, a job's last steps done a nanosecond before its rounded
// finish time, so that it stayed unfinished with no steps left, and FTF
// gives such a job no time.
func TestMixedInformedFinishes(t *testing.T) {
	if testing.Short() || !slices.Contains(allocation.Solvers(), allocation.CLP) {
		t.Skip("160 jobs with space sharing; needs CLP (-tags clp)")
	}
	jobs, phys, err := Mixed{Seed: 0, Jobs: 160, Rate: 8, Scale: 0.1, Reference: "v100"}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	var c allocation.Cluster
	for _, k := range []allocation.Accelerator{"v100", "p100", "k80"} {
		for i := range 2 {
			c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("%s-%d", k, i), Accelerator: k, GPUs: 8, CPUs: 24, MemoryGB: 500})
		}
	}
	p, err := policy.New("gavel.ftf-ss", nil)
	if err != nil {
		t.Fatal(err)
	}
	ph := &Physics{Jobs: phys.Jobs, Resources: Resources{Cluster: c}}
	pairs := 0
	observe := func(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration) {
		if run.Partner != "" {
			pairs++
		}
		ph.Observe(j, g, run, worked)
	}
	sm := &sim.Simulation{Cluster: c, Policy: p, Restart: 30 * time.Second, Reallocate: 30 * time.Second,
		Speed: ph.Speed, Observe: observe, Exclusive: ph.Exclusive, Inform: ph.Inform}
	res, err := sm.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Jobs {
		if !r.Finished {
			t.Errorf("job %s unfinished", r.ID)
		}
	}
	if pairs == 0 {
		t.Error("no job ever shared GPUs: the co-located throughputs did not reach the policy")
	}
}
