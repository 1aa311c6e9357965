package policy_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// equalShare is a toy policy for the example: every job gets the same share
// of time on the V100s, as much as fits.
type equalShare struct{}

func (equalShare) Name() string { return "example.equal" }

func (equalShare) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := policy.Validate(s); err != nil {
		return nil, err
	}
	demand := 0
	for _, j := range s.Jobs {
		demand += j.GPUs
	}
	d := &policy.Decision{Policy: "example.equal", Allocation: allocation.Allocation{}}
	for _, j := range s.Jobs {
		share := min(1, float64(s.Cluster.GPUs("v100"))/float64(demand))
		d.Allocation[j.ID] = allocation.Grant{GPUs: j.GPUs, Shares: map[allocation.Accelerator]float64{"v100": share}}
	}
	return d, nil
}

// A scheduler runs the policy in the background and reads shares on its hot
// path; when a job arrives it calls Trigger.
func ExampleRunner() {
	var (
		mu   sync.Mutex // guards jobs, the scheduler's own state
		jobs = []string{"A", "B"}
	)
	snapshot := func(ctx context.Context) (*policy.Snapshot, error) {
		mu.Lock()
		defer mu.Unlock()
		s := &policy.Snapshot{Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "n1", Accelerator: "v100", GPUs: 2},
		}}}
		for _, id := range jobs {
			s.Jobs = append(s.Jobs, policy.Job{ID: id, GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 1}})
		}
		return s, nil
	}

	decided := make(chan struct{}, 1)
	r := &policy.Runner{
		Policy:      equalShare{},
		Snapshot:    snapshot,
		MinInterval: 10 * time.Millisecond,
		OnError:     func(err error) { fmt.Println("error:", err) },
		OnDecision:  func(*policy.Decision) { decided <- struct{}{} },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()

	<-decided // Run decides at once
	fmt.Printf("A runs %.2f of the time\n", r.Share("A", "v100"))

	mu.Lock()
	jobs = append(jobs, "C", "D") // two jobs arrive
	mu.Unlock()
	r.Trigger()
	<-decided
	fmt.Printf("A runs %.2f of the time\n", r.Share("A", "v100"))

	cancel()
	fmt.Println(<-done)
	// Output:
	// A runs 1.00 of the time
	// A runs 0.50 of the time
	// context canceled
}
