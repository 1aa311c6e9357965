// Package simtest holds the scripted policy that the simulator's and the
// workload models' tests drive the engine with.
package simtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// Stub answers every call with Decide(snapshot) and records the value of
// what it was shown (not pointers into the engine's state).
type Stub struct {
	Decide func(s *policy.Snapshot) *policy.Decision
	Calls  []Call
}

// Call is what one Allocate call showed the stub.
type Call struct {
	Now      time.Duration
	Restarts map[string]int
	GradSqr  map[string]float64
	Place    map[string][]allocation.Assignment
}

// Name implements policy.Policy.
func (*Stub) Name() string { return "test.stub" }

// Allocate implements policy.Policy.
func (p *Stub) Allocate(_ context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	c := Call{Now: s.Now, Restarts: map[string]int{}, GradSqr: map[string]float64{}, Place: map[string][]allocation.Assignment{}}
	for _, j := range s.Jobs {
		if j.Elastic != nil {
			c.Restarts[j.ID] = j.Elastic.Restarts
			c.GradSqr[j.ID] = j.Elastic.GradSqr
		}
		c.Place[j.ID] = slices.Clone(j.Placement)
	}
	p.Calls = append(p.Calls, c)
	return p.Decide(s), nil
}

// PlaceAll returns a stub decision that grants every active job gpus GPUs
// on type typ, places it on where(now), and asks to be called every round.
func PlaceAll(gpus int, typ allocation.Accelerator, round time.Duration, where func(now time.Duration) []allocation.Assignment) func(*policy.Snapshot) *policy.Decision {
	return func(s *policy.Snapshot) *policy.Decision {
		d := &policy.Decision{Policy: "test.stub", Allocation: allocation.Allocation{}, Placement: map[string][]allocation.Assignment{}, Wake: s.Now + round}
		for _, j := range s.Jobs {
			d.Allocation[j.ID] = allocation.Grant{GPUs: gpus, Shares: map[allocation.Accelerator]float64{typ: 1}}
			d.Placement[j.ID] = where(s.Now)
		}
		return d
	}
}

// Cluster is Gavel's simulated cluster: n GPUs of each of V100, P100 and
// K80, on 4-GPU servers.
func Cluster(n int) allocation.Cluster {
	var c allocation.Cluster
	for _, t := range []allocation.Accelerator{"v100", "p100", "k80"} {
		for i := 0; i*4 < n; i++ {
			c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("%s-%02d", t, i), Accelerator: t, GPUs: min(4, n-4*i)})
		}
	}
	return c
}
