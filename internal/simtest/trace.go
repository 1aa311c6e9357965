package simtest

import (
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// Trace plays a cluster and its binder for tests of a scheduler seen from
// outside (the service, the command): each Snapshot holds the jobs that
// have arrived and not finished, placed as the last decision said, with the
// steps and GPU time that decision gave them.
type Trace struct {
	Cluster allocation.Cluster
	Now     time.Duration
	jobs    []policy.Job
	live    map[string]*policy.Job
}

// TraceRound is a Trace's round length.
const TraceRound = 360 * time.Second

// NewTrace returns n jobs of 1, 2 and 4 GPUs, one arriving each round, on
// 16 GPUs of two types in 4-GPU servers.
func NewTrace(n int) *Trace {
	t := &Trace{live: map[string]*policy.Job{}}
	for i, typ := range []allocation.Accelerator{"v100", "k80", "v100", "k80"} {
		t.Cluster.Servers = append(t.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("s%d", i), Accelerator: typ, GPUs: 4})
	}
	for i := range n {
		t.jobs = append(t.jobs, policy.Job{
			ID: fmt.Sprintf("j%02d", i), GPUs: []int{1, 2, 4}[i%3], Arrival: time.Duration(i) * TraceRound,
			Throughput: map[allocation.Accelerator]float64{"v100": 4 + float64(i%5), "k80": 1 + float64(i%3)},
			StepsTotal: float64(3000 + 900*(i%7)),
		})
	}
	return t
}

// Snapshot returns the round's snapshot.
func (t *Trace) Snapshot() *policy.Snapshot {
	for i := range t.jobs {
		j := &t.jobs[i]
		if _, ok := t.live[j.ID]; !ok && j.Arrival <= t.Now && j.StepsDone == 0 {
			t.live[j.ID] = j
		}
	}
	s := &policy.Snapshot{Now: t.Now, Cluster: t.Cluster}
	for i := range t.jobs {
		if j, ok := t.live[t.jobs[i].ID]; ok {
			s.Jobs = append(s.Jobs, *j)
		}
	}
	return s
}

// Advance runs one round of d's placement.
func (t *Trace) Advance(d *policy.Decision) {
	for id, j := range t.live {
		j.Placement = d.Placement[id]
		for _, a := range j.Placement {
			srv, _ := t.Cluster.Server(a.Server)
			j.StepsDone += j.Throughput[srv.Accelerator] * TraceRound.Seconds() * float64(a.GPUs) / float64(j.GPUs)
			j.AttainedGPUSeconds += float64(a.GPUs) * TraceRound.Seconds()
		}
		if j.StepsDone >= j.StepsTotal {
			delete(t.live, id)
		}
	}
	t.Now += TraceRound
}
