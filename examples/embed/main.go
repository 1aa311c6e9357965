// Embed is a complete scheduler loop over a fake cluster, the shape a
// scheduler author copies: a policy.Runner recomputes Gavel's max-min
// fairness in the background whenever jobs arrive or finish, and every round
// the loop reads the latest decision, asks the round mechanism for the next
// placement, "binds" it (here: advances each job by its throughput), and
// moves the clock on by one round.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gavel"
)

// cluster is the fake cluster's state, shared by the loop and the Runner.
type cluster struct {
	mu   sync.Mutex
	now  time.Duration
	spec allocation.Cluster
	jobs map[string]*policy.Job
}

// snapshot is the Runner's view of the cluster.
func (c *cluster) snapshot(context.Context) (*policy.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &policy.Snapshot{Now: c.now, Cluster: c.spec}
	for _, j := range c.jobs {
		s.Jobs = append(s.Jobs, *j)
	}
	sort.Slice(s.Jobs, func(a, b int) bool { return s.Jobs[a].ID < s.Jobs[b].ID })
	return s, nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run simulates the cluster until every job finishes, printing when each
// does.
func run(w io.Writer) error {
	c := &cluster{
		spec: allocation.Cluster{Servers: []allocation.Server{
			{ID: "v100-0", Accelerator: "v100", GPUs: 4},
			{ID: "k80-0", Accelerator: "k80", GPUs: 4},
			{ID: "k80-1", Accelerator: "k80", GPUs: 4},
		}},
		jobs: map[string]*policy.Job{},
	}
	arrivals := []policy.Job{
		{ID: "resnet", GPUs: 1, StepsTotal: 20000, Throughput: map[allocation.Accelerator]float64{"v100": 10, "k80": 2}},
		{ID: "lstm", GPUs: 1, StepsTotal: 30000, Throughput: map[allocation.Accelerator]float64{"v100": 6, "k80": 4}},
		{ID: "transformer", GPUs: 4, StepsTotal: 40000, Throughput: map[allocation.Accelerator]float64{"v100": 20, "k80": 5}},
		{ID: "a3c", GPUs: 2, StepsTotal: 15000, Throughput: map[allocation.Accelerator]float64{"v100": 3, "k80": 2.5}},
	}

	decided := make(chan struct{}, 1)
	r := &policy.Runner{
		Policy:      &gavel.MaxMinFairness{},
		Snapshot:    c.snapshot,
		MinInterval: -1, // simulated time: recompute as soon as asked
		OnDecision:  func(*policy.Decision) { decided <- struct{}{} },
		OnError:     func(err error) { log.Print(err) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	<-decided // the first decision, for an empty cluster

	var (
		mech   placement.Mechanism // 360 s rounds
		ledger placement.Ledger
	)
	for round := 0; len(arrivals) > 0 || len(c.jobs) > 0; round++ {
		// A job arrives every other round; tell the Runner and wait for
		// its new decision (a real scheduler would not wait).
		if round%2 == 0 && len(arrivals) > 0 {
			c.mu.Lock()
			j := arrivals[0]
			j.Arrival = c.now
			c.jobs[j.ID] = &j
			c.mu.Unlock()
			arrivals = arrivals[1:]
			r.Trigger()
			<-decided
		}
		d := r.Decision()
		next, l, err := mech.Next(ledger, c.spec, d.Allocation)
		if err != nil {
			return err
		}
		ledger = l

		// Bind: each job that runs makes a round's progress on its type.
		c.mu.Lock()
		finished := false
		for _, run := range next.Runs {
			for _, id := range []string{run.Job, run.Partner} {
				if j := c.jobs[id]; j != nil {
					j.StepsDone = min(j.StepsTotal, j.StepsDone+j.Throughput[run.Accelerator]*next.Length.Seconds())
					j.AttainedGPUSeconds += float64(j.GPUs) * next.Length.Seconds()
					if j.StepsDone >= j.StepsTotal {
						fmt.Fprintf(w, "%6.2f h  %-11s finished\n", (c.now + next.Length).Hours(), id)
						delete(c.jobs, id)
						finished = true
					}
				}
			}
		}
		c.now += next.Length
		c.mu.Unlock()
		if finished {
			r.Trigger()
			<-decided
		}
	}
	return nil
}
