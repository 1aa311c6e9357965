package workload

import (
	"bufio"
	"context"
	"errors"
	"github.com/dlsched/dlsched/sim"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// shockwaveTestProfile has LM at 10, 20 and 40 (not 80) on 1 v100, and
// the Transformer at 32 on 2.
func shockwaveTestProfile() Profile {
	return Profile{Throughputs: map[ProfileKey]float64{
		{Template: "LM (batch size 10)", Accelerator: "v100", GPUs: 1}:          100,
		{Template: "LM (batch size 20)", Accelerator: "v100", GPUs: 1}:          60,
		{Template: "LM (batch size 40)", Accelerator: "v100", GPUs: 1}:          40,
		{Template: "Transformer (batch size 32)", Accelerator: "v100", GPUs: 2}: 10,
		{Template: "Transformer (batch size 32)", Accelerator: "k80", GPUs: 2}:  5,
	}}
}

func shockwaveLine(fields ...string) string { return strings.Join(fields, "\t") }

// lmLine is an LM job at 10 on 1 GPU: ⌈59675/10⌉ = 5968 steps per epoch,
// 6000 steps make 2 epochs.
func lmLine(steps, mode, arrival string) string {
	return shockwaveLine("LM (batch size 10)", "python3 main.py", "language_modeling", "--steps", "1", steps, "1", mode, "1", "-1.000000", "100", arrival)
}

func TestReadShockwaveTraceSmall(t *testing.T) {
	in := lmLine("6000", "gns", "0") + "\n\n" +
		shockwaveLine("Transformer (batch size 32)", "c", "d", "--n", "0", "626", "2", "accordion", "2", "-1", "50", "30.5") + "\r\n"
	jobs, model, err := ReadShockwaveTrace(strings.NewReader(in), "t.trace", shockwaveTestProfile(), ShockwaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "0" || jobs[1].ID != "1" {
		t.Fatalf("jobs %+v", jobs)
	}
	// LM: GNS regimes 10, 20, 40, 80; 80 has no throughput but a 2-epoch
	// job never reaches it, so it is dropped.
	a := jobs[0]
	e10 := 5967.5 / 100
	if a.StepsTotal != 2 || a.GPUs != 1 || a.Arrival != 0 || a.Weight != 1 || a.Throughput["v100"] != 1/e10 {
		t.Errorf("job 0: %+v", a)
	}
	if x := a.Adaptive; !slices.Equal(x.Regimes, []int{10, 20, 40}) || x.Epochs != 2 || x.BatchSize != 10 ||
		!slices.Equal(x.History, []int{0, 0, 0}) || !slices.Equal(x.EpochSeconds, []float64{e10, 5967.5 / 2 / 60, 5967.5 / 4 / 40}) {
		t.Errorf("job 0 adaptive: %+v", *x)
	}
	if ad := model.Jobs["0"]; !slices.Equal(ad.Batch, []int{10, 10}) || len(ad.EpochSeconds) != 3 {
		t.Errorf("job 0 adaptation: %+v", *ad)
	}
	// Transformer at 32 on 2 GPUs: ⌈10000/32⌉ = 313 steps per epoch, so 626
	// steps make 2 epochs of 1000/32 s; accordion does not apply.
	b := jobs[1]
	if b.StepsTotal != 2 || b.GPUs != 2 || b.Arrival != 30500*time.Millisecond || b.Weight != 2 ||
		len(b.Throughput) != 1 || b.Throughput["v100"] != 32.0/1000 {
		t.Errorf("job 1: %+v", b)
	}
	if !slices.Equal(b.Adaptive.Regimes, []int{32}) || !slices.Equal(model.Jobs["1"].Batch, []int{32, 32}) {
		t.Errorf("job 1: %+v %+v", *b.Adaptive, *model.Jobs["1"])
	}
	if err := model.Prepare(jobs); err != nil {
		t.Error(err)
	}
	// Another accelerator type.
	jobs, _, err = ReadShockwaveTrace(strings.NewReader(in[strings.Index(in, "Transformer"):]), "t", shockwaveTestProfile(), ShockwaveOptions{Accelerator: "k80"})
	if err != nil || jobs[0].Throughput["k80"] != 32.0/2000 {
		t.Errorf("k80: %v %+v", err, jobs)
	}
}

func TestReadShockwaveTraceErrors(t *testing.T) {
	for _, c := range []struct {
		line, field string
	}{
		{"a\tb\tc", ""},
		{strings.Replace(lmLine("6000", "gns", "0"), "LM (batch size 10)", "LM", 1), "job_type"},
		{strings.Replace(lmLine("6000", "gns", "0"), "LM (batch size 10)", "VGG (batch size 10)", 1), "job_type"},
		{strings.Replace(lmLine("6000", "gns", "0"), "LM (batch size 10)", "LM (batch size 160)", 1), "job_type"},
		{lmLine("6000", "elastic", "0"), "mode"},
		{lmLine("-3", "gns", "0"), "total_steps"},
		{lmLine("NaN", "gns", "0"), "total_steps"},
		{lmLine("1e30", "gns", "0"), "total_steps"},
		{lmLine("6000", "gns", "-1"), "arrival_s"},
		{lmLine("6000", "gns", "x"), "arrival_s"},
		{strings.Replace(lmLine("6000", "gns", "0"), "\t1\tgns", "\t0\tgns", 1), "scale_factor"},
		{strings.Replace(lmLine("6000", "gns", "0"), "gns\t1", "gns\t0", 1), "priority_weight"},
		{strings.Replace(lmLine("6000", "gns", "0"), "-1.000000", "slo", 1), "SLO"},
		{strings.Replace(lmLine("6000", "gns", "0"), "\t100\t", "\t-100\t", 1), "duration_s"},
		{strings.Replace(lmLine("6000", "gns", "0"), "--steps\t1", "--steps\t2", 1), "needs_data_dir"},
		// 60 epochs reach batch size 80, which the profile cannot run.
		{lmLine("358080", "gns", "0"), "job_type"},
		// 2 GPUs: no throughput at all.
		{strings.Replace(lmLine("6000", "static", "0"), "\t1\tstatic", "\t2\tstatic", 1), "job_type"},
	} {
		in := lmLine("6000", "static", "0") + "\n" + c.line + "\n"
		_, _, err := ReadShockwaveTrace(strings.NewReader(in), "t.trace", shockwaveTestProfile(), ShockwaveOptions{})
		te, ok := errors.AsType[*TraceError](err)
		if !ok || !errors.Is(err, ErrTrace) || te.Line != 2 || te.Job != "1" || te.Field != c.field {
			t.Errorf("%q: error %v, want a TraceError at line 2, job 1, field %q", c.line, err, c.field)
		}
	}
	if _, _, err := ReadShockwaveTraceFile(filepath.Join(t.TempDir(), "absent"), shockwaveTestProfile(), ShockwaveOptions{}); err == nil {
		t.Error("reading an absent file succeeded")
	}
}

func FuzzReadShockwaveTrace(f *testing.F) {
	f.Add(lmLine("6000", "gns", "0") + "\n" + lmLine("400000", "accordion", "10"))
	f.Add(lmLine("1", "static", "0"))
	f.Add(shockwaveLine("Transformer (batch size 32)", "c", "d", "--n", "0", "626", "2", "accordion", "2", "-1", "50", "30.5"))
	f.Add("\t\t\t\t\t\t\t\t\t\t\t")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, model, err := ReadShockwaveTrace(strings.NewReader(in), "fuzz", shockwaveTestProfile(), ShockwaveOptions{})
		if err != nil {
			if !errors.Is(err, ErrTrace) {
				t.Fatalf("error %v does not wrap ErrTrace", err)
			}
			return
		}
		if err := model.Prepare(jobs); err != nil {
			t.Fatalf("inconsistent jobs: %v", err)
		}
		for i := range jobs {
			if model.Exclusive(&jobs[i]) <= 0 {
				t.Fatalf("job %s: no exclusive time", jobs[i].ID)
			}
		}
	})
}

const shockwave120 = "120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"

func loadShockwave120(t *testing.T) ([]policy.Job, *Adaptive, []string) {
	t.Helper()
	tf, err := os.Open(filepath.Join(shockwaveDataDir, "throughputs", "tacc_throughputs.json"))
	if err != nil {
		t.Skipf("Shockwave data absent: %v", err)
	}
	defer tf.Close()
	p, _, err := LoadGavelThroughputs(tf)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shockwaveDataDir, "traces", shockwave120)
	jobs, model, err := ReadShockwaveTraceFile(path, p, ShockwaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var modes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Split(sc.Text(), "\t"); len(fs) == 12 {
			modes = append(modes, fs[7])
		}
	}
	return jobs, model, modes
}

func relNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }

// The 120-job trace with tacc throughputs matches Shockwave's profile:
// epochs, epoch durations and, except for the GNS jobs whose last epoch
// upstream's quirk changed, the exclusive runtime.
func TestReadShockwaveTrace120(t *testing.T) {
	jobs, model, modes := loadShockwave120(t)
	prof := loadShockwaveProfile(t, "profile_120jobs_tacc.json")
	if len(jobs) != 120 || len(prof.Jobs) != 120 || len(modes) != 120 {
		t.Fatalf("%d jobs, %d in the profile, %d modes; want 120", len(jobs), len(prof.Jobs), len(modes))
	}
	sf := map[int]int{}
	mode := map[string]int{}
	for i, j := range jobs {
		sf[j.GPUs]++
		mode[modes[i]]++
	}
	if want := map[int]int{1: 92, 2: 20, 4: 8}; !maps.Equal(sf, want) {
		t.Errorf("scale factors %v, want %v", sf, want)
	}
	if want := map[string]int{"gns": 57, "accordion": 59, "static": 4}; !maps.Equal(mode, want) {
		t.Errorf("modes %v, want %v", mode, want)
	}
	if err := model.Prepare(jobs); err != nil {
		t.Fatal(err)
	}
	quirks := 0
	for i, j := range jobs {
		pj := prof.Jobs[i]
		if j.ID != strconv.Itoa(pj.JobID) || j.GPUs != pj.ScaleFactor || modes[i] != string(pj.Mode) {
			t.Fatalf("job %s does not line up with profile job %d", j.ID, pj.JobID)
		}
		ad := model.Jobs[j.ID]
		if int(j.StepsTotal) != pj.NumEpochs || j.Adaptive.Epochs != pj.NumEpochs || len(ad.Batch) != pj.NumEpochs {
			t.Errorf("job %s: %v epochs, profile %d", j.ID, j.StepsTotal, pj.NumEpochs)
		}
		for k, want := range pj.EpochSeconds {
			bs, _ := strconv.Atoi(k)
			r := slices.Index(j.Adaptive.Regimes, bs)
			if got := ad.EpochSeconds[bs]; r < 0 || !relNear(got, want, 1e-9) || j.Adaptive.EpochSeconds[r] != got {
				t.Errorf("job %s: batch %d: %v s per epoch (regimes %v), profile %v", j.ID, bs, got, j.Adaptive.Regimes, want)
			}
		}
		excl := model.Exclusive(&j).Seconds()
		want := rle(pj.Schedule...)
		switch {
		case slices.Equal(ad.Batch, want):
			if !relNear(excl, pj.Exclusive, 1e-9) {
				t.Errorf("job %s: exclusive %v s, profile %v s", j.ID, excl, pj.Exclusive)
			}
		case pj.Mode == GNS && quirkOnly(ad.Batch, want):
			quirks++
			n := len(want) - 1
			diff := ad.EpochSeconds[ad.Batch[n]] - ad.EpochSeconds[want[n]]
			if !relNear(excl, pj.Exclusive+diff, 1e-9) {
				t.Errorf("job %s: exclusive %v s, profile %v s, last-epoch difference %v s", j.ID, excl, pj.Exclusive, diff)
			}
		default:
			t.Errorf("job %s: schedule differs from the profile beyond the last epoch", j.ID)
		}
	}
	t.Logf("%d GNS jobs differ from the profile in their last epoch only", quirks)
}

// The whole 120-job trace runs to completion on Shockwave's 32 GPUs under
// FIFO with its 120 s rounds and 20 s restarts, and every job's Exclusive
// is its post-adaptation runtime.
func TestShockwave120Simulation(t *testing.T) {
	jobs, model, _ := loadShockwave120(t)
	if err := model.Prepare(jobs); err != nil {
		t.Fatal(err)
	}
	model.Round = 120 * time.Second
	pol, err := policy.New("gavel.fifo", nil)
	if err != nil {
		t.Fatal(err)
	}
	var servers []allocation.Server
	for i := range 8 {
		servers = append(servers, allocation.Server{ID: "n" + strconv.Itoa(i), Accelerator: "v100", GPUs: 4})
	}
	s := &sim.Simulation{
		Cluster: allocation.Cluster{Servers: servers}, Policy: pol,
		Round: model.Round, Restart: 20 * time.Second,
		Speed: model.Speed, Observe: model.Observe, Exclusive: model.Exclusive,
	}
	res, err := s.Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Jobs {
		if !r.Finished {
			t.Errorf("job %s did not finish", r.ID)
		}
		if want := model.Exclusive(&jobs[slices.IndexFunc(jobs, func(j policy.Job) bool { return j.ID == r.ID })]); r.Exclusive != want {
			t.Errorf("record %d: exclusive %v, want %v", i, r.Exclusive, want)
		}
		// No job can beat its runtime alone.
		if r.JCT() < r.Exclusive-time.Millisecond {
			t.Errorf("job %s: JCT %v below its exclusive %v", r.ID, r.JCT(), r.Exclusive)
		}
	}
	sum, err := sim.Summarize(res.Jobs, res.Rounds, sim.Options{GPUs: 32})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIFO on the 120-job trace: makespan %.0f s, mean JCT %.0f s, mean ρ %.2f, worst ρ %.2f", sum.Makespan, sum.AvgJCT, sum.MeanFTF, sum.WorstFTF)
}
