package baseline_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/baseline"
	"github.com/google/go-cmp/cmp"
)

var names = []string{"baseline.fifo", "baseline.yarn-cs", "baseline.srtf", "baseline.srsf"}

func policies() []policy.Policy {
	return []policy.Policy{&baseline.FIFO{}, &baseline.YARNCS{}, &baseline.SRTF{}, &baseline.SRSF{}}
}

func servers(sizes ...int) allocation.Cluster {
	var c allocation.Cluster
	for i, n := range sizes {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("s%d", i), Accelerator: "v100", GPUs: n})
	}
	return c
}

// job returns a job of gpus GPUs arriving at arrival seconds with seconds
// of work left at 1 step/s, running on place if given.
func job(id string, gpus int, arrival, seconds float64, place ...allocation.Assignment) policy.Job {
	return policy.Job{ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)),
		Throughput: map[allocation.Accelerator]float64{"v100": 1}, StepsTotal: seconds, Placement: place}
}

func on(server string, gpus int) allocation.Assignment {
	return allocation.Assignment{Server: server, GPUs: gpus}
}

func allocate(t *testing.T, p policy.Policy, c allocation.Cluster, jobs ...policy.Job) *policy.Decision {
	t.Helper()
	s := &policy.Snapshot{Now: time.Hour, Cluster: c, Jobs: jobs}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatalf("%s: %v", p.Name(), err)
	}
	if err := d.Allocation.Validate(c); err != nil {
		t.Fatalf("%s: %v", p.Name(), err)
	}
	return d
}

func running(d *policy.Decision) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for id := range d.Placement {
			if !yield(id) {
				return
			}
		}
	})
}

// A 4-GPU head that does not fit blocks a later 1-GPU job under FIFO;
// SRTF, which backfills, runs the 1-GPU job on the same snapshot.
func TestFIFOHeadOfLine(t *testing.T) {
	c := servers(4)
	jobs := []policy.Job{job("a", 2, 0, 100, on("s0", 2)), job("b", 4, 1, 100), job("c", 1, 2, 100)}
	d := allocate(t, &baseline.FIFO{}, c, jobs...)
	if got, want := running(d), []string{"a"}; !slices.Equal(got, want) {
		t.Errorf("fifo runs %v, want %v", got, want)
	}
	if diff := cmp.Diff([]allocation.Assignment{on("s0", 2)}, d.Placement["a"]); diff != "" {
		t.Errorf("a moved (-want +got):\n%s", diff)
	}
	if got, want := running(allocate(t, &baseline.SRTF{}, c, jobs...)), []string{"a", "c"}; !slices.Equal(got, want) {
		t.Errorf("srtf runs %v, want %v", got, want)
	}
}

// With one GPU busy on each of two 4-GPU servers, FIFO spreads a 4-GPU job
// over both; YARN-CS keeps it waiting for a whole server, blocking the
// 1-GPU job behind it.
func TestYARNCSConsolidates(t *testing.T) {
	c := servers(4, 4)
	jobs := []policy.Job{job("a", 1, 0, 100, on("s0", 1)), job("b", 1, 1, 100, on("s1", 1)), job("c", 4, 2, 100), job("d", 1, 3, 100)}
	fifo := allocate(t, &baseline.FIFO{}, c, jobs...)
	if got, want := running(fifo), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("fifo runs %v, want %v", got, want)
	}
	if n := len(fifo.Placement["c"]); n != 2 {
		t.Errorf("fifo places c on %d servers, want 2: %v", n, fifo.Placement["c"])
	}
	yarn := allocate(t, &baseline.YARNCS{}, c, jobs...)
	if got, want := running(yarn), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("yarn-cs runs %v, want %v", got, want)
	}
	// Once a finishes, c gets s0 whole and d fits beside b.
	yarn = allocate(t, &baseline.YARNCS{}, c, jobs[1:]...)
	if got, want := running(yarn), []string{"b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("yarn-cs after a runs %v, want %v", got, want)
	}
	if diff := cmp.Diff([]allocation.Assignment{on("s0", 4)}, yarn.Placement["c"]); diff != "" {
		t.Errorf("c (-want +got):\n%s", diff)
	}
	// Two whole-server jobs on two empty servers both run.
	yarn = allocate(t, &baseline.YARNCS{}, c, job("x", 4, 0, 100), job("y", 4, 1, 100))
	if got, want := running(yarn), []string{"x", "y"}; !slices.Equal(got, want) {
		t.Errorf("yarn-cs runs %v of two 4-GPU jobs on 2×4, want %v (placement %v)", got, want, yarn.Placement)
	}
}

// A short arrival preempts a long running job; a job that does not fit is
// passed over by a later one that does (backfill).
func TestSRTFPreemptsAndBackfills(t *testing.T) {
	c := servers(4)
	long := job("long", 2, 0, 10000, on("s0", 2))
	long.StepsDone = 1000 // 9000 s left
	jobs := []policy.Job{long, job("short", 3, 10, 100), job("mid", 4, 5, 200), job("tiny", 1, 20, 5000)}
	d := allocate(t, &baseline.SRTF{}, c, jobs...)
	if got, want := running(d), []string{"short", "tiny"}; !slices.Equal(got, want) {
		t.Errorf("srtf runs %v, want %v", got, want)
	}
	// Without the newcomers, long keeps its GPUs.
	d = allocate(t, &baseline.SRTF{}, c, long, job("tiny", 1, 20, 5000))
	if got, want := running(d), []string{"long", "tiny"}; !slices.Equal(got, want) {
		t.Errorf("srtf runs %v, want %v", got, want)
	}
	if diff := cmp.Diff([]allocation.Assignment{on("s0", 2)}, d.Placement["long"]); diff != "" {
		t.Errorf("long moved (-want +got):\n%s", diff)
	}
}

// SRTF ranks by time, SRSF by time × GPUs: a 1-GPU job of 100 s (service
// 100) against a 4-GPU job of 40 s (service 160) on 4 GPUs.
func TestSRSFvsSRTF(t *testing.T) {
	c := servers(4)
	jobs := []policy.Job{job("narrow", 1, 0, 100), job("wide", 4, 0, 40)}
	if got, want := running(allocate(t, &baseline.SRTF{}, c, jobs...)), []string{"wide"}; !slices.Equal(got, want) {
		t.Errorf("srtf runs %v, want %v", got, want)
	}
	if got, want := running(allocate(t, &baseline.SRSF{}, c, jobs...)), []string{"narrow"}; !slices.Equal(got, want) {
		t.Errorf("srsf runs %v, want %v", got, want)
	}
	// The best throughput counts: at 4 steps/s narrow has 25 s left.
	jobs[0].Throughput = map[allocation.Accelerator]float64{"v100": 4}
	if got, want := running(allocate(t, &baseline.SRTF{}, c, jobs...)), []string{"narrow"}; !slices.Equal(got, want) {
		t.Errorf("srtf with a fast narrow job runs %v, want %v", got, want)
	}
}

func randomSnapshot(r *rand.Rand) *policy.Snapshot {
	types := []allocation.Accelerator{"k80", "v100"}
	var c allocation.Cluster
	for i := range 1 + r.IntN(5) {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("s%d", i), Accelerator: types[r.IntN(2)], GPUs: []int{1, 2, 4, 8}[r.IntN(4)]})
	}
	s := &policy.Snapshot{Now: time.Hour, Cluster: c}
	for i := range r.IntN(12) {
		j := policy.Job{ID: fmt.Sprintf("j%02d", i), GPUs: []int{1, 1, 2, 3, 4, 8}[r.IntN(6)],
			Arrival: time.Duration(r.IntN(4)) * time.Minute, Throughput: map[allocation.Accelerator]float64{},
			StepsTotal: float64(1 + r.IntN(1000))}
		j.StepsDone = float64(r.IntN(int(j.StepsTotal)))
		for _, t := range c.Types() {
			if r.IntN(3) > 0 {
				j.Throughput[t] = float64(1 + r.IntN(3))
			}
		}
		ok := false
		for t, x := range j.Throughput {
			ok = ok || (x > 0 && c.GPUs(t) >= j.GPUs)
		}
		if ok {
			s.Jobs = append(s.Jobs, j)
		}
	}
	return s
}

// check verifies a decision against its snapshot: a valid allocation, each
// running job placed on its grant's GPUs of one usable type, no server over
// capacity, and the policy's admission rule.
func check(t *testing.T, p policy.Policy, s *policy.Snapshot, d *policy.Decision) {
	t.Helper()
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatal(err)
	}
	if d.Policy != p.Name() || d.Objective != 0 || d.Wake != 0 {
		t.Errorf("policy %q objective %v wake %v", d.Policy, d.Objective, d.Wake)
	}
	srv := map[string]allocation.Server{}
	for _, x := range s.Cluster.Servers {
		srv[x.ID] = x
	}
	jobs := map[string]policy.Job{}
	for _, j := range s.Jobs {
		jobs[j.ID] = j
	}
	used := map[string]int{}
	free := map[allocation.Accelerator]int{}
	for _, t := range s.Cluster.Types() {
		free[t] = s.Cluster.GPUs(t)
	}
	if len(d.Placement) != len(d.Allocation) {
		t.Fatalf("%d placements for %d grants", len(d.Placement), len(d.Allocation))
	}
	for id, g := range d.Allocation {
		j := jobs[id]
		if len(g.Shares) != 1 || g.GPUs != j.GPUs {
			t.Fatalf("%s: grant %+v for a %d-GPU job", id, g, j.GPUs)
		}
		n := 0
		for _, a := range d.Placement[id] {
			typ := srv[a.Server].Accelerator
			if g.Shares[typ] != 1 || j.Throughput[typ] <= 0 {
				t.Fatalf("%s: placed on %s (%s), grant %+v", id, a.Server, typ, g)
			}
			n += a.GPUs
			used[a.Server] += a.GPUs
			free[typ] -= a.GPUs
		}
		if n != g.GPUs {
			t.Fatalf("%s: placement %v holds %d GPUs, grant %d", id, d.Placement[id], n, g.GPUs)
		}
	}
	if _, ok := p.(*baseline.YARNCS); ok {
		// Consolidated: on no more servers than the fewest of the type
		// that could ever hold the job.
		for id, place := range d.Placement {
			typ := srv[place[0].Server].Accelerator
			var sizes []int
			for _, x := range s.Cluster.Servers {
				if x.Accelerator == typ {
					sizes = append(sizes, x.GPUs)
				}
			}
			slices.Sort(sizes)
			fewest, k := 0, jobs[id].GPUs
			for i := len(sizes) - 1; k > 0; i-- {
				k -= sizes[i]
				fewest++
			}
			if len(place) > fewest && !slices.Equal(place, jobs[id].Placement) {
				t.Fatalf("yarn-cs: %s on %d servers, could be on %d: %v", id, len(place), fewest, place)
			}
		}
	}
	for id, n := range used {
		if n > srv[id].GPUs {
			t.Fatalf("server %s: %d GPUs used of %d", id, n, srv[id].GPUs)
		}
	}
	fits := func(j policy.Job) bool {
		for typ, x := range j.Throughput {
			if x > 0 && free[typ] >= j.GPUs {
				return true
			}
		}
		return false
	}
	order := slices.Clone(s.Jobs)
	slices.SortFunc(order, func(a, b policy.Job) int {
		if a.Arrival != b.Arrival {
			return int(a.Arrival - b.Arrival)
		}
		return strings.Compare(a.ID, b.ID)
	})
	switch p.(type) {
	case *baseline.FIFO, *baseline.YARNCS:
		// Those that run are a prefix of the arrival order; FIFO's first
		// waiting job does not fit in the free GPUs.
		blocked := false
		for _, j := range order {
			_, ok := d.Allocation[j.ID]
			if ok && blocked {
				t.Fatalf("%s runs behind a blocked job: %v", j.ID, running(d))
			}
			if !ok && !blocked {
				blocked = true
				if _, fifo := p.(*baseline.FIFO); fifo && fits(j) {
					t.Fatalf("fifo: head %s waits though it fits", j.ID)
				}
			}
		}
	default:
		// Backfill: no waiting job fits in the free GPUs.
		for _, j := range s.Jobs {
			if _, ok := d.Allocation[j.ID]; !ok && fits(j) {
				t.Fatalf("%s waits though it fits", j.ID)
			}
		}
	}
}

// Over random snapshots, and over rounds that feed each decision's
// placement back as the jobs' current placement: valid, within capacity,
// faithful to each policy's rule, and independent of job order.
func TestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		s := randomSnapshot(r)
		for _, p := range policies() {
			snap := &policy.Snapshot{Now: s.Now, Cluster: s.Cluster, Jobs: slices.Clone(s.Jobs)}
			for round := range 3 {
				d, err := p.Allocate(context.Background(), snap)
				if err != nil {
					t.Fatalf("case %d %s round %d: %v", i, p.Name(), round, err)
				}
				check(t, p, snap, d)
				shuffled := &policy.Snapshot{Now: snap.Now, Cluster: snap.Cluster, Jobs: slices.Clone(snap.Jobs)}
				r.Shuffle(len(shuffled.Jobs), func(a, b int) { shuffled.Jobs[a], shuffled.Jobs[b] = shuffled.Jobs[b], shuffled.Jobs[a] })
				d2, err := p.Allocate(context.Background(), shuffled)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(d, d2); diff != "" {
					t.Fatalf("case %d %s: job order changes the decision (-first +shuffled):\n%s", i, p.Name(), diff)
				}
				// Next round: the placements stand, some work is done,
				// and the first job finishes.
				var next []policy.Job
				for k, j := range snap.Jobs {
					j.Placement = d.Placement[j.ID]
					if k > 0 || len(snap.Jobs) == 1 {
						if j.Placement != nil {
							j.StepsDone = min(j.StepsDone+float64(r.IntN(200)), j.StepsTotal)
						}
						next = append(next, j)
					}
				}
				snap = &policy.Snapshot{Now: snap.Now, Cluster: snap.Cluster, Jobs: next}
			}
		}
	}
}

// Running jobs keep their GPUs under FIFO as rounds pass (non-preemptive).
func TestFIFOKeeps(t *testing.T) {
	c := servers(4, 4)
	jobs := []policy.Job{job("a", 2, 0, 100, on("s1", 2)), job("b", 3, 1, 100, on("s0", 1), on("s1", 2)), job("c", 3, 2, 100)}
	d := allocate(t, &baseline.FIFO{}, c, jobs...)
	want := map[string][]allocation.Assignment{"a": {on("s1", 2)}, "b": {on("s0", 1), on("s1", 2)}, "c": {on("s0", 3)}}
	if diff := cmp.Diff(want, d.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
}

func TestInvalid(t *testing.T) {
	c := servers(4)
	unknown := job("u", 1, 0, 0)
	// A job of unknown length ranks after the others under SRTF and SRSF,
	// whatever its arrival: with 4 GPUs, the 4-GPU job runs.
	for _, name := range []string{"baseline.srtf", "baseline.srsf"} {
		p, _ := policy.New(name, nil)
		d := allocate(t, p, c, job("a", 4, 1, 10), unknown)
		if got := running(d); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"a"}) {
			t.Errorf("%s with an unknown length: runs %v, left out %v; want a", name, got, d.Unscheduled)
		}
		if got := running(allocate(t, p, servers(4, 1), job("a", 4, 1, 10), unknown)); !slices.Equal(got, []string{"a", "u"}) {
			t.Errorf("%s with an unknown length and a free GPU: runs %v; want both", name, got)
		}
	}
	for _, p := range []policy.Policy{&baseline.FIFO{}, &baseline.YARNCS{}} {
		if got := running(allocate(t, p, c, unknown)); !slices.Equal(got, []string{"u"}) {
			t.Errorf("%s does not need the length, yet runs %v", p.Name(), got)
		}
	}
	elastic := job("e", 0, 0, 10)
	elastic.Elastic = &policy.Elastic{BatchSize: 32}
	bad := job("bad", 1, 0, 10)
	bad.Throughput = map[allocation.Accelerator]float64{"a100": 1}
	// Bad jobs are left out with their reason; Strict fails the round.
	for _, p := range policies() {
		for _, tc := range []struct {
			j    policy.Job
			want string
		}{{elastic, "gpus"}, {bad, "throughput"}} {
			s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{job("a", 1, 0, 10), tc.j}}
			d, err := p.Allocate(context.Background(), s)
			if err != nil || !strings.HasPrefix(d.Unscheduled[tc.j.ID], tc.want) || !slices.Equal(running(d), []string{"a"}) {
				t.Errorf("%s with job %s: %+v, %v; want it left out for %s, a running", p.Name(), tc.j.ID, d, err, tc.want)
			}
			_, err = policy.Strict(p).Allocate(context.Background(), s)
			if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), fmt.Sprintf("job %q: %s", tc.j.ID, tc.want)) {
				t.Errorf("Strict %s with job %s: %v", p.Name(), tc.j.ID, err)
			}
		}
		if _, err := p.Allocate(context.Background(), nil); !errors.Is(err, policy.ErrInvalidSnapshot) {
			t.Errorf("%s with a nil snapshot: %v", p.Name(), err)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range policies() {
		_, err := p.Allocate(ctx, &policy.Snapshot{Cluster: servers(4), Jobs: []policy.Job{job("a", 1, 0, 10)}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", p.Name(), err)
		}
	}
}

func TestRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, i := range policy.Registered() {
		registered[i.Name] = i.Description != ""
	}
	for _, name := range names {
		if !registered[name] {
			t.Errorf("%s not registered with a description", name)
		}
		for _, config := range []string{"", "{}"} {
			p, err := policy.New(name, []byte(config))
			if err != nil || p.Name() != name {
				t.Errorf("New(%q, %q) = %v, %v", name, config, p, err)
			}
		}
		if _, err := policy.New(name, []byte(`{"knob": 1}`)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("%s with an unknown knob: %v", name, err)
		}
	}
	for i, p := range policies() {
		if p.Name() != names[i] {
			t.Errorf("%T.Name() = %q, want %q", p, p.Name(), names[i])
		}
	}
}
