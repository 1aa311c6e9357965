package gavel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	gocmp "github.com/google/go-cmp/cmp"
)

// fifoCluster has 2 GPUs each of K80, P100 and V100.
func fifoCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{
		{ID: "s-k80", Accelerator: "k80", GPUs: 2},
		{ID: "s-p100", Accelerator: "p100", GPUs: 2},
		{ID: "s-v100", Accelerator: "v100", GPUs: 2},
	}}
}

// fifoTypes maps each job to the type it runs on, "" when it waits, and
// checks that every grant is a 0/1 row with the job's GPU count.
func fifoTypes(t *testing.T, s *policy.Snapshot, d *policy.Decision) map[string]allocation.Accelerator {
	t.Helper()
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatal(err)
	}
	if len(d.Allocation) != len(s.Jobs) {
		t.Fatalf("%d grants for %d jobs", len(d.Allocation), len(s.Jobs))
	}
	out := make(map[string]allocation.Accelerator)
	scheduled := 0
	for _, j := range s.Jobs {
		g, ok := d.Allocation[j.ID]
		if !ok || g.GPUs != j.GPUs {
			t.Fatalf("job %q: grant %+v, want one with %d GPUs", j.ID, g, j.GPUs)
		}
		out[j.ID] = ""
		for k, x := range g.Shares {
			if x != 1 || len(g.Shares) != 1 {
				t.Fatalf("job %q: shares %v, want a single 1", j.ID, g.Shares)
			}
			if j.Throughput[k] <= 0 {
				t.Fatalf("job %q: runs on %s where its throughput is zero", j.ID, k)
			}
			out[j.ID] = k
			scheduled++
		}
	}
	if d.Objective != float64(scheduled) {
		t.Errorf("objective %v, want %d jobs scheduled", d.Objective, scheduled)
	}
	return out
}

func TestFIFOHandSolved(t *testing.T) {
	// Six identical 1-GPU jobs; IDs run against arrival order, and "d" and
	// "c" arrive together, so the queue is f e c d b a.
	arrivals := map[string]time.Duration{"a": 5, "b": 4, "c": 2, "d": 2, "e": 1, "f": 0}
	var jobs []policy.Job
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		jobs = append(jobs, policy.Job{ID: id, GPUs: 1, Arrival: arrivals[id] * time.Second,
			Throughput: shares{"k80": 1, "p100": 2, "v100": 4}})
	}
	s := &policy.Snapshot{Now: 10 * time.Second, Cluster: fifoCluster(), Jobs: jobs}
	for _, tc := range []struct {
		policy FIFO
		want   map[string]allocation.Accelerator
	}{{
		// The two earliest get the V100s, the next two the P100s.
		policy: FIFO{},
		want:   map[string]allocation.Accelerator{"f": "v100", "e": "v100", "c": "p100", "d": "p100", "b": "k80", "a": "k80"},
	}, {
		// Most free GPUs, ties by name: k80, p100, v100, k80, p100, v100.
		// Gavel's stale loop variable would put all six on v100.
		policy: FIFO{Agnostic: true},
		want:   map[string]allocation.Accelerator{"f": "k80", "e": "p100", "c": "v100", "d": "k80", "b": "p100", "a": "v100"},
	}} {
		t.Run(tc.policy.Name(), func(t *testing.T) {
			d, err := tc.policy.Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tc.want, fifoTypes(t, s, d)); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
			if d.Objective != 6 || d.Policy != tc.policy.Name() || len(d.Warnings) != 0 {
				t.Errorf("decision %+v", d)
			}
		})
	}

	// With a seventh job, nothing is left: it waits.
	s.Jobs = append(s.Jobs, policy.Job{ID: "g", GPUs: 1, Arrival: 6 * time.Second, Throughput: shares{"k80": 1}})
	for _, p := range []*FIFO{{}, {Agnostic: true}, {Backfill: true}} {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if got := fifoTypes(t, s, d); got["g"] != "" || d.Objective != 6 {
			t.Errorf("%+v: g runs on %q, objective %v; want g waiting, 6", p, got["g"], d.Objective)
		}
	}
}

func TestFIFOZeroThroughput(t *testing.T) {
	s := &policy.Snapshot{Cluster: fifoCluster(), Jobs: []policy.Job{
		// Cannot run on the V100s (e.g. out of memory), the aware policy's
		// first choice otherwise.
		{ID: "a", GPUs: 2, Throughput: shares{"k80": 1, "p100": 2, "v100": 0}},
		// Runs only on V100s; the agnostic policy would otherwise pick p100
		// (2 free GPUs, like v100, and first by name).
		{ID: "b", GPUs: 1, Arrival: 1, Throughput: shares{"v100": 3}},
		{ID: "c", GPUs: 1, Arrival: 2, Throughput: shares{"k80": 1, "p100": 1}},
	}, Now: 2}
	for _, tc := range []struct {
		policy FIFO
		want   map[string]allocation.Accelerator
	}{
		// a: p100 (fastest allowed); b: v100; c: k80 (p100 is full).
		{FIFO{}, map[string]allocation.Accelerator{"a": "p100", "b": "v100", "c": "k80"}},
		// a: k80 (2 free, ties with p100 by name); b: v100, not p100;
		// c: p100 (k80 is full).
		{FIFO{Agnostic: true}, map[string]allocation.Accelerator{"a": "k80", "b": "v100", "c": "p100"}},
	} {
		d, err := tc.policy.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(tc.want, fifoTypes(t, s, d)); diff != "" {
			t.Errorf("%s: types (-want +got):\n%s", tc.policy.Name(), diff)
		}
	}
}

func TestFIFOTiesByName(t *testing.T) {
	s := &policy.Snapshot{Cluster: fifoCluster(), Jobs: []policy.Job{
		{ID: "a", GPUs: 1, Throughput: shares{"k80": 3, "p100": 3, "v100": 3}},
	}}
	d, err := (&FIFO{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := fifoTypes(t, s, d)["a"]; got != "k80" {
		t.Errorf("equal throughputs: got %s, want k80 (first by name)", got)
	}
}

// A 2-GPU job that fits nowhere blocks the queue, as in Gavel's code; with
// Backfill a later 1-GPU job starts instead.
func TestFIFOBlockedHead(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s-k80", Accelerator: "k80", GPUs: 2},
		{ID: "s-v100", Accelerator: "v100", GPUs: 2},
	}}
	s := &policy.Snapshot{Now: 3, Cluster: c, Jobs: []policy.Job{
		{ID: "running", GPUs: 1, Arrival: 0, Throughput: shares{"v100": 2, "k80": 1},
			Placement: []allocation.Assignment{{Server: "s-v100", GPUs: 1}}},
		{ID: "big", GPUs: 2, Arrival: 1, Throughput: shares{"v100": 5}},
		{ID: "small", GPUs: 1, Arrival: 2, Throughput: shares{"v100": 2, "k80": 1}},
	}}
	for _, tc := range []struct {
		policy FIFO
		want   map[string]allocation.Accelerator
	}{
		{FIFO{}, map[string]allocation.Accelerator{"running": "v100", "big": "", "small": ""}},
		{FIFO{Agnostic: true}, map[string]allocation.Accelerator{"running": "v100", "big": "", "small": ""}},
		{FIFO{Backfill: true}, map[string]allocation.Accelerator{"running": "v100", "big": "", "small": "v100"}},
		// k80 has 2 free GPUs, v100 1.
		{FIFO{Agnostic: true, Backfill: true}, map[string]allocation.Accelerator{"running": "v100", "big": "", "small": "k80"}},
	} {
		d, err := tc.policy.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(tc.want, fifoTypes(t, s, d)); diff != "" {
			t.Errorf("%+v: types (-want +got):\n%s", tc.policy, diff)
		}
	}
}

func TestFIFORunningJobsKeepTheirType(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s-k80", Accelerator: "k80", GPUs: 1},
		{ID: "s-v100", Accelerator: "v100", GPUs: 1},
	}}
	tput := shares{"k80": 1, "v100": 4}
	s := &policy.Snapshot{Now: 1, Cluster: c, Jobs: []policy.Job{
		{ID: "queued", GPUs: 1, Arrival: 0, Throughput: tput},
		{ID: "running", GPUs: 1, Arrival: 1, Throughput: tput,
			Placement: []allocation.Assignment{{Server: "s-v100", GPUs: 1}}},
	}}
	for _, tc := range []struct {
		policy FIFO
		want   map[string]allocation.Accelerator
	}{
		// Non-preemptive: the running job keeps the V100 although it
		// arrived later.
		{FIFO{}, map[string]allocation.Accelerator{"queued": "k80", "running": "v100"}},
		{FIFO{Agnostic: true}, map[string]allocation.Accelerator{"queued": "k80", "running": "v100"}},
		// Preemptive: rebuilt in arrival order.
		{FIFO{Preemptive: true}, map[string]allocation.Accelerator{"queued": "v100", "running": "k80"}},
	} {
		d, err := tc.policy.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(tc.want, fifoTypes(t, s, d)); diff != "" {
			t.Errorf("%+v: types (-want +got):\n%s", tc.policy, diff)
		}
		if len(d.Warnings) != 0 {
			t.Errorf("%+v: warnings %q", tc.policy, d.Warnings)
		}
	}
}

// Running jobs that cannot keep their type rejoin the queue, with a warning.
func TestFIFORunningJobsRequeued(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s-k80", Accelerator: "k80", GPUs: 2},
		{ID: "s-v100", Accelerator: "v100", GPUs: 1},
	}}
	on := func(srv ...string) []allocation.Assignment {
		var a []allocation.Assignment
		for _, s := range srv {
			a = append(a, allocation.Assignment{Server: s, GPUs: 1})
		}
		return a
	}
	s := &policy.Snapshot{Now: 3, Cluster: c, Jobs: []policy.Job{
		// Keeps the V100.
		{ID: "a", GPUs: 1, Arrival: 0, Throughput: shares{"k80": 1, "v100": 4}, Placement: on("s-v100")},
		// Also claims the V100, which a already holds: moves to a K80.
		{ID: "b", GPUs: 1, Arrival: 1, Throughput: shares{"k80": 1, "v100": 4}, Placement: on("s-v100")},
		// Spans two types: no type to keep.
		{ID: "c", GPUs: 2, Arrival: 2, Throughput: shares{"k80": 1, "v100": 4}, Placement: on("s-k80", "s-v100")},
		// Runs where its throughput is now zero: moves.
		{ID: "d", GPUs: 1, Arrival: 3, Throughput: shares{"k80": 1}, Placement: on("s-v100")},
	}}
	d, err := (&FIFO{Backfill: true}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]allocation.Accelerator{"a": "v100", "b": "k80", "c": "", "d": "k80"}
	if diff := gocmp.Diff(want, fifoTypes(t, s, d)); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
	if len(d.Warnings) != 3 {
		t.Fatalf("warnings %q, want 3", d.Warnings)
	}
	for i, w := range []string{`job "b"`, `job "c"`, `job "d"`} {
		if !strings.HasPrefix(d.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it about %s", i, d.Warnings[i], w)
		}
	}
	// Without backfilling c blocks d.
	d, err = (&FIFO{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want["d"] = ""
	if diff := gocmp.Diff(want, fifoTypes(t, s, d)); diff != "" {
		t.Errorf("no backfill: types (-want +got):\n%s", diff)
	}
}

// fifoSnapshot is randomSnapshot with arrivals, ties included, and some
// jobs running on servers of one type.
func fifoSnapshot(rng *rand.Rand) *policy.Snapshot {
	n, nk := 1+rng.IntN(40), 1+rng.IntN(4)
	s := randomSnapshot(rng, n, nk, 1+rng.IntN(n+4))
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Arrival = time.Duration(rng.IntN(n)) * time.Second
		s.Now = max(s.Now, j.Arrival)
		if rng.IntN(3) == 0 {
			srv := s.Cluster.Servers[rng.IntN(len(s.Cluster.Servers))]
			j.Placement = []allocation.Assignment{{Server: srv.ID, GPUs: 1}}
		}
	}
	return s
}

func TestFIFORandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var policies []*FIFO
	for _, agnostic := range []bool{false, true} {
		for _, backfill := range []bool{false, true} {
			for _, preemptive := range []bool{false, true} {
				policies = append(policies, &FIFO{Agnostic: agnostic, Backfill: backfill, Preemptive: preemptive})
			}
		}
	}
	for i := range 200 {
		s := fifoSnapshot(rng)
		before, _ := json.Marshal(s)
		for _, p := range policies {
			d, err := p.Allocate(context.Background(), s)
			if err != nil {
				t.Fatalf("instance %d %+v: %v", i, p, err)
			}
			got := fifoTypes(t, s, d)
			// Deterministic and independent of the order of Snapshot.Jobs.
			shuffled := *s
			shuffled.Jobs = slices.Clone(s.Jobs)
			rng.Shuffle(len(shuffled.Jobs), func(a, b int) { shuffled.Jobs[a], shuffled.Jobs[b] = shuffled.Jobs[b], shuffled.Jobs[a] })
			d2, err := p.Allocate(context.Background(), &shuffled)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(d, d2); diff != "" {
				t.Fatalf("instance %d %+v: decision depends on job order (-first +shuffled):\n%s", i, p, diff)
			}
			checkFIFOOrder(t, fmt.Sprintf("instance %d %+v", i, p), s, p, got)
		}
		if after, _ := json.Marshal(s); string(before) != string(after) {
			t.Fatalf("instance %d: Allocate modified the snapshot", i)
		}
	}
}

// checkFIFOOrder checks properties that hold whatever the greedy's choices:
// with Backfill no waiting job fits in what is left; without it, and without
// running jobs to keep, the scheduled jobs are a prefix of the queue.
func checkFIFOOrder(t *testing.T, name string, s *policy.Snapshot, p *FIFO, got map[string]allocation.Accelerator) {
	t.Helper()
	free := make(map[allocation.Accelerator]int)
	for _, k := range s.Cluster.Types() {
		free[k] = s.Cluster.GPUs(k)
	}
	for _, j := range s.Jobs {
		if k := got[j.ID]; k != "" {
			free[k] -= j.GPUs
		}
	}
	queue := slices.Clone(s.Jobs)
	slices.SortFunc(queue, func(a, b policy.Job) int {
		return cmp.Or(cmp.Compare(a.Arrival, b.Arrival), cmp.Compare(a.ID, b.ID))
	})
	waited := false
	for _, j := range queue {
		if got[j.ID] == "" {
			waited = true
			if p.Backfill {
				for k, f := range free {
					if f >= j.GPUs && j.Throughput[k] > 0 {
						t.Fatalf("%s: job %q waits, but %s has %d GPUs free", name, j.ID, k, f)
					}
				}
			}
		} else if waited && p.Preemptive && !p.Backfill {
			t.Fatalf("%s: job %q runs behind a waiting job", name, j.ID)
		}
	}
}

func TestFIFOInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*policy.Snapshot)
		want   string
	}{
		{"unknown accelerator", func(s *policy.Snapshot) { s.Jobs[1].Throughput = shares{"tpu": 3} }, `throughput`},
		{"elastic without GPUs", func(s *policy.Snapshot) {
			s.Jobs[1].GPUs, s.Jobs[1].Elastic = 0, &policy.Elastic{BatchSize: 32}
		}, `gpus: 0`},
		{"arrival after now", func(s *policy.Snapshot) { s.Jobs[1].Arrival = time.Second }, `arrival`},
		{"unknown server", func(s *policy.Snapshot) {
			s.Jobs[1].Placement = []allocation.Assignment{{Server: "nowhere", GPUs: 1}}
		}, `placement`},
		{"too many GPUs", func(s *policy.Snapshot) { s.Jobs[1].GPUs = 3 }, `gpus`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
			tc.mutate(s)
			for _, p := range []*FIFO{{}, {Agnostic: true}} {
				// B is left out with its reason; the others are scheduled.
				d, err := p.Allocate(context.Background(), s)
				if err != nil {
					t.Fatalf("%s: %v", p.Name(), err)
				}
				if why, ok := d.Unscheduled["B"]; !ok || len(d.Unscheduled) != 1 || !strings.HasPrefix(why, tc.want) {
					t.Errorf("%s: Unscheduled = %v, want B left out for %s", p.Name(), d.Unscheduled, tc.want)
				}
				if _, ok := d.Allocation["B"]; ok || len(d.Allocation) != len(s.Jobs)-1 {
					t.Errorf("%s: Allocation = %v, want every job but B", p.Name(), d.Allocation)
				}
				// Strict fails the round instead, naming the job.
				_, err = policy.Strict(p).Allocate(context.Background(), s)
				if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "B": `+tc.want) {
					t.Fatalf("Strict %s: err = %v, want ErrInvalidSnapshot naming %s", p.Name(), err, tc.want)
				}
			}
		})
	}
	if _, err := (&FIFO{}).Allocate(context.Background(), nil); !errors.Is(err, policy.ErrInvalidSnapshot) {
		t.Errorf("nil snapshot: err = %v", err)
	}
}

func TestFIFOCancelledAndEmpty(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
	if _, err := (&FIFO{}).Allocate(ctx, s); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	d, err := (&FIFO{}).Allocate(context.Background(), &policy.Snapshot{Cluster: handCluster()})
	if err != nil || len(d.Allocation) != 0 || d.Objective != 0 || d.Policy != "gavel.fifo" {
		t.Fatalf("got %+v, %v; want an empty decision", d, err)
	}
}

func TestFIFORegistered(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         FIFO
	}{
		{"gavel.fifo", "", FIFO{}},
		{"gavel.fifo-agnostic", "", FIFO{Agnostic: true}},
		{"gavel.fifo", `{"agnostic": true, "backfill": true, "preemptive": true}`, FIFO{Agnostic: true, Backfill: true, Preemptive: true}},
	} {
		p, err := policy.New(tc.name, []byte(tc.config))
		if err != nil {
			t.Fatal(err)
		}
		r, ok := p.(*policy.Rounds)
		if !ok {
			t.Fatalf("New(%q, %s) = %T, want a *policy.Rounds", tc.name, tc.config, p)
		}
		f, ok := r.Shares.(*FIFO)
		if !ok || *f != tc.want {
			t.Errorf("New(%q, %s) = %#v, want %+v", tc.name, tc.config, p, tc.want)
		}
		if p.Name() != tc.want.Name() {
			t.Errorf("New(%q, %s).Name() = %q", tc.name, tc.config, p.Name())
		}
	}
	for _, cfg := range []string{`{"round_seconds": -1}`, `{"recompute_seconds": "x"}`, `{"recompute_seconds": 1e300}`} {
		if _, err := policy.New("gavel.fifo", []byte(cfg)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("New(gavel.fifo, %s) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
	p, err := policy.New("gavel.fifo", []byte(`{"round_seconds": 60, "recompute_seconds": 1920, "backfill": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.(*policy.Rounds); r.Mechanism.Round != time.Minute || r.Recompute != 1920*time.Second || !r.Shares.(*FIFO).Backfill {
		t.Errorf("round and recompute keys: got %v, %v, %+v", r.Mechanism.Round, r.Recompute, r.Shares)
	}
	if _, err := policy.New("gavel.fifo", []byte(`{"solver": "clp"}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("FIFO has no solver: err = %v, want ErrInvalidConfig", err)
	}
}
