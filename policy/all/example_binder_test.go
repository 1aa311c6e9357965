package all_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
)

// binder is what a scheduler that binds decisions keeps: where each job's
// workers run now, and the service they received.
type binder struct {
	running  map[string][]allocation.Assignment
	attained map[string]float64
}

// snapshot describes the cluster and the jobs as they are now.
func (b *binder) snapshot(now time.Duration) *policy.Snapshot {
	s := &policy.Snapshot{Now: now, Cluster: allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4},
		{ID: "s2", Accelerator: "v100", GPUs: 4},
	}}}
	for _, j := range []struct {
		id      string
		gpus, w int
	}{{"a", 4, 2}, {"b", 4, 4}, {"c", 2, 1}, {"d", 2, 2}} {
		s.Jobs = append(s.Jobs, policy.Job{
			ID: j.id, GPUs: j.gpus, GPUsPerWorker: j.w,
			Throughput:         map[allocation.Accelerator]float64{"v100": 1},
			Placement:          b.running[j.id],
			AttainedGPUSeconds: b.attained[j.id],
		})
	}
	return s
}

// bind carries out one decision: stops first (checkpoint, then evict),
// then moves and starts.
func (b *binder) bind(s *policy.Snapshot, d *policy.Decision) {
	for _, c := range policy.Changes(s, d) {
		switch c.Kind {
		case policy.Stop:
			delete(b.running, c.Job)
		case policy.Migrate, policy.Resize, policy.Start:
			b.running[c.Job] = c.To
		}
		switch c.Kind {
		case policy.Keep:
		case policy.Stop:
			fmt.Printf("  stop %s\n", c.Job)
		default:
			fmt.Printf("  %s %s on%s\n", c.Kind, c.Job, servers(c.To))
		}
	}
}

func servers(as []allocation.Assignment) string {
	out := ""
	for _, a := range as {
		out += fmt.Sprintf(" %s:%d", a.Server, a.GPUs)
	}
	return out
}

// The same binder loop drives any registered policy: snapshot, Allocate,
// Changes, then stop, migrate, resize and start workers. Here one of
// Gavel's LP policies and Tiresias' queues schedule four jobs of 2- and
// 4-GPU workers on two 4-GPU servers, for three 10-minute rounds; Tiresias
// demotes the first two jobs after 3250 GPU-seconds.
func Example_binder() {
	for _, name := range []string{"gavel.las", "tiresias.las"} {
		p, err := policy.New(name, nil)
		if err != nil {
			panic(err)
		}
		b := &binder{running: map[string][]allocation.Assignment{}, attained: map[string]float64{}}
		fmt.Println(name)
		for round := range 3 {
			now := time.Duration(round) * 10 * time.Minute
			s := b.snapshot(now)
			d, err := p.Allocate(context.Background(), s)
			if err != nil {
				panic(err)
			}
			fmt.Printf(" round %d\n", round)
			b.bind(s, d)
			for id, as := range b.running {
				for _, a := range as {
					b.attained[id] += float64(a.GPUs) * 600
				}
			}
		}
	}
	// Output:
	// gavel.las
	//  round 0
	//   start a on s1:4
	//   start c on s2:2
	//   start d on s2:2
	//  round 1
	//   stop a
	//   start b on s1:4
	//  round 2
	//   stop b
	//   start a on s1:4
	// tiresias.las
	//  round 0
	//   start a on s1:4
	//   start b on s2:4
	//  round 1
	//  round 2
	//   stop b
	//   start c on s2:2
	//   start d on s2:2
}
