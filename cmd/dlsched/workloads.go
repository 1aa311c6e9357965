package main

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
	"github.com/dlsched/dlsched/workload"
)

// A workload is either built in, generated from --seed, --jobs and --rate,
// or read from a file (formats.go). Both kinds give defaults and instances
// of the same shape, so that running and comparing need not know which.

// defaultWorkload is the built-in workload --workload names by default.
const defaultWorkload = "mixed"

// defaults are a workload's values for the flags the user leaves unset;
// a zero field keeps the flag's own default.
type defaults struct {
	cluster        string        // --cluster; empty: defaultCluster
	jobs           int           // --jobs
	rate           float64       // --rate, jobs per hour
	round, restart time.Duration // --round, --restart
	recompute      time.Duration // --recompute
	// configs are the policies' configurations as the workload's own
	// simulator ran them, by policy name; a policy not named runs with its
	// defaults.
	configs map[string]string
	events  bool // --events
	// reallocate also charges --restart when a running job's GPUs change
	// (sim.Simulation.Reallocate), as Pollux does for its elastic jobs.
	reallocate bool
}

// instance is one workload ready to simulate: its jobs and their physics.
type instance struct {
	jobs []policy.Job
	// tuned, if set, replaces jobs for the policies that do not use elastic
	// facts: the same jobs, each with a fixed configuration (Pollux's
	// TunedJobs), since such a policy cannot choose one.
	tuned []policy.Job
	// attach, if set, plugs the workload's model of job speed into one run's
	// simulation and returns the jobs that run simulates: a fresh copy when
	// the model keeps state per job, so that no two runs share it.
	attach func(sm *sim.Simulation, jobs []policy.Job) ([]policy.Job, error)
	// informs are the facts the jobs do not carry but attach has the
	// simulation tell the policy (sim.Simulation.Inform).
	informs policy.Facts
}

// jobsFor returns the jobs policy p simulates: the tuned ones (each
// job's best fixed GPU count and batch size), if any, for every policy
// that does not choose batch sizes itself.
func (in *instance) jobsFor(p policy.Policy) []policy.Job {
	if uses, _ := policy.FactsOf(p); in.tuned != nil && uses&policy.FactBatch == 0 {
		return in.tuned
	}
	return in.jobs
}

// draw is what a built-in workload generates one instance from: the seed
// and rate of the run, and the flags for anything else it reads.
type draw struct {
	seed    uint64
	jobs    int
	rate    float64 // jobs per hour
	cluster allocation.Cluster
	flags   *workloadFlags
}

// builtin is a workload --workload names. Adding one is one entry of
// builtins and its build function.
type builtin struct {
	name, doc string
	// takes lists the flags of workloadOnly it reads; giving another is
	// an error.
	takes    []string
	defaults defaults
	build    func(d draw) (*instance, error)
}

// generatorFlags are the flags that shape a generated workload.
var generatorFlags = []string{"jobs", "rate", "seed", "multi-gpu", "priorities"}

// workloadOnly are the flags that only some workloads read.
var workloadOnly = append(slices.Clone(generatorFlags), "models", "throughputs", "burst", "duration-scale")

// mixedFlags are the flags the mixed workload and its views read.
var mixedFlags = []string{"jobs", "rate", "seed", "priorities", "burst", "duration-scale"}

// builtins are the generated workloads.
var builtins = []builtin{
	{
		name: "mixed",
		doc: "every system's facts at once: Gavel's throughputs, Pollux's goodput, Shockwave's regimes, Synergy's CPU and memory, " +
			"locality and interference, with Philly's GPU counts and durations",
		takes:    mixedFlags,
		defaults: defaults{cluster: mixedCluster, jobs: mixedJobs, rate: mixedRate, restart: mixedRestart, reallocate: true},
		build:    mixed(0),
	},
	{
		name:     "pollux",
		doc:      "the mixed workload as Pollux's evaluation sees it: elastic jobs whose GPUs and batch sizes may change",
		takes:    mixedFlags,
		defaults: defaults{cluster: "v100=64", jobs: mixedJobs, rate: mixedRate, round: time.Minute, restart: mixedRestart, reallocate: true},
		build:    mixed(policy.FactElastic | policy.FactBatch | policy.FactLength),
	},
	{
		name:  "shockwave",
		doc:   "the mixed workload as Shockwave's evaluation sees it: jobs that change their own batch size over their epochs",
		takes: mixedFlags,
		defaults: defaults{cluster: shockwaveCluster, jobs: mixedJobs, rate: mixedRate, round: shockwaveRound, restart: shockwaveRestart,
			recompute: shockwaveRecompute, configs: shockwaveConfigs},
		build: mixed(policy.FactAdaptive | policy.FactLength),
	},
	{
		name:     "tiresias",
		doc:      "the mixed workload as Tiresias' evaluation sees it: rigid jobs on one type, some of which suffer when spread",
		takes:    mixedFlags,
		defaults: defaults{cluster: "v100=64", jobs: mixedJobs, rate: mixedRate, restart: mixedRestart, events: true},
		build:    mixed(policy.FactSkew | policy.FactLength),
	},
	{
		name:     "gavel",
		doc:      "Gavel's generator: Philly-like durations over Gavel's job types and throughputs, Poisson arrivals",
		takes:    generatorFlags,
		defaults: defaults{cluster: defaultCluster},
		build:    buildGavel,
	},
	{
		name:     "synergy",
		doc:      "Synergy's generator: image, language and speech jobs whose speed depends on their CPU cores and memory",
		takes:    []string{"jobs", "rate", "seed", "multi-gpu"},
		defaults: defaults{cluster: synergyCluster, rate: synergyRate, round: workload.SynergyRound},
		build:    buildSynergy,
	},
}

// The mixed workload's defaults, the main job: 48 GPUs of three types in
// 8-GPU servers with Synergy's cores and memory, and a load at which the
// cluster is contended (Philly's durations at a tenth).
const (
	mixedCluster  = "v100=16/8:24c:500g,p100=16/8:24c:500g,k80=16/8:24c:500g"
	mixedJobs     = 160
	mixedRate     = 8.0
	mixedScale    = 0.1
	mixedRestart  = 30 * time.Second
	mixedPriority = 0.2
)

// mixed returns the build function of the mixed workload, or of a system's
// view of it when keep is not zero.
func mixed(keep policy.Facts) func(d draw) (*instance, error) {
	return func(d draw) (*instance, error) {
		g := workload.Mixed{Seed: d.seed, Jobs: d.jobs, Rate: d.rate, Burst: d.flags.burst,
			Scale: d.flags.scale, Facts: keep, Reference: mixedReference(d.cluster)}
		if d.flags.priorities {
			g.Priority = mixedPriority
		}
		jobs, phys, err := g.Generate()
		if err != nil {
			return nil, err
		}
		onCluster(jobs, d.cluster)
		// Co-located throughputs relate jobs to one another: each
		// snapshot is told them, as a profiler would, when the view
		// keeps them.
		var informs policy.Facts
		if keep == 0 || keep&policy.FactColocation != 0 {
			informs = policy.FactColocation
		}
		attach := func(sm *sim.Simulation, jobs []policy.Job) ([]policy.Job, error) {
			p := &workload.Physics{Jobs: phys.Jobs, Resources: workload.Resources{Cluster: sm.Cluster}}
			sm.Speed, sm.Observe, sm.Exclusive = p.Speed, p.Observe, p.Exclusive
			// Telling every pair is quadratic in the jobs: only a policy
			// that reads co-location is told.
			if uses, _ := policy.FactsOf(sm.Policy); informs != 0 && uses&policy.FactColocation != 0 {
				sm.Inform = p.Inform
			}
			return jobs, nil
		}
		return &instance{jobs: jobs, attach: attach, informs: informs}, nil
	}
}

// mixedReference is the type on which the mixed workload's durations hold:
// V100, or the cluster's first type Gavel measured.
func mixedReference(c allocation.Cluster) allocation.Accelerator {
	types := c.Types()
	for _, t := range append([]allocation.Accelerator{"v100", "p100", "k80"}, types...) {
		if slices.Contains(types, t) {
			return t
		}
	}
	return "v100"
}

// Synergy's simulated cluster (OSDI'22): 16 servers of 8 V100s, 24 cores
// and 500 GB; and its generator's default load.
const (
	synergyCluster = "v100=128/8:24c:500g"
	synergyRate    = 9.0
)

func findBuiltin(name string) *builtin {
	return byName(builtins, name, func(b builtin) string { return b.name })
}

func builtinNames() string { return nameList(builtins, func(b builtin) string { return b.name }) }

func buildGavel(d draw) (*instance, error) {
	g := workload.Generator{Seed: d.seed, Jobs: d.jobs, Rate: d.rate,
		MultiGPU: d.flags.multiGPU, Priorities: d.flags.priorities}
	jobs, err := g.Generate()
	onCluster(jobs, d.cluster)
	return &instance{jobs: jobs}, err
}

// onCluster drops the throughputs on types the cluster lacks, which a
// policy would reject the job for, so that a generated workload runs on
// any cluster with one of its types.
func onCluster(jobs []policy.Job, c allocation.Cluster) {
	types := c.Types()
	for i := range jobs {
		maps.DeleteFunc(jobs[i].Throughput, func(a allocation.Accelerator, _ float64) bool { return !slices.Contains(types, a) })
	}
}

// buildSynergy draws Synergy's jobs for the cluster's V100s, or for its
// only type if it has no V100, and runs them with Synergy's speed model.
func buildSynergy(d draw) (*instance, error) {
	acc, types := allocation.Accelerator("v100"), d.cluster.Types()
	if !slices.Contains(types, acc) {
		if len(types) != 1 {
			return nil, fmt.Errorf("synergy: its jobs run on one GPU type, v100 or the cluster's only one; the cluster has %d types and no v100", len(types))
		}
		acc = types[0]
	}
	g := workload.SynergyGenerator{Seed: d.seed, Jobs: d.jobs, Rate: d.rate, MultiGPU: d.flags.multiGPU, Accelerator: acc}
	jobs, err := g.Generate()
	return &instance{jobs: jobs, attach: resources}, err
}

// resources runs Synergy's model: a job's speed depends on the CPU cores
// and memory per GPU its grant gives it on the run's cluster.
func resources(sm *sim.Simulation, jobs []policy.Job) ([]policy.Job, error) {
	sm.Speed = workload.Resources{Cluster: sm.Cluster}.Speed
	return jobs, nil
}
