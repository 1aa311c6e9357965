package pollux_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
	"github.com/dlsched/dlsched/throughput"
)

// fourJobs is 4 fitted elastic jobs, with gradient noise from low to high,
// on 4 nodes × 4 T4s.
func fourJobs() *policy.Snapshot {
	return snapshot(servers("n", 4, 4, "t4"),
		fittedJob("a", 0.1), fittedJob("b", 1), fittedJob("c", 10), fittedJob("d", 100))
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"pollux", "pollux.optimus", "pollux.fixed"} {
		p, err := policy.New(name, nil)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if p.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, p.Name())
		}
	}
}

// Acceptance 1: same seed, snapshot and State give the same decision and
// the same next State.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64, st pollux.State) (*policy.Decision, pollux.State) {
		p := &pollux.Pollux{Population: 30, Generations: 20, Seed: seed, State: st}
		d, err := p.Allocate(context.Background(), fourJobs())
		if err != nil {
			t.Fatal(err)
		}
		return d, p.State
	}
	d1, s1 := run(7, pollux.State{})
	d2, s2 := run(7, pollux.State{})
	if diff := cmp.Diff(d1, d2); diff != "" {
		t.Errorf("same seed, different decisions (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(s1, s2); diff != "" {
		t.Errorf("same seed, different states (-first +second):\n%s", diff)
	}
	// Warm-started from the same State.
	d3, s3 := run(7, s1)
	d4, s4 := run(7, s1)
	if diff := cmp.Diff(d3, d4); diff != "" {
		t.Errorf("same seed and state, different decisions:\n%s", diff)
	}
	if diff := cmp.Diff(s3, s4); diff != "" {
		t.Errorf("same seed and state, different states:\n%s", diff)
	}
	// A different seed must still give a valid decision; it may differ.
	d5, _ := run(8, pollux.State{})
	checkDecision(t, fourJobs(), d5, checks{pollux: true, avoid: true})
	if d1.Policy != "pollux" || d1.Wake != time.Hour+pollux.DefaultInterval {
		t.Errorf("Policy %q Wake %v, want pollux and %v", d1.Policy, d1.Wake, time.Hour+pollux.DefaultInterval)
	}
}

type checks struct {
	pollux bool // Pollux's per-job bounds and batch sizes
	avoid  bool // interference avoidance
}

// checkDecision checks every invariant of a decision that the brief lists.
func checkDecision(t *testing.T, s *policy.Snapshot, d *policy.Decision, c checks) {
	t.Helper()
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Errorf("Allocation.Validate: %v", err)
	}
	srv := map[string]allocation.Server{}
	for _, x := range s.Cluster.Servers {
		srv[x.ID] = x
	}
	jobs := map[string]*policy.Job{}
	for i := range s.Jobs {
		jobs[s.Jobs[i].ID] = &s.Jobs[i]
	}
	used := map[string]int{}
	distributed := map[string][]string{}
	for id, p := range d.Placement {
		if _, ok := d.Allocation[id]; !ok {
			t.Errorf("job %q placed but not granted", id)
		}
		if jobs[id] == nil {
			t.Errorf("unknown job %q placed", id)
		}
		if len(p) > 1 && c.avoid {
			for _, a := range p {
				distributed[a.Server] = append(distributed[a.Server], id)
			}
		}
	}
	for id, g := range d.Allocation {
		j := jobs[id]
		if j == nil {
			t.Errorf("unknown job %q granted", id)
			continue
		}
		per, total := placed(d.Placement[id])
		if total != g.GPUs || g.GPUs < 1 {
			t.Errorf("job %q: granted %d GPUs, placed %d", id, g.GPUs, total)
		}
		types := map[allocation.Accelerator]bool{}
		for s, n := range per {
			x, ok := srv[s]
			if !ok || n < 1 {
				t.Errorf("job %q: %d GPUs on server %q", id, n, s)
				continue
			}
			used[s] += n
			types[x.Accelerator] = true
			if len(j.Throughput) > 0 && j.Throughput[x.Accelerator] <= 0 {
				t.Errorf("job %q placed on %s, where its throughput is zero", id, x.Accelerator)
			}
		}
		if len(types) != 1 {
			t.Errorf("job %q on %d accelerator types", id, len(types))
		}
		for typ := range types {
			if g.Shares[typ] != 1 || len(g.Shares) != 1 {
				t.Errorf("job %q: shares %v, want {%s: 1}", id, g.Shares, typ)
			}
		}
		if !c.pollux {
			continue
		}
		e := j.Elastic
		if e == nil {
			if g.GPUs != j.GPUs {
				t.Errorf("non-elastic job %q: %d GPUs, want %d or none", id, g.GPUs, j.GPUs)
			}
			continue
		}
		lo := max(e.MinGPUs, 1)
		hi := s.Cluster.TotalGPUs()
		if e.ProfiledGPUs > 0 {
			hi = min(hi, 2*e.ProfiledGPUs)
		}
		if e.MaxGPUs > 0 {
			hi = min(hi, e.MaxGPUs)
		}
		maxBatch := max(e.MaxBatchSize, e.BatchSize)
		hi = max(min(hi, maxBatch/max(e.LocalBatchMin, 1)), lo)
		if g.GPUs < lo || g.GPUs > hi {
			t.Errorf("job %q: %d GPUs outside [%d, %d]", id, g.GPUs, lo, hi)
		}
		// A job whose limits allow no batch on its GPUs (LocalBatchMin·K
		// above MaxBatch, possible when MinGPUs or a tiny MaxBatch force
		// it) has no goodput-optimal batch; Pollux grants batch 0 then.
		feasible := max(e.BatchSize, max(e.LocalBatchMin, 1)*g.GPUs) <= maxBatch
		if (e.Perf.AlphaC > 0 || e.Perf.BetaC > 0) && feasible {
			// Optimize may exceed MaxBatch only with the smallest whole
			// split above M0, which is below 2·M0 and divides by the GPUs.
			rounded := g.BatchSize%g.GPUs == 0 && g.BatchSize < 2*e.BatchSize
			if g.BatchSize < e.BatchSize || (g.BatchSize > maxBatch && !rounded) {
				t.Errorf("job %q: batch %d outside [%d, %d] on %d GPUs", id, g.BatchSize, e.BatchSize, maxBatch, g.GPUs)
			}
		}
	}
	for s, n := range used {
		if n > srv[s].GPUs {
			t.Errorf("server %q: %d GPUs placed, %d exist", s, n, srv[s].GPUs)
		}
	}
	for s, ids := range distributed {
		if len(ids) > 1 {
			slices.Sort(ids)
			t.Errorf("server %q hosts %d jobs that span servers: %v", s, len(ids), ids)
		}
	}
}

// randomSnapshot draws a cluster of 1–12 servers of 1–8 GPUs, sometimes of
// two types, and 1–30 jobs of every kind.
func randomSnapshot(r *rand.Rand) *policy.Snapshot {
	types := []allocation.Accelerator{"t4"}
	if r.IntN(3) == 0 {
		types = append(types, "v100")
	}
	var srv []allocation.Server
	for i := range 1 + r.IntN(12) {
		srv = append(srv, allocation.Server{ID: fmt.Sprintf("s%02d", i), Accelerator: types[r.IntN(len(types))], GPUs: 1 + r.IntN(8)})
	}
	c := allocation.Cluster{Servers: srv}
	present := c.Types()
	free := map[string]int{}
	for _, x := range srv {
		free[x.ID] = x.GPUs
	}
	s := &policy.Snapshot{Now: time.Hour, Cluster: c}
	for i := range 1 + r.IntN(30) {
		id := fmt.Sprintf("j%02d", i)
		var j policy.Job
		switch r.IntN(3) {
		case 0:
			j = fittedJob(id, []float64{0.1, 1, 10, 100}[r.IntN(4)])
		case 1:
			j = unfittedJob(id)
		default:
			typ := present[r.IntN(len(present))]
			j = policy.Job{ID: id, GPUs: 1 + r.IntN(min(8, c.GPUs(typ))), Throughput: map[allocation.Accelerator]float64{typ: 1 + r.Float64()}}
		}
		if e := j.Elastic; e != nil {
			if r.IntN(3) == 0 {
				j.Throughput = map[allocation.Accelerator]float64{present[r.IntN(len(present))]: 1}
			}
			e.MinGPUs = r.IntN(3)
			if r.IntN(2) == 0 {
				e.MaxGPUs = max(e.MinGPUs, 1) + r.IntN(8)
			}
			e.ProfiledGPUs = r.IntN(5)
			e.Restarts = r.IntN(4)
			if r.IntN(5) == 0 {
				e.MaxBatchSize = 0
			}
		}
		j.Arrival = time.Duration(r.Int64N(int64(time.Hour) + 1))
		j.AttainedGPUSeconds = float64(r.IntN(3)) * 1000
		// A current allocation: valid (on free GPUs of one usable type)
		// or arbitrary, possibly overcommitted.
		switch r.IntN(3) {
		case 0:
			want := max(j.GPUs, 1+r.IntN(4))
			typ := present[r.IntN(len(present))]
			for k, v := range j.Throughput {
				if v > 0 {
					typ = k
				}
			}
			for _, x := range srv {
				if want == 0 || free[x.ID] == 0 || x.Accelerator != typ {
					continue
				}
				n := min(want, free[x.ID])
				j.Placement = append(j.Placement, allocation.Assignment{Server: x.ID, GPUs: n})
				free[x.ID] -= n
				want -= n
			}
		case 1:
			// One usable server, ignoring what others use there (the
			// snapshot may be overcommitted). TestFixedBadPlacement covers
			// placements on unusable or mixed types.
			x := srv[r.IntN(len(srv))]
			if len(j.Throughput) == 0 || j.Throughput[x.Accelerator] > 0 {
				j.Placement = []allocation.Assignment{{Server: x.ID, GPUs: 1 + r.IntN(x.GPUs)}}
			}
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// Acceptance 2: every decision on random input satisfies every constraint.
func TestProperties(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 40
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		s := randomSnapshot(r)
		if err := policy.Validate(s); err != nil {
			t.Fatalf("case %d: generated an invalid snapshot: %v", i, err)
		}
		before, _ := json.Marshal(s)
		allow := i%4 == 3
		pols := []policy.Policy{
			&pollux.Pollux{Population: 20, Generations: 10, Seed: uint64(i), AllowInterference: allow},
			&pollux.Optimus{}, &pollux.Fixed{},
		}
		for _, p := range pols {
			d, err := p.Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("case %d: %s: %v", i, p.Name(), err)
			}
			_, isPollux := p.(*pollux.Pollux)
			t.Run(fmt.Sprintf("%d/%s", i, p.Name()), func(t *testing.T) {
				checkDecision(t, s, d, checks{pollux: isPollux, avoid: isPollux && !allow})
			})
			if after, _ := json.Marshal(s); string(after) != string(before) {
				t.Fatalf("case %d: %s modified the snapshot", i, p.Name())
			}
		}
	}
}

// speedupSum returns Σ_j SPEEDUP_j(N_j, K_j) relative to one GPU, for the
// nodes and GPUs of each job's placement.
func speedupSum(s *policy.Snapshot, place func(id string) (nodes, gpus int)) float64 {
	total := 0.0
	for _, j := range s.Jobs {
		e := j.Elastic
		g := efficiency.Goodput{Perf: e.Perf, Grad: efficiency.Grad{Sqr: e.GradSqr, Var: e.GradVar}, BatchSize: e.BatchSize}
		sp := efficiency.NewSpeedup(g, efficiency.Limits{MaxBatch: 1280, LocalMin: 64, LocalMax: 256, Accumulation: true}, 1, 1)
		total += sp.At(place(j.ID))
	}
	return total
}

// Acceptance 3: Pollux serves every job and beats an equal split on total
// speedup.
func TestBeatsEqualSplit(t *testing.T) {
	s := fourJobs()
	d, err := (&pollux.Pollux{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	checkDecision(t, s, d, checks{pollux: true, avoid: true})
	for _, j := range s.Jobs {
		if d.Allocation[j.ID].GPUs < 1 {
			t.Errorf("job %q got no GPU", j.ID)
		}
	}
	got := speedupSum(s, func(id string) (int, int) {
		per, total := placed(d.Placement[id])
		return len(per), total
	})
	equal := speedupSum(s, func(string) (int, int) { return 1, 4 })
	t.Logf("Σ speedup: pollux %.4f, equal split %.4f", got, equal)
	if !(got > equal) {
		t.Errorf("Σ speedup %.4f, not above the equal split's %.4f", got, equal)
	}
	if d.Objective <= 0 {
		t.Errorf("Objective %v, want positive", d.Objective)
	}
}

// bigSnapshot is n nodes × 4 T4s and m jobs of every elastic kind.
func bigSnapshot(n, m int) *policy.Snapshot {
	s := snapshot(servers("n", n, 4, "t4"))
	for i := range m {
		id := fmt.Sprintf("j%03d", i)
		j := fittedJob(id, []float64{0.1, 1, 10, 100}[i%4])
		if i%5 == 4 {
			j = unfittedJob(id)
		}
		j.Arrival = time.Duration(i) * time.Second
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// Acceptance 4: a cancelled context stops the search promptly, with an
// error wrapping the context's, and leaves State as it was.
func TestCancel(t *testing.T) {
	warm := &pollux.Pollux{Population: 10, Generations: 2}
	if _, err := warm.Allocate(context.Background(), fourJobs()); err != nil {
		t.Fatal(err)
	}
	state := warm.State
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := &pollux.Pollux{State: state}
		d, err := p.Allocate(ctx, fourJobs())
		if !errors.Is(err, context.Canceled) || d != nil {
			t.Errorf("Allocate = %v, %v; want nil and context.Canceled", d, err)
		}
		if diff := cmp.Diff(state, p.State); diff != "" {
			t.Errorf("State changed:\n%s", diff)
		}
	})
	t.Run("during", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		p := &pollux.Pollux{Population: 100, Generations: 100000, State: state}
		start := time.Now()
		d, err := p.Allocate(ctx, bigSnapshot(64, 128))
		took := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) || d != nil {
			t.Errorf("Allocate = %v, %v; want nil and context.DeadlineExceeded", d, err)
		}
		if took > time.Second {
			t.Errorf("took %v after a 5 ms deadline", took)
		}
		if diff := cmp.Diff(state, p.State); diff != "" {
			t.Errorf("State changed:\n%s", diff)
		}
	})
}

// Acceptance 5: the warm start survives jobs and nodes coming and going,
// malformed states and a JSON round trip.
func TestWarmStart(t *testing.T) {
	s := fourJobs()
	p := &pollux.Pollux{Population: 30, Generations: 20, Seed: 3}
	if _, err := p.Allocate(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	st := p.State
	if len(st.Jobs) != 4 || len(st.Nodes) != 4 || len(st.Population) != 30 {
		t.Fatalf("State has %d jobs, %d nodes, %d individuals; want 4, 4, 30", len(st.Jobs), len(st.Nodes), len(st.Population))
	}
	if !slices.Equal(slices.Sorted(slices.Values(st.Jobs)), []string{"a", "b", "c", "d"}) ||
		!slices.Equal(st.Nodes, []string{"n00", "n01", "n02", "n03"}) {
		t.Errorf("State labels %v × %v", st.Jobs, st.Nodes)
	}
	for i, a := range st.Population {
		if len(a) != 16 {
			t.Errorf("individual %d has %d entries, want 16", i, len(a))
		}
	}

	// Round 2: job b leaves, job e arrives, a fifth node joins.
	s2 := fourJobs()
	s2.Jobs = slices.DeleteFunc(s2.Jobs, func(j policy.Job) bool { return j.ID == "b" })
	s2.Jobs = append(s2.Jobs, fittedJob("e", 3))
	s2.Cluster.Servers = append(s2.Cluster.Servers, allocation.Server{ID: "n04", Accelerator: "t4", GPUs: 4})
	s2.Now += time.Minute
	d2, err := p.Allocate(context.Background(), s2)
	if err != nil {
		t.Fatal(err)
	}
	checkDecision(t, s2, d2, checks{pollux: true, avoid: true})
	if len(p.State.Jobs) != 4 || len(p.State.Nodes) != 5 || len(p.State.Population) != 30 || len(p.State.Population[0]) != 20 {
		t.Errorf("round 2 State: %d jobs, %d nodes, %d individuals", len(p.State.Jobs), len(p.State.Nodes), len(p.State.Population))
	}
	if slices.Contains(p.State.Jobs, "b") || !slices.Contains(p.State.Jobs, "e") {
		t.Errorf("round 2 State jobs %v", p.State.Jobs)
	}

	// Malformed individuals are ignored.
	bad := pollux.State{Jobs: []string{"a", "b"}, Nodes: []string{"n00"}, Population: [][]int{{1}, {1, 2, 3}, nil, {-5, 99}}}
	q := &pollux.Pollux{Population: 10, Generations: 5, State: bad}
	d3, err := q.Allocate(context.Background(), fourJobs())
	if err != nil {
		t.Fatalf("malformed State: %v", err)
	}
	checkDecision(t, fourJobs(), d3, checks{pollux: true, avoid: true})

	// JSON round trip through the registry.
	cfg, err := json.Marshal(&pollux.Pollux{Population: 30, Generations: 20, Seed: 3, State: st})
	if err != nil {
		t.Fatal(err)
	}
	r, err := policy.New("pollux", cfg)
	if err != nil {
		t.Fatalf("New(pollux, %s): %v", cfg, err)
	}
	if diff := cmp.Diff(&pollux.Pollux{Population: 30, Generations: 20, Seed: 3, State: st}, r); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	direct := &pollux.Pollux{Population: 30, Generations: 20, Seed: 3, State: st}
	want, err := direct.Allocate(context.Background(), s2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Allocate(context.Background(), s2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision after a JSON round trip differs:\n%s", diff)
	}
}

// Acceptance 6: a running job whose age is zero loses everything if its
// allocation changes (its restart factor max(0 − n·δ, 0)/δ is 0), so Pollux
// keeps exactly its current placement — 4 GPUs on n01 — as long as that
// placement is within its bounds and the capacity. We assert the placement
// and batch size are kept exactly; the other jobs share the rest.
func TestRestartPenaltyKeepsPlacement(t *testing.T) {
	s := snapshot(servers("n", 3, 4, "t4"), fittedJob("a", 1), fittedJob("b", 10), fittedJob("r", 100))
	s.Jobs[2].Arrival = s.Now
	s.Jobs[2].Elastic.Restarts = 50
	s.Jobs[2].Elastic.ProfiledGPUs = 4
	s.Jobs[2].Placement = []allocation.Assignment{{Server: "n01", GPUs: 4}}
	for seed := range uint64(5) {
		d, err := (&pollux.Pollux{Seed: seed, Population: 50, Generations: 50}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		checkDecision(t, s, d, checks{pollux: true, avoid: true})
		if diff := cmp.Diff(s.Jobs[2].Placement, d.Placement["r"]); diff != "" {
			t.Errorf("seed %d: job r moved (-current +decided):\n%s", seed, diff)
		}
		if d.Allocation["a"].GPUs < 1 || d.Allocation["b"].GPUs < 1 {
			t.Errorf("seed %d: waiting jobs got %d and %d GPUs", seed, d.Allocation["a"].GPUs, d.Allocation["b"].GPUs)
		}
	}
}

// Acceptance 7: bad configurations and snapshots.
func TestInvalid(t *testing.T) {
	for _, cfg := range []string{
		`{"p": 2}`, `{"population": -1}`, `{"generations": -3}`, `{"interval_seconds": -1}`,
		`{"restart_seconds": -1}`, `{"populaton": 10}`, `{"p": "x"}`, `{} {}`,
	} {
		if _, err := policy.New("pollux", []byte(cfg)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("New(pollux, %s) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
	for _, name := range []string{"pollux.optimus", "pollux.fixed"} {
		if _, err := policy.New(name, []byte(`{"x": 1}`)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("New(%s, unknown field) = %v, want ErrInvalidConfig", name, err)
		}
	}
	// Set directly rather than decoded, the config is checked by Allocate.
	if _, err := (&pollux.Pollux{P: 3}).Allocate(context.Background(), fourJobs()); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("Allocate with P 3 = %v, want ErrInvalidConfig", err)
	}
	bad := fourJobs()
	bad.Jobs[1].ID = "a"
	for _, p := range []policy.Policy{&pollux.Pollux{}, &pollux.Optimus{}, &pollux.Fixed{}} {
		if _, err := p.Allocate(context.Background(), bad); !errors.Is(err, policy.ErrInvalidSnapshot) {
			t.Errorf("%s: duplicate ID: %v, want ErrInvalidSnapshot", p.Name(), err)
		}
		if _, err := p.Allocate(context.Background(), nil); !errors.Is(err, policy.ErrInvalidSnapshot) {
			t.Errorf("%s: nil snapshot: %v, want ErrInvalidSnapshot", p.Name(), err)
		}
	}
}

// Populations of one and two work: a tournament among fewer than two
// candidates takes the one there is, and a population of one breeds from
// itself.
func TestSmallPopulation(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		p, err := policy.New("pollux", []byte(fmt.Sprintf(`{"population": %d, "generations": 3}`, n)))
		if err != nil {
			t.Fatalf("population %d: %v", n, err)
		}
		d, err := p.Allocate(context.Background(), fourJobs())
		if err != nil {
			t.Fatalf("population %d: %v", n, err)
		}
		if d.Objective <= 0 {
			t.Errorf("population %d: fitness %v, want a served cluster", n, d.Objective)
		}
		if got := len(p.(*pollux.Pollux).State.Population); got != n {
			t.Errorf("population %d: State holds %d individuals", n, got)
		}
	}
}

func TestEmpty(t *testing.T) {
	p := &pollux.Pollux{Population: 10, Generations: 2}
	if _, err := p.Allocate(context.Background(), fourJobs()); err != nil {
		t.Fatal(err)
	}
	d, err := p.Allocate(context.Background(), snapshot(servers("n", 2, 4, "t4")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Allocation) != 0 || len(p.State.Population) != 0 {
		t.Errorf("no jobs: allocation %v, state %v", d.Allocation, p.State)
	}
}

// Cancellation stops a large search promptly even inside the first
// generation: building and evaluating 5000 individuals of a 128 × 64
// problem alone would take well over a second.
func TestCancelLargePopulation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow when it fails")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	p := &pollux.Pollux{Population: 5000, Generations: 1000}
	start := time.Now()
	_, err := p.Allocate(ctx, bigSnapshot(64, 128))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if took > time.Second {
		t.Errorf("took %v after a 5 ms deadline", took)
	}
	if len(p.State.Population) != 0 {
		t.Errorf("State changed")
	}
}

// perf is a realistic fitted iteration-time model (ResNet-like on T4s).
var perf = throughput.Params{AlphaC: 0.121, BetaC: 0.00568, AlphaN: 0.0236, BetaN: 0.00634, AlphaR: 0.0118, BetaR: 0.00317, Gamma: 1.14}

const (
	gradSqr = 0.00136
	gradVar = 0.000502
)

// servers returns n servers named prefix0, prefix1, ... of gpus GPUs each.
func servers(prefix string, n, gpus int, acc allocation.Accelerator) []allocation.Server {
	out := make([]allocation.Server, n)
	for i := range out {
		out[i] = allocation.Server{ID: fmt.Sprintf("%s%02d", prefix, i), Accelerator: acc, GPUs: gpus}
	}
	return out
}

// fittedJob returns an elastic job with a fitted model; v scales GradVar.
func fittedJob(id string, v float64) policy.Job {
	return policy.Job{ID: id, Elastic: &policy.Elastic{
		BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64, LocalBatchMax: 256,
		Perf: perf, GradSqr: gradSqr, GradVar: gradVar * v,
	}}
}

// unfittedJob returns an elastic job whose model is not fitted yet.
func unfittedJob(id string) policy.Job {
	return policy.Job{ID: id, Elastic: &policy.Elastic{
		BatchSize: 128, MaxBatchSize: 1280, LocalBatchMin: 64, LocalBatchMax: 256,
	}}
}

// snapshot builds a snapshot at 1 h with the given servers and jobs.
func snapshot(srv []allocation.Server, jobs ...policy.Job) *policy.Snapshot {
	return &policy.Snapshot{Now: time.Hour, Cluster: allocation.Cluster{Servers: srv}, Jobs: jobs}
}

// placed sums the GPUs of a placement per server and in total.
func placed(p []allocation.Assignment) (map[string]int, int) {
	m := map[string]int{}
	t := 0
	for _, a := range p {
		m[a.Server] += a.GPUs
		t += a.GPUs
	}
	return m, t
}

// A round whose genomes would not fit in memory fails at once with an error
// naming MaxCells: 5000 jobs on 10,000 nodes with the default population
// would hold 5·10⁹ cells.
func TestMaxCells(t *testing.T) {
	var s policy.Snapshot
	for i := range 10000 {
		s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("n%05d", i), Accelerator: "v100", GPUs: 4})
	}
	for i := range 5000 {
		s.Jobs = append(s.Jobs, policy.Job{ID: fmt.Sprintf("j%04d", i), GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}})
	}
	_, err := (&pollux.Pollux{}).Allocate(context.Background(), &s)
	if err == nil || !strings.Contains(err.Error(), "MaxCells") {
		t.Errorf("err = %v, want one naming MaxCells", err)
	}
}

// The search finds what it found before it was the package's own code:
// eaopt's genetic algorithm averaged a fitness of 1.03467 over 2,000 seeds
// of this small search (standard error 0.0005; this loop over seeds 0–1999
// at commit 1b153f2). Over 400
// seeds the mean must be within 0.003 of that (about three standard errors
// of 400 seeds); a tournament that picks the worse contestant gives 1.0139.
func TestSearchQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("400 searches")
	}
	const seeds = 400
	sum := 0.0
	for seed := range seeds {
		p := &pollux.Pollux{Population: 10, Generations: 10, Seed: uint64(seed)}
		d, err := p.Allocate(context.Background(), fourJobs())
		if err != nil {
			t.Fatal(err)
		}
		sum += d.Objective
	}
	mean := sum / seeds
	t.Logf("mean fitness %.5f over %d seeds", mean, seeds)
	if mean < 1.03467-0.003 {
		t.Errorf("mean fitness %.5f over %d seeds, want at least %.5f", mean, seeds, 1.03467-0.003)
	}
}
