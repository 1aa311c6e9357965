package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const mSec = time.Second

// done is a finished job record: arrival a, first run f, finish e,
// exclusive x (all in seconds) and mean active jobs act.
func metricsDone(id string, a, f, e, x int, act float64) JobRecord {
	return JobRecord{
		ID: id, GPUs: 1,
		Arrival: time.Duration(a) * mSec, FirstRun: time.Duration(f) * mSec, Ran: true,
		Finish: time.Duration(e) * mSec, Finished: true,
		Exclusive: time.Duration(x) * mSec, ActiveJobs: act,
	}
}

var metricsApprox = cmpopts.EquateApprox(0, 1e-12)

func TestMetricsSummarizeHand(t *testing.T) {
	// Three jobs with JCTs 100, 200 and 600 s.
	jobs := []JobRecord{
		metricsDone("a", 0, 0, 100, 100, 1),
		metricsDone("b", 10, 50, 210, 100, 2),
		metricsDone("c", 20, 20, 620, 300, 3),
	}
	rounds := []RoundRecord{
		{Start: 0, Length: 100 * mSec, Active: 3, Running: 2, BusyGPUs: 2, GPUs: 4},
		{Start: 100 * mSec, Length: 300 * mSec, Active: 2, Running: 1, BusyGPUs: 1, GPUs: 4},
	}
	got, err := Summarize(jobs, rounds, Options{GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	// N = 3, G = 2: factor 1.5. ρ = 100/150, 200/150, 600/450.
	// Contention: act 1 → 1, 2 → 1, 3 → 1.5: ρ = 1, 2, 600/450.
	want := Summary{
		TraceJobs: 3, GPUs: 2, Jobs: 3, Finished: 3,
		AvgJCT: 300, MedianJCT: 200, P99JCT: 600,
		Makespan:                 620,
		MeanFTF:                  (100.0/150 + 200.0/150 + 600.0/450) / 3,
		WorstFTF:                 200.0 / 150,
		UnfairFraction:           2.0 / 3,
		MeanFTFContention:        (1 + 2 + 600.0/450) / 3,
		WorstFTFContention:       2,
		UnfairFractionContention: 2.0 / 3,
		UnfairThreshold:          1.05,
		// (2·100 + 1·300) / (4·100 + 4·300) = 500 / 1600.
		Utilization:        500.0 / 1600,
		MeanTimeToFirstRun: (0 + 40 + 0) / 3.0,
	}
	if d := cmp.Diff(want, got, metricsApprox); d != "" {
		t.Errorf("Summary (-want +got):\n%s", d)
	}
}

func TestMetricsFTFByHand(t *testing.T) {
	// N = 4 jobs, G = 2 GPUs: ρ = JCT / (T_excl · 2).
	jobs := []JobRecord{
		metricsDone("exact", 0, 0, 210, 100, 0),  // 210/200 = 1.05: not unfair
		metricsDone("over", 0, 0, 212, 100, 0),   // 212/200 = 1.06: unfair
		metricsDone("fast", 0, 0, 100, 100, 0),   // 0.5
		metricsDone("cont", 0, 0, 300, 100, 8.0), // 1.5; contention 300/(100·4) = 0.75
	}
	per, err := PerJob(jobs, Options{GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []JobMetrics{
		{ID: "cont", Finished: true, Ran: true, JCT: 300, FTF: 1.5, FTFContention: 0.75},
		{ID: "exact", Finished: true, Ran: true, JCT: 210, FTF: 1.05, FTFContention: 2.1},
		{ID: "fast", Finished: true, Ran: true, JCT: 100, FTF: 0.5, FTFContention: 1},
		{ID: "over", Finished: true, Ran: true, JCT: 212, FTF: 1.06, FTFContention: 2.12},
	}
	// Same arrival: arrival order breaks ties by ID.
	if d := cmp.Diff(want, per, metricsApprox); d != "" {
		t.Errorf("PerJob (-want +got):\n%s", d)
	}
	if per[1].FTF != 1.05 {
		t.Errorf("ρ(exact) = %v, want exactly 1.05", per[1].FTF)
	}

	s, err := Summarize(jobs, nil, Options{GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Static: over (1.06) and cont (1.5) exceed 1.05; exact does not.
	if s.UnfairFraction != 0.5 || s.WorstFTF != 1.5 {
		t.Errorf("unfair = %v, worst = %v, want 0.5, 1.5", s.UnfairFraction, s.WorstFTF)
	}
	// Contention: exact 2.1 and over 2.12 exceed; fast 1 and cont 0.75 do not.
	if s.UnfairFractionContention != 0.5 || s.WorstFTFContention != 2.12 {
		t.Errorf("contention unfair = %v, worst = %v, want 0.5, 2.12", s.UnfairFractionContention, s.WorstFTFContention)
	}
	if s.Utilization != 0 {
		t.Errorf("utilization without rounds = %v, want 0", s.Utilization)
	}

	// A configurable threshold: at 1.1 only cont (1.5) is unfair.
	s, err = Summarize(jobs, nil, Options{GPUs: 2, UnfairThreshold: 1.1})
	if err != nil {
		t.Fatal(err)
	}
	if s.UnfairFraction != 0.25 || s.UnfairThreshold != 1.1 {
		t.Errorf("threshold 1.1: unfair = %v (threshold %v), want 0.25", s.UnfairFraction, s.UnfairThreshold)
	}
}

func TestMetricsFTFFewJobs(t *testing.T) {
	// N < G: max(1, N/G) = 1, ρ = JCT / T_excl.
	jobs := []JobRecord{metricsDone("a", 0, 0, 150, 100, 0.5)}
	per, err := PerJob(jobs, Options{GPUs: 8})
	if err != nil {
		t.Fatal(err)
	}
	if per[0].FTF != 1.5 || per[0].FTFContention != 1.5 {
		t.Errorf("ρ = %v, %v, want 1.5, 1.5", per[0].FTF, per[0].FTFContention)
	}
}

func TestMetricsPercentiles(t *testing.T) {
	for _, tc := range []struct {
		jcts              []int
		mean, median, p99 float64
	}{
		{[]int{5}, 5, 5, 5},
		{[]int{4, 1}, 2.5, 2.5, 4},
		{[]int{30, 10, 20, 40}, 25, 25, 40},
		// 100 jobs with JCT 1..100: ⌈99⌉ = 99th smallest.
		{metricsSeq(100), 50.5, 50.5, 99},
		// 101 jobs: ⌈99.99⌉ = 100th smallest.
		{metricsSeq(101), 51, 51, 100},
		// 200 jobs: 198th smallest.
		{metricsSeq(200), 100.5, 100.5, 198},
	} {
		var jobs []JobRecord
		for i, j := range tc.jcts {
			jobs = append(jobs, metricsDone(fmt.Sprint(i), i, i, i+j, 1, 1))
		}
		s, err := Summarize(jobs, nil, Options{GPUs: 1})
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{s.AvgJCT, s.MedianJCT, s.P99JCT}
		want := []float64{tc.mean, tc.median, tc.p99}
		if d := cmp.Diff(want, got, metricsApprox); d != "" {
			t.Errorf("%d jobs: mean, median, p99 (-want +got):\n%s", len(tc.jcts), d)
		}
	}
}

func metricsSeq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

// trace is six jobs given out of arrival order; "late" never finishes.
func metricsTrace() []JobRecord {
	late := JobRecord{ID: "late", GPUs: 1, Arrival: 50 * mSec, Exclusive: 10 * mSec, ActiveJobs: 2}
	return []JobRecord{
		metricsDone("j3", 30, 30, 90, 60, 1),
		metricsDone("j0", 0, 0, 10, 10, 1),
		metricsDone("j2", 20, 25, 45, 20, 1),
		late,
		metricsDone("j1", 10, 10, 30, 20, 1),
		metricsDone("j4", 40, 100, 140, 40, 1),
	}
}

func TestMetricsWindowRange(t *testing.T) {
	jobs := metricsTrace()
	for _, tc := range []struct {
		w    Window
		want []string
	}{
		{Window{}, []string{"j0", "j1", "j2", "j3", "j4", "late"}},
		{Window{Start: 1, End: 3}, []string{"j1", "j2"}},
		{Window{Start: 4}, []string{"j4", "late"}},
		{Window{End: 6}, []string{"j0", "j1", "j2", "j3", "j4", "late"}},
		{Window{Start: 2, End: 2}, []string{}},
		{Window{IDs: []string{"j3", "j0"}}, []string{"j3", "j0"}},
	} {
		per, err := PerJob(jobs, Options{Window: tc.w, GPUs: 4})
		if err != nil {
			t.Fatalf("%+v: %v", tc.w, err)
		}
		got := []string{}
		for _, m := range per {
			got = append(got, m.ID)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%+v: ids (-want +got):\n%s", tc.w, d)
		}
	}

	// The window's stats use only its jobs, but N and the makespan are the
	// whole trace's: N = 6, G = 4, factor 1.5.
	s, err := Summarize(jobs, nil, Options{Window: Window{Start: 1, End: 3}, GPUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{
		TraceJobs: 6, GPUs: 4, Jobs: 2, Finished: 2,
		AvgJCT: 22.5, MedianJCT: 22.5, P99JCT: 25,
		Makespan: 140, TraceUnfinished: 1,
		MeanFTF:  (20/30.0 + 25/30.0) / 2,
		WorstFTF: 25 / 30.0,
		// ActiveJobs = 1: factor 1.
		MeanFTFContention:  (1 + 1.25) / 2,
		WorstFTFContention: 1.25,
		// 1.25 > 1.05.
		UnfairFractionContention: 0.5,
		UnfairThreshold:          1.05,
		MeanTimeToFirstRun:       2.5,
	}
	if d := cmp.Diff(want, s, metricsApprox); d != "" {
		t.Errorf("window [1,3) Summary (-want +got):\n%s", d)
	}
}

// Gavel's protocol: measure the jobs at arrival positions 4000–4999 of a
// longer trace.
func TestMetricsWindowGavel(t *testing.T) {
	var jobs []JobRecord
	for i := range 6000 {
		jobs = append(jobs, metricsDone(fmt.Sprintf("%05d", i), i, i, i+1+i%10, 1, 1))
	}
	s, err := Summarize(jobs, nil, Options{Window: Window{Start: 4000, End: 5000}, GPUs: 100})
	if err != nil {
		t.Fatal(err)
	}
	// JCTs 1..10 in equal numbers: mean 5.5.
	if s.Jobs != 1000 || s.Finished != 1000 || s.AvgJCT != 5.5 || s.P99JCT != 10 {
		t.Errorf("got jobs %d, finished %d, avg %v, p99 %v; want 1000, 1000, 5.5, 10", s.Jobs, s.Finished, s.AvgJCT, s.P99JCT)
	}
	if s.Makespan != 5999+1+9 {
		t.Errorf("makespan = %v, want %v", s.Makespan, 5999+1+9)
	}
}

func TestMetricsUnfinished(t *testing.T) {
	jobs := metricsTrace()
	s, err := Summarize(jobs, nil, Options{Window: Window{Start: 3}, GPUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	// j3 (JCT 60), j4 (JCT 100) finished; "late" did not and never ran.
	if s.Jobs != 3 || s.Finished != 2 || s.Unfinished != 1 || s.NeverRan != 1 {
		t.Errorf("counts jobs %d finished %d unfinished %d never ran %d, want 3 2 1 1", s.Jobs, s.Finished, s.Unfinished, s.NeverRan)
	}
	if s.AvgJCT != 80 || s.MeanTimeToFirstRun != 30 {
		t.Errorf("avg JCT %v, time to first run %v, want 80, 30", s.AvgJCT, s.MeanTimeToFirstRun)
	}
	if s.TraceUnfinished != 1 || s.Makespan != 140 {
		t.Errorf("trace unfinished %d, makespan %v, want 1, 140 (lower bound)", s.TraceUnfinished, s.Makespan)
	}
	per, err := PerJob(jobs, Options{Window: Window{IDs: []string{"late"}}, GPUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]JobMetrics{{ID: "late"}}, per); d != "" {
		t.Errorf("unfinished job metrics (-want +got):\n%s", d)
	}

	// A window with no finished job is an error, as is an empty one.
	for _, w := range []Window{{IDs: []string{"late"}}, {Start: 2, End: 2}} {
		if _, err := Summarize(jobs, nil, Options{Window: w, GPUs: 4}); !errors.Is(err, ErrNoFinishedJobs) {
			t.Errorf("window %+v: err = %v, want ErrNoFinishedJobs", w, err)
		}
	}
	// A running but unfinished job counts towards responsiveness.
	running := JobRecord{ID: "r", Arrival: 0, FirstRun: 7 * mSec, Ran: true, Exclusive: mSec}
	s, err = Summarize([]JobRecord{running, metricsDone("d", 0, 1, 2, 1, 1)}, nil, Options{GPUs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.MeanTimeToFirstRun != 4 || s.NeverRan != 0 || s.Unfinished != 1 {
		t.Errorf("time to first run %v, never ran %d, unfinished %d, want 4, 0, 1", s.MeanTimeToFirstRun, s.NeverRan, s.Unfinished)
	}
}

func TestMetricsDeterministic(t *testing.T) {
	jobs := metricsTrace()
	rounds := []RoundRecord{{Length: 360 * mSec, Active: 2, Running: 1, BusyGPUs: 1, GPUs: 3}}
	in, _ := json.Marshal(jobs)
	first, err := Summarize(jobs, rounds, Options{GPUs: 3})
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(first)
	// The same records in another input order give bit-identical results:
	// the window orders jobs by arrival.
	perm := slices.Clone(jobs)
	slices.Reverse(perm)
	for _, in := range [][]JobRecord{jobs, perm, jobs, perm} {
		s, err := Summarize(in, rounds, Options{GPUs: 3})
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(s)
		if string(b1) != string(b2) {
			t.Fatalf("not deterministic or order-dependent:\n%s\n%s", b1, b2)
		}
	}
	after, _ := json.Marshal(jobs)
	if string(in) != string(after) {
		t.Error("Summarize modified its input")
	}
	if !strings.Contains(string(b1), `"avg_jct_s":`) || !strings.Contains(string(b1), `"unfair_fraction":`) {
		t.Errorf("JSON lacks expected keys: %s", b1)
	}
}

func TestMetricsErrors(t *testing.T) {
	ok := metricsDone("ok", 0, 0, 10, 10, 1)
	mod := func(f func(r *JobRecord)) []JobRecord {
		r := metricsDone("x", 5, 5, 20, 10, 1)
		f(&r)
		return []JobRecord{ok, r}
	}
	for _, tc := range []struct {
		name   string
		jobs   []JobRecord
		rounds []RoundRecord
		o      Options
		is     error
		want   string
	}{
		{"gpus zero", []JobRecord{ok}, nil, Options{}, policy.ErrInvalidConfig, "gpus: 0"},
		{"gpus negative", []JobRecord{ok}, nil, Options{GPUs: -2}, policy.ErrInvalidConfig, "gpus: -2"},
		{"threshold", []JobRecord{ok}, nil, Options{GPUs: 1, UnfairThreshold: math.NaN()}, policy.ErrInvalidConfig, "unfair_threshold"},
		{"no jobs", nil, nil, Options{GPUs: 1}, ErrInvalidRecord, "no jobs"},
		{"negative arrival", mod(func(r *JobRecord) { r.Arrival = -mSec }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": arrival`},
		{"finish before arrival", mod(func(r *JobRecord) { r.Finish = 2 * mSec }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": finish`},
		{"exclusive zero", mod(func(r *JobRecord) { r.Exclusive = 0 }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": exclusive`},
		{"exclusive negative", mod(func(r *JobRecord) { r.Exclusive, r.Finished = -mSec, false }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": exclusive`},
		{"active NaN", mod(func(r *JobRecord) { r.ActiveJobs = math.NaN() }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": active_jobs`},
		{"gpu seconds", mod(func(r *JobRecord) { r.GPUSeconds = -1 }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": gpu_seconds`},
		{"gpus field", mod(func(r *JobRecord) { r.GPUs = -1 }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": gpus`},
		{"first run early", mod(func(r *JobRecord) { r.FirstRun = mSec }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": first_run`},
		{"first run late", mod(func(r *JobRecord) { r.FirstRun = 30 * mSec }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": first_run`},
		{"finished never ran", mod(func(r *JobRecord) { r.Ran = false }), nil, Options{GPUs: 1}, ErrInvalidRecord, `job "x": ran`},
		{"duplicate id", []JobRecord{ok, ok}, nil, Options{GPUs: 1}, ErrInvalidRecord, `job "ok": id`},
		{"unknown id", []JobRecord{ok}, nil, Options{GPUs: 1, Window: Window{IDs: []string{"nope"}}}, policy.ErrInvalidConfig, `"nope"`},
		{"id twice", []JobRecord{ok}, nil, Options{GPUs: 1, Window: Window{IDs: []string{"ok", "ok"}}}, policy.ErrInvalidConfig, `"ok" is listed twice`},
		{"ids and range", []JobRecord{ok}, nil, Options{GPUs: 1, Window: Window{Start: 1, IDs: []string{"ok"}}}, policy.ErrInvalidConfig, "exclusive"},
		{"range past end", []JobRecord{ok}, nil, Options{GPUs: 1, Window: Window{End: 2}}, policy.ErrInvalidConfig, "[0, 2)"},
		{"range negative", []JobRecord{ok}, nil, Options{GPUs: 1, Window: Window{Start: -1}}, policy.ErrInvalidConfig, "[-1, 0)"},
		{"range reversed", []JobRecord{ok, metricsDone("y", 1, 1, 2, 1, 1)}, nil, Options{GPUs: 1, Window: Window{Start: 2, End: 1}}, policy.ErrInvalidConfig, "[2, 1)"},
		{"round length", []JobRecord{ok}, []RoundRecord{{}, {Length: -mSec}}, Options{GPUs: 1}, ErrInvalidRecord, "round 1: length"},
		{"round busy", []JobRecord{ok}, []RoundRecord{{Length: mSec, BusyGPUs: 3, GPUs: 2}}, Options{GPUs: 1}, ErrInvalidRecord, "round 0: busy_gpus"},
		{"round running", []JobRecord{ok}, []RoundRecord{{Length: mSec, Active: 1, Running: 2}}, Options{GPUs: 1}, ErrInvalidRecord, "round 0: running"},
		{"round start", []JobRecord{ok}, []RoundRecord{{Start: -mSec}}, Options{GPUs: 1}, ErrInvalidRecord, "round 0: start"},
	} {
		_, err := Summarize(tc.jobs, tc.rounds, tc.o)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %v containing %q", tc.name, err, tc.is, tc.want)
		}
	}
	// PerJob validates the same way.
	if _, err := PerJob(mod(func(r *JobRecord) { r.Exclusive = 0 }), Options{GPUs: 1}); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("PerJob: err = %v, want ErrInvalidRecord", err)
	}
	// An unfinished job may have Exclusive zero (not yet known).
	unk := JobRecord{ID: "u"}
	if _, err := Summarize([]JobRecord{ok, unk}, nil, Options{GPUs: 1}); err != nil {
		t.Errorf("unfinished job with zero exclusive: %v", err)
	}
}

// Preemptions and migrations per job are means over the window's jobs,
// finished or not.
func TestMetricsPreemptionsPerJob(t *testing.T) {
	a := metricsDone("a", 0, 0, 100, 100, 1)
	a.Preemptions, a.Migrations = 3, 1
	b := metricsDone("b", 0, 0, 200, 100, 1)
	b.Migrations = 1
	c := JobRecord{ID: "c", GPUs: 1, Preemptions: 1}
	got, err := Summarize([]JobRecord{a, b, c}, nil, Options{GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.PreemptionsPerJob != 4.0/3 || got.MigrationsPerJob != 2.0/3 {
		t.Errorf("preemptions %v, migrations %v per job; want 4/3 and 2/3", got.PreemptionsPerJob, got.MigrationsPerJob)
	}
}

// Decision latencies by nearest rank: of 1…100 ms, p50 is the 50th and p99
// the 99th, and they total 5.05 s; Summarize alone leaves them zero.
func TestResultSummaryLatency(t *testing.T) {
	r := &Result{
		Jobs:   []JobRecord{{ID: "a", GPUs: 1, Ran: true, Finished: true, Finish: time.Hour, Exclusive: time.Hour}},
		Rounds: []RoundRecord{{Length: time.Hour, Running: 1, Active: 1, BusyGPUs: 1, GPUs: 1}},
	}
	for i := 100; i >= 1; i-- {
		r.Calls = append(r.Calls, Call{Latency: time.Duration(i) * time.Millisecond})
	}
	s, err := r.Summary(Options{GPUs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.DecisionP50 != 0.05 || s.DecisionP99 != 0.099 {
		t.Errorf("p50 %v, p99 %v; want 0.05, 0.099", s.DecisionP50, s.DecisionP99)
	}
	if math.Abs(s.DecisionTotal-5.05) > 1e-12 {
		t.Errorf("total %v s, want 5.05", s.DecisionTotal)
	}
	plain, _ := Summarize(r.Jobs, r.Rounds, Options{GPUs: 1})
	if plain.DecisionP50 != 0 || plain.DecisionP99 != 0 || plain.DecisionTotal != 0 {
		t.Errorf("Summarize set latencies: %+v", plain)
	}
}
