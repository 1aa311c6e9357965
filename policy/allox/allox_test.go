package allox_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/allox"
)

type thr = map[allocation.Accelerator]float64

func server(id string, k allocation.Accelerator, gpus int) allocation.Server {
	return allocation.Server{ID: id, Accelerator: k, GPUs: gpus}
}

func cluster(ss ...allocation.Server) allocation.Cluster { return allocation.Cluster{Servers: ss} }

// newJob returns a job of gpus GPUs with steps to go that arrived at
// arrival seconds.
func newJob(id string, gpus int, arrival, steps float64, t thr) policy.Job {
	return policy.Job{ID: id, GPUs: gpus, Arrival: sec(arrival), StepsTotal: steps, Throughput: t}
}

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func alpha(a float64) *allox.AlloX { return &allox.AlloX{Alpha: &a} }

func decide(t *testing.T, p *allox.AlloX, s *policy.Snapshot) *policy.Decision {
	t.Helper()
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	checkDecision(t, s, d)
	return d
}

// started returns the running jobs of d with their type, sorted by ID.
func started(s *policy.Snapshot, d *policy.Decision) []string {
	var out []string
	for _, id := range d.Allocation.IDs() {
		for k, x := range d.Allocation[id].Shares {
			if x > 0 {
				out = append(out, fmt.Sprintf("%s@%s", id, k))
			}
		}
	}
	return out
}

// checkDecision checks what every decision must satisfy: a valid
// allocation; every granted job placed on exactly its GPUs, all of one type
// it can use, and no server over capacity; running jobs kept where they
// were, when they could be.
func checkDecision(t testing.TB, s *policy.Snapshot, d *policy.Decision) {
	t.Helper()
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatalf("invalid allocation: %v", err)
	}
	if d.Wake != 0 {
		t.Errorf("Wake = %v; AlloX decides at arrivals and completions only", d.Wake)
	}
	byID := make(map[string]*policy.Job)
	for i := range s.Jobs {
		byID[s.Jobs[i].ID] = &s.Jobs[i]
	}
	used := make(map[string]int)
	for _, id := range d.Allocation.IDs() {
		j, g := byID[id], d.Allocation[id]
		if j == nil {
			t.Fatalf("grant for unknown job %q", id)
		}
		if g.GPUs != j.GPUs || len(g.Shares) != 1 {
			t.Fatalf("job %q: grant %+v; want %d GPUs, share 1 on one type", id, g, j.GPUs)
		}
		var k allocation.Accelerator
		for k = range g.Shares {
		}
		if g.Shares[k] != 1 || j.Throughput[k] <= 0 {
			t.Fatalf("job %q: share %v on %s, where its throughput is %v", id, g.Shares[k], k, j.Throughput[k])
		}
		n := 0
		for _, a := range d.Placement[id] {
			srv, ok := s.Cluster.Server(a.Server)
			if !ok || srv.Accelerator != k || a.GPUs < 1 {
				t.Fatalf("job %q: placement %v is not on %s", id, d.Placement[id], k)
			}
			used[a.Server] += a.GPUs
			n += a.GPUs
		}
		if n != j.GPUs {
			t.Fatalf("job %q: placed on %d GPUs, wants %d", id, n, j.GPUs)
		}
	}
	if len(d.Placement) != len(d.Allocation) {
		t.Fatalf("%d placements for %d grants", len(d.Placement), len(d.Allocation))
	}
	for _, srv := range s.Cluster.Servers {
		if used[srv.ID] > srv.GPUs {
			t.Fatalf("server %q: %d GPUs used of %d", srv.ID, used[srv.ID], srv.GPUs)
		}
	}
	for _, j := range s.Jobs {
		if len(j.Placement) > 0 && d.Allocation[j.ID].GPUs > 0 && !slices.Equal(d.Placement[j.ID], j.Placement) {
			t.Fatalf("running job %q moved from %v to %v", j.ID, j.Placement, d.Placement[j.ID])
		}
	}
}

// bruteSchedule returns the least total completion time of jobs on workers
// of the given types, over every assignment of jobs to workers and every
// order on each worker, and every multiset of (job, type) that run first in
// a schedule that reaches it. Workers of one type are alike, so several
// optimal schedules may start different jobs.
func bruteSchedule(jobs []policy.Job, types []allocation.Accelerator) (float64, [][]string) {
	n, w := len(jobs), len(types)
	least := make(map[string]float64) // by the heads, comma-separated
	best := math.Inf(1)
	on := make([][]int, w)
	seq := make([]int, 0, n)
	var perm func(w, from int, clock, total float64, firsts []string)
	// perm tries every order of worker w's jobs (seq[from:] so far, which
	// end at clock), then moves to worker w+1.
	perm = func(w, from int, clock, total float64, firsts []string) {
		if total > best*(1+1e-9) {
			return
		}
		if w == len(on) {
			best = math.Min(best, total)
			key := strings.Join(slices.Sorted(slices.Values(firsts)), ",")
			if x, ok := least[key]; !ok || total < x {
				least[key] = total
			}
			return
		}
		if len(seq)-from == len(on[w]) {
			f := firsts
			if len(on[w]) > 0 {
				f = append(slices.Clone(firsts), fmt.Sprintf("%s@%s", jobs[seq[from]].ID, types[w]))
			}
			perm(w+1, len(seq), 0, total, f)
			return
		}
		for _, j := range on[w] {
			if slices.Contains(seq[from:], j) {
				continue
			}
			end := clock + (jobs[j].StepsTotal-jobs[j].StepsDone)/jobs[j].Throughput[types[w]]
			seq = append(seq, j)
			perm(w, from, end, total+end, firsts)
			seq = seq[:len(seq)-1]
		}
	}
	var assign func(j int)
	assign = func(j int) {
		if j == n {
			perm(0, 0, 0, 0, nil)
			return
		}
		for k := range w {
			if jobs[j].Throughput[types[k]] > 0 {
				on[k] = append(on[k], j)
				assign(j + 1)
				on[k] = on[k][:len(on[k])-1]
			}
		}
	}
	assign(0)
	var heads [][]string
	for _, key := range slices.Sorted(maps.Keys(least)) {
		if least[key] <= best*(1+1e-9) {
			heads = append(heads, strings.Split(key, ","))
		}
	}
	return best, heads
}

// TestOptimalBrute compares AlloX with every schedule of up to 7 one-GPU
// jobs on 3 GPUs of two types: the objective, less the waiting times, must
// be the least total completion time, and the jobs started must be the
// first ones of an optimal schedule, on the same types.
func TestOptimalBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	c := cluster(server("a", "v100", 2), server("b", "k80", 1))
	types := []allocation.Accelerator{"v100", "v100", "k80"}
	cases := 300
	if testing.Short() {
		cases = 40
	}
	for range cases {
		s := &policy.Snapshot{Now: 1000 * time.Second, Cluster: c}
		wait := 0.0
		for i := range 1 + r.IntN(7) {
			t := thr{"v100": 0.5 + r.Float64()*3, "k80": 0.2 + r.Float64()}
			if r.IntN(5) == 0 {
				t["k80"] = 0
			}
			j := newJob(fmt.Sprintf("j%d", i), 1, r.Float64()*1000, 10+r.Float64()*1000, t)
			j.StepsDone = r.Float64() * j.StepsTotal
			s.Jobs = append(s.Jobs, j)
			wait += (s.Now - j.Arrival).Seconds()
		}
		d := decide(t, &allox.AlloX{}, s)
		best, heads := bruteSchedule(s.Jobs, types)
		if got := d.Objective - wait; math.Abs(got-best) > 1e-9*best {
			t.Fatalf("jobs %+v:\nobjective less waits %v; least total completion time %v", s.Jobs, got, best)
		}
		if got := started(s, d); !slices.ContainsFunc(heads, func(h []string) bool { return slices.Equal(h, got) }) {
			t.Fatalf("jobs %+v:\nstarted %v; the optimal schedules start %v", s.Jobs, got, heads)
		}
	}
}

// TestOptimalPositions checks the positions AlloX leaves out: on GPUs of
// very different speeds one GPU takes most of the jobs, more than the
// positions it starts with; the objective must still be the optimum of
// Gavel's full matrix, every job at every position of every GPU.
func TestOptimalPositions(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	c := cluster(server("a", "v100", 1), server("b", "k80", 4), server("c", "p100", 1))
	var workers []allocation.Accelerator
	for _, srv := range c.Servers {
		for range srv.GPUs {
			workers = append(workers, srv.Accelerator)
		}
	}
	for range 30 {
		s := &policy.Snapshot{Now: 5000 * time.Second, Cluster: c}
		n := 6 + r.IntN(20)
		for i := range n {
			t := thr{"v100": 50 + r.Float64()*100, "k80": 0.5 + r.Float64(), "p100": 5 * r.Float64()}
			s.Jobs = append(s.Jobs, newJob(fmt.Sprintf("j%02d", i), 1, r.Float64()*5000, 100+r.Float64()*1e4, t))
		}
		d := decide(t, &allox.AlloX{}, s)
		cost := make([][]float64, n)
		for i, j := range s.Jobs {
			for _, k := range workers {
				for p := 1; p <= n; p++ {
					x := math.Inf(1)
					if j.Throughput[k] > 0 {
						x = float64(p)*j.StepsTotal/j.Throughput[k] + (s.Now - j.Arrival).Seconds()
					}
					cost[i] = append(cost[i], x)
				}
			}
		}
		got, err := placement.Assign(cost)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for i, col := range got {
			want += cost[i][col]
		}
		if math.Abs(d.Objective-want) > 1e-9*want {
			t.Fatalf("%d jobs: objective %v; the full matrix's optimum is %v", n, d.Objective, want)
		}
	}
}

// TestAlpha checks the fairness filter and its floor at the free GPUs.
func TestAlpha(t *testing.T) {
	// Ten one-GPU jobs on two GPUs: the longer a job has waited, the
	// longer it is, so the shortest jobs are the newest.
	s := &policy.Snapshot{Now: 100 * time.Second, Cluster: cluster(server("s", "v100", 2))}
	for i := range 10 {
		s.Jobs = append(s.Jobs, newJob(fmt.Sprintf("j%d", i), 1, float64(i), 1000-float64(50*i), thr{"v100": 1}))
	}
	for _, tc := range []struct {
		alpha float64
		want  []string
	}{
		// All ten: the two shortest run first.
		{1, []string{"j8@v100", "j9@v100"}},
		// ⌈0.4·10⌉ = 4 longest-waiting, j0…j3: the shortest of them.
		{0.4, []string{"j2@v100", "j3@v100"}},
		// ⌈0.2·10⌉ = 2, the two free GPUs: the two that waited longest.
		{0.2, []string{"j0@v100", "j1@v100"}},
		// ⌈0.05·10⌉ = 1, but never fewer than the two free GPUs.
		{0.05, []string{"j0@v100", "j1@v100"}},
	} {
		d := decide(t, alpha(tc.alpha), s)
		if diff := cmp.Diff(tc.want, started(s, d)); diff != "" {
			t.Errorf("α = %v: started (-want +got):\n%s", tc.alpha, diff)
		}
	}
	// ⌈0.7·10⌉ = 7, though 0.7·10 rounds to 7.000000000000001: j0…j6. The
	// shortest, j6, starts (ahead of j4 or j5, which tie); with 8, j7 would.
	if got := started(s, decide(t, alpha(0.7), s)); !slices.Contains(got, "j6@v100") || slices.Contains(got, "j7@v100") {
		t.Errorf("α = 0.7: started %v; want j6 and not j7", got)
	}
	// Three free GPUs and α = 0.1: ⌈1⌉ is raised to 3, so no GPU idles.
	s.Cluster = cluster(server("s", "v100", 3))
	d := decide(t, alpha(0.1), s)
	if diff := cmp.Diff([]string{"j0@v100", "j1@v100", "j2@v100"}, started(s, d)); diff != "" {
		t.Errorf("α = 0.1, 3 GPUs: started (-want +got):\n%s", diff)
	}
	// Running jobs are not waiting: with one of two GPUs held, ⌈0.2·9⌉ = 2
	// jobs are considered for the free one, j1 and j2, and j2 is shorter.
	s.Cluster = cluster(server("s", "v100", 2))
	s.Jobs[0].Placement = []allocation.Assignment{{Server: "s", GPUs: 1}}
	d = decide(t, alpha(0.2), s)
	if diff := cmp.Diff([]string{"j0@v100", "j2@v100"}, started(s, d)); diff != "" {
		t.Errorf("α = 0.2, j0 running: started (-want +got):\n%s", diff)
	}
}

// TestNonPreemptive: a long running job keeps its GPU when a short job
// arrives; the short job starts once the GPU is free.
func TestNonPreemptive(t *testing.T) {
	c := cluster(server("s", "v100", 1), server("t", "v100", 2))
	long := newJob("long", 1, 0, 1e6, thr{"v100": 1})
	long.Placement = []allocation.Assignment{{Server: "t", GPUs: 1}}
	gang := newJob("gang", 2, 0, 1e6, thr{"v100": 1})
	gang.Placement = []allocation.Assignment{{Server: "s", GPUs: 1}, {Server: "t", GPUs: 1}}
	short := newJob("short", 1, 50, 10, thr{"v100": 1})
	s := &policy.Snapshot{Now: 100 * time.Second, Cluster: c, Jobs: []policy.Job{long, gang, short}}
	d := decide(t, &allox.AlloX{}, s)
	want := map[string][]allocation.Assignment{"long": long.Placement, "gang": gang.Placement}
	if diff := cmp.Diff(want, d.Placement); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
	if d.Objective != 0 {
		t.Errorf("objective %v with no free GPU; want 0", d.Objective)
	}
	// The gang finishes: the short job starts on a freed GPU, long stays.
	s.Jobs = []policy.Job{long, short}
	d = decide(t, &allox.AlloX{}, s)
	if d.Allocation["short"].GPUs != 1 || !slices.Equal(d.Placement["long"], long.Placement) {
		t.Fatalf("after the gang: %v", d.Placement)
	}
	// Two jobs claiming the same GPU: the first by ID, dup, keeps it; long
	// waits again, with a warning.
	dup := newJob("dup", 1, 0, 10, thr{"v100": 1})
	dup.Placement = long.Placement
	s.Cluster = cluster(server("t", "v100", 1))
	s.Jobs = []policy.Job{long, dup}
	d = decide(t, &allox.AlloX{}, s)
	if diff := cmp.Diff([]string{"dup@v100"}, started(s, d)); diff != "" || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], `"long"`) {
		t.Fatalf("duplicate placement: started %v, warnings %q", started(s, d), d.Warnings)
	}
}

// TestHeterogeneous: a job much faster on v100 goes there, a job equally
// fast on both takes the k80; a job that cannot use a free type waits.
func TestHeterogeneous(t *testing.T) {
	c := cluster(server("k", "k80", 1), server("v", "v100", 1))
	s := &policy.Snapshot{Now: 10 * time.Second, Cluster: c, Jobs: []policy.Job{
		newJob("fast", 1, 0, 1000, thr{"v100": 10, "k80": 1}),
		newJob("flat", 1, 0, 1000, thr{"v100": 2, "k80": 2}),
	}}
	d := decide(t, &allox.AlloX{}, s)
	if diff := cmp.Diff([]string{"fast@v100", "flat@k80"}, started(s, d)); diff != "" {
		t.Fatalf("started (-want +got):\n%s", diff)
	}
	// 100 + 500 s of run time plus 10 s of waiting each.
	if math.Abs(d.Objective-620) > 1e-9 {
		t.Errorf("objective %v, want 620", d.Objective)
	}
	// Swap the speeds: the assignment swaps.
	s.Jobs[0].Throughput, s.Jobs[1].Throughput = thr{"v100": 2, "k80": 2}, thr{"v100": 10, "k80": 1}
	d = decide(t, &allox.AlloX{}, s)
	if diff := cmp.Diff([]string{"fast@k80", "flat@v100"}, started(s, d)); diff != "" {
		t.Fatalf("swapped: started (-want +got):\n%s", diff)
	}
	// Both much faster on v100: both queue there, shortest first, and
	// the k80 idles (AlloX is not work-conserving across types).
	s.Jobs[0].Throughput, s.Jobs[1].Throughput = thr{"v100": 100, "k80": 1}, thr{"v100": 50, "k80": 1}
	d = decide(t, &allox.AlloX{}, s)
	if diff := cmp.Diff([]string{"fast@v100"}, started(s, d)); diff != "" {
		t.Fatalf("both on v100: started (-want +got):\n%s", diff)
	}
	// 10 + (10 + 20) s of run time plus 20 s of waiting.
	if math.Abs(d.Objective-60) > 1e-9 {
		t.Errorf("both on v100: objective %v, want 60", d.Objective)
	}
}

// TestGangs checks the multi-GPU rule: cost g·p·q + d, first jobs start in
// increasing g·q and a gang that no longer fits waits.
func TestGangs(t *testing.T) {
	c := cluster(server("s", "v100", 2))
	for _, tc := range []struct {
		name       string
		jobs       []policy.Job
		want       []string
		objective  float64
		placements map[string][]allocation.Assignment
	}{
		{
			// g·q: gang 2·10 = 20 before one 100: the gang takes both GPUs.
			name:      "short gang",
			jobs:      []policy.Job{newJob("gang", 2, 0, 10, thr{"v100": 1}), newJob("one", 1, 0, 100, thr{"v100": 1})},
			want:      []string{"gang@v100"},
			objective: 20 + 100,
		},
		{
			// The gang's 2·100 = 200 after one's 10: one starts, the gang
			// no longer fits and waits.
			name:      "long gang",
			jobs:      []policy.Job{newJob("gang", 2, 0, 100, thr{"v100": 1}), newJob("one", 1, 0, 10, thr{"v100": 1})},
			want:      []string{"one@v100"},
			objective: 200 + 10,
		},
		{
			// Two gangs on two GPUs: one plans behind the other, at cost
			// 2·2·q for position 2, or each takes a GPU of its own (2·q
			// each); the second is cheaper, and the shorter gang starts.
			name:      "two gangs",
			jobs:      []policy.Job{newJob("a", 2, 0, 30, thr{"v100": 1}), newJob("b", 2, 0, 20, thr{"v100": 1})},
			want:      []string{"b@v100"},
			objective: 60 + 40,
		},
		{
			// A gang of 3 cannot start on 2 GPUs and is not matched: the
			// one-GPU job runs alone.
			name:      "too big now",
			jobs:      []policy.Job{newJob("big", 3, 0, 1, thr{"v100": 1}), newJob("one", 1, 0, 10, thr{"v100": 1})},
			want:      []string{"one@v100"},
			objective: 10,
		},
	} {
		s := &policy.Snapshot{Cluster: c, Jobs: tc.jobs}
		if tc.name == "too big now" {
			s.Cluster = cluster(server("s", "v100", 2), server("t", "v100", 2))
			s.Jobs = append(s.Jobs, newJob("hog", 2, 0, 1e6, thr{"v100": 1}))
			s.Jobs[2].Placement = []allocation.Assignment{{Server: "t", GPUs: 2}}
			tc.want = []string{"hog@v100", "one@v100"}
		}
		d := decide(t, &allox.AlloX{}, s)
		if diff := cmp.Diff(tc.want, started(s, d)); diff != "" {
			t.Errorf("%s: started (-want +got):\n%s", tc.name, diff)
		}
		if math.Abs(d.Objective-tc.objective) > 1e-9 {
			t.Errorf("%s: objective %v, want %v", tc.name, d.Objective, tc.objective)
		}
	}
}

// randomSnapshot draws a cluster of mixed types and jobs of mixed sizes,
// some of them running on GPUs placed without overlap.
func randomSnapshot(r *rand.Rand, nJobs int) *policy.Snapshot {
	all := []allocation.Accelerator{"k80", "p100", "v100"}
	var c allocation.Cluster
	for i := range 2 + r.IntN(6) {
		c.Servers = append(c.Servers, server(fmt.Sprintf("s%d", i), all[r.IntN(3)], []int{1, 2, 4, 8}[r.IntN(4)]))
	}
	types := c.Types()
	s := &policy.Snapshot{Now: 10000 * time.Second, Cluster: c}
	g := placement.NewGangs(c)
	for i := range nJobs {
		t := thr{}
		for _, k := range types {
			if r.IntN(4) > 0 {
				t[k] = r.Float64() * 5
			}
		}
		t[types[r.IntN(len(types))]] = 0.1 + r.Float64()
		j := newJob(fmt.Sprintf("j%02d", i), []int{1, 1, 1, 2, 4}[r.IntN(5)], float64(r.IntN(10000)), 1+r.Float64()*1e5, t)
		j.StepsDone = r.Float64() * j.StepsTotal
		if j.Runnable(c) != nil {
			j.GPUs = 1
			if j.Runnable(c) != nil {
				continue
			}
		}
		if r.IntN(3) == 0 {
			if place, _, ok := g.Place(j.GPUs, j.Worker(), func(k allocation.Accelerator) bool { return t[k] > 0 }); ok {
				j.Placement = place
			}
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// TestProperties checks, over random snapshots, that decisions fit the
// cluster, keep running jobs, use free GPUs when some job can, and are the
// same whatever the order of the jobs.
func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for i := range 200 {
		s := randomSnapshot(r, 1+r.IntN(40))
		a := alpha([]float64{1, 0.5, 0.2}[i%3])
		d := decide(t, a, s)
		for _, j := range s.Jobs {
			if len(j.Placement) > 0 && d.Allocation[j.ID].GPUs == 0 {
				t.Fatalf("running job %q was preempted", j.ID)
			}
		}
		// If a waiting job could start on the free GPUs, something starts.
		startable, starts := false, false
		for _, j := range s.Jobs {
			if len(j.Placement) == 0 {
				_, ok := d.Allocation[j.ID]
				starts = starts || ok
				startable = startable || canStart(s, j)
			}
		}
		if startable && !starts {
			t.Fatalf("snapshot %d: a waiting job could start but none does", i)
		}
		// Same decision with the jobs shuffled.
		shuffled := *s
		shuffled.Jobs = slices.Clone(s.Jobs)
		r.Shuffle(len(shuffled.Jobs), func(a, b int) { shuffled.Jobs[a], shuffled.Jobs[b] = shuffled.Jobs[b], shuffled.Jobs[a] })
		again := decide(t, a, &shuffled)
		if diff := cmp.Diff(d, again); diff != "" {
			t.Fatalf("snapshot %d: decision depends on job order (-first +shuffled):\n%s", i, diff)
		}
	}
}

// canStart reports whether j has a type with a positive throughput and as
// many GPUs free as it needs, given the running jobs of s.
func canStart(s *policy.Snapshot, j policy.Job) bool {
	free := make(map[allocation.Accelerator]int)
	used := make(map[string]int)
	for _, o := range s.Jobs {
		for _, a := range o.Placement {
			used[a.Server] += a.GPUs
		}
	}
	for _, srv := range s.Cluster.Servers {
		free[srv.Accelerator] += srv.GPUs - used[srv.ID]
	}
	for k, n := range free {
		if j.Throughput[k] > 0 && n >= j.GPUs {
			return true
		}
	}
	return false
}

func TestInvalid(t *testing.T) {
	c := cluster(server("s", "v100", 2))
	ok := newJob("ok", 1, 0, 10, thr{"v100": 1})
	unknown := newJob("unknown", 1, 0, 0, thr{"v100": 1})
	elastic := newJob("elastic", 0, 0, 10, thr{"v100": 1})
	elastic.Elastic = &policy.Elastic{BatchSize: 32}
	wide := newJob("wide", 3, 0, 10, thr{"v100": 1})
	wide.Elastic = &policy.Elastic{BatchSize: 32}
	nan := newJob("nan", 1, 0, 10, thr{"v100": math.NaN()})
	for _, tc := range []struct {
		job  policy.Job
		want string
	}{
		{elastic, `gpus`},
		{wide, `gpus`},
		{nan, `throughput[v100]`},
	} {
		// The bad job is left out with its reason; "ok" still starts.
		s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{ok, tc.job}}
		d, err := (&allox.AlloX{}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("job %q: %v", tc.job.ID, err)
		}
		if why := d.Unscheduled[tc.job.ID]; len(d.Unscheduled) != 1 || !strings.HasPrefix(why, tc.want) {
			t.Errorf("job %q: Unscheduled %v; want it left out for %q", tc.job.ID, d.Unscheduled, tc.want)
		}
		if got := d.Allocation.IDs(); !slices.Equal(got, []string{"ok"}) {
			t.Errorf("job %q: started %v; want [ok]", tc.job.ID, got)
		}
		_, err = policy.Strict(&allox.AlloX{}).Allocate(context.Background(), s)
		if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), fmt.Sprintf("job %q: %s", tc.job.ID, tc.want)) {
			t.Errorf("Strict, job %q: err %v; want ErrInvalidSnapshot naming %q", tc.job.ID, err, tc.want)
		}
	}
	// A job of unknown length is not left out: it starts on the GPU the
	// matching leaves free.
	d := decide(t, &allox.AlloX{}, &policy.Snapshot{Cluster: c, Jobs: []policy.Job{ok, unknown}})
	if got := started(nil, d); len(d.Unscheduled) != 0 || !slices.Equal(got, []string{"ok@v100", "unknown@v100"}) {
		t.Errorf("unknown length: started %v, left out %v; want both started", got, d.Unscheduled)
	}
	if _, err := (&allox.AlloX{}).Allocate(context.Background(), nil); !errors.Is(err, policy.ErrInvalidSnapshot) {
		t.Errorf("nil snapshot: %v", err)
	}
	for _, a := range []float64{0, -0.5, 1.5, math.NaN()} {
		if _, err := alpha(a).Allocate(context.Background(), &policy.Snapshot{Cluster: c}); !errors.Is(err, policy.ErrInvalidConfig) || !strings.Contains(err.Error(), "alpha") {
			t.Errorf("α = %v: %v; want ErrInvalidConfig naming alpha", a, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	for _, tc := range []struct {
		config string
		ok     bool
	}{
		{``, true}, {`{}`, true}, {`{"alpha": 0.2}`, true},
		{`{"alpha": 0}`, false}, {`{"alpha": 2}`, false}, {`{"alfa": 0.2}`, false},
	} {
		p, err := policy.New("allox", []byte(tc.config))
		if (err == nil) != tc.ok {
			t.Errorf("New(allox, %s): %v", tc.config, err)
			continue
		}
		if err != nil {
			if !errors.Is(err, policy.ErrInvalidConfig) {
				t.Errorf("New(allox, %s): %v; want ErrInvalidConfig", tc.config, err)
			}
			continue
		}
		if p.Name() != "allox" {
			t.Errorf("Name = %q", p.Name())
		}
	}
	p, err := policy.New("allox", []byte(`{"alpha": 0.2}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := p.(*allox.AlloX).Alpha; a == nil || *a != 0.2 {
		t.Errorf("alpha decoded as %v", a)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &policy.Snapshot{Cluster: cluster(server("s", "v100", 1)), Jobs: []policy.Job{newJob("a", 1, 0, 10, thr{"v100": 1})}}
	if _, err := (&allox.AlloX{}).Allocate(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v; want context.Canceled", err)
	}
}

// TestInputUnchanged: Allocate does not modify the snapshot.
func TestInputUnchanged(t *testing.T) {
	s := randomSnapshot(rand.New(rand.NewPCG(12, 12)), 30)
	before := *s
	before.Jobs = slices.Clone(s.Jobs)
	for i := range before.Jobs {
		before.Jobs[i].Placement = slices.Clone(s.Jobs[i].Placement)
	}
	decide(t, &allox.AlloX{}, s)
	if diff := cmp.Diff(before, *s); diff != "" {
		t.Fatalf("snapshot modified (-before +after):\n%s", diff)
	}
}

// A matching whose cost matrix would exceed MaxCells is refused by name
// before it is built: 6000 jobs on 6000 GPUs need 6000 × 12 000 cells.
func TestMaxCells(t *testing.T) {
	s := &policy.Snapshot{Cluster: cluster(server("s", "v100", 6000))}
	for i := range 6000 {
		s.Jobs = append(s.Jobs, policy.Job{ID: fmt.Sprintf("j%04d", i), GPUs: 1, StepsTotal: float64(100 + i), Throughput: thr{"v100": 1}})
	}
	start := time.Now()
	_, err := (&allox.AlloX{}).Allocate(context.Background(), s)
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), "MaxCells") {
		t.Fatalf("6000 jobs on 6000 GPUs: %v, want a refusal naming MaxCells", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refused after %v", took)
	}
}
