package gavel

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func oneType(gpus int) allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: gpus}}}
}

func TestHierarchicalTenantWeights(t *testing.T) {
	job := func(id, tenant string) policy.Job {
		return policy.Job{ID: id, Tenant: tenant, GPUs: 1, Throughput: shares{"v100": 2}}
	}
	s := &policy.Snapshot{
		Cluster: oneType(2),
		Jobs:    []policy.Job{job("a1", "a"), job("a2", "a"), job("b1", "b"), job("b2", "b")},
	}
	p := &Hierarchical{Tenants: map[string]Tenant{"a": {Weight: 1}, "b": {Weight: 2}}}
	for _, solver := range allocation.Solvers() {
		p.Solver = solver
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		// Normalized throughput is the time share here (one type).
		a := d.Allocation.Share("a1", "v100") + d.Allocation.Share("a2", "v100")
		b := d.Allocation.Share("b1", "v100") + d.Allocation.Share("b2", "v100")
		if math.Abs(a-2.0/3) > 1e-7 || math.Abs(b-4.0/3) > 1e-7 {
			t.Errorf("%s: tenant totals a = %v, b = %v; want 2/3 and 4/3 (1:2)", solver, a, b)
		}
		if err := d.Allocation.Validate(s.Cluster); err != nil {
			t.Error(err)
		}
	}
}

func TestHierarchicalFIFOTenant(t *testing.T) {
	s := &policy.Snapshot{
		Now:     time.Minute,
		Cluster: oneType(2),
		Jobs: []policy.Job{
			{ID: "late", Tenant: "q", GPUs: 1, Arrival: 30 * time.Second, Throughput: shares{"v100": 1}},
			{ID: "early", Tenant: "q", GPUs: 1, Arrival: 10 * time.Second, Throughput: shares{"v100": 1}},
			{ID: "middle", Tenant: "q", GPUs: 1, Arrival: 20 * time.Second, Throughput: shares{"v100": 1}},
		},
	}
	p := &Hierarchical{Tenants: map[string]Tenant{"q": {Policy: "fifo"}}}
	for _, solver := range allocation.Solvers() {
		p.Solver = solver
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		// The two oldest jobs fill the two GPUs; the newest waits.
		for id, want := range map[string]float64{"early": 1, "middle": 1, "late": 0} {
			if got := d.Allocation.Share(id, "v100"); math.Abs(got-want) > 1e-7 {
				t.Errorf("%s: job %s share %v, want %v", solver, id, got, want)
			}
		}
	}
}

// With one tenant under "fairness", hierarchical fairness is weighted
// water-filling: the leximin terms are unique, so the normalized
// throughputs must match.
func TestHierarchicalMatchesWaterFilling(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for i := range 20 {
		s := randomSnapshot(rng, 2+rng.IntN(12), 1+rng.IntN(3), 1+rng.IntN(8))
		h, err := (&Hierarchical{}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		w, err := (&WaterFilling{}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		zh, zw := terms(s, h, false), terms(s, w, false)
		for id := range zw {
			if math.Abs(zh[id]-zw[id]) > 1e-5*max(1, zw[id]) {
				t.Errorf("instance %d: job %s: hierarchical %v, water-filling %v", i, id, zh[id], zw[id])
			}
		}
	}
}

func TestHierarchicalInvalid(t *testing.T) {
	for _, cfg := range []string{`{"tenants": {"a": {"weight": -1}}}`, `{"tenants": {"a": {"policy": "lottery"}}}`} {
		if _, err := policy.New("gavel.hierarchical", []byte(cfg)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

// Once nothing can rise, raise settles the jobs left with one LP instead of
// a round per FIFO job; the levels, the rows and so the decision must be
// those of the rounds it skips. Random clusters, crowded enough for FIFO
// queues to wait (settle must have ended most instances), with tenants of
// both policies and a tenant-less job or two.
func TestHierarchicalSettle(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	tenants := map[string]Tenant{"a": {Weight: 2}, "b": {Policy: "fifo"}, "c": {Weight: 0.5, Policy: "fifo"}}
	names := []string{"a", "b", "c", ""}
	settled := 0
	for i := range 40 {
		s := randomSnapshot(rng, 8+rng.IntN(40), 1+rng.IntN(3), 1+rng.IntN(6))
		s.Now = time.Minute
		for j := range s.Jobs {
			s.Jobs[j].Tenant = names[rng.IntN(len(names))]
			s.Jobs[j].Arrival = time.Duration(rng.IntN(5)) * time.Second
		}
		var lps [2]int
		var ds [2]*policy.Decision
		for m, sequential := range []bool{true, false} {
			for _, solver := range allocation.Solvers() {
				p := &Hierarchical{Tenants: tenants, Solver: solver, sequential: sequential}
				_, jobs, _, err := prepare(context.Background(), p.Name(), s)
				if err != nil {
					t.Fatal(err)
				}
				prog, _, z, _ := normalized(s.Cluster, jobs, false, solver, nil, false)
				_, _, n, err := p.raise(context.Background(), prog, jobs, z)
				if err != nil {
					t.Fatalf("instance %d %s sequential=%v: %v", i, solver, sequential, err)
				}
				d, err := p.Allocate(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				if solver == allocation.Solvers()[0] {
					lps[m], ds[m] = n, d
				}
			}
		}
		if lps[1] > lps[0]+1 {
			t.Errorf("instance %d: %d LPs with settle, %d without", i, lps[1], lps[0])
		}
		if lps[1] < lps[0] {
			settled++
		}
		seq, fast := terms(s, ds[0], false), terms(s, ds[1], false)
		for id, want := range seq {
			if got := fast[id]; math.Abs(got-want) > 1e-6*max(1, want) {
				t.Errorf("instance %d: job %s: %v with settle, %v without", i, id, got, want)
			}
		}
		if math.Abs(ds[0].Objective-ds[1].Objective) > 1e-9*max(1, ds[0].Objective) {
			t.Errorf("instance %d: objective %v with settle, %v without", i, ds[1].Objective, ds[0].Objective)
		}
	}
	if settled < 20 {
		t.Errorf("settle saved LPs on %d of 40 instances, want at least 20", settled)
	}
}

// A round that lifts nobody does not mean nobody can rise: here the v100 is
// full when the FIFO queue's second job (v100 only) gets its turn, but its
// third can still use the free k80. Settling them all at 0 would let the
// final LP give the k80 to the fourth job, whose normalized throughput
// there is higher, out of FIFO order.
func TestHierarchicalSettleOnlyWhenStuck(t *testing.T) {
	s := &policy.Snapshot{
		Now: time.Minute,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "v", Accelerator: "v100", GPUs: 1}, {ID: "k", Accelerator: "k80", GPUs: 1},
		}},
		Jobs: []policy.Job{
			{ID: "a", Tenant: "fair", GPUs: 1, Throughput: shares{"v100": 1}},
			{ID: "b1", Tenant: "queue", GPUs: 1, Arrival: 1 * time.Second, Throughput: shares{"v100": 1}},
			{ID: "b2", Tenant: "queue", GPUs: 1, Arrival: 2 * time.Second, Throughput: shares{"v100": 1}},
			{ID: "b3", Tenant: "queue", GPUs: 1, Arrival: 3 * time.Second, Throughput: shares{"v100": 5, "k80": 0.5}},
			{ID: "b4", Tenant: "queue", GPUs: 1, Arrival: 4 * time.Second, Throughput: shares{"k80": 0.9}},
		},
	}
	p := &Hierarchical{Tenants: map[string]Tenant{"queue": {Policy: "fifo"}}}
	for _, solver := range allocation.Solvers() {
		p.Solver = solver
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id   string
			acc  allocation.Accelerator
			want float64
		}{{"a", "v100", 0.5}, {"b1", "v100", 0.5}, {"b3", "k80", 1}, {"b4", "k80", 0}} {
			if got := d.Allocation.Share(c.id, c.acc); math.Abs(got-c.want) > 1e-7 {
				t.Errorf("%s: job %s on %s: share %v, want %v", solver, c.id, c.acc, got, c.want)
			}
		}
	}
}
