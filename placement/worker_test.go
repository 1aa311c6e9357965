package placement_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/workers1.golden from the current code")

// gangOp is one call of Gangs.Place or Gangs.Consolidate.
type gangOp struct {
	K, W        int
	Consolidate bool
	Only        allocation.Accelerator // empty: any type
}

// gangCase is a random cluster of 1–3 types and servers of 1–8 GPUs, and
// up to 12 gangs to place in turn; with workers, each gang has a worker
// size of 1, 2, 3 or 4 and GPUs a multiple of it.
func gangCase(r *rand.Rand, workers bool) (allocation.Cluster, []gangOp) {
	types := []allocation.Accelerator{"a100", "k80", "v100"}[:1+r.IntN(3)]
	var c allocation.Cluster
	for i := range 1 + r.IntN(8) {
		c.Servers = append(c.Servers, allocation.Server{
			ID:          fmt.Sprintf("s%d", i),
			Accelerator: types[r.IntN(len(types))],
			GPUs:        1 + r.IntN(8),
		})
	}
	ops := make([]gangOp, 1+r.IntN(12))
	for i := range ops {
		op := gangOp{K: 1 + r.IntN(12), W: 1, Consolidate: r.IntN(3) == 0}
		if r.IntN(2) == 0 {
			op.Only = types[r.IntN(len(types))]
		}
		if workers {
			op.W = 1 + r.IntN(4)
			op.K = op.W * (1 + r.IntN(4))
		}
		ops[i] = op
	}
	return c, ops
}

// gangPlace runs op on g.
func gangPlace(g *placement.Gangs, op gangOp) ([]allocation.Assignment, allocation.Accelerator, bool) {
	use := anyType
	if op.Only != "" {
		use = onlyType(op.Only)
	}
	if op.Consolidate {
		return g.Consolidate(op.K, op.W, use)
	}
	return g.Place(op.K, op.W, use)
}

// digest is a short hash of v printed with %+v, which sorts map keys and
// prints floats exactly enough to tell them apart.
func digest(v any) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%+v", v))
	return hex.EncodeToString(h[:8])
}

// workers1Outputs computes, for every case of the golden file, a digest of
// what the placement primitives return with every worker size 1.
func workers1Outputs(t *testing.T) map[string]string {
	out := make(map[string]string)
	for seed := range uint64(100) {
		c, ops := gangCase(rand.New(rand.NewPCG(seed, 0x9a9)), false)
		g := placement.NewGangs(c)
		var res []any
		for _, op := range ops {
			as, typ, ok := gangPlace(g, op)
			res = append(res, as, typ, ok, g.Free())
		}
		out[fmt.Sprintf("gangs/%d", seed)] = digest(res)
	}
	for seed := range uint64(200) {
		c, reqs := admitCase(rand.New(rand.NewPCG(seed, 0xad1)))
		var res []any
		for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
			runs, err := p.Admit(c, reqs)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, runs)
		}
		out[fmt.Sprintf("admit/%d", seed)] = digest(res)
	}
	for seed := range uint64(200) {
		in := randomInstance(rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), 12, 40)
		var res []any
		for _, p := range packers {
			for _, split := range []bool{false, true} {
				got, err := p.pack(in.free(t), in.items, placement.Options{Split: split})
				if err != nil {
					t.Fatal(err)
				}
				res = append(res, summary(got))
			}
		}
		out[fmt.Sprintf("pack/%d", seed)] = digest(res)
	}
	mech := map[string]func() (allocation.Cluster, allocation.Allocation){"pairs": mechPairs}
	for seed := range uint64(4) {
		mech[fmt.Sprintf("small/%d", seed)] = func() (allocation.Cluster, allocation.Allocation) { return mechSmall(seed) }
		mech[fmt.Sprintf("mixture/%d", seed)] = func() (allocation.Cluster, allocation.Allocation) { return mechMixture(seed) }
		mech[fmt.Sprintf("sizes/%d", seed)] = func() (allocation.Cluster, allocation.Allocation) {
			return mechRandom(seed, 12, []int{8, 4, 2}, []allocation.Accelerator{"k80", "v100"},
				30, []int{1, 2, 3, 4, 6, 8}, []float64{0.4, 0.2, 0.1, 0.15, 0.05, 0.1})
		}
	}
	for name, instance := range mech {
		c, a := instance()
		var l placement.Ledger
		var res []any
		for range 60 {
			r, next, err := placement.Mechanism{}.Next(l, c, a)
			if err != nil {
				t.Fatal(err)
			}
			res, l = append(res, r), next
		}
		out["mechanism/"+name] = digest(append(res, l))
	}
	return out
}

// TestWorkers1Unchanged compares the results of every primitive with every
// worker size 1 with those recorded in testdata/workers1.golden before
// worker sizes existed: with workers of one GPU, nothing may change. Run
// with -update to rewrite the file after a deliberate change; the last one
// was Admit's: a preempted running request backfills only on its own GPUs
// (admit cases 77, 127, 134, 156 and 160 changed).
func TestWorkers1Unchanged(t *testing.T) {
	path := filepath.Join("testdata", "workers1.golden")
	got := workers1Outputs(t)
	keys := slices.Sorted(maps.Keys(got))
	if *updateGolden {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %s\n", k, got[k])
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := make(map[string]string)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok {
			want[k] = v
		}
	}
	if len(want) != len(got) {
		t.Fatalf("%d cases in %s, %d computed", len(want), path, len(got))
	}
	for _, k := range keys {
		if want[k] != got[k] {
			t.Errorf("%s: result changed (digest %s, recorded %s)", k, got[k], want[k])
		}
	}
}

// TestWorkersIssueCase is the case of the issue: two 8-GPU servers, a
// running 6-GPU job on 3+3, and a new 8-GPU job. In workers of 1 it is
// split 5+3; in workers of 2 or 4 each server has room for 4 (⌊5/w⌋·w),
// so it runs 4+4 and never 5+3; as one worker of 8 it cannot run at all.
// Every primitive is checked on the same case.
func TestWorkersIssueCase(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 8, "s1", "s2")}
	held := asg{{Server: "s1", GPUs: 3}, {Server: "s2", GPUs: 3}}
	shares := func(x float64) map[allocation.Accelerator]float64 {
		return map[allocation.Accelerator]float64{"v100": x}
	}
	for _, tc := range []struct {
		w int
		// want is where the 8-GPU job goes; nil: it does not run.
		want asg
		// small is where a 2-GPU job behind it goes (Admit and Next).
		small asg
		// backfilled is where a 4-GPU job the counts left out goes
		// (Next), once the 8-GPU job could not be placed.
		backfilled asg
	}{
		{1, asg{{Server: "s1", GPUs: 5}, {Server: "s2", GPUs: 3}}, one("s2", 2), nil},
		{2, asg{{Server: "s1", GPUs: 4}, {Server: "s2", GPUs: 4}}, asg{{Server: "s1", GPUs: 1}, {Server: "s2", GPUs: 1}}, nil},
		{4, asg{{Server: "s1", GPUs: 4}, {Server: "s2", GPUs: 4}}, asg{{Server: "s1", GPUs: 1}, {Server: "s2", GPUs: 1}}, nil},
		{8, nil, one("s1", 2), one("s2", 4)},
	} {
		t.Run(fmt.Sprintf("w=%d", tc.w), func(t *testing.T) {
			// Gangs: Place puts it as wanted; Consolidate never does,
			// since one empty server could hold it.
			g := placement.NewGangs(c)
			if _, ok := g.Keep(held, 6, anyType); !ok {
				t.Fatal("Keep 3+3 refused")
			}
			if got, _, _ := g.Consolidate(8, tc.w, anyType); got != nil {
				t.Errorf("Consolidate(8, %d) = %v", tc.w, got)
			}
			got, _, _ := g.Place(8, tc.w, anyType)
			checkDiff(t, "Gangs.Place", tc.want, got)

			// Pack with Split, onto the same free GPUs.
			free, err := placement.NewFree(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range held {
				if free, err = free.Take(h.Server, placement.Demand{GPUs: h.GPUs}); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range packers {
				pk, err := p.pack(free, []placement.Item{{ID: "A", Demand: placement.Demand{GPUs: 8}, Worker: tc.w}}, placement.Options{Split: true})
				if err != nil {
					t.Fatal(err)
				}
				checkDiff(t, p.name, tc.want, pk.Placed["A"])
			}

			// Admit: the running job keeps 3+3, the new one follows.
			runs := admit(t, placement.Priority{}, c, []placement.Request{
				{ID: "R", GPUs: 6, Worker: 3, Current: held, Throughput: speed("v100")},
				{ID: "A", GPUs: 8, Worker: tc.w, Throughput: speed("v100")},
				{ID: "B", GPUs: 2, Throughput: speed("v100")},
			})
			checkDiff(t, "Admit R", held, runOf(runs, "R").Assignments)
			checkDiff(t, "Admit A", tc.want, runOf(runs, "A").Assignments)
			checkDiff(t, "Admit B", tc.small, runOf(runs, "B").Assignments)

			// Next: B1 and B2 hold 3 GPUs each, one per server (seeded as
			// running). A, B1, B2 and D are chosen by counts (16 GPUs),
			// E is not; E backfills when A cannot be placed.
			a := allocation.Allocation{
				"A":  {GPUs: 8, GPUsPerWorker: tc.w, Shares: shares(1)},
				"B1": {GPUs: 3, Shares: shares(1)},
				"B2": {GPUs: 3, GPUsPerWorker: 3, Shares: shares(1)},
				"D":  {GPUs: 2, Shares: shares(0.5)},
				"E":  {GPUs: 4, Shares: shares(0.25)},
			}
			l := placement.Ledger{}.Seed(map[string][]allocation.Assignment{"B1": one("s1", 3), "B2": one("s2", 3)})
			r, _, err := placement.Mechanism{}.Next(l, c, a)
			if err != nil {
				t.Fatal(err)
			}
			placed := r.Placement()
			checkDiff(t, "Next B1", one("s1", 3), placed["B1"])
			checkDiff(t, "Next B2", one("s2", 3), placed["B2"])
			checkDiff(t, "Next A", tc.want, placed["A"])
			checkDiff(t, "Next D", tc.small, placed["D"])
			checkDiff(t, "Next E", tc.backfilled, placed["E"])
			checkRound(t, c, a, r)
		})
	}
}

func checkDiff(t *testing.T, what string, want, got asg) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// minServers returns the fewest servers among rooms (in any order) that add
// up to k, or -1 if they do not.
func minServers(rooms []int, k int) int {
	rooms = slices.Clone(rooms)
	slices.SortFunc(rooms, func(a, b int) int { return b - a })
	for n, r := range rooms {
		if k <= 0 {
			return n
		}
		k -= r
	}
	if k <= 0 {
		return len(rooms)
	}
	return -1
}

// TestGangsWorkersRandom places random gangs in workers of 1–4 GPUs and
// checks every result against the rules worked out from the free GPUs:
// each server gets a multiple of the worker size and no more than it has
// free; a gang runs if and only if some usable type has room for it in
// whole workers (for Consolidate, on as few servers as could ever hold it),
// on the fewest servers possible, the first type by name among the best;
// on one server, the fullest that holds it.
func TestGangsWorkersRandom(t *testing.T) {
	placed, split := 0, 0
	for seed := range uint64(1000) {
		c, ops := gangCase(rand.New(rand.NewPCG(seed, 0x3a7)), true)
		g := placement.NewGangs(c)
		free := make(map[string]int)
		for _, s := range c.Servers {
			free[s.ID] = s.GPUs
		}
		for i, op := range ops {
			best, bestType := -1, allocation.Accelerator("")
			for _, typ := range c.Types() {
				if op.Only != "" && typ != op.Only {
					continue
				}
				var rooms, caps []int
				for _, s := range c.Servers {
					if s.Accelerator == typ {
						rooms = append(rooms, free[s.ID]/op.W*op.W)
						caps = append(caps, s.GPUs/op.W*op.W)
					}
				}
				n := minServers(rooms, op.K)
				if n < 0 || (op.Consolidate && n > minServers(caps, op.K)) {
					continue
				}
				if best < 0 || n < best {
					best, bestType = n, typ
				}
			}
			as, typ, ok := gangPlace(g, op)
			name := fmt.Sprintf("seed %d op %d %+v", seed, i, op)
			if ok != (best >= 0) {
				t.Fatalf("%s: ok = %v (%v), want %v", name, ok, as, best >= 0)
			}
			if !ok {
				continue
			}
			placed++
			if len(as) > 1 {
				split++
			}
			if typ != bestType || len(as) != best {
				t.Fatalf("%s: %v on %s, want %d servers of %s", name, as, typ, best, bestType)
			}
			sum := 0
			for _, a := range as {
				s, _ := c.Server(a.Server)
				if s.Accelerator != typ || a.GPUs <= 0 || a.GPUs%op.W != 0 || a.GPUs > free[a.Server] {
					t.Fatalf("%s: %v: %+v does not fit whole workers on %+v with %d free", name, as, a, s, free[a.Server])
				}
				sum += a.GPUs
			}
			if sum != op.K {
				t.Fatalf("%s: %v holds %d GPUs", name, as, sum)
			}
			if len(as) == 1 {
				for _, s := range c.Servers {
					if s.Accelerator == typ && free[s.ID] >= op.K && free[s.ID] < free[as[0].Server] {
						t.Fatalf("%s: on %v, but %s is fuller and holds it", name, as, s.ID)
					}
				}
			}
			for _, a := range as {
				free[a.Server] -= a.GPUs
			}
			left := 0
			for _, f := range free {
				left += f
			}
			if g.Free() != left {
				t.Fatalf("%s: Free = %d, want %d", name, g.Free(), left)
			}
		}
	}
	t.Logf("%d gangs placed, %d split", placed, split)
	if placed < 2000 || split < 300 {
		t.Fatalf("only %d gangs placed, %d split", placed, split)
	}
}

// TestAdmitWorkersRandom checks Admit's invariants (checkAdmit, which
// includes whole workers on every server and the fewest servers for
// consolidated requests) on random requests in workers of 1–4 GPUs.
func TestAdmitWorkersRandom(t *testing.T) {
	runs, split := 0, 0
	for seed := range uint64(500) {
		c, reqs := admitCaseW(rand.New(rand.NewPCG(seed, 0xad2)), true)
		for _, p := range []placement.Priority{{}, {HeadOfLine: true}} {
			t.Run(fmt.Sprintf("seed=%d/hol=%v", seed, p.HeadOfLine), func(t *testing.T) {
				got := admit(t, p, c, reqs)
				checkAdmit(t, p, c, reqs, got)
				for _, run := range got {
					runs++
					if len(run.Assignments) > 1 && reqs[slices.IndexFunc(reqs, func(q placement.Request) bool { return q.ID == run.Job })].Worker > 1 {
						split++
					}
				}
			})
		}
	}
	t.Logf("%d runs, %d split in workers of several GPUs", runs, split)
	if runs < 1000 || split < 50 {
		t.Fatalf("only %d runs, %d split in workers of several GPUs", runs, split)
	}
}

// withWorkers gives the items of in random worker sizes of 1–4 (some left
// zero) and rounds their GPUs up to whole workers.
func withWorkers(r *rand.Rand, in instance) instance {
	in.items = slices.Clone(in.items)
	for i := range in.items {
		it := &in.items[i]
		it.Worker = []int{0, 1, 2, 3, 4}[r.IntN(5)]
		if w := max(it.Worker, 1); it.Demand.GPUs%w != 0 {
			it.Demand.GPUs += w - it.Demand.GPUs%w
		}
	}
	return in
}

// TestPackWorkersRandom checks packings of random items in workers of 1–4
// GPUs (checkPacking: capacity in every dimension, whole workers on every
// server, CPU and memory proportional to GPUs), and that the same items
// with every worker size 1 pack as they do with none.
func TestPackWorkersRandom(t *testing.T) {
	split := 0
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		in := withWorkers(r, randomInstance(r, 12, 40))
		ones := instance{servers: in.servers, taken: in.taken, items: slices.Clone(in.items)}
		for i := range ones.items {
			ones.items[i].Worker = 0
		}
		for _, p := range packers {
			for _, opt := range []placement.Options{{}, {Split: true}} {
				got, err := p.pack(in.free(t), in.items, opt)
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, p.name, err)
				}
				t.Run("", func(t *testing.T) { checkPacking(t, in.servers, in.taken, in.items, opt, got) })
				if t.Failed() {
					t.Fatalf("seed %d %s split=%v failed", seed, p.name, opt.Split)
				}
				for _, it := range in.items {
					if len(got.Placed[it.ID]) > 1 && it.Worker > 1 {
						split++
					}
				}
				zero, err := p.pack(ones.free(t), ones.items, opt)
				if err != nil {
					t.Fatal(err)
				}
				for i := range ones.items {
					ones.items[i].Worker = 1
				}
				unit, err := p.pack(ones.free(t), ones.items, opt)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(summary(zero), summary(unit)); d != "" {
					t.Fatalf("seed %d %s: workers of 1 differ from none (-none +1):\n%s", seed, p.name, d)
				}
				for i := range ones.items {
					ones.items[i].Worker = 0
				}
			}
		}
	}
	t.Logf("%d items split in workers of several GPUs", split)
	if split < 100 {
		t.Fatalf("only %d items split in workers of several GPUs", split)
	}
}

// mechWorkers is a random instance on servers of 8, 6 and 4 GPUs of two
// types with gangs of 1–8 GPUs, each given a worker size that divides its
// GPUs (at random, so 6-GPU gangs come in workers of 1, 2, 3 or 6).
func mechWorkers(seed uint64) (allocation.Cluster, allocation.Allocation) {
	c, a := mechRandom(seed, 10, []int{8, 6, 4}, []allocation.Accelerator{"k80", "v100"},
		28, []int{1, 2, 3, 4, 6, 8}, []float64{0.3, 0.2, 0.1, 0.2, 0.1, 0.1})
	r := rand.New(rand.NewPCG(seed, 3))
	for _, id := range a.IDs() {
		g := a[id]
		var divs []int
		for w := 1; w <= g.GPUs; w++ {
			if g.GPUs%w == 0 {
				divs = append(divs, w)
			}
		}
		g.GPUsPerWorker = divs[r.IntN(len(divs))]
		a[id] = g
	}
	return c, a
}

// checkWorkers fails t unless every run of r puts whole workers on every
// server: a multiple of the job's GPUsPerWorker, or for a pair of the least
// common multiple of both.
func checkWorkers(t testing.TB, a allocation.Allocation, r placement.Round) {
	t.Helper()
	for _, run := range r.Runs {
		w := max(a[run.Job].GPUsPerWorker, 1)
		if run.Partner != "" {
			v := max(a[run.Partner].GPUsPerWorker, 1)
			for w%v != 0 {
				w += max(a[run.Job].GPUsPerWorker, 1)
			}
		}
		for _, x := range run.Assignments {
			if x.GPUs%w != 0 {
				t.Errorf("%s: %v splits a worker of %d", mechKey(run.Job, run.Partner), run.Assignments, w)
			}
		}
	}
}

// TestMechanismWorkersRandom runs the mechanism on random gangs in workers
// of several sizes: every round fits the cluster (checkRound) in whole
// workers, and every job that runs again on the type it ran on keeps
// exactly its GPUs (checkKept). Halfway, the scheduler "restarts" with a
// Ledger seeded from the last round, and the leases hold all the same.
func TestMechanismWorkersRandom(t *testing.T) {
	split, kept := 0, 0
	for seed := range uint64(12) {
		c, a := mechWorkers(seed)
		var l placement.Ledger
		var prev placement.Round
		for i := range 60 {
			if i == 30 {
				l = placement.Ledger{}.Seed(prev.Placement())
			}
			r, next, err := placement.Mechanism{}.Next(l, c, a)
			if err != nil {
				t.Fatalf("seed %d round %d: %v", seed, i, err)
			}
			checkRound(t, c, a, r)
			checkWorkers(t, a, r)
			for _, run := range r.Runs {
				if len(run.Assignments) > 1 && a[run.Job].GPUsPerWorker > 1 {
					split++
				}
			}
			if n := checkKept(t, c, prev, r); i == 30 {
				kept += n
			}
			if t.Failed() {
				t.Fatalf("seed %d round %d failed", seed, i)
			}
			l, prev = next, r
		}
	}
	t.Logf("%d split runs in workers of several GPUs, %d leases kept after restarts", split, kept)
	if split < 100 || kept < 60 {
		t.Fatalf("only %d split runs in workers of several GPUs, %d leases kept after restarts", split, kept)
	}
}

// checkKept checks that every run of r that ran in prev on one server of
// the same type kept exactly its GPUs, unless other runs of r took some of
// them (runs the counts left out are backfilled after the others, with
// workers of several GPUs, so they may find their GPUs gone); split gangs
// may give up their lease to consolidate, as TestMechanismLease allows. It
// returns the number of leases kept.
func checkKept(t testing.TB, c allocation.Cluster, prev, r placement.Round) int {
	t.Helper()
	last := make(map[string]placement.Run)
	for _, run := range prev.Runs {
		last[mechKey(run.Job, run.Partner)] = run
	}
	used := make(map[string]int)
	for _, run := range r.Runs {
		for _, x := range run.Assignments {
			used[x.Server] += x.GPUs
		}
	}
	kept := 0
	for _, run := range r.Runs {
		p, ok := last[mechKey(run.Job, run.Partner)]
		switch {
		case !ok || p.Accelerator != run.Accelerator || (len(p.Assignments) > 1 && !run.Extended):
			continue
		case run.Extended:
			if !slices.Equal(p.Assignments, run.Assignments) {
				t.Errorf("%s extended from %v to %v", mechKey(run.Job, run.Partner), p.Assignments, run.Assignments)
			}
			kept++
			continue
		}
		x := p.Assignments[0]
		s, _ := c.Server(x.Server)
		others := used[x.Server]
		for _, y := range run.Assignments {
			if y.Server == x.Server {
				others -= y.GPUs
			}
		}
		if others+x.GPUs <= s.GPUs {
			t.Errorf("%s moved from %v to %v though its GPUs are free", mechKey(run.Job, run.Partner), p.Assignments, run.Assignments)
		}
	}
	return kept
}

// TestMechanismPairWorkers: a co-located pair holds whole workers of both
// members, the least common multiple of their worker sizes. With 5 GPUs
// free on each of two 8-GPU servers, a 6-GPU pair in workers of 2 runs
// 4+2; in workers of 2 and 3 (so 6) it cannot run, and the 4-GPU job the
// counts also chose takes one server whole instead of what the pair left.
func TestMechanismPairWorkers(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 8, "s1", "s2")}
	v100 := func(x float64) map[allocation.Accelerator]float64 {
		return map[allocation.Accelerator]float64{"v100": x}
	}
	for _, tc := range []struct {
		wa, wb    int
		pair, job asg
	}{
		{2, 2, asg{{Server: "s1", GPUs: 4}, {Server: "s2", GPUs: 2}}, asg{{Server: "s1", GPUs: 1}, {Server: "s2", GPUs: 3}}},
		{2, 3, nil, one("s1", 4)},
	} {
		a := allocation.Allocation{
			"A":  {GPUs: 6, GPUsPerWorker: tc.wa, Pairs: map[string]map[allocation.Accelerator]float64{"B": v100(1)}},
			"B":  {GPUs: 6, GPUsPerWorker: tc.wb, Pairs: map[string]map[allocation.Accelerator]float64{"A": v100(1)}},
			"B1": {GPUs: 3, Shares: v100(1)},
			"B2": {GPUs: 3, Shares: v100(1)},
			"E":  {GPUs: 4, Shares: v100(1)},
		}
		l := placement.Ledger{}.Seed(map[string][]allocation.Assignment{"B1": one("s1", 3), "B2": one("s2", 3)})
		r, _, err := placement.Mechanism{}.Next(l, c, a)
		if err != nil {
			t.Fatal(err)
		}
		checkRound(t, c, a, r)
		checkWorkers(t, a, r)
		p := r.Placement()
		name := fmt.Sprintf("workers %d and %d", tc.wa, tc.wb)
		checkDiff(t, name+": A", tc.pair, p["A"])
		checkDiff(t, name+": B", tc.pair, p["B"])
		checkDiff(t, name+": E", tc.job, p["E"])
	}
}

// TestLedgerSeed: a scheduler that restarts with an empty Ledger seeded
// from where jobs run keeps every running job on exactly its GPUs, the
// 4+4 gang included (seeded jobs count as having run, so the gang decides
// whether to consolidate after the others kept theirs, and the full
// cluster leaves it no whole server). Without Seed the jobs are placed anew.
func TestLedgerSeed(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 8, "a", "b", "c")}
	v100 := map[allocation.Accelerator]float64{"v100": 1}
	a := allocation.Allocation{
		"X": {GPUs: 4, GPUsPerWorker: 2, Shares: v100},
		"Y": {GPUs: 8, GPUsPerWorker: 4, Shares: v100},
		"Z": {GPUs: 4, Shares: v100},
		"W": {GPUs: 6, GPUsPerWorker: 2, Shares: v100},
		"P": {GPUs: 1, Shares: v100},
		"Q": {GPUs: 1, Shares: v100},
	}
	current := map[string][]allocation.Assignment{
		"X": one("a", 4),
		"Y": {{Server: "b", GPUs: 4}, {Server: "a", GPUs: 4}}, // unsorted: Seed sorts
		"Z": one("b", 4),
		"W": one("c", 6),
		"P": one("c", 1),
		"Q": one("c", 1),
		"R": nil, // not running: ignored
	}
	want := map[string][]allocation.Assignment{
		"X": one("a", 4), "Y": {{Server: "a", GPUs: 4}, {Server: "b", GPUs: 4}}, "Z": one("b", 4),
		"W": one("c", 6), "P": one("c", 1), "Q": one("c", 1),
	}
	l := placement.Ledger{}.Seed(current)
	if diff := cmp.Diff(want, l.Placement); diff != "" {
		t.Fatalf("seeded placement (-want +got):\n%s", diff)
	}
	for round := range 3 {
		r, next, err := placement.Mechanism{}.Next(l, c, a)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, r.Placement()); diff != "" {
			t.Fatalf("round %d (-want +got):\n%s", round, diff)
		}
		for _, run := range r.Runs {
			if !run.Extended {
				t.Errorf("round %d: %s not extended", round, run.Job)
			}
		}
		l = next
	}
	r, _, err := placement.Mechanism{}.Next(placement.Ledger{}, c, a)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Equal(want, r.Placement()) {
		t.Error("an empty ledger kept the jobs where they run: the test shows nothing")
	}
}

// TestLedgerSeedKeeps: Seed leaves the ledger's own placements and
// accounts, and the ledger it is given, alone; seeding nothing changes
// nothing.
func TestLedgerSeedKeeps(t *testing.T) {
	c, a := mechSmall(1)
	_, l, err := placement.Mechanism{}.Next(placement.Ledger{}, c, a)
	if err != nil {
		t.Fatal(err)
	}
	before, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l, l.Seed(nil)); diff != "" {
		t.Errorf("Seed(nil) changed the ledger (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(placement.Ledger{}, placement.Ledger{}.Seed(map[string][]allocation.Assignment{"j": nil})); diff != "" {
		t.Errorf("seeding no GPUs changed the empty ledger (-want +got):\n%s", diff)
	}
	// A job the ledger places keeps its placement and account; a job it
	// does not know gets its current GPUs and an account that ran.
	var known string
	for job := range l.Placement {
		known = job
		break
	}
	seeded := l.Seed(map[string][]allocation.Assignment{known: one("elsewhere", 1), "new": one("s0000", 1)})
	if diff := cmp.Diff(l.Placement[known], seeded.Placement[known]); diff != "" {
		t.Errorf("Seed replaced the ledger's placement of %s (-want +got):\n%s", known, diff)
	}
	if diff := cmp.Diff(one("s0000", 1), seeded.Placement["new"]); diff != "" {
		t.Errorf("Seed placed new (-want +got):\n%s", diff)
	}
	accts := slices.DeleteFunc(slices.Clone(seeded.Accounts), func(x placement.Account) bool { return x.Job == "new" })
	if diff := cmp.Diff(l.Accounts, accts); diff != "" {
		t.Errorf("Seed changed the ledger's accounts (-want +got):\n%s", diff)
	}
	i := slices.IndexFunc(seeded.Accounts, func(x placement.Account) bool { return x.Job == "new" })
	if i < 0 || !seeded.Accounts[i].Ran || seeded.Accounts[i].GPUs != 1 || len(seeded.Accounts[i].Types) != 0 {
		t.Errorf("account of new: %+v", seeded.Accounts)
	}
	if !slices.IsSortedFunc(seeded.Accounts, func(x, y placement.Account) int {
		return strings.Compare(mechKey(x.Job, x.Partner), mechKey(y.Job, y.Partner))
	}) {
		t.Errorf("seeded accounts not sorted")
	}
	after, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("Seed modified the ledger it was given")
	}
}
