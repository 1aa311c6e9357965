package gavel

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// handSnapshot is Gavel's worked example with 1000 steps left per job.
func handSnapshot() *policy.Snapshot {
	s := &policy.Snapshot{Cluster: handCluster(), Jobs: handJobs()}
	for i := range s.Jobs {
		s.Jobs[i].StepsTotal = 1000
	}
	return s
}

func rows(d *policy.Decision) map[string]shares {
	out := make(map[string]shares)
	for id, g := range d.Allocation {
		out[id] = g.Shares
	}
	return out
}

func TestThroughputPoliciesHandSolved(t *testing.T) {
	tests := []struct {
		name     string
		policy   func(allocation.Solver) policy.Policy
		want     float64
		wantRows map[string]shares
	}{{
		// A takes the V100 (4 steps/s), B a K80 (1 step/s).
		name:     "max throughput",
		policy:   func(s allocation.Solver) policy.Policy { return &MaxThroughput{Solver: s} },
		want:     5,
		wantRows: map[string]shares{"A": {"v100": 1}, "B": {"k80": 1}},
	}, {
		// A on the V100 x, K80 1−x; B on the V100 1−x and a K80 x:
		// y_A = 1+3x = y_B = 2−x at x = 1/4, so y = 7/4 and 1000/(7/4) s.
		name:     "makespan",
		policy:   func(s allocation.Solver) policy.Policy { return &Makespan{Solver: s} },
		want:     4000.0 / 7,
		wantRows: map[string]shares{"A": {"v100": 0.25, "k80": 0.75}, "B": {"v100": 0.75, "k80": 0.25}},
	}, {
		// Agnostic: both jobs look as fast on a K80 as on the V100.
		// Two K80s hold both jobs full time: y = 4 and 2, makespan 500 s, but the
		// program sees 4 and 2 everywhere, so any split that keeps both busy is
		// optimal; its makespan (in its own, agnostic, terms) is 1000/2 s.
		name:   "makespan agnostic",
		policy: func(s allocation.Solver) policy.Policy { return &Makespan{Agnostic: true, Solver: s} },
		want:   500,
	}, {
		// Per dollar a K80 ($1) beats the V100 ($5) for both jobs: both run
		// full time on the K80s, 1/1 + 1/1 = 2 steps per dollar-hour.
		name: "min cost",
		policy: func(s allocation.Solver) policy.Policy {
			return &MinCost{Prices: map[allocation.Accelerator]float64{"v100": 5, "k80": 1}, Solver: s}
		},
		want:     2,
		wantRows: map[string]shares{"A": {"k80": 1}, "B": {"k80": 1}},
	}}
	for _, solver := range allocation.Solvers() {
		for _, tc := range tests {
			t.Run(solver.String()+"/"+tc.name, func(t *testing.T) {
				s := handSnapshot()
				d, err := tc.policy(solver).Allocate(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(d.Objective-tc.want) > 1e-7*tc.want {
					t.Errorf("objective = %.9f, want %.9f", d.Objective, tc.want)
				}
				if tc.wantRows != nil {
					if diff := cmp.Diff(tc.wantRows, rows(d), cmpopts.EquateApprox(0, 1e-7)); diff != "" {
						t.Errorf("shares (-want +got):\n%s", diff)
					}
				}
				if err := d.Allocation.Validate(s.Cluster); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func TestMinCostSLO(t *testing.T) {
	prices := map[allocation.Accelerator]float64{"v100": 5, "k80": 1}
	s := handSnapshot()
	s.Now = 100 * time.Second
	// A must do its 1000 steps in 400 s: 2.5 steps/s, which needs the V100
	// half of the time (4·0.5 + 1·0.5); cost favours the K80 for the rest.
	s.Jobs[0].Deadline = 500 * time.Second
	d, err := (&MinCost{Prices: prices, SLO: true}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]shares{"A": {"v100": 0.5, "k80": 0.5}, "B": {"k80": 1}}
	if diff := cmp.Diff(want, rows(d), cmpopts.EquateApprox(0, 1e-7)); diff != "" || len(d.Warnings) != 0 {
		t.Errorf("warnings %q; shares (-want +got):\n%s", d.Warnings, diff)
	}

	// 5 steps/s for both is beyond the cluster: the deadlines are dropped,
	// and the decision says so.
	s.Jobs[0].Deadline = 300 * time.Second
	s.Jobs[1].Deadline = 300 * time.Second
	d, err = (&MinCost{Prices: prices, SLO: true}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "cannot all be met") {
		t.Errorf("warnings = %q, want one about dropped deadlines", d.Warnings)
	}
	if diff := cmp.Diff(map[string]shares{"A": {"k80": 1}, "B": {"k80": 1}}, rows(d), cmpopts.EquateApprox(0, 1e-7)); diff != "" {
		t.Errorf("without deadlines the plain min-cost optimum should return (-want +got):\n%s", diff)
	}

	// A deadline already passed is named and ignored.
	s.Jobs[0].Deadline = 50 * time.Second
	s.Jobs[1].Deadline = 0
	d, err = (&MinCost{Prices: prices, SLO: true}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], `job "A"`) {
		t.Errorf("warnings = %q, want one naming job A", d.Warnings)
	}
}

func TestThroughputPoliciesInvalid(t *testing.T) {
	s := handSnapshot()
	s.Jobs[0].Deadline = time.Hour
	s.Jobs[0].StepsTotal = 0
	for _, tc := range []struct {
		name   string
		policy policy.Policy
		target error
		want   string
	}{
		{"missing price", &MinCost{Prices: map[allocation.Accelerator]float64{"v100": 1}}, policy.ErrInvalidConfig, `no price for accelerator "k80"`},
		{"zero price", &MinCost{Prices: map[allocation.Accelerator]float64{"v100": 1, "k80": 0}}, policy.ErrInvalidConfig, "prices[k80]: 0"},
	} {
		_, err := tc.policy.Allocate(context.Background(), s)
		if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %v containing %q", tc.name, err, tc.target, tc.want)
		}
	}
	// A deadline without a known length sets no constraint, with a
	// warning; Makespan leaves a job of unknown length out.
	d, err := (&MinCost{Prices: map[allocation.Accelerator]float64{"v100": 1, "k80": 1}, SLO: true}).Allocate(context.Background(), s)
	if err != nil || len(d.Unscheduled) != 0 || len(d.Allocation) != len(s.Jobs) ||
		len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], `job "A": steps_total`) {
		t.Errorf("deadline without steps: %+v, %v; want every job scheduled and a warning naming A's steps_total", d, err)
	}
	d, err = (&Makespan{}).Allocate(context.Background(), s)
	if err != nil || len(d.Unscheduled) != 1 || !strings.HasPrefix(d.Unscheduled["A"], "steps_total") {
		t.Errorf("makespan without steps: %+v, %v; want A left out for steps_total", d, err)
	}
	// The zero value prices K80s and V100s like Gavel: $0.135 and $0.74.
	d, err = (&MinCost{}).Allocate(context.Background(), handSnapshot())
	if err != nil || math.Abs(d.Objective-2/0.135) > 1e-6 {
		t.Errorf("MinCost{}: objective %v, %v; want 2/0.135 (both jobs on K80s)", d, err)
	}
	if _, err := policy.New("gavel.min-cost", []byte(`{"prices": {"v100": -1}}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("negative price in config: err = %v", err)
	}
}

func TestThroughputPoliciesRandom(t *testing.T) {
	if len(allocation.Solvers()) < 2 {
		t.Skip("needs both engines")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 40 {
		s := randomSnapshot(rng, 1+rng.IntN(30), 3, 1+rng.IntN(16))
		for j := range s.Jobs {
			s.Jobs[j].StepsTotal = float64(100 + rng.IntN(10000))
		}
		for _, mk := range []func(allocation.Solver) policy.Policy{
			func(v allocation.Solver) policy.Policy { return &MaxThroughput{Solver: v} },
			func(v allocation.Solver) policy.Policy { return &Makespan{Solver: v} },
			func(v allocation.Solver) policy.Policy { return &Makespan{Agnostic: true, Solver: v} },
		} {
			var objectives []float64
			for _, solver := range allocation.Solvers() {
				p := mk(solver)
				d, err := p.Allocate(context.Background(), s)
				if err != nil {
					t.Fatalf("instance %d %s %s: %v", i, p.Name(), solver, err)
				}
				if err := d.Allocation.Validate(s.Cluster); err != nil {
					t.Errorf("instance %d %s %s: %v", i, p.Name(), solver, err)
				}
				objectives = append(objectives, d.Objective)
			}
			if math.Abs(objectives[0]-objectives[1]) > 1e-7*objectives[0] {
				t.Errorf("instance %d %s: engines disagree: %v", i, mk(allocation.Auto).Name(), objectives)
			}
		}
	}
}
