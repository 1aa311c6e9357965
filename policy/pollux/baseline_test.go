package pollux_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
)

func gpusOf(d *policy.Decision) map[string]int {
	m := map[string]int{}
	for id, g := range d.Allocation {
		m[id] = g.GPUs
	}
	return m
}

// Acceptance 8, Optimus: two unfitted jobs scale linearly, T(k) = 1/k, so
// adding a GPU to a job at k saves (1/k − 1/(k+1))·R.
func TestOptimusMarginalGain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gpus   int
		ra, rb float64
		want   map[string]int
	}{
		// Both start at 1 GPU; 1 GPU left: a saves ½·100 = 50, b saves
		// ½·300 = 150, so b gets it.
		{"3gpus", 3, 100, 300, map[string]int{"a": 1, "b": 2}},
		// 2 GPUs left: b first (150 > 50); then a saves 50 at k=1 and b
		// saves (½ − ⅓)·400 = 66.7 at k=2, so b again. (With R_b = 300 the
		// second step is a tie at 50, decided by rounding: not asserted.)
		{"4gpus", 4, 100, 400, map[string]int{"a": 1, "b": 3}},
		// 4 GPUs left with R equal: a(1)=50, b(1)=50 tie → first by
		// arrival (a); then b(1)=50 > a(2)=16.7; then a(2)=b(2)=16.7 tie →
		// a; then b(2)=16.7 > a(3)=8.3. Ties go to the earlier arrival.
		{"6gpus-equal", 6, 100, 100, map[string]int{"a": 3, "b": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := unfittedJob("a"), unfittedJob("b")
			a.StepsTotal, b.StepsTotal = tc.ra, tc.rb
			b.Arrival = time.Second
			s := snapshot([]allocation.Server{{ID: "n0", Accelerator: "t4", GPUs: tc.gpus}}, a, b)
			d, err := (&pollux.Optimus{}).Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, gpusOf(d)); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
			for id, g := range d.Allocation {
				if g.BatchSize != 128 {
					t.Errorf("job %q: batch %d, want its own 128", id, g.BatchSize)
				}
			}
			checkDecision(t, s, d, checks{})
			if d.Policy != "pollux.optimus" {
				t.Errorf("Policy %q", d.Policy)
			}
		})
	}
}

// Optimus respects MaxGPUs and a fitted job's diminishing returns.
func TestOptimusBounds(t *testing.T) {
	a, b := fittedJob("a", 1), unfittedJob("b")
	a.Elastic.MaxGPUs = 2
	a.StepsTotal, b.StepsTotal = 1e6, 1
	s := snapshot(servers("n", 2, 4, "t4"), a, b)
	d, err := (&pollux.Optimus{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	// a stops at MaxGPUs 2; b takes the other 6.
	if diff := cmp.Diff(map[string]int{"a": 2, "b": 6}, gpusOf(d)); diff != "" {
		t.Errorf("GPUs (-want +got):\n%s", diff)
	}
	checkDecision(t, s, d, checks{})
}

// Optimus counts free GPUs over all types but each job can only use its
// own: two T4-only jobs on 4 T4s + 4 V100s are each grown to 4 GPUs, and
// the second then cannot be placed at all. Every job should get a GPU when
// the cluster can hold them all.
func TestOptimusPerTypeCapacity(t *testing.T) {
	srv := append(servers("t", 1, 4, "t4"), servers("v", 1, 4, "v100")...)
	a, b := unfittedJob("a"), unfittedJob("b")
	a.Throughput = map[allocation.Accelerator]float64{"t4": 1}
	b.Throughput = map[allocation.Accelerator]float64{"t4": 1}
	b.Arrival = time.Second
	s := snapshot(srv, a, b)
	d, err := (&pollux.Optimus{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	checkDecision(t, s, d, checks{})
	for _, id := range []string{"a", "b"} {
		if d.Allocation[id].GPUs < 1 {
			t.Errorf("job %q starved; decision %v", id, gpusOf(d))
		}
	}
}

// Fixed: a running job keeps its servers even where the packer would put
// it elsewhere, and a waiting job is placed on the fewest servers.
func TestFixedKeepsRunning(t *testing.T) {
	run := policy.Job{ID: "run", GPUs: 2, Throughput: map[allocation.Accelerator]float64{"t4": 1},
		Placement: []allocation.Assignment{{Server: "n01", GPUs: 1}, {Server: "n02", GPUs: 1}}}
	wait := policy.Job{ID: "wait", GPUs: 4, Throughput: map[allocation.Accelerator]float64{"t4": 1}}
	s := snapshot(servers("n", 3, 4, "t4"), run, wait)
	d, err := (&pollux.Fixed{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	checkDecision(t, s, d, checks{})
	if diff := cmp.Diff(run.Placement, d.Placement["run"]); diff != "" {
		t.Errorf("running job moved (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]allocation.Assignment{{Server: "n00", GPUs: 4}}, d.Placement["wait"]); diff != "" {
		t.Errorf("waiting job (-want +got):\n%s", diff)
	}
	if d.Policy != "pollux.fixed" {
		t.Errorf("Policy %q", d.Policy)
	}
}

// Fixed: a waiting job that does not fit lets a later, smaller one pass;
// among jobs that fit, the earlier arrival goes first whatever its ID.
func TestFixedBackfillAndOrder(t *testing.T) {
	tp := map[allocation.Accelerator]float64{"t4": 1}
	running := policy.Job{ID: "r", GPUs: 2, Throughput: tp, Placement: []allocation.Assignment{{Server: "n00", GPUs: 2}}}
	big := policy.Job{ID: "big", GPUs: 4, Throughput: tp, Arrival: time.Second}
	small := policy.Job{ID: "small", GPUs: 2, Throughput: tp, Arrival: 2 * time.Second}
	s := snapshot(servers("n", 1, 4, "t4"), small, big, running)
	d, err := (&pollux.Fixed{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"r": 2, "small": 2}, gpusOf(d)); diff != "" {
		t.Errorf("backfill (-want +got):\n%s", diff)
	}

	// Two waiting jobs of 4 on 4 free GPUs: the earlier arrival, "z",
	// wins over "a".
	z := policy.Job{ID: "z", GPUs: 4, Throughput: tp, Arrival: time.Second}
	a := policy.Job{ID: "a", GPUs: 4, Throughput: tp, Arrival: 2 * time.Second}
	s = snapshot(servers("n", 1, 4, "t4"), a, z)
	d, err = (&pollux.Fixed{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"z": 4}, gpusOf(d)); diff != "" {
		t.Errorf("arrival order (-want +got):\n%s", diff)
	}

	// An elastic job without GPUs runs at max(MinGPUs, 1) and its batch.
	e := fittedJob("e", 1)
	e.Elastic.MinGPUs = 3
	s = snapshot(servers("n", 1, 4, "t4"), e)
	d, err = (&pollux.Fixed{}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if g := d.Allocation["e"]; g.GPUs != 3 || g.BatchSize != 128 {
		t.Errorf("elastic job: %d GPUs batch %d, want 3 and 128", g.GPUs, g.BatchSize)
	}
}

// Fixed keeps a running job's placement even when it lies on an
// accelerator type the job cannot use, or on two types: the grant then
// names one type (picked in map order) for all its GPUs, which overfills
// that type and breaks Allocation.Validate. Such a job should be placed
// afresh like a waiting one.
func TestFixedBadPlacement(t *testing.T) {
	srv := append(servers("t", 1, 4, "t4"), servers("v", 1, 4, "v100")...)
	mixed := policy.Job{ID: "mixed", GPUs: 4, Throughput: map[allocation.Accelerator]float64{"t4": 1, "v100": 1},
		Placement: []allocation.Assignment{{Server: "t00", GPUs: 2}, {Server: "v00", GPUs: 2}}}
	other := policy.Job{ID: "other", GPUs: 2, Throughput: map[allocation.Accelerator]float64{"v100": 1}, Arrival: time.Second}
	wrong := policy.Job{ID: "wrong", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1},
		Placement: []allocation.Assignment{{Server: "t00", GPUs: 1}}}
	s := snapshot(srv, mixed, other, wrong)
	for range 5 { // map order varies
		d, err := (&pollux.Fixed{}).Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		checkDecision(t, s, d, checks{})
		if t.Failed() {
			return
		}
	}
}
