package tiresias_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/bayes"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/tiresias"
)

// The default prior is the percentiles of yarn-gput1000.csv: each value is
// the quantile at (k + ½)/100, interpolated and rounded, and its Gittins
// index is within 3 % of the whole sample's at the thresholds.
func TestDefaultSamples(t *testing.T) {
	data := readSamples(t, gput1000)
	slices.Sort(data)
	if len(data) != 1001 {
		t.Fatalf("%s: %d samples, want 1001", gput1000, len(data))
	}
	table := tiresias.DefaultSamples()
	if len(table) != 100 {
		t.Fatalf("%d default samples, want 100", len(table))
	}
	n := len(data)
	for k, got := range table {
		h := (float64(k) + 0.5) / 100 * float64(n-1)
		lo := int(h)
		want := data[lo] + (h-float64(lo))*(data[min(lo+1, n-1)]-data[lo])
		if math.Abs(got-want) > 0.5+1e-6 {
			t.Errorf("default sample %d = %v, want %v rounded", k, got, want)
		}
	}
	full, err := bayes.NewService(data)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := bayes.NewService(table)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []float64{0, 1000, 3250, 7200} {
		want, got := full.Gittins(a, tiresias.DefaultQuantum), prior.Gittins(a, tiresias.DefaultQuantum)
		if math.Abs(got-want) > 0.03*want {
			t.Errorf("G(%v) = %.4g from the prior, %.4g from the data", a, got, want)
		}
	}
}

// tiresias.gittins with an empty configuration decides on the default
// prior, whose index falls with service: within a queue the least-served
// job runs first.
func TestGittinsEmptyConfig(t *testing.T) {
	for _, config := range []string{"", "{}"} {
		p, err := policy.New("tiresias.gittins", []byte(config))
		if err != nil {
			t.Fatalf("config %q: %v", config, err)
		}
		d := decide(t, p, servers(1, 1), 100, job("served", 1, 0, 1000), job("new", 1, 50, 0))
		if got := runningIDs(d); !slices.Equal(got, []string{"new"}) {
			t.Errorf("config %q: runs %v, want new", config, got)
		}
	}
	if got := tiresias.DefaultSamples(); &got[0] == &tiresias.DefaultSamples()[0] {
		t.Error("DefaultSamples returns a shared slice")
	}
}

// After it has seen many jobs finish at 2000 GPU-seconds, Tiresias-G ranks
// a job that has had 1500 ahead of a new one: it is likely to end within
// the quantum. On the prior alone the new job comes first.
func TestGittinsLearns(t *testing.T) {
	c := servers(1, 1)
	a, b := job("a", 1, 0, 0), job("b", 1, 1, 1500)
	one := tiresias.Queues{Thresholds: []float64{1e9}}
	if got := runningIDs(decide(t, &tiresias.Gittins{Queues: one}, c, 10, a, b)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("on the prior: runs %v, want a", got)
	}
	p := &tiresias.Gittins{Queues: one}
	jobs := []policy.Job{a, b}
	for i := range 200 {
		jobs = append(jobs, job(fmt.Sprintf("f%03d", i), 1, 0, 2000))
	}
	decide(t, p, c, 10, jobs...)
	if len(p.State.Finished) != 0 {
		t.Fatalf("finished %v before any job left", p.State.Finished)
	}
	// The 200 jobs are gone: they finished, having waited (the GPU ran a),
	// at 2000 GPU-seconds; a ran for the 10 s since.
	if got := runningIDs(decide(t, p, c, 20, a, b)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after learning: runs %v, want b", got)
	}
	if f := p.State.Finished; len(f) != 200 || slices.ContainsFunc(f, func(x float64) bool { return x != 2000 }) {
		t.Errorf("finished %v, want 200 × 2000", f)
	}
	// A restored policy keeps what was learned: the State holds it.
	b2, err := p.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	q := &tiresias.Gittins{Queues: one}
	if err := q.RestoreState(b2); err != nil {
		t.Fatal(err)
	}
	if got := runningIDs(decide(t, q, c, 30, a, b)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("restored: runs %v, want b", got)
	}
}

// A finished job's total is its service at the last decision plus what it
// ran since on its GPUs; only the most recent MaxSamples totals are kept,
// and a negative MaxSamples learns nothing.
func TestGittinsSamplesBound(t *testing.T) {
	c := servers(1, 4)
	p := &tiresias.Gittins{MaxSamples: 5}
	decide(t, p, c, 100, job("r", 2, 0, 100), job("w1", 4, 0, 200), job("w2", 4, 0, 300))
	decide(t, p, c, 150) // all three finished; r ran 50 s on 2 GPUs
	if want := []float64{200, 200, 300}; !slices.Equal(p.State.Finished, want) {
		t.Fatalf("finished %v, want %v (in ID order)", p.State.Finished, want)
	}
	decide(t, p, c, 200, job("k1", 4, 150, 400), job("k2", 4, 150, 500), job("k3", 4, 150, 600), job("k4", 4, 150, 700))
	decide(t, p, c, 200) // k1 ran on the 4 GPUs for no time
	if want := []float64{300, 400, 500, 600, 700}; !slices.Equal(p.State.Finished, want) {
		t.Errorf("finished %v, want the last 5, %v", p.State.Finished, want)
	}
	// A state beyond the bound (restored, or from a larger bound) is
	// trimmed to the most recent at the next decision; bad values drop.
	p.State.Finished = []float64{1, math.NaN(), 2, 3, -4, 5, 6, 7, 8}
	decide(t, p, c, 300)
	if want := []float64{3, 5, 6, 7, 8}; !slices.Equal(p.State.Finished, want) {
		t.Errorf("finished %v, want %v", p.State.Finished, want)
	}
	// The default bound is DefaultMaxSamples.
	p = &tiresias.Gittins{}
	p.State.Finished = make([]float64, tiresias.DefaultMaxSamples+10)
	decide(t, p, c, 0)
	if len(p.State.Finished) != tiresias.DefaultMaxSamples {
		t.Errorf("%d finished kept, want %d", len(p.State.Finished), tiresias.DefaultMaxSamples)
	}
	// Learning off.
	p = &tiresias.Gittins{MaxSamples: -1}
	decide(t, p, c, 100, job("x", 1, 0, 100))
	decide(t, p, c, 200)
	if len(p.State.Finished) != 0 {
		t.Errorf("finished %v with learning off", p.State.Finished)
	}
}

// A job left out of a decision has not finished: it keeps its place and is
// not learned; LAS learns nothing.
func TestGittinsLeftOutNotFinished(t *testing.T) {
	c := servers(1, 1)
	p := &tiresias.Gittins{}
	decide(t, p, c, 10, job("a", 1, 0, 100), job("b", 1, 0, 50))
	bad := job("a", 1, 0, 100)
	bad.Weight = -1
	d, err := p.Allocate(context.Background(), &policy.Snapshot{Now: secs(20), Cluster: c, Jobs: []policy.Job{bad, job("b", 1, 0, 60)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Unscheduled["a"]; !ok || len(p.State.Finished) != 0 {
		t.Errorf("left out %v, finished %v; want a left out and nothing learned", d.Unscheduled, p.State.Finished)
	}
	if _, ok := p.State.Jobs["a"]; !ok {
		t.Errorf("state %v lost the left-out job", p.State.Jobs)
	}
	las := &tiresias.LAS{}
	decide(t, las, c, 10, job("a", 1, 0, 100))
	decide(t, las, c, 20)
	if len(las.State.Finished) != 0 {
		t.Errorf("LAS learned %v", las.State.Finished)
	}
}
