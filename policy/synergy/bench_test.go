package synergy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/synergy"
	"github.com/dlsched/dlsched/throughput"
)

// benchSnapshot returns a round at Synergy's large scale: servers of 8
// GPUs, 24 cores and 500 GB, and runnable jobs of Synergy's synthetic GPU
// mix (1 GPU 70 %, 2 10 %, 4 15 %, 8 5 %) and mixed profiles.
func benchSnapshot(servers, jobs int) *policy.Snapshot {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &policy.Snapshot{Cluster: cluster(servers)}
	profiles := []func() *throughput.Sensitivity{res18, gnmt, alexnet, gnmt, gnmt}
	for i := range jobs {
		g := 1
		switch x := rng.Float64(); {
		case x > 0.95:
			g = 8
		case x > 0.80:
			g = 4
		case x > 0.70:
			g = 2
		}
		j := newJob(fmt.Sprintf("j%05d", i), g, float64(i), profiles[rng.IntN(len(profiles))]())
		j.StepsTotal = float64(1000 + rng.IntN(100000))
		j.StepsDone = float64(rng.IntN(int(j.StepsTotal)))
		j.AttainedGPUSeconds = float64(rng.IntN(20) * 300 * g)
		s.Jobs = append(s.Jobs, j)
	}
	s.Now = time.Duration(jobs)*time.Second + time.Hour
	return s
}

func benchAllocate(b *testing.B, p interface {
	Allocate(context.Context, *policy.Snapshot) (*policy.Decision, error)
}, s *policy.Snapshot) {
	b.Helper()
	ctx := context.Background()
	var d *policy.Decision
	for b.Loop() {
		var err error
		if d, err = p.Allocate(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(d.Allocation)), "jobs_run")
	b.ReportMetric(d.Objective, "objective")
}

// BenchmarkTune is one Tune round at 512 GPUs (64 servers) and 1000
// runnable jobs, FIFO; the target is at most 20 ms.
func BenchmarkTune(b *testing.B) {
	benchAllocate(b, &synergy.Tune{}, benchSnapshot(64, 1000))
}

func BenchmarkProportional(b *testing.B) {
	benchAllocate(b, &synergy.Proportional{}, benchSnapshot(64, 1000))
}

func BenchmarkGreedy(b *testing.B) {
	benchAllocate(b, &synergy.Greedy{}, benchSnapshot(64, 1000))
}

// BenchmarkOpt is Opt with CLP at 128 GPUs (16 servers) and 200 jobs; the
// target is at most 2 s.
func BenchmarkOpt(b *testing.B) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		b.Skip("CLP is not compiled in")
	}
	benchAllocate(b, &synergy.Opt{Solver: allocation.CLP}, benchSnapshot(16, 200))
}
