package main

import (
	"encoding/json"
	"github.com/dlsched/dlsched/workload"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/sim"
)

// tiny is a small contended workload that simulates in well under a second.
var tiny = []string{"--jobs", "20", "--rate", "8", "--seed", "1", "--cluster", "v100=4,p100=4,k80=4"}

func TestSimulatePrintsSummary(t *testing.T) {
	code, out, errOut := runCLI(t, "", append([]string{"simulate", "--policy", "gavel.las"}, tiny...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "workload: 20 generated") {
		t.Errorf("output does not start with the setup line:\n%s", out)
	}
	for _, want := range []string{"policy", "gavel.las", "avg JCT", "p99 JCT", "makespan", "worst FTF", "utilization", "20 of 20 (20 finished"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "res")
	args := append([]string{"simulate", "--policy", "gavel.fifo", "--window", "5:15", "--out", dir}, tiny...)
	if code, _, errOut := runCLI(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sum sim.Summary
	readJSON(t, filepath.Join(dir, "summary.json"), &sum)
	if sum.Jobs != 10 || sum.TraceJobs != 20 || sum.GPUs != 12 {
		t.Errorf("summary %+v: want 10 of 20 jobs measured on 12 GPUs", sum)
	}
	jobs, err := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(jobs), "\n"); lines != 21 || !strings.HasPrefix(string(jobs), strings.Join(sim.JobsCSVHeader, ",")) {
		t.Errorf("jobs.csv: %d lines, want a header and 20 jobs:\n%s", lines, jobs)
	}
	var res struct {
		Jobs   []map[string]any `json:"jobs"`
		Rounds []map[string]any `json:"rounds"`
	}
	readJSON(t, filepath.Join(dir, "result.json"), &res)
	if len(res.Jobs) != 20 || len(res.Rounds) == 0 || res.Rounds[0]["gpus"] != 12.0 {
		t.Errorf("result.json: %d jobs, %d rounds; want 20 jobs and rounds on 12 GPUs", len(res.Jobs), len(res.Rounds))
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestSimulateCompareErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad cluster", []string{"simulate", "--cluster", "v100"}, "--cluster"},
		{"bad cluster count", []string{"compare", "--cluster", "v100=0"}, "--cluster"},
		{"duplicate type", []string{"simulate", "--cluster", "v100=4,v100=4"}, "twice"},
		{"bad window", []string{"simulate", "--window", "10-20"}, "--window"},
		{"reversed window", []string{"compare", "--window", "20:10"}, "--window"},
		{"window outside", []string{"simulate", "--jobs", "5", "--window", "0:10"}, "--window"},
		{"unknown policy", []string{"simulate", "--policy", "gavel.nope"}, "gavel.nope"},
		{"unknown policy in list", []string{"compare", "--policies", "gavel.las,nope.x"}, "nope.x"},
		{"bad flag", []string{"compare", "--bogus"}, "bogus"},
		{"bad round", []string{"simulate", "--round", "0s"}, "--round"},
		{"extra argument", []string{"simulate", "extra"}, "extra"},
		{"no jobs", []string{"compare", "--jobs", "0"}, "--jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want none", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasSuffix(errOut, "\n") || !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", errOut, tc.want)
			}
		})
	}
}

func TestParseCluster(t *testing.T) {
	c, err := parseCluster("v100=10, k80=4")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.Servers {
		got = append(got, s.ID+":"+string(s.Accelerator)+":"+string(rune('0'+s.GPUs)))
	}
	want := "v100-0:v100:4 v100-1:v100:4 v100-2:v100:2 k80-0:k80:4"
	if strings.Join(got, " ") != want {
		t.Errorf("servers %v, want %s", got, want)
	}
}

func TestParseWindow(t *testing.T) {
	for spec, want := range map[string]sim.Window{
		"": {}, "all": {}, "4000:5000": {Start: 4000, End: 5000}, "10:": {Start: 10},
	} {
		got, err := parseWindow(spec)
		if err != nil || got.Start != want.Start || got.End != want.End {
			t.Errorf("parseWindow(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
	for _, spec := range []string{"5", "a:b", "-1:3", "3:3", "3:x"} {
		if _, err := parseWindow(spec); err == nil {
			t.Errorf("parseWindow(%q) succeeded", spec)
		}
	}
}

func TestSimulateTrace(t *testing.T) {
	jobs, err := workload.Generator{Seed: 1, Jobs: 20, Rate: 8}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := workload.WriteTrace(f, jobs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cluster := []string{"--cluster", "v100=4,p100=4,k80=4"}
	code, fromTrace, errOut := runCLI(t, "", append([]string{"simulate", "--trace", path}, cluster...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, generated, _ := runCLI(t, "", append([]string{"simulate"}, tiny...)...)
	_, a, _ := strings.Cut(fromTrace, "\n")
	_, b, _ := strings.Cut(generated, "\n")
	if !strings.HasPrefix(fromTrace, "workload: 20 jobs from ") || a != b {
		t.Errorf("the trace of the generated workload simulates differently:\n%s\n%s", fromTrace, generated)
	}

	for _, args := range [][]string{
		{"simulate", "--trace", path, "--jobs", "5"},
		{"compare", "--trace", filepath.Join(t.TempDir(), "missing.jsonl")},
	} {
		if code, _, errOut := runCLI(t, "", args...); code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
}
