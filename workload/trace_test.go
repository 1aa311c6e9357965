package workload

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
	"github.com/google/go-cmp/cmp"
)

func traceTestJobs() []policy.Job {
	return []policy.Job{
		{
			ID:         "a",
			GPUs:       1,
			Throughput: map[allocation.Accelerator]float64{"v100": 2.5},
			StepsTotal: 900,
		},
		{
			ID:         "b",
			Tenant:     "team-x",
			Weight:     5,
			GPUs:       4,
			Arrival:    360*time.Second + 500*time.Millisecond,
			Deadline:   2 * time.Hour,
			Throughput: map[allocation.Accelerator]float64{"v100": 3, "k80": 1, "p100": 0},
			StepsTotal: 1e4,
			StepsDone:  12.25,
			Colocated:  map[string]map[allocation.Accelerator]float64{"a": {"v100": 1.5}},
			Skew:       0.7,
		},
		{
			ID:   "c",
			GPUs: 0,
			Elastic: &policy.Elastic{
				MinGPUs: 1, MaxGPUs: 8, BatchSize: 128,
				Perf:    throughput.Params{AlphaC: 0.1, BetaC: 0.01, Gamma: 1.5},
				GradSqr: 2, GradVar: 3,
			},
			Adaptive:    &policy.Adaptive{Regimes: []int{32, 64}, EpochSeconds: []float64{60, 40}, Epochs: 10},
			Sensitivity: &throughput.Sensitivity{CPUs: []float64{1, 2}, MemoryGB: []float64{4}, Speedup: [][]float64{{0.5}, {1}}},
			Arrival:     7 * time.Hour,
		},
	}
}

func TestTraceRoundTrip(t *testing.T) {
	jobs := traceTestJobs()
	var buf bytes.Buffer
	if err := WriteTrace(&buf, jobs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(jobs) {
		t.Errorf("WriteTrace wrote %d lines, want %d:\n%s", n, len(jobs), buf.String())
	}
	got, err := ReadTrace(&buf, "trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jobs, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestReadTraceFormat(t *testing.T) {
	in := `{"id":"a","gpus":1,"throughput":{"v100":2.5},"steps_total":900,"arrival":0}

{"id":"b","weight":5,"gpus":4,"throughput":{"k80":1,"v100":3},"steps_total":1e4,"arrival":360.5,"deadline":7200}` // no final newline
	got, err := ReadTrace(strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.Job{
		{ID: "a", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 2.5}, StepsTotal: 900},
		{ID: "b", Weight: 5, GPUs: 4, Throughput: map[allocation.Accelerator]float64{"k80": 1, "v100": 3}, StepsTotal: 1e4,
			Arrival: 360500 * time.Millisecond, Deadline: 2 * time.Hour},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, err = ReadTrace(strings.NewReader(""), "empty")
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty trace: %v, %v; want an empty slice", got, err)
	}
}

func TestReadTraceErrors(t *testing.T) {
	ok := `{"id":"ok","gpus":1,"throughput":{"v100":1}}`
	for _, tc := range []struct {
		name, line, want string
	}{
		{"syntax", `{"id":`, "trace.jsonl:3: unexpected end of JSON input"},
		{"negative gpus", `{"id":"x","gpus":-1,"throughput":{"v100":1}}`, `trace.jsonl:3: job "x": gpus: -1 is negative`},
		{"zero gpus", `{"id":"x","gpus":0,"throughput":{"v100":1}}`, `trace.jsonl:3: job "x": gpus: 0;`},
		{"string gpus", `{"id":"x","gpus":"2","throughput":{"v100":1}}`, `trace.jsonl:3: job "x": gpus: cannot hold JSON string`},
		{"fractional gpus", `{"id":"x","gpus":1.5,"throughput":{"v100":1}}`, `trace.jsonl:3: job "x": gpus: cannot hold JSON number 1.5`},
		{"id not string", `{"id":3,"gpus":1}`, `trace.jsonl:3: id: not a string`},
		{"empty id", `{"gpus":1,"throughput":{"v100":1}}`, `trace.jsonl:3: id: empty`},
		{"duplicate", ok, `trace.jsonl:3: job "ok": id: duplicate of line 1`},
		{"unknown field", `{"id":"x","gpu":1}`, `trace.jsonl:3: job "x": gpu: unknown field`},
		{"negative arrival", `{"id":"x","gpus":1,"throughput":{"v100":1},"arrival":-1}`, `trace.jsonl:3: job "x": arrival: -1 seconds is not in`},
		{"huge deadline", `{"id":"x","gpus":1,"throughput":{"v100":1},"deadline":1e300}`, `trace.jsonl:3: job "x": deadline: 1e+300 seconds`},
		{"string arrival", `{"id":"x","gpus":1,"throughput":{"v100":1},"arrival":"0"}`, `trace.jsonl:3: job "x": arrival: not a number`},
		{"negative throughput", `{"id":"x","gpus":1,"throughput":{"v100":-1}}`, `trace.jsonl:3: job "x": throughput[v100]: -1 is not`},
		{"no throughput", `{"id":"x","gpus":1,"throughput":{"v100":0}}`, `trace.jsonl:3: job "x": throughput: zero on every`},
		{"negative steps", `{"id":"x","gpus":1,"throughput":{"v100":1},"steps_total":-3}`, `trace.jsonl:3: job "x": steps_total: -3 is not`},
		{"steps done", `{"id":"x","gpus":1,"throughput":{"v100":1},"steps_total":3,"steps_done":4}`, `trace.jsonl:3: job "x": steps_done: 4 exceeds`},
		{"skew", `{"id":"x","gpus":1,"throughput":{"v100":1},"skew":2}`, `trace.jsonl:3: job "x": skew: 2 is above 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := ok + "\n\n" + tc.line + "\n"
			_, err := ReadTrace(strings.NewReader(in), "trace.jsonl")
			if err == nil || !errors.Is(err, ErrTrace) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrTrace containing %q", err, tc.want)
			}
			var te *TraceError
			if !errors.As(err, &te) || te.Line != 3 {
				t.Errorf("error %#v: want a *TraceError on line 3", err)
			}
		})
	}
}

func traceOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func traceRound(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

func TestReadGavelTrace(t *testing.T) {
	p := DefaultProfile()
	tp := func(template string, s int) map[allocation.Accelerator]float64 {
		m := map[allocation.Accelerator]float64{}
		for _, a := range []allocation.Accelerator{"k80", "p100", "v100"} {
			m[a] = p.Throughput(template, a, s)
		}
		return m
	}
	got, err := ReadGavelTrace(traceOpen(t, "testdata/small.gavel.trace"), "small.gavel.trace", Profile{})
	if err != nil {
		t.Fatal(err)
	}
	lm := "LM (batch size 20)"
	want := []policy.Job{
		{ID: "job-00000", Weight: 1, GPUs: 1, Throughput: tp("ResNet-50 (batch size 64)", 1), StepsTotal: 4000},
		{ID: "job-00001", Weight: 5, GPUs: 4, Throughput: tp(lm, 4), StepsTotal: 12000,
			Arrival:  360500 * time.Millisecond,
			Deadline: traceRound(360.5 + 2*12000/p.Throughput(lm, "v100", 4))},
		{ID: "job-00002", Weight: 1, GPUs: 1, Throughput: tp("A3C", 1), StepsTotal: 500, Arrival: 2 * time.Hour},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	got, err = ReadGavelTrace(traceOpen(t, "testdata/small_old.gavel.trace"), "small_old.gavel.trace", p)
	if err != nil {
		t.Fatal(err)
	}
	want = []policy.Job{
		{ID: "job-00000", Weight: 1, GPUs: 1, Throughput: tp("CycleGAN", 1), StepsTotal: 1000},
		{ID: "job-00001", Weight: 1, GPUs: 2, Throughput: tp("ResNet-18 (batch size 32)", 2), StepsTotal: 2500, Arrival: 42 * time.Second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("old format (-want +got):\n%s", diff)
	}
}

func TestReadGavelTraceErrors(t *testing.T) {
	const ok = "A3C\tcmd\tdir\t--steps\t0\t500\t1\t1\t-1\t0"
	line := func(fields ...string) string { return strings.Join(fields, "\t") }
	for _, tc := range []struct {
		name, line, want string
	}{
		{"field count", "A3C\tcmd\t500\t1", `g.trace:2: job "job-00001": 4 tab-separated fields, want 10`},
		{"unknown job type", line("Nope", "cmd", "dir", "--steps", "0", "500", "1", "1", "-1", "0"), `g.trace:2: job "job-00001": job_type: unknown template "Nope"`},
		{"non-numeric steps", line("A3C", "cmd", "dir", "--steps", "0", "many", "1", "1", "-1", "0"), `g.trace:2: job "job-00001": total_steps: "many" is not a positive number`},
		{"zero steps", line("A3C", "cmd", "dir", "--steps", "0", "0", "1", "1", "-1", "0"), `total_steps: "0" is not a positive number`},
		{"negative gpus", line("A3C", "cmd", "dir", "--steps", "0", "500", "-1", "1", "-1", "0"), `g.trace:2: job "job-00001": scale_factor: "-1" is not a positive integer`},
		{"not distributed", line("A3C", "cmd", "dir", "--steps", "0", "500", "2", "1", "-1", "0"), `scale_factor: template "A3C" cannot run on 2 GPU(s)`},
		{"too many gpus", line("LM (batch size 5)", "cmd", "dir", "--steps", "0", "500", "16", "1", "-1", "0"), `scale_factor: template "LM (batch size 5)" cannot run on 16 GPU(s)`},
		{"needs data", line("A3C", "cmd", "dir", "--steps", "2", "500", "1", "1", "-1", "0"), `needs_data_dir: "2" is not 0 or 1`},
		{"weight", line("A3C", "cmd", "dir", "--steps", "0", "500", "1", "0", "-1", "0"), `priority_weight: "0" is not a positive number`},
		{"slo", line("A3C", "cmd", "dir", "--steps", "0", "500", "1", "1", "x", "0"), `SLO: "x" is not a number`},
		{"arrival", line("A3C", "cmd", "dir", "--steps", "0", "500", "1", "1", "-1", "-5"), `arrival_time: -5 seconds is not in`},
		{"old arrival", line("A3C", "cmd", "--steps", "0", "500", "soon", "1"), `arrival_time: "soon" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadGavelTrace(strings.NewReader(ok+"\n"+tc.line+"\n"), "g.trace", Profile{})
			if err == nil || !errors.Is(err, ErrTrace) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrTrace containing %q", err, tc.want)
			}
		})
	}
	if _, err := ReadGavelTrace(strings.NewReader(ok), "g", Profile{Templates: []Template{{}}}); err == nil {
		t.Error("invalid profile accepted")
	}
}

func TestReadTiresiasTrace(t *testing.T) {
	got, err := ReadTiresiasTrace(traceOpen(t, "testdata/small.tiresias.csv"), "small.tiresias.csv", "v100", "k80")
	if err != nil {
		t.Fatal(err)
	}
	tp := map[allocation.Accelerator]float64{"v100": 1, "k80": 1}
	want := []policy.Job{
		{ID: "0", GPUs: 1, Throughput: tp, StepsTotal: 164, Skew: 0.717},
		{ID: "1", GPUs: 8, Arrival: 30 * time.Second, Throughput: tp, StepsTotal: 147, Skew: 0.774},
		{ID: "7", GPUs: 2, Arrival: 53500 * time.Millisecond, Throughput: tp, StepsTotal: 1800, Skew: 0.112},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Columns by name, in any order.
	got, err = ReadTiresiasTrace(strings.NewReader("duration,job_id,submit_time,num_gpu\n10,j,5,4\n"), "x.csv", "a")
	if err != nil {
		t.Fatal(err)
	}
	want = []policy.Job{{ID: "j", GPUs: 4, Arrival: 5 * time.Second, Throughput: map[allocation.Accelerator]float64{"a": 1}, StepsTotal: 10}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reordered columns (-want +got):\n%s", diff)
	}
}

func TestReadTiresiasTraceErrors(t *testing.T) {
	const header = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
	const ok = "0,1,0,606,vgg19,164,30\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "t.csv:1: no header row"},
		{"missing column", "job_id,num_gpu,submit_time\n", "t.csv:1: duration: missing column"},
		{"field count", header + ok + "1,2,3\n", "t.csv:3: wrong number of fields"},
		{"negative gpus", header + ok + "1,-2,0,1,vgg,10,0\n", `t.csv:3: job "1": num_gpu: "-2" is not a positive integer`},
		{"submit", header + ok + "1,2,later,1,vgg,10,0\n", `t.csv:3: job "1": submit_time: "later" is not a number`},
		{"negative submit", header + ok + "1,2,-1,1,vgg,10,0\n", `t.csv:3: job "1": submit_time: -1 seconds`},
		{"duration", header + ok + "1,2,0,1,vgg,0,0\n", `t.csv:3: job "1": duration: "0" is not a number`},
		{"duplicate", header + ok + ok, `t.csv:3: job "0": job_id: duplicate of line 2`},
		{"empty id", header + ok + ",2,0,1,vgg,10,0\n", `t.csv:3: job_id: empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTiresiasTrace(strings.NewReader(tc.in), "t.csv", "v100")
			if err == nil || !errors.Is(err, ErrTrace) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrTrace containing %q", err, tc.want)
			}
		})
	}
	if _, err := ReadTiresiasTrace(strings.NewReader(header+ok), "t.csv"); err == nil {
		t.Error("no accelerator type accepted")
	}
}

func TestLoadGavelThroughputs(t *testing.T) {
	p, pairs, err := LoadGavelThroughputs(traceOpen(t, "testdata/small_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	toy := "Toy (batch size 8)"
	want := Profile{
		Templates: []Template{
			{Name: "A3C", Model: "A3C"},
			{Name: toy, Model: "Toy", BatchSize: 8, Distributed: true},
		},
		Throughputs: map[ProfileKey]float64{
			{toy, "v100", 1}:   10,
			{toy, "v100", 2}:   18,
			{"A3C", "v100", 1}: 4,
			{toy, "k80", 1}:    2.5,
			{toy, "k80", 2}:    0,
			{"A3C", "k80", 1}:  1,
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	wantPairs := Pairs{
		{toy, toy, "v100", 1, 1}:     {6, 6},
		{toy, "A3C", "v100", 1, 1}:   {7, 2.5},
		{"A3C", toy, "v100", 1, 1}:   {2.5, 7},
		{"A3C", "A3C", "v100", 1, 1}: {0, 0},
	}
	if diff := cmp.Diff(wantPairs, pairs); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
}

func TestLoadGavelThroughputsErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"syntax", `{"v100": `, "gavel throughputs: unexpected EOF"},
		{"key", `{"v100": {"A3C": {"null": 1}}}`, `v100[A3C]: job type "A3C" is not of the form`},
		{"scale", `{"v100": {"('A3C', 0)": {"null": 1}}}`, `v100[('A3C', 0)]: job type`},
		{"no null", `{"v100": {"('A3C', 1)": {}}}`, `v100[('A3C', 1)]: no "null"`},
		{"null type", `{"v100": {"('A3C', 1)": {"null": [1, 2]}}}`, `v100[('A3C', 1)][null]: not a number`},
		{"negative", `{"v100": {"('A3C', 1)": {"null": -1}}}`, `v100[('A3C', 1)][null]: -1 is not`},
		{"pair", `{"v100": {"('A3C', 1)": {"null": 1, "('A3C', 1)": [1]}}}`, `v100[('A3C', 1)][('A3C', 1)]: not a pair of numbers`},
		{"pair negative", `{"v100": {"('A3C', 1)": {"null": 1, "('A3C', 1)": [1, -2]}}}`, `v100[('A3C', 1)][('A3C', 1)]: -2 is not`},
		{"empty", `{}`, `no templates`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadGavelThroughputs(strings.NewReader(tc.in))
			if err == nil || !errors.Is(err, ErrTrace) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrTrace containing %q", err, tc.want)
			}
		})
	}
}

// traceShared returns the path of a file of the shared data folder, or
// skips the test if it is absent.
func traceShared(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "data", rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared data not available: %v", err)
	}
	return path
}

func TestRealGavelData(t *testing.T) {
	p, pairs, err := LoadGavelThroughputs(traceOpen(t, traceShared(t, "gavel/simulation_throughputs.json")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Templates(), p.Templates); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	def := DefaultProfile()
	if len(p.Throughputs) != len(def.Throughputs) {
		t.Errorf("%d isolated throughputs, want %d", len(p.Throughputs), len(def.Throughputs))
	}
	for k, want := range def.Throughputs {
		got, ok := p.Throughputs[k]
		if !ok || math.Abs(got-want) > 5e-4*want {
			t.Errorf("%v: %v (present %v), want %v to 4 significant digits", k, got, ok, want)
		}
	}
	if len(pairs) != 5277 {
		t.Errorf("%d pairs, want 5277 (spec §4.5)", len(pairs))
	}
	for k, v := range pairs {
		r := pairs[PairKey{k.Partner, k.Template, k.Accelerator, k.PartnerGPUs, k.GPUs}]
		if r != [2]float64{v[1], v[0]} {
			t.Errorf("pair %v = %v but its reverse is %v", k, v, r)
			break
		}
	}

	jobs, err := ReadGavelTrace(traceOpen(t, traceShared(t, "gavel/traces/physical_cluster/max_min_fairness.trace")), "max_min_fairness.trace", p)
	if err != nil {
		t.Fatal(err)
	}
	scales := map[int]int{}
	for _, j := range jobs {
		scales[j.GPUs]++
	}
	if len(jobs) != 96 || scales[1] != 59 || scales[2] != 19 || scales[4] != 18 {
		t.Errorf("%d jobs with scale factors %v, want 96: 59×1, 19×2, 18×4", len(jobs), scales)
	}
	if last := jobs[len(jobs)-1]; last.ID != "job-00095" {
		t.Errorf("last job ID %q", last.ID)
	}
	// An old-format (7-field) Philly-derived trace with scale factors ≤ 8.
	jobs, err = ReadGavelTrace(traceOpen(t, traceShared(t, "gavel/traces/msr_philly_seed0/795a4c.trace")), "795a4c.trace", p)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 0 {
		t.Error("no jobs in 795a4c.trace")
	}
}

func TestRealTiresiasData(t *testing.T) {
	jobs, err := ReadTiresiasTrace(traceOpen(t, traceShared(t, "tiresias/60_job.csv")), "60_job.csv", "v100")
	if err != nil {
		t.Fatal(err)
	}
	gpus := map[int]int{}
	for _, j := range jobs {
		gpus[j.GPUs]++
		if j.StepsTotal < 121 || j.StepsTotal > 1800 || j.Arrival > 1779*time.Second {
			t.Errorf("job %q: duration %v s, arrival %v out of the documented ranges", j.ID, j.StepsTotal, j.Arrival)
		}
	}
	if len(jobs) != 60 || gpus[1] != 30 || gpus[2] != 10 || gpus[4] != 10 || gpus[8] != 10 {
		t.Errorf("%d jobs with GPU counts %v, want 60: 30×1, 10×2, 10×4, 10×8", len(jobs), gpus)
	}
}

func FuzzReadTrace(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteTrace(&buf, traceTestJobs()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"id":"x","gpus":-1}`))
	f.Add([]byte("{\"id\":\"a\",\"gpus\":1,\"throughput\":{\"v\":1},\"arrival\":1e9}\n\n{"))
	f.Fuzz(func(t *testing.T, in []byte) {
		jobs, err := ReadTrace(bytes.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrTrace) {
				t.Fatalf("error %v does not wrap ErrTrace", err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteTrace(&out, jobs); err != nil {
			t.Fatal(err)
		}
		again, err := ReadTrace(&out, "rewritten")
		if err != nil {
			t.Fatalf("rewritten trace rejected: %v\n%s", err, out.String())
		}
		if len(again) != len(jobs) {
			t.Fatalf("rewritten trace has %d jobs, want %d", len(again), len(jobs))
		}
	})
}
