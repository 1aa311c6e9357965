package main

import (
	"flag"
	"fmt"
	"github.com/dlsched/dlsched/workload"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// Defaults of a Shockwave trace, as in the paper's TACC run: 8 servers of
// 4 V100s, 120 s rounds, 20 s lost at each (re)start.
const (
	shockwaveCluster = "v100=32"
	shockwaveRound   = 2 * time.Minute
	shockwaveRestart = 20 * time.Second
)

// shockwaveDefaults checks that --shockwave-trace and
// --shockwave-throughputs come together and with no other workload flag,
// and sets the Shockwave defaults of the flags the user did not set.
func (w *workloadFlags) shockwaveDefaults(cmd string) error {
	switch {
	case w.shockwave == "":
		return usageError{fmt.Errorf("%s: --shockwave-throughputs needs --shockwave-trace", cmd)}
	case w.swThr == "":
		return usageError{fmt.Errorf("%s: --shockwave-trace needs --shockwave-throughputs (Gavel-format throughputs such as Shockwave's tacc_throughputs.json)", cmd)}
	}
	set := map[string]bool{}
	w.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []string{"pollux-workload", "pollux-traces", "trace", "jobs", "rate", "seed", "multi-gpu", "priorities"} {
		if set[f] {
			return usageError{fmt.Errorf("%s: --%s cannot be used with --shockwave-trace", cmd, f)}
		}
	}
	if !set["cluster"] {
		w.cluster = shockwaveCluster
	}
	if !set["round"] {
		w.round = shockwaveRound
	}
	if !set["restart"] {
		w.restart = shockwaveRestart
	}
	return nil
}

// readShockwave reads the --shockwave-throughputs profile and the
// --shockwave-trace jobs, with epoch durations on the cluster's GPU type
// (Shockwave's clusters are homogeneous), and returns the jobs prepared by
// their Adaptive model, whose Round is the run's.
func (w *workloadFlags) readShockwave(cmd string, cluster allocation.Cluster) ([]policy.Job, *workload.Adaptive, error) {
	types := map[allocation.Accelerator]bool{}
	for _, s := range cluster.Servers {
		types[s.Accelerator] = true
	}
	if len(types) != 1 {
		return nil, nil, usageError{fmt.Errorf("%s: --shockwave-trace needs a cluster of one GPU type, not %s", cmd, w.cluster)}
	}
	acc := slices.Collect(maps.Keys(types))[0]
	f, err := os.Open(w.swThr)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: --shockwave-throughputs: %v", cmd, err)}
	}
	defer f.Close()
	profile, _, err := workload.LoadGavelThroughputs(f)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: --shockwave-throughputs: %s: %v", cmd, w.swThr, err)}
	}
	jobs, model, err := workload.ReadShockwaveTraceFile(w.shockwave, profile, workload.ShockwaveOptions{Accelerator: acc})
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: --shockwave-trace: %v", cmd, err)}
	}
	if len(jobs) == 0 {
		return nil, nil, usageError{fmt.Errorf("%s: --shockwave-trace: %s holds no jobs", cmd, w.shockwave)}
	}
	model.Round = w.round
	if err := model.Prepare(jobs); err != nil {
		return nil, nil, usageError{fmt.Errorf("%s: --shockwave-trace: %v", cmd, err)}
	}
	return jobs, model, nil
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
