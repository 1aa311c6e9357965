package tiresias_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/bayes"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/tiresias"
	"github.com/google/go-cmp/cmp"
)

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// job is a job that has run ran seconds on gpus GPUs; running places it on
// the first servers of c.
func job(id string, gpus int, arrival, attained float64, place ...allocation.Assignment) policy.Job {
	return policy.Job{ID: id, GPUs: gpus, Arrival: secs(arrival), AttainedGPUSeconds: attained,
		Throughput: map[allocation.Accelerator]float64{v100: 1}, Placement: place}
}

func on(server string, gpus int) allocation.Assignment {
	return allocation.Assignment{Server: server, GPUs: gpus}
}

func decide(t *testing.T, p policy.Policy, c allocation.Cluster, now float64, jobs ...policy.Job) *policy.Decision {
	t.Helper()
	d, err := p.Allocate(context.Background(), &policy.Snapshot{Now: secs(now), Cluster: c, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Allocation.Validate(c); err != nil {
		t.Fatal(err)
	}
	return d
}

func runningIDs(d *policy.Decision) []string {
	var ids []string
	for id := range d.Placement {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Check 1 and 2: a job running alone is woken at each threshold crossing:
// in GPU-time at T/g, in time alone at T whatever its GPUs.
func TestDemotionTimes(t *testing.T) {
	for _, tc := range []struct {
		gpus     int
		timeOnly bool
		want     [2]float64
	}{
		{1, false, [2]float64{3250, 7200}},
		{4, false, [2]float64{812.5, 1800}},
		{8, false, [2]float64{406.25, 900}},
		{4, true, [2]float64{3250, 7200}},
		{8, true, [2]float64{3250, 7200}},
	} {
		p := &tiresias.LAS{Queues: tiresias.Queues{TimeOnly: tc.timeOnly}}
		c := servers(1, 8)
		var got [2]float64
		now, queue := 0.0, []int{}
		for i := range 3 {
			attained := now * float64(tc.gpus) // it has run since 0
			place := []allocation.Assignment{on("a", tc.gpus)}
			if i == 0 {
				place = nil
			}
			d := decide(t, p, c, now, job("j", tc.gpus, 0, attained, place...))
			queue = append(queue, p.State.Jobs["j"].Queue)
			if i < 2 {
				got[i] = d.Wake.Seconds()
				now = got[i]
			} else if d.Wake != 0 {
				t.Errorf("%d GPUs, time only %v: wakes at %v in the last queue", tc.gpus, tc.timeOnly, d.Wake)
			}
		}
		if got != tc.want || !slices.Equal(queue, []int{0, 1, 2}) {
			t.Errorf("%d GPUs, time only %v: wakes at %v in queues %v, want %v in 0, 1, 2", tc.gpus, tc.timeOnly, got, queue, tc.want)
		}
	}
}

// Check 3: with 4 GPUs free, Q0 = [A (8 GPUs), B (2), C (2)]: B and C run
// around the blocked A, no reservation.
func TestBackfill(t *testing.T) {
	c := servers(2, 4)
	d := decide(t, &tiresias.LAS{}, c, 10,
		job("R", 4, 0, 40, on("a", 4)), job("A", 8, 1, 0), job("B", 2, 2, 0), job("C", 2, 3, 0))
	if diff := cmp.Diff([]string{"B", "C", "R"}, runningIDs(d)); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
}

// Check 4: a new 4-GPU job in Q0 preempts a running job that reached Q1 on
// a full 4-GPU cluster.
func TestPreemption(t *testing.T) {
	p := &tiresias.LAS{}
	c := servers(1, 4)
	decide(t, p, c, 0, job("old", 4, 0, 0))
	d := decide(t, p, c, 900, job("old", 4, 0, 3600, on("a", 4)), job("new", 4, 900, 0))
	if diff := cmp.Diff([]string{"new"}, runningIDs(d)); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if q := p.State.Jobs["old"].Queue; q != 1 {
		t.Errorf("old job in Q%d, want Q1", q)
	}
}

// Check 5: in one queue the running job keeps running ahead of a waiting
// one that arrived earlier, with or without the state.
func TestRunningFirstInQueue(t *testing.T) {
	c := servers(1, 1)
	jobs := []policy.Job{job("early", 1, 0, 4000), job("late", 1, 10, 4000, on("a", 1))}
	for _, p := range []*tiresias.LAS{{}, {Queues: tiresias.Queues{State: tiresias.State{Seen: 100, Jobs: map[string]tiresias.JobState{
		"late": {Queue: 1, Order: 0}, "early": {Queue: 1, Order: 1},
	}}}}} {
		d := decide(t, p, c, 200, jobs...)
		if diff := cmp.Diff([]string{"late"}, runningIDs(d)); diff != "" {
			t.Errorf("state %v: running (-want +got):\n%s", p.State.Jobs, diff)
		}
	}
}

// Check 6: with P = 2 a job demoted after running 1000 s is promoted to Q0
// once it has waited 2000 s, its clocks reset; with P = 0 never.
func TestPromoteKnob(t *testing.T) {
	c := servers(1, 1)
	for _, knob := range []float64{2, 0} {
		p := &tiresias.LAS{Queues: tiresias.Queues{Thresholds: []float64{1000, 1e6}, PromoteKnob: knob}}
		decide(t, p, c, 0, job("x", 1, 0, 0))
		d := decide(t, p, c, 1000, job("x", 1, 0, 1000, on("a", 1)), job("y", 1, 1000, 0))
		if diff := cmp.Diff([]string{"y"}, runningIDs(d)); diff != "" {
			t.Fatalf("P = %v: running (-want +got):\n%s", knob, diff)
		}
		if knob > 0 && d.Wake != secs(2000) { // y's demotion at 2000 s comes first
			t.Errorf("P = %v: wake %v, want 2000 s", knob, d.Wake)
		}
		// y has little service in a fresh Q0; x waits in Q1.
		d = decide(t, p, c, 2999, job("x", 1, 0, 1000), job("y", 1, 1000, 500, on("a", 1)))
		if st := p.State.Jobs["x"]; st.Queue != 1 || st.Pending != 1999 {
			t.Errorf("P = %v: at 2999 s x is %+v, want Q1 after 1999 s pending", knob, st)
		}
		if knob > 0 && d.Wake != secs(3000) {
			t.Errorf("P = %v: wake %v, want the promotion at 3000 s", knob, d.Wake)
		}
		decide(t, p, c, 3000, job("x", 1, 0, 1000), job("y", 1, 1000, 501, on("a", 1)))
		want := tiresias.JobState{Queue: 0, Order: 1, Base: 1000, Promotions: 1}
		if knob == 0 {
			want = tiresias.JobState{Queue: 1, Order: 1, Pending: 2000}
		}
		if diff := cmp.Diff(want, p.State.Jobs["x"]); diff != "" {
			t.Errorf("P = %v: x at 3000 s (-want +got):\n%s", knob, diff)
		}
	}
}

// Check 7: Tiresias-G orders a queue by the Gittins index of the learned
// distribution, which need not be LAS's order: if every job is 1000
// GPU-seconds long, one that has had 600 is nearer its end than a new one.
func TestGittinsOrder(t *testing.T) {
	c := servers(1, 1)
	jobs := []policy.Job{job("fresh", 1, 0, 0), job("half", 1, 1, 600)}
	las := &tiresias.LAS{Queues: tiresias.Queues{Thresholds: []float64{1e9}}}
	if got := runningIDs(decide(t, las, c, 10, jobs...)); !slices.Equal(got, []string{"fresh"}) {
		t.Errorf("LAS runs %v, want fresh", got)
	}
	g := &tiresias.Gittins{Queues: tiresias.Queues{Thresholds: []float64{1e9}}, Samples: []float64{1000, 1000, 1000}, Quantum: 500}
	if got := runningIDs(decide(t, g, c, 10, jobs...)); !slices.Equal(got, []string{"half"}) {
		t.Errorf("Gittins runs %v, want half", got)
	}
	// Queues still come first: in Q1 the job with the better index waits.
	g = &tiresias.Gittins{Queues: tiresias.Queues{Thresholds: []float64{500}}, Samples: []float64{1000, 1000, 1000}, Quantum: 500}
	if got := runningIDs(decide(t, g, c, 10, jobs...)); !slices.Equal(got, []string{"fresh"}) {
		t.Errorf("Gittins with a threshold at 500 runs %v, want fresh", got)
	}
}

// readSamples reads a Tiresias GPU-time distribution, one number per line
// after a header; it skips the test when the data is absent.
func readSamples(t testing.TB, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s absent", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		field := strings.TrimSpace(strings.Split(sc.Text(), ",")[0])
		if v, err := strconv.ParseFloat(field, 64); err == nil {
			out = append(out, v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

const gput1000 = "../../../shared/data/tiresias/yarn-gput1000.csv"

// Check 7 with the paper's data: the index from yarn-gput1000.csv with
// Δ = 3250 is 2.972e-4, 1.222e-4 and 4.99e-5 at 0, 3250 and 7200 GPU-s
// (within 0.5 %), falling, so Tiresias-G runs the least-served job of a
// queue first, as LAS would, on this heavy-tailed distribution.
func TestGittinsData(t *testing.T) {
	samples := readSamples(t, gput1000)
	svc, err := bayes.NewService(samples)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ a, want float64 }{{0, 2.972e-4}, {3250, 1.222e-4}, {7200, 4.99e-5}} {
		if got := svc.Gittins(c.a, tiresias.DefaultQuantum); math.Abs(got-c.want) > 0.005*c.want {
			t.Errorf("G(%v) = %.5g, want %.4g", c.a, got, c.want)
		}
	}
	g := &tiresias.Gittins{Queues: tiresias.Queues{Thresholds: []float64{1e9}}, Samples: samples}
	d := decide(t, g, servers(1, 1), 10, job("a", 1, 0, 7200), job("b", 1, 1, 3250), job("c", 1, 2, 0))
	if got := runningIDs(d); !slices.Equal(got, []string{"c"}) {
		t.Errorf("runs %v, want c (least service)", got)
	}
}

// Check 8: with skew threshold 0.5 an 8-GPU VGG19 job runs only on two
// whole 4-GPU servers and waits otherwise; an 8-GPU ResNet-50 job is spread.
func TestSkewPlacement(t *testing.T) {
	c := servers(3, 4)
	busy := []policy.Job{job("s1", 1, 0, 10, on("a", 1)), job("s2", 1, 0, 10, on("b", 1))}
	vgg := job("vgg19", 8, 5, 0)
	vgg.Skew = 0.717
	resnet := job("resnet50", 8, 5, 0)
	resnet.Skew = 0.112
	d := decide(t, &tiresias.LAS{}, c, 10, append(slices.Clone(busy), vgg)...)
	if _, ok := d.Placement["vgg19"]; ok {
		t.Errorf("VGG19 placed on %v with only one whole server free", d.Placement["vgg19"])
	}
	d = decide(t, &tiresias.LAS{}, c, 10, append(slices.Clone(busy), resnet)...)
	if got := d.Placement["resnet50"]; len(got) != 3 {
		t.Errorf("ResNet-50 placed on %v, want spread over 3 servers", got)
	}
	// With the two servers whole, VGG19 runs on exactly two.
	d = decide(t, &tiresias.LAS{}, c, 10, job("s1", 1, 0, 10, on("a", 1)), vgg)
	if got := d.Placement["vgg19"]; len(got) != 2 || got[0].GPUs != 4 || got[1].GPUs != 4 {
		t.Errorf("VGG19 placed on %v, want two whole servers", got)
	}
	// A threshold of 1 consolidates nothing.
	one := 1.0
	d = decide(t, &tiresias.LAS{Queues: tiresias.Queues{SkewThreshold: &one}}, c, 10, append(slices.Clone(busy), vgg)...)
	if len(d.Placement["vgg19"]) != 3 {
		t.Errorf("threshold 1: VGG19 placed on %v, want spread", d.Placement["vgg19"])
	}
}

// Properties over random decision sequences: capacity, grants equal to the
// placed GPUs, and the same decision and state from a JSON round trip of the
// state before it.
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		c := servers(1+rng.IntN(4), 1<<rng.IntN(4))
		p := &tiresias.LAS{Queues: tiresias.Queues{PromoteKnob: float64(rng.IntN(3))}}
		if trial%2 == 1 {
			p.Thresholds = []float64{100, 400}
		}
		var jobs []policy.Job
		now := 0.0
		for step := range 8 {
			now += 10 + 100*rng.Float64()
			if rng.IntN(2) == 0 || len(jobs) == 0 {
				j := job("j"+strconv.Itoa(step), min(1<<rng.IntN(3), c.TotalGPUs()), now, 0)
				j.Skew = rng.Float64()
				jobs = append(jobs, j)
			}
			snap := &policy.Snapshot{Now: secs(now), Cluster: c, Jobs: jobs}
			before, _ := json.Marshal(p)
			d, err := p.Allocate(context.Background(), snap)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Allocation.Validate(c); err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			used := map[string]int{}
			for id, as := range d.Placement {
				n := 0
				for _, a := range as {
					used[a.Server] += a.GPUs
					n += a.GPUs
				}
				if n != d.Allocation[id].GPUs {
					t.Fatalf("trial %d: %s placed on %d GPUs, granted %d", trial, id, n, d.Allocation[id].GPUs)
				}
			}
			for _, srv := range c.Servers {
				if used[srv.ID] > srv.GPUs {
					t.Fatalf("trial %d: server %s over capacity", trial, srv.ID)
				}
			}
			// Same snapshot and state, same decision and state.
			var q tiresias.LAS
			if err := json.Unmarshal(before, &q); err != nil {
				t.Fatal(err)
			}
			d2, err := q.Allocate(context.Background(), snap)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(d, d2); diff != "" {
				t.Fatalf("trial %d: decision differs after a JSON round trip of the state:\n%s", trial, diff)
			}
			if diff := cmp.Diff(p.State, q.State); diff != "" {
				t.Fatalf("trial %d: state differs:\n%s", trial, diff)
			}
			// Advance: running jobs gain service.
			for i := range jobs {
				jobs[i].Placement = d.Placement[jobs[i].ID]
				if len(jobs[i].Placement) > 0 {
					jobs[i].AttainedGPUSeconds += float64(jobs[i].GPUs) * 50
				}
			}
		}
	}
}

func TestInvalid(t *testing.T) {
	c := servers(1, 4)
	ctx := context.Background()
	for name, p := range map[string]policy.Policy{
		"thresholds not ascending": &tiresias.LAS{Queues: tiresias.Queues{Thresholds: []float64{10, 5}}},
		"negative knob":            &tiresias.LAS{Queues: tiresias.Queues{PromoteKnob: -1}},
		"skew above 1":             &tiresias.LAS{Queues: tiresias.Queues{SkewThreshold: new(1.5)}},
		"NaN sample":               &tiresias.Gittins{Samples: []float64{math.NaN()}},
	} {
		_, err := p.Allocate(ctx, &policy.Snapshot{Cluster: c})
		if !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("%s: error %v, want ErrInvalidConfig", name, err)
		}
	}
	elastic := job("e", 0, 0, 0)
	elastic.Elastic = &policy.Elastic{BatchSize: 32}
	s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{elastic, job("a", 1, 0, 0)}}
	d, err := (&tiresias.LAS{}).Allocate(ctx, s)
	if err != nil || len(d.Unscheduled) != 1 || !strings.HasPrefix(d.Unscheduled["e"], "gpus") || len(d.Placement["a"]) != 1 {
		t.Errorf("elastic job: %+v, %v; want e left out for gpus, a running", d, err)
	}
	_, err = policy.Strict(&tiresias.LAS{}).Allocate(ctx, s)
	if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), `job "e": gpus`) {
		t.Errorf("Strict, elastic job: %v", err)
	}
	p := &tiresias.LAS{}
	decide(t, p, c, 100, job("a", 1, 0, 0))
	if _, err := p.Allocate(ctx, &policy.Snapshot{Now: secs(50), Cluster: c, Jobs: []policy.Job{job("a", 1, 0, 0)}}); !errors.Is(err, policy.ErrInvalidSnapshot) {
		t.Errorf("time going back: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (&tiresias.LAS{}).Allocate(cancelled, &policy.Snapshot{Cluster: c}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	p, err := policy.New("tiresias.las", []byte(`{"thresholds": [3600], "promote_knob": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if l := p.(*tiresias.LAS); !slices.Equal(l.Thresholds, []float64{3600}) || l.PromoteKnob != 2 {
		t.Errorf("decoded %+v", l.Queues)
	}
	if _, err := policy.New("tiresias.gittins", []byte(`{"samples": [1, 2, 3], "quantum": 10}`)); err != nil {
		t.Error(err)
	}
	if _, err := policy.New("tiresias.gittins", nil); err != nil {
		t.Errorf("gittins without samples (the default prior): %v", err)
	}
	if _, err := policy.New("tiresias.gittins", []byte(`{"samples": [1, -2]}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("gittins with a negative sample: %v", err)
	}
	if _, err := policy.New("tiresias.las", []byte(`{"threshold": [1]}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("misspelt field: %v", err)
	}
}
