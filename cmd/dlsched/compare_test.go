package main

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/policy"
)

func TestCompareDeterministic(t *testing.T) {
	args := append([]string{"compare", "--policies", "gavel.las,gavel.las-agnostic,gavel.fifo"}, tiny...)
	code, first, errOut := runCLI(t, "", args...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "workload: 20 generated") || !strings.HasPrefix(lines[1], "policy ") {
		t.Fatalf("want a setup line, a header and 3 rows:\n%s", first)
	}
	for i, name := range []string{"gavel.las ", "gavel.las-agnostic ", "gavel.fifo "} {
		if !strings.HasPrefix(lines[2+i], name) || !strings.Contains(lines[2+i], " 20/20 ") {
			t.Errorf("row %d %q: want %s with 20/20 finished", i, lines[2+i], name)
		}
	}
	// The columns are aligned: every row as wide as the header's start of
	// the last column.
	if !strings.HasSuffix(lines[1], "preempt/job  migrate/job") {
		t.Errorf("header %q: want preemptions and migrations per job last", lines[1])
	}
	col := strings.Index(lines[1], "first run h")
	for _, l := range lines[2:] {
		if len(l) < col || l[col-1] != ' ' {
			t.Errorf("row %q is not aligned with the header", l)
		}
	}
	_, second, _ := runCLI(t, "", args...)
	if first != second {
		t.Errorf("two runs differ:\n%s\n%s", first, second)
	}
}

func TestCompareOut(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"compare", "--policies", "gavel.las,gavel.fifo", "--out", dir}, tiny...)
	if code, _, errOut := runCLI(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"jct_cdf.svg", "utilization.svg"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(data); !strings.HasPrefix(s, "<?xml") && !strings.HasPrefix(s, "<svg") {
			t.Errorf("%s does not start like an SVG: %.40q", name, s)
		}
		for _, legend := range []string{"gavel.las", "gavel.fifo"} {
			if !strings.Contains(string(data), legend) {
				t.Errorf("%s lacks the legend entry %s", name, legend)
			}
		}
	}
	var sums map[string]struct {
		Jobs int `json:"jobs"`
	}
	readJSON(t, filepath.Join(dir, "summary.json"), &sums)
	if len(sums) != 2 || sums["gavel.las"].Jobs != 20 {
		t.Errorf("summary.json: %v, want two policies with 20 jobs", sums)
	}
}

func TestDuplicatePolicy(t *testing.T) {
	code, _, errOut := runCLI(t, "", "compare", "--policies", "gavel.las,gavel.las")
	if code != 2 || !strings.Contains(errOut, "twice") {
		t.Errorf("exit %d, stderr %q: want 2 and a duplicate error", code, errOut)
	}
}

// failing is a policy that always fails, registered for the tests below.
type failing struct{}

func (failing) Name() string { return "test.failing" }
func (failing) Allocate(context.Context, *policy.Snapshot) (*policy.Decision, error) {
	return nil, errors.New("deliberate\tfailure")
}

func init() {
	policy.Register("test.failing", "fails every round", func([]byte) (policy.Policy, error) { return failing{}, nil })
}

// A policy that fails is a row with its error; the others are reported, and
// the command fails only under --strict or when every policy fails.
func TestCompareReportsFailingPolicy(t *testing.T) {
	args := append([]string{"compare", "--policies", "gavel.las,test.failing,gavel.fifo"}, tiny...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[2], "gavel.las ") || !strings.HasPrefix(lines[4], "gavel.fifo ") {
		t.Fatalf("want both working policies' rows:\n%s", out)
	}
	if !strings.HasPrefix(lines[3], "test.failing ") || !strings.Contains(lines[3], "failed: ") || !strings.Contains(lines[3], "deliberate failure") {
		t.Errorf("row %q: want the failing policy with its error on one line", lines[3])
	}
	for _, args := range [][]string{
		append([]string{"compare", "--strict", "--policies", "gavel.las,test.failing"}, tiny...),
		append([]string{"compare", "--policies", "test.failing"}, tiny...),
	} {
		if code, _, errOut := runCLI(t, "", args...); code == 0 || !strings.Contains(errOut, "deliberate") {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming the error", args, code, errOut)
		}
	}
}

// The 95 % interval of 1, 2, 3: mean 2, s = 1, t(2) = 4.303, so the
// half-width is 4.303/√3 = 2.4843; one value has none; t(60) ≈ 2.000.
func TestMeanCI(t *testing.T) {
	got := meanCI([]float64{1, 2, 3})
	if got.Mean != 2 || math.Abs(got.CI-2.4843) > 1e-4 || got.N != 3 {
		t.Errorf("meanCI(1,2,3) = %+v", got)
	}
	if got := meanCI([]float64{5}); got != (stat{Mean: 5, N: 1}) {
		t.Errorf("meanCI(5) = %+v", got)
	}
	if q := tQuantile975(60); math.Abs(q-2.000) > 2e-3 {
		t.Errorf("t(60) = %v, want 2.000", q)
	}
}
