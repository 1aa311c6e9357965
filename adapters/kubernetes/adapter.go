package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/dlsched/dlsched/policy"
)

// Defaults of an Adapter's zero fields.
const (
	DefaultSchedulerName    = "dlsched"
	DefaultJobLabel         = "dlsched.io/job"
	DefaultAcceleratorLabel = "nvidia.com/gpu.product"
	DefaultGrace            = 30 * time.Second
)

// Adapter runs a policy as the scheduler of a Kubernetes cluster's
// training pods. Client and Policy are required; every other zero field
// means its default. An Adapter is not safe for concurrent use: one
// goroutine calls Round, or Run.
type Adapter struct {
	// Client reads nodes and pods and writes bindings, evictions, events
	// and the state ConfigMap. An uncached client (client.New) sees its
	// own writes at once.
	Client client.Client
	// Policy decides; a Stateful policy's state is kept in State.
	Policy policy.Policy
	// SchedulerName selects the pods to schedule (spec.schedulerName).
	SchedulerName string
	// JobLabel groups pods into jobs.
	JobLabel string
	// AcceleratorLabel is the node label naming its accelerator type.
	AcceleratorLabel string
	// Namespace limits the adapter to one namespace; empty means all.
	Namespace string
	// State is the ConfigMap that holds the journal; zero keeps it in
	// memory only.
	State types.NamespacedName
	// Grace is the time an evicted pod has to checkpoint.
	Grace time.Duration
	// Clock returns the time; nil means time.Now.
	Clock func() time.Time

	journal      *journal
	stateVersion string
	said         map[string]string // pod → the last event said about it
}

// Report is what one round did.
type Report struct {
	// Snapshot is what the policy was shown, and Decision its answer; both
	// are nil when the round did not get to decide.
	Snapshot *policy.Snapshot
	Decision *policy.Decision
	// Jobs counts the jobs in the snapshot; Invalid those left out as
	// malformed.
	Jobs, Invalid int
	// Bound, Evicted and Recreated list pods by namespace/name.
	Bound, Evicted, Recreated []string
	// Deferred lists the jobs whose start waits for GPUs still held by
	// terminating pods.
	Deferred []string
}

func (a *Adapter) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

func (a *Adapter) schedulerName() string { return or(a.SchedulerName, DefaultSchedulerName) }
func (a *Adapter) jobLabel() string      { return or(a.JobLabel, DefaultJobLabel) }
func (a *Adapter) acceleratorLabel() string {
	return or(a.AcceleratorLabel, DefaultAcceleratorLabel)
}

func (a *Adapter) grace() int64 {
	if a.Grace <= 0 {
		return int64(DefaultGrace / time.Second)
	}
	return int64(a.Grace / time.Second)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// start loads the journal and restores the policy's state from it, once.
func (a *Adapter) start(ctx context.Context) error {
	if a.journal != nil {
		return nil
	}
	if a.Client == nil || a.Policy == nil {
		return fmt.Errorf("kubernetes: Adapter needs a Client and a Policy")
	}
	j, err := a.load(ctx)
	if err != nil {
		return err
	}
	if st, ok := a.Policy.(policy.Stateful); ok && len(j.State) > 0 {
		if err := st.RestoreState(j.State); err != nil {
			return fmt.Errorf("restoring %s's state from %s: %w", a.Policy.Name(), a.State, err)
		}
	}
	if j.Attained == nil {
		j.Attained = map[string]float64{}
	}
	if j.Recreate == nil {
		j.Recreate = map[string]*corev1.Pod{}
	}
	if j.Preemptions == nil {
		j.Preemptions = map[string]int{}
	}
	a.journal, a.said = j, map[string]string{}
	return nil
}

// remember records the policy's state in the journal after a decision.
func (a *Adapter) remember() error {
	st, ok := a.Policy.(policy.Stateful)
	if !ok {
		return nil
	}
	s, err := st.SaveState()
	if err != nil {
		return fmt.Errorf("saving %s's state: %w", a.Policy.Name(), err)
	}
	a.journal.State = json.RawMessage(s)
	return nil
}

// Run calls Round every interval until ctx ends, reporting each round's
// outcome to report (which may be nil). A failed round is retried at the
// next tick.
func (a *Adapter) Run(ctx context.Context, interval time.Duration, report func(*Report, time.Duration, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		begin := time.Now()
		r, err := a.Round(ctx)
		if report != nil {
			report(r, time.Since(begin), err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
