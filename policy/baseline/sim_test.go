package baseline_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
	"github.com/google/go-cmp/cmp"
)

// simulate runs jobs event-driven (the policy is asked at every arrival and
// completion, as in Tiresias' simulator) and returns their JCTs and
// preemptions by ID.
func simulate(t *testing.T, name string, sizes []int, jobs ...policy.Job) (jct map[string]time.Duration, preempted map[string]int) {
	t.Helper()
	p, err := policy.New(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Simulation{Cluster: servers(sizes...), Policy: p, Round: time.Hour, Events: true}
	res, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	jct, preempted = map[string]time.Duration{}, map[string]int{}
	for _, r := range res.Jobs {
		if !r.Finished {
			t.Fatalf("%s: %s did not finish", name, r.ID)
		}
		jct[r.ID] = r.JCT()
		preempted[r.ID] = r.Preemptions
	}
	return jct, preempted
}

// Tiresias acceptance check "1-D dlas and fifo: job0 3000, job1 4100": one
// 4-GPU server, job0 (4 GPUs, 3000 s) at 0 and job1 (4 GPUs, 2000 s) at
// 900 s. FIFO and YARN-CS run them in turn; SRTF and SRSF let job1, with
// 2000 s left against job0's 2100, preempt job0.
func TestSimTiresiasTwoJobs(t *testing.T) {
	jobs := []policy.Job{job("job0", 4, 0, 3000), job("job1", 4, 900, 2000)}
	for _, tc := range []struct {
		name      string
		jct       map[string]time.Duration
		preempted map[string]int
	}{
		{"baseline.fifo", map[string]time.Duration{"job0": 3000 * time.Second, "job1": 4100 * time.Second}, map[string]int{"job0": 0, "job1": 0}},
		{"baseline.yarn-cs", map[string]time.Duration{"job0": 3000 * time.Second, "job1": 4100 * time.Second}, map[string]int{"job0": 0, "job1": 0}},
		{"baseline.srtf", map[string]time.Duration{"job0": 5000 * time.Second, "job1": 2000 * time.Second}, map[string]int{"job0": 1, "job1": 0}},
		{"baseline.srsf", map[string]time.Duration{"job0": 5000 * time.Second, "job1": 2000 * time.Second}, map[string]int{"job0": 1, "job1": 0}},
	} {
		jct, preempted := simulate(t, tc.name, []int{4}, jobs...)
		if diff := cmp.Diff(tc.jct, jct); diff != "" {
			t.Errorf("%s: JCTs (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.preempted, preempted); diff != "" {
			t.Errorf("%s: preemptions (-want +got):\n%s", tc.name, diff)
		}
	}
}

// SRTF by hand on one 2-GPU server: a (2 GPUs, 1000 s) at 0, b (1 GPU,
// 300 s) at 100, c (1 GPU, 1000 s) at 200.
//
//	t=0     a runs.
//	t=100   b (300 left) ranks before a (900): b runs, a no longer fits and
//	        is preempted; one GPU idles, as no waiting job fits in it.
//	t=200   c (1000) backfills the idle GPU behind a (900).
//	t=400   b ends (JCT 300); c (800 left) ranks before a (900) and runs on.
//	t=1200  c ends (JCT 1000); a runs its 900 s.
//	t=2100  a ends (JCT 2100).
//
// FIFO runs a to 1000, then b and c side by side: JCTs 1000, 1200, 1800.
func TestSimSRTFByHand(t *testing.T) {
	jobs := []policy.Job{job("a", 2, 0, 1000), job("b", 1, 100, 300), job("c", 1, 200, 1000)}
	jct, preempted := simulate(t, "baseline.srtf", []int{2}, jobs...)
	want := map[string]time.Duration{"a": 2100 * time.Second, "b": 300 * time.Second, "c": 1000 * time.Second}
	if diff := cmp.Diff(want, jct); diff != "" {
		t.Errorf("srtf: JCTs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 0, "c": 0}, preempted); diff != "" {
		t.Errorf("srtf: preemptions (-want +got):\n%s", diff)
	}
	jct, _ = simulate(t, "baseline.fifo", []int{2}, jobs...)
	want = map[string]time.Duration{"a": 1000 * time.Second, "b": 1200 * time.Second, "c": 1800 * time.Second}
	if diff := cmp.Diff(want, jct); diff != "" {
		t.Errorf("fifo: JCTs (-want +got):\n%s", diff)
	}
}
