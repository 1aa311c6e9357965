package kubernetes

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election lets one of several replicas lead, through a Lease.
type Election struct {
	// Config reaches the API server.
	Config *rest.Config
	// Lease names the Lease object the replicas share.
	Lease types.NamespacedName
	// ID names this replica (its pod name, say).
	ID string
	// Duration is how long a lease lasts without renewal, the longest a
	// dead leader blocks the others; zero means 15 s.
	Duration time.Duration
}

// Run calls lead while this replica holds the lease, and returns when ctx
// ends or leadership is lost (lead's context ends first), so that a
// replica that lost the lease restarts clean rather than act on a stale
// view. Of several replicas at most one leads at a time.
func (e Election) Run(ctx context.Context, lead func(context.Context)) error {
	cs, err := clientset.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	d := e.Duration
	if d <= 0 {
		d = 15 * time.Second
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: e.Lease.Namespace, Name: e.Lease.Name},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: e.ID},
		},
		LeaseDuration:   d,
		RenewDeadline:   d * 2 / 3,
		RetryPeriod:     d / 8,
		ReleaseOnCancel: true,
		Name:            e.Lease.String(),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: lead,
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	return nil
}
