package pollux_test

import (
	"context"
	"testing"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
)

// BenchmarkPollux times one Allocate call with the paper's search size
// (population 100, 100 generations) and reports how many jobs got a GPU and
// the decision's objective, the p-mean of speedups, so that a faster search
// shows whether it still finds as good an allocation.
func BenchmarkPollux(b *testing.B) {
	served := func(b *testing.B, d *policy.Decision) {
		b.Helper()
		n := 0
		for _, g := range d.Allocation {
			if g.GPUs > 0 {
				n++
			}
		}
		b.ReportMetric(float64(n), "jobs-served")
		b.ReportMetric(d.Objective, "fitness")
	}
	for _, tc := range []struct {
		name        string
		nodes, jobs int
	}{{"64gpus-32jobs", 16, 32}, {"256gpus-128jobs", 64, 128}} {
		b.Run(tc.name, func(b *testing.B) {
			s := bigSnapshot(tc.nodes, tc.jobs)
			var d *policy.Decision
			for b.Loop() {
				p := &pollux.Pollux{} // cold start every call
				var err error
				if d, err = p.Allocate(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
			served(b, d)
		})
	}
	b.Run("64gpus-32jobs-warm", func(b *testing.B) {
		s := bigSnapshot(16, 32)
		p := &pollux.Pollux{}
		if _, err := p.Allocate(context.Background(), s); err != nil {
			b.Fatal(err)
		}
		var d *policy.Decision
		for b.Loop() {
			var err error
			if d, err = p.Allocate(context.Background(), s); err != nil {
				b.Fatal(err)
			}
		}
		served(b, d)
	})
}
