package workload

import (
	"context"
	"errors"
	"fmt"
	"github.com/dlsched/dlsched/sim"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/gavel"
)

// adaptiveJob builds an adaptive job and its Adaptation from per-epoch
// batch sizes and per-batch epoch seconds.
func adaptiveJob(id string, arrival time.Duration, batch []int, secs map[int]float64) (policy.Job, *Adaptation) {
	regimes := slices.Sorted(maps.Keys(secs))
	x := &policy.Adaptive{Regimes: regimes, Epochs: len(batch), BatchSize: batch[0], History: make([]int, len(regimes))}
	for _, b := range regimes {
		x.EpochSeconds = append(x.EpochSeconds, secs[b])
	}
	j := policy.Job{
		ID: id, GPUs: 1, Arrival: arrival, StepsTotal: float64(len(batch)),
		Throughput: map[allocation.Accelerator]float64{"v100": 1 / secs[batch[0]]},
		Adaptive:   x,
	}
	return j, &Adaptation{Batch: batch, EpochSeconds: secs}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

var v100Run = placement.Run{Job: "a", Accelerator: "v100", Assignments: []allocation.Assignment{{Server: "n", GPUs: 1}}}

// Epochs [10, 10, 20] take 60, 60 and 30 s: 150 s in all. With 120 s
// rounds: from 0 the round covers epochs 0 and 1 (2/120); from 0.5 it
// covers the remaining 2.5 epochs in 120 s; from 1.5 the remaining 1.5
// epochs take 30 + 30 = 60 s; from 2 one epoch takes 30 s.
func TestAdaptiveSpeedHand(t *testing.T) {
	j, ad := adaptiveJob("a", 0, []int{10, 10, 20}, map[int]float64{10: 60, 20: 30})
	a := &Adaptive{Jobs: map[string]*Adaptation{"a": ad}, Round: 120 * time.Second}
	for _, c := range []struct{ done, want float64 }{
		{0, 2.0 / 120},
		{0.5, 2.5 / 120},
		{1, 2.0 / 90}, // 1 epoch at 60 s + 1 at 30 s: finishes in 90 s
		{1.5, 1.5 / 60},
		{2, 1.0 / 30},
		{2.5, 0.5 / 15},
	} {
		j.StepsDone = c.done
		if got := a.Speed(&j, allocation.Grant{GPUs: 1}, v100Run); !near(got, c.want) {
			t.Errorf("Speed at %v epochs = %v, want %v", c.done, got, c.want)
		}
	}
	// A longer job whose round ends inside an epoch: [10, 20, 20, 10],
	// prefix times 0, 60, 90, 120, 180. From 0.5 (30 s) the round ends at
	// 150 s, halfway through epoch 3: 3.5 − 0.5 = 3 epochs in 120 s.
	j2, ad2 := adaptiveJob("b", 0, []int{10, 20, 20, 10}, map[int]float64{10: 60, 20: 30})
	a.Jobs["b"] = ad2
	for _, c := range []struct{ done, want float64 }{{0, 3.0 / 120}, {0.5, 3.0 / 120}, {1, 3.0 / 120}, {1.5, 2.5 / 105}} {
		j2.StepsDone = c.done
		if got := a.Speed(&j2, allocation.Grant{GPUs: 1}, v100Run); !near(got, c.want) {
			t.Errorf("job b: Speed at %v epochs = %v, want %v", c.done, got, c.want)
		}
	}
	if got := a.Exclusive(&j); got != 150*time.Second {
		t.Errorf("Exclusive = %v, want 150s", got)
	}
	if got := a.Exclusive(&j2); got != 180*time.Second {
		t.Errorf("Exclusive of b = %v, want 180s", got)
	}
	// A job without an Adaptation runs at its Throughput.
	other := policy.Job{ID: "z", StepsTotal: 100, Throughput: map[allocation.Accelerator]float64{"v100": 2, "k80": 0.5}}
	if got := a.Speed(&other, allocation.Grant{GPUs: 1}, v100Run); got != 2 {
		t.Errorf("Speed of a plain job = %v, want 2", got)
	}
	if got := a.Exclusive(&other); got != 50*time.Second {
		t.Errorf("Exclusive of a plain job = %v, want 50s", got)
	}
}

func cloneJob(j policy.Job) policy.Job {
	j.Throughput = maps.Clone(j.Throughput)
	if j.Adaptive != nil {
		x := *j.Adaptive
		x.Regimes, x.EpochSeconds, x.History = slices.Clone(x.Regimes), slices.Clone(x.EpochSeconds), slices.Clone(x.History)
		j.Adaptive = &x
	}
	return j
}

func TestAdaptiveSpeedDoesNotModifyJob(t *testing.T) {
	j, ad := adaptiveJob("a", 0, []int{10, 10, 20, 20, 10}, map[int]float64{10: 60, 20: 30})
	a := &Adaptive{Jobs: map[string]*Adaptation{"a": ad}}
	for _, done := range []float64{0, 0.3, 1, 2.7, 4.9, 5} {
		j.StepsDone = done
		before := cloneJob(j)
		a.Speed(&j, allocation.Grant{GPUs: 1}, v100Run)
		a.Exclusive(&j)
		if !reflect.DeepEqual(before, j) {
			t.Errorf("at %v epochs Speed modified the job: %+v, was %+v", done, j, before)
		}
	}
}

func TestAdaptiveObserve(t *testing.T) {
	j, ad := adaptiveJob("a", 0, []int{10, 10, 20}, map[int]float64{10: 60, 20: 30})
	a := &Adaptive{Jobs: map[string]*Adaptation{"a": ad}, Round: 120 * time.Second}
	shared := j.Throughput // the caller's map must survive
	for _, c := range []struct {
		done    float64
		history []int
		bs      int
		thr     float64
	}{
		{0.5, []int{0, 0}, 10, 1.0 / 60},
		{1, []int{1, 0}, 10, 1.0 / 60},
		{2, []int{2, 0}, 20, 1.0 / 30}, // crossed into the 20 regime
		{2.5, []int{2, 0}, 20, 1.0 / 30},
		{3, []int{2, 1}, 20, 1.0 / 30}, // done: the last epoch's batch size
	} {
		j.StepsDone = c.done
		a.Observe(&j, allocation.Grant{GPUs: 1}, v100Run, time.Minute)
		if !slices.Equal(j.Adaptive.History, c.history) || j.Adaptive.BatchSize != c.bs || !near(j.Throughput["v100"], c.thr) {
			t.Errorf("at %v epochs: history %v batch %d throughput %v, want %v %d %v",
				c.done, j.Adaptive.History, j.Adaptive.BatchSize, j.Throughput["v100"], c.history, c.bs, c.thr)
		}
		if j.Adaptive.Done() != int(c.done) {
			t.Errorf("at %v epochs: Done() = %d", c.done, j.Adaptive.Done())
		}
	}
	if shared["v100"] != 1.0/60 {
		t.Errorf("Observe modified the caller's throughput map: %v", shared)
	}
}

func TestAdaptivePrepare(t *testing.T) {
	j, ad := adaptiveJob("a", 0, []int{20, 10, 10}, map[int]float64{10: 60, 20: 30})
	j.Throughput["v100"] = 5 // stale
	j.Adaptive.History = []int{3, 3}
	a := &Adaptive{Jobs: map[string]*Adaptation{"a": ad}}
	jobs := []policy.Job{j, {ID: "plain", StepsTotal: 4, Throughput: map[allocation.Accelerator]float64{"v100": 1}}}
	if err := a.Prepare(jobs); err != nil {
		t.Fatal(err)
	}
	if got := jobs[0]; got.Throughput["v100"] != 1.0/30 || got.Adaptive.BatchSize != 20 || !slices.Equal(got.Adaptive.History, []int{0, 0}) {
		t.Errorf("prepared %+v %+v", got.Throughput, *got.Adaptive)
	}
	if jobs[1].Throughput["v100"] != 1 {
		t.Errorf("a plain job changed: %v", jobs[1].Throughput)
	}
	for name, spoil := range map[string]func(j *policy.Job, ad *Adaptation){
		"steps":    func(j *policy.Job, _ *Adaptation) { j.StepsTotal = 4 },
		"epochs":   func(j *policy.Job, _ *Adaptation) { j.Adaptive.Epochs = 2 },
		"regime":   func(j *policy.Job, _ *Adaptation) { j.Adaptive.Regimes = []int{10, 40} },
		"seconds":  func(j *policy.Job, _ *Adaptation) { j.Adaptive.EpochSeconds = []float64{60, 31} },
		"aligned":  func(j *policy.Job, _ *Adaptation) { j.Adaptive.EpochSeconds = []float64{60} },
		"missing":  func(_ *policy.Job, ad *Adaptation) { delete(ad.EpochSeconds, 20) },
		"zero":     func(_ *policy.Job, ad *Adaptation) { ad.EpochSeconds[20] = 0 },
		"noepochs": func(_ *policy.Job, ad *Adaptation) { ad.Batch = nil },
	} {
		j, ad := adaptiveJob("a", 0, []int{20, 10, 10}, map[int]float64{10: 60, 20: 30})
		spoil(&j, ad)
		a := &Adaptive{Jobs: map[string]*Adaptation{"a": ad}}
		if err := a.Prepare([]policy.Job{j}); !errors.Is(err, ErrAdaptation) {
			t.Errorf("%s: Prepare = %v, want ErrAdaptation", name, err)
		}
	}
}

// Two adaptive jobs on one GPU under FIFO, 120 s rounds, no restart cost,
// worked by hand:
//
//   - A, epochs [10, 10, 20] of 60, 60, 30 s (150 s alone), runs first:
//     round [0, 120) does epochs 0 and 1; round [120, 240) does epoch 2 in
//     30 s at the 20 regime, so A finishes at 150 s.
//   - B, epochs [5, 5, 5, 10] of 100, 100, 100, 50 s (350 s alone), waits
//     for the GPU, which A frees at the boundary of 240 s. Round [240, 360)
//     does 1.2 epochs, [360, 480) another 1.2 (2.4 done, 240 s of its
//     work), and the last 1.6 epochs take 60 + 50 = 110 s: B finishes at
//     480 + 110 = 590 s.
func TestAdaptiveSimulationHand(t *testing.T) {
	ja, ada := adaptiveJob("A", 0, []int{10, 10, 20}, map[int]float64{10: 60, 20: 30})
	jb, adb := adaptiveJob("B", 0, []int{5, 5, 5, 10}, map[int]float64{5: 100, 10: 50})
	a := &Adaptive{Jobs: map[string]*Adaptation{"A": ada, "B": adb}, Round: 120 * time.Second}
	jobs := []policy.Job{ja, jb}
	if err := a.Prepare(jobs); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.New("gavel.fifo", nil)
	if err != nil {
		t.Fatal(err)
	}
	var seenBatch []int
	s := &sim.Simulation{
		Cluster:   allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}},
		Policy:    pol,
		Round:     120 * time.Second,
		Speed:     a.Speed,
		Exclusive: a.Exclusive,
		Observe: func(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration) {
			a.Observe(j, g, run, worked)
			if j.ID == "A" {
				seenBatch = append(seenBatch, j.Adaptive.BatchSize)
			}
		},
	}
	res, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]time.Duration{"A": {150 * time.Second, 150 * time.Second}, "B": {590 * time.Second, 350 * time.Second}}
	for _, r := range res.Jobs {
		if !r.Finished || r.JCT() != want[r.ID][0] || r.Exclusive != want[r.ID][1] {
			t.Errorf("job %s: finished %v JCT %v exclusive %v, want JCT %v exclusive %v", r.ID, r.Finished, r.JCT(), r.Exclusive, want[r.ID][0], want[r.ID][1])
		}
	}
	if !slices.Equal(seenBatch, []int{20, 20}) {
		t.Errorf("A reported batch sizes %v after its runs, want [20 20]", seenBatch)
	}
	// The caller's jobs are untouched.
	if jobs[0].StepsDone != 0 || jobs[0].Adaptive.BatchSize != 10 || jobs[0].Throughput["v100"] != 1.0/60 {
		t.Errorf("the simulation modified the caller's job: %+v", jobs[0])
	}
}

// The Exclusive hook sets sim.JobRecord.Exclusive; without it a job's
// Exclusive is StepsTotal over its best throughput.
func TestSimulationExclusiveHook(t *testing.T) {
	run := func(hook func(*policy.Job) time.Duration) []sim.JobRecord {
		t.Helper()
		pol, err := policy.New("gavel.fifo", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &sim.Simulation{
			Cluster:   allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}},
			Policy:    pol,
			Round:     60 * time.Second,
			Exclusive: hook,
		}
		j := policy.Job{ID: "x", GPUs: 1, StepsTotal: 200, Throughput: map[allocation.Accelerator]float64{"v100": 2}}
		res, err := s.Run(context.Background(), []policy.Job{j})
		if err != nil {
			t.Fatal(err)
		}
		return res.Jobs
	}
	if got := run(nil)[0].Exclusive; got != 100*time.Second {
		t.Errorf("no hook: Exclusive %v, want 100s", got)
	}
	var called int
	got := run(func(j *policy.Job) time.Duration {
		called++
		if j.ID != "x" || j.StepsTotal != 200 {
			t.Errorf("hook got %+v", *j)
		}
		return 7 * time.Second
	})
	if called != 1 || got[0].Exclusive != 7*time.Second {
		t.Errorf("hook called %d times, Exclusive %v, want once and 7s", called, got[0].Exclusive)
	}
}

// With the hook, an adaptive job's ρ divides by its post-adaptation
// runtime: job B of TestAdaptiveSimulationHand, alone on its GPU, runs
// 350 s and has JCT 590 s; with N = 2 jobs on G = 1 GPU, ρ = 590 /
// (350 · 2). Its epoch count over its initial throughput would instead
// give 4 · 100 = 400 s.
func TestAdaptiveFTF(t *testing.T) {
	ja, ada := adaptiveJob("A", 0, []int{10, 10, 20}, map[int]float64{10: 60, 20: 30})
	jb, adb := adaptiveJob("B", 0, []int{5, 5, 5, 10}, map[int]float64{5: 100, 10: 50})
	a := &Adaptive{Jobs: map[string]*Adaptation{"A": ada, "B": adb}, Round: 120 * time.Second}
	pol, _ := policy.New("gavel.fifo", nil)
	for _, c := range []struct {
		hook func(*policy.Job) time.Duration
		excl float64
	}{{a.Exclusive, 350}, {nil, 400}} {
		s := &sim.Simulation{
			Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "n", Accelerator: "v100", GPUs: 1}}},
			Policy:  pol, Round: 120 * time.Second,
			Speed: a.Speed, Observe: a.Observe, Exclusive: c.hook,
		}
		res, err := s.Run(context.Background(), []policy.Job{ja, jb})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := sim.PerJob(res.Jobs, sim.Options{GPUs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ms[1].FTF, 590/(c.excl*2); ms[1].ID != "B" || !near(got, want) {
			t.Errorf("hook %v: ρ of %s = %v, want %v", c.hook != nil, ms[1].ID, got, want)
		}
	}
}

func ExampleAdaptive() {
	// A job of three epochs: two at batch size 10 (60 s each), then one
	// at 20 (30 s).
	a := &Adaptive{
		Jobs:  map[string]*Adaptation{"j": {Batch: []int{10, 10, 20}, EpochSeconds: map[int]float64{10: 60, 20: 30}}},
		Round: 120 * time.Second,
	}
	j := policy.Job{ID: "j", GPUs: 1, StepsTotal: 3, Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	run := placement.Run{Job: "j", Accelerator: "v100", Assignments: []allocation.Assignment{{Server: "n", GPUs: 1}}}
	_ = a.Prepare([]policy.Job{j})
	fmt.Printf("alone: %v\n", a.Exclusive(&j))
	for _, done := range []float64{0, 2} {
		j.StepsDone = done
		r := a.Speed(&j, allocation.Grant{GPUs: 1}, run)
		fmt.Printf("from epoch %v: %.4f epochs/s, %.0f s per epoch\n", done, r, 1/r)
	}
	a.Observe(&j, allocation.Grant{GPUs: 1}, run, 2*time.Minute)
	fmt.Printf("reports %.4f epochs/s\n", j.Throughput["v100"])
	// Output:
	// alone: 2m30s
	// from epoch 0: 0.0167 epochs/s, 60 s per epoch
	// from epoch 2: 0.0333 epochs/s, 30 s per epoch
	// reports 0.0333 epochs/s
}
