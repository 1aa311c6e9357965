package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
	"github.com/dlsched/dlsched/sim"
)

// tiny is a small contended workload that simulates in well under a second,
// of the gavel workload whatever the default.
var tiny = []string{"--workload", "gavel", "--jobs", "20", "--rate", "8", "--seed", "1", "--cluster", "v100=4,p100=4,k80=4"}

func TestSimulatePrintsSummary(t *testing.T) {
	code, out, errOut := runCLI(t, "", append([]string{"simulate", "--policy", "gavel.las"}, tiny...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "workload: 20 generated") {
		t.Errorf("output does not start with the setup line:\n%s", out)
	}
	for _, want := range []string{"policy", "gavel.las", "avg JCT", "p99 JCT", "makespan", "worst FTF", "utilization", "20 of 20 (20 finished",
		"decision latency ", " ms, p99 "} {
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
		{"unknown workload", []string{"simulate", "--workload", "nope"}, `"nope" is neither a built-in workload`},
		{"bad cluster part", []string{"simulate", "--cluster", "v100=8/4:48x"}, `"48x"`},
		{"missing cluster file", []string{"compare", "--cluster", "missing.json"}, "missing.json"},
		{"profile in no directory", append([]string{"simulate", "--cpuprofile", "no/such/dir/cpu.out"}, tiny...), "--cpuprofile"},
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
	for spec, want := range map[string]string{
		"v100=10, k80=4":           "v100-0:v100:4 v100-1:v100:4 v100-2:v100:2 k80-0:k80:4",
		"v100=16/8:48c:500g,k80=2": "v100-0:v100:8:48c:500g v100-1:v100:8:48c:500g k80-0:k80:2",
		"a100=8/8:1024g":           "a100-0:a100:8:1024g",
		"t4=6/3:12.5c":             "t4-0:t4:3:12.5c t4-1:t4:3:12.5c",
		"v100=2/8":                 "v100-0:v100:2",
		"v100=8/4:500G:24C":        "v100-0:v100:4:24c:500g v100-1:v100:4:24c:500g",
	} {
		c, err := parseCluster(spec)
		if err != nil {
			t.Errorf("%q: %v", spec, err)
			continue
		}
		if got := servers(c); got != want {
			t.Errorf("%q: servers %s, want %s", spec, got, want)
		}
	}
	for spec, want := range map[string]string{
		"":                    "empty",
		"v100":                `"v100": want TYPE=GPUS`,
		"=4":                  `"=4": want TYPE=GPUS`,
		"v100=0":              `GPU count "0"`,
		"v100=x/4":            `GPU count "x"`,
		"v100=8/0":            `GPUs per server "0"`,
		"v100=8/4:48":         `"48": want CPU cores`,
		"v100=8/4:48c:32c":    `"32c": want one positive count`,
		"v100=8/4:-1g":        `"-1g": want one positive count`,
		"v100=8/4:":           `"": want CPU cores`,
		"v100=10/4:48c":       "10 GPUs do not fill servers of 4",
		"v100=4,k80=4,v100=4": `type "v100" listed twice`,
	} {
		_, err := parseCluster(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", spec, err, want)
		}
	}
}

// servers lists a cluster's servers as ID:TYPE:GPUS[:CPUSc][:MEMg].
func servers(c allocation.Cluster) string {
	var out []string
	for _, s := range c.Servers {
		x := fmt.Sprintf("%s:%s:%d", s.ID, s.Accelerator, s.GPUs)
		if s.CPUs > 0 {
			x += fmt.Sprintf(":%gc", s.CPUs)
		}
		if s.MemoryGB > 0 {
			x += fmt.Sprintf(":%gg", s.MemoryGB)
		}
		out = append(out, x)
	}
	return strings.Join(out, " ")
}

// --cluster can name a JSON file in a snapshot's cluster schema, which is
// validated; the setup line describes its shape.
func TestClusterFile(t *testing.T) {
	dir := t.TempDir()
	good := `{"servers": [{"id": "a", "accelerator": "v100", "gpus": 8, "cpus": 48, "memory_gb": 500},
		{"id": "b", "accelerator": "k80", "gpus": 4}, {"id": "c", "accelerator": "v100", "gpus": 8, "cpus": 48, "memory_gb": 500},
		{"id": "d", "accelerator": "v100", "gpus": 2}]}`
	for name, content := range map[string]string{"good.json": good, "cluster": good} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, "", "simulate", "--policy", "gavel.fifo", "--workload", "gavel", "--jobs", "10", "--cluster", path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		if want := "cluster: 22 GPUs: v100 2 × 8 GPUs, 48 cores, 500 GB + 1 × 2 GPUs; k80 1 × 4 GPUs;"; !strings.Contains(out, want) {
			t.Errorf("%s: output lacks %q:\n%s", name, want, out)
		}
	}
	for content, want := range map[string]string{
		`{"servers": [{"id": "a", "accelerator": "v100", "gpus": 4, "ram": 1}]}`:                                     `unknown field "ram"`,
		`{"servers": [{"id": "a", "accelerator": "v100", "gpus": 4}, {"id": "a", "accelerator": "k80", "gpus": 4}]}`: `server "a": id: duplicate`,
		`{"servers": [{"id": "a", "accelerator": "v100", "gpus": 0}]}`:                                               "no GPUs",
		`{"servers": []} {}`: "trailing data",
		`{"servers": [`:      "unexpected EOF",
	} {
		path := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI(t, "", "simulate", "--cluster", path)
		if code != 2 || !strings.Contains(errOut, "--cluster: "+path) || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming the file and %q", content, code, errOut, want)
		}
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
	path := jsonTrace(t)
	cluster := []string{"--cluster", "v100=4,p100=4,k80=4"}
	code, fromTrace, errOut := runCLI(t, "", append([]string{"simulate", "--workload", path}, cluster...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, generated, _ := runCLI(t, "", append([]string{"simulate"}, tiny...)...)
	_, a, _ := strings.Cut(fromTrace, "\n")
	_, b, _ := strings.Cut(generated, "\n")
	if !strings.HasPrefix(fromTrace, "workload: 20 jobs from ") || withoutLatency(a) != withoutLatency(b) {
		t.Errorf("the trace of the generated workload simulates differently:\n%s\n%s", fromTrace, generated)
	}
}

// withoutLatency drops simulate's decision latency line: wall-clock times.
func withoutLatency(summary string) string {
	var keep []string
	for _, l := range strings.Split(summary, "\n") {
		if !strings.HasPrefix(l, "decision latency") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// A simulation runs its policy warm, unless --cold says otherwise or the
// policy's own configuration sets "warm" (either way); --cold wins over
// the configuration.
func TestSimulateWarm(t *testing.T) {
	for _, c := range []struct {
		config string
		cold   bool
		want   bool
	}{
		{"", false, true},
		{"", true, false},
		{`{"warm":false}`, false, false},
		{`{"warm":true}`, false, true},
		{`{"agnostic":false}`, false, true},
		{`{"warm":true}`, true, false},
	} {
		fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
		var w workloadFlags
		w.register(fs)
		if err := parse(fs, []string{"--workload", "gavel", fmt.Sprintf("--cold=%v", c.cold)}); err != nil {
			t.Fatal(err)
		}
		s, err := w.resolve("simulate")
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.policy("gavel.las", c.config)
		if err != nil {
			t.Fatalf("config %q: %v", c.config, err)
		}
		if got := p.(*policy.Rounds).Shares.(*gavel.MaxMinFairness).Warm; got != c.want {
			t.Errorf("config %q, cold %v: warm %v, want %v", c.config, c.cold, got, c.want)
		}
	}
}

// --cpuprofile writes a CPU profile of the whole run, for both commands:
// runtime/pprof's gzipped protocol buffer, not empty.
func TestCPUProfile(t *testing.T) {
	for _, cmd := range []string{"simulate", "compare"} {
		path := filepath.Join(t.TempDir(), "cpu.out")
		args := append([]string{cmd, "--cpuprofile", path}, tiny...)
		if cmd == "compare" {
			args = append(args, "--policies", "gavel.las,gavel.fifo")
		}
		if code, _, errOut := runCLI(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", cmd, code, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if len(b) < 64 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes at --cpuprofile, not a gzipped profile", cmd, len(b))
		}
	}
}
