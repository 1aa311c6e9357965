package gandiva_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gandiva"
	"github.com/dlsched/dlsched/sim"
)

// simulate runs jobs of the given GPUs and seconds of work (at 1 step/s),
// all arriving at 0, through the event-driven simulator and returns their
// JCTs and preemptions by ID.
func simulate(t *testing.T, c allocation.Cluster, restart time.Duration, jobs map[string][2]int) (map[string]time.Duration, map[string]int) {
	t.Helper()
	var js []policy.Job
	for id, j := range jobs {
		js = append(js, policy.Job{ID: id, GPUs: j[0], StepsTotal: float64(j[1]),
			Throughput: map[allocation.Accelerator]float64{v100: 1}})
	}
	s := sim.Simulation{Cluster: c, Policy: &gandiva.Gandiva{NoPacking: true}, Round: time.Hour, Events: true, Restart: restart}
	res, err := s.Run(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	jct := map[string]time.Duration{}
	pre := map[string]int{}
	for _, r := range res.Jobs {
		if !r.Finished {
			t.Fatalf("job %s did not finish", r.ID)
		}
		jct[r.ID] = r.JCT()
		pre[r.ID] = r.Preemptions
	}
	return jct, pre
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

// Acceptance check 1 in simulation: two 300-s jobs on one GPU alternate
// every 60 s; a finishes after its fifth slice, b after its fifth.
func TestSimQuantum(t *testing.T) {
	jct, pre := simulate(t, servers(1, 1), 0, map[string][2]int{"a": {1, 300}, "b": {1, 300}})
	if jct["a"] != secs(540) || jct["b"] != secs(600) {
		t.Errorf("JCTs %v, want a 9m0s, b 10m0s", jct)
	}
	if pre["a"] != 4 || pre["b"] != 4 {
		t.Errorf("preemptions %v, want 4 each", pre)
	}
}

// Acceptance check 2 in simulation: three 2-GPU jobs of 360 s on a 4-GPU
// server progress at 2/3 of real time: the slices run ab, ca, bc, ab, …,
// so a finishes after its sixth slice at 480 s, b and c at 540 s, and the
// 1080 s of work take 540 s on two slots.
func TestSimOversubscription(t *testing.T) {
	jct, _ := simulate(t, servers(1, 4), 0, map[string][2]int{"a": {2, 360}, "b": {2, 360}, "c": {2, 360}})
	if jct["a"] != secs(480) || jct["b"] != secs(540) || jct["c"] != secs(540) {
		t.Errorf("JCTs %v, want a 8m0s, b and c 9m0s", jct)
	}
}

// Suspend/resume cost is the simulator's: with 5 s lost at every resume
// (the first run included), each slice does 55 s of work, so a needs a
// sixth slice (600–660 s) and finishes at 630 s; b then resumes at once
// and finishes at 630 + 5 + 25 = 660 s.
func TestSimRestart(t *testing.T) {
	jct, _ := simulate(t, servers(1, 1), 5*time.Second, map[string][2]int{"a": {1, 300}, "b": {1, 300}})
	if jct["a"] != secs(630) || jct["b"] != secs(660) {
		t.Errorf("JCTs %v, want a 10m30s, b 11m0s", jct)
	}
}

// A pair kept by introspection runs co-located to the end: two 300-s jobs
// at 0.653 of their speed each (LM + LM, norm_sum 1.306) both finish at
// 300/0.653 ≈ 459 s instead of 540 and 600 s time-sliced.
func TestSimPacking(t *testing.T) {
	var js []policy.Job
	for _, id := range []string{"a", "b"} {
		o := map[string]string{"a": "b", "b": "a"}[id]
		js = append(js, policy.Job{ID: id, GPUs: 1, StepsTotal: 300,
			Throughput: map[allocation.Accelerator]float64{v100: 1},
			Colocated:  map[string]map[allocation.Accelerator]float64{o: {v100: 0.653}}})
	}
	p := &gandiva.Gandiva{}
	res, err := (&sim.Simulation{Cluster: servers(1, 1), Policy: p, Round: time.Hour, Events: true}).Run(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	speed := 0.653
	want := time.Duration(300 / speed * float64(time.Second))
	for _, r := range res.Jobs {
		if d := r.JCT() - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("job %s: JCT %v, want %v", r.ID, r.JCT(), want)
		}
	}
}
