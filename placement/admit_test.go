package placement_test

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

// speed is a throughput map on one type.
func speed(t allocation.Accelerator) map[allocation.Accelerator]float64 {
	return map[allocation.Accelerator]float64{t: 1}
}

// admit runs Admit and fails the test on an error.
func admit(t *testing.T, p placement.Priority, c allocation.Cluster, reqs []placement.Request) []placement.Run {
	t.Helper()
	runs, err := p.Admit(c, reqs)
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	return runs
}

func checkRuns(t *testing.T, want, got []placement.Run) {
	t.Helper()
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Fatalf("Admit (-want +got):\n%s", diff)
	}
}

// Tiresias' simulator: the 8-GPU head does not fit on the 4 GPUs left by
// the running higher-priority job, so the two 2-GPU jobs behind it run.
func TestAdmitBackfill(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "s1", "s2")}
	reqs := []placement.Request{
		{ID: "R", GPUs: 4, Current: one("s1", 4), Throughput: speed("v100")},
		{ID: "A", GPUs: 8, Throughput: speed("v100")},
		{ID: "B", GPUs: 2, Throughput: speed("v100")},
		{ID: "C", GPUs: 2, Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "R", Accelerator: "v100", Assignments: one("s1", 4), Extended: true},
		{Job: "B", Accelerator: "v100", Assignments: one("s2", 2)},
		{Job: "C", Accelerator: "v100", Assignments: one("s2", 2)},
	}, admit(t, placement.Priority{}, c, reqs))
	// Strict FIFO: A blocks B and C, though they fit.
	checkRuns(t, []placement.Run{
		{Job: "R", Accelerator: "v100", Assignments: one("s1", 4), Extended: true},
	}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))

	// First, A preempts R and takes both servers; B and C wait. Strict
	// FIFO preempts nothing: R keeps its server and A blocks the line.
	reqs[0], reqs[1] = reqs[1], reqs[0]
	checkRuns(t, []placement.Run{
		{Job: "A", Accelerator: "v100", Assignments: asg{{Server: "s1", GPUs: 4}, {Server: "s2", GPUs: 4}}},
	}, admit(t, placement.Priority{}, c, reqs))
	checkRuns(t, []placement.Run{
		{Job: "R", Accelerator: "v100", Assignments: one("s1", 4), Extended: true},
	}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))
}

// A request chosen by counts that cannot be placed (it must be
// consolidated) does not keep the GPUs it counted: what is left goes to
// the requests behind it.
func TestAdmitBackfillConsolidated(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "a", "b")}
	reqs := []placement.Request{
		{ID: "R1", GPUs: 1, Current: one("a", 1), Throughput: speed("v100")},
		{ID: "R2", GPUs: 1, Current: one("b", 1), Throughput: speed("v100")},
		{ID: "H", GPUs: 4, Throughput: speed("v100"), Consolidate: true},
		{ID: "S", GPUs: 2, Throughput: speed("v100")},
		{ID: "T", GPUs: 3, Throughput: speed("v100")},
		{ID: "U", GPUs: 1, Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "R1", Accelerator: "v100", Assignments: one("a", 1), Extended: true},
		{Job: "R2", Accelerator: "v100", Assignments: one("b", 1), Extended: true},
		{Job: "S", Accelerator: "v100", Assignments: one("a", 2)},
		{Job: "T", Accelerator: "v100", Assignments: one("b", 3)},
		{Job: "U", Accelerator: "v100", Assignments: one("a", 1)},
	}, admit(t, placement.Priority{}, c, reqs))
	// Strict FIFO: the head that cannot be consolidated blocks the rest.
	checkRuns(t, []placement.Run{
		{Job: "R1", Accelerator: "v100", Assignments: one("a", 1), Extended: true},
		{Job: "R2", Accelerator: "v100", Assignments: one("b", 1), Extended: true},
	}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))
	// Not consolidated, the same head splits 3 + 1 and runs.
	reqs[2].Consolidate = false
	checkRuns(t, []placement.Run{
		{Job: "R1", Accelerator: "v100", Assignments: one("a", 1), Extended: true},
		{Job: "R2", Accelerator: "v100", Assignments: one("b", 1), Extended: true},
		{Job: "H", Accelerator: "v100", Assignments: asg{{Server: "a", GPUs: 3}, {Server: "b", GPUs: 1}}},
		{Job: "S", Accelerator: "v100", Assignments: one("b", 2)},
	}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))
}

// The requests chosen by counts are placed before the others backfill: U,
// which did not count, would have fitted the GPUs H counted but could not
// use, yet V, which counted, goes first and U then no longer fits.
func TestAdmitChosenFirst(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "a", "b")}
	reqs := []placement.Request{
		{ID: "R1", GPUs: 1, Current: one("a", 1), Throughput: speed("v100")},
		{ID: "R2", GPUs: 1, Current: one("b", 1), Throughput: speed("v100")},
		{ID: "H", GPUs: 4, Throughput: speed("v100"), Consolidate: true},
		{ID: "U", GPUs: 5, Throughput: speed("v100")},
		{ID: "V", GPUs: 2, Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "R1", Accelerator: "v100", Assignments: one("a", 1), Extended: true},
		{Job: "R2", Accelerator: "v100", Assignments: one("b", 1), Extended: true},
		{Job: "V", Accelerator: "v100", Assignments: one("a", 2)},
	}, admit(t, placement.Priority{}, c, reqs))
}

func TestAdmitPreempt(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "s1")}
	reqs := []placement.Request{
		{ID: "N", GPUs: 4, Throughput: speed("v100")},
		{ID: "R", GPUs: 4, Current: one("s1", 4), Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{{Job: "N", Accelerator: "v100", Assignments: one("s1", 4)}}, admit(t, placement.Priority{}, c, reqs))
	// Strict FIFO never preempts.
	checkRuns(t, []placement.Run{{Job: "R", Accelerator: "v100", Assignments: one("s1", 4), Extended: true}}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))

	// A full cluster: the new job takes the GPUs of the lowest-priority
	// running one; the other keeps its own.
	c = allocation.Cluster{Servers: servers("v100", 4, "s1", "s2")}
	reqs = []placement.Request{
		{ID: "N", GPUs: 4, Throughput: speed("v100")},
		{ID: "R1", GPUs: 4, Current: one("s1", 4), Throughput: speed("v100")},
		{ID: "R2", GPUs: 4, Current: one("s2", 4), Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "N", Accelerator: "v100", Assignments: one("s2", 4)},
		{Job: "R1", Accelerator: "v100", Assignments: one("s1", 4), Extended: true},
	}, admit(t, placement.Priority{}, c, reqs))

	// A running request ahead of the new one is not preempted.
	reqs[0], reqs[1] = reqs[1], reqs[0]
	checkRuns(t, []placement.Run{
		{Job: "R1", Accelerator: "v100", Assignments: one("s1", 4), Extended: true},
		{Job: "N", Accelerator: "v100", Assignments: one("s2", 4)},
	}, admit(t, placement.Priority{}, c, reqs))
}

// A running request that is chosen keeps its GPUs, though the
// higher-priority new request would have gone there (s1 is the first of
// two equally free servers); the new request takes the other server.
func TestAdmitKeepsRunning(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "s1", "s2")}
	reqs := []placement.Request{
		{ID: "N", GPUs: 4, Throughput: speed("v100")},
		{ID: "R", GPUs: 4, Current: one("s1", 4), Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "N", Accelerator: "v100", Assignments: one("s2", 4)},
		{Job: "R", Accelerator: "v100", Assignments: one("s1", 4), Extended: true},
	}, admit(t, placement.Priority{}, c, reqs))

	// A split running request keeps exactly its GPUs, though a whole
	// server is free; Admit neither reorders nor aliases its Current.
	current := asg{{Server: "s2", GPUs: 2}, {Server: "s1", GPUs: 2}}
	reqs = []placement.Request{
		{ID: "N", GPUs: 2, Throughput: speed("v100")},
		{ID: "R", GPUs: 4, Current: current, Throughput: speed("v100")},
	}
	runs := admit(t, placement.Priority{}, c, reqs)
	checkRuns(t, []placement.Run{
		{Job: "N", Accelerator: "v100", Assignments: one("s1", 2)},
		{Job: "R", Accelerator: "v100", Assignments: asg{{Server: "s1", GPUs: 2}, {Server: "s2", GPUs: 2}}, Extended: true},
	}, runs)
	if diff := gocmp.Diff(asg{{Server: "s2", GPUs: 2}, {Server: "s1", GPUs: 2}}, reqs[1].Current); diff != "" {
		t.Fatalf("Admit modified Current (-want +got):\n%s", diff)
	}
	runs[1].Assignments[0].GPUs = 99
	if reqs[1].Current[1].GPUs != 2 {
		t.Fatal("Run.Assignments aliases Request.Current")
	}
}

// Strict FIFO stops at the first request that cannot run, even when later
// ones fit.
func TestAdmitHeadOfLine(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "s1", "s2")}
	reqs := []placement.Request{
		{ID: "A", GPUs: 3, Throughput: speed("v100")},
		{ID: "B", GPUs: 3, Throughput: speed("v100")},
		{ID: "C", GPUs: 4, Throughput: speed("v100")},
		{ID: "D", GPUs: 1, Throughput: speed("v100")},
		{ID: "E", GPUs: 1, Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "A", Accelerator: "v100", Assignments: one("s1", 3)},
		{Job: "B", Accelerator: "v100", Assignments: one("s2", 3)},
	}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))
	checkRuns(t, []placement.Run{
		{Job: "A", Accelerator: "v100", Assignments: one("s1", 3)},
		{Job: "B", Accelerator: "v100", Assignments: one("s2", 3)},
		{Job: "D", Accelerator: "v100", Assignments: one("s1", 1)},
		{Job: "E", Accelerator: "v100", Assignments: one("s2", 1)},
	}, admit(t, placement.Priority{}, c, reqs))
	// A request with no usable type blocks the line too.
	reqs[2] = placement.Request{ID: "C", GPUs: 1, Throughput: speed("k80")}
	checkRuns(t, []placement.Run{
		{Job: "A", Accelerator: "v100", Assignments: one("s1", 3)},
		{Job: "B", Accelerator: "v100", Assignments: one("s2", 3)},
	}, admit(t, placement.Priority{HeadOfLine: true}, c, reqs))
}

func TestAdmitTypes(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "f", Accelerator: "fast", GPUs: 4},
		{ID: "s", Accelerator: "slow", GPUs: 4},
		{ID: "n", Accelerator: "none", GPUs: 4},
	}}
	thr := map[allocation.Accelerator]float64{"fast": 3, "slow": 1, "none": 0}
	for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
		// The fastest type with room, then the slower one; never the
		// type of zero throughput, though it is free.
		checkRuns(t, []placement.Run{
			{Job: "X", Accelerator: "fast", Assignments: one("f", 4)},
			{Job: "Y", Accelerator: "slow", Assignments: one("s", 4)},
		}, admit(t, p, c, []placement.Request{
			{ID: "X", GPUs: 4, Throughput: thr},
			{ID: "Y", GPUs: 4, Throughput: thr},
			{ID: "Z", GPUs: 4, Throughput: thr},
		}))
		// A running request stays on its slower type, though the
		// fastest is free.
		checkRuns(t, []placement.Run{
			{Job: "R", Accelerator: "slow", Assignments: one("s", 2), Extended: true},
			{Job: "X", Accelerator: "fast", Assignments: one("f", 4)},
		}, admit(t, p, c, []placement.Request{
			{ID: "R", GPUs: 2, Current: one("s", 2), Throughput: thr},
			{ID: "X", GPUs: 4, Throughput: thr},
		}))
		// A running request on a type it can no longer use moves.
		checkRuns(t, []placement.Run{
			{Job: "R", Accelerator: "fast", Assignments: one("f", 2)},
		}, admit(t, p, c, []placement.Request{
			{ID: "R", GPUs: 2, Current: one("n", 2), Throughput: thr},
		}))
		// Only types of positive throughput; none at all never runs.
		checkRuns(t, []placement.Run{
			{Job: "K", Accelerator: "slow", Assignments: one("s", 1)},
		}, admit(t, p, c, []placement.Request{
			{ID: "K", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"slow": 0.5, "fast": -1}},
		}))
		if runs := admit(t, p, c, []placement.Request{
			{ID: "Z", GPUs: 1},
			{ID: "W", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"none": 0, "gone": 5}},
		}); len(runs) != 0 {
			t.Fatalf("requests with no usable type ran: %+v", runs)
		}
	}
	// Ties of throughput go to the first type by name.
	checkRuns(t, []placement.Run{
		{Job: "T", Accelerator: "fast", Assignments: one("f", 1)},
	}, admit(t, placement.Priority{}, c, []placement.Request{
		{ID: "T", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"slow": 2, "fast": 2}},
	}))
	// The fastest type full, a higher-priority job on it: the next one
	// falls back to the slow type.
	checkRuns(t, []placement.Run{
		{Job: "R", Accelerator: "fast", Assignments: one("f", 3), Extended: true},
		{Job: "X", Accelerator: "slow", Assignments: one("s", 2)},
		{Job: "Y", Accelerator: "fast", Assignments: one("f", 1)},
	}, admit(t, placement.Priority{}, c, []placement.Request{
		{ID: "R", GPUs: 3, Current: one("f", 3), Throughput: thr},
		{ID: "X", GPUs: 2, Throughput: thr},
		{ID: "Y", GPUs: 1, Throughput: thr},
	}))
}

func TestAdmitInvalid(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "s1")}
	ok := placement.Request{ID: "ok", GPUs: 1, Throughput: speed("v100")}
	for _, tc := range []struct {
		name string
		reqs []placement.Request
		want string // in the error
	}{
		{"empty id", []placement.Request{ok, {GPUs: 1, Throughput: speed("v100")}}, "empty"},
		{"duplicate id", []placement.Request{ok, {ID: "x", GPUs: 1}, {ID: "x", GPUs: 2}}, `"x"`},
		{"zero gpus", []placement.Request{ok, {ID: "zero", Throughput: speed("v100")}}, `"zero"`},
		{"negative gpus", []placement.Request{ok, {ID: "neg", GPUs: -3, Throughput: speed("v100")}}, `"neg"`},
		{"negative worker", []placement.Request{ok, {ID: "neg", GPUs: 2, Worker: -2, Throughput: speed("v100")}}, `request "neg": worker`},
		{"gpus not whole workers", []placement.Request{ok, {ID: "odd", GPUs: 3, Worker: 2, Throughput: speed("v100")}}, `request "odd": gpus: 3 is not a multiple of worker 2`},
	} {
		for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
			runs, err := p.Admit(c, tc.reqs)
			if !errors.Is(err, allocation.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %+v: err = %v, want ErrInvalid naming %s", tc.name, p, err, tc.want)
			}
			if runs != nil {
				t.Errorf("%s, %+v: runs = %+v with an error", tc.name, p, runs)
			}
		}
	}
	// Nothing to admit, or no cluster: no runs and no error.
	for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
		if runs := admit(t, p, c, nil); len(runs) != 0 {
			t.Fatalf("Admit of nothing = %+v", runs)
		}
		if runs := admit(t, p, allocation.Cluster{}, []placement.Request{ok}); len(runs) != 0 {
			t.Fatalf("Admit on an empty cluster = %+v", runs)
		}
	}
}

// admitCase is a random cluster and request list: 1–3 types, servers of
// 1–8 GPUs, some requests running on valid disjoint GPUs, some
// consolidated.
func admitCase(r *rand.Rand) (allocation.Cluster, []placement.Request) { return admitCaseW(r, false) }

// admitCaseW is admitCase, with workers of 1–4 GPUs when workers is set
// (the same draws as admitCase otherwise).
func admitCaseW(r *rand.Rand, workers bool) (allocation.Cluster, []placement.Request) {
	types := []allocation.Accelerator{"a100", "k80", "v100"}[:1+r.IntN(3)]
	var c allocation.Cluster
	for i := range 1 + r.IntN(8) {
		c.Servers = append(c.Servers, allocation.Server{
			ID:          fmt.Sprintf("s%d", i),
			Accelerator: types[r.IntN(len(types))],
			GPUs:        1 + r.IntN(8),
		})
	}
	r.Shuffle(len(c.Servers), func(i, j int) { c.Servers[i], c.Servers[j] = c.Servers[j], c.Servers[i] })
	total := c.TotalGPUs()
	g := placement.NewGangs(c) // where running requests run now
	reqs := make([]placement.Request, 1+r.IntN(14))
	for i := range reqs {
		q := placement.Request{
			ID:          fmt.Sprintf("j%d", r.IntN(1000)*100+i),
			GPUs:        1 + r.IntN(min(total+2, 12)),
			Throughput:  make(map[allocation.Accelerator]float64),
			Consolidate: r.IntN(3) == 0,
		}
		if workers {
			q.Worker = 1 + r.IntN(4)
			q.GPUs = q.Worker * (1 + (q.GPUs-1)/q.Worker)
		}
		for _, t := range types {
			switch r.IntN(4) {
			case 0: // absent
			case 1:
				q.Throughput[t] = 0
			default:
				q.Throughput[t] = float64(1 + r.IntN(3)) // ties happen
			}
		}
		if r.IntN(5) == 0 {
			q.Throughput["gone"] = 1 // a type the cluster lacks
		}
		if len(fastestTypes(q.Throughput)) > 0 && r.IntN(5) < 2 {
			ts := fastestTypes(q.Throughput)
			on := onlyType(ts[r.IntN(len(ts))])
			place := g.Place
			if q.Consolidate {
				place = g.Consolidate
			}
			as, _, ok := place(q.GPUs, q.Worker, on)
			if ok {
				r.Shuffle(len(as), func(i, j int) { as[i], as[j] = as[j], as[i] })
				q.Current = as
			}
		}
		reqs[i] = q
	}
	// Running requests anywhere in the order.
	r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return c, reqs
}

// fastestTypes returns the types of positive throughput, in no set order.
func fastestTypes(thr map[allocation.Accelerator]float64) []allocation.Accelerator {
	var ts []allocation.Accelerator
	for t, x := range thr {
		if x > 0 {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return ts
}

// fewestServers is the fewest servers of type t that hold k GPUs in
// workers of w (0: 1).
func fewestServers(c allocation.Cluster, t allocation.Accelerator, k, w int) int {
	w = max(w, 1)
	var sizes []int
	for _, s := range c.Servers {
		if s.Accelerator == t {
			sizes = append(sizes, s.GPUs/w*w)
		}
	}
	slices.Sort(sizes)
	slices.Reverse(sizes)
	n := 0
	for _, size := range sizes {
		if k <= 0 {
			break
		}
		k -= size
		n++
	}
	if k > 0 {
		return -1
	}
	return n
}

func cloneRequests(reqs []placement.Request) []placement.Request {
	out := make([]placement.Request, len(reqs))
	for i, q := range reqs {
		q.Current = slices.Clone(q.Current)
		// A fresh map iterates in a fresh order.
		thr := make(map[allocation.Accelerator]float64, len(q.Throughput))
		for _, t := range slices.Sorted(maps.Keys(q.Throughput)) {
			thr[t] = q.Throughput[t]
		}
		q.Throughput = thr
		out[i] = q
	}
	return out
}

// checkAdmit checks the invariants of Admit's result.
func checkAdmit(t *testing.T, p placement.Priority, c allocation.Cluster, reqs []placement.Request, runs []placement.Run) {
	t.Helper()
	index := make(map[string]int, len(reqs))
	for i, q := range reqs {
		index[q.ID] = i
	}
	typeOf := make(map[string]allocation.Accelerator)
	capOf := make(map[string]int)
	for _, s := range c.Servers {
		typeOf[s.ID], capOf[s.ID] = s.Accelerator, s.GPUs
	}
	used := make(map[string]int)
	ran := make([]bool, len(reqs))
	last := -1
	for _, run := range runs {
		i, ok := index[run.Job]
		if !ok {
			t.Fatalf("run of unknown job %q", run.Job)
		}
		if i <= last {
			t.Fatalf("run %q out of request order (or twice)", run.Job)
		}
		last, ran[i] = i, true
		q := reqs[i]
		if run.Partner != "" {
			t.Errorf("%s: partner %q", run.Job, run.Partner)
		}
		if !(q.Throughput[run.Accelerator] > 0) {
			t.Errorf("%s: runs on %q of throughput %v", run.Job, run.Accelerator, q.Throughput[run.Accelerator])
		}
		sum := 0
		for k, a := range run.Assignments {
			if k > 0 && run.Assignments[k-1].Server >= a.Server {
				t.Errorf("%s: assignments %v not sorted by unique server", run.Job, run.Assignments)
			}
			if a.GPUs < 1 || a.GPUs%max(q.Worker, 1) != 0 {
				t.Errorf("%s: assignment %+v, workers of %d", run.Job, a, q.Worker)
			}
			if typ, ok := typeOf[a.Server]; !ok || typ != run.Accelerator {
				t.Errorf("%s: assignment %+v on %q, run on %q", run.Job, a, typ, run.Accelerator)
			}
			sum += a.GPUs
			used[a.Server] += a.GPUs
		}
		if sum != q.GPUs {
			t.Errorf("%s: %d GPUs, want %d", run.Job, sum, q.GPUs)
		}
		if run.Extended {
			want := slices.SortedFunc(slices.Values(q.Current), func(x, y allocation.Assignment) int { return cmp.Compare(x.Server, y.Server) })
			if len(q.Current) == 0 || !slices.Equal(want, run.Assignments) {
				t.Errorf("%s: extended on %v, current %v", run.Job, run.Assignments, q.Current)
			}
		} else if q.Consolidate {
			if n := fewestServers(c, run.Accelerator, q.GPUs, q.Worker); len(run.Assignments) != n {
				t.Errorf("%s: consolidated on %d servers %v, fewest %d", run.Job, len(run.Assignments), run.Assignments, n)
			}
		}
	}
	for id, n := range used {
		if n > capOf[id] {
			t.Errorf("server %s: %d GPUs used of %d", id, n, capOf[id])
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The GPUs left when every run but skip holds its own.
	left := func(skip string) *placement.Gangs {
		g := placement.NewGangs(c)
		for _, run := range runs {
			if run.Job == skip {
				continue
			}
			if _, ok := g.Keep(run.Assignments, 0, anyType); !ok {
				t.Fatalf("runs overlap at %s %v", run.Job, run.Assignments)
			}
		}
		return g
	}
	// A running request that runs elsewhere lost some of its GPUs to
	// another run.
	for _, run := range runs {
		q := reqs[index[run.Job]]
		if !run.Extended && len(q.Current) > 0 {
			if _, ok := left(run.Job).Keep(q.Current, q.GPUs, func(t allocation.Accelerator) bool { return q.Throughput[t] > 0 }); ok {
				t.Errorf("%s: moved from %v to %v, though its GPUs were free", run.Job, q.Current, run.Assignments)
			}
		}
	}

	// No request left out could run on what is left: with backfill none
	// at all, with HeadOfLine the first (and the runs are a prefix).
	fits := func(g *placement.Gangs, q placement.Request) bool {
		usable := func(t allocation.Accelerator) bool { return q.Throughput[t] > 0 }
		if len(q.Current) > 0 {
			if _, ok := g.Keep(q.Current, q.GPUs, usable); ok {
				return true
			}
		}
		if q.Consolidate {
			_, _, ok := g.Consolidate(q.GPUs, q.Worker, usable)
			return ok
		}
		_, _, ok := g.Place(q.GPUs, q.Worker, usable)
		return ok
	}
	if p.HeadOfLine {
		// Nothing is preempted: a running request whose GPUs are all
		// still its own keeps them; the others run as a prefix.
		var line []int
		for i, q := range reqs {
			if len(q.Current) > 0 {
				if _, ok := placement.NewGangs(c).Keep(q.Current, q.GPUs, func(t allocation.Accelerator) bool { return q.Throughput[t] > 0 }); ok && !(ran[i] && runOf(runs, q.ID).Extended) {
					if !overlapsEarlier(reqs, i) {
						t.Fatalf("HeadOfLine: running %s was not kept: %v", q.ID, jobs(runs))
					}
				}
			}
			if !(ran[i] && runOf(runs, q.ID).Extended) {
				line = append(line, i)
			}
		}
		for k, i := range line {
			if ran[i] {
				continue
			}
			for _, later := range line[k+1:] {
				if ran[later] {
					t.Fatalf("HeadOfLine: %s runs behind %s, which waits: %v", reqs[later].ID, reqs[i].ID, jobs(runs))
				}
			}
			if fits(left(""), reqs[i]) {
				t.Fatalf("HeadOfLine: %s (%d GPUs) stopped the line but fits", reqs[i].ID, reqs[i].GPUs)
			}
			break
		}
		return
	}
	// Running requests chosen by GPU counts keep their GPUs.
	chosen := chosenByCount(c, reqs)
	for i, q := range reqs {
		if chosen[i] && len(q.Current) > 0 && !(ran[i] && runOf(runs, q.ID).Extended) {
			t.Errorf("%s: running and chosen by counts, but not extended: %+v", q.ID, runOf(runs, q.ID))
		}
	}
	for i, q := range reqs {
		stays := keepableRequest(c, q)
		switch {
		case ran[i] && stays && !runOf(runs, q.ID).Extended:
			t.Errorf("%s: preempted, then moved to %v", q.ID, runOf(runs, q.ID).Assignments)
		case !ran[i] && !stays && fits(left(""), q):
			t.Errorf("%s (%d GPUs, consolidate %v) waits but fits what is left", q.ID, q.GPUs, q.Consolidate)
		}
	}
}

// keepableRequest reports a running request that could keep its GPUs on the
// empty cluster: once preempted, it runs again only on them.
func keepableRequest(c allocation.Cluster, q placement.Request) bool {
	if len(q.Current) == 0 {
		return false
	}
	var t allocation.Accelerator
	total := 0
	for i, a := range q.Current {
		srv, ok := c.Server(a.Server)
		if !ok || (i > 0 && srv.Accelerator != t) {
			return false
		}
		t, total = srv.Accelerator, total+a.GPUs
	}
	return q.Throughput[t] > 0 && total == q.GPUs
}

// chosenByCount is the choice by GPU counts of Tiresias' simulator: in
// order, a request counts on the first type with room, fastest first (ties
// by name), or a running one on the type it runs on.
func chosenByCount(c allocation.Cluster, reqs []placement.Request) []bool {
	count := make(map[allocation.Accelerator]int)
	for _, s := range c.Servers {
		count[s.Accelerator] += s.GPUs
	}
	chosen := make([]bool, len(reqs))
	for i, q := range reqs {
		ts := fastestTypes(q.Throughput)
		slices.SortStableFunc(ts, func(a, b allocation.Accelerator) int { return cmp.Compare(q.Throughput[b], q.Throughput[a]) })
		if len(q.Current) > 0 {
			if s, ok := c.Server(q.Current[0].Server); ok && q.Throughput[s.Accelerator] > 0 {
				ts = []allocation.Accelerator{s.Accelerator}
			}
		}
		for _, t := range ts {
			if count[t] >= q.GPUs {
				count[t] -= q.GPUs
				chosen[i] = true
				break
			}
		}
	}
	return chosen
}

func runOf(runs []placement.Run, job string) placement.Run {
	for _, run := range runs {
		if run.Job == job {
			return run
		}
	}
	return placement.Run{}
}

// overlapsEarlier reports whether request i's current GPUs overlap those of
// an earlier running request, which then keeps them first.
func overlapsEarlier(reqs []placement.Request, i int) bool {
	mine := map[string]bool{}
	for _, a := range reqs[i].Current {
		mine[a.Server] = true
	}
	for _, q := range reqs[:i] {
		for _, a := range q.Current {
			if mine[a.Server] {
				return true
			}
		}
	}
	return false
}

func jobs(runs []placement.Run) []string {
	var ids []string
	for _, run := range runs {
		ids = append(ids, run.Job)
	}
	return ids
}

func TestAdmitRandom(t *testing.T) {
	admitted, extended := 0, 0
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 0xad1))
		c, reqs := admitCase(r)
		orig := cloneRequests(reqs)
		for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
			t.Run(fmt.Sprintf("seed=%d/hol=%v", seed, p.HeadOfLine), func(t *testing.T) {
				runs := admit(t, p, c, reqs)
				if diff := gocmp.Diff(orig, reqs); diff != "" {
					t.Fatalf("Admit modified the requests (-want +got):\n%s", diff)
				}
				checkAdmit(t, p, c, reqs, runs)
				again := admit(t, p, c, cloneRequests(reqs))
				if diff := gocmp.Diff(runs, again); diff != "" {
					t.Fatalf("Admit is not deterministic (-first +second):\n%s", diff)
				}
				admitted += len(runs)
				for _, run := range runs {
					if run.Extended {
						extended++
					}
				}
			})
		}
	}
	// The cases are not trivial.
	if admitted < 1000 || extended < 200 {
		t.Fatalf("only %d runs, %d extended, in the random cases", admitted, extended)
	}
}

// admitBench is 10,000 requests on 256 servers × 8 GPUs of two types,
// mixed 1/2/4/8 GPUs, half consolidated, about 1,500 of them running.
func admitBench() (allocation.Cluster, []placement.Request, int) {
	r := rand.New(rand.NewPCG(7, 7))
	var c allocation.Cluster
	for i := range 256 {
		typ := allocation.Accelerator("v100")
		if i%4 == 0 {
			typ = "k80"
		}
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("s%03d", i), Accelerator: typ, GPUs: 8})
	}
	g := placement.NewGangs(c)
	sizes := []int{1, 2, 4, 8}
	reqs := make([]placement.Request, 10000)
	running := 0
	for i := range reqs {
		q := placement.Request{
			ID:          fmt.Sprintf("job%05d", i),
			GPUs:        sizes[r.IntN(4)],
			Throughput:  map[allocation.Accelerator]float64{"v100": 2, "k80": 1},
			Consolidate: r.IntN(2) == 0,
		}
		if r.IntN(4) == 0 {
			q.Throughput = speed("v100")
		}
		if i < 1600 {
			// Running jobs are mostly small, so that ~1,500 fit.
			q.GPUs = []int{1, 1, 1, 1, 1, 1, 1, 1, 2, 4}[r.IntN(10)]
			usable := func(t allocation.Accelerator) bool { return q.Throughput[t] > 0 }
			place := g.Place
			if q.Consolidate {
				place = g.Consolidate
			}
			as, _, ok := place(q.GPUs, q.Worker, usable)
			if ok {
				q.Current = as
				running++
			}
		}
		reqs[i] = q
	}
	r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return c, reqs, running
}

func BenchmarkAdmit(b *testing.B) {
	c, reqs, running := admitBench()
	for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
		b.Run(fmt.Sprintf("hol=%v", p.HeadOfLine), func(b *testing.B) {
			n := 0
			for b.Loop() {
				runs, err := p.Admit(c, reqs)
				if err != nil {
					b.Fatal(err)
				}
				n = len(runs)
			}
			b.ReportMetric(float64(running), "running")
			b.ReportMetric(float64(n), "admitted")
		})
	}
}

// A chosen running request that cannot keep its GPUs (its server is gone)
// is placed in its turn, after the higher-priority new request.
func TestAdmitLostPlacementWaitsItsTurn(t *testing.T) {
	c := allocation.Cluster{Servers: append(servers("v100", 4, "s1"), servers("v100", 2, "s2", "s3")...)}
	reqs := []placement.Request{
		{ID: "H", GPUs: 4, Throughput: speed("v100"), Consolidate: true},
		{ID: "R", GPUs: 4, Current: one("gone", 4), Throughput: speed("v100")},
	}
	checkRuns(t, []placement.Run{
		{Job: "H", Accelerator: "v100", Assignments: one("s1", 4)},
		{Job: "R", Accelerator: "v100", Assignments: asg{{Server: "s2", GPUs: 2}, {Server: "s3", GPUs: 2}}},
	}, admit(t, placement.Priority{}, c, reqs))
}

func TestAdmitInvalidCurrent(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 8, "a", "b")}
	for _, cur := range []asg{{{Server: "a", GPUs: 8}, {Server: "b", GPUs: -4}}, {{Server: "a", GPUs: 0}}, {{Server: "a", GPUs: 3}, {Server: "b", GPUs: 1}}} {
		_, err := placement.Priority{}.Admit(c, []placement.Request{{ID: "R", GPUs: 4, Worker: 2, Current: cur, Throughput: speed("v100")}})
		if !errors.Is(err, allocation.ErrInvalid) || !strings.Contains(err.Error(), `"R"`) {
			t.Errorf("current %v: error %v", cur, err)
		}
	}
}
