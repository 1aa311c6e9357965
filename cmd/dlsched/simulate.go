package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
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

// hasCLP reports whether the CLP engine is compiled in, for the report's
// description of the LP engine.
func hasCLP() bool {
	for _, s := range allocation.Solvers() {
		if s == allocation.CLP {
			return true
		}
	}
	return false
}

// The gavel workload's defaults: a contended cluster of 24 GPUs (8 of each
// type), with single-GPU jobs arriving faster than the cluster drains them.
const (
	defaultCluster = "v100=8,p100=8,k80=8"
	defaultRate    = 4.0 // jobs per hour
)

// defaultJobs is the gavel workload's size in both builds: the pure-Go
// engine simulates it about as fast as CLP (`dlsched simulate --jobs 400`:
// 0.50 s against 0.42 s for gavel.las, 2.3 s against 1.5 s for gavel.ftf).
const defaultJobs = 400

// workloadFlags are the flags simulate and compare share.
type workloadFlags struct {
	workload    string // a built-in name or a file
	format      string
	jobs        int
	rate        float64
	seed        uint64
	multiGPU    bool
	priorities  bool
	burst       float64
	scale       float64
	models      string
	throughputs string
	cluster     string
	round       time.Duration
	recompute   time.Duration
	restart     time.Duration
	window      string
	out         string
	progress    bool
	events      bool
	cold        bool
	cpuprofile  string
	// seeds and rateList are compare's (registerSweep); rates is the
	// --rates list, or --rate alone.
	seeds    int
	rateList string
	rates    []float64
	fs       *flag.FlagSet
}

func (w *workloadFlags) register(fs *flag.FlagSet) {
	w.fs, w.seeds = fs, 1
	fs.StringVar(&w.workload, "workload", defaultWorkload, "a built-in workload or a workload file:\n"+builtinUsage())
	fs.StringVar(&w.format, "format", "", "format of the --workload file, empty to detect it from its first line:\n"+formatUsage())
	fs.IntVar(&w.jobs, "jobs", defaultJobs, "number of generated jobs")
	fs.Float64Var(&w.rate, "rate", defaultRate, "mean arrival rate of generated jobs per hour (0: all arrive at time 0; a workload may change the default)")
	fs.Uint64Var(&w.seed, "seed", 0, "generator seed")
	fs.BoolVar(&w.multiGPU, "multi-gpu", false, "generate multi-GPU jobs (1, 2, 4, 8 GPUs)")
	fs.BoolVar(&w.priorities, "priorities", false, "give 20% of the generated jobs weight 5")
	fs.Float64Var(&w.burst, "burst", 0, "relative amplitude of a diurnal cycle of the arrival rate, 0 to 1 (mixed workloads)")
	fs.Float64Var(&w.scale, "duration-scale", mixedScale, "factor on the trace durations the mixed workloads draw")
	fs.StringVar(&w.models, "models", "", "Pollux's per-model traces directory for a Pollux workload file; empty: the built-in synthetic models")
	fs.StringVar(&w.throughputs, "throughputs", "", "Gavel-format throughput JSON for a Shockwave trace, such as Shockwave's tacc_throughputs.json")
	fs.StringVar(&w.cluster, "cluster", "", clusterSyntax+";\nGPUs in servers of 4 unless PER_SERVER is given (default: the workload's)")
	fs.DurationVar(&w.round, "round", sim.DefaultRound, "round length")
	fs.DurationVar(&w.recompute, "recompute", 0, "least time between policy calls on arrivals and completions")
	fs.DurationVar(&w.restart, "restart", 0, "time a job loses each time it (re)starts")
	fs.StringVar(&w.window, "window", "", "jobs measured, START:END in arrival order (END empty or 0: to the end); empty: all")
	fs.StringVar(&w.out, "out", "", "directory to write the results to")
	fs.BoolVar(&w.progress, "progress", false, "show a progress bar on standard error even if it is not a terminal")
	fs.BoolVar(&w.events, "events", false, "event-driven: call the policy at every arrival, completion and wake-up, not only at round boundaries")
	fs.StringVar(&w.cpuprofile, "cpuprofile", "", "write a CPU profile of the run to this file, for go tool pprof")
	fs.BoolVar(&w.cold, "cold", false, "solve every policy call's LPs from scratch, not from the last call's bases: slower, and\nresults that do not depend on the calls before (warm ones equal them within the solver's tolerance)")
}

// profile starts the CPU profile --cpuprofile asks for and returns the
// function that stops it; without the flag both do nothing.
func (w *workloadFlags) profile() (stop func(), err error) {
	if w.cpuprofile == "" {
		return func() {}, nil
	}
	f, err := os.Create(w.cpuprofile)
	if err != nil {
		return nil, usageError{fmt.Errorf("--cpuprofile: %v", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// registerSweep registers compare's flags that vary a generated workload.
func (w *workloadFlags) registerSweep(fs *flag.FlagSet) {
	fs.IntVar(&w.seeds, "seeds", 1, "run every policy on this many generated workloads, seeds --seed, --seed+1, …, and report means with 95% intervals")
	fs.StringVar(&w.rateList, "rates", "", "load sweep: comma-separated arrival rates in jobs per hour; the table is for the first")
}

// builtinUsage lists the built-in workloads with their defaults.
func builtinUsage() string {
	var lines []string
	for _, x := range builtins {
		lines = append(lines, fmt.Sprintf("  %s: %s (defaults: %s)", x.name, x.doc, x.defaults))
	}
	return strings.Join(lines, "\n")
}

// formatUsage lists the file formats, how each is recognised and its
// defaults.
func formatUsage() string {
	var lines []string
	for _, f := range formats {
		lines = append(lines, fmt.Sprintf("  %s: %s (defaults: %s)", f.name, f.looks, f.defaults))
	}
	return strings.Join(lines, "\n")
}

// String lists the defaults as the flags they stand for.
func (d defaults) String() string {
	var f []string
	add := func(ok bool, s string) {
		if ok {
			f = append(f, s)
		}
	}
	add(true, "--cluster "+cmp.Or(d.cluster, defaultCluster))
	add(d.jobs > 0, fmt.Sprintf("--jobs %d", d.jobs))
	add(d.rate > 0, fmt.Sprintf("--rate %g", d.rate))
	add(d.round > 0, fmt.Sprintf("--round %v", d.round))
	add(d.restart > 0, fmt.Sprintf("--restart %v", d.restart))
	add(d.recompute > 0, fmt.Sprintf("--recompute %v", d.recompute))
	add(d.events, "--events")
	return strings.Join(f, " ")
}

// applyDefaults gives the flags the user left unset the workload's values.
func (w *workloadFlags) applyDefaults(d defaults) {
	if !w.isSet("cluster") {
		w.cluster = cmp.Or(d.cluster, defaultCluster)
	}
	if !w.isSet("jobs") && d.jobs > 0 {
		w.jobs = d.jobs
	}
	if !w.isSet("rate") && d.rate > 0 {
		w.rate = d.rate
	}
	if !w.isSet("round") && d.round > 0 {
		w.round = d.round
	}
	if !w.isSet("restart") && d.restart > 0 {
		w.restart = d.restart
	}
	if !w.isSet("recompute") && d.recompute > 0 {
		w.recompute = d.recompute
	}
	if !w.isSet("events") && d.events {
		w.events = true
	}
}

func (w *workloadFlags) isSet(name string) (set bool) {
	w.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// setup is a workload ready to simulate.
type setup struct {
	flags   *workloadFlags
	builtin *builtin // the generated workload, or nil for a file
	format  *format  // the file's format, or nil
	cluster allocation.Cluster
	options sim.Options
	first   *instance // the workload of the first seed and rate
}

func (s *setup) defaults() defaults {
	if s.builtin != nil {
		return s.builtin.defaults
	}
	return s.format.defaults
}

// policy returns a new instance of the policy named, configured by config
// or, if that is empty, as the workload's own simulator ran it. A run calls
// one policy from start to end, so its solves start warm, unless --cold or
// the configuration itself says "warm".
func (s *setup) policy(name, config string) (policy.Policy, error) {
	conf := []byte(cmp.Or(config, s.defaults().configs[name]))
	p, err := policy.New(name, conf)
	if err == nil && (s.flags.cold || !setsWarm(conf)) {
		policy.SetWarm(p, !s.flags.cold)
	}
	return p, err
}

// setsWarm reports whether a policy configuration names "warm" itself.
func setsWarm(conf []byte) bool {
	var fields map[string]json.RawMessage
	return json.Unmarshal(conf, &fields) == nil && fields["warm"] != nil
}

// build checks the flags and builds the setup with its first workload.
func (w *workloadFlags) build(cmd string) (*setup, error) {
	s, err := w.resolve(cmd)
	if err != nil {
		return nil, err
	}
	if err := w.settings(cmd, s); err != nil {
		return nil, err
	}
	if s.first, err = s.load(w.seed, w.rate); err != nil {
		return nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
	}
	n, window := len(s.first.jobs), s.options.Window
	if n == 0 {
		return nil, usageError{fmt.Errorf("%s: --workload: %s holds no jobs", cmd, w.workload)}
	}
	if window.End > n || (window.End == 0 && window.Start >= n) {
		return nil, usageError{fmt.Errorf("%s: --window: %s is outside the %d jobs of the workload", cmd, w.window, n)}
	}
	return s, nil
}

// resolve finds what --workload names, checks that every workload-specific
// flag given is one it reads, and applies its defaults.
func (w *workloadFlags) resolve(cmd string) (*setup, error) {
	s := &setup{flags: w, builtin: findBuiltin(w.workload)}
	var err error
	switch {
	case s.builtin == nil:
		s.format, err = w.fileFormat()
	case w.format != "":
		err = fmt.Errorf("--format applies to workload files, not to the built-in workload %s", w.workload)
	}
	if err == nil {
		err = w.checkTakes(s)
	}
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %v", cmd, err)}
	}
	w.applyDefaults(s.defaults())
	return s, nil
}

// fileFormat returns the format of the --workload file: --format's, or
// the one its content shows.
func (w *workloadFlags) fileFormat() (*format, error) {
	if _, err := os.Stat(w.workload); err != nil {
		return nil, fmt.Errorf("--workload: %q is neither a built-in workload (%s) nor a file: %v", w.workload, builtinNames(), err)
	}
	if w.format == "" {
		f, err := detectFormat(w.workload)
		if err != nil {
			return nil, fmt.Errorf("--workload: %v", err)
		}
		return f, nil
	}
	if f := findFormat(w.format); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("--format: %q is not one of %s", w.format, formatNames())
}

// checkTakes reports a workload-specific flag that the workload does not
// read, rather than ignore it.
func (w *workloadFlags) checkTakes(s *setup) error {
	for _, f := range workloadOnly {
		switch {
		case !w.isSet(f):
		case s.builtin != nil && !slices.Contains(s.builtin.takes, f):
			return fmt.Errorf("--%s does not apply to the built-in workload %s", f, s.builtin.name)
		case s.builtin != nil || slices.Contains(s.format.takes, f):
		case slices.Contains(generatorFlags, f):
			return fmt.Errorf("--%s applies to generated workloads only, not to the file %s", f, w.workload)
		default:
			return fmt.Errorf("--%s does not apply to the file %s (%s format)", f, w.workload, s.format.name)
		}
	}
	return nil
}

// settings reads the cluster, window, times and sweep flags into s.
func (w *workloadFlags) settings(cmd string, s *setup) error {
	var err error
	if s.cluster, err = parseCluster(w.cluster); err != nil {
		return usageError{fmt.Errorf("%s: --cluster: %v", cmd, err)}
	}
	window, err := parseWindow(w.window)
	if err != nil {
		return usageError{fmt.Errorf("%s: --window: %v", cmd, err)}
	}
	s.options = sim.Options{Window: window, GPUs: s.cluster.TotalGPUs()}
	switch {
	case w.round <= 0 || w.recompute < 0 || w.restart < 0:
		return usageError{fmt.Errorf("%s: --round must be positive, --recompute and --restart not negative", cmd)}
	case s.builtin != nil && w.jobs <= 0:
		return usageError{fmt.Errorf("%s: --jobs: %d is not positive", cmd, w.jobs)}
	}
	return w.sweep(cmd, s.builtin != nil)
}

// sweep checks --seeds and --rates, which only a generated workload can
// vary, and sets rates: the --rates list, or --rate alone.
func (w *workloadFlags) sweep(cmd string, generated bool) error {
	switch {
	case w.seeds < 1:
		return usageError{fmt.Errorf("%s: --seeds: %d is not positive", cmd, w.seeds)}
	case !generated && w.seeds > 1:
		return usageError{fmt.Errorf("%s: --seeds applies to generated workloads only, not to the file %s", cmd, w.workload)}
	case !generated && w.rateList != "":
		return usageError{fmt.Errorf("%s: --rates applies to generated workloads only, not to the file %s", cmd, w.workload)}
	case w.rateList != "" && w.isSet("rate"):
		return usageError{fmt.Errorf("%s: give --rate or --rates, not both", cmd)}
	}
	w.rates = []float64{w.rate}
	if w.rateList == "" {
		return nil
	}
	rates, err := parseRates(w.rateList)
	if err != nil {
		return usageError{fmt.Errorf("%s: --rates: %v", cmd, err)}
	}
	w.rates, w.rate = rates, rates[0]
	return nil
}

// parseRates reads comma-separated distinct rates, finite and not negative.
func parseRates(spec string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Split(spec, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		switch {
		case err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r):
			return nil, fmt.Errorf("%q is not a rate in jobs per hour", f)
		case slices.Contains(rates, r):
			return nil, fmt.Errorf("%g listed twice", r)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// load returns the workload of one seed and rate: drawn afresh for a
// built-in workload, or the file's, the same for all.
func (s *setup) load(seed uint64, rate float64) (*instance, error) {
	w := s.flags
	switch {
	case s.first != nil && (s.builtin == nil || seed == w.seed && rate == w.rate):
		return s.first, nil
	case s.builtin == nil:
		return s.format.read(w, s.cluster)
	}
	return s.builtin.build(draw{seed: seed, jobs: w.jobs, rate: rate, cluster: s.cluster, flags: w})
}

// describe is the one-line description of the setup printed before results.
func (s *setup) describe() string {
	w := s.flags
	var b strings.Builder
	b.WriteString(s.describeWorkload())
	fmt.Fprintf(&b, "; cluster: %s", clusterShape(s.cluster))
	fmt.Fprintf(&b, "; round %v", w.round)
	if w.recompute > 0 {
		fmt.Fprintf(&b, ", recompute %v", w.recompute)
	}
	if w.restart > 0 {
		fmt.Fprintf(&b, ", restart %v", w.restart)
	}
	if s.defaults().reallocate && w.restart > 0 {
		b.WriteString(" (also on resizes)")
	}
	if w.events {
		b.WriteString(", event-driven")
	}
	configs := s.defaults().configs
	for i, name := range slices.Sorted(maps.Keys(configs)) {
		if i == 0 {
			b.WriteString("; as the workload's simulator ran them:")
		}
		fmt.Fprintf(&b, " %s %s", name, configs[name])
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

// describeWorkload says where the jobs come from.
func (s *setup) describeWorkload() string {
	w, n := s.flags, len(s.first.jobs)
	if f := s.format; f != nil {
		desc := fmt.Sprintf("workload: %d %s jobs from %s", n, f.label, w.workload)
		desc = strings.Replace(desc, "  ", " ", 1) // no label
		switch f.name {
		case "pollux":
			models := "synthetic models"
			if w.models != "" {
				models = "models from " + w.models
			}
			desc += " (" + models + "; tuned configurations for policies that do not choose batch sizes)"
		case "shockwave":
			desc += " (throughputs from " + w.throughputs + "; adaptive batch sizes for all policies)"
		}
		return desc
	}
	var parts []string
	switch {
	case w.workload != "gavel":
	case w.multiGPU:
		parts = append(parts, "multi-GPU")
	default:
		parts = append(parts, "single-GPU")
	}
	if w.priorities {
		parts = append(parts, "weighted")
	}
	seeds := fmt.Sprintf("seed %d", w.seed)
	if w.seeds > 1 {
		seeds = fmt.Sprintf("seeds %d–%d", w.seed, w.seed+uint64(w.seeds)-1)
	}
	var rates []string
	for _, r := range w.rates {
		rates = append(rates, strconv.FormatFloat(r, 'g', -1, 64))
	}
	parts = append(parts, seeds, strings.Join(rates, ", ")+" jobs/h")
	return fmt.Sprintf("workload: %d generated %s jobs (%s)", n, s.builtin.name, strings.Join(parts, "; "))
}

// run returns a simulation of workload in under policy p and the jobs it
// simulates, with the workload's model of job speed attached.
func (s *setup) run(p policy.Policy, in *instance, progress func(finished, total int)) (*sim.Simulation, []policy.Job, error) {
	w := s.flags
	sm := &sim.Simulation{Cluster: s.cluster, Policy: p, Round: w.round,
		Recompute: w.recompute, Restart: w.restart, Events: w.events, Progress: progress}
	if s.defaults().reallocate {
		sm.Reallocate = w.restart
	}
	jobs := in.jobsFor(p)
	if in.attach == nil {
		return sm, jobs, nil
	}
	jobs, err := in.attach(sm, jobs)
	return sm, jobs, err
}

// runError adds a hint to a simulation that failed because the pure-Go LP
// engine refused its size.
func runError(name string, err error) error {
	if errors.Is(err, allocation.ErrTooLarge) {
		return fmt.Errorf("%s: %w; this build has only the pure-Go LP engine (programs of up to 32,768 rows, about 16,000 jobs at once): build with -tags clp (CLP through cgo), or use fewer --jobs or a lower --rate", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
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
	s, err := w.build("simulate")
	if err != nil {
		return err
	}
	stop, err := w.profile()
	if err != nil {
		return err
	}
	defer stop()
	p, err := s.policy(*name, *config)
	if err != nil {
		return err
	}
	var (
		progress func(int, int)
		res      *sim.Result
	)
	bar := newBar(stderr, w.progress, len(s.first.jobs), *name)
	if bar != nil {
		progress = func(done, _ int) { _ = bar.Set(done) }
	}
	sm, jobs, err := s.run(p, s.first, progress)
	if err == nil {
		res, err = sm.Run(ctx, jobs)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return runError(*name, err)
	}
	sum, err := res.Summary(s.options)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	fmt.Fprintln(stdout, s.describe())
	notes := factNotes(p, s.present([]*instance{s.first}))
	if err := printSummary(stdout, *name, sum, notes); err != nil {
		return err
	}
	if w.out == "" {
		return nil
	}
	return writeSimulation(w.out, sum, res)
}

// writeSimulation writes summary.json and the result's jobs.csv,
// rounds.csv and result.json (times in seconds) into dir.
func writeSimulation(dir string, sum sim.Summary, res *sim.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "summary.json"), sum); err != nil {
		return err
	}
	return res.WriteFiles(dir)
}

// printSummary prints a summary as an aligned two-column table, with the
// notes on what the policy ignores of the workload or lacks.
func printSummary(out io.Writer, name string, s sim.Summary, notes []string) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	rows := []struct{ k, v string }{
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
		{"decision latency", fmt.Sprintf("p50 %.3f ms, p99 %.3f ms, %v in all", 1000*s.DecisionP50, 1000*s.DecisionP99,
			time.Duration(s.DecisionTotal*float64(time.Second)).Round(time.Microsecond))},
	}
	for _, n := range notes {
		rows = append(rows, struct{ k, v string }{"notes", n})
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
