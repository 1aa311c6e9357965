package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// logUniformMean is E[60·10^U(a,b)] = 60·(10^b − 10^a)/((b−a)·ln 10).
func logUniformMean(a, b float64) float64 {
	return 60 * (math.Pow(10, b) - math.Pow(10, a)) / ((b - a) * math.Ln10)
}

// genCluster returns servers of v100, p100 and k80 with 8 GPUs each.
func genCluster(perType int) allocation.Cluster {
	var c allocation.Cluster
	for _, a := range []allocation.Accelerator{"v100", "p100", "k80"} {
		for i := range perType {
			c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("%s-%d", a, i), Accelerator: a, GPUs: 8})
		}
	}
	return c
}

func TestGeneratorStatistics(t *testing.T) {
	const n = 100_000
	const rate = 4.0
	jobs, err := Generator{Seed: 7, Jobs: n, Rate: rate, MultiGPU: true, Priorities: true, SLOs: true}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != n {
		t.Fatalf("got %d jobs, want %d", len(jobs), n)
	}
	p := DefaultProfile()
	// Identify each job's template by its throughputs at its scale factor,
	// which are unique in the default profile.
	type sig struct {
		s               int
		v100, p100, k80 float64
	}
	signature := func(s int, tp map[allocation.Accelerator]float64) sig {
		return sig{s, tp["v100"], tp["p100"], tp["k80"]}
	}
	byThroughput := map[sig]Template{}
	for _, tm := range p.Templates {
		for _, s := range []int{1, 2, 4, 8} {
			tp := map[allocation.Accelerator]float64{}
			for _, a := range p.Accelerators() {
				tp[a] = p.Throughput(tm.Name, a, s)
			}
			if tp["v100"] > 0 {
				k := signature(s, tp)
				if _, dup := byThroughput[k]; dup {
					t.Fatalf("throughputs %v are not unique", k)
				}
				byThroughput[k] = tm
			}
		}
	}

	var sumDur, sumSLO float64
	scales := map[int]int{}
	templates := map[string]int{}
	heavy := 0
	lo, hi := 60*math.Pow(10, 1.5), 60*math.Pow(10, 4)
	for i, j := range jobs {
		if want := fmt.Sprintf("job-%05d", i); j.ID != want {
			t.Fatalf("job %d: ID %q, want %q", i, j.ID, want)
		}
		if i > 0 && j.Arrival < jobs[i-1].Arrival {
			t.Fatalf("job %s arrives at %v, before its predecessor at %v", j.ID, j.Arrival, jobs[i-1].Arrival)
		}
		v := j.Throughput["v100"]
		d := j.StepsTotal / v
		if !(d >= lo*(1-1e-9) && d <= hi*(1+1e-9)) {
			t.Fatalf("job %s: duration %v s outside [%v, %v]", j.ID, d, lo, hi)
		}
		sumDur += d
		scales[j.GPUs]++
		tm, ok := byThroughput[signature(j.GPUs, j.Throughput)]
		if !ok {
			t.Fatalf("job %s: no template with throughputs %v on %d GPUs", j.ID, j.Throughput, j.GPUs)
		}
		if j.GPUs > 1 && !tm.Distributed {
			t.Fatalf("job %s: template %q is not distributed but has %d GPUs", j.ID, tm.Name, j.GPUs)
		}
		for _, a := range []allocation.Accelerator{"v100", "p100", "k80"} {
			if got, want := j.Throughput[a], p.Throughput(tm.Name, a, j.GPUs); got != want {
				t.Fatalf("job %s: throughput[%s] = %v, want %v", j.ID, a, got, want)
			}
		}
		if j.GPUs == 1 {
			templates[tm.Name]++
		}
		switch j.Weight {
		case 5:
			heavy++
		case 1:
		default:
			t.Fatalf("job %s: weight %v", j.ID, j.Weight)
		}
		f := (j.Deadline - j.Arrival).Seconds() / d
		if !slices.ContainsFunc([]float64{1.2, 2, 10}, func(x float64) bool { return math.Abs(f-x) < 1e-6 }) {
			t.Fatalf("job %s: deadline slack factor %v", j.ID, f)
		}
		sumSLO += f
	}

	t.Run("duration mean", func(t *testing.T) {
		want := 0.8*logUniformMean(1.5, 3) + 0.2*logUniformMean(3, 4)
		got := sumDur / n
		if math.Abs(got/want-1) > 0.01 {
			t.Errorf("mean duration %.0f s, want %.0f s ± 1 %%", got, want)
		}
	})
	t.Run("scale factors", func(t *testing.T) {
		for s, want := range map[int]float64{1: 70, 2: 10, 4: 15, 8: 5} {
			if got := 100 * float64(scales[s]) / n; math.Abs(got-want) > 1 {
				t.Errorf("share of %d-GPU jobs %.2f %%, want %.0f ± 1", s, got, want)
			}
		}
		if len(scales) != 4 {
			t.Errorf("scale factors %v, want only 1, 2, 4, 8", scales)
		}
	})
	t.Run("inter-arrival mean", func(t *testing.T) {
		want := 3600 / rate
		got := jobs[n-1].Arrival.Seconds() / n
		if math.Abs(got/want-1) > 0.01 {
			t.Errorf("mean inter-arrival %.2f s, want %.2f s ± 1 %%", got, want)
		}
	})
	t.Run("templates uniform", func(t *testing.T) {
		if len(templates) != 26 {
			t.Fatalf("%d templates among single-GPU jobs, want 26", len(templates))
		}
		want := float64(scales[1]) / 26
		for name, c := range templates {
			if math.Abs(float64(c)/want-1) > 0.1 {
				t.Errorf("template %q drawn %d times, want about %.0f", name, c, want)
			}
		}
	})
	t.Run("priorities", func(t *testing.T) {
		if got := 100 * float64(heavy) / n; math.Abs(got-20) > 1 {
			t.Errorf("share of weight-5 jobs %.2f %%, want 20 ± 1", got)
		}
	})
	t.Run("SLO factors", func(t *testing.T) {
		want := (1.2 + 2 + 10) / 3.0
		if got := sumSLO / n; math.Abs(got/want-1) > 0.02 {
			t.Errorf("mean SLO factor %.3f, want %.3f ± 2 %%", got, want)
		}
	})
}

func TestGeneratorDurationShape(t *testing.T) {
	// The mean duration is dominated by the rare long jobs (its standard
	// error over 100 000 draws is about 0.6 %), so check the mixture on the
	// log scale too: the exponent log10(d/60) is U(1.5, 3) with probability
	// 0.8, else U(3, 4), so it is below 3 with probability 0.8 and has mean
	// 0.8·2.25 + 0.2·3.5 = 2.5.
	const n = 100_000
	r := newTestRand(3)
	short, sumExp := 0, 0.0
	for range n {
		e := math.Log10(drawDuration(r) / 60)
		if e < 1.5 || e > 4 {
			t.Fatalf("exponent %v outside [1.5, 4]", e)
		}
		if e < 3 {
			short++
		}
		sumExp += e
	}
	if got := 100 * float64(short) / n; math.Abs(got-80) > 1 {
		t.Errorf("share of jobs under 1000 minutes %.2f %%, want 80 ± 1", got)
	}
	if got := sumExp / n; math.Abs(got-2.5) > 0.01 {
		t.Errorf("mean exponent %.4f, want 2.5 ± 0.01", got)
	}
	sum := 0.0
	for range n {
		sum += interArrival(r, 900)
	}
	if got := sum / n; math.Abs(got/900-1) > 0.01 {
		t.Errorf("mean inter-arrival %.2f s, want 900 ± 1 %%", got)
	}
}

func TestGeneratorDeterministic(t *testing.T) {
	g := Generator{Seed: 42, Jobs: 200, Rate: 3, MultiGPU: true, Priorities: true, SLOs: true}
	a, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different jobs (-first +second):\n%s", diff)
	}
	g.Seed = 43
	c, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range a {
		if a[i].StepsTotal == c[i].StepsTotal {
			same++
		}
	}
	if cmp.Equal(a, c) || same > 0 {
		t.Errorf("seeds 42 and 43 give %d jobs of equal length out of %d", same, len(a))
	}
}

func TestGeneratorStreamsIndependent(t *testing.T) {
	base := Generator{Seed: 5, Jobs: 300, Rate: 2, MultiGPU: true}
	a, err := base.Generate()
	if err != nil {
		t.Fatal(err)
	}
	more := base
	more.Priorities, more.SLOs = true, true
	b, err := more.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		b[i].Weight, b[i].Deadline = 1, 0
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("priorities and SLOs changed other attributes (-without +with):\n%s", diff)
	}
}

func TestGeneratorValid(t *testing.T) {
	for _, g := range []Generator{
		{Seed: 1, Jobs: 500},
		{Seed: 2, Jobs: 500, Rate: 6},
		{Seed: 3, Jobs: 2000, Rate: 1.5, MultiGPU: true, Priorities: true, SLOs: true},
	} {
		jobs, err := g.Generate()
		if err != nil {
			t.Fatal(err)
		}
		snap := &policy.Snapshot{Now: jobs[len(jobs)-1].Arrival, Cluster: genCluster(2), Jobs: jobs}
		if err := policy.Validate(snap); err != nil {
			t.Errorf("%+v: %v", g, err)
		}
	}
}

func TestGeneratorZeroValue(t *testing.T) {
	jobs, err := Generator{}.Generate()
	if err != nil || len(jobs) != 0 {
		t.Fatalf("zero Generator: %d jobs, %v; want none", len(jobs), err)
	}
	jobs, err = Generator{Jobs: 50}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Arrival != 0 || j.GPUs != 1 || j.Weight != 1 || j.Deadline != 0 || j.StepsTotal <= 0 || len(j.Throughput) != 3 {
			t.Fatalf("job %+v: want a single-GPU job of weight 1 at time 0 without deadline", j)
		}
	}
	withDefault, err := Generator{Jobs: 50, Profile: DefaultProfile()}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jobs, withDefault); diff != "" {
		t.Errorf("zero profile differs from DefaultProfile:\n%s", diff)
	}
}

func TestGeneratorZeroThroughput(t *testing.T) {
	// "a" cannot run on v100 at all, so durations refer to p100; "b" is
	// not distributed; on 8 GPUs nothing can run.
	p := Profile{
		Templates: []Template{{Name: "a", Distributed: true}, {Name: "b"}},
		Throughputs: map[ProfileKey]float64{
			{"a", "v100", 1}: 0, {"a", "p100", 1}: 2, {"a", "k80", 1}: 1,
			{"a", "v100", 2}: 0, {"a", "p100", 2}: 4,
			{"a", "v100", 4}: 0, {"a", "p100", 4}: 8,
			{"b", "v100", 1}: 3, {"b", "p100", 1}: 0,
		},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	jobs, err := Generator{Seed: 1, Jobs: 100, Rate: 10, Profile: p}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	snap := &policy.Snapshot{Now: jobs[len(jobs)-1].Arrival, Cluster: genCluster(1), Jobs: jobs}
	if err := policy.Validate(snap); err != nil {
		t.Error(err)
	}
	lo, hi := 60*math.Pow(10, 1.5), 60*math.Pow(10, 4)
	for _, j := range jobs {
		if len(j.Throughput) != 3 {
			t.Fatalf("job %s: throughput %v, want all of k80, p100, v100", j.ID, j.Throughput)
		}
		ref := j.Throughput["v100"]
		if ref == 0 {
			ref = j.Throughput["p100"]
			if ref != 2 || j.Throughput["k80"] != 1 {
				t.Fatalf("job %s: throughput %v, want template a", j.ID, j.Throughput)
			}
		} else if j.Throughput["p100"] != 0 || j.Throughput["k80"] != 0 {
			t.Fatalf("job %s: throughput %v, want template b", j.ID, j.Throughput)
		}
		if d := j.StepsTotal / ref; d < lo*(1-1e-9) || d > hi*(1+1e-9) {
			t.Fatalf("job %s: duration %v s on the reference type outside [%v, %v]", j.ID, d, lo, hi)
		}
	}
	// Multi-GPU: jobs on 2 or 4 GPUs must be "a"; the first 8-GPU draw fails.
	_, err = Generator{Seed: 1, Jobs: 1000, MultiGPU: true, Profile: p}.Generate()
	if !errors.Is(err, errNoRunnableTemplate) {
		t.Errorf("8-GPU job without a runnable template: err = %v, want %v", err, errNoRunnableTemplate)
	}
	p.Throughputs[ProfileKey{"a", "k80", 8}] = 16
	jobs, err = Generator{Seed: 1, Jobs: 1000, MultiGPU: true, Profile: p}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.GPUs > 1 && j.Throughput["v100"] != 0 {
			t.Fatalf("job %s on %d GPUs is not template a: %v", j.ID, j.GPUs, j.Throughput)
		}
		if j.GPUs == 8 && j.StepsTotal/16 < lo*(1-1e-9) {
			t.Fatalf("job %s on 8 GPUs: steps %v not measured on k80", j.ID, j.StepsTotal)
		}
	}
}

func TestGeneratorErrors(t *testing.T) {
	dup := DefaultProfile()
	dup.Templates = append(dup.Templates, dup.Templates[0])
	neg := DefaultProfile()
	neg.Throughputs[ProfileKey{"A3C", "v100", 1}] = -1
	nan := DefaultProfile()
	nan.Throughputs[ProfileKey{"A3C", "k80", 1}] = math.NaN()
	unknown := DefaultProfile()
	unknown.Throughputs[ProfileKey{"BERT", "v100", 1}] = 1
	single := DefaultProfile()
	single.Throughputs[ProfileKey{"A3C", "v100", 2}] = 1
	noTemplates := Profile{Throughputs: map[ProfileKey]float64{{"A3C", "v100", 1}: 1}}
	for name, g := range map[string]Generator{
		"negative jobs":             {Jobs: -1},
		"negative rate":             {Jobs: 1, Rate: -1},
		"NaN rate":                  {Jobs: 1, Rate: math.NaN()},
		"infinite rate":             {Jobs: 1, Rate: math.Inf(1)},
		"rate too low":              {Jobs: 10, Rate: 1e-9},
		"duplicate template":        {Jobs: 1, Profile: dup},
		"negative throughput":       {Jobs: 1, Profile: neg},
		"NaN throughput":            {Jobs: 1, Profile: nan},
		"unknown template":          {Jobs: 1, Profile: unknown},
		"non-distributed on 2":      {Jobs: 1, Profile: single},
		"throughputs, no templates": {Jobs: 1, Profile: noTemplates},
	} {
		if jobs, err := g.Generate(); err == nil {
			t.Errorf("%s: got %d jobs and no error", name, len(jobs))
		}
	}
}

func TestDefaultProfile(t *testing.T) {
	p := DefaultProfile()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Accelerators(), []allocation.Accelerator{"k80", "p100", "v100"}; !slices.Equal(got, want) {
		t.Errorf("accelerators %v, want %v", got, want)
	}
	ts := Templates()
	if len(ts) != 26 {
		t.Fatalf("%d templates, want 26", len(ts))
	}
	names := map[string]bool{}
	distributed := 0
	for _, tm := range ts {
		if names[tm.Name] || tm.Name == "" || tm.Model == "" {
			t.Errorf("template %+v: empty or duplicate", tm)
		}
		names[tm.Name] = true
		if tm.Distributed {
			distributed++
		}
	}
	if distributed != 19 {
		t.Errorf("%d distributed templates, want 19", distributed)
	}
	if len(p.Throughputs) != 3*(26+19*3) {
		t.Errorf("%d throughputs, want %d", len(p.Throughputs), 3*(26+19*3))
	}
	for _, tm := range ts {
		for _, s := range []int{1, 2, 4, 8} {
			for _, a := range p.Accelerators() {
				v := p.Throughput(tm.Name, a, s)
				zero := s > 1 && (!tm.Distributed || (tm.Name == "ResNet-50 (batch size 128)" && a == "k80"))
				if (v == 0) != zero {
					t.Errorf("%q on %d %s: throughput %v", tm.Name, s, a, v)
				}
			}
		}
	}
	for _, c := range []struct {
		name            string
		s               int
		v100, p100, k80 float64
	}{
		{"ResNet-50 (batch size 64)", 1, 4.395, 2.619, 0.6190},
		{"Transformer (batch size 128)", 1, 5.446, 3.074, 0.9816},
		{"A3C", 1, 7.176, 5.681, 3.439},
		{"CycleGAN", 1, 4.426, 2.403, 0.5048},
		{"Recommendation (batch size 1024)", 1, 13.28, 30.74, 20.05},
		{"LM (batch size 5)", 8, 698.8, 133.5, 76.86},
	} {
		got := [3]float64{p.Throughput(c.name, "v100", c.s), p.Throughput(c.name, "p100", c.s), p.Throughput(c.name, "k80", c.s)}
		if want := [3]float64{c.v100, c.p100, c.k80}; got != want {
			t.Errorf("%q at s=%d: %v, want %v", c.name, c.s, got, want)
		}
	}
	if p.Throughput("BERT", "v100", 1) != 0 || p.Throughput("A3C", "tpu", 1) != 0 || (Profile{}).Throughput("A3C", "v100", 1) != 0 {
		t.Error("missing entries must read as zero")
	}
	// Fresh copies.
	p.Throughputs[ProfileKey{"A3C", "v100", 1}] = 1
	p.Templates[0].Name = "x"
	if q := DefaultProfile(); q.Throughput("A3C", "v100", 1) != 7.176 || q.Templates[0].Name != "ResNet-18 (batch size 16)" {
		t.Error("DefaultProfile shares state between calls")
	}
	if !(Profile{}).IsZero() || p.IsZero() {
		t.Error("IsZero")
	}
}

func newTestRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
