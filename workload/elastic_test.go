package workload

import (
	"context"
	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/sim"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/pollux" // registers pollux, pollux.optimus
)

func elasticJob(id string, steps float64) policy.Job {
	return policy.Job{ID: id, StepsTotal: steps, Throughput: map[allocation.Accelerator]float64{"v100": 1},
		Elastic: &policy.Elastic{BatchSize: 1, MaxBatchSize: 1}}
}

// A decision's Placement is carried out as placed: job a runs on 2 GPUs of
// s1 and 1 of s2 (sorted by server) at speed 1 in both of its 60 s rounds,
// so its 100 steps end at 100 s, with 3 GPUs × 100 s = 300 GPU-seconds. Placements that disagree
// with the grant, name an unknown server or mix types are errors.
func TestPlacementHonoured(t *testing.T) {
	cluster := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4},
		{ID: "s2", Accelerator: "v100", GPUs: 4},
		{ID: "s3", Accelerator: "k80", GPUs: 4},
	}}
	const round = 60 * time.Second
	run := func(grant int, place []allocation.Assignment) ([]placement.Run, *sim.Result, error) {
		var runs []placement.Run
		s := &sim.Simulation{
			Cluster: cluster,
			Round:   round,
			Policy: &simtest.Stub{Decide: simtest.PlaceAll(grant, "v100", round, func(time.Duration) []allocation.Assignment {
				return slices.Clone(place)
			})},
			Speed: func(j *policy.Job, g allocation.Grant, r placement.Run) float64 {
				runs = append(runs, r)
				return 1
			},
		}
		j := job("a", 0, 100*time.Second, 3)
		res, err := s.Run(context.Background(), []policy.Job{j})
		return runs, res, err
	}

	runs, res, err := run(3, []allocation.Assignment{{Server: "s2", GPUs: 1}, {Server: "s1", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	want := placement.Run{Job: "a", Accelerator: "v100", Assignments: []allocation.Assignment{{Server: "s1", GPUs: 2}, {Server: "s2", GPUs: 1}}}
	if !reflect.DeepEqual(runs, []placement.Run{want, want}) {
		t.Errorf("runs %+v, want two %+v", runs, want)
	}
	if r := res.Jobs[0]; r.Finish != 100*time.Second || r.GPUSeconds != 300 {
		t.Errorf("finish %v, GPU-seconds %v; want 100 s and 300", r.Finish, r.GPUSeconds)
	}
	if len(res.Rounds) != 2 || res.Rounds[0].BusyGPUs != 3 || res.Rounds[1].BusyGPUs != 3 {
		t.Errorf("rounds %+v, want two with 3 busy GPUs", res.Rounds)
	}

	for _, c := range []struct {
		name  string
		grant int
		place []allocation.Assignment
		want  string
	}{
		{"fewer than granted", 3, []allocation.Assignment{{Server: "s1", GPUs: 2}}, "granted 3 GPUs but placed on 2"},
		{"more than granted", 3, []allocation.Assignment{{Server: "s1", GPUs: 4}}, "granted 3 GPUs but placed on 4"},
		{"unknown server", 3, []allocation.Assignment{{Server: "s9", GPUs: 3}}, "unknown server"},
		{"mixed types", 3, []allocation.Assignment{{Server: "s1", GPUs: 2}, {Server: "s3", GPUs: 1}}, "placed on both"},
		{"over capacity", 5, []allocation.Assignment{{Server: "s1", GPUs: 5}}, "over capacity"},
		{"not granted", 0, []allocation.Assignment{{Server: "s1", GPUs: 1}}, "granted 0 GPUs but placed on 1"},
	} {
		if _, _, err := run(c.grant, c.place); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// A placement whose counts sum to the grant (3) but include a negative
// count holds more GPUs than granted (4 of s1, charged as 3): it must be an
// error, not cancel GPUs out.
func TestPlacementNegativeGPUs(t *testing.T) {
	const round = 60 * time.Second
	s := &sim.Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "s1", Accelerator: "v100", GPUs: 4},
			{ID: "s2", Accelerator: "v100", GPUs: 4},
		}},
		Round: round,
		Policy: &simtest.Stub{Decide: simtest.PlaceAll(3, "v100", round, func(time.Duration) []allocation.Assignment {
			return []allocation.Assignment{{Server: "s1", GPUs: 4}, {Server: "s2", GPUs: -1}}
		})},
	}
	if res, err := s.Run(context.Background(), []policy.Job{job("a", 0, 100*time.Second, 3)}); err == nil {
		t.Errorf("placed on 4 + (−1) GPUs: no error (busy GPUs %d)", res.Rounds[0].BusyGPUs)
	}
}

// Job a (300 steps at 1 step/s, 1 GPU) alternates between s1 and s2 every
// 60 s round, with Restart 0 and Reallocate 30 s:
//
//	round 0 [0, 60):    first run, Restart 0 → no cost, 60 steps (60)
//	round k ≥ 1:        GPUs changed → starts 30 s late, 30 steps (60+30k)
//
// 300 steps are reached in round 8 (60 + 8·30), which starts at 480 s,
// works from 510 s and finishes at 540 s. Restarts: 8 (rounds 1 to 8);
// Observe sees Restarts k in round k, after the cost is charged.
func TestReallocateCost(t *testing.T) {
	cluster := allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 1},
		{ID: "s2", Accelerator: "v100", GPUs: 1},
	}}
	const round = 60 * time.Second
	type obs struct {
		restarts int
		worked   time.Duration
		server   string
	}
	simulate := func(alternate bool, restart time.Duration) (*sim.Result, []obs, *simtest.Stub, []policy.Job) {
		t.Helper()
		var seen []obs
		stub := &simtest.Stub{Decide: simtest.PlaceAll(1, "v100", round, func(now time.Duration) []allocation.Assignment {
			if alternate && (now/round)%2 == 1 {
				return []allocation.Assignment{{Server: "s2", GPUs: 1}}
			}
			return []allocation.Assignment{{Server: "s1", GPUs: 1}}
		})}
		s := &sim.Simulation{
			Cluster: cluster, Policy: stub, Round: round,
			Restart: restart, Reallocate: 30 * time.Second,
			Speed: func(*policy.Job, allocation.Grant, placement.Run) float64 { return 1 },
			Observe: func(j *policy.Job, _ allocation.Grant, r placement.Run, worked time.Duration) {
				seen = append(seen, obs{j.Elastic.Restarts, worked, r.Assignments[0].Server})
			},
		}
		jobs := []policy.Job{elasticJob("a", 300)}
		res, err := s.Run(context.Background(), jobs)
		if err != nil {
			t.Fatal(err)
		}
		return res, seen, stub, jobs
	}

	res, seen, stub, in := simulate(true, 0)
	if got := res.Jobs[0].Finish; got != 540*time.Second {
		t.Errorf("alternating: finish %v, want 540 s", got)
	}
	var want []obs
	for k := range 9 {
		o := obs{k, 30 * time.Second, "s1"}
		if k == 0 {
			o.worked = 60 * time.Second
		}
		if k%2 == 1 {
			o.server = "s2"
		}
		want = append(want, o)
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("alternating: observed\n%+v\nwant\n%+v", seen, want)
	}
	// The policy sees the restarts of the rounds before: 7 at 480 s, and
	// the placement of round 7 (s2).
	last := stub.Calls[len(stub.Calls)-1]
	if last.Now != 480*time.Second || last.Restarts["a"] != 7 || !reflect.DeepEqual(last.Place["a"], []allocation.Assignment{{Server: "s2", GPUs: 1}}) {
		t.Errorf("alternating: last call %+v, want at 480 s with 7 restarts on s2", last)
	}
	if in[0].Elastic.Restarts != 0 {
		t.Errorf("alternating: caller's job has %d restarts, want 0 (a copy)", in[0].Elastic.Restarts)
	}
	if res.Jobs[0].GPUSeconds != 300 {
		t.Errorf("alternating: GPU-seconds %v, want 300 (worked time only)", res.Jobs[0].GPUSeconds)
	}

	// Kept on s1: no reallocation, 300 s and no restart.
	res, seen, _, _ = simulate(false, 0)
	if got := res.Jobs[0].Finish; got != 300*time.Second {
		t.Errorf("kept: finish %v, want 300 s", got)
	}
	for _, o := range seen {
		if o.restarts != 0 || o.worked != 60*time.Second {
			t.Errorf("kept: observed %+v, want 0 restarts and 60 s each", o)
		}
	}
	if len(seen) != 5 {
		t.Errorf("kept: %d runs, want 5", len(seen))
	}

	// Kept, with Restart 20 s: only the first run pays, 20 + 300 = 320 s,
	// and that counts as one restart.
	res, seen, _, _ = simulate(false, 20*time.Second)
	if got := res.Jobs[0].Finish; got != 320*time.Second {
		t.Errorf("restart 20 s: finish %v, want 320 s", got)
	}
	if got := seen[len(seen)-1].restarts; got != 1 {
		t.Errorf("restart 20 s: %d restarts, want 1", got)
	}
}

// Observe runs once per run with the worked time: 90 steps at 1 step/s in
// 60 s rounds are 60 s, then 30 s (finishing mid-round at 90 s). What it
// writes into the job reaches the next snapshot but not the caller's jobs.
func TestObserveHook(t *testing.T) {
	const round = 60 * time.Second
	stub := &simtest.Stub{Decide: simtest.PlaceAll(1, "v100", round, func(time.Duration) []allocation.Assignment {
		return []allocation.Assignment{{Server: "s1", GPUs: 1}}
	})}
	var worked []time.Duration
	s := &sim.Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s1", Accelerator: "v100", GPUs: 1}}},
		Policy:  stub, Round: round,
		Speed: func(*policy.Job, allocation.Grant, placement.Run) float64 { return 1 },
		Observe: func(j *policy.Job, _ allocation.Grant, _ placement.Run, w time.Duration) {
			worked = append(worked, w)
			j.Elastic.GradSqr = 42
			j.Elastic.ProfiledGPUs = 7
		},
	}
	j := elasticJob("a", 90)
	j.Elastic.GradSqr = 1
	in := []policy.Job{j}
	res, err := s.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{60 * time.Second, 30 * time.Second}; !reflect.DeepEqual(worked, want) {
		t.Errorf("worked %v, want %v", worked, want)
	}
	if got := res.Jobs[0].Finish; got != 90*time.Second {
		t.Errorf("finish %v, want 90 s", got)
	}
	if len(stub.Calls) != 2 || stub.Calls[0].GradSqr["a"] != 1 || stub.Calls[1].GradSqr["a"] != 42 {
		t.Errorf("policy saw %+v, want grad_sqr 1 then 42", stub.Calls)
	}
	if e := in[0].Elastic; *e != (policy.Elastic{BatchSize: 1, MaxBatchSize: 1, GradSqr: 1}) {
		t.Errorf("caller's Elastic changed to %+v", *e)
	}
}

// Observe may modify the job's Adaptive facts, which are the simulation's
// own copy: none of the caller's slices may change.
func TestObserveAdaptiveCopy(t *testing.T) {
	const round = 60 * time.Second
	s := &sim.Simulation{
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s1", Accelerator: "v100", GPUs: 1}}},
		Policy: &simtest.Stub{Decide: simtest.PlaceAll(1, "v100", round, func(time.Duration) []allocation.Assignment {
			return []allocation.Assignment{{Server: "s1", GPUs: 1}}
		})},
		Round: round,
		Observe: func(j *policy.Job, _ allocation.Grant, _ placement.Run, _ time.Duration) {
			j.Adaptive.Regimes[0] = 999
			j.Adaptive.EpochSeconds[0] = 999
			j.Adaptive.History[0] = 999
		},
	}
	j := job("a", 0, 90*time.Second, 1)
	j.Adaptive = &policy.Adaptive{Regimes: []int{16, 32}, EpochSeconds: []float64{10, 6}, Epochs: 3, History: []int{0, 0}}
	in := []policy.Job{j}
	if _, err := s.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	want := policy.Adaptive{Regimes: []int{16, 32}, EpochSeconds: []float64{10, 6}, Epochs: 3, History: []int{0, 0}}
	if got := *in[0].Adaptive; !reflect.DeepEqual(got, want) {
		t.Errorf("caller's Adaptive changed to %+v, want %+v", got, want)
	}
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// The Elastic model's speed, worked by hand from the synthetic Perf
// (throughput.Params: AccumTime(m) = αc + βc·m, NetworkTime ≈ 0 on one
// GPU, OptimTime = (AccumTime^γ + NetworkTime^γ)^(1/γ)).
func TestElasticSpeed(t *testing.T) {
	apps := SyntheticApps()
	one := func(srv ...allocation.Assignment) placement.Run {
		return placement.Run{Job: "j", Accelerator: PolluxGPU, Assignments: srv}
	}

	// cifar10 on 1 GPU at its batch 128 (LocalBatchMax 1024): s = 0,
	// m = 128; step ≈ AccumTime(128) = 0.025 + 0.00065·128 = 0.1082 s,
	// Gain(128) = 1 → 1/0.1082 steps/s.
	cifar := apps["cifar10"]
	e := &Elastic{Apps: map[string]*App{"j": cifar}}
	j := &policy.Job{ID: "j", Elastic: &policy.Elastic{BatchSize: 128}}
	step, _ := cifar.StepTime([]int{1}, 128)
	got := e.Speed(j, allocation.Grant{GPUs: 1}, one(allocation.Assignment{Server: "n0", GPUs: 1}))
	if !approx(got, 1/step) || math.Abs(got-1/0.1082) > 1e-6 {
		t.Errorf("cifar10, 1 GPU: %v steps/s, want 1/%v ≈ %v", got, step, 1/0.1082)
	}
	if !approx(got, cifar.SingleGPURate()) {
		t.Errorf("cifar10, 1 GPU: %v, SingleGPURate %v", got, cifar.SingleGPURate())
	}

	// The same with LocalBatchMax 32: 128 is split into s = 3 extra
	// micro-steps of m = 32: T = step + 3·(step − sync) with
	// step ≈ AccumTime(32) = 0.025 + 0.0208 = 0.0458 s and sync ≈ 0, so
	// T ≈ 4·0.0458 = 0.1832 s; Gain(128) = 1.
	small := *cifar
	small.LocalBatchMax = 32
	e.Apps["j"] = &small
	step, sync := small.StepTime([]int{1}, 32)
	got = e.Speed(j, allocation.Grant{GPUs: 1}, one(allocation.Assignment{Server: "n0", GPUs: 1}))
	if want := 1 / (step + 3*(step-sync)); !approx(got, want) || math.Abs(got-1/0.1832) > 1e-6 {
		t.Errorf("cifar10, local max 32: %v steps/s, want %v ≈ %v", got, want, 1/0.1832)
	}

	// imagenet (M0 = 200, LocalBatchMax 200) on 2+2 GPUs at batch 2000:
	// local 500 → s = ⌈500/200⌉ − 1 = 2, m = ⌈500/3⌉ = 167; the batch run
	// is 4·167·3 = 2004. Epoch 0: Sqr = 1, Var = 1 → φ = 200,
	// EFFICIENCY(2004) = 400/2204, Gain = 400/2204 · 2004/200 = 4008/2204.
	// Perf: AccumTime(167) = 0.055 + 0.0045·167 = 0.8065,
	// NetworkTime(2 nodes, 4) = 0.3 + 0.005·2 = 0.31, γ = 2:
	// step = √(0.8065² + 0.31²), sync = step − 0.8065,
	// T = step + 2·0.8065.
	img := apps["imagenet"]
	e.Apps["j"] = img
	j = &policy.Job{ID: "j", Elastic: &policy.Elastic{BatchSize: 200}}
	run4 := one(allocation.Assignment{Server: "n0", GPUs: 2}, allocation.Assignment{Server: "n1", GPUs: 2})
	got = e.Speed(j, allocation.Grant{GPUs: 4, BatchSize: 2000}, run4)
	hand := (4008.0 / 2204) / (math.Sqrt(0.8065*0.8065+0.31*0.31) + 2*0.8065)
	if m, s := efficiency.Split(2000, 4, img.LocalBatchMax); m != 167 || s != 2 {
		t.Errorf("Split(2000, 4, 200) = %d, %d; want 167, 2", m, s)
	}
	step, sync = img.StepTime([]int{2, 2}, 167)
	gp := efficiency.Goodput{Grad: grad(img, 0, 2004), BatchSize: img.BatchSize}
	formula := gp.Gain(2004) / (step + 2*(step-sync))
	if !approx(got, hand) || !approx(got, formula) {
		t.Errorf("imagenet, 2+2 GPUs, batch 2000: %v steps/s, want %v by hand, %v by formula", got, hand, formula)
	}
	// Without a grant's batch the job's own (200) is used: 50 per GPU,
	// s = 0, Gain(200) = 1, T = √(AccumTime(50)² + 0.31²) with
	// AccumTime(50) = 0.055 + 0.225 = 0.28.
	got = e.Speed(j, allocation.Grant{GPUs: 4}, run4)
	if want := 1 / math.Sqrt(0.28*0.28+0.31*0.31); !approx(got, want) {
		t.Errorf("imagenet, 2+2 GPUs, own batch: %v steps/s, want %v", got, want)
	}

	// A job without an App runs at its Throughput.
	j = &policy.Job{ID: "other", Throughput: map[allocation.Accelerator]float64{PolluxGPU: 3}}
	if got := e.Speed(j, allocation.Grant{GPUs: 1}, one(allocation.Assignment{Server: "n0", GPUs: 1})); got != 3 {
		t.Errorf("job without an App: %v, want its throughput 3", got)
	}
}

// Prepare reports the App's Perf, its floored gradient statistics at the
// job's batch and ProfiledGPUs ≥ 1; Observe raises ProfiledGPUs to the GPUs
// run on, never lowers it, and does not touch jobs without an App.
func TestElasticPrepareObserve(t *testing.T) {
	apps := SyntheticApps()
	img := apps["imagenet"]
	// Negative measured statistics, as deepspeech2 has: Sqr −1, Var −1 at
	// the only batch size 8. Floored: Sqr 0, Var 10⁻⁶.
	neg := &App{Name: "neg", BatchSize: 8, MaxBatchSize: 8, LocalBatchMax: 8, Epochs: 1, Perf: img.Perf,
		Validation: map[int][]ValidationEpoch{8: {{Progress: 100, Iteration: 100, GradSqr: -1, GradVar: -1}}}}
	e := &Elastic{Apps: map[string]*App{"i": img, "n": neg}}
	jobs := []policy.Job{
		{ID: "i", Elastic: &policy.Elastic{BatchSize: 200}},
		{ID: "n", Elastic: &policy.Elastic{BatchSize: 8, ProfiledGPUs: 3}},
		{ID: "x", Elastic: &policy.Elastic{BatchSize: 5}},
		{ID: "i2"},
	}
	orig := *jobs[0].Elastic
	e.Prepare(jobs)
	if *jobs[0].Elastic == orig {
		t.Error("Prepare changed nothing")
	}
	// imagenet at epoch 0: Sqr 1, Var φ/M0 = 200/200 = 1.
	want := policy.Elastic{BatchSize: 200, Perf: img.Perf, GradSqr: 1, GradVar: 1, ProfiledGPUs: 1}
	if got := *jobs[0].Elastic; got != want {
		t.Errorf("imagenet prepared %+v, want %+v", got, want)
	}
	want = policy.Elastic{BatchSize: 8, Perf: img.Perf, GradSqr: 0, GradVar: 1e-6, ProfiledGPUs: 3}
	if got := *jobs[1].Elastic; got != want {
		t.Errorf("negative grads prepared %+v, want %+v", got, want)
	}
	if got := *jobs[2].Elastic; got != (policy.Elastic{BatchSize: 5}) || jobs[3].Elastic != nil {
		t.Errorf("jobs without an App changed: %+v, %+v", got, jobs[3].Elastic)
	}

	run := func(gpus ...int) placement.Run {
		r := placement.Run{Job: "i", Accelerator: PolluxGPU}
		for i, g := range gpus {
			r.Assignments = append(r.Assignments, allocation.Assignment{Server: string(rune('a' + i)), GPUs: g})
		}
		return r
	}
	j := &jobs[0]
	e.Observe(j, allocation.Grant{GPUs: 4}, run(3, 1), time.Minute)
	if j.Elastic.ProfiledGPUs != 4 {
		t.Errorf("after 4 GPUs: profiled %d, want 4", j.Elastic.ProfiledGPUs)
	}
	e.Observe(j, allocation.Grant{GPUs: 1}, run(1), time.Minute)
	if j.Elastic.ProfiledGPUs != 4 {
		t.Errorf("after 1 GPU: profiled %d, want still 4", j.Elastic.ProfiledGPUs)
	}
	// Past the first epoch (progress ≥ 6406) of 90, the noise scale grows:
	// epoch 1's Var is φ₁/200 with φ₁ = 200·64^(1/89).
	j.StepsDone = 6406
	e.Observe(j, allocation.Grant{GPUs: 1}, run(1), time.Minute)
	if want := math.Pow(64, 1.0/89); !approx(j.Elastic.GradVar, want) || j.Elastic.GradSqr != 1 {
		t.Errorf("epoch 1: grad %v, %v; want 1, %v", j.Elastic.GradSqr, j.Elastic.GradVar, want)
	}

	// Speed floors the statistics too: Sqr 0 means no noise scale, every
	// batch fully efficient: batch 16 on 2 GPUs gains 16/8 = 2 per step.
	// (Unfloored, φ = (−1/−1)·8 = 8 and the gain would be 16/24·2 = 4/3.)
	nj := &policy.Job{ID: "n", Elastic: &policy.Elastic{BatchSize: 8}}
	r := placement.Run{Job: "n", Accelerator: PolluxGPU, Assignments: []allocation.Assignment{{Server: "a", GPUs: 2}}}
	step, sync := neg.StepTime([]int{2}, 8)
	if got, want := e.Speed(nj, allocation.Grant{GPUs: 2, BatchSize: 16}, r), 2/(step+0*(step-sync)); !approx(got, want) {
		t.Errorf("negative grads: speed %v, want %v", got, want)
	}
}

// 12 jobs of cifar10, ncf and bert on 2 nodes × 4 T4 GPUs, under Pollux
// (elastic jobs) and Optimus (tuned jobs): every job finishes, no round
// uses more than 8 GPUs, JCTs are positive and the same seed replays
// exactly.
func TestElasticEndToEnd(t *testing.T) {
	const workload = `name,time,application,num_replicas,batch_size
c0,0,cifar10,1,128
n0,0,ncf,1,256
b0,30,bert,1,12
c1,60,cifar10,2,256
n1,120,ncf,1,512
c2,180,cifar10,1,128
b1,240,bert,2,24
n2,300,ncf,2,256
c3,360,cifar10,4,512
n3,420,ncf,1,256
c4,500,cifar10,2,256
b2,600,bert,1,12
`
	cluster := allocation.Cluster{Servers: []allocation.Server{
		{ID: "node0", Accelerator: PolluxGPU, GPUs: 4},
		{ID: "node1", Accelerator: PolluxGPU, GPUs: 4},
	}}
	simulate := func(name, config string, tuned bool) (*sim.Result, int) {
		t.Helper()
		jobs, el, err := ReadPolluxWorkload(strings.NewReader(workload), SyntheticApps(), WorkloadOptions{Tuned: tuned})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 12 {
			t.Fatalf("%d jobs, want 12", len(jobs))
		}
		el.Prepare(jobs)
		p, err := policy.New(name, []byte(config))
		if err != nil {
			t.Fatal(err)
		}
		widest := 0
		s := &sim.Simulation{
			Cluster: cluster, Policy: p,
			Round: 60 * time.Second, Restart: 30 * time.Second, Reallocate: 30 * time.Second,
			Speed: el.Speed,
			Observe: func(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration) {
				widest = max(widest, sumGPUs(run.Assignments))
				el.Observe(j, g, run, worked)
			},
		}
		start := time.Now()
		res, err := s.Run(context.Background(), jobs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d rounds in %v, widest run %d GPUs", name, len(res.Rounds), time.Since(start), widest)
		if len(res.Jobs) != 12 {
			t.Fatalf("%s: %d job records, want 12", name, len(res.Jobs))
		}
		for _, r := range res.Jobs {
			if !r.Finished || !r.Ran || r.Finish <= r.Arrival || r.FirstRun < r.Arrival {
				t.Errorf("%s: job %s: %+v", name, r.ID, r)
			}
		}
		for _, r := range res.Rounds {
			if r.BusyGPUs > 8 || r.GPUs != 8 {
				t.Errorf("%s: round at %v: %d of %d GPUs busy", name, r.Start, r.BusyGPUs, r.GPUs)
			}
		}
		return res, widest
	}
	for _, c := range []struct {
		name, config string
		tuned        bool
	}{
		{"pollux", `{"population": 20, "generations": 10, "seed": 7}`, false},
		{"pollux.optimus", ``, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, widest := simulate(c.name, c.config, c.tuned)
			b, _ := simulate(c.name, c.config, c.tuned)
			if !reflect.DeepEqual(a.Jobs, b.Jobs) || !reflect.DeepEqual(a.Rounds, b.Rounds) {
				t.Errorf("%s: two runs with the same seed differ", c.name)
			}
			if !c.tuned && widest < 2 {
				t.Errorf("pollux never ran a job on more than 1 GPU (widest %d)", widest)
			}
		})
	}
}

// job is a rigid job of the given length in seconds at speed 1 on v100.
func job(id string, arrival, length time.Duration, gpus int) policy.Job {
	return policy.Job{ID: id, Arrival: arrival, GPUs: gpus, StepsTotal: length.Seconds(),
		Throughput: map[allocation.Accelerator]float64{"v100": 1}}
}
