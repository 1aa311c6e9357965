// Command elastic shows how a scheduler feeds Pollux what its elastic
// training jobs measure, and reads back each job's GPUs, servers and batch
// size.
//
// Each job reports two things. Its step times on the placements it has run
// on are fitted into a throughput model (throughput.Fit). Its squared
// gradient norms, per replica and averaged, go into a gradient-noise
// estimator (efficiency.Estimator). Both land in the job's policy.Elastic
// facts, and policy "pollux" picks GPUs and batch sizes that maximize a
// fair mean of the jobs' goodput speedups. The policy keeps its search
// population in its State between rounds; a scheduler that restarts should
// persist it.
//
// The measurements here are synthetic, drawn from a known model, so that
// the program is self-contained and its output reproducible.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
	"github.com/dlsched/dlsched/throughput"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "elastic:", err)
		os.Exit(1)
	}
}

// model is the hidden truth a job's measurements come from.
type model struct {
	id    string
	perf  throughput.Params
	noise float64 // tr Σ / |G|², the gradient noise in examples
}

func run(out io.Writer) error {
	rng := rand.New(rand.NewPCG(1, 2))
	models := []model{
		{"bert", throughput.Params{AlphaC: 0.12, BetaC: 0.006, AlphaN: 0.05, BetaN: 0.01, AlphaR: 0.012, BetaR: 0.003, Gamma: 1.2}, 4000},
		{"resnet", throughput.Params{AlphaC: 0.05, BetaC: 0.002, AlphaN: 0.2, BetaN: 0.05, AlphaR: 0.04, BetaR: 0.01, Gamma: 1.5}, 600},
		{"gnmt", throughput.Params{AlphaC: 0.08, BetaC: 0.004, AlphaN: 0.1, BetaN: 0.02, AlphaR: 0.02, BetaR: 0.005, Gamma: 1.1}, 100},
	}
	var cluster allocation.Cluster
	for i := range 4 {
		cluster.Servers = append(cluster.Servers, allocation.Server{ID: fmt.Sprintf("node-%d", i), Accelerator: "a100", GPUs: 4})
	}
	snap := &policy.Snapshot{Now: 2 * time.Hour, Cluster: cluster}
	for _, m := range models {
		// 1. Step times on the placements the job has run on so far: one
		// and two nodes, at a few per-GPU batch sizes, with 2 % noise.
		var samples []throughput.Sample
		for _, place := range [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 8}} {
			for _, local := range []float64{32, 64, 128} {
				jitter := func() float64 { return 1 + 0.02*(rng.Float64()-0.5) }
				samples = append(samples, throughput.Sample{
					Nodes: place[0], Replicas: place[1], LocalBatch: local,
					AccumTime: m.perf.AccumTime(local) * jitter(),
					OptimTime: m.perf.OptimTime(place[0], place[1], local) * jitter(),
				})
			}
		}
		perf, err := throughput.Fit(samples)
		if err != nil {
			return fmt.Errorf("job %s: %w", m.id, err)
		}
		// 2. Gradient statistics: each step, the mean squared norm of the
		// 4 replicas' gradients and the squared norm of their average, at
		// the initial batch of 128 (scale 1). With |G|² = 1 and noise
		// tr Σ = φ per example, a micro-batch of 32 has E‖g‖² = 1 + φ/32.
		var est efficiency.Estimator
		for range 500 {
			local := (1 + m.noise/32) * (1 + 0.1*rng.NormFloat64())
			total := (1 + m.noise/128) * (1 + 0.1*rng.NormFloat64())
			est.Observe(local, total, 4, 1)
		}
		g := est.Grad()
		snap.Jobs = append(snap.Jobs, policy.Job{
			ID:      m.id,
			Arrival: time.Hour,
			Elastic: &policy.Elastic{
				BatchSize: 128, MaxBatchSize: 4096,
				LocalBatchMin: 16, LocalBatchMax: 256,
				Perf:    perf,
				GradSqr: g.Sqr, GradVar: g.Var,
				// The largest GPU count measured: Pollux offers at most
				// twice that.
				ProfiledGPUs: 8,
			},
		})
		fmt.Fprintf(out, "%-6s fitted α_c %.3f β_c %.4f γ %.2f; noise scale %5.0f examples\n",
			m.id, perf.AlphaC, perf.BetaC, perf.Gamma, g.Noise(128))
	}

	p := &pollux.Pollux{Seed: 1}
	d, err := p.Allocate(context.Background(), snap)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pollux: p-mean speedup %.2f; ask again at %v\n", d.Objective, d.Wake)
	for _, id := range slices.Sorted(maps.Keys(d.Allocation)) {
		g := d.Allocation[id]
		fmt.Fprintf(out, "%-6s %2d GPUs, batch %4d on", id, g.GPUs, g.BatchSize)
		for _, a := range d.Placement[id] {
			fmt.Fprintf(out, " %s×%d", a.Server, a.GPUs)
		}
		fmt.Fprintln(out)
	}
	return nil
}
