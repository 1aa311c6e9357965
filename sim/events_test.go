package sim

import (
	"context"
	"github.com/dlsched/dlsched/internal/simtest"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

// queue runs the active jobs in the order less gives, each on its GPUs where
// they fit (backfilling), and asks to be called again at wake(now) if set.
func queue(less func(a, b policy.Job) int, wake func(time.Duration) time.Duration) func(*policy.Snapshot) *policy.Decision {
	return func(s *policy.Snapshot) *policy.Decision {
		d := &policy.Decision{Policy: "test.stub", Allocation: allocation.Allocation{}, Placement: map[string][]allocation.Assignment{}}
		if wake != nil {
			d.Wake = wake(s.Now)
		}
		jobs := slices.Clone(s.Jobs)
		slices.SortStableFunc(jobs, less)
		g := placement.NewGangs(s.Cluster)
		for _, j := range jobs {
			if as, typ, ok := g.Place(j.GPUs, j.Worker(), func(allocation.Accelerator) bool { return true }); ok {
				d.Allocation[j.ID] = allocation.Grant{GPUs: j.GPUs, Shares: map[allocation.Accelerator]float64{typ: 1}}
				d.Placement[j.ID] = as
			}
		}
		return d
	}
}

func byArrival(a, b policy.Job) int { return int(a.Arrival - b.Arrival) }
func byLatest(a, b policy.Job) int  { return int(b.Arrival - a.Arrival) }

func oneGPU(n int) allocation.Cluster {
	var c allocation.Cluster
	for i := range n {
		c.Servers = append(c.Servers, allocation.Server{ID: string(rune('a' + i)), Accelerator: "v100", GPUs: 1})
	}
	return c
}

func runEvents(t *testing.T, s *Simulation, jobs ...policy.Job) map[string]JobRecord {
	t.Helper()
	res, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]JobRecord{}
	for _, r := range res.Jobs {
		recs[r.ID] = r
	}
	return recs
}

// With events, a job that arrives mid-round is admitted at once and one
// that waits starts the moment the GPU frees: A (0–100 s) then B (arrives
// 30 s, runs 100–150 s). Rounds end at the arrival and at each completion,
// and ActiveJobs weighs the number of jobs by time: A saw 1 job for 30 s and
// 2 for 70 s, B 2 for 70 s and 1 for 50 s.
func TestEventsExactTimes(t *testing.T) {
	s := &Simulation{Cluster: oneGPU(1), Policy: &simtest.Stub{Decide: queue(byArrival, nil)}, Round: time.Hour, Events: true}
	res, err := s.Run(context.Background(), []policy.Job{job("A", 0, 100*time.Second, 1), job("B", 30*time.Second, 50*time.Second, 1)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, r := range res.Jobs {
		got[r.ID] = r.JCT()
	}
	if diff := cmp.Diff(map[string]time.Duration{"A": 100 * time.Second, "B": 120 * time.Second}, got); diff != "" {
		t.Errorf("JCTs (-want +got):\n%s", diff)
	}
	var lengths []time.Duration
	for _, r := range res.Rounds {
		lengths = append(lengths, r.Length)
	}
	if diff := cmp.Diff([]time.Duration{30 * time.Second, 70 * time.Second, 50 * time.Second}, lengths); diff != "" {
		t.Errorf("round lengths (-want +got):\n%s", diff)
	}
	for i, want := range []float64{1.7, 190.0 / 120} {
		if got := res.Jobs[i].ActiveJobs; math.Abs(got-want) > 1e-12 {
			t.Errorf("job %s: ActiveJobs %v, want %v", res.Jobs[i].ID, got, want)
		}
	}

	// Without events the same jobs wait for round boundaries.
	s.Events = false
	s.Round = 60 * time.Second
	s.Policy = &simtest.Stub{Decide: queue(byArrival, nil)}
	recs := runEvents(t, s, job("A", 0, 100*time.Second, 1), job("B", 30*time.Second, 50*time.Second, 1))
	if got := recs["B"].Finish; got != 170*time.Second { // admitted at 60 s, starts at the 120-s boundary
		t.Errorf("round-based: B finishes at %v, want 2m50s", got)
	}
}

// Wake ends a round: a policy that wants to be asked every 45 s is.
func TestEventsWake(t *testing.T) {
	p := &simtest.Stub{Decide: queue(byArrival, func(now time.Duration) time.Duration { return now + 45*time.Second })}
	s := &Simulation{Cluster: oneGPU(1), Policy: p, Round: time.Hour, Events: true}
	runEvents(t, s, job("A", 0, 100*time.Second, 1))
	var calls []time.Duration
	for _, c := range p.Calls {
		calls = append(calls, c.Now)
	}
	if diff := cmp.Diff([]time.Duration{0, 45 * time.Second, 90 * time.Second}, calls); diff != "" {
		t.Errorf("policy calls (-want +got):\n%s", diff)
	}
}

// Restart time is lost once per start even when the start spans short
// rounds: A (100 s) starts at 0 with 20 s to lose; B's arrival at 10 s ends
// the round after 10 s of it, and A loses the other 10 s in the next round,
// finishing at 120 s. A job preempted mid-restart pays afresh: under
// latest-first, C (arrives 10 s, 50 s) preempts A at 10 s, restarts until
// 30 s and ends at 80 s; A restarts again and ends at 200 s.
func TestEventsRestart(t *testing.T) {
	s := &Simulation{Cluster: oneGPU(1), Policy: &simtest.Stub{Decide: queue(byArrival, nil)}, Round: time.Hour, Events: true, Restart: 20 * time.Second}
	recs := runEvents(t, s, job("A", 0, 100*time.Second, 1), job("B", 10*time.Second, 50*time.Second, 1))
	if got := recs["A"].Finish; got != 120*time.Second {
		t.Errorf("FIFO: A finishes at %v, want 2m0s", got)
	}
	if got := recs["B"].Finish; got != 190*time.Second {
		t.Errorf("FIFO: B finishes at %v, want 3m10s", got)
	}

	s.Policy = &simtest.Stub{Decide: queue(byLatest, nil)}
	recs = runEvents(t, s, job("A", 0, 100*time.Second, 1), job("C", 10*time.Second, 50*time.Second, 1))
	if got := recs["C"].Finish; got != 80*time.Second {
		t.Errorf("latest-first: C finishes at %v, want 1m20s", got)
	}
	if got := recs["A"].Finish; got != 200*time.Second {
		t.Errorf("latest-first: A finishes at %v, want 3m20s", got)
	}
	if recs["A"].Preemptions != 1 || recs["C"].Preemptions != 0 {
		t.Errorf("preemptions A %d, C %d; want 1, 0", recs["A"].Preemptions, recs["C"].Preemptions)
	}
}

// A job moved to other GPUs counts a migration and loses Reallocate.
func TestEventsMigration(t *testing.T) {
	where := func(now time.Duration) []allocation.Assignment {
		if now < 50*time.Second {
			return []allocation.Assignment{{Server: "a", GPUs: 1}}
		}
		return []allocation.Assignment{{Server: "b", GPUs: 1}}
	}
	s := &Simulation{Cluster: oneGPU(2), Policy: &simtest.Stub{Decide: simtest.PlaceAll(1, "v100", 50*time.Second, where)},
		Round: time.Hour, Events: true, Reallocate: 15 * time.Second}
	recs := runEvents(t, s, job("A", 0, 100*time.Second, 1))
	if r := recs["A"]; r.Finish != 115*time.Second || r.Migrations != 1 || r.Preemptions != 0 {
		t.Errorf("A: finish %v, %d migrations, %d preemptions; want 1m55s, 1, 0", r.Finish, r.Migrations, r.Preemptions)
	}
}

// Two jobs placed on the same GPU with paired grants run as a co-located
// pair at their Colocated speeds; a pair that cannot share (speed 0) makes
// no progress but is not an error.
func TestEventsPairs(t *testing.T) {
	pair := func(speed float64, until time.Duration) func(*policy.Snapshot) *policy.Decision {
		return func(s *policy.Snapshot) *policy.Decision {
			if s.Now >= until || len(s.Jobs) < 2 {
				return queue(byArrival, nil)(s)
			}
			on := []allocation.Assignment{{Server: "a", GPUs: 1}}
			return &policy.Decision{Policy: "test.stub", Wake: until,
				Allocation: allocation.Allocation{
					"A": {GPUs: 1, Pairs: map[string]map[allocation.Accelerator]float64{"B": {"v100": 1}}},
					"B": {GPUs: 1, Pairs: map[string]map[allocation.Accelerator]float64{"A": {"v100": 1}}},
				},
				Placement: map[string][]allocation.Assignment{"A": on, "B": on}}
		}
	}
	jobs := func(speed float64) []policy.Job {
		a, b := job("A", 0, 100*time.Second, 1), job("B", 0, 100*time.Second, 1)
		a.Colocated = map[string]map[allocation.Accelerator]float64{"B": {"v100": speed}}
		b.Colocated = map[string]map[allocation.Accelerator]float64{"A": {"v100": speed}}
		return []policy.Job{a, b}
	}
	s := &Simulation{Cluster: oneGPU(1), Policy: &simtest.Stub{Decide: pair(0.5, time.Hour)}, Round: time.Hour, Events: true}
	recs := runEvents(t, s, jobs(0.5)...)
	if recs["A"].Finish != 200*time.Second || recs["B"].Finish != 200*time.Second {
		t.Errorf("pair at half speed: finishes %v, %v; want 3m20s each", recs["A"].Finish, recs["B"].Finish)
	}
	if recs["A"].GPUSeconds != 200 {
		t.Errorf("pair: A charged %v GPU-seconds, want 200", recs["A"].GPUSeconds)
	}
	s.Policy = &simtest.Stub{Decide: pair(0, 50*time.Second)}
	recs = runEvents(t, s, jobs(0)...)
	if recs["A"].Finish != 150*time.Second || recs["B"].Finish != 250*time.Second {
		t.Errorf("pair that cannot share for 50 s: finishes %v, %v; want 2m30s, 4m10s", recs["A"].Finish, recs["B"].Finish)
	}
}
