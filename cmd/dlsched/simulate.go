package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dlsched/dlsched/workload"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
)

// serverGPUs is the size of the servers --cluster builds: each type's GPUs
// are split into servers of this many GPUs, the last one taking the rest.
const serverGPUs = 4

// hasCLP reports whether the CLP engine is compiled in. Without it the
// pure-Go simplex refuses programs of more than about 150 jobs, so the
// built-in workload is smaller.
func hasCLP() bool {
	for _, s := range allocation.Solvers() {
		if s == allocation.CLP {
			return true
		}
	}
	return false
}

// Built-in workload: a contended cluster of 24 GPUs (8 of each type), with
// single-GPU jobs arriving faster than the cluster drains them.
const (
	defaultCluster = "v100=8,p100=8,k80=8"
	defaultRate    = 4.0 // jobs per hour
)

func defaultJobs() int {
	if hasCLP() {
		return 400
	}
	return 60
}

// workloadFlags are the flags simulate and compare share.
type workloadFlags struct {
	jobs       int
	rate       float64
	seed       uint64
	multiGPU   bool
	priorities bool
	trace      string
	cluster    string
	round      time.Duration
	recompute  time.Duration
	restart    time.Duration
	window     string
	out        string
	progress   bool
	pollux     string
	traces     string
	shockwave  string
	swThr      string
	tiresias   string
	events     bool
	fs         *flag.FlagSet
}

func (w *workloadFlags) register(fs *flag.FlagSet) {
	w.fs = fs
	fs.IntVar(&w.jobs, "jobs", defaultJobs(), "number of generated jobs")
	fs.Float64Var(&w.rate, "rate", defaultRate, "mean arrival rate in jobs per hour (0: all arrive at time 0)")
	fs.Uint64Var(&w.seed, "seed", 0, "generator seed")
	fs.BoolVar(&w.multiGPU, "multi-gpu", false, "generate multi-GPU jobs (1, 2, 4, 8 GPUs)")
	fs.BoolVar(&w.priorities, "priorities", false, "give 20% of the jobs weight 5")
	fs.StringVar(&w.trace, "trace", "", "read the workload from a JSON-lines trace instead of generating it")
	fs.StringVar(&w.cluster, "cluster", defaultCluster, "GPUs per type, TYPE=N,…, in servers of 4 GPUs")
	fs.DurationVar(&w.round, "round", sim.DefaultRound, "round length")
	fs.DurationVar(&w.recompute, "recompute", 0, "least time between policy calls on arrivals and completions")
	fs.DurationVar(&w.restart, "restart", 0, "time a job loses each time it (re)starts")
	fs.StringVar(&w.window, "window", "", "jobs measured, START:END in arrival order (END empty or 0: to the end); empty: all")
	fs.StringVar(&w.out, "out", "", "directory to write the results to")
	fs.BoolVar(&w.progress, "progress", false, "show a progress bar on standard error even if it is not a terminal")
	fs.StringVar(&w.pollux, "pollux-workload", "", "read a Pollux workload CSV: elastic jobs for pollux, their tuned configurations for other policies\n(defaults: --cluster t4=64 --round 1m --restart 30s)")
	fs.StringVar(&w.traces, "pollux-traces", "", "Pollux's per-model traces directory for --pollux-workload; empty: the built-in synthetic models")
	fs.StringVar(&w.shockwave, "shockwave-trace", "", "read a Shockwave trace (12 tab-separated fields): adaptive jobs, alike for every policy\n(needs --shockwave-throughputs; defaults: --cluster v100=32 --round 2m --restart 20s)")
	fs.StringVar(&w.swThr, "shockwave-throughputs", "", "Gavel-format throughput JSON for --shockwave-trace, such as Shockwave's tacc_throughputs.json")
	fs.StringVar(&w.tiresias, "tiresias-trace", "", "read a Tiresias trace CSV (job_id,num_gpu,submit_time,…,model_name,duration); implies --events\n(defaults: --cluster v100=64)")
	fs.BoolVar(&w.events, "events", false, "event-driven: call the policy at every arrival, completion and wake-up, not only at round boundaries")
}

// setup is a workload ready to simulate.
type setup struct {
	jobs    []policy.Job
	cluster allocation.Cluster
	options sim.Options
	flags   *workloadFlags
	// For a Pollux workload: the jobs with their tuned configurations, for
	// every policy but pollux, and the model of their speed.
	tuned   []policy.Job
	elastic *workload.Elastic
	// For a Shockwave trace: the model of the adaptive jobs' speed, whose
	// Adaptations every policy's run shares (see run).
	adaptive *workload.Adaptive
}

// jobsFor returns the jobs policy name simulates.
func (s *setup) jobsFor(name string) []policy.Job {
	if s.tuned != nil && name != "pollux" {
		return s.tuned
	}
	return s.jobs
}

// build checks the flags and builds the workload and cluster.
func (w *workloadFlags) build(cmd string) (*setup, error) {
	var (
		jobs, tuned []policy.Job
		elastic     *workload.Elastic
		err         error
	)
	switch {
	case w.shockwave != "" || w.swThr != "":
		if err := w.shockwaveDefaults(cmd); err != nil {
			return nil, err
		}
	case w.pollux != "":
		if jobs, tuned, elastic, err = w.readPollux(cmd); err != nil {
			return nil, err
		}
	case w.tiresias != "":
		if err := w.tiresiasDefaults(cmd); err != nil {
			return nil, err
		}
	}
	cluster, err := parseCluster(w.cluster)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: --cluster: %v", cmd, err)}
	}
	window, err := parseWindow(w.window)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: --window: %v", cmd, err)}
	}
	if w.round <= 0 || w.recompute < 0 || w.restart < 0 {
		return nil, usageError{fmt.Errorf("%s: --round must be positive, --recompute and --restart not negative", cmd)}
	}
	var adaptive *workload.Adaptive
	switch {
	case w.shockwave != "":
		if jobs, adaptive, err = w.readShockwave(cmd, cluster); err != nil {
			return nil, err
		}
	case w.pollux != "": // read first, for its defaults
	case w.tiresias != "":
		if jobs, err = w.readTiresias(cmd, cluster); err != nil {
			return nil, err
		}
	case w.traces != "":
		return nil, usageError{fmt.Errorf("%s: --pollux-traces needs --pollux-workload", cmd)}
	case w.trace != "":
		if jobs, err = w.readTrace(cmd); err != nil {
			return nil, err
		}
	default:
		if w.jobs <= 0 {
			return nil, usageError{fmt.Errorf("%s: --jobs: %d is not positive", cmd, w.jobs)}
		}
		jobs, err = workload.Generator{Seed: w.seed, Jobs: w.jobs, Rate: w.rate, MultiGPU: w.multiGPU, Priorities: w.priorities}.Generate()
		if err != nil {
			return nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
		}
	}
	if window.End > len(jobs) || (window.End == 0 && window.Start >= len(jobs)) {
		return nil, usageError{fmt.Errorf("%s: --window: %s is outside the %d jobs of the workload", cmd, w.window, len(jobs))}
	}
	return &setup{jobs: jobs, cluster: cluster, flags: w, tuned: tuned, elastic: elastic, adaptive: adaptive,
		options: sim.Options{Window: window, GPUs: cluster.TotalGPUs()}}, nil
}

// readPollux reads the --pollux-workload file twice, as elastic and as tuned
// jobs, and sets the flags' Pollux defaults: a 64-GPU T4 cluster of 4-GPU
// servers, 60 s rounds and 30 s restarts, unless given.
func (w *workloadFlags) readPollux(cmd string) (jobs, tuned []policy.Job, model *workload.Elastic, err error) {
	set := map[string]bool{}
	w.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []string{"trace", "jobs", "rate", "seed", "multi-gpu", "priorities"} {
		if set[f] {
			return nil, nil, nil, usageError{fmt.Errorf("%s: --%s cannot be used with --pollux-workload", cmd, f)}
		}
	}
	apps := workload.SyntheticApps()
	if w.traces != "" {
		if apps, err = workload.LoadApps(w.traces); err != nil {
			return nil, nil, nil, usageError{fmt.Errorf("%s: --pollux-traces: %v", cmd, err)}
		}
	}
	if jobs, model, err = workload.ReadPolluxWorkloadFile(w.pollux, apps, workload.WorkloadOptions{}); err != nil {
		return nil, nil, nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
	}
	if tuned, _, err = workload.ReadPolluxWorkloadFile(w.pollux, apps, workload.WorkloadOptions{Tuned: true}); err != nil {
		return nil, nil, nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
	}
	model.Prepare(jobs)
	model.Prepare(tuned)
	if !set["cluster"] {
		w.cluster = string(workload.PolluxGPU) + "=64"
	}
	if !set["round"] {
		w.round = time.Minute
	}
	if !set["restart"] {
		w.restart = 30 * time.Second
	}
	return jobs, tuned, model, nil
}

// readTrace reads the --trace file (workload.ReadTrace's JSON lines); the
// generator's flags cannot be combined with it.
func (w *workloadFlags) readTrace(cmd string) ([]policy.Job, error) {
	var clash string
	w.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "jobs", "rate", "seed", "multi-gpu", "priorities":
			clash = f.Name
		}
	})
	if clash != "" {
		return nil, usageError{fmt.Errorf("%s: --%s generates a workload and cannot be used with --trace", cmd, clash)}
	}
	f, err := os.Open(w.trace)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: --trace: %v", cmd, err)}
	}
	defer f.Close()
	jobs, err := workload.ReadTrace(f, w.trace)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
	}
	if len(jobs) == 0 {
		return nil, usageError{fmt.Errorf("%s: --trace: %s holds no jobs", cmd, w.trace)}
	}
	return jobs, nil
}

// tiresiasDefaults checks that --tiresias-trace comes with no other
// workload flag, turns on --events and sets the default cluster.
func (w *workloadFlags) tiresiasDefaults(cmd string) error {
	set := map[string]bool{}
	w.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []string{"pollux-workload", "pollux-traces", "shockwave-trace", "shockwave-throughputs", "trace", "jobs", "rate", "seed", "multi-gpu", "priorities"} {
		if set[f] {
			return usageError{fmt.Errorf("%s: --%s cannot be used with --tiresias-trace", cmd, f)}
		}
	}
	if !set["cluster"] {
		w.cluster = "v100=64"
	}
	w.events = true
	return nil
}

// readTiresias reads the --tiresias-trace file, giving every job speed 1 on
// each type of the cluster (the trace gives run times, not throughputs).
func (w *workloadFlags) readTiresias(cmd string, cluster allocation.Cluster) ([]policy.Job, error) {
	f, err := os.Open(w.tiresias)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: --tiresias-trace: %v", cmd, err)}
	}
	defer f.Close()
	jobs, err := workload.ReadTiresiasTrace(f, w.tiresias, cluster.Types()...)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
	}
	if len(jobs) == 0 {
		return nil, usageError{fmt.Errorf("%s: --tiresias-trace: %s holds no jobs", cmd, w.tiresias)}
	}
	return jobs, nil
}

// describe is the one-line description of the setup printed before results.
func (s *setup) describe() string {
	w := s.flags
	var b strings.Builder
	switch {
	case w.shockwave != "":
		fmt.Fprintf(&b, "workload: %d Shockwave jobs from %s (throughputs from %s; adaptive batch sizes for all policies)", len(s.jobs), w.shockwave, w.swThr)
	case w.pollux != "":
		models := "synthetic models"
		if w.traces != "" {
			models = "models from " + w.traces
		}
		fmt.Fprintf(&b, "workload: %d Pollux jobs from %s (%s; tuned configurations for all but pollux)", len(s.jobs), w.pollux, models)
	case w.trace != "":
		fmt.Fprintf(&b, "workload: %d jobs from %s", len(s.jobs), w.trace)
	case w.tiresias != "":
		fmt.Fprintf(&b, "workload: %d Tiresias jobs from %s", len(s.jobs), w.tiresias)
	default:
		kind := "single-GPU"
		if w.multiGPU {
			kind = "multi-GPU"
		}
		if w.priorities {
			kind += ", weighted"
		}
		fmt.Fprintf(&b, "workload: %d generated %s jobs (seed %d, %g jobs/h)", len(s.jobs), kind, w.seed, w.rate)
	}
	fmt.Fprintf(&b, "; cluster: %s (%d GPUs, %d-GPU servers)", w.cluster, s.cluster.TotalGPUs(), serverGPUs)
	fmt.Fprintf(&b, "; round %v", w.round)
	if w.recompute > 0 {
		fmt.Fprintf(&b, ", recompute %v", w.recompute)
	}
	if w.restart > 0 {
		fmt.Fprintf(&b, ", restart %v", w.restart)
	}
	if w.events {
		b.WriteString(", event-driven")
	}
	if w.window == "" {
		b.WriteString("; window: all jobs")
	} else {
		fmt.Fprintf(&b, "; window: jobs %s", w.window)
	}
	solver := "purego"
	if hasCLP() {
		solver = "clp"
	}
	fmt.Fprintf(&b, "; LP: %s", solver)
	return b.String()
}

// run returns a simulation of the setup under policy p, registered as
// name, and the jobs it simulates. For a Shockwave trace the jobs are a
// fresh copy, prepared by a fresh Adaptive (sharing the read-only
// Adaptations), so that no two policies' runs share a job or a cache.
func (s *setup) run(name string, p policy.Policy, progress func(finished, total int)) (*sim.Simulation, []policy.Job, error) {
	sm := &sim.Simulation{Cluster: s.cluster, Policy: p, Round: s.flags.round,
		Recompute: s.flags.recompute, Restart: s.flags.restart, Events: s.flags.events, Progress: progress}
	if s.elastic != nil {
		sm.Speed, sm.Observe, sm.Reallocate = s.elastic.Speed, s.elastic.Observe, s.flags.restart
	}
	jobs := s.jobsFor(name)
	if s.adaptive != nil {
		model := &workload.Adaptive{Jobs: s.adaptive.Jobs, Round: s.flags.round}
		jobs = cloneJobs(jobs)
		if err := model.Prepare(jobs); err != nil {
			return nil, nil, err
		}
		sm.Speed, sm.Observe, sm.Exclusive = model.Speed, model.Observe, model.Exclusive
	}
	return sm, jobs, nil
}

// runError adds a hint to a simulation that failed because the pure-Go LP
// engine refused its size.
func runError(name string, err error) error {
	if errors.Is(err, allocation.ErrTooLarge) {
		return fmt.Errorf("%s: %w; this build has only the pure-Go LP engine (about 150 jobs at once): build with -tags clp (CLP through cgo), or use fewer --jobs or a lower --rate", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// parseCluster reads TYPE=GPUS,… into servers of serverGPUs GPUs each (the
// last server of a type takes the remainder), named TYPE-0, TYPE-1, ….
func parseCluster(spec string) (allocation.Cluster, error) {
	var c allocation.Cluster
	seen := make(map[string]bool)
	if strings.TrimSpace(spec) == "" {
		return c, errors.New("empty; want TYPE=GPUS,… such as v100=36,p100=36,k80=36")
	}
	for _, part := range strings.Split(spec, ",") {
		typ, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		typ = strings.TrimSpace(typ)
		if !ok || typ == "" {
			return c, fmt.Errorf("%q: want TYPE=GPUS, such as v100=36", part)
		}
		if seen[typ] {
			return c, fmt.Errorf("type %q listed twice", typ)
		}
		seen[typ] = true
		gpus, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || gpus <= 0 || gpus > 1<<20 {
			return c, fmt.Errorf("%q: GPU count %q is not a positive integer", part, n)
		}
		for i := 0; gpus > 0; i++ {
			g := min(gpus, serverGPUs)
			c.Servers = append(c.Servers, allocation.Server{
				ID: fmt.Sprintf("%s-%d", typ, i), Accelerator: allocation.Accelerator(typ), GPUs: g,
			})
			gpus -= g
		}
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// parseWindow reads START:END (END may be empty, meaning the end of the
// trace); the empty string and "all" select every job.
func parseWindow(spec string) (sim.Window, error) {
	if spec == "" || spec == "all" {
		return sim.Window{}, nil
	}
	a, b, ok := strings.Cut(spec, ":")
	if !ok {
		return sim.Window{}, fmt.Errorf("%q: want START:END, such as 4000:5000", spec)
	}
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return sim.Window{}, fmt.Errorf("%q: start %q is not a non-negative integer", spec, a)
	}
	end := 0
	if b != "" {
		end, err = strconv.Atoi(b)
		if err != nil || end < 0 {
			return sim.Window{}, fmt.Errorf("%q: end %q is not a non-negative integer", spec, b)
		}
		if end != 0 && end <= start {
			return sim.Window{}, fmt.Errorf("%q: end is not after start", spec)
		}
	}
	return sim.Window{Start: start, End: end}, nil
}

// newBar returns a progress bar on stderr, or nil if none should be shown:
// only when stderr is a terminal or force is set.
func newBar(stderr io.Writer, force bool, total int, desc string) *progressbar.ProgressBar {
	if !force {
		f, ok := stderr.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return nil
		}
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("policy", "gavel.las", "registered policy name")
	config := fs.String("config", "", "policy configuration as a JSON object")
	var w workloadFlags
	w.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := policy.New(*name, []byte(*config))
	if err != nil {
		return err
	}
	s, err := w.build("simulate")
	if err != nil {
		return err
	}
	var (
		progress func(int, int)
		res      *sim.Result
	)
	bar := newBar(stderr, w.progress, len(s.jobs), *name)
	if bar != nil {
		progress = func(done, _ int) { _ = bar.Set(done) }
	}
	sm, jobs, err := s.run(*name, p, progress)
	if err == nil {
		res, err = sm.Run(ctx, jobs)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return runError(*name, err)
	}
	sum, err := sim.Summarize(res.Jobs, res.Rounds, s.options)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	fmt.Fprintln(stdout, s.describe())
	if err := printSummary(stdout, *name, sum); err != nil {
		return err
	}
	if w.out == "" {
		return nil
	}
	if err := os.MkdirAll(w.out, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(w.out, "summary.json"), sum); err != nil {
		return err
	}
	return res.WriteFiles(w.out) // jobs.csv, rounds.csv, result.json, times in seconds
}

// printSummary prints a summary as an aligned two-column table.
func printSummary(out io.Writer, name string, s sim.Summary) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	rows := []struct {
		k string
		v string
	}{
		{"policy", name},
		{"jobs measured", fmt.Sprintf("%d of %d (%d finished, %d unfinished, %d never ran, %d left out by the policy)", s.Jobs, s.TraceJobs, s.Finished, s.Unfinished, s.NeverRan, s.Unscheduled)},
		{"GPUs", strconv.Itoa(s.GPUs)},
		{"avg JCT", hours(s.AvgJCT)},
		{"median JCT", hours(s.MedianJCT)},
		{"p99 JCT", hours(s.P99JCT)},
		{"makespan", hours(s.Makespan) + unfinishedNote(s.TraceUnfinished)},
		{"mean FTF", fmt.Sprintf("%.3f", s.MeanFTF)},
		{"worst FTF", fmt.Sprintf("%.3f", s.WorstFTF)},
		{"unfair fraction", fmt.Sprintf("%.1f %% (FTF > %g)", 100*s.UnfairFraction, s.UnfairThreshold)},
		{"mean FTF (contention)", fmt.Sprintf("%.3f", s.MeanFTFContention)},
		{"worst FTF (contention)", fmt.Sprintf("%.3f", s.WorstFTFContention)},
		{"unfair fraction (contention)", fmt.Sprintf("%.1f %%", 100*s.UnfairFractionContention)},
		{"utilization", fmt.Sprintf("%.1f %%", 100*s.Utilization)},
		{"mean time to first run", hours(s.MeanTimeToFirstRun)},
		{"preemptions per job", fmt.Sprintf("%.2f", s.PreemptionsPerJob)},
		{"migrations per job", fmt.Sprintf("%.2f", s.MigrationsPerJob)},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\n", r.k, r.v)
	}
	return w.Flush()
}

func hours(seconds float64) string { return fmt.Sprintf("%.2f h", seconds/3600) }

func unfinishedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (lower bound: %d jobs unfinished)", n)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
