package gandiva_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gandiva"
)

const v100 allocation.Accelerator = "v100"

func servers(n, gpus int) allocation.Cluster {
	var c allocation.Cluster
	for i := range n {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("s%d", i), Accelerator: v100, GPUs: gpus})
	}
	return c
}

func job(id string, gpus int) policy.Job {
	return policy.Job{ID: id, GPUs: gpus, StepsTotal: 1e6, Throughput: map[allocation.Accelerator]float64{v100: 1}}
}

// driver calls Allocate as a scheduler would: it feeds each decision's
// placement back into the jobs, checks every decision, and accounts the
// time each job runs.
type driver struct {
	t    *testing.T
	p    *gandiva.Gandiva
	snap policy.Snapshot
	d    *policy.Decision
	ran  map[string]time.Duration
}

func newDriver(t *testing.T, p *gandiva.Gandiva, c allocation.Cluster, jobs ...policy.Job) *driver {
	return &driver{t: t, p: p, snap: policy.Snapshot{Cluster: c, Jobs: jobs}, ran: map[string]time.Duration{}}
}

// at decides at time now, first crediting the previous decision's running
// jobs with the time since it.
func (dr *driver) at(now time.Duration) *policy.Decision {
	dr.t.Helper()
	if dr.d != nil {
		for id := range dr.d.Placement {
			dr.ran[id] += now - dr.snap.Now
		}
	}
	dr.snap.Now = now
	d, err := dr.p.Allocate(context.Background(), &dr.snap)
	if err != nil {
		dr.t.Fatalf("at %v: %v", now, err)
	}
	check(dr.t, &dr.snap, d)
	for i := range dr.snap.Jobs {
		dr.snap.Jobs[i].Placement = d.Placement[dr.snap.Jobs[i].ID]
	}
	dr.d = d
	return d
}

func (dr *driver) arrive(j policy.Job) {
	j.Arrival = dr.snap.Now
	dr.snap.Jobs = append(dr.snap.Jobs, j)
}

func (dr *driver) leave(id string) {
	dr.snap.Jobs = slices.DeleteFunc(dr.snap.Jobs, func(j policy.Job) bool { return j.ID == id })
}

func (dr *driver) running() []string { return slices.Sorted(maps.Keys(dr.d.Placement)) }

// check verifies a decision: the allocation validates; every running job
// has a grant matching its placement, on one type where it has throughput;
// pairs are symmetric, of equal GPU counts, on the same GPUs; no server
// gives out more GPUs than it has.
func check(t *testing.T, s *policy.Snapshot, d *policy.Decision) {
	t.Helper()
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatalf("at %v: %v", s.Now, err)
	}
	jobs := map[string]*policy.Job{}
	for i := range s.Jobs {
		jobs[s.Jobs[i].ID] = &s.Jobs[i]
	}
	used := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(d.Placement)) {
		as := d.Placement[id]
		j, g := jobs[id], d.Allocation[id]
		if j == nil {
			t.Fatalf("at %v: unknown job %q placed", s.Now, id)
		}
		n := 0
		var typ allocation.Accelerator
		for _, a := range as {
			srv, ok := s.Cluster.Server(a.Server)
			if !ok || a.GPUs < 1 || (typ != "" && srv.Accelerator != typ) {
				t.Fatalf("at %v: job %q: bad placement %v", s.Now, id, as)
			}
			typ = srv.Accelerator
			n += a.GPUs
		}
		if n != g.GPUs || n < j.GPUs {
			t.Fatalf("at %v: job %q: placed on %d GPUs, granted %d, requests %d", s.Now, id, n, g.GPUs, j.GPUs)
		}
		if !(j.Throughput[typ] > 0) {
			t.Fatalf("at %v: job %q runs on %s where its throughput is 0", s.Now, id, typ)
		}
		switch len(g.Pairs) {
		case 0:
			if g.Shares[typ] != 1 || len(g.Shares) != 1 {
				t.Fatalf("at %v: job %q alone: shares %v", s.Now, id, g.Shares)
			}
		case 1:
			for o, sh := range g.Pairs {
				oj := jobs[o]
				if oj == nil || oj.GPUs != j.GPUs || !cmp.Equal(d.Placement[o], as) || sh[typ] != 1 || len(g.Shares) != 0 {
					t.Fatalf("at %v: pair %q+%q: bad (gpus %d/%v, placements %v/%v)", s.Now, id, o, j.GPUs, oj, as, d.Placement[o])
				}
			}
		default:
			t.Fatalf("at %v: job %q has %d partners", s.Now, id, len(g.Pairs))
		}
		if len(g.Pairs) == 1 && slices.Collect(maps.Keys(g.Pairs))[0] < id {
			continue // the pair's GPUs count with its partner
		}
		for _, a := range as {
			used[a.Server] += a.GPUs
		}
	}
	for _, srv := range s.Cluster.Servers {
		if used[srv.ID] > srv.GPUs {
			t.Fatalf("at %v: server %s: %d GPUs given, %d exist", s.Now, srv.ID, used[srv.ID], srv.GPUs)
		}
	}
	for id := range d.Allocation {
		if _, ok := d.Placement[id]; !ok {
			t.Fatalf("at %v: job %q granted but not placed", s.Now, id)
		}
	}
}

// Acceptance check 1: two 1-GPU jobs on one GPU switch every 60 s and each
// runs 300 s of 600.
func TestQuantum(t *testing.T) {
	dr := newDriver(t, &gandiva.Gandiva{NoPacking: true}, servers(1, 1), job("a", 1), job("b", 1))
	var runs []string
	now := time.Duration(0)
	for now < 600*time.Second {
		d := dr.at(now)
		if r := dr.running(); len(r) != 1 {
			t.Fatalf("at %v: running %v, want exactly one", now, r)
		}
		runs = append(runs, dr.running()[0])
		if want := now + time.Minute; d.Wake != want {
			t.Fatalf("at %v: wake %v, want %v", now, d.Wake, want)
		}
		now = d.Wake
	}
	dr.at(now)
	if want := []string{"a", "b", "a", "b", "a", "b", "a", "b", "a", "b"}; !slices.Equal(runs, want) {
		t.Errorf("runs per slice %v, want %v", runs, want)
	}
	if want := map[string]time.Duration{"a": 300 * time.Second, "b": 300 * time.Second}; !maps.Equal(dr.ran, want) {
		t.Errorf("run time %v, want %v", dr.ran, want)
	}
	// A decision between boundaries (here a third job that arrives and
	// leaves) keeps the slice: the switch stays at the boundary.
	dr2 := newDriver(t, &gandiva.Gandiva{NoPacking: true}, servers(1, 1), job("a", 1), job("b", 1))
	dr2.at(0)
	dr2.arrive(job("c", 1))
	if d := dr2.at(30 * time.Second); d.Wake != time.Minute || !slices.Equal(dr2.running(), []string{"a"}) {
		t.Errorf("at 30 s: running %v, wake %v; want [a], 1m0s", dr2.running(), d.Wake)
	}
}

// Acceptance check 2: three 2-GPU jobs on a 4-GPU server: capacity 2, each
// runs 2/3 of the time.
func TestOversubscription(t *testing.T) {
	dr := newDriver(t, &gandiva.Gandiva{NoPacking: true}, servers(1, 4), job("a", 2), job("b", 2), job("c", 2))
	now := time.Duration(0)
	for now < 3*180*time.Second {
		d := dr.at(now)
		if r := dr.running(); len(r) != 2 {
			t.Fatalf("at %v: running %v, want 2", now, r)
		}
		now = d.Wake
	}
	dr.at(now)
	for _, id := range []string{"a", "b", "c"} {
		if got, want := dr.ran[id], 360*time.Second; got != want {
			t.Errorf("job %s ran %v of 540 s, want %v", id, got, want)
		}
	}
	if got := dr.p.State.Sets; len(got) != 1 || got[0].Class != 2 {
		t.Errorf("sets %+v, want one of class 2", got)
	}
}

// Acceptance check 3: with no more GPUs requested than the cluster has,
// nothing is packed and every job runs alone, even in a time-sliced set.
func TestNoPackingUnderCapacity(t *testing.T) {
	// Three 1-GPU jobs fill s0 (class 1); the 4-GPU job takes s1; a 1-GPU
	// job then arrives: 8 GPUs requested of 8, and s0 keeps room.
	dr := newDriver(t, &gandiva.Gandiva{}, servers(2, 4), job("a", 1), job("b", 1), job("c", 1), job("d", 4))
	now := time.Duration(0)
	for step := range 10 {
		if step == 3 {
			dr.arrive(job("e", 1))
		}
		d := dr.at(now)
		for id, g := range d.Allocation {
			if len(g.Pairs) > 0 {
				t.Fatalf("at %v: job %s packed with %v", now, id, g.Pairs)
			}
		}
		if len(d.Placement) != len(dr.snap.Jobs) {
			t.Fatalf("at %v: %d of %d jobs run", now, len(d.Placement), len(dr.snap.Jobs))
		}
		now += 45 * time.Second
	}
	// Oversubscribed by one job: the same cluster packs.
	dr.arrive(job("f", 1))
	dr.arrive(job("g", 1))
	packed := false
	for range 3 {
		for _, g := range dr.at(now).Allocation {
			packed = packed || len(g.Pairs) > 0
		}
		now += time.Minute
	}
	if !packed {
		t.Error("oversubscribed cluster: nothing packed")
	}
}

// pairCase is a packing measurement from Gavel's profiles (v100, 1 GPU):
// isolated and packed throughputs of a and b.
type pairCase struct {
	a, b             string
	isoA, isoB       float64
	packedA, packedB float64
	normSum          float64
	keep             bool
}

// Acceptance check 4, inlined: the numbers of
// shared/data/gandiva/gavel_packing_pairs_normalized.csv.
var pairCases = []pairCase{
	{"Transformer (batch size 64)", "A3C", 8.6178, 7.1758, 5.7685, 6.2001, 1.533, true},
	{"LM (batch size 20)", "LM (batch size 20)", 64.7425, 64.7425, 42.2694, 42.2694, 1.306, true},
	{"ResNet-50 (batch size 64)", "LM (batch size 20)", 4.3948, 64.7425, 3.0215, 24.798, 1.071, true},
	{"Recommendation (batch size 2048)", "ResNet-50 (batch size 64)", 7.4696, 4.3948, 1.5329, 2.6086, 0.799, false},
	{"CycleGAN", "ResNet-50 (batch size 128)", 4.4261, 2.4968, 0, 0, 0, false},
}

func pairJobs(c pairCase) (policy.Job, policy.Job) {
	a := policy.Job{ID: "a", GPUs: 1, StepsTotal: 1e6,
		Throughput: map[allocation.Accelerator]float64{v100: c.isoA},
		Colocated:  map[string]map[allocation.Accelerator]float64{"b": {v100: c.packedA}}}
	b := policy.Job{ID: "b", GPUs: 1, StepsTotal: 1e6,
		Throughput: map[allocation.Accelerator]float64{v100: c.isoB},
		Colocated:  map[string]map[allocation.Accelerator]float64{"a": {v100: c.packedB}}}
	return a, b
}

func TestPacking(t *testing.T) {
	for _, c := range pairCases {
		t.Run(c.a+"+"+c.b, func(t *testing.T) { testPair(t, c) })
	}
}

// testPair checks NormSum and the trial → measure → keep or revert cycle of
// two 1-GPU jobs on one GPU.
func testPair(t *testing.T, c pairCase) {
	a, b := pairJobs(c)
	if got := gandiva.NormSum(&a, &b, v100); got < c.normSum-1e-3 || got > c.normSum+1e-3 {
		t.Fatalf("NormSum %.4f, want %.3f", got, c.normSum)
	}
	if got := gandiva.NormSum(&a, &b, v100) >= gandiva.KeepThreshold; got != c.keep {
		t.Fatalf("keep %v, want %v", got, c.keep)
	}
	dr := newDriver(t, &gandiva.Gandiva{}, servers(1, 1), a, b)
	d := dr.at(0)
	if g := d.Allocation["a"]; len(g.Pairs["b"]) == 0 || d.Wake != time.Minute {
		t.Fatalf("at 0: grant %+v, wake %v; want a trial pair measured at 1m0s", g, d.Wake)
	}
	if st := dr.p.State.Pairs; len(st) != 1 || st[0].Status != gandiva.Trial {
		t.Fatalf("at 0: pairs %+v, want one trial", st)
	}
	// Half a quantum: not measured yet.
	dr.at(30 * time.Second)
	if st := dr.p.State.Pairs[0]; st.Status != gandiva.Trial {
		t.Fatalf("at 30 s: %+v, want still on trial", st)
	}
	d = dr.at(time.Minute)
	st := dr.p.State.Pairs[0]
	if st.NormSum < c.normSum-1e-3 || st.NormSum > c.normSum+1e-3 {
		t.Errorf("measured norm_sum %v, want %v", st.NormSum, c.normSum)
	}
	if c.keep {
		if st.Status != gandiva.Kept || len(d.Placement) != 2 || len(d.Allocation["b"].Pairs["a"]) == 0 || d.Wake != 0 {
			t.Fatalf("at 60 s: %+v, placement %v, wake %v; want kept, both running, no wake", st, d.Placement, d.Wake)
		}
		return
	}
	if st.Status != gandiva.Reverted || len(d.Placement) != 1 || d.Wake != 2*time.Minute {
		t.Fatalf("at 60 s: %+v, placement %v, wake %v; want reverted, one running, wake 2m0s", st, d.Placement, d.Wake)
	}
	// Never packed again: plain time-slicing from now on.
	for now := 2 * time.Minute; now <= 10*time.Minute; now += time.Minute {
		d := dr.at(now)
		if len(d.Placement) != 1 {
			t.Fatalf("at %v: placement %v, want one job alone", now, d.Placement)
		}
	}
}

// The same pairs, read from the data file.
func TestPackingData(t *testing.T) {
	rows := readPairs(t, "../../../shared/data/gandiva/gavel_packing_pairs_normalized.csv")
	for _, c := range pairCases {
		row, ok := rows[c.a+"|"+c.b]
		if !ok {
			t.Fatalf("pair %s + %s not in the data", c.a, c.b)
		}
		row.keep = c.keep
		t.Run(c.a+"+"+c.b, func(t *testing.T) {
			if row.normSum < c.normSum-1e-3 || row.normSum > c.normSum+1e-3 {
				t.Fatalf("data norm_sum %v, want %v", row.normSum, c.normSum)
			}
			testPair(t, row)
		})
	}
}

// Only jobs of equal GPU count are ever packed, even in one set.
func TestPackingEqualGPUs(t *testing.T) {
	p := &gandiva.Gandiva{State: gandiva.State{Sets: []gandiva.Set{{Class: 2, Servers: []string{"s0"}, Jobs: []string{"x", "y"}}}}}
	dr := newDriver(t, p, servers(1, 2), job("x", 2), job("y", 1))
	for now := time.Duration(0); now < 5*time.Minute; now += time.Minute {
		for id, g := range dr.at(now).Allocation {
			if len(g.Pairs) > 0 {
				t.Fatalf("at %v: %s packed with %v", now, id, g.Pairs)
			}
		}
	}
}

// Acceptance check 5: a 4-GPU job arrives on 2 × 4 GPUs, each server
// running two 1-GPU jobs: two jobs migrate and it runs on the freed server;
// not if migration costs too much.
func TestDefragmentation(t *testing.T) {
	setup := func(cost *float64) *driver {
		p := &gandiva.Gandiva{MigrationCostSeconds: cost, State: gandiva.State{Sets: []gandiva.Set{
			{Class: 1, Servers: []string{"s0"}, Jobs: []string{"a", "b"}},
			{Class: 1, Servers: []string{"s1"}, Jobs: []string{"c", "d"}},
		}}}
		dr := newDriver(t, p, servers(2, 4), job("a", 1), job("b", 1), job("c", 1), job("d", 1))
		before := dr.at(0)
		if want := []allocation.Assignment{{Server: "s1", GPUs: 1}}; !cmp.Equal(before.Placement["c"], want) {
			t.Fatalf("setup: c on %v, want %v", before.Placement["c"], want)
		}
		dr.arrive(job("big", 4))
		return dr
	}
	moved := func(dr *driver, before map[string][]allocation.Assignment) []string {
		var out []string
		for _, id := range []string{"a", "b", "c", "d"} {
			if !cmp.Equal(before[id], dr.d.Placement[id]) {
				out = append(out, id)
			}
		}
		return out
	}

	dr := setup(nil)
	before := maps.Clone(dr.d.Placement)
	d := dr.at(10 * time.Second)
	if got := moved(dr, before); len(got) != 2 {
		t.Errorf("moved %v, want exactly two jobs", got)
	}
	big := d.Placement["big"]
	if len(big) != 1 || big[0].GPUs != 4 {
		t.Fatalf("big on %v, want 4 GPUs of one server", big)
	}
	for id, as := range d.Placement {
		if id != "big" && as[0].Server == big[0].Server {
			t.Errorf("job %s shares big's server %s", id, big[0].Server)
		}
	}
	if dr.p.State.Migrations != 2 {
		t.Errorf("migrations %d, want 2", dr.p.State.Migrations)
	}

	prohibitive := 1e6
	dr = setup(&prohibitive)
	before = maps.Clone(dr.d.Placement)
	d = dr.at(10 * time.Second)
	if got := moved(dr, before); len(got) != 0 {
		t.Errorf("prohibitive cost: moved %v", got)
	}
	if _, ok := d.Placement["big"]; ok {
		t.Errorf("prohibitive cost: big runs on %v", d.Placement["big"])
	}

	// Free migration is also worth it; the gain rule is strict.
	zero := 0.0
	if d := setup(&zero).at(10 * time.Second); d.Placement["big"] == nil {
		t.Error("zero cost: big does not run")
	}
	// gain 4 × 60 = 240 GPU-s; cost 2 jobs × 1 GPU × 120 s = 240: not more.
	even := 120.0
	if d := setup(&even).at(10 * time.Second); d.Placement["big"] != nil {
		t.Error("cost equal to gain: big runs")
	}
}

// Migration picks the set needing the fewest moves.
func TestDefragmentationFewest(t *testing.T) {
	p := &gandiva.Gandiva{State: gandiva.State{Sets: []gandiva.Set{
		{Class: 1, Servers: []string{"s0"}, Jobs: []string{"a", "b", "c"}},
		{Class: 1, Servers: []string{"s1"}, Jobs: []string{"d"}},
	}}}
	dr := newDriver(t, p, servers(2, 4), job("a", 1), job("b", 1), job("c", 1), job("d", 1))
	dr.at(0)
	dr.arrive(job("big", 4))
	d := dr.at(time.Second)
	if want := []allocation.Assignment{{Server: "s1", GPUs: 4}}; !cmp.Equal(d.Placement["big"], want) {
		t.Errorf("big on %v, want %v", d.Placement["big"], want)
	}
	if want := []allocation.Assignment{{Server: "s0", GPUs: 1}}; !cmp.Equal(d.Placement["d"], want) {
		t.Errorf("d on %v, want %v", d.Placement["d"], want)
	}
	if dr.p.State.Migrations != 1 {
		t.Errorf("migrations %d, want 1", dr.p.State.Migrations)
	}
}

// Acceptance check 6: an elastic 1-GPU job alone on an idle 8-GPU server
// grows to 8; a 2-GPU job arriving makes it shrink in the same decision.
func TestGrowShrink(t *testing.T) {
	e := job("e", 1)
	e.Elastic = &policy.Elastic{MinGPUs: 1, MaxGPUs: 8, BatchSize: 32}
	dr := newDriver(t, &gandiva.Gandiva{}, servers(1, 8), e)
	d := dr.at(0)
	if g := d.Allocation["e"].GPUs; g != 8 {
		t.Fatalf("e has %d GPUs, want 8", g)
	}
	if d.Wake != 0 {
		t.Errorf("wake %v, want none", d.Wake)
	}
	dr.arrive(job("n", 2))
	d = dr.at(time.Minute)
	if d.Placement["n"] == nil || d.Allocation["n"].GPUs != 2 {
		t.Fatalf("new job: grant %+v placement %v, want running on 2 GPUs", d.Allocation["n"], d.Placement["n"])
	}
	if g := d.Allocation["e"].GPUs; g < 1 || g > 6 {
		t.Errorf("e has %d GPUs, want 1..6", g)
	}
	// MaxGPUs bounds growth; a job that is not elastic never grows.
	e.Elastic = &policy.Elastic{MaxGPUs: 2, BatchSize: 32}
	dr = newDriver(t, &gandiva.Gandiva{}, servers(1, 8), e, job("f", 1))
	d = dr.at(0)
	if d.Allocation["e"].GPUs != 2 || d.Allocation["f"].GPUs != 1 {
		t.Errorf("grants %+v, want e on 2 and f on 1", d.Allocation)
	}
}

// Acceptance check 7.
func TestTargets(t *testing.T) {
	got := gandiva.Targets(map[int]int{1: 6, 2: 10}, 8)
	if want := map[int]int{1: 3, 2: 5}; !maps.Equal(got, want) {
		t.Errorf("Targets = %v, want %v", got, want)
	}
	got = gandiva.Targets(map[int]int{1: 2, 8: 64, 4: 0}, 32)
	if want := map[int]int{1: 0, 8: 31, 4: 0}; !maps.Equal(got, want) {
		t.Errorf("Targets = %v, want %v", got, want)
	}
	if got := gandiva.Targets(map[int]int{1: 3}, 100); got[1] != 3 {
		t.Errorf("Targets above demand: %v, want 3", got)
	}
}

// Rebalancing: class 1 holds 6 of 8 GPUs (target 3), class 2 holds 2
// (target 5). A 2-GPU job arriving takes a class-1 server whose jobs merge
// onto the other class-1 servers; the next one does not, since class 1
// would fall below its target, and time-slices its class.
func TestRebalance(t *testing.T) {
	p := &gandiva.Gandiva{NoPacking: true, State: gandiva.State{Sets: []gandiva.Set{
		{Class: 1, Servers: []string{"s0"}, Jobs: []string{"a", "b"}},
		{Class: 1, Servers: []string{"s1"}, Jobs: []string{"c", "d"}},
		{Class: 1, Servers: []string{"s2"}, Jobs: []string{"e", "f"}},
		{Class: 2, Servers: []string{"s3"}, Jobs: []string{"x"}},
	}}}
	jobs := []policy.Job{job("a", 1), job("b", 1), job("c", 1), job("d", 1), job("e", 1), job("f", 1), job("x", 2)}
	dr := newDriver(t, p, servers(4, 2), jobs...)
	dr.at(0)
	dr.arrive(job("y", 2))
	dr.arrive(job("z", 2))
	d := dr.at(time.Second)
	if want := []allocation.Assignment{{Server: "s0", GPUs: 2}}; !cmp.Equal(d.Placement["y"], want) {
		t.Errorf("y on %v, want %v", d.Placement["y"], want)
	}
	classes := map[string]int{}
	for _, s := range dr.p.State.Sets {
		classes[s.Servers[0]] = s.Class
		if slices.Contains(s.Jobs, "z") && s.Class != 2 {
			t.Errorf("z in a set of class %d", s.Class)
		}
	}
	if want := map[string]int{"s0": 2, "s1": 1, "s2": 1, "s3": 2}; !maps.Equal(classes, want) {
		t.Errorf("classes %v, want %v", classes, want)
	}
	// Class 1 now time-slices 6 jobs on 4 GPUs, class 2 three on 4.
	small := 0
	for id := range d.Placement {
		if strings.Contains("abcdef", id) {
			small++
		}
	}
	if small != 4 || len(d.Placement) != 6 {
		t.Errorf("running %v, want 4 class-1 jobs and 2 class-2 jobs", dr.running())
	}
	if dr.p.State.Migrations != 2 {
		t.Errorf("migrations %d, want 2", dr.p.State.Migrations)
	}
}

// A set whose jobs all left returns to the free pool; a trial pair
// dissolves when a member leaves.
func TestDepartures(t *testing.T) {
	dr := newDriver(t, &gandiva.Gandiva{}, servers(2, 1), job("a", 1), job("b", 1), job("c", 1))
	dr.at(0)
	if len(dr.p.State.Pairs) != 1 {
		t.Fatalf("pairs %+v, want one trial", dr.p.State.Pairs)
	}
	pair := dr.p.State.Pairs[0].Jobs
	dr.leave(pair[0])
	d := dr.at(10 * time.Second)
	if len(dr.p.State.Pairs) != 0 || len(d.Placement) != 2 {
		t.Fatalf("after %s left: pairs %+v, placement %v", pair[0], dr.p.State.Pairs, d.Placement)
	}
	for _, id := range slices.Clone(dr.running()) {
		dr.leave(id)
	}
	dr.at(20 * time.Second)
	if len(dr.p.State.Sets) != 0 {
		t.Errorf("sets %+v, want none", dr.p.State.Sets)
	}
}

// Jobs only run where their throughput is positive.
func TestTypes(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a0", Accelerator: "k80", GPUs: 4}, {ID: "b0", Accelerator: v100, GPUs: 4},
	}}
	j := job("j", 2)
	j.Throughput = map[allocation.Accelerator]float64{"k80": 0, v100: 3}
	dr := newDriver(t, &gandiva.Gandiva{}, c, j)
	d := dr.at(0)
	if want := []allocation.Assignment{{Server: "b0", GPUs: 2}}; !cmp.Equal(d.Placement["j"], want) {
		t.Errorf("placement %v, want %v", d.Placement["j"], want)
	}
}

// A job larger than a server gets a set of whole servers.
func TestMultiServer(t *testing.T) {
	dr := newDriver(t, &gandiva.Gandiva{NoPacking: true}, servers(4, 4), job("big", 8), job("huge", 8), job("more", 8))
	d := dr.at(0)
	if len(d.Placement) != 2 {
		t.Fatalf("placement %v, want two 8-GPU jobs", d.Placement)
	}
	for id, as := range d.Placement {
		if len(as) != 2 {
			t.Errorf("%s on %v, want two whole servers", id, as)
		}
	}
	if d.Wake != time.Minute {
		t.Errorf("wake %v, want 1m0s", d.Wake)
	}
}

func TestInvalid(t *testing.T) {
	ctx := context.Background()
	// A bad job is left out with its reason; Strict fails the round.
	bad := job("bad", 1)
	bad.Throughput[v100] = -1
	s := &policy.Snapshot{Cluster: servers(1, 1), Jobs: []policy.Job{bad}}
	d, err := (&gandiva.Gandiva{}).Allocate(ctx, s)
	if err != nil || len(d.Placement) != 0 || !strings.HasPrefix(d.Unscheduled["bad"], "throughput") {
		t.Errorf("negative throughput: %+v, %v; want bad left out for throughput", d, err)
	}
	_, err = policy.Strict(&gandiva.Gandiva{}).Allocate(ctx, s)
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "throughput") {
		t.Errorf("Strict, negative throughput: %v", err)
	}
	e := job("e", 0)
	e.Elastic = &policy.Elastic{MinGPUs: 16, BatchSize: 1}
	s = &policy.Snapshot{Cluster: servers(1, 8), Jobs: []policy.Job{e}}
	d, err = (&gandiva.Gandiva{}).Allocate(ctx, s)
	if err != nil || len(d.Placement) != 0 || !strings.HasPrefix(d.Unscheduled["e"], "gpus") {
		t.Errorf("elastic job too large: %+v, %v; want e left out for gpus", d, err)
	}
	_, err = policy.Strict(&gandiva.Gandiva{}).Allocate(ctx, s)
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `"e"`) || !strings.Contains(err.Error(), "gpus") {
		t.Errorf("Strict, elastic job too large: %v", err)
	}
	for _, cfg := range []string{`{"quantum_seconds": -1}`, `{"migration_cost_seconds": -5}`, `{"quantum": 60}`} {
		if _, err := policy.New("gandiva", []byte(cfg)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("config %s: %v, want ErrInvalidConfig", cfg, err)
		}
	}
	// A State that does not fit the snapshot is repaired, not trusted.
	p := &gandiva.Gandiva{State: gandiva.State{
		Sets: []gandiva.Set{
			{Class: 1, Servers: []string{"nowhere"}, Jobs: []string{"a"}},
			{Class: 0, Servers: []string{"s0", "s0"}, Jobs: []string{"a"}},
			{Class: 3, Servers: []string{"s0"}, Jobs: []string{"a", "a", "ghost"}},
			{Class: 1, Servers: []string{"s0"}, Jobs: []string{"b"}},
		},
		Pairs: []gandiva.Pair{{Jobs: [2]string{"a", "a"}, Status: gandiva.Kept}, {Jobs: [2]string{"a", "b"}, Status: "weird"}},
		Grown: map[string]int{"a": -3, "ghost": 2},
	}}
	dr := newDriver(t, p, servers(2, 1), job("a", 1), job("b", 1))
	if d := dr.at(0); len(d.Placement) != 2 {
		t.Errorf("placement %v, want both jobs", d.Placement)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&gandiva.Gandiva{}).Allocate(ctx, &policy.Snapshot{Cluster: servers(1, 1), Jobs: []policy.Job{job("a", 1)}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRegistered(t *testing.T) {
	cfg := `{"quantum_seconds":30,"migration_cost_seconds":0,"no_packing":true,"state":{"sets":[{"class":1,"servers":["s0"],"jobs":["a"],"slice_start":0}],"migrations":2}}`
	p, err := policy.New("gandiva", []byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := p.(*gandiva.Gandiva)
	if !ok || p.Name() != "gandiva" || g.QuantumSeconds != 30 || g.MigrationCostSeconds == nil || *g.MigrationCostSeconds != 0 || !g.NoPacking {
		t.Fatalf("New = %#v", p)
	}
	out, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != cfg {
		t.Errorf("round trip:\n got %s\nwant %s", out, cfg)
	}
	if d, err := p.Allocate(context.Background(), &policy.Snapshot{Cluster: servers(1, 1), Jobs: []policy.Job{job("a", 1), job("b", 1)}}); err != nil || d.Wake != 30*time.Second {
		t.Errorf("Allocate: %v, wake %v; want a 30 s slice", err, d.Wake)
	}
	if p, err := policy.New("gandiva", nil); err != nil || !cmp.Equal(p, &gandiva.Gandiva{}) {
		t.Errorf("New(nil) = %#v, %v", p, err)
	}
}

// FuzzState feeds arbitrary State JSON: Allocate repairs what does not fit
// the snapshot and still decides validly, never panicking.
func FuzzState(f *testing.F) {
	f.Add(`{"sets":[{"class":1,"servers":["s0"],"jobs":["a","b"],"slice_start":0}],"pairs":[{"jobs":["a","b"],"status":"trial","since":0,"running":true}]}`)
	f.Add(`{"sets":[{"class":2,"servers":["s1","s0"],"jobs":["c","a"],"slice_start":1e300}],"grown":{"c":64}}`)
	f.Add(`{"pairs":[{"jobs":["b","a"],"status":"kept"},{"jobs":["a","b"],"status":"reverted"}]}`)
	f.Fuzz(func(t *testing.T, state string) {
		var st gandiva.State
		if json.Unmarshal([]byte(state), &st) != nil {
			return
		}
		e := job("c", 2)
		e.Elastic = &policy.Elastic{MaxGPUs: 8, BatchSize: 1}
		a, b := job("a", 1), job("b", 1)
		a.Colocated = map[string]map[allocation.Accelerator]float64{"b": {v100: 0.7}}
		dr := newDriver(t, &gandiva.Gandiva{State: st}, servers(2, 2), a, b, e)
		dr.at(time.Minute)
		dr.at(2 * time.Minute)
	})
}

// randomCluster returns 1 to 6 servers of 1 to 8 GPUs, of one or two types.
func randomCluster(rng *rand.Rand) allocation.Cluster {
	var c allocation.Cluster
	types := []allocation.Accelerator{v100, "k80"}[:1+rng.IntN(2)]
	for i := range 1 + rng.IntN(6) {
		c.Servers = append(c.Servers, allocation.Server{
			ID: fmt.Sprintf("s%d", i), Accelerator: types[rng.IntN(len(types))], GPUs: []int{1, 2, 4, 8}[rng.IntN(4)]})
	}
	return c
}

// randomJob returns a job that can run on c, sometimes elastic, sometimes
// slow or unable to run on a type, with co-located throughputs with some
// of others.
func randomJob(rng *rand.Rand, c allocation.Cluster, id string, others []policy.Job) policy.Job {
	for {
		j := policy.Job{ID: id, GPUs: []int{1, 1, 2, 4, 8}[rng.IntN(5)], StepsTotal: 1e6, Throughput: map[allocation.Accelerator]float64{}}
		for _, t := range c.Types() {
			if rng.IntN(4) > 0 {
				j.Throughput[t] = 1 + rng.Float64()
			}
		}
		if rng.IntN(5) == 0 {
			j.Elastic = &policy.Elastic{MaxGPUs: j.GPUs * (1 + rng.IntN(4)), BatchSize: 8}
		}
		for _, o := range others {
			if rng.IntN(2) == 0 {
				if j.Colocated == nil {
					j.Colocated = map[string]map[allocation.Accelerator]float64{}
				}
				j.Colocated[o.ID] = map[allocation.Accelerator]float64{}
				for t, x := range j.Throughput {
					j.Colocated[o.ID][t] = x * rng.Float64()
				}
			}
		}
		if j.Runnable(c) == nil {
			return j
		}
	}
}

// Properties over random sequences of arrivals, departures and wake-ups:
// every decision checks (capacity, validity, types, pairs), and the same
// snapshot with the same State, also after a JSON round trip, gives the
// same decision and State.
func TestProperties(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c := randomCluster(rng)
		cost := []float64{0, 5, 30, 1e4}[rng.IntN(4)]
		dr := newDriver(t, &gandiva.Gandiva{MigrationCostSeconds: &cost, QuantumSeconds: []float64{0, 20}[rng.IntN(2)]}, c)
		next := 0
		now := time.Duration(0)
		for step := range 40 {
			switch k := rng.IntN(6); {
			case k < 3:
				for range 1 + rng.IntN(3) {
					j := randomJob(rng, c, fmt.Sprintf("j%03d", next), dr.snap.Jobs)
					next++
					dr.arrive(j)
				}
			case k == 3 && len(dr.snap.Jobs) > 0:
				dr.leave(dr.snap.Jobs[rng.IntN(len(dr.snap.Jobs))].ID)
			}
			// The Colocated maps must only name jobs still active.
			for i := range dr.snap.Jobs {
				for o := range dr.snap.Jobs[i].Colocated {
					if !slices.ContainsFunc(dr.snap.Jobs, func(j policy.Job) bool { return j.ID == o }) {
						delete(dr.snap.Jobs[i].Colocated, o)
					}
				}
			}
			state, err := json.Marshal(dr.p)
			if err != nil {
				t.Fatal(err)
			}
			snap := dr.snap
			snap.Now, snap.Jobs = now, slices.Clone(snap.Jobs)
			d := dr.at(now)
			var twin gandiva.Gandiva
			if err := json.Unmarshal(state, &twin); err != nil {
				t.Fatal(err)
			}
			d2, err := twin.Allocate(context.Background(), &snap)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(d, d2); diff != "" {
				t.Fatalf("seed %d step %d: decision differs after a State round trip:\n%s", seed, step, diff)
			}
			if diff := cmp.Diff(dr.p.State, twin.State); diff != "" {
				t.Fatalf("seed %d step %d: State differs:\n%s", seed, step, diff)
			}
			if d.Wake > 0 && rng.IntN(3) > 0 {
				now = d.Wake
			} else {
				now += time.Duration(1+rng.IntN(90)) * time.Second
			}
		}
	}
}

// benchSnapshot returns 2000 jobs of 1, 2, 4 and 8 GPUs on 256 servers of
// 8 GPUs, oversubscribed about 3.7 times; half the jobs have a co-located
// throughput with a neighbour of their size.
func benchSnapshot() *policy.Snapshot {
	rng := rand.New(rand.NewPCG(1, 2))
	var jobs []policy.Job
	for i := range 2000 {
		jobs = append(jobs, job(fmt.Sprintf("j%04d", i), []int{1, 2, 4, 8}[rng.IntN(4)]))
	}
	for i := 0; i+1 < len(jobs); i += 2 {
		if jobs[i].GPUs == jobs[i+1].GPUs {
			jobs[i].Colocated = map[string]map[allocation.Accelerator]float64{jobs[i+1].ID: {v100: 0.6}}
			jobs[i+1].Colocated = map[string]map[allocation.Accelerator]float64{jobs[i].ID: {v100: 0.5}}
		}
	}
	return &policy.Snapshot{Cluster: servers(256, 8), Jobs: jobs}
}

// BenchmarkGandiva decides for benchSnapshot at successive quantum
// boundaries, after a first decision that placed every job.
func BenchmarkGandiva(b *testing.B) {
	s := benchSnapshot()
	p := &gandiva.Gandiva{}
	ctx := context.Background()
	if _, err := p.Allocate(ctx, s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.Now = time.Duration(i+1) * time.Minute
		if _, err := p.Allocate(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate2000 is the share of BenchmarkGandiva spent in
// policy.Validate, which every decision runs first.
func BenchmarkValidate2000(b *testing.B) {
	s := benchSnapshot()
	for b.Loop() {
		if err := policy.Validate(s); err != nil {
			b.Fatal(err)
		}
	}
}

// readPairs reads Gavel's packing measurements for 1-GPU pairs on v100,
// keyed "job a|job b"; it skips the test when the file is absent.
func readPairs(t *testing.T, path string) map[string]pairCase {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s absent", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	out := map[string]pairCase{}
	for _, r := range recs[1:] {
		if r[col["worker_type"]] != string(v100) || r[col["scale_a"]] != "1" || r[col["scale_b"]] != "1" {
			continue
		}
		num := func(name string) float64 {
			x, err := strconv.ParseFloat(r[col[name]], 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return x
		}
		c := pairCase{a: r[col["job_a"]], b: r[col["job_b"]],
			isoA: num("isolated_tput_a"), isoB: num("isolated_tput_b"),
			packedA: num("packed_tput_a"), packedB: num("packed_tput_b"), normSum: num("norm_sum")}
		out[c.a+"|"+c.b] = c
	}
	return out
}
