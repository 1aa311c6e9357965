package workload

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/throughput"
)

// polluxDataDir is the shared Pollux data, relative to this package.
const polluxDataDir = "../../shared/data/pollux"

// polluxApps loads the real applications once per test binary, or skips.
var polluxAppsCache struct {
	apps map[string]*App
	err  error
	done bool
}

func polluxApps(t testing.TB) map[string]*App {
	t.Helper()
	dir := filepath.Join(polluxDataDir, "traces")
	if _, err := os.Stat(filepath.Join(dir, "cifar10", "placements.csv")); err != nil {
		t.Skipf("Pollux traces absent: %v", err)
	}
	c := &polluxAppsCache
	if !c.done {
		c.apps, c.err = LoadApps(dir)
		c.done = true
	}
	if c.err != nil {
		t.Fatalf("LoadApps: %v", c.err)
	}
	return c.apps
}

func appClose(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestLoadAppsSettings(t *testing.T) {
	apps := polluxApps(t)
	want := map[string][5]int{ // batch, max batch, local min, local max, epochs
		"bert":        {12, 384, 4, 12, 2},
		"cifar10":     {128, 4096, 32, 1024, 100},
		"deepspeech2": {20, 640, 10, 80, 80},
		"imagenet":    {200, 12800, 20, 200, 90},
		"ncf":         {256, 32768, 32, 32768, 10},
		"yolov3":      {8, 512, 4, 8, 50},
	}
	if len(apps) != len(want) {
		t.Errorf("LoadApps gave %d apps, want %d", len(apps), len(want))
	}
	for name, w := range want {
		a := apps[name]
		if a == nil {
			t.Errorf("app %s missing", name)
			continue
		}
		got := [5]int{a.BatchSize, a.MaxBatchSize, a.LocalBatchMin, a.LocalBatchMax, a.Epochs}
		if got != w || a.Name != name {
			t.Errorf("%s: got %q %v, want %v", name, a.Name, got, w)
		}
		n := 0
		for _, ss := range a.placements {
			n += len(ss)
		}
		if n != 108 {
			t.Errorf("%s: %d placements, want 108", name, n)
		}
	}
}

func TestAppStepTimeMeasured(t *testing.T) {
	a := polluxApps(t)["cifar10"]
	// cifar10/placements.csv: 144,45,0.2066883325576782,0.15825363311767576
	// and 144,64,0.214361310005188,0.15646842498779295 (144 is the only
	// arrangement of 1, 4 and 4 GPUs).
	s45, y45 := 0.2066883325576782, 0.15825363311767576
	s64, y64 := 0.214361310005188, 0.15646842498779295
	for _, p := range [][]int{{1, 4, 4}, {4, 1, 4}, {4, 4, 1}, {0, 4, 1, 0, 4}} {
		if s, y := a.StepTime(p, 64); s != s64 || y != y64 {
			t.Errorf("StepTime(%v, 64) = %v, %v; want %v, %v", p, s, y, s64, y64)
		}
	}
	s, y := a.StepTime([]int{4, 1, 4}, 54.5) // halfway between 45 and 64
	if !appClose(s, (s45+s64)/2) || !appClose(y, (y45+y64)/2) {
		t.Errorf("StepTime(54.5) = %v, %v; want %v, %v", s, y, (s45+s64)/2, (y45+y64)/2)
	}
	// 1123, 1132 and 1213 are measured separately: 1123,64,
	// 0.13804235458374023,0.07961330795288087; 1132,64,0.1539220094680786,
	// 0.09415813522338869; 1213,64,0.14279932975769044,0.08430136108398437.
	ws := (0.13804235458374023 + 0.1539220094680786 + 0.14279932975769044) / 3
	wy := (0.07961330795288087 + 0.09415813522338869 + 0.08430136108398437) / 3
	for _, p := range [][]int{{1, 1, 2, 3}, {1, 1, 3, 2}, {3, 2, 1, 1}} {
		if s, y := a.StepTime(p, 64); !appClose(s, ws) || !appClose(y, wy) {
			t.Errorf("StepTime(%v, 64) = %v, %v; want the mean %v, %v", p, s, y, ws, wy)
		}
	}
	// Clamped outside the measured range (32 and 1024).
	if s, y := a.StepTime([]int{4, 4, 1}, 1); s != 0.2058131456375122 || y != 0.16440418395996093 {
		t.Errorf("StepTime below range = %v, %v", s, y)
	}
	if s, y := a.StepTime([]int{4, 4, 1}, 5000); s != 0.8415917754173279 || y != 0.13752987098693847 {
		t.Errorf("StepTime above range = %v, %v", s, y)
	}
	// One GPU, first row of the file.
	if s, y := a.StepTime([]int{1}, 32); s != 0.0427886962890625 || y != 0.0004995360016822816 {
		t.Errorf("StepTime([1], 32) = %v, %v", s, y)
	}
	// scalability.csv: 6,6,32,0.14090566635131835,0.09941204528808593.
	if s, y := a.StepTime([]int{1, 1, 1, 1, 1, 1}, 32); s != 0.14090566635131835 || y != 0.09941204528808593 {
		t.Errorf("StepTime(6 nodes x 1, 32) = %v, %v", s, y)
	}
	if s, y := a.StepTime(nil, 32); s != 0 || y != 0 {
		t.Errorf("StepTime(no GPU) = %v, %v; want zeros", s, y)
	}
}

func TestAppStepTimeFallback(t *testing.T) {
	a := polluxApps(t)["cifar10"]
	// 5 nodes with one GPU each is neither in placements.csv (at most 4
	// nodes) nor in scalability.csv (at least 6 nodes).
	s, y := a.StepTime([]int{1, 1, 1, 1, 1}, 64)
	if a.Perf == (throughput.Params{}) {
		// Nearest measured: 5 replicas on 4 nodes is only "1112".
		ws, wy := a.StepTime([]int{1, 1, 1, 2}, 64)
		if s != ws || y != wy {
			t.Errorf("unfitted fallback = %v, %v; want 1112's %v, %v", s, y, ws, wy)
		}
	} else {
		ws := a.Perf.OptimTime(5, 5, 64)
		if !appClose(s, ws) || !appClose(y, math.Max(0, ws-a.Perf.AccumTime(64))) {
			t.Errorf("fitted fallback = %v, %v; want model %v", s, y, ws)
		}
	}
	if !(s > 0) || !(y >= 0) {
		t.Errorf("fallback = %v, %v; want positive", s, y)
	}
}

// TestAppNearestStepTime checks case 4 of StepTime by hand on made-up
// series.
func TestAppNearestStepTime(t *testing.T) {
	a := &App{placements: map[string][]*stepSeries{}, scalability: map[[2]int]*stepSeries{}}
	add := func(key string, nodes, reps int, pts ...stepPoint) {
		s := &stepSeries{nodes: nodes, replicas: reps, points: pts}
		a.placements[key] = append(a.placements[key], s)
		a.series = append(a.series, s)
	}
	add("2", 1, 2, stepPoint{10, 1, 0.1}, stepPoint{20, 2, 0.2})
	add("11", 2, 2, stepPoint{10, 3, 0.3})
	add("1111", 4, 4, stepPoint{10, 5, 0.5})
	cases := []struct {
		gpus       []int
		m          float64
		step, sync float64
	}{
		{[]int{2}, 15, 1.5, 0.15},             // measured, interpolated
		{[]int{1, 1, 1, 1, 1, 1}, 10, 5, 0.5}, // above: clamp to 4 replicas
		{[]int{1, 1, 1}, 10, 4, 0.4},          // 3 replicas: between "11" and "1111"
		{[]int{1}, 10, 3, 0.3},                // below: clamp to 2 replicas, 1 node is
	}
	cases[3].step, cases[3].sync = 1, 0.1 // nearest node count to 1 is "2"
	for _, c := range cases {
		s, y := a.StepTime(c.gpus, c.m)
		if !appClose(s, c.step) || !appClose(y, c.sync) {
			t.Errorf("StepTime(%v, %v) = %v, %v; want %v, %v", c.gpus, c.m, s, y, c.step, c.sync)
		}
	}
	a.Perf = throughput.Params{AlphaC: 1, BetaC: 0.1, AlphaR: 2, BetaR: 0, AlphaN: 4, Gamma: 1}
	if s, y := a.StepTime([]int{3}, 10); !appClose(s, 4) || !appClose(y, 2) {
		t.Errorf("StepTime with Perf = %v, %v; want 4, 2", s, y)
	}
	if s, _ := a.StepTime([]int{2}, 10); s != 1 {
		t.Errorf("measured placement must win over Perf: %v", s)
	}
}

func TestAppGradAndProgress(t *testing.T) {
	a := polluxApps(t)["cifar10"]
	// First rows: validation-128 progress 391, grad 8.947307535897329,
	// 5.066593295150894; validation-256 progress 390.71438596642224, grad
	// 17.379458169870425, 13.937760473946334.
	g128 := efficiency.Grad{Sqr: 8.947307535897329, Var: 5.066593295150894}
	g256 := efficiency.Grad{Sqr: 17.379458169870425, Var: 13.937760473946334}
	if g := a.Grad(0, 128); g != g128 {
		t.Errorf("Grad(0, 128) = %v, want %v", g, g128)
	}
	if g := a.Grad(390, 256); g != g256 {
		t.Errorf("Grad(390, 256) = %v, want %v", g, g256)
	}
	if g := a.Grad(100, 64); g != g128 {
		t.Errorf("Grad(100, 64) = %v, want clamped %v", g, g128)
	}
	g := a.Grad(0, 160) // a quarter of the way from 128 to 256
	if !appClose(g.Sqr, g128.Sqr+(g256.Sqr-g128.Sqr)/4) || !appClose(g.Var, g128.Var+(g256.Var-g128.Var)/4) {
		t.Errorf("Grad(0, 160) = %v", g)
	}
	ends := a.EpochEnds()
	if len(ends) != 100 || ends[0] != 390.71438596642224 {
		t.Fatalf("EpochEnds: %d, first %v", len(ends), ends[0])
	}
	// At the end of epoch 1 the job is in epoch 2 (row 2 of the files).
	if got, want := a.Grad(ends[0], 128).Sqr, a.Validation[128][1].GradSqr; got != want || got != 1.895227805639273 {
		t.Errorf("Grad(end of epoch 1, 128).Sqr = %v, want %v", got, want)
	}
	if a.Epoch(ends[0]-1e-9) != 0 || a.Epoch(ends[0]) != 1 || a.Epoch(1e12) != 99 {
		t.Errorf("Epoch boundaries wrong")
	}
	// Last rows: min over B is validation-256's 39062.90816659533.
	if got := a.TotalProgress(); got != 39062.90816659533 {
		t.Errorf("TotalProgress = %v, want 39062.90816659533", got)
	}
	if got := polluxApps(t)["bert"].TotalProgress(); !(got > 14000 && got < 15000) {
		t.Errorf("bert TotalProgress = %v", got)
	}
}

func TestReadPolluxWorkloadReal(t *testing.T) {
	apps := polluxApps(t)
	path := filepath.Join(polluxDataDir, "workloads", "workload-1.csv")
	jobs, model, err := ReadPolluxWorkloadFile(path, apps, WorkloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 160 {
		t.Fatalf("%d jobs, want 160", len(jobs))
	}
	// First row: cifar10-0,107,cifar10,6,2048.
	j := jobs[0]
	c := apps["cifar10"]
	if j.ID != "cifar10-0" || j.Arrival.Seconds() != 107 || j.GPUs != 0 || j.StepsTotal != c.TotalProgress() {
		t.Errorf("first job %+v", j)
	}
	s, _ := c.StepTime([]int{1}, 128)
	if r := j.Throughput[PolluxGPU]; !appClose(r, 1/s) || len(j.Throughput) != 1 {
		t.Errorf("throughput %v, want %v on %s", j.Throughput, 1/s, PolluxGPU)
	}
	if e := j.Elastic; e == nil || e.BatchSize != 128 || e.MaxBatchSize != 4096 || e.LocalBatchMin != 32 || e.LocalBatchMax != 1024 || e.MaxGPUs != 0 {
		t.Errorf("first job elastic %+v", j.Elastic)
	}
	for _, j := range jobs {
		if strings.HasPrefix(j.ID, "ncf") && (j.Elastic.BatchSize != 32768 || j.Elastic.MaxBatchSize != 32768 || j.Elastic.MaxGPUs != 1) {
			t.Errorf("ncf job %s not pinned: %+v", j.ID, j.Elastic)
		}
	}
	if len(model.Apps) != 160 || model.Apps["cifar10-0"] != c {
		t.Errorf("model knows %d jobs, cifar10-0 trains %v", len(model.Apps), model.Apps["cifar10-0"])
	}
	tuned, _, err := ReadPolluxWorkloadFile(path, apps, WorkloadOptions{Tuned: true})
	if err != nil {
		t.Fatal(err)
	}
	if j := tuned[0]; j.GPUs != 6 || j.Elastic.BatchSize != 2048 || j.Elastic.MaxBatchSize != 2048 || j.Elastic.MinGPUs != 0 || j.Elastic.MaxGPUs != 0 {
		t.Errorf("tuned first job: GPUs %d, %+v", j.GPUs, j.Elastic)
	}

	counts := map[string]int{}
	for n := 1; n <= 8; n++ {
		for _, set := range []string{"workloads", "workloads-realistic"} {
			p := filepath.Join(polluxDataDir, set, "workload-"+string(rune('0'+n))+".csv")
			jobs, _, err := ReadPolluxWorkloadFile(p, apps, WorkloadOptions{Tuned: set == "workloads-realistic"})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 160 {
				t.Errorf("%s: %d jobs", p, len(jobs))
			}
			if set != "workloads" {
				continue
			}
			for _, j := range jobs {
				counts[j.ID[:strings.LastIndexByte(j.ID, '-')]]++
			}
		}
	}
	want := map[string]int{"cifar10": 495, "ncf": 503, "deepspeech2": 111, "bert": 86, "yolov3": 59, "imagenet": 26}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("model counts %v, want %v", counts, want)
	}
}

func TestSyntheticApps(t *testing.T) {
	a, b := SyntheticApps(), SyntheticApps()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("SyntheticApps is not deterministic")
	}
	if len(a) != 6 {
		t.Fatalf("%d apps", len(a))
	}
	for name, app := range a {
		if app.Name != name || app.BatchSize <= 0 || app.MaxBatchSize < app.BatchSize || app.LocalBatchMin <= 0 || app.LocalBatchMax < app.LocalBatchMin || app.Epochs <= 0 {
			t.Errorf("%s: bad settings %+v", name, app)
		}
		if _, ok := app.Validation[app.BatchSize]; !ok {
			t.Errorf("%s: no validation at the initial batch", name)
		}
		if _, ok := app.Validation[app.MaxBatchSize]; !ok {
			t.Errorf("%s: no validation at the max batch", name)
		}
		if tp := app.TotalProgress(); !(tp > 0) || math.IsInf(tp, 0) {
			t.Errorf("%s: TotalProgress %v", name, tp)
		}
		for _, p := range [][]int{{1}, {4}, {4, 4}, {2, 3, 4, 4}, {4, 4, 4, 4, 4, 4, 4, 4}} {
			for _, m := range []float64{float64(app.LocalBatchMin), float64(app.LocalBatchMax)} {
				s, y := app.StepTime(p, m)
				if !(s > 0) || y < 0 || y > s {
					t.Errorf("%s: StepTime(%v, %v) = %v, %v", name, p, m, s, y)
				}
			}
		}
		if !(app.SingleGPURate() > 0) {
			t.Errorf("%s: SingleGPURate %v", name, app.SingleGPURate())
		}
		// The noise scale grows: larger batches get more efficient.
		g0, g1 := app.Grad(0, float64(app.BatchSize)), app.Grad(app.TotalProgress()*0.99, float64(app.BatchSize))
		if !(g0.Noise(1) > 0) || (app.Epochs > 1 && !(g1.Noise(1) > g0.Noise(1))) {
			t.Errorf("%s: noise %v then %v", name, g0.Noise(1), g1.Noise(1))
		}
	}
	if got := a["cifar10"].TotalProgress(); got != 100*391 {
		t.Errorf("synthetic cifar10 TotalProgress %v", got)
	}
}

func TestReadPolluxWorkloadErrors(t *testing.T) {
	apps := SyntheticApps()
	const header = "name,time,application,num_replicas,batch_size\n"
	cases := []struct {
		name, in, want string
	}{
		{"no header", "", `w:1: no header row`},
		{"missing column", "name,time,application,num_replicas\n", `w:1: batch_size: missing column`},
		{"bad time", header + "a,x,cifar10,1,128\n", `w:2: job "a": time: "x" is not a number`},
		{"negative time", header + "a,1,cifar10,1,128\nb,-1,cifar10,1,128\n", `w:3: job "b": time: -1 seconds`},
		{"unknown app", header + "a,1,resnet,1,128\n", `w:2: job "a": application: unknown application "resnet"`},
		{"bad replicas", header + "a,1,cifar10,0,128\n", `w:2: job "a": num_replicas: "0" is not a positive integer`},
		{"bad batch", header + "a,1,cifar10,1,1.5\n", `w:2: job "a": batch_size: "1.5" is not a positive integer`},
		{"empty name", header + ",1,cifar10,1,128\n", `w:2: name: empty`},
		{"duplicate", header + "a,1,cifar10,1,128\na,2,ncf,1,128\n", `w:3: job "a": name: duplicate of line 2`},
		{"field count", header + "a,1,cifar10,1\n", `w:2: wrong number of fields`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadPolluxWorkload(strings.NewReader(c.in), apps, WorkloadOptions{Name: "w"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if !errors.Is(err, ErrTrace) {
				t.Errorf("error %v does not wrap ErrTrace", err)
			}
		})
	}
}

func TestLoadAppErrors(t *testing.T) {
	const place = "placement,local_bsz,step_time,sync_time\n"
	const val = "progress,iteration,metric,grad_sqr,grad_var\n"
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"bad placement", map[string]string{"placements.csv": place + "1,32,0.1,0.01\n1a,32,0.1,0.01\n", "validation-8.csv": val + "1,1,1,1,1\n"},
			`placements.csv:3: placement: "1a" is not a string of digits`},
		{"bad step", map[string]string{"placements.csv": place + "1,32,x,0.01\n", "validation-8.csv": val + "1,1,1,1,1\n"},
			`placements.csv:2: step_time: "x" is not a finite`},
		{"duplicate local", map[string]string{"placements.csv": place + "123,32,1,0\n312,32,1,0\n", "validation-8.csv": val + "1,1,1,1,1\n"},
			`placements.csv:3: local_bsz: 32 measured again (first on line 2)`},
		{"bad scalability", map[string]string{"placements.csv": place + "1,32,1,0\n", "scalability.csv": "num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,5,32,1,0\n", "validation-8.csv": val + "1,1,1,1,1\n"},
			`scalability.csv:2: num_replicas: "5" is not an integer of at least num_nodes 6`},
		{"bad grad", map[string]string{"placements.csv": place + "1,32,1,0\n", "validation-8.csv": val + "1,1,1,NaN,1\n"},
			`validation-8.csv:2: grad_sqr: "NaN" is not a finite number`},
		{"progress decreasing", map[string]string{"placements.csv": place + "1,32,1,0\n", "validation-8.csv": val + "2,1,1,1,1\n1,1,1,1,1\n"},
			`validation-8.csv:3: progress: 1 is below`},
		{"no validation", map[string]string{"placements.csv": place + "1,32,1,0\n"}, `no validation-<B>.csv`},
		{"missing column", map[string]string{"placements.csv": "placement,local_bsz,step_time\n", "validation-8.csv": val + "1,1,1,1,1\n"},
			`placements.csv:1: sync_time: missing column`},
		{"too few epochs", map[string]string{"placements.csv": place + "1,32,1,0\n", "validation-8.csv": val + "1,1,1,1,1\n"},
			`validation-8.csv: 1 epochs, want at least 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "custom"
			if c.name == "too few epochs" {
				name = "bert" // 2 epochs
			}
			dir := filepath.Join(t.TempDir(), name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for f, s := range c.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadApps(filepath.Dir(dir))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestLoadAppsSmall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "toy")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"placements.csv":   "placement,local_bsz,step_time,sync_time\n21,8,2,1\n12,4,1,0.5\n1,4,0.5,0\n",
		"validation-4.csv": "progress,iteration,metric,grad_sqr,grad_var\n10,10,0,1,2\n20,20,0,3,4\n30,30,0,5,6\n",
		"validation-8.csv": "progress,iteration,metric,grad_sqr,grad_var\n9,5,0,2,4\n21,10,0,6,8\n",
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apps, err := LoadApps(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	a := apps["toy"]
	if a.BatchSize != 4 || a.MaxBatchSize != 8 || a.LocalBatchMin != 4 || a.LocalBatchMax != 8 || a.Epochs != 2 {
		t.Errorf("settings %+v", a)
	}
	if got := a.EpochEnds(); !reflect.DeepEqual(got, []float64{9, 20}) {
		t.Errorf("EpochEnds %v", got)
	}
	if s, y := a.StepTime([]int{1, 2}, 6); s != 1.5 || y != 0.75 {
		t.Errorf("StepTime([1 2], 6) = %v, %v", s, y)
	}
	if g := a.Grad(9, 6); g != (efficiency.Grad{Sqr: 4.5, Var: 6}) {
		t.Errorf("Grad(9, 6) = %v", g)
	}
}

func FuzzReadPolluxWorkload(f *testing.F) {
	f.Add("name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\nncf-1,1e3,ncf,1,32768\n", false)
	f.Add("time,name,application,batch_size,num_replicas,extra\n1,a,bert,12,1,x\n", true)
	f.Add("name,time,application,num_replicas,batch_size\n\"a\nb\",1,yolov3,1,8\n", false)
	apps := SyntheticApps()
	f.Fuzz(func(t *testing.T, in string, tuned bool) {
		jobs, _, err := ReadPolluxWorkload(strings.NewReader(in), apps, WorkloadOptions{Tuned: tuned})
		if err != nil {
			if jobs != nil {
				t.Fatal("jobs with an error")
			}
			return
		}
		for _, j := range jobs {
			if j.ID == "" || j.Elastic == nil || !(j.StepsTotal > 0) || !(j.Throughput[PolluxGPU] > 0) {
				t.Fatalf("bad job %+v", j)
			}
		}
	})
}
