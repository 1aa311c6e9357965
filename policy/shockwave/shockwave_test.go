package shockwave

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/market"
	"github.com/dlsched/dlsched/policy"
)

func cluster(servers, gpus int) allocation.Cluster {
	var c allocation.Cluster
	for i := range servers {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("s%d", i), Accelerator: "v100", GPUs: gpus})
	}
	return c
}

// adaptive returns a job of width w with epochs epochs of d seconds at bs 32
// and d/2 at bs 64, done epochs done at bs 32.
func adaptive(id string, w, epochs, done int, d float64) policy.Job {
	return policy.Job{
		ID: id, GPUs: w, Throughput: map[allocation.Accelerator]float64{"v100": 1},
		Adaptive: &policy.Adaptive{Regimes: []int{32, 64}, EpochSeconds: []float64{d, d / 2}, Epochs: epochs, History: []int{done, 0}, BatchSize: 32},
	}
}

func TestSmooth(t *testing.T) {
	// Estimates 1000 (for 100 s) and 1200 (for 200 s): mean 1133.3; with
	// momentum 0.9, 0.9·1133.3 + 0.1·1200 = 1140.
	es := []Estimate{{At: 0, Finish: 1000}, {At: 100, Finish: 1200}}
	if got := smooth(es, 300, 0.9); math.Abs(got-1140) > 1e-9 {
		t.Errorf("smooth = %v, want 1140", got)
	}
	// No time elapsed: the latest estimate.
	if got := smooth([]Estimate{{At: 300, Finish: 900}}, 300, 0.9); got != 900 {
		t.Errorf("smooth = %v, want 900", got)
	}
	if got := smooth(nil, 0, 0.9); !math.IsInf(got, 1) {
		t.Errorf("smooth(nil) = %v, want +Inf", got)
	}
}

// planCounts returns the rounds each job holds in the plan, and checks each
// round's capacity.
func planCounts(t *testing.T, st State, width map[string]int, gpus int) map[string]int {
	t.Helper()
	n := make(map[string]int)
	for r, run := range st.Plan {
		used := 0
		for _, id := range run {
			used += width[id]
			n[id]++
		}
		if used > gpus {
			t.Fatalf("planned round %d holds %d GPUs of %d", r, used, gpus)
		}
	}
	return n
}

// TestFairPathConstraints checks, on random snapshots, that a plan made on
// the fair path meets every finish-time-fairness constraint and that every
// planned round fits the cluster.
func TestFairPathConstraints(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	fair, relaxed := 0, 0
	for trial := range 200 {
		G := 2 + r.IntN(8)
		jobs := make([]policy.Job, G+r.IntN(2*G))
		width := make(map[string]int)
		for i := range jobs {
			w := 1
			if r.IntN(3) == 0 {
				w = 1 + r.IntN(2)
			}
			jobs[i] = adaptive(fmt.Sprintf("j%02d", i), w, 20+r.IntN(200), r.IntN(10), 60+r.Float64()*240)
			jobs[i].Arrival = time.Duration(r.IntN(600)) * time.Second
			width[jobs[i].ID] = w
		}
		now := 600 * time.Second
		s := &policy.Snapshot{Now: now, Cluster: cluster(1, G), Jobs: jobs}
		p := &Shockwave{}
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		counts := planCounts(t, p.State, width, G)
		if p.State.Relaxed {
			relaxed++
			if len(d.Warnings) == 0 {
				t.Fatalf("trial %d: relaxed plan without a warning", trial)
			}
			continue
		}
		fair++
		fj, unknown := forecast(s, &policy.Decision{})
		if len(unknown) != 0 {
			t.Fatalf("trial %d: no forecast for %d jobs", trial, len(unknown))
		}
		share := math.Min(1, float64(G)/float64(len(jobs)))
		delta, T := DefaultRound.Seconds(), float64(DefaultRounds)
		for _, jb := range fj {
			f := smooth(p.State.Fair[jb.j.ID], now.Seconds(), DefaultMomentum)
			b := market.Buyer{Progress: jb.done / jb.epochs, Gain: delta / (jb.mean * jb.epochs), Remaining: jb.remaining}
			left := b.Left(counts[jb.j.ID], delta)
			if lhs := now.Seconds() + T*delta + left/share; lhs > DefaultRhoMax*f+1e-6 {
				t.Fatalf("trial %d: job %s: finish %v after its fair finish %v (rounds %d)", trial, jb.j.ID, lhs, f, counts[jb.j.ID])
			}
		}
	}
	t.Logf("fair path %d, relaxed path %d", fair, relaxed)
	if fair == 0 || relaxed == 0 {
		t.Fatalf("fair path %d, relaxed path %d: both paths must be exercised", fair, relaxed)
	}
}

// TestRelaxedPath: a job whose fair finish time is long past makes the
// constraints infeasible; it gets the highest priority and runs first.
func TestRelaxedPath(t *testing.T) {
	late := adaptive("late", 1, 100, 10, 100)
	late.Arrival = 0
	jobs := []policy.Job{late, adaptive("a", 1, 100, 0, 100), adaptive("b", 1, 100, 0, 100)}
	jobs[1].Arrival, jobs[2].Arrival = 5*time.Hour, 5*time.Hour
	s := &policy.Snapshot{Now: 5 * time.Hour, Cluster: cluster(1, 1), Jobs: jobs}
	p := &Shockwave{}
	// The first estimate makes "late" look fair: F = 0 + (work + R̂)/share.
	// A second estimate, made when the set changes much later, keeps the
	// average in the past.
	p.State.Fair = map[string][]Estimate{"late": {{At: 0, Finish: 3000}}}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !p.State.Relaxed || len(d.Warnings) == 0 {
		t.Fatalf("relaxed %v, warnings %v; want the λ-priority path", p.State.Relaxed, d.Warnings)
	}
	if !slices.Equal(p.State.Plan[0], []string{"late"}) {
		t.Fatalf("round 0 runs %v, want the unfair job", p.State.Plan[0])
	}
	if _, ok := d.Allocation["late"]; !ok {
		t.Fatalf("decision %v does not run the unfair job", d.Allocation)
	}
}

func TestReplanCadence(t *testing.T) {
	jobs := []policy.Job{adaptive("a", 1, 300, 0, 100), adaptive("b", 1, 300, 0, 100), adaptive("c", 1, 300, 0, 100)}
	p := &Shockwave{}
	call := func(now time.Duration, jobs []policy.Job) *policy.Decision {
		t.Helper()
		d, err := p.Allocate(context.Background(), &policy.Snapshot{Now: now, Cluster: cluster(1, 2), Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if d.Wake != now+DefaultRound {
			t.Fatalf("Wake %v, want a round later", d.Wake)
		}
		return d
	}
	call(0, jobs)
	plan := p.State.Plan
	for k := 1; k < DefaultReplan; k++ {
		d := call(time.Duration(k)*DefaultRound, jobs)
		if p.State.Start != 0 {
			t.Fatalf("round %d: replanned without cause", k)
		}
		for _, id := range plan[k] {
			if _, ok := d.Allocation[id]; !ok {
				t.Fatalf("round %d: planned %v, decided %v", k, plan[k], d.Allocation)
			}
		}
	}
	call(DefaultReplan*DefaultRound, jobs)
	if p.State.Start != (DefaultReplan * DefaultRound).Seconds() {
		t.Fatalf("no replan after %d rounds (start %v)", DefaultReplan, p.State.Start)
	}
	arrive := append(slices.Clone(jobs), adaptive("d", 1, 300, 0, 100))
	call((DefaultReplan+1)*DefaultRound, arrive)
	if p.State.Start != ((DefaultReplan + 1) * DefaultRound).Seconds() {
		t.Fatal("no replan on arrival")
	}
	if len(p.State.Fair["d"]) != 1 || len(p.State.Fair["a"]) != 2 {
		t.Fatalf("fair-finish history %v: want a new estimate for every job on arrival", p.State.Fair)
	}
	call((DefaultReplan+2)*DefaultRound, arrive[1:])
	if _, ok := p.State.Fair["a"]; ok || p.State.Start != ((DefaultReplan+2)*DefaultRound).Seconds() {
		t.Fatal("no replan on completion, or the finished job's history kept")
	}
}

// TestDecideBackfill: the planned job runs, then idle GPUs go to the other
// jobs with the longest forecast that fit; a running job keeps its GPUs.
func TestDecideBackfill(t *testing.T) {
	s := &policy.Snapshot{Cluster: cluster(2, 2)}
	mk := func(id string, w int, remaining float64) *job {
		j := &policy.Job{ID: id, GPUs: w}
		return &job{j: j, width: w, remaining: remaining}
	}
	a, b, c, e := mk("a", 2, 10), mk("b", 1, 100), mk("c", 1, 500), mk("e", 2, 1000)
	a.j.Placement = []allocation.Assignment{{Server: "s1", GPUs: 2}}
	p := &Shockwave{}
	d := &policy.Decision{Allocation: allocation.Allocation{}}
	p.decide(s, []*job{a, b, c, e}, []string{"a"}, nil, d)
	want := map[string][]allocation.Assignment{
		"a": {{Server: "s1", GPUs: 2}},
		"e": {{Server: "s0", GPUs: 2}},
	}
	if diff := cmp.Diff(want, d.Placement); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
}

func TestDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var jobs []policy.Job
	for i := range 40 {
		j := adaptive(fmt.Sprintf("j%02d", i), []int{1, 1, 2, 4}[r.IntN(4)], 10+r.IntN(100), r.IntN(5), 30+200*r.Float64())
		j.Arrival = time.Duration(r.IntN(3600)) * time.Second
		jobs = append(jobs, j)
	}
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(4, 4), Jobs: jobs}
	var first *policy.Decision
	var state State
	for k := range 3 {
		p := &Shockwave{}
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			first, state = d, p.State
			continue
		}
		if diff := cmp.Diff(first, d); diff != "" {
			t.Fatalf("decisions differ:\n%s", diff)
		}
		if diff := cmp.Diff(state, p.State); diff != "" {
			t.Fatalf("states differ:\n%s", diff)
		}
	}
	used := 0
	for _, g := range first.Allocation {
		used += g.GPUs
	}
	if used > 16 || used < 13 {
		t.Fatalf("%d of 16 GPUs used; want a work-conserving round", used)
	}
}

func TestStaticJobs(t *testing.T) {
	// Jobs without adaptive facts plan in steps at their best throughput.
	jobs := []policy.Job{
		{ID: "a", GPUs: 1, StepsTotal: 1000, StepsDone: 500, Throughput: map[allocation.Accelerator]float64{"v100": 1}},
		{ID: "b", GPUs: 1, StepsTotal: 5000, Throughput: map[allocation.Accelerator]float64{"v100": 2}},
	}
	p := &Shockwave{}
	d, err := p.Allocate(context.Background(), &policy.Snapshot{Cluster: cluster(1, 1), Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Allocation) != 1 {
		t.Fatalf("allocation %v: one GPU, one job", d.Allocation)
	}
}

func TestErrors(t *testing.T) {
	// A job without length is not planned but fills an idle GPU.
	s := &policy.Snapshot{Cluster: cluster(1, 1), Jobs: []policy.Job{{ID: "x", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}}}}
	if d, err := (&Shockwave{}).Allocate(context.Background(), s); err != nil || len(d.Placement["x"]) != 1 || len(d.Unscheduled) != 0 {
		t.Errorf("a job without length: %+v, %v; want it run on the idle GPU", d, err)
	}
	// An elastic job without a GPU count is left out.
	s.Jobs = append(s.Jobs, policy.Job{ID: "y", Elastic: &policy.Elastic{BatchSize: 8}, Throughput: map[allocation.Accelerator]float64{"v100": 1}})
	if d, err := (&Shockwave{}).Allocate(context.Background(), s); err != nil || !strings.HasPrefix(d.Unscheduled["y"], "gpus: 0") {
		t.Errorf("an elastic job: %+v, %v; want it left out for gpus", d, err)
	}
	if _, err := policy.Strict(&Shockwave{}).Allocate(context.Background(), s); !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "y": gpus`) {
		t.Errorf("Strict, an elastic job: err = %v", err)
	}
	s.Jobs = s.Jobs[:1]
	for _, cfg := range []string{`{"rounds": -1}`, `{"rounds": 100000000}`, `{"momentum": 2}`, `{"breakpoints": [0, 0.5]}`, `{"lamda": 3}`} {
		if _, err := policy.New("shockwave", []byte(cfg)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("config %s: err = %v", cfg, err)
		}
	}
	if _, err := policy.New("shockwave", []byte(`{"rounds": 100000000}`)); err == nil || !strings.Contains(err.Error(), "MaxRounds (10000)") {
		t.Errorf("a window of 10⁸ rounds: %v, want an error naming MaxRounds", err)
	}
	if _, err := policy.New("shockwave", []byte(`{"rounds": 10000}`)); err != nil {
		t.Errorf("a window of MaxRounds: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Jobs[0].StepsTotal = 10
	if _, err := (&Shockwave{}).Allocate(ctx, s); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}
