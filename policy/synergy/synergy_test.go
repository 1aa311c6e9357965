package synergy_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/synergy"
	"github.com/dlsched/dlsched/throughput"
)

// The sensitivity grid of Synergy's profiles: cores and GB per GPU.
var (
	gridCPUs   = []float64{1, 2, 3, 4, 5, 6, 9, 12, 24}
	gridMemory = []float64{20.83, 62.5, 125, 187.5, 250}
)

// profile builds a grid from one value per CPU row for memory ≥ 62.5 GB and
// low for the 20.83-GB column.
func profile(low float64, rows ...float64) *throughput.Sensitivity {
	s := &throughput.Sensitivity{CPUs: gridCPUs, MemoryGB: gridMemory}
	for _, v := range rows {
		s.Speedup = append(s.Speedup, []float64{low, v, v, v, v})
	}
	return s
}

// res18 and gnmt are Synergy's profiles of ResNet-18 (0.64 s per iteration
// at the proportional share) and GNMT (0.12 s, insensitive).
func res18() *throughput.Sensitivity {
	return profile(0.1, 0.37, 0.72, 1, 1.3, 1.53, 1.75, 2.4, 2.4, 2.4)
}

func gnmt() *throughput.Sensitivity { return profile(1, 1, 1, 1, 1, 1, 1, 1, 1, 1) }

// alexnet needs 125 GB per GPU to reach its best.
func alexnet() *throughput.Sensitivity {
	s := profile(0.1, 0.3, 0.66, 1, 1.25, 1.53, 1.75, 2, 2.94, 2.94)
	for i := 7; i < 9; i++ {
		s.Speedup[i][1] = 2
	}
	return s
}

// server is Synergy's default server: 8 GPUs, 24 cores, 500 GB.
func server(id string) allocation.Server {
	return allocation.Server{ID: id, Accelerator: "v100", GPUs: 8, CPUs: 24, MemoryGB: 500}
}

func cluster(n int) allocation.Cluster {
	var c allocation.Cluster
	for i := range n {
		c.Servers = append(c.Servers, server(fmt.Sprintf("s%02d", i)))
	}
	return c
}

// newJob returns a job arriving at the given second.
func newJob(id string, gpus int, arrival float64, s *throughput.Sensitivity) policy.Job {
	return policy.Job{
		ID: id, GPUs: gpus, Arrival: time.Duration(arrival * float64(time.Second)),
		Throughput: map[allocation.Accelerator]float64{"v100": 1}, StepsTotal: 1000, Sensitivity: s,
	}
}

func allocate(t *testing.T, name string, config string, s *policy.Snapshot) *policy.Decision {
	t.Helper()
	var cfg []byte
	if config != "" {
		cfg = []byte(config)
	}
	p, err := policy.New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

var allocators = []string{"synergy.proportional", "synergy.greedy", "synergy.tune", "synergy.opt"}

// total returns the relative throughput of the decision's jobs, read from
// their profiles at the CPU and memory granted.
func total(s *policy.Snapshot, d *policy.Decision) float64 {
	var sum float64
	for _, j := range s.Jobs {
		g, ok := d.Allocation[j.ID]
		if !ok {
			continue
		}
		n := float64(g.GPUs)
		sum += j.Sensitivity.At(g.CPUs/n, g.MemoryGB/n)
	}
	return sum
}

func TestProportionalVector(t *testing.T) {
	s := &policy.Snapshot{Cluster: cluster(1), Jobs: []policy.Job{newJob("a", 4, 0, res18())}}
	d := allocate(t, "synergy.proportional", "", s)
	g := d.Allocation["a"]
	if g.GPUs != 4 || g.CPUs != 12 || g.MemoryGB != 250 {
		t.Errorf("4-GPU job: got (%d, %v, %v GB), want (4, 12, 250 GB)", g.GPUs, g.CPUs, g.MemoryGB)
	}
}

// TestEightResNet18 is the spec's check 4: eight ResNet-18 jobs on one
// server.
func TestEightResNet18(t *testing.T) {
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1)}
	for i := range 8 {
		s.Jobs = append(s.Jobs, newJob(fmt.Sprint(i+1), 1, float64(i), res18()))
	}
	want := map[string]float64{"synergy.proportional": 8, "synergy.greedy": 4.8, "synergy.tune": 8, "synergy.opt": 8}
	for _, name := range allocators {
		d := allocate(t, name, "", s)
		if got := total(s, d); math.Abs(got-want[name]) > 1e-6 {
			t.Errorf("%s: total throughput %.4f, want %.4f", name, got, want[name])
		}
		if math.Abs(d.Objective-want[name]) > 1e-6 {
			t.Errorf("%s: objective %.4f, want %.4f", name, d.Objective, want[name])
		}
	}
	d := allocate(t, "synergy.greedy", "", s)
	if len(d.Allocation) != 2 || d.Allocation["1"].CPUs != 9 || d.Allocation["2"].CPUs != 9 {
		t.Errorf("greedy: %v, want jobs 1 and 2 at 9 cores", d.Allocation)
	}
	d = allocate(t, "synergy.tune", "", s)
	for id, g := range d.Allocation {
		if g.CPUs != 3 || g.MemoryGB != 62.5 {
			t.Errorf("tune: job %s at (%v, %v), want (3, 62.5)", id, g.CPUs, g.MemoryGB)
		}
	}
	if len(d.Allocation) != 8 {
		t.Errorf("tune runs %d jobs, want 8", len(d.Allocation))
	}
}

// TestResNetThenGNMT is the spec's check 5.
func TestResNetThenGNMT(t *testing.T) {
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1)}
	for i := range 4 {
		s.Jobs = append(s.Jobs, newJob(fmt.Sprintf("r%d", i+1), 1, float64(i), res18()))
	}
	for i := range 4 {
		s.Jobs = append(s.Jobs, newJob(fmt.Sprintf("g%d", i+1), 1, float64(4+i), gnmt()))
	}
	want := map[string]float64{"synergy.proportional": 8, "synergy.greedy": 8.8, "synergy.tune": 9.4, "synergy.opt": 10.12}
	for _, name := range allocators {
		d := allocate(t, name, "", s)
		if got := total(s, d); math.Abs(got-want[name]) > 1e-6 {
			t.Errorf("%s: total throughput %.4f, want %.4f: %v", name, got, want[name], d.Allocation)
		}
	}
	d := allocate(t, "synergy.tune", "", s)
	cpus := map[string]float64{"r1": 3, "r2": 9, "r3": 3, "r4": 3, "g1": 1, "g2": 1, "g3": 1, "g4": 1}
	for id, c := range cpus {
		if got := d.Allocation[id].CPUs; got != c {
			t.Errorf("tune: job %s has %v cores, want %v", id, got, c)
		}
	}
}

func TestErrors(t *testing.T) {
	c := cluster(1)
	c.Servers[0].CPUs = 0
	s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{newJob("a", 1, 0, res18())}}
	// A server without CPU cores: GPUs only, with a warning.
	for _, name := range allocators {
		d := allocate(t, name, "", s)
		if g := d.Allocation["a"]; g.GPUs != 1 || g.CPUs != 0 || g.MemoryGB != 0 || len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "cpus") {
			t.Errorf("%s: untracked CPUs: %+v; want a on 1 GPU, no CPU or memory, and a warning", name, d)
		}
	}
	if _, err := policy.New("synergy.tune", []byte(`{"order": "lifo"}`)); err == nil {
		t.Error("unknown order accepted")
	}
}
