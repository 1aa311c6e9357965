package tiresias_test

import (
	"context"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/tiresias"
)

// Samples 10, 20, 30, 40 and Δ = 15, one GPU, job a (attained 10 GPU-s,
// arrived first) against b (attained 19.5). The simulator's formula at the
// attained service itself rates b higher (0.0308 against 0.02: b's quantum
// reaches two samples); the simulator's table looks both up at the sample
// 20, a tie that the earlier arrival, a, wins. The textbook index agrees
// with the formula here.
func TestGittinsSimulatorTable(t *testing.T) {
	snap := &policy.Snapshot{
		Now:     time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 1}}},
		Jobs: []policy.Job{
			{ID: "a", GPUs: 1, Arrival: 0, AttainedGPUSeconds: 10, Throughput: map[allocation.Accelerator]float64{"v100": 1}},
			{ID: "b", GPUs: 1, Arrival: time.Minute, AttainedGPUSeconds: 19.5, Throughput: map[allocation.Accelerator]float64{"v100": 1}},
		},
	}
	for _, c := range []struct {
		mode, want string
		config     tiresias.Gittins
	}{
		{"table", "a", tiresias.Gittins{Simulator: true}},
		{"formula at a", "b", tiresias.Gittins{Simulator: true, SimulatorAt: true}},
		{"textbook", "b", tiresias.Gittins{}},
	} {
		p := c.config
		p.Samples, p.Quantum, p.MaxSamples = []float64{10, 20, 30, 40}, 15, -1
		d, err := p.Allocate(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Placement) != 1 || d.Placement[c.want] == nil {
			t.Errorf("%s: placement %v, want %s alone", c.mode, d.Placement, c.want)
		}
	}
}
