// Embed is a complete scheduler loop over a fake cluster, the shape a
// scheduler author copies: a policy.Runner recomputes the decision of
// Gavel's max-min fairness (composed with its round mechanism, as
// policy.New returns it) in the background, when jobs arrive or finish and
// at every round the decision asks to be woken for; the loop reads the
// latest decision, carries out its changes (policy.Changes: stop, migrate,
// resize, start, keep), "runs" the round (here: advances each job by its
// throughput on the type it was placed on), and moves the clock on by a
// round. Any registered policy drops into the same loop.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
)

// round is the length of a round: the decision's Wake in this simulated
// clock.
const round = 6 * time.Minute

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
		{ID: "a3c", GPUs: 2, GPUsPerWorker: 2, StepsTotal: 15000, Throughput: map[allocation.Accelerator]float64{"v100": 3, "k80": 2.5}},
	}
	p, err := policy.New("gavel.las", nil)
	if err != nil {
		return err
	}

	decided := make(chan struct{}, 1)
	r := &policy.Runner{
		Policy:      p,
		Snapshot:    c.snapshot,
		MinInterval: -1, // simulated time: recompute as soon as asked
		OnDecision:  func(*policy.Decision) { decided <- struct{}{} },
		OnError:     func(err error) { log.Print(err) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	<-decided // the first decision, for an empty cluster

	for n := 0; len(arrivals) > 0 || len(c.jobs) > 0; n++ {
		// A job arrives every other round. A real scheduler would not
		// wait for the new decision; here the loop asks for one every
		// round (as its Wake would) and waits, so the output is the same
		// on every run.
		if n%2 == 0 && len(arrivals) > 0 {
			c.mu.Lock()
			j := arrivals[0]
			j.Arrival = c.now
			c.jobs[j.ID] = &j
			c.mu.Unlock()
			arrivals = arrivals[1:]
		}
		r.Trigger()
		<-decided
		c.mu.Lock()
		c.bind(w, r.Decision())
		c.mu.Unlock()
	}
	return nil
}

// bind carries out a decision and runs the round: stopped jobs are
// checkpointed and evicted, the others start, move or stay, and every job
// that runs makes a round's progress on its GPUs' type.
func (c *cluster) bind(w io.Writer, d *policy.Decision) {
	s := &policy.Snapshot{Now: c.now, Cluster: c.spec}
	for _, j := range c.jobs {
		s.Jobs = append(s.Jobs, *j)
	}
	for _, ch := range policy.Changes(s, d) {
		if j := c.jobs[ch.Job]; j != nil {
			j.Placement = ch.To // nil for a stop
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.jobs)) {
		j := c.jobs[id]
		if len(j.Placement) == 0 {
			continue
		}
		srv, _ := c.spec.Server(j.Placement[0].Server)
		j.StepsDone = min(j.StepsTotal, j.StepsDone+j.Throughput[srv.Accelerator]*round.Seconds())
		j.AttainedGPUSeconds += float64(j.GPUs) * round.Seconds()
		if j.StepsDone >= j.StepsTotal {
			fmt.Fprintf(w, "%6.2f h  %-11s finished\n", (c.now + round).Hours(), id)
			delete(c.jobs, id)
		}
	}
	c.now += round
}
