package all_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/internal/cpu"
	"github.com/dlsched/dlsched/internal/lp"
	"github.com/dlsched/dlsched/policy"
)

// bigWorld is a cluster of servers of 8 GPUs over three types and n jobs
// of 1–8 GPUs, none running.
func bigWorld(n, servers int) *policy.Snapshot {
	r := rand.New(rand.NewPCG(5, 5))
	types := []allocation.Accelerator{"k80", "p100", "v100"}
	s := &policy.Snapshot{Now: time.Hour}
	for i := range servers {
		s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("s%05d", i), Accelerator: types[i%3], GPUs: 8, CPUs: 64, MemoryGB: 512})
	}
	for i := range n {
		j := policy.Job{ID: fmt.Sprintf("j%06d", i), GPUs: []int{1, 1, 2, 4, 8}[r.IntN(5)],
			Arrival: time.Duration(r.IntN(3600)) * time.Second, StepsTotal: float64(1000 + r.IntN(1e6)),
			AttainedGPUSeconds: float64(r.IntN(1e5)), Throughput: map[allocation.Accelerator]float64{}}
		for k, t := range types {
			j.Throughput[t] = float64(k+1) * (0.5 + r.Float64())
		}
		j.StepsDone = float64(r.IntN(int(j.StepsTotal)))
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// Every policy returns within 100 ms of its context's cancellation,
// cancelled at several points of a round on a large snapshot (a policy
// may also finish its decision in that time). The bound is 500 ms here (ten
// times that under the race detector), as CI shares its two cores, and a
// round passes if either its wall time or the process's CPU time after the
// cancellation stays within it: other processes stretch the first, not the
// second. The log shows what each took.
func TestEveryPolicyCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshots")
	}
	s := bigWorld(4000, 256)
	bound := 500 * time.Millisecond
	if raceEnabled {
		bound *= 10
	}
	for _, st := range settings() {
		for _, after := range []time.Duration{30 * time.Millisecond, 300 * time.Millisecond} {
			took, work, done, err := cancelAfter(st, s, after)
			if done {
				continue
			}
			t.Logf("%s: returned %v (%v of CPU time) after cancellation at %v (%v)", st.label, took, work, after, err)
			// A busy machine stretches the wall clock, not the work done
			// after the cancellation.
			if took > bound && work > bound {
				t.Errorf("%s: returned %v (%v of CPU time) after cancellation at %v", st.label, took, work, after)
			}
			// A documented refusal of the size may come first.
			refused := errors.Is(err, lp.ErrTooLarge) || errors.Is(err, policy.ErrInvalidSnapshot)
			if err != nil && !errors.Is(err, context.Canceled) && !refused {
				t.Errorf("%s: %v, want context.Canceled", st.label, err)
			}
		}
	}
}

// cancelAfter runs one round of the setting on s, cancelled after the
// given time, and returns how long after the cancellation it returned, the
// process's CPU time in between, and its error; done reports a round that
// ended before the cancellation.
func cancelAfter(st setting, s *policy.Snapshot, after time.Duration) (took, work time.Duration, done bool, err error) {
	p, err := policy.New(st.name, []byte(st.config))
	if err != nil {
		return 0, 0, false, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type instant struct{ wall, cpu time.Duration }
	origin := time.Now()
	now := func() instant { used, _ := cpu.Used(); return instant{time.Since(origin), used} }
	at := make(chan instant, 1)
	timer := time.AfterFunc(after, func() { at <- now(); cancel() })
	_, err = p.Allocate(ctx, s)
	end := now()
	if timer.Stop() {
		return 0, 0, true, err
	}
	c := <-at
	return end.wall - c.wall, end.cpu - c.cpu, false, err
}
