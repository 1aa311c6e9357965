package main

import (
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "workload: 20 generated gavel jobs") || !strings.HasPrefix(lines[1], "policy ") {
		t.Fatalf("want a setup line, a header and 3 rows:\n%s", first)
	}
	want := "policy  avg JCT h  p50 JCT h  p99 JCT h  makespan h  GPU util %  worst ρ (FTF)  unfair % (ρ > 1.05)  preemptions/job  migrations/job  decision p50 ms  decision p99 ms  decisions s  notes"
	if strings.Join(strings.Fields(lines[1]), " ") != strings.Join(strings.Fields(want), " ") {
		t.Errorf("header %q, want the columns %q", lines[1], want)
	}
	// Rows are ranked by average JCT, each policy once, aligned with the
	// header.
	prev, seen := 0.0, map[string]bool{}
	col := strings.Index(lines[1], "GPU util %")
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		avg, err := strconv.ParseFloat(f[1], 64)
		if err != nil || avg < prev {
			t.Errorf("row %q: average JCT %q is not a number at least %v", l, f[1], prev)
		}
		prev, seen[f[0]] = avg, true
		if len(l) < col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row %q is not aligned with the header", l)
		}
	}
	if len(seen) != 3 || !seen["gavel.las"] || !seen["gavel.las-agnostic"] || !seen["gavel.fifo"] {
		t.Errorf("rows %v, want the three policies", seen)
	}
	_, second, _ := runCLI(t, "", args...)
	if deterministic(first) != deterministic(second) {
		t.Errorf("two runs differ:\n%s\n%s", first, second)
	}
}

// deterministic drops the three decision-time columns of compare's table
// (the latency's p50 and p99, and the total), which are wall-clock times.
func deterministic(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 13 && !strings.HasPrefix(l, "workload: ") && !strings.HasPrefix(l, "policy ") {
			f = slices.Delete(f, 10, 13)
		}
		b.WriteString(strings.Join(f, " ") + "\n")
	}
	return b.String()
}

// results is the part of results.json the tests read.
type results struct {
	Seeds   int `json:"seeds"`
	Columns []struct {
		Key string `json:"key"`
	} `json:"columns"`
	Rows []struct {
		Policy string   `json:"policy"`
		Error  string   `json:"error"`
		Notes  []string `json:"notes"`
		Values []stat   `json:"values"`
	} `json:"rows"`
	Sweep []sweep `json:"sweep"`
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
	var res results
	readJSON(t, filepath.Join(dir, "results.json"), &res)
	var keys []string
	for _, c := range res.Columns {
		keys = append(keys, c.Key)
	}
	wantKeys := []string{"avg_jct_h", "p50_jct_h", "p99_jct_h", "makespan_h", "gpu_util_pct", "worst_ftf", "unfair_pct",
		"preemptions_per_job", "migrations_per_job", "decision_p50_ms", "decision_p99_ms", "decision_total_s"}
	if !slices.Equal(keys, wantKeys) || res.Seeds != 1 || len(res.Rows) != 2 || len(res.Sweep) != 0 {
		t.Fatalf("results.json: columns %v, seeds %d, %d rows, %d sweep points; want %v, 1, 2, 0", keys, res.Seeds, len(res.Rows), len(res.Sweep), wantKeys)
	}
	for _, r := range res.Rows {
		if len(r.Values) != len(wantKeys) || r.Values[0].N != 1 || r.Values[0].CI != 0 || r.Values[0].Mean <= 0 {
			t.Errorf("row %+v: want one seed's positive values, without interval", r)
		}
	}
}

// --seeds 3 runs each policy on seeds 1, 2 and 3: every value is a mean
// over 3 with a positive interval where the seeds differ.
func TestCompareSeeds(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"compare", "--policies", "gavel.las,gavel.fifo", "--seeds", "3", "--out", dir}, tiny...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "seeds 1–3") || !strings.Contains(out, " ± ") {
		t.Errorf("output lacks the seeds or the intervals:\n%s", out)
	}
	var res results
	readJSON(t, filepath.Join(dir, "results.json"), &res)
	if res.Seeds != 3 || len(res.Rows) != 2 {
		t.Fatalf("results.json: seeds %d, %d rows; want 3 and 2", res.Seeds, len(res.Rows))
	}
	for _, r := range res.Rows {
		for j, v := range r.Values {
			if v.N != 3 {
				t.Errorf("%s, %s: n = %d, want 3", r.Policy, res.Columns[j].Key, v.N)
			}
		}
		if r.Values[0].CI <= 0 {
			t.Errorf("%s: average JCT %+v, want a positive interval", r.Policy, r.Values[0])
		}
	}
}

// --rates 2,4 sweeps the load: two points per policy, the first of which
// is the main table's.
func TestCompareRates(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", "compare", "--policies", "gavel.las,gavel.fifo", "--workload", "gavel", "--jobs", "20", "--seed", "1",
		"--cluster", "v100=4,p100=4,k80=4", "--rates", "2,4", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "2, 4 jobs/h") || !strings.Contains(out, "\n2 jobs/h ") || !strings.Contains(out, "\n4 jobs/h ") {
		t.Errorf("output lacks the rates or the sweep matrix:\n%s", out)
	}
	var res results
	readJSON(t, filepath.Join(dir, "results.json"), &res)
	points := map[string][]float64{}
	for _, s := range res.Sweep {
		if s.Error != "" || s.AvgJCT.Mean <= 0 || s.AvgJCT.N != 1 {
			t.Errorf("sweep point %+v: want a positive average JCT over one seed", s)
		}
		points[s.Policy] = append(points[s.Policy], s.Rate)
	}
	for _, r := range res.Rows {
		if !slices.Equal(points[r.Policy], []float64{2, 4}) {
			t.Errorf("%s: sweep rates %v, want [2 4]", r.Policy, points[r.Policy])
		}
		for _, s := range res.Sweep {
			if s.Policy == r.Policy && s.Rate == 2 && s.AvgJCT != r.Values[0] {
				t.Errorf("%s: sweep at 2 jobs/h %+v differs from the table's %+v", r.Policy, s.AvgJCT, r.Values[0])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep.csv")); err != nil {
		t.Error(err)
	}
}

func TestCompareSweepErrors(t *testing.T) {
	trace := jsonTrace(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"seeds with a file", []string{"--workload", trace, "--seeds", "2"}, "--seeds applies to generated workloads only"},
		{"rates with a file", []string{"--workload", trace, "--rates", "2,4"}, "--rates applies to generated workloads only"},
		{"rate and rates", []string{"--rate", "3", "--rates", "2,4"}, "--rate or --rates"},
		{"bad rate", []string{"--rates", "2,x"}, `--rates: "x"`},
		{"repeated rate", []string{"--rates", "2,2"}, "twice"},
		{"no seeds", []string{"--seeds", "0"}, "--seeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"compare"}, tc.args...)...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, tc.want)
			}
		})
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

// lacksDeadline is gavel.fifo saying that it needs deadlines and uses
// nothing else, registered for the notes test below.
type lacksDeadline struct{ policy.Policy }

func (lacksDeadline) Facts() (uses, needs policy.Facts) {
	return policy.FactDeadline, policy.FactDeadline
}

func init() {
	policy.Register("test.lacks-deadline", "gavel.fifo that needs deadlines", func([]byte) (policy.Policy, error) {
		p, err := policy.New("gavel.fifo", nil)
		return lacksDeadline{p}, err
	})
}

// A policy that fails is a row with its error, ranked last; the others are
// reported, over every seed, and the command fails only under --strict or
// when every policy fails.
func TestCompareReportsFailingPolicy(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"compare", "--policies", "test.failing,gavel.las,gavel.fifo", "--seeds", "2", "--out", dir}, tiny...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[2], "gavel.las ") || !strings.HasPrefix(lines[3], "gavel.fifo ") {
		t.Fatalf("want both working policies' rows, ranked:\n%s", out)
	}
	if !strings.HasPrefix(lines[4], "test.failing ") || !strings.Contains(lines[4], "failed: ") || !strings.Contains(lines[4], "deliberate failure") {
		t.Errorf("row %q: want the failing policy last with its error on one line", lines[4])
	}
	var res results
	readJSON(t, filepath.Join(dir, "results.json"), &res)
	if r := res.Rows[2]; r.Policy != "test.failing" || !strings.Contains(r.Error, "deliberate failure") || len(r.Values) != 0 {
		t.Errorf("results.json: last row %+v, want test.failing with its error", r)
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

// The notes say which facts of the workload a policy ignores and which it
// needs but lacks: the generated workload has heterogeneous throughputs and
// lengths, and no deadlines.
func TestCompareNotes(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"compare", "--policies", "test.lacks-deadline,test.failing", "--out", dir}, tiny...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := []string{"ignores: heterogeneity, length", "lacks: deadline (falls back to its default)"}
	if !strings.Contains(out, strings.Join(want, "; ")) {
		t.Errorf("output lacks the notes %q:\n%s", want, out)
	}
	var res results
	readJSON(t, filepath.Join(dir, "results.json"), &res)
	if len(res.Rows) != 2 || !slices.Equal(res.Rows[0].Notes, want) || !slices.Equal(res.Rows[1].Notes, want[:1]) {
		t.Errorf("results.json rows %+v: want notes %q, then %q", res.Rows, want, want[:1])
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

// The mixed workload runs every system's policy side by side, each with
// values, and each row's notes follow from the facts: gavel.las ignores
// the elastic and adaptive facts, pollux uses them, and synergy.tune lacks
// nothing on the default cluster (it has cores and memory) but lacks
// resources on a cluster without them.
func TestCompareMixed(t *testing.T) {
	dir := t.TempDir()
	names := "gavel.las,tiresias.las,pollux,shockwave,themis,allox,gandiva,synergy.tune"
	args := []string{"compare", "--policies", names, "--jobs", "16", "--rate", "8", "--seed", "3", "--out", dir}
	if code, _, errOut := runCLI(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r results
	readJSON(t, filepath.Join(dir, "results.json"), &r)
	notes := map[string]string{}
	for _, row := range r.Rows {
		if row.Error != "" || len(row.Values) != len(r.Columns) {
			t.Errorf("%s: error %q, %d values", row.Policy, row.Error, len(row.Values))
		}
		notes[row.Policy] = strings.Join(row.Notes, "; ")
	}
	if len(r.Rows) != 8 {
		t.Fatalf("%d rows, want 8", len(r.Rows))
	}
	for policy, want := range map[string]string{"gavel.las": "elastic, adaptive", "synergy.tune": "elastic, adaptive"} {
		if !strings.Contains(notes[policy], want) {
			t.Errorf("%s notes %q lack %q", policy, notes[policy], want)
		}
	}
	for _, policy := range []string{"pollux", "synergy.tune"} {
		if strings.Contains(notes[policy], "lacks") {
			t.Errorf("%s notes %q: lacks nothing on the mixed workload", policy, notes[policy])
		}
	}
	code, out, errOut := runCLI(t, "", "compare", "--policies", "synergy.tune", "--jobs", "12", "--cluster", "v100=16/8,k80=16/8")
	if code != 0 || !strings.Contains(out, "lacks: resources") {
		t.Errorf("without cores and memory: exit %d, %s%s", code, out, errOut)
	}
}

// TestOrderLongFirst pins the order the comparison runs its trials in:
// every trial once, those of a policy told co-location (quadratic in the
// jobs) first, then those of a policy that reads elastic facts, the rest
// in the order of the names; on a workload without co-location, the
// policies that read elastic facts first.
func TestOrderLongFirst(t *testing.T) {
	names := []string{"baseline.fifo", "gavel.las-ss", "pollux", "gavel.las", "gavel.ftf-ss"}
	for _, tc := range []struct {
		workload string
		want     []int // policy indices, in the order run
	}{
		{"mixed", []int{1, 1, 4, 4, 2, 2, 0, 0, 3, 3}},
		{"gavel", []int{2, 2, 0, 0, 1, 1, 3, 3, 4, 4}},
	} {
		fs := flag.NewFlagSet("compare", flag.ContinueOnError)
		var w workloadFlags
		w.register(fs)
		w.registerSweep(fs)
		if err := fs.Parse([]string{"--workload", tc.workload, "--jobs", "8", "--seeds", "2"}); err != nil {
			t.Fatal(err)
		}
		s, err := w.build("compare")
		if err != nil {
			t.Fatal(err)
		}
		insts, err := s.instances()
		if err != nil {
			t.Fatal(err)
		}
		cells := s.order(names, insts)
		var got []int
		seen := map[cell]bool{}
		for _, c := range cells {
			got = append(got, c.policy)
			if seen[c] || c.run != 0 || c.seed > 1 {
				t.Errorf("%s: cell %+v twice or out of range", tc.workload, c)
			}
			seen[c] = true
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: policies run in the order %v, want %v", tc.workload, got, tc.want)
		}
	}
}
