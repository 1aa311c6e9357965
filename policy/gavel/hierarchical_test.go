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
