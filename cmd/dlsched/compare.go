package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
)

// defaultPolicies is compare's built-in set: least attained service with its
// heterogeneity-agnostic twin, finish-time fairness and FIFO.
const defaultPolicies = "gavel.las,gavel.las-agnostic,gavel.ftf,gavel.fifo"

// outcome is one policy's simulation.
type outcome struct {
	name    string
	result  *sim.Result
	summary sim.Summary
	perJob  []sim.JobMetrics
	err     error
}

func compare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	list := fs.String("policies", defaultPolicies, "comma-separated registered policy names, or all")
	strict := fs.Bool("strict", false, "fail as soon as one policy fails, instead of reporting it in its row")
	var w workloadFlags
	w.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	var names []string
	seen := make(map[string]bool)
	if strings.TrimSpace(*list) == "all" {
		*list = ""
		for _, info := range policy.Registered() {
			*list += info.Name + ","
		}
	}
	for _, n := range strings.Split(*list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if seen[n] {
			return usageError{fmt.Errorf("compare: --policies: %q listed twice", n)}
		}
		seen[n] = true
		names = append(names, n)
	}
	if len(names) == 0 {
		return usageError{fmt.Errorf("compare: --policies: no policy named")}
	}
	policies := make([]policy.Policy, len(names))
	for i, n := range names {
		p, err := policy.New(n, nil)
		if err != nil {
			return err
		}
		policies[i] = p
	}
	s, err := w.build("compare")
	if err != nil {
		return err
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bar := newBar(stderr, w.progress, len(s.jobs)*len(names), "compare")
	var barMu sync.Mutex
	outcomes := make([]outcome, len(names))
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			o := &outcomes[i]
			o.name = names[i]
			if ctx.Err() != nil {
				o.err = ctx.Err()
				return
			}
			var progress func(int, int)
			if bar != nil {
				last := 0
				progress = func(done, _ int) {
					barMu.Lock()
					_ = bar.Add(done - last)
					barMu.Unlock()
					last = done
				}
			}
			sm, jobs, err := s.run(names[i], policies[i], progress)
			var res *sim.Result
			if err == nil {
				res, err = sm.Run(ctx, jobs)
			}
			if err == nil {
				o.result = res
				o.summary, err = sim.Summarize(res.Jobs, res.Rounds, s.options)
			}
			if err == nil {
				o.perJob, err = sim.PerJob(res.Jobs, s.options)
			}
			if err != nil {
				o.err = runError(names[i], err)
				if *strict {
					cancel() // the comparison fails as a whole: stop the others
				}
			}
		}()
	}
	wg.Wait()
	if bar != nil {
		_ = bar.Finish()
	}
	if err := failure(parent, outcomes, *strict); err != nil {
		return err
	}

	fmt.Fprintln(stdout, s.describe())
	if err := printComparison(stdout, outcomes); err != nil {
		return err
	}
	outcomes = slices.DeleteFunc(outcomes, func(o outcome) bool { return o.err != nil })
	if w.out == "" {
		return nil
	}
	if err := os.MkdirAll(w.out, 0o755); err != nil {
		return err
	}
	summaries := make(map[string]sim.Summary, len(outcomes))
	for _, o := range outcomes {
		summaries[o.name] = o.summary
	}
	if err := writeJSON(filepath.Join(w.out, "summary.json"), summaries); err != nil {
		return err
	}
	if err := plotJCTCDF(filepath.Join(w.out, "jct_cdf.svg"), outcomes); err != nil {
		return fmt.Errorf("compare: plot: %w", err)
	}
	if err := plotUtilization(filepath.Join(w.out, "utilization.svg"), outcomes); err != nil {
		return fmt.Errorf("compare: plot: %w", err)
	}
	return nil
}

// failure returns the error that ends the comparison: the first policy's
// (not a sibling's cancellation) under strict, the caller's cancellation,
// or the first error when every policy failed. Otherwise the failed
// policies are rows of their own.
func failure(ctx context.Context, outcomes []outcome, strict bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var first error
	failed := 0
	for _, o := range outcomes {
		if o.err == nil {
			continue
		}
		failed++
		if first == nil || errors.Is(first, context.Canceled) && !errors.Is(o.err, context.Canceled) {
			first = o.err
		}
	}
	if first != nil && (strict || failed == len(outcomes)) {
		return first
	}
	return nil
}

// printComparison prints one aligned row per policy; a policy that failed
// gets its error instead of numbers.
func printComparison(out io.Writer, outcomes []outcome) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "policy\tfinished\tavg JCT h\tmedian JCT h\tp99 JCT h\tmakespan h\tworst FTF\tunfair %\tutil %\tfirst run h\tpreempt/job\tmigrate/job")
	for _, o := range outcomes {
		if o.err != nil {
			msg := strings.Join(strings.Fields(strings.TrimPrefix(o.err.Error(), o.name+": ")), " ")
			fmt.Fprintf(w, "%s\tfailed: %s\n", o.name, msg)
			continue
		}
		s := o.summary
		fmt.Fprintf(w, "%s\t%d/%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\n",
			o.name, s.Finished, s.Jobs, s.AvgJCT/3600, s.MedianJCT/3600, s.P99JCT/3600,
			s.Makespan/3600, s.WorstFTF, 100*s.UnfairFraction, 100*s.Utilization, s.MeanTimeToFirstRun/3600,
			s.PreemptionsPerJob, s.MigrationsPerJob)
	}
	return w.Flush()
}
