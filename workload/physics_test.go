package workload

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/sim"
	"github.com/dlsched/dlsched/throughput"
)

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func run(typ allocation.Accelerator, as ...allocation.Assignment) placement.Run {
	return placement.Run{Job: "a", Accelerator: typ, Assignments: as}
}

// A 2-GPU job at 100 examples/s runs at half speed when its GPUs span two
// servers (Spread 0.5), at full speed on one, and at 0 on a type it has no
// base for.
func TestPhysicsSpread(t *testing.T) {
	p := &Physics{Jobs: map[string]*Truth{"a": {GPUs: 2, Batch: 8, Spread: 0.5,
		Base: map[allocation.Accelerator]float64{"v100": 100}}}}
	j := &policy.Job{ID: "a", GPUs: 2, StepsTotal: 1000}
	for _, c := range []struct {
		r    placement.Run
		want float64
	}{
		{run("v100", allocation.Assignment{Server: "s1", GPUs: 2}), 100},
		{run("v100", allocation.Assignment{Server: "s1", GPUs: 1}, allocation.Assignment{Server: "s2", GPUs: 1}), 50},
		{run("k80", allocation.Assignment{Server: "k", GPUs: 2}), 0},
	} {
		if got := p.Speed(j, allocation.Grant{GPUs: 2}, c.r); !closeTo(got, c.want) {
			t.Errorf("%v: speed %v, want %v", c.r.Assignments, got, c.want)
		}
	}
}

// Hand-solved scaling with T_accum(m) = 0.1 + 0.01·m, no network cost on
// one GPU and 0.1 s within a server (γ = 1: the two add), nominal 1 GPU at
// batch 10: X(1, 10) = 10/0.2 = 50 examples/s.
//   - 2 GPUs at the job's own batch 20 (m = 10): X = 20/(0.2 + 0.1) =
//     66.67, scaling 4/3.
//   - The policy's batch 40 on 2 GPUs (m = 20): X = 40/(0.3 + 0.1) = 100,
//     and with φ = 20, M0 = 10: E(40) = 30/60, E(20) = 30/40, so
//     scaling = 100/50 · (0.5/0.75) = 4/3 as well.
//   - 1 GPU at batch 40 with LocalMax 20: two micro-steps of 20,
//     T = 0.3 + 0.3 = 0.6 s for 40 examples, X = 66.67; E(40)/E(10) = 0.5:
//     scaling 2/3.
func TestPhysicsScaling(t *testing.T) {
	tr := &Truth{GPUs: 1, Batch: 10, LocalMax: 20, NoiseStart: 20, NoiseEnd: 20,
		Perf: throughput.Params{AlphaC: 0.1, BetaC: 0.01, AlphaR: 0.1, Gamma: 1}}
	for _, c := range []struct {
		k, b, own int
		want      float64
	}{
		{1, 10, 10, 1},
		{2, 20, 20, 4.0 / 3},
		{2, 40, 20, 4.0 / 3},
		{1, 40, 10, 2.0 / 3},
	} {
		if got := tr.scaling(c.k, c.b, c.own, 20); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("scaling(%d, %d, %d) = %v, want %v", c.k, c.b, c.own, got, c.want)
		}
	}
	if got := tr.scaling(0, 10, 10, 20); got != 0 {
		t.Errorf("no GPUs: %v", got)
	}
}

// Regimes: a 2-epoch job whose own batch goes 10 → 20 (T_accum = 0.1 +
// 0.01·m, so X(1, 20)/X(1, 10) = 66.67/50 = 4/3) runs at the base speed in
// its first half and 4/3 of it in its second; alone, it takes
// S/2/B + S/2/(4B/3) = 0.875·S/B (to 10⁻⁷: the model keeps a 10⁻⁸ s
// network time on one GPU).
func TestPhysicsRegimes(t *testing.T) {
	tr := &Truth{GPUs: 1, Batch: 10, Epochs: 2, Stages: []Stage{{10, 1}, {20, 2}},
		Perf: throughput.Params{AlphaC: 0.1, BetaC: 0.01}, Base: map[allocation.Accelerator]float64{"v100": 50}}
	p := &Physics{Jobs: map[string]*Truth{"a": tr}}
	j := &policy.Job{ID: "a", GPUs: 1, StepsTotal: 1000, Throughput: map[allocation.Accelerator]float64{"v100": 50},
		Adaptive: &policy.Adaptive{Regimes: []int{10, 20}, EpochSeconds: []float64{10, 7.5}, Epochs: 2}}
	r := run("v100", allocation.Assignment{Server: "s", GPUs: 1})
	if got := p.Speed(j, allocation.Grant{GPUs: 1}, r); !closeTo(got, 50) {
		t.Errorf("first epoch: %v, want 50", got)
	}
	j.StepsDone = 750
	if got := p.Speed(j, allocation.Grant{GPUs: 1}, r); math.Abs(got-200.0/3) > 1e-5 {
		t.Errorf("second epoch: %v, want 66.67", got)
	}
	if got, want := p.Exclusive(j), seconds(0.875*1000/50); (got - want).Abs() > time.Millisecond {
		t.Errorf("exclusive %v, want %v", got, want)
	}
	p.Observe(j, allocation.Grant{GPUs: 1}, r, time.Minute)
	if j.Adaptive.BatchSize != 20 || j.Adaptive.History[0] != 1 || j.Adaptive.History[1] != 0 {
		t.Errorf("adaptive facts after the first epoch: %+v", j.Adaptive)
	}
	if got := j.Throughput["v100"]; math.Abs(got-200.0/3) > 1e-5 {
		t.Errorf("observed throughput %v, want 66.67", got)
	}
	tr.Base["k80"] = 5 // a type the job was never told of stays unknown
	p.Observe(j, allocation.Grant{GPUs: 1}, r, time.Minute)
	if _, ok := j.Throughput["k80"]; ok || len(j.Throughput) != 1 {
		t.Errorf("observed throughputs %v, want v100 only", j.Throughput)
	}
}

// Two jobs sharing GPUs run at their measured co-location factors; a
// partner whose model has no factor makes no progress.
func TestPhysicsColocation(t *testing.T) {
	base := map[allocation.Accelerator]float64{"v100": 10}
	p := &Physics{Jobs: map[string]*Truth{
		"a": {Model: "A", GPUs: 1, Batch: 1, Base: base, Colocation: map[string]float64{"B": 0.6}},
		"b": {Model: "B", GPUs: 1, Batch: 1, Base: base, Colocation: map[string]float64{"A": 0.7}},
		"c": {Model: "C", GPUs: 1, Batch: 1, Base: base},
	}}
	pair := placement.Run{Job: "a", Partner: "b", Accelerator: "v100", Assignments: []allocation.Assignment{{Server: "s", GPUs: 1}}}
	if got := p.Speed(&policy.Job{ID: "a", StepsTotal: 1}, allocation.Grant{GPUs: 1}, pair); !closeTo(got, 6) {
		t.Errorf("a beside b: %v, want 6", got)
	}
	if got := p.Speed(&policy.Job{ID: "b", StepsTotal: 1}, allocation.Grant{GPUs: 1}, pair); !closeTo(got, 7) {
		t.Errorf("b beside a: %v, want 7", got)
	}
	pair.Partner = "c"
	if got := p.Speed(&policy.Job{ID: "a", StepsTotal: 1}, allocation.Grant{GPUs: 1}, pair); got != 0 {
		t.Errorf("a beside c: %v, want 0", got)
	}
}

// Inform tells a and b of each other at their throughput times their
// factor, on the types both run on; c (no co-location) and d (2 GPUs)
// are told nothing, and nobody is told of them.
func TestPhysicsInform(t *testing.T) {
	base := map[allocation.Accelerator]float64{"v100": 10}
	p := &Physics{Jobs: map[string]*Truth{
		"a": {Model: "A", GPUs: 1, Batch: 1, Base: base, Colocation: map[string]float64{"B": 0.6, "C": 0.9, "A": 0.5}},
		"b": {Model: "B", GPUs: 1, Batch: 1, Base: base, Colocation: map[string]float64{"A": 0.7}},
		"c": {Model: "C", GPUs: 1, Batch: 1, Base: base},
		"d": {Model: "A", GPUs: 2, Batch: 1, Base: base, Colocation: map[string]float64{"A": 0.5, "B": 0.6}},
	}}
	thr := func(v100, k80 float64) map[allocation.Accelerator]float64 {
		return map[allocation.Accelerator]float64{"v100": v100, "k80": k80}
	}
	s := &policy.Snapshot{Jobs: []policy.Job{
		{ID: "a", GPUs: 1, Throughput: thr(10, 4)},
		{ID: "b", GPUs: 1, Throughput: thr(20, 0)},
		{ID: "c", GPUs: 1, Throughput: thr(10, 4)},
		{ID: "d", GPUs: 2, Throughput: thr(10, 4)},
	}}
	p.Inform(s)
	type col = map[string]map[allocation.Accelerator]float64
	want := []col{{"b": {"v100": 6}}, {"a": {"v100": 14}}, nil, nil}
	for i, j := range s.Jobs {
		if diff := cmp.Diff(want[i], col(j.Colocated)); diff != "" {
			t.Errorf("job %s (-want +got):\n%s", j.ID, diff)
		}
	}
}

// CPU and memory multiply in: a job whose profile gives 0.5 at 1 core per
// GPU and 1 at 3 runs at half speed when granted 1 core per GPU.
func TestPhysicsResources(t *testing.T) {
	sens := &throughput.Sensitivity{CPUs: []float64{1, 3}, MemoryGB: []float64{10}, Speedup: [][]float64{{0.5}, {1}}}
	p := &Physics{Jobs: map[string]*Truth{"a": {GPUs: 2, Batch: 1, Base: map[allocation.Accelerator]float64{"v100": 10}}}}
	j := &policy.Job{ID: "a", GPUs: 2, StepsTotal: 1, Sensitivity: sens}
	r := run("v100", allocation.Assignment{Server: "s", GPUs: 2})
	if got := p.Speed(j, allocation.Grant{GPUs: 2, CPUs: 2, MemoryGB: 20}, r); !closeTo(got, 5) {
		t.Errorf("1 core per GPU: %v, want 5", got)
	}
	if got := p.Speed(j, allocation.Grant{GPUs: 2, CPUs: 6, MemoryGB: 20}, r); !closeTo(got, 10) {
		t.Errorf("3 cores per GPU: %v, want 10", got)
	}
}

// In the engine: a 2-GPU job of 1000 examples at 10 examples/s, placed
// across two servers with Spread 0.5, finishes at 200 s instead of 100 s.
func TestPhysicsSpreadInSimulation(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{{ID: "s1", Accelerator: "v100", GPUs: 1}, {ID: "s2", Accelerator: "v100", GPUs: 1}}}
	p := &Physics{Jobs: map[string]*Truth{"a": {GPUs: 2, Batch: 1, Spread: 0.5, Base: map[allocation.Accelerator]float64{"v100": 10}}}}
	stub := &simtest.Stub{Decide: simtest.PlaceAll(2, "v100", time.Minute, func(time.Duration) []allocation.Assignment {
		return []allocation.Assignment{{Server: "s1", GPUs: 1}, {Server: "s2", GPUs: 1}}
	})}
	s := &sim.Simulation{Cluster: c, Policy: stub, Round: time.Minute, Speed: p.Speed, Observe: p.Observe, Exclusive: p.Exclusive}
	res, err := s.Run(context.Background(), []policy.Job{{ID: "a", GPUs: 2, StepsTotal: 1000, Throughput: map[allocation.Accelerator]float64{"v100": 10}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Jobs[0].Finish; got != 200*time.Second {
		t.Errorf("finish %v, want 200s", got)
	}
	if got := res.Jobs[0].Exclusive; got != 100*time.Second {
		t.Errorf("exclusive %v, want 100s (consolidated)", got)
	}
}

// Inform equals the pair-by-pair definition (tellPairs with a's throughput
// times its factor beside b's model) on random snapshots: models, factors,
// missing truths, zero and missing throughputs, GPU counts. It shares
// entries between partners alike; the values must not tell.
func TestPhysicsInformMatchesPairs(t *testing.T) {
	types := []allocation.Accelerator{"k80", "p100", "v100", "a100"}
	models := []string{"A", "B", "C", "D", "E"}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 3))
		p := &Physics{Jobs: map[string]*Truth{}}
		var jobs []policy.Job
		for i := range 1 + rng.IntN(60) {
			j := policy.Job{ID: fmt.Sprintf("j%d", i), GPUs: 1 << rng.IntN(3), Throughput: map[allocation.Accelerator]float64{}}
			for _, k := range types {
				switch rng.IntN(4) {
				case 0: // not known on k
				case 1:
					j.Throughput[k] = 0
				default:
					j.Throughput[k] = rng.Float64() * 10
				}
			}
			jobs = append(jobs, j)
			if rng.IntN(6) == 0 {
				continue // no truth
			}
			tr := &Truth{Model: models[rng.IntN(len(models))], Colocation: map[string]float64{}}
			for _, m := range models {
				if rng.IntN(3) > 0 {
					tr.Colocation[m] = rng.Float64()
				}
			}
			p.Jobs[j.ID] = tr
		}
		got := &policy.Snapshot{Jobs: slices.Clone(jobs)}
		p.Inform(got)
		want := &policy.Snapshot{Jobs: slices.Clone(jobs)}
		tellPairs(want, func(a, b *policy.Job, k allocation.Accelerator) float64 {
			ta, tb := p.Jobs[a.ID], p.Jobs[b.ID]
			if ta == nil || tb == nil {
				return 0
			}
			return a.Throughput[k] * ta.Colocation[tb.Model]
		})
		for i := range jobs {
			if diff := cmp.Diff(want.Jobs[i].Colocated, got.Jobs[i].Colocated); diff != "" {
				t.Fatalf("seed %d, job %s (-pairs +Inform):\n%s", seed, jobs[i].ID, diff)
			}
		}
	}
}
