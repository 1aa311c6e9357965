package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
	"github.com/dlsched/dlsched/workload"
)

// format is a kind of workload file --workload can read. Its first
// non-blank line tells them apart, so that --format is rarely needed.
type format struct {
	name string
	// looks says what detect recognises, for the error after none did.
	looks  string
	detect func(line string) bool
	// label names the jobs in the setup line: "N Pollux jobs from FILE".
	label    string
	takes    []string // flags of workloadOnly it reads
	defaults defaults
	read     func(w *workloadFlags, cluster allocation.Cluster) (*instance, error)
}

// formats are tried in this order; their first lines are disjoint.
var formats = []format{
	{name: "json", looks: "JSON lines", detect: isJSONLine, read: readJSONTrace,
		defaults: defaults{cluster: defaultCluster}},
	{name: "gavel", looks: "7 or 10 tab-separated fields", detect: tabFields(7, 10), label: "Gavel", read: readGavelTrace,
		defaults: defaults{cluster: defaultCluster}},
	{name: "tiresias", looks: "CSV header job_id,num_gpu,…", detect: csvHeader("job_id", "num_gpu"), label: "Tiresias", read: readTiresias,
		defaults: defaults{cluster: "v100=64", events: true}},
	{name: "pollux", looks: "CSV header name,time,application,…", detect: csvHeader("name", "time", "application"), label: "Pollux", read: readPollux,
		takes: []string{"models"}, defaults: defaults{cluster: string(workload.PolluxGPU) + "=64", round: time.Minute, restart: 30 * time.Second, reallocate: true}},
	{name: "shockwave", looks: "12 tab-separated fields", detect: tabFields(12), label: "Shockwave", read: readShockwave,
		takes: []string{"throughputs"}, defaults: defaults{cluster: shockwaveCluster, round: shockwaveRound, restart: shockwaveRestart,
			recompute: shockwaveRecompute, configs: shockwaveConfigs}},
}

func findFormat(name string) *format {
	return byName(formats, name, func(f format) string { return f.name })
}

func formatNames() string { return nameList(formats, func(f format) string { return f.name }) }

// byName returns the entry of table called name, or nil.
func byName[T any](table []T, name string, nameOf func(T) string) *T {
	for i := range table {
		if nameOf(table[i]) == name {
			return &table[i]
		}
	}
	return nil
}

// nameList lists the names of table's entries, in order.
func nameList[T any](table []T, nameOf func(T) string) string {
	names := make([]string, len(table))
	for i, x := range table {
		names[i] = nameOf(x)
	}
	return strings.Join(names, ", ")
}

// detectFormat returns the format of the file at path from its first
// non-blank line; the error lists the formats tried.
func detectFormat(path string) (*format, error) {
	line, err := firstLine(path)
	if err != nil {
		return nil, err
	}
	for i := range formats {
		if formats[i].detect(line) {
			return &formats[i], nil
		}
	}
	var tried []string
	for _, f := range formats {
		tried = append(tried, f.name+" ("+f.looks+")")
	}
	return nil, fmt.Errorf("%s: unknown format: its first line matches none of %s; name one with --format", path, strings.Join(tried, ", "))
}

// firstLine returns the first non-blank line of the file, without its
// line ending; empty for a blank file.
func firstLine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); strings.TrimSpace(line) != "" {
			return line, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	return "", nil
}

func isJSONLine(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "{") }

// tabFields recognises a line of one of the given numbers of tab-separated
// fields.
func tabFields(counts ...int) func(string) bool {
	return func(line string) bool {
		n := strings.Count(line, "\t") + 1
		for _, c := range counts {
			if n == c {
				return true
			}
		}
		return false
	}
}

// csvHeader recognises a CSV header naming every one of the columns, in
// any order.
func csvHeader(columns ...string) func(string) bool {
	return func(line string) bool {
		have := map[string]bool{}
		for _, f := range strings.Split(line, ",") {
			have[strings.Trim(strings.TrimSpace(f), `"`)] = true
		}
		for _, c := range columns {
			if !have[c] {
				return false
			}
		}
		return true
	}
}

// readWith opens the --workload file and reads it with read.
func readWith(w *workloadFlags, read func(f *os.File) ([]policy.Job, error)) (*instance, error) {
	f, err := os.Open(w.workload)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	jobs, err := read(f)
	if err != nil {
		return nil, err
	}
	return &instance{jobs: jobs}, nil
}

// readJSONTrace reads dlsched's own JSON lines (workload.WriteTrace).
func readJSONTrace(w *workloadFlags, _ allocation.Cluster) (*instance, error) {
	return readWith(w, func(f *os.File) ([]policy.Job, error) { return workload.ReadTrace(f, w.workload) })
}

// readGavelTrace reads a trace of Gavel's scheduler, with Gavel's measured
// throughputs.
func readGavelTrace(w *workloadFlags, _ allocation.Cluster) (*instance, error) {
	return readWith(w, func(f *os.File) ([]policy.Job, error) {
		return workload.ReadGavelTrace(f, w.workload, workload.Profile{})
	})
}

// readTiresias reads a Tiresias trace, giving every job speed 1 on each
// type of the cluster: the trace gives run times, not throughputs.
func readTiresias(w *workloadFlags, cluster allocation.Cluster) (*instance, error) {
	return readWith(w, func(f *os.File) ([]policy.Job, error) {
		return workload.ReadTiresiasTrace(f, w.workload, cluster.Types()...)
	})
}

// readPollux reads a Pollux workload twice, as elastic jobs and as their
// tuned configurations, over the --models applications (default the
// synthetic ones), and runs both with Pollux's model of their speed.
func readPollux(w *workloadFlags, _ allocation.Cluster) (*instance, error) {
	apps := workload.SyntheticApps()
	if w.models != "" {
		var err error
		if apps, err = workload.LoadApps(w.models); err != nil {
			return nil, fmt.Errorf("--models: %v", err)
		}
	}
	jobs, model, err := workload.ReadPolluxWorkloadFile(w.workload, apps, workload.WorkloadOptions{})
	if err != nil {
		return nil, err
	}
	tuned, _, err := workload.ReadPolluxWorkloadFile(w.workload, apps, workload.WorkloadOptions{Tuned: true})
	if err != nil {
		return nil, err
	}
	model.Prepare(jobs)
	model.Prepare(tuned)
	attach := func(sm *sim.Simulation, jobs []policy.Job) ([]policy.Job, error) {
		sm.Speed, sm.Observe = model.Speed, model.Observe
		return jobs, nil
	}
	return &instance{jobs: jobs, tuned: tuned, attach: attach}, nil
}
