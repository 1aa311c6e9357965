package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
)

// defaultPolicies is compare's built-in set: every registered policy.
const defaultPolicies = "all"

// outcome is one policy's simulation of the first workload (first seed,
// first rate), for the plots and summary.json.
type outcome struct {
	name    string
	result  *sim.Result
	summary sim.Summary
	perJob  []sim.JobMetrics
}

// trial is one simulation: one policy on one workload. The result and
// per-job metrics are kept for the first workload only.
type trial struct {
	summary sim.Summary
	result  *sim.Result
	perJob  []sim.JobMetrics
	err     error
}

// metric is one column of the table and how a summary gives its value.
type metric struct {
	column
	value  func(s sim.Summary) float64
	digits int // decimals in the terminal
}

// metrics are the table's columns, in order.
var metrics = []metric{
	{column{"avg_jct_h", "avg JCT", "h", true}, func(s sim.Summary) float64 { return s.AvgJCT / 3600 }, 2},
	{column{"p50_jct_h", "p50 JCT", "h", true}, func(s sim.Summary) float64 { return s.MedianJCT / 3600 }, 2},
	{column{"p99_jct_h", "p99 JCT", "h", true}, func(s sim.Summary) float64 { return s.P99JCT / 3600 }, 2},
	{column{"makespan_h", "makespan", "h", true}, func(s sim.Summary) float64 { return s.Makespan / 3600 }, 2},
	{column{"gpu_util_pct", "GPU util", "%", false}, func(s sim.Summary) float64 { return 100 * s.Utilization }, 1},
	{column{"worst_ftf", "worst ρ (FTF)", "", true}, func(s sim.Summary) float64 { return s.WorstFTF }, 2},
	{column{"unfair_pct", fmt.Sprintf("unfair (ρ > %g)", sim.DefaultUnfairThreshold), "%", true},
		func(s sim.Summary) float64 { return 100 * s.UnfairFraction }, 1},
	{column{"preemptions_per_job", "preemptions/job", "", true}, func(s sim.Summary) float64 { return s.PreemptionsPerJob }, 2},
	{column{"migrations_per_job", "migrations/job", "", true}, func(s sim.Summary) float64 { return s.MigrationsPerJob }, 2},
	{column{"decision_p50_ms", "decision p50", "ms", true}, func(s sim.Summary) float64 { return 1000 * s.DecisionP50 }, 3},
	{column{"decision_p99_ms", "decision p99", "ms", true}, func(s sim.Summary) float64 { return 1000 * s.DecisionP99 }, 3},
	{column{"decision_total_s", "decisions", "s", true}, func(s sim.Summary) float64 { return s.DecisionTotal }, 1},
}

func compare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	list := fs.String("policies", defaultPolicies, "comma-separated registered policy names, or all")
	strict := fs.Bool("strict", false, "fail as soon as one policy fails, instead of reporting it in its row")
	var w workloadFlags
	w.register(fs)
	w.registerSweep(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	names, policies, err := policiesOf(*list)
	if err != nil {
		return err
	}
	s, err := w.build("compare")
	if err != nil {
		return err
	}
	stop, err := w.profile()
	if err != nil {
		return err
	}
	defer stop()
	insts, err := s.instances()
	if err != nil {
		return usageError{fmt.Errorf("compare: %v", err)}
	}
	bar := newBar(stderr, w.progress, runs(len(names), insts), "compare")
	grid, first := s.runAll(ctx, names, insts, *strict, bar)
	if bar != nil {
		_ = bar.Finish()
	}
	if err := failure(ctx, grid, first, *strict); err != nil {
		return err
	}
	t := s.tabulate(names, policies, insts, grid)
	fmt.Fprintln(stdout, t.Setup)
	if err := printTable(stdout, t); err != nil {
		return err
	}
	if err := printSweep(stdout, t); err != nil || w.out == "" {
		return err
	}
	return writeOutputs(w.out, t, outcomesOf(names, grid))
}

// policiesOf reads --policies: distinct registered names, or all of them.
func policiesOf(list string) ([]string, []policy.Policy, error) {
	if strings.TrimSpace(list) == "all" {
		list = ""
		for _, info := range policy.Registered() {
			list += info.Name + ","
		}
	}
	var names []string
	var policies []policy.Policy
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case slices.Contains(names, n):
			return nil, nil, usageError{fmt.Errorf("compare: --policies: %q listed twice", n)}
		}
		p, err := policy.New(n, nil)
		if err != nil {
			return nil, nil, err
		}
		names, policies = append(names, n), append(policies, p)
	}
	if len(names) == 0 {
		return nil, nil, usageError{fmt.Errorf("compare: --policies: no policy named")}
	}
	return names, policies, nil
}

// instances draws the workload of every rate and seed, insts[rate][seed],
// up front: each is shared by every policy's run.
func (s *setup) instances() ([][]*instance, error) {
	w := s.flags
	insts := make([][]*instance, len(w.rates))
	for r, rate := range w.rates {
		for k := range w.seeds {
			in, err := s.load(w.seed+uint64(k), rate)
			if err != nil {
				return nil, fmt.Errorf("seed %d, %g jobs/h: %v", w.seed+uint64(k), rate, err)
			}
			insts[r] = append(insts[r], in)
		}
	}
	return insts, nil
}

// runs is the progress bar's total: every job of every run.
func runs(policies int, insts [][]*instance) int {
	n := 0
	for _, ins := range insts {
		for _, in := range ins {
			n += len(in.jobs)
		}
	}
	return n * policies
}

// runAll simulates every policy on every workload, at most one simulation
// per CPU at once, and returns the trials as grid[policy][rate][seed] and
// the first failure that is not a cancellation. Under strict that failure
// cancels the other runs: the comparison fails as a whole.
func (s *setup) runAll(ctx context.Context, names []string, insts [][]*instance, strict bool, bar *progressbar.ProgressBar) ([][][]trial, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex // guards bar and first
		first error
		wg    sync.WaitGroup
	)
	grid := make([][][]trial, len(names))
	for p := range names {
		grid[p] = make([][]trial, len(insts))
		for r := range insts {
			grid[p][r] = make([]trial, len(insts[r]))
		}
	}
	cells := s.order(names, insts)
	queue := make(chan cell, len(cells))
	for _, c := range cells {
		queue <- c
	}
	close(queue)
	for range max(1, runtime.NumCPU()) {
		wg.Go(func() {
			for c := range queue {
				in := insts[c.run][c.seed]
				t := s.trial(ctx, names[c.policy], in, c.run == 0 && c.seed == 0, barProgress(bar, &mu))
				grid[c.policy][c.run][c.seed] = t
				if t.err != nil && !errors.Is(t.err, context.Canceled) {
					mu.Lock()
					first = cmp.Or(first, t.err)
					mu.Unlock()
				}
				if t.err != nil && strict {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	return grid, first
}

// cell is one trial of a comparison: a policy, by its index in the
// names, on one workload, by its rate's and its seed's index.
type cell struct{ policy, run, seed int }

// order returns every trial of the comparison, the longest expected first,
// so that no long one starts when the others are done and leaves the other
// cores idle. A policy told co-location reads every pair of jobs, a
// snapshot quadratic in the jobs; one that reads elastic facts searches
// over each job's GPU counts and batch sizes. Their trials come first, in
// that order, and the rest in the order of the names.
func (s *setup) order(names []string, insts [][]*instance) []cell {
	var tiers [3][]cell
	for p, name := range names {
		var uses policy.Facts
		if pol, err := s.policy(name, ""); err == nil {
			uses, _ = policy.FactsOf(pol)
		}
		for r := range insts {
			for k, in := range insts[r] {
				tier := 2
				switch {
				case uses&in.informs&policy.FactColocation != 0:
					tier = 0
				case uses&policy.FactElastic != 0:
					tier = 1
				}
				tiers[tier] = append(tiers[tier], cell{p, r, k})
			}
		}
	}
	return slices.Concat(tiers[:]...)
}

// barProgress returns a run's progress callback, which adds the jobs it
// finished to the shared bar; nil without a bar.
func barProgress(bar *progressbar.ProgressBar, mu *sync.Mutex) func(int, int) {
	if bar == nil {
		return nil
	}
	last := 0
	return func(done, _ int) {
		mu.Lock()
		_ = bar.Add(done - last)
		mu.Unlock()
		last = done
	}
}

// trial simulates the workload under a fresh instance of the policy, since
// a policy may keep state from round to round.
func (s *setup) trial(ctx context.Context, name string, in *instance, keep bool, progress func(int, int)) trial {
	res, err := s.simulate(ctx, name, in, progress)
	var t trial
	if err == nil {
		t.summary, err = res.Summary(s.options)
	}
	if err == nil && keep {
		t.result = res
		t.perJob, err = sim.PerJob(res.Jobs, s.options)
	}
	if err != nil {
		t.err = runError(name, err)
	}
	return t
}

// simulate runs the workload under a new instance of the policy named.
func (s *setup) simulate(ctx context.Context, name string, in *instance, progress func(int, int)) (*sim.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.policy(name, "")
	if err != nil {
		return nil, err
	}
	sm, jobs, err := s.run(p, in, progress)
	if err != nil {
		return nil, err
	}
	return sm.Run(ctx, jobs)
}

// failure returns the error that ends the comparison: the caller's
// cancellation, the first failure under strict, or, when every policy
// failed on the first workload, the first one's error. Otherwise the
// failed policies are rows of their own.
func failure(ctx context.Context, grid [][][]trial, first error, strict bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strict && first != nil {
		return first
	}
	var err error
	for _, trials := range grid {
		e := firstErr(trials[0])
		if e == nil {
			return nil
		}
		err = cmp.Or(err, e)
	}
	return err
}

// firstErr returns the first error of the trials, preferring one that is
// not a cancellation caused by another's failure.
func firstErr(trials []trial) error {
	var err error
	for _, t := range trials {
		if t.err != nil && (err == nil || errors.Is(err, context.Canceled) && !errors.Is(t.err, context.Canceled)) {
			err = t.err
		}
	}
	return err
}

// tabulate fills the table: one row per policy with its means over seeds
// on the first rate, ranked by average JCT, and the sweep over rates.
func (s *setup) tabulate(names []string, policies []policy.Policy, insts [][]*instance, grid [][][]trial) *table {
	w := s.flags
	t := &table{Title: "Policy comparison: " + s.workloadName(), Setup: s.describe(), Seeds: w.seeds, CDF: map[string][]float64{}}
	for _, m := range metrics {
		t.Columns = append(t.Columns, m.column)
	}
	present := s.present(slices.Concat(insts...))
	for p, name := range names {
		r := rowOf(name, grid[p][0])
		r.Notes = append(factNotes(policies[p], present), r.Notes...)
		t.Rows = append(t.Rows, r)
		if jct := finishedJCTs(grid[p][0][0].perJob); len(jct) > 0 {
			t.CDF[name] = jct
		}
		for i, rate := range w.rates {
			if w.rateList != "" {
				t.Sweep = append(t.Sweep, sweepOf(name, rate, grid[p][i]))
			}
		}
	}
	slices.SortStableFunc(t.Rows, byAvgJCT)
	return t
}

// byAvgJCT orders rows by their mean average JCT, failed rows last.
func byAvgJCT(a, b row) int {
	switch af, bf := a.Error != "", b.Error != ""; {
	case af && bf:
		return 0
	case af:
		return 1
	case bf:
		return -1
	}
	return cmp.Compare(a.Values[0].Mean, b.Values[0].Mean)
}

// rowOf is a policy's row: each metric's mean and interval over the seeds,
// or the error of a failed run. A note warns when jobs did not finish,
// since the JCTs leave them out and so flatter the policy.
func rowOf(name string, trials []trial) row {
	r := row{Policy: name}
	if err := firstErr(trials); err != nil {
		r.Error = errText(name, err)
		return r
	}
	xs := make([]float64, len(trials))
	for _, m := range metrics {
		for k, t := range trials {
			xs[k] = m.value(t.summary)
		}
		r.Values = append(r.Values, meanCI(xs))
	}
	unfinished, jobs := 0, 0
	for _, t := range trials {
		unfinished, jobs = unfinished+t.summary.Unfinished, jobs+t.summary.Jobs
	}
	if unfinished > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("unfinished: %d of %d measured jobs, not in the JCTs", unfinished, jobs))
	}
	return r
}

// sweepOf is a policy's average JCT at one rate, over the seeds.
func sweepOf(name string, rate float64, trials []trial) sweep {
	if err := firstErr(trials); err != nil {
		return sweep{Policy: name, Rate: rate, Error: errText(name, err)}
	}
	xs := make([]float64, len(trials))
	for k, t := range trials {
		xs[k] = metrics[0].value(t.summary)
	}
	return sweep{Policy: name, Rate: rate, AvgJCT: meanCI(xs)}
}

// errText is a policy's error on one line, without the policy's name.
func errText(name string, err error) string {
	return strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), name+": ")), " ")
}

// finishedJCTs returns the JCTs in hours of the measured jobs that
// finished.
func finishedJCTs(perJob []sim.JobMetrics) []float64 {
	var jct []float64
	for _, m := range perJob {
		if m.Finished {
			jct = append(jct, m.JCT/3600)
		}
	}
	return jct
}

// present returns the facts the workloads carry, for the notes; computed
// once per workload, not per run.
func (s *setup) present(insts []*instance) policy.Facts {
	var f policy.Facts
	for _, in := range insts {
		f |= policy.Present(&policy.Snapshot{Cluster: s.cluster, Jobs: in.jobs}) | in.informs
	}
	return f
}

// factNotes says which facts of the workload the policy ignores and which
// it needs but the workload lacks, so that a reader knows when a policy is
// not being run as its system was.
func factNotes(p policy.Policy, present policy.Facts) []string {
	lacks, ignores := policy.Notes(p, present)
	var notes []string
	if ignores != 0 {
		notes = append(notes, "ignores: "+ignores.String())
	}
	if lacks != 0 {
		notes = append(notes, "lacks: "+lacks.String()+" (falls back to its default)")
	}
	return notes
}

// workloadName is the built-in workload's name or the file's.
func (s *setup) workloadName() string {
	if s.builtin != nil {
		return s.builtin.name
	}
	return filepath.Base(s.flags.workload)
}

// printTable prints one aligned row per policy in rank order: values as
// mean ± the half-width of the 95% interval when there are several seeds,
// notes last; a failed policy gets its error instead.
func printTable(out io.Writer, t *table) error {
	cells := []string{"policy"}
	for _, c := range t.Columns {
		cells = append(cells, heading(c))
	}
	lines := [][]string{append(cells, "notes")}
	for _, r := range t.Rows {
		if r.Error != "" {
			lines = append(lines, []string{r.Policy, "failed: " + r.Error})
			continue
		}
		cells := []string{r.Policy}
		for j, v := range r.Values {
			cells = append(cells, statCell(v, metrics[j].digits, t.Seeds > 1))
		}
		lines = append(lines, append(cells, strings.Join(r.Notes, "; ")))
	}
	return printAligned(out, lines)
}

// printSweep prints the average JCT of each policy at each rate of a load
// sweep: rates down, policies across.
func printSweep(out io.Writer, t *table) error {
	if len(t.Sweep) == 0 {
		return nil
	}
	var policies []string
	var rates []float64
	cell := map[string]string{}
	for _, s := range t.Sweep {
		if !slices.Contains(policies, s.Policy) {
			policies = append(policies, s.Policy)
		}
		if !slices.Contains(rates, s.Rate) {
			rates = append(rates, s.Rate)
		}
		c := "failed"
		if s.Error == "" {
			c = statCell(s.AvgJCT, metrics[0].digits, t.Seeds > 1)
		}
		cell[fmt.Sprint(s.Policy, "@", s.Rate)] = c
	}
	lines := [][]string{append([]string{"avg JCT h"}, policies...)}
	for _, r := range rates {
		line := []string{fmt.Sprintf("%g jobs/h", r)}
		for _, p := range policies {
			line = append(line, cell[fmt.Sprint(p, "@", r)])
		}
		lines = append(lines, line)
	}
	fmt.Fprintln(out)
	return printAligned(out, lines)
}

// printAligned prints the lines' cells in aligned columns, without
// trailing blanks.
func printAligned(out io.Writer, lines [][]string) error {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	for _, cells := range lines {
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(buf.String()) {
		if _, err := io.WriteString(out, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// heading is a column's heading with its unit, before any parenthesis:
// "avg JCT h", "unfair % (ρ > 1.05)".
func heading(c column) string {
	if c.Unit == "" {
		return c.Name
	}
	if i := strings.Index(c.Name, " ("); i >= 0 {
		return c.Name[:i] + " " + c.Unit + c.Name[i:]
	}
	return c.Name + " " + c.Unit
}

// statCell is a value for the terminal, with its interval if asked.
func statCell(v stat, digits int, ci bool) string {
	if !ci {
		return strconv.FormatFloat(v.Mean, 'f', digits, 64)
	}
	return strconv.FormatFloat(v.Mean, 'f', digits, 64) + " ± " + strconv.FormatFloat(v.CI, 'f', digits, 64)
}

// writeOutputs writes the table's files (writeFiles), the first
// workload's summary per policy and its plots into dir.
func writeOutputs(dir string, t *table, outcomes []outcome) error {
	if err := t.writeFiles(dir); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	summaries := make(map[string]sim.Summary, len(outcomes))
	for _, o := range outcomes {
		summaries[o.name] = o.summary
	}
	if err := writeJSON(filepath.Join(dir, "summary.json"), summaries); err != nil {
		return err
	}
	if err := plotJCTCDF(filepath.Join(dir, "jct_cdf.svg"), outcomes); err != nil {
		return fmt.Errorf("compare: plot: %w", err)
	}
	if err := plotUtilization(filepath.Join(dir, "utilization.svg"), outcomes); err != nil {
		return fmt.Errorf("compare: plot: %w", err)
	}
	return nil
}

// outcomesOf returns the policies' simulations of the first workload,
// leaving out those that failed on it.
func outcomesOf(names []string, grid [][][]trial) []outcome {
	var out []outcome
	for p, name := range names {
		if t := grid[p][0][0]; t.err == nil {
			out = append(out, outcome{name: name, result: t.result, summary: t.summary, perJob: t.perJob})
		}
	}
	return out
}
