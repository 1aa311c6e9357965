package tiresias_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/tiresias"
)

// benchSnapshot is 10,000 active jobs of 1 to 8 GPUs on 2048 GPUs (256
// servers of 8), the ones running placed by a first decision, which also
// fills the policy's state.
func benchSnapshot(b *testing.B, p policy.Policy) *policy.Snapshot {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &policy.Snapshot{Now: 100 * time.Hour, Cluster: servers(256, 8)}
	for i := range 10000 {
		j := job(fmt.Sprintf("job-%05d", i), 1<<rng.IntN(4), rng.Float64()*3.6e5, rng.ExpFloat64()*5000)
		j.Skew = rng.Float64()
		s.Jobs = append(s.Jobs, j)
	}
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		b.Fatal(err)
	}
	for i := range s.Jobs {
		s.Jobs[i].Placement = d.Placement[s.Jobs[i].ID]
	}
	s.Now += time.Minute
	return s
}

// One decision at 10,000 active jobs on 2048 GPUs, with the state of the
// decision before it.
func BenchmarkLAS(b *testing.B) {
	p := &tiresias.LAS{Queues: tiresias.Queues{PromoteKnob: 2}}
	s := benchSnapshot(b, p)
	for b.Loop() {
		if _, err := p.Allocate(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGittins(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	samples := make([]float64, 10000)
	for i := range samples {
		samples[i] = rng.ExpFloat64() * 8000
	}
	p := &tiresias.Gittins{Samples: samples}
	s := benchSnapshot(b, p)
	for b.Loop() {
		if _, err := p.Allocate(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
}
