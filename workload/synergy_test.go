package workload

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/dlsched/dlsched/sim"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

const synergyData = "../../shared/data/synergy/"

// The ideal demand of every default model, from the spec's §1.3 table.
func TestSynergyModelsIdeal(t *testing.T) {
	want := map[string]struct {
		class string
		ideal throughput.Point
		iter  float64
	}{
		"alexnet":     {"image", throughput.Point{CPUs: 12, MemoryGB: 125, Speedup: 2.94}, 0.6},
		"shufflenet":  {"image", throughput.Point{CPUs: 12, MemoryGB: 125, Speedup: 2.89}, 0.615},
		"res18":       {"image", throughput.Point{CPUs: 9, MemoryGB: 62.5, Speedup: 2.4}, 0.64},
		"mobilenet":   {"image", throughput.Point{CPUs: 6, MemoryGB: 62.5, Speedup: 1.55}, 0.71},
		"res50":       {"image", throughput.Point{CPUs: 4, MemoryGB: 62.5, Speedup: 1.15}, 0.78},
		"m5":          {"speech", throughput.Point{CPUs: 6, MemoryGB: 187.5, Speedup: 2.5}, 0.6},
		"deepspeech":  {"speech", throughput.Point{CPUs: 3, MemoryGB: 62.5, Speedup: 1}, 0.757},
		"gnmt":        {"language", throughput.Point{CPUs: 1, MemoryGB: 20.83, Speedup: 1}, 0.12},
		"transformer": {"language", throughput.Point{CPUs: 1, MemoryGB: 20.83, Speedup: 1}, 0.67},
		"lstm":        {"language", throughput.Point{CPUs: 1, MemoryGB: 20.83, Speedup: 1}, 0.011},
	}
	models := SynergyModels()
	if len(models) != len(want) {
		t.Errorf("%d models, want %d", len(models), len(want))
	}
	for name, w := range want {
		m, ok := models[name]
		if !ok {
			t.Errorf("model %s missing", name)
			continue
		}
		if err := m.Sensitivity.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := m.Sensitivity.Ideal(); got != w.ideal {
			t.Errorf("%s: ideal %+v, want %+v", name, got, w.ideal)
		}
		if m.Class != w.class || m.IterSeconds != w.iter {
			t.Errorf("%s: class %s, iter %v s; want %s, %v s", name, m.Class, m.IterSeconds, w.class, w.iter)
		}
		if got := m.Sensitivity.At(3, 62.5); got != 1 {
			t.Errorf("%s: proportional cell %v, want 1", name, got)
		}
	}
	// A fresh map every call.
	models["res18"].Sensitivity.Speedup[0][0] = 99
	delete(models, "gnmt")
	again := SynergyModels()
	if again["res18"].Sensitivity.Speedup[0][0] != 0.1 || again["gnmt"].IterSeconds != 0.12 {
		t.Error("SynergyModels shares state between calls")
	}
}

func TestSynergyZoo(t *testing.T) {
	want := [3][]string{
		{"alexnet", "res18", "res50", "mobilenet", "shufflenet"},
		{"gnmt", "transformer", "lstm"},
		{"m5", "deepspeech"},
	}
	if got := SynergyZoo(); !reflect.DeepEqual(got, want) {
		t.Errorf("SynergyZoo() = %v, want %v", got, want)
	}
}

// Every matrix and iteration time equals Synergy's data, where present.
func TestSynergyModelsMatchData(t *testing.T) {
	b, err := os.ReadFile(synergyData + "model_profiles.json")
	if err != nil {
		t.Skip("Synergy data absent:", err)
	}
	var data struct {
		Axes struct {
			CPUs []float64 `json:"cpu_cores_per_gpu_rows"`
			Mem  []float64 `json:"mem_gb_per_gpu_cols"`
		} `json:"_axes"`
		Sets map[string]map[string]struct {
			IterTime float64     `json:"iter_time"`
			Tput     [][]float64 `json:"tput"`
		} `json:"profile_sets"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	for name, m := range SynergyModels() {
		d, ok := data.Sets["models"][name+"_1"]
		if !ok {
			t.Errorf("%s_1 missing from the data", name)
			continue
		}
		if m.IterSeconds != d.IterTime {
			t.Errorf("%s: iter %v, data %v", name, m.IterSeconds, d.IterTime)
		}
		if !reflect.DeepEqual(m.Sensitivity.Speedup, d.Tput) {
			t.Errorf("%s: matrix %v, data %v", name, m.Sensitivity.Speedup, d.Tput)
		}
		if !reflect.DeepEqual(m.Sensitivity.CPUs, data.Axes.CPUs) || !reflect.DeepEqual(m.Sensitivity.MemoryGB, data.Axes.Mem) {
			t.Errorf("%s: axes %v × %v, data %v × %v", name, m.Sensitivity.CPUs, m.Sensitivity.MemoryGB, data.Axes.CPUs, data.Axes.Mem)
		}
	}
}

// fixedPolicy returns the same grants and placement every round, and
// records the snapshots it is given. Wake asks for a call every round.
type fixedPolicy struct {
	grants allocation.Allocation
	place  map[string][]allocation.Assignment
	wake   time.Duration
	snaps  []policy.Snapshot
}

func (*fixedPolicy) Name() string { return "test.fixed" }

func (p *fixedPolicy) Allocate(_ context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	p.snaps = append(p.snaps, *s)
	d := &policy.Decision{Policy: p.Name(), Allocation: p.grants, Placement: p.place}
	if p.wake > 0 {
		d.Wake = s.Now + p.wake
	}
	return d, nil
}

// synergyServer is one of Synergy's default servers.
func synergyServer(id string) allocation.Server {
	return allocation.Server{ID: id, Accelerator: "v100", GPUs: 8, CPUs: 24, MemoryGB: 500}
}

func synergyJob(t *testing.T, id, model string, gpus int, steps float64, arrival time.Duration) policy.Job {
	t.Helper()
	m := SynergyModels()[model]
	return policy.Job{ID: id, GPUs: gpus, Arrival: arrival, StepsTotal: steps,
		Throughput:  map[allocation.Accelerator]float64{"v100": 1 / m.IterSeconds},
		Sensitivity: cloneSensitivity(m.Sensitivity)}
}

func synergySim(p policy.Policy, servers ...allocation.Server) *sim.Simulation {
	c := allocation.Cluster{Servers: servers}
	return &sim.Simulation{Cluster: c, Policy: p, Round: SynergyRound, Speed: Resources{Cluster: c}.Speed}
}

// Acceptance check 3: res18 at its ideal (9 cores, 62.5 GB) makes
// 300 × 2.4 / 0.64 = 1125 iterations in a 300 s round; at the proportional
// share (3, 62.5), granted or by default, floor(300 / 0.64) = 468 (468.75
// here, since progress is continuous).
func TestResourcesRoundProgress(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grant allocation.Grant
		want  float64
	}{
		{"ideal", allocation.Grant{GPUs: 1, CPUs: 9, MemoryGB: 62.5}, 1125},
		{"proportional", allocation.Grant{GPUs: 1, CPUs: 3, MemoryGB: 62.5}, 468.75},
		{"ungranted", allocation.Grant{GPUs: 1}, 468.75},
		{"starved", allocation.Grant{GPUs: 1, CPUs: 1, MemoryGB: 20.83}, 300 * 0.1 / 0.64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fixedPolicy{
				grants: allocation.Allocation{"r": tc.grant},
				place:  map[string][]allocation.Assignment{"r": {{Server: "s0", GPUs: 1}}},
				wake:   SynergyRound,
			}
			if _, err := synergySim(p, synergyServer("s0")).Run(context.Background(), []policy.Job{synergyJob(t, "r", "res18", 1, 2000, 0)}); err != nil {
				t.Fatal(err)
			}
			if len(p.snaps) < 2 || p.snaps[1].Now != SynergyRound {
				t.Fatalf("policy called %d times, second at %v", len(p.snaps), p.snaps[1].Now)
			}
			got := p.snaps[1].Jobs[0].StepsDone
			if math.Abs(got-tc.want) > 1e-9 || math.Floor(got+1e-9) != math.Floor(tc.want) {
				t.Errorf("%v iterations after one round, want %v", got, tc.want)
			}
		})
	}
}

// Two jobs on one server, solved by hand with 300 s rounds:
//   - A, res18 on 1 GPU granted 9 cores and 62.5 GB (speedup 2.4), 2250
//     iterations at 2.4/0.64 = 3.75 it/s: finishes at 600 s.
//   - B, res18 on 2 GPUs granted 8 cores and 250 GB, i.e. 4 cores and 125 GB
//     per GPU (speedup 1.3), 2437.5 iterations at 1.3/0.64 = 2.03125 it/s
//     = 1200 s; it arrives at 100 s, is admitted at the 300 s boundary and
//     finishes at 1500 s, a JCT of 1400 s.
func TestResourcesTwoJobs(t *testing.T) {
	p := &fixedPolicy{
		grants: allocation.Allocation{
			"A": {GPUs: 1, CPUs: 9, MemoryGB: 62.5},
			"B": {GPUs: 2, CPUs: 8, MemoryGB: 250},
		},
		place: map[string][]allocation.Assignment{
			"A": {{Server: "s0", GPUs: 1}},
			"B": {{Server: "s0", GPUs: 2}},
		},
	}
	res, err := synergySim(p, synergyServer("s0")).Run(context.Background(), []policy.Job{
		synergyJob(t, "A", "res18", 1, 2250, 0),
		synergyJob(t, "B", "res18", 2, 2437.5, 100*time.Second),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"A": 600 * time.Second, "B": 1400 * time.Second}
	for _, r := range res.Jobs {
		if d := r.JCT() - want[r.ID]; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("job %s: JCT %v, want %v", r.ID, r.JCT(), want[r.ID])
		}
	}
	if got := res.Jobs[1].GPUSeconds; math.Abs(got-2400) > 1e-6 {
		t.Errorf("B: %v GPU-seconds, want 2 × 1200", got)
	}
}

func TestResourcesSpeed(t *testing.T) {
	res18 := synergyJob(t, "r", "res18", 2, 1, 0)
	plain := policy.Job{ID: "p", Throughput: map[allocation.Accelerator]float64{"v100": 2},
		Colocated: map[string]map[allocation.Accelerator]float64{"r": {"v100": 0.5}}}
	pairRes18 := res18
	pairRes18.Colocated = map[string]map[allocation.Accelerator]float64{"p": {"v100": 0.25}}
	// s1 is half the size of a default server, s2 has 6 cores and 125 GB
	// per GPU, u tracks neither CPUs nor memory, c only CPUs.
	r := Resources{Cluster: allocation.Cluster{Servers: []allocation.Server{
		synergyServer("s0"),
		{ID: "s1", Accelerator: "v100", GPUs: 4, CPUs: 12, MemoryGB: 250},
		{ID: "s2", Accelerator: "v100", GPUs: 4, CPUs: 24, MemoryGB: 500},
		{ID: "u", Accelerator: "v100", GPUs: 8},
		{ID: "c", Accelerator: "v100", GPUs: 8, CPUs: 24},
	}}}
	on := func(as ...allocation.Assignment) placement.Run {
		return placement.Run{Job: "r", Accelerator: "v100", Assignments: as}
	}
	base := 1 / 0.64
	for _, tc := range []struct {
		name string
		j    policy.Job
		g    allocation.Grant
		run  placement.Run
		want float64
	}{
		{"no sensitivity", plain, allocation.Grant{GPUs: 2, CPUs: 48, MemoryGB: 500}, on(allocation.Assignment{Server: "s0", GPUs: 2}), 2},
		{"ideal", res18, allocation.Grant{GPUs: 2, CPUs: 18, MemoryGB: 125}, on(allocation.Assignment{Server: "s0", GPUs: 2}), base * 2.4},
		// 4.5 cores per GPU: halfway between 1.3 and 1.53.
		{"interpolated", res18, allocation.Grant{GPUs: 2, CPUs: 9, MemoryGB: 125}, on(allocation.Assignment{Server: "s0", GPUs: 2}), base * 1.415},
		{"proportional default", res18, allocation.Grant{GPUs: 2}, on(allocation.Assignment{Server: "s0", GPUs: 2}), base},
		// (3, 62.5) on s1 and (6, 125) on s2, weighted equally: (4.5, 93.75).
		{"proportional over two shapes", res18, allocation.Grant{GPUs: 2}, on(allocation.Assignment{Server: "s1", GPUs: 1}, allocation.Assignment{Server: "s2", GPUs: 1}), base * 1.415},
		// 6 cores per GPU from s2 and 20 GB per GPU granted, below the
		// grid, where the 20.83-GB column holds: 0.1.
		{"memory only granted", res18, allocation.Grant{GPUs: 2, MemoryGB: 40}, on(allocation.Assignment{Server: "s2", GPUs: 2}), base * 0.1},
		{"untracked", res18, allocation.Grant{GPUs: 2}, on(allocation.Assignment{Server: "u", GPUs: 2}), base},
		{"memory untracked", res18, allocation.Grant{GPUs: 2}, on(allocation.Assignment{Server: "c", GPUs: 2}), base},
		{"untracked but granted", res18, allocation.Grant{GPUs: 2, CPUs: 18, MemoryGB: 125}, on(allocation.Assignment{Server: "u", GPUs: 2}), base * 2.4},
		{"pair", pairRes18, allocation.Grant{GPUs: 2, CPUs: 18, MemoryGB: 125}, placement.Run{Job: "p", Partner: "r", Accelerator: "v100", Assignments: []allocation.Assignment{{Server: "s0", GPUs: 2}}}, 0.25},
	} {
		if got := r.Speed(&tc.j, tc.g, tc.run); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: speed %v, want %v", tc.name, got, tc.want)
		}
	}
	bad := res18
	bad.Sensitivity = &throughput.Sensitivity{}
	if got := r.Speed(&bad, allocation.Grant{GPUs: 2}, on(allocation.Assignment{Server: "s0", GPUs: 2})); !math.IsNaN(got) {
		t.Errorf("invalid sensitivity: speed %v, want NaN", got)
	}
}

// The engine checks a placing decision's CPU and memory per server.
func TestCapacityCheck(t *testing.T) {
	two := []allocation.Server{synergyServer("s0"), synergyServer("s1")}
	for _, tc := range []struct {
		name    string
		grants  allocation.Allocation
		place   map[string][]allocation.Assignment
		servers []allocation.Server
		want    []string // message parts; nil means no error
	}{
		{"fits exactly", allocation.Allocation{"a": {GPUs: 1, CPUs: 12, MemoryGB: 250}, "b": {GPUs: 1, CPUs: 12, MemoryGB: 250}},
			map[string][]allocation.Assignment{"a": {{Server: "s0", GPUs: 1}}, "b": {{Server: "s0", GPUs: 1}}}, two, nil},
		{"cpus over", allocation.Allocation{"a": {GPUs: 1, CPUs: 12, MemoryGB: 100}, "b": {GPUs: 1, CPUs: 12.5, MemoryGB: 100}},
			map[string][]allocation.Assignment{"a": {{Server: "s0", GPUs: 1}}, "b": {{Server: "s0", GPUs: 1}}}, two, []string{`"s0"`, "cpus", "24.5"}},
		{"memory over", allocation.Allocation{"a": {GPUs: 1, MemoryGB: 300}, "b": {GPUs: 1, MemoryGB: 201}},
			map[string][]allocation.Assignment{"a": {{Server: "s1", GPUs: 1}}, "b": {{Server: "s1", GPUs: 1}}}, two, []string{`"s1"`, "memory_gb", "501"}},
		// 40 cores over 1 + 3 GPUs: 10 on s0 and 30 on s1, which has 24.
		{"split by GPUs", allocation.Allocation{"a": {GPUs: 4, CPUs: 40}},
			map[string][]allocation.Assignment{"a": {{Server: "s0", GPUs: 1}, {Server: "s1", GPUs: 3}}}, two, []string{`"s1"`, "cpus", "30"}},
		{"split fits", allocation.Allocation{"a": {GPUs: 4, CPUs: 40}},
			map[string][]allocation.Assignment{"a": {{Server: "s0", GPUs: 2}, {Server: "s1", GPUs: 2}}}, two, nil},
		{"untracked", allocation.Allocation{"a": {GPUs: 1, CPUs: 1000, MemoryGB: 1e6}},
			map[string][]allocation.Assignment{"a": {{Server: "u", GPUs: 1}}}, []allocation.Server{{ID: "u", Accelerator: "v100", GPUs: 8}}, nil},
		{"not a number", allocation.Allocation{"a": {GPUs: 1, CPUs: math.NaN(), MemoryGB: 1}},
			map[string][]allocation.Assignment{"a": {{Server: "s0", GPUs: 1}}}, two, []string{`"a"`, "cpus", "NaN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fixedPolicy{grants: tc.grants, place: tc.place}
			var jobs []policy.Job
			for id, g := range tc.grants {
				jobs = append(jobs, synergyJob(t, id, "gnmt", g.GPUs, 100, 0))
			}
			_, err := synergySim(p, tc.servers...).Run(context.Background(), jobs)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := allocation.ErrOverCapacity; tc.name == "not a number" && !errors.Is(err, allocation.ErrInvalid) || tc.name != "not a number" && !errors.Is(err, want) {
				t.Fatalf("error %v, want ErrOverCapacity (ErrInvalid for NaN)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}

func TestReadSynergyTrace(t *testing.T) {
	jobs, err := ReadSynergyTrace(strings.NewReader("0,alexnet,.5,3349,4\n\n7, res18, 2, 100.5, 1\r\n"), "t.csv",
		SynergyTraceOptions{ArrivalUnit: time.Hour, Accelerator: "a100"})
	if err != nil {
		t.Fatal(err)
	}
	alex := SynergyModels()["alexnet"]
	want := []policy.Job{
		{ID: "0", GPUs: 4, Arrival: 30 * time.Minute, StepsTotal: 3349,
			Throughput: map[allocation.Accelerator]float64{"a100": 1 / 0.6}, Sensitivity: &alex.Sensitivity},
		{ID: "7", GPUs: 1, Arrival: 2 * time.Hour, StepsTotal: 100.5,
			Throughput: map[allocation.Accelerator]float64{"a100": 1 / 0.64}, Sensitivity: cloneSensitivity(SynergyModels()["res18"].Sensitivity)},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Errorf("got %+v\nwant %+v", jobs, want)
	}
	jobs[0].Sensitivity.Speedup[0][0] = 7
	if jobs2, _ := ReadSynergyTrace(strings.NewReader("1,alexnet,0,1,1\n"), "t", SynergyTraceOptions{}); jobs2[0].Sensitivity.Speedup[0][0] != 0.1 ||
		jobs2[0].Throughput["v100"] != 1/0.6 || jobs2[0].Arrival != 0 {
		t.Errorf("defaults: %+v", jobs2[0])
	}

	custom := map[string]SynergyModel{"m": {Class: "x", IterSeconds: 2, Sensitivity: throughput.Sensitivity{CPUs: []float64{1}, MemoryGB: []float64{1}, Speedup: [][]float64{{1}}}},
		"broken": {IterSeconds: 1}}
	if jobs, err := ReadSynergyTrace(strings.NewReader("a,m,10,5,2\n"), "t", SynergyTraceOptions{Models: custom}); err != nil || jobs[0].Throughput["v100"] != 0.5 || jobs[0].Arrival != 10*time.Second {
		t.Errorf("custom model: %+v, %v", jobs, err)
	}

	for _, tc := range []struct {
		in, job, field string
		line           int
	}{
		{"1,alexnet,0,10,1\n2,bert,0,10,1\n", "2", "model_name", 2},
		{"1,broken,0,10,1\n", "1", "model_name", 1},
		{"1,alexnet,x,10,1\n", "1", "arrival_time", 1},
		{"1,alexnet,-1,10,1\n", "1", "arrival_time", 1},
		{"1,alexnet,0,0,1\n", "1", "total_iterations", 1},
		{"1,alexnet,0,NaN,1\n", "1", "total_iterations", 1},
		{"1,alexnet,0,10,0\n", "1", "gpu_demand", 1},
		{"1,alexnet,0,10,1.5\n", "1", "gpu_demand", 1},
		{"1,alexnet,0,10,1\n\n1,gnmt,0,10,1\n", "1", "job_id", 3},
		{" ,alexnet,0,10,1\n", "", "job_id", 1},
		{"1,alexnet,0,10\n", "1", "", 1},
	} {
		models := SynergyModels()
		models["broken"] = SynergyModel{Class: "image", IterSeconds: 0}
		_, err := ReadSynergyTrace(strings.NewReader(tc.in), "t.csv", SynergyTraceOptions{Models: models})
		var te *TraceError
		if !errors.As(err, &te) || !errors.Is(err, ErrTrace) {
			t.Errorf("%q: error %v, want a TraceError", tc.in, err)
			continue
		}
		if te.File != "t.csv" || te.Line != tc.line || te.Job != tc.job || te.Field != tc.field {
			t.Errorf("%q: error at %s:%d job %q field %q, want line %d job %q field %q", tc.in, te.File, te.Line, te.Job, te.Field, tc.line, tc.job, tc.field)
		}
	}
	if _, err := ReadSynergyTrace(strings.NewReader(""), "t", SynergyTraceOptions{ArrivalUnit: -time.Second}); err == nil {
		t.Error("negative arrival unit accepted")
	}
}

func TestReadSynergyTraceFiles(t *testing.T) {
	for _, tc := range []struct {
		file  string
		unit  time.Duration
		n     int
		first policy.Job
		model string
		last  string
	}{
		{"test_trace.csv", time.Hour, 8, policy.Job{ID: "0", GPUs: 4, Arrival: 442800 * time.Millisecond, StepsTotal: 3349}, "alexnet", "7"},
		{"static_100job_6_3_1100.0.csv", 0, 100, policy.Job{ID: "0", GPUs: 1, Arrival: 0, StepsTotal: 3349}, "alexnet", "99"},
		{"dynamic_srtf_100job.csv", 0, 100, policy.Job{ID: "0", GPUs: 1, Arrival: 8 * time.Second, StepsTotal: 23349}, "alexnet", "99"},
	} {
		f, err := os.Open(synergyData + "traces/" + tc.file)
		if err != nil {
			t.Skip("Synergy data absent:", err)
		}
		jobs, err := ReadSynergyTrace(f, tc.file, SynergyTraceOptions{ArrivalUnit: tc.unit})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != tc.n || jobs[len(jobs)-1].ID != tc.last {
			t.Errorf("%s: %d jobs, last %q; want %d, %q", tc.file, len(jobs), jobs[len(jobs)-1].ID, tc.n, tc.last)
		}
		j := jobs[0]
		m := SynergyModels()[tc.model]
		if j.ID != tc.first.ID || j.GPUs != tc.first.GPUs || j.Arrival != tc.first.Arrival || j.StepsTotal != tc.first.StepsTotal ||
			j.Throughput["v100"] != 1/m.IterSeconds || !reflect.DeepEqual(*j.Sensitivity, m.Sensitivity) {
			t.Errorf("%s: first job %+v, want %+v as %s", tc.file, j, tc.first, tc.model)
		}
		for _, j := range jobs {
			if err := policy.Validate(&policy.Snapshot{Now: j.Arrival, Cluster: allocation.Cluster{Servers: []allocation.Server{synergyServer("s")}}, Jobs: []policy.Job{j}}); err != nil {
				t.Errorf("%s: job %s: %v", tc.file, j.ID, err)
				break
			}
		}
	}
}

// Acceptance check 8: lengths, arrivals and classes of the generator.
func TestSynergyGeneratorStatistics(t *testing.T) {
	// E[60·10^U(a,b)] = 60·(10^b − 10^a)/((b − a)·ln 10) seconds.
	mean := func(a, b float64) float64 { return (math.Pow(10, b) - math.Pow(10, a)) / ((b - a) * math.Ln10) }
	exact := 0.8*mean(1.5, 3) + 0.2*mean(3, 4) // minutes
	if math.Abs(exact-1006.03) > 0.01 {
		t.Errorf("expected duration %v min, want 1006.03", exact)
	}
	const n = 100000
	g := SynergyGenerator{Seed: 7, Jobs: n, Rate: 9}
	jobs, names, err := g.generate()
	if err != nil {
		t.Fatal(err)
	}
	models := SynergyModels()
	var sum float64
	long := 0
	for i, j := range jobs {
		minutes := j.StepsTotal * models[names[i]].IterSeconds / 60
		sum += minutes
		if minutes > 1000 {
			long++
		}
		if j.GPUs != 1 {
			t.Fatalf("job %s: %d GPUs without MultiGPU", j.ID, j.GPUs)
		}
	}
	if m := sum / n; math.Abs(m-exact) > 0.01*exact {
		t.Errorf("mean duration %v min, want %v ± 1 %%", m, exact)
	}
	// Binomial(100000, 0.2): σ ≈ 126.
	if long < 20000-600 || long > 20000+600 {
		t.Errorf("%d of %d jobs longer than 1000 min, want about 20 %%", long, n)
	}
	// Inter-arrival: ceil of an exponential with mean 400 s has mean
	// 1/(1 − e^(−1/400)) ≈ 400.50 s; σ ≈ 400 s, so σ/√n ≈ 1.3 s.
	wantGap := 1 / (1 - math.Exp(-1/400.0))
	if gap := jobs[n-1].Arrival.Seconds() / n; math.Abs(gap-wantGap) > 5 {
		t.Errorf("mean inter-arrival %v s, want %v", gap, wantGap)
	}
	prev := time.Duration(0)
	for _, j := range jobs[:1000] {
		d := j.Arrival - prev
		if d < time.Second || d%time.Second != 0 {
			t.Fatalf("job %s arrives %v after the previous, want whole seconds ≥ 1", j.ID, d)
		}
		prev = j.Arrival
	}
}

func synergyClassCounts(names []string) map[string]int {
	models := SynergyModels()
	c := map[string]int{}
	for _, name := range names {
		c[models[name].Class]++
	}
	return c
}

func TestSynergyGeneratorClasses(t *testing.T) {
	for _, tc := range []struct {
		split [3]float64
		jobs  int
		want  map[string]int
	}{
		{[3]float64{}, 1000, map[string]int{"image": 200, "language": 700, "speech": 100}},
		{[3]float64{20, 70, 10}, 10, map[string]int{"image": 2, "language": 7, "speech": 1}},
		{[3]float64{33, 33, 33}, 1000, map[string]int{"image": 334, "language": 333, "speech": 333}},
		{[3]float64{50, 0, 50}, 1000, map[string]int{"image": 500, "speech": 500}},
		{[3]float64{0.2, 0.7, 0.1}, 1000, map[string]int{"image": 200, "language": 700, "speech": 100}},
	} {
		_, names, err := SynergyGenerator{Seed: 1, Jobs: tc.jobs, Rate: 9, Split: tc.split}.generate()
		if err != nil {
			t.Fatal(err)
		}
		if got := synergyClassCounts(names); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("split %v: %v, want %v", tc.split, got, tc.want)
		}
	}
	// Round-robin within each class, first job to the largest target.
	_, names, _ := SynergyGenerator{Jobs: 20, Rate: 9}.generate()
	// Job 3, say: after 1 image and 2 language jobs the scaled deficits
	// 20·3 − 100·1, 70·3 − 100·2 and 10·3 are −40, 10 and 30: speech.
	want := []string{"gnmt", "alexnet", "transformer", "m5", "lstm", "gnmt", "res18", "transformer", "lstm", "gnmt",
		"res50", "transformer", "lstm", "deepspeech", "gnmt", "transformer", "mobilenet", "lstm", "gnmt", "transformer"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("models %v,\nwant %v", names, want)
	}
}

func TestSynergyGeneratorDeterminism(t *testing.T) {
	g := SynergyGenerator{Seed: 3, Jobs: 200, Rate: 12, MultiGPU: true, Accelerator: "a100"}
	a, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := g.Generate()
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different jobs")
	}
	g.Seed = 4
	c, _ := g.Generate()
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds, same jobs")
	}
	if a[0].ID != "job-00000" || a[199].ID != "job-00199" || a[0].Weight != 1 || a[0].Throughput["a100"] == 0 || a[0].Sensitivity == nil {
		t.Errorf("first job %+v", a[0])
	}
	if a[0].Sensitivity == b[0].Sensitivity || &a[0].Sensitivity.Speedup[0][0] == &a[5].Sensitivity.Speedup[0][0] {
		t.Error("jobs share a Sensitivity")
	}
	// MultiGPU draws from its own stream: lengths and arrivals stay.
	g.Seed, g.MultiGPU = 3, false
	d, _ := g.Generate()
	for i := range d {
		if d[i].StepsTotal != a[i].StepsTotal || d[i].Arrival != a[i].Arrival || d[i].GPUs != 1 {
			t.Fatalf("job %d: MultiGPU changed more than GPUs: %+v vs %+v", i, d[i], a[i])
		}
	}
	for _, j := range a {
		if err := policy.Validate(&policy.Snapshot{Now: j.Arrival, Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "a100", GPUs: 8}}}, Jobs: []policy.Job{j}}); err != nil {
			t.Fatalf("job %s: %v", j.ID, err)
		}
	}
}

func TestSynergyGeneratorMultiGPU(t *testing.T) {
	const n = 100000
	jobs, err := SynergyGenerator{Seed: 11, Jobs: n, Rate: 9, MultiGPU: true}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, j := range jobs {
		count[j.GPUs]++
	}
	// σ of a share p over 100000 draws is at most 0.0016.
	for s, p := range map[int]float64{1: 0.7, 2: 0.1, 4: 0.15, 8: 0.05} {
		if got := float64(count[s]) / n; math.Abs(got-p) > 0.007 {
			t.Errorf("%d GPUs: share %v, want %v", s, got, p)
		}
	}
	if len(count) != 4 {
		t.Errorf("GPU counts %v, want only 1, 2, 4, 8", count)
	}
}

func TestSynergyGeneratorErrors(t *testing.T) {
	noSpeech := SynergyModels()
	delete(noSpeech, "m5")
	delete(noSpeech, "deepspeech")
	bad := SynergyModels()
	bad["res18"] = SynergyModel{Class: "image", IterSeconds: math.Inf(1), Sensitivity: bad["res18"].Sensitivity}
	for _, tc := range []struct {
		g     SynergyGenerator
		field string
	}{
		{SynergyGenerator{Jobs: -1, Rate: 9}, "jobs"},
		{SynergyGenerator{Jobs: 1}, "rate"},
		{SynergyGenerator{Jobs: 1, Rate: -2}, "rate"},
		{SynergyGenerator{Jobs: 1, Rate: math.NaN()}, "rate"},
		{SynergyGenerator{Jobs: 1, Rate: math.Inf(1)}, "rate"},
		{SynergyGenerator{Jobs: 1, Rate: 9, Split: [3]float64{20, -1, 10}}, "split: language"},
		{SynergyGenerator{Jobs: 1, Rate: 9, Split: [3]float64{math.NaN(), 1, 1}}, "split: image"},
		{SynergyGenerator{Jobs: 1, Rate: 9, Split: [3]float64{math.Inf(1), 1, 1}}, "split: image"},
		{SynergyGenerator{Jobs: 1, Rate: 9, Split: [3]float64{math.MaxFloat64, math.MaxFloat64, 0}}, "split"},
		{SynergyGenerator{Jobs: 1, Rate: 9, Models: noSpeech}, "speech"},
		{SynergyGenerator{Jobs: 1, Rate: 9, Models: bad}, `"res18": iter_seconds`},
		{SynergyGenerator{Jobs: 10, Rate: 1e-9}, "rate"},
	} {
		_, err := tc.g.Generate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: error %v, want one about %s", tc.g, err, tc.field)
		}
	}
	// A zero split for a class without models is fine.
	if _, err := (SynergyGenerator{Jobs: 10, Rate: 9, Split: [3]float64{20, 80, 0}, Models: noSpeech}).Generate(); err != nil {
		t.Error(err)
	}
	if jobs, err := (SynergyGenerator{Rate: 9}).Generate(); err != nil || len(jobs) != 0 {
		t.Errorf("no jobs: %v, %v", jobs, err)
	}
}

func TestReadSynergyTraceCSVErrors(t *testing.T) {
	_, err := ReadSynergyTrace(strings.NewReader("1,alexnet,0,10,1\n2,\"gnmt,0,10,1\n"), "q.csv", SynergyTraceOptions{})
	var te *TraceError
	if !errors.As(err, &te) || te.File != "q.csv" || te.Line < 2 {
		t.Errorf("bad quote: %v, want a TraceError at line 2", err)
	}
	boom := errors.New("boom")
	_, err = ReadSynergyTrace(io.MultiReader(strings.NewReader("1,alexnet,0,10,1\n"), iotest.ErrReader(boom)), "r.csv", SynergyTraceOptions{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "synergy trace r.csv") {
		t.Errorf("read error: %v", err)
	}
}
