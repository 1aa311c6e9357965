package sim

import (
	"context"
	"errors"
	"fmt"
	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/workload"
	"github.com/google/go-cmp/cmp/cmpopts"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
	"github.com/google/go-cmp/cmp"
)

func job(id string, arrival, length time.Duration, gpus int) policy.Job {
	return policy.Job{ID: id, Arrival: arrival, GPUs: gpus, StepsTotal: length.Seconds(),
		Throughput: map[allocation.Accelerator]float64{"v100": 1}}
}

// Three jobs on two GPUs under FIFO, worked by hand with 360 s rounds:
// A (1 GPU, 1000 s) and B (1 GPU, 2000 s) start at 0; C (2 GPUs, 500 s)
// waits. A finishes at 1000 s, but C still needs both GPUs, so it starts at
// the boundary after B finishes (2000 s → 2160 s) and ends at 2660 s.
func TestFIFOHandTrace(t *testing.T) {
	s := &Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 2}}},
		Policy:  &gavel.FIFO{},
	}
	res, err := s.Run(context.Background(), []policy.Job{
		job("A", 0, 1000*time.Second, 1),
		job("B", 0, 2000*time.Second, 1),
		job("C", 0, 500*time.Second, 2),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, r := range res.Jobs {
		got[r.ID] = r.JCT()
	}
	want := map[string]time.Duration{"A": 1000 * time.Second, "B": 2000 * time.Second, "C": 2660 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JCTs (-want +got):\n%s", diff)
	}
	for _, r := range res.Jobs {
		// Service is GPUs × run time: A 1×1000, B 1×2000, C 2×500.
		if want := map[string]float64{"A": 1000, "B": 2000, "C": 1000}[r.ID]; r.GPUSeconds != want {
			t.Errorf("job %s: %v GPU-seconds, want %v", r.ID, r.GPUSeconds, want)
		}
	}
	if n := len(res.Rounds); n != 8 { // rounds start at 0, 360, …, 2520
		t.Errorf("%d rounds, want 8", n)
	}
	for _, r := range res.Rounds {
		if r.BusyGPUs > r.GPUs {
			t.Errorf("round at %v: %d of %d GPUs busy", r.Start, r.BusyGPUs, r.GPUs)
		}
	}
}

// Arrivals wait for the next round boundary but JCT counts from arrival;
// a restart cost is charged on every start after a round not run.
func TestArrivalAndRestart(t *testing.T) {
	s := &Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}},
		Policy:  &gavel.FIFO{},
		Restart: 20 * time.Second,
	}
	res, err := s.Run(context.Background(), []policy.Job{job("A", 100*time.Second, 300*time.Second, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Jobs[0]
	// Admitted at 360 s, loses 20 s, runs 300 s: finishes at 680 s.
	if r.FirstRun != 360*time.Second || r.Finish != 680*time.Second || r.JCT() != 580*time.Second {
		t.Errorf("first run %v, finish %v, JCT %v; want 360 s, 680 s, 580 s", r.FirstRun, r.Finish, r.JCT())
	}
}

func TestDeterministic(t *testing.T) {
	jobs := []policy.Job{
		job("A", 0, 5000*time.Second, 1), job("B", 700*time.Second, 3000*time.Second, 2),
		job("C", 900*time.Second, 4000*time.Second, 1), job("D", 0, 800*time.Second, 1),
	}
	s := &Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 2}}},
		Policy:  &gavel.MaxMinFairness{},
	}
	first, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, cmpopts.IgnoreFields(Call{}, "Latency")); diff != "" {
		t.Errorf("second run differs:\n%s", diff)
	}
	for _, r := range first.Jobs {
		if !r.Finished {
			t.Errorf("job %s did not finish", r.ID)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &Simulation{Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}}, Policy: &gavel.FIFO{}}
	if _, err := s.Run(ctx, []policy.Job{job("A", 0, time.Hour, 1)}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// Speed replaces the throughput table: here a job runs twice as fast as its
// table says, so a 1000 s job finishes at 500 s.
func TestSpeedHook(t *testing.T) {
	s := &Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}},
		Policy:  &gavel.FIFO{},
		Speed: func(j *policy.Job, g allocation.Grant, run placement.Run) float64 {
			if g.GPUs != 1 || run.Accelerator != "v100" {
				t.Errorf("Speed got grant %+v on %s", g, run.Accelerator)
			}
			return 2 * j.Throughput[run.Accelerator]
		},
	}
	res, err := s.Run(context.Background(), []policy.Job{job("A", 0, 1000*time.Second, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Jobs[0].Finish; got != 500*time.Second {
		t.Errorf("finish %v, want 500 s", got)
	}
	// A speed of zero is a simulator error, not a silent stall.
	s.Speed = func(*policy.Job, allocation.Grant, placement.Run) float64 { return 0 }
	if _, err := s.Run(context.Background(), []policy.Job{job("A", 0, 1000*time.Second, 1)}); err == nil {
		t.Error("zero speed: no error")
	}
}

// Inform's facts reach the policy, every call, and never the simulation's
// own jobs: each snapshot comes to Inform without the last one's.
func TestInformHook(t *testing.T) {
	var seen []float64
	s := &Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}},
		Policy:  &gavel.FIFO{},
		Inform: func(snap *policy.Snapshot) {
			for i := range snap.Jobs {
				j := &snap.Jobs[i]
				if j.Colocated != nil {
					t.Errorf("job %s comes with %v from an earlier call", j.ID, j.Colocated)
				}
				j.Colocated = map[string]map[allocation.Accelerator]float64{"other": {"v100": 0.5}}
			}
		},
	}
	s.Policy = policyFunc(func(snap *policy.Snapshot) (*policy.Decision, error) {
		for _, j := range snap.Jobs {
			seen = append(seen, j.Colocated["other"]["v100"])
		}
		return (&gavel.FIFO{}).Allocate(context.Background(), snap)
	})
	res, err := s.Run(context.Background(), []policy.Job{job("A", 0, 1000*time.Second, 1), job("B", 2000*time.Second, 1000*time.Second, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || slices.ContainsFunc(seen, func(x float64) bool { return x != 0.5 }) {
		t.Errorf("the policy saw %v, want 0.5 at each of its two calls", seen)
	}
	if len(res.Jobs) != 2 {
		t.Errorf("%d job records", len(res.Jobs))
	}
}

// policyFunc is a policy made of one function.
type policyFunc func(*policy.Snapshot) (*policy.Decision, error)

func (policyFunc) Name() string { return "test.func" }

func (f policyFunc) Allocate(_ context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return f(s)
}

// BenchmarkSimulation replays 1000 jobs from Gavel's generator at 5.6
// jobs/hour on Gavel's 36/36/36 cluster under gavel.las with 1920 s
// recomputation, and reports simulated rounds per second, with the policy
// solving each LP cold and warm-started from its last one.
func BenchmarkSimulation(b *testing.B) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		b.Skip("needs CLP (-tags clp)")
	}
	jobs, err := workload.Generator{Seed: 0, Jobs: 1000, Rate: 5.6}.Generate()
	if err != nil {
		b.Fatal(err)
	}
	for _, warm := range []bool{false, true} {
		b.Run(fmt.Sprintf("warm=%v", warm), func(b *testing.B) {
			rounds := 0
			for b.Loop() {
				s := &Simulation{Cluster: simtest.Cluster(36), Policy: &gavel.MaxMinFairness{Warm: warm}, Recompute: 1920 * time.Second}
				res, err := s.Run(context.Background(), jobs)
				if err != nil {
					b.Fatal(err)
				}
				rounds += len(res.Rounds)
			}
			b.ReportMetric(float64(rounds)/b.Elapsed().Seconds(), "rounds/s")
		})
	}
}

// Times past the clock's end (time.Duration's 292 years) neither wrap nor
// hang: a job too long for the clock is refused by its field, and a run
// that reaches the end fails with ErrClock, in round and event modes.
func TestClockEnd(t *testing.T) {
	one := allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}}
	long := job("A", 0, time.Second, 1)
	long.StepsTotal, long.Throughput["v100"] = 1e15, 1e-12 // 10²⁷ s alone
	_, err := (&Simulation{Cluster: one, Policy: &gavel.FIFO{}}).Run(context.Background(), []policy.Job{long})
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "A": steps_total`) {
		t.Errorf("10²⁷ s job: %v, want ErrInvalidSnapshot naming job A's steps_total", err)
	}
	for _, events := range []bool{false, true} {
		// Arrives an hour before the end, needs two.
		late := job("B", math.MaxInt64-time.Hour, 2*time.Hour, 1)
		done := make(chan error, 1)
		go func() {
			_, err := (&Simulation{Cluster: one, Policy: &gavel.FIFO{}, Events: events}).Run(context.Background(), []policy.Job{late})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrClock) {
				t.Errorf("events %v: %v, want ErrClock", events, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("events %v: no answer in 10 s", events)
		}
	}
}

// The engine's mechanism refuses a policy's malformed or over-capacity
// shares at the round they are first played: from the first decision, from
// a later one for the same jobs, when a job the decision already named
// arrives and its grant joins the round, and when a job left out took a
// share negative within the tolerance from the sum.
func TestInvalidShares(t *testing.T) {
	one := allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}}
	share := func(gpus int, x float64) allocation.Grant {
		return allocation.Grant{GPUs: gpus, Shares: map[allocation.Accelerator]float64{"v100": x}}
	}
	for _, tc := range []struct {
		name      string
		decisions []allocation.Allocation
		out       map[string]string
		want      string
	}{
		{"first decision", []allocation.Allocation{{"A": share(1, 1.5)}}, nil,
			`sim: round at 0s: invalid allocation: job "A": shares: v100 share 1.5 is outside [0,1]`},
		{"later decision", []allocation.Allocation{{"A": share(1, 0.5)}, {"A": share(1, 0.5), "B": share(1, 0.6)}}, nil,
			`sim: round at 12m0s: over capacity: v100: uses 1.1 GPUs of 1`},
		{"arrival", []allocation.Allocation{{"A": share(1, 0.5), "C": share(1, 0.6)}}, nil,
			`sim: round at 18m0s: over capacity: v100: uses 1.1 GPUs of 1`},
		{"left out", []allocation.Allocation{{"A": share(1000, 1.0000015e-3), "B": share(1000, -1e-6)}}, map[string]string{"B": "left out"},
			`sim: round at 0s: over capacity: v100: uses 1.0000015 GPUs of 1`},
	} {
		calls := 0
		pol := policyFunc(func(s *policy.Snapshot) (*policy.Decision, error) {
			d := &policy.Decision{Allocation: tc.decisions[min(calls, len(tc.decisions)-1)], Unscheduled: tc.out}
			if calls++; calls < len(tc.decisions) {
				d.Wake = s.Now + 720*time.Second
			}
			return d, nil
		})
		jobs := []policy.Job{job("A", 0, 5000*time.Second, 1), job("B", 0, 5000*time.Second, 1), job("C", 1000*time.Second, 5000*time.Second, 1)}
		_, err := (&Simulation{Cluster: one, Policy: pol, Recompute: 1e6 * time.Second}).Run(context.Background(), jobs)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

// A job without an ID, which a policy that checks nothing may grant
// shares, gives the mechanism's ledger an account it refuses from the
// second round on, as it always did.
func TestUnnamedJob(t *testing.T) {
	one := allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}}
	pol := policyFunc(func(s *policy.Snapshot) (*policy.Decision, error) {
		return &policy.Decision{Allocation: allocation.Allocation{"": {GPUs: 1, Shares: map[allocation.Accelerator]float64{"v100": 1}}}}, nil
	})
	_, err := (&Simulation{Cluster: one, Policy: pol}).Run(context.Background(), []policy.Job{job("", 0, 5000*time.Second, 1)})
	if want := `sim: round at 6m0s: invalid placement: ledger: account 0: job: empty`; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
}
