package pollux_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
)

func screenPolicies() []policy.Policy {
	return []policy.Policy{&pollux.Pollux{Population: 20, Generations: 20}, &pollux.Optimus{}, &pollux.Fixed{}}
}

func granted(d *policy.Decision) []string {
	var ids []string
	for id, g := range d.Allocation {
		if g.GPUs > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// A job that can never fit (rigid or elastic) and an invalid job are left
// out with reasons that name the field; the good jobs run.
func TestScreenLeavesBadJobsOut(t *testing.T) {
	srv := []allocation.Server{{ID: "a", Accelerator: "v100", GPUs: 4}, {ID: "b", Accelerator: "k80", GPUs: 4}}
	both := map[allocation.Accelerator]float64{"v100": 2, "k80": 1}
	big := policy.Job{ID: "big", GPUs: 8, Throughput: both}
	wide := unfittedJob("wide")
	wide.Elastic.MinGPUs = 8
	neg := fittedJob("neg", 1)
	neg.Weight = -1
	g1 := fittedJob("g1", 1)
	g2 := policy.Job{ID: "g2", GPUs: 2, Throughput: both}
	s := snapshot(srv, g1, big, wide, neg, g2)
	for _, p := range screenPolicies() {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if err := d.Allocation.Validate(s.Cluster); err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if len(d.Unscheduled) != 3 || !strings.HasPrefix(d.Unscheduled["big"], "gpus:") ||
			!strings.HasPrefix(d.Unscheduled["wide"], "gpus:") || !strings.HasPrefix(d.Unscheduled["neg"], "weight:") {
			t.Errorf("%s: Unscheduled = %q; want big and wide (gpus), neg (weight)", p.Name(), d.Unscheduled)
		}
		if got := granted(d); !slices.Equal(got, []string{"g1", "g2"}) {
			t.Errorf("%s: scheduled %v; want [g1 g2]", p.Name(), got)
		}
	}
}

// Pollux's fact is Elastic. A job without it is a rigid job of its GPUs:
// it runs on exactly them, without a batch size, beside elastic jobs.
func TestScreenNoElastic(t *testing.T) {
	rigid := policy.Job{ID: "rigid", GPUs: 2, Throughput: map[allocation.Accelerator]float64{"t4": 1}}
	s := snapshot(servers("n", 2, 4, "t4"), rigid, fittedJob("e", 1))
	for _, p := range screenPolicies() {
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if g := d.Allocation["rigid"]; len(d.Unscheduled) != 0 || g.GPUs != 2 || g.BatchSize != 0 {
			t.Errorf("%s: rigid job granted %+v, left out %v; want exactly 2 GPUs", p.Name(), g, d.Unscheduled)
		}
		if _, total := placed(d.Placement["rigid"]); total != 2 {
			t.Errorf("%s: rigid job placed on %v", p.Name(), d.Placement["rigid"])
		}
		if g := d.Allocation["e"]; g.GPUs < 1 || g.BatchSize < 1 {
			t.Errorf("%s: elastic job granted %+v; want GPUs and a batch size", p.Name(), g)
		}
	}
	// Only rigid jobs: Pollux still decides.
	s = snapshot(servers("n", 1, 4, "t4"), rigid)
	d, err := (&pollux.Pollux{Population: 10, Generations: 5}).Allocate(context.Background(), s)
	if err != nil || d.Allocation["rigid"].GPUs != 2 {
		t.Errorf("only a rigid job: %+v, %v; want it on 2 GPUs", d, err)
	}
}

// Gradient statistics are in the model's own units and count only by their
// ratio: scaled by 2⁵⁴ (≈ 1.8·10¹⁶, exact in binary, and as large as
// AdaptDL's traces hold), every job is scheduled as before, and a noise
// scale that overflows counts as noise that dominates. The magnitude range
// once left such jobs out, unfinished, in Pollux's reproduction.
func TestGradientUnits(t *testing.T) {
	srv := servers("n", 4, 4, "t4")
	var plain, scaled []policy.Job
	for i := range 6 {
		j := fittedJob(fmt.Sprintf("j%d", i), float64(i+1))
		plain = append(plain, j)
		e := *j.Elastic
		e.GradSqr, e.GradVar = math.Ldexp(e.GradSqr, 54), math.Ldexp(e.GradVar, 54)
		j.Elastic = &e
		scaled = append(scaled, j)
	}
	wild := fittedJob("wild", 1)
	wild.Elastic.GradSqr, wild.Elastic.GradVar = 1e-300, 1e300
	scaled = append(scaled, wild)
	plain = append(plain, wild)
	fresh := screenPolicies() // pollux warm-starts from its last call
	for i, p := range screenPolicies() {
		want, err := fresh[i].Allocate(context.Background(), snapshot(srv, plain...))
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		got, err := p.Allocate(context.Background(), snapshot(srv, scaled...))
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		if len(got.Unscheduled) != 0 {
			t.Errorf("%s: left out %q; want every job scheduled", p.Name(), got.Unscheduled)
		}
		if !reflect.DeepEqual(got.Allocation, want.Allocation) {
			t.Errorf("%s: scaled gradient statistics give %v; want %v", p.Name(), got.Allocation, want.Allocation)
		}
	}
}
