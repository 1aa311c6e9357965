package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
	"github.com/dlsched/dlsched/workload"
)

// Defaults of a Shockwave trace, as in the paper's TACC run: 8 servers of
// 4 V100s, 120 s rounds, 20 s lost at each (re)start, and the baselines'
// shares decided again on arrivals and completions at most every 1000 s
// (its simulator's minimum_time_between_allocation_resets).
const (
	shockwaveCluster   = "v100=32"
	shockwaveRound     = 2 * time.Minute
	shockwaveRestart   = 20 * time.Second
	shockwaveRecompute = 1000 * time.Second
)

// shockwaveConfigs are the baselines as Shockwave's simulator ran them:
// AlloX gives a g-GPU job the time share 1/g, with α = 0.2.
var shockwaveConfigs = map[string]string{"allox": `{"rule":"shockwave","alpha":0.2}`}

// readShockwave reads the --throughputs profile and the Shockwave trace,
// with epoch durations on the cluster's GPU type (Shockwave's clusters are
// homogeneous), and runs its adaptive jobs with a fresh copy of their model
// per run: the model keeps per-job state.
func readShockwave(w *workloadFlags, cluster allocation.Cluster) (*instance, error) {
	types := cluster.Types()
	switch {
	case w.throughputs == "":
		return nil, errors.New("a Shockwave trace needs --throughputs FILE (Gavel-format throughputs such as Shockwave's tacc_throughputs.json)")
	case len(types) != 1:
		return nil, fmt.Errorf("a Shockwave trace needs a cluster of one GPU type, not %s", w.cluster)
	}
	f, err := os.Open(w.throughputs)
	if err != nil {
		return nil, fmt.Errorf("--throughputs: %v", err)
	}
	defer f.Close()
	profile, _, err := workload.LoadGavelThroughputs(f)
	if err != nil {
		return nil, fmt.Errorf("--throughputs: %s: %v", w.throughputs, err)
	}
	jobs, model, err := workload.ReadShockwaveTraceFile(w.workload, profile, workload.ShockwaveOptions{Accelerator: types[0]})
	if err != nil {
		return nil, err
	}
	model.Round = w.round
	if err := model.Prepare(jobs); err != nil {
		return nil, err
	}
	return &instance{jobs: jobs, attach: adapt(model)}, nil
}

// adapt returns the attach of Shockwave's adaptive jobs: a fresh copy of
// the jobs, prepared by a fresh Adaptive sharing the read-only Adaptations,
// so that no two runs share a job or a cache.
func adapt(model *workload.Adaptive) func(*sim.Simulation, []policy.Job) ([]policy.Job, error) {
	return func(sm *sim.Simulation, jobs []policy.Job) ([]policy.Job, error) {
		m := &workload.Adaptive{Jobs: model.Jobs, Round: sm.Round}
		jobs = cloneJobs(jobs)
		if err := m.Prepare(jobs); err != nil {
			return nil, err
		}
		sm.Speed, sm.Observe, sm.Exclusive = m.Speed, m.Observe, m.Exclusive
		return jobs, nil
	}
}

// cloneJobs copies jobs deeply enough that the simulation of one policy
// shares no map or slice with another's: their Throughput and Adaptive
// facts.
func cloneJobs(jobs []policy.Job) []policy.Job {
	out := slices.Clone(jobs)
	for i := range out {
		j := &out[i]
		j.Throughput = maps.Clone(j.Throughput)
		if a := j.Adaptive; a != nil {
			x := *a
			x.Regimes, x.EpochSeconds, x.History = slices.Clone(a.Regimes), slices.Clone(a.EpochSeconds), slices.Clone(a.History)
			j.Adaptive = &x
		}
	}
	return out
}
