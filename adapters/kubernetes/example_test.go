package kubernetes_test

import (
	"context"
	"log"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/dlsched/dlsched/adapters/kubernetes"
	"github.com/dlsched/dlsched/policy"
)

// A scheduler process: Gavel's max-min fairness schedules every pod with
// schedulerName dlsched, a round a minute, its journal in a ConfigMap, and
// only while it holds the lease (cmd/dlsched-k8s is this, with flags and
// metrics).
func Example() {
	cfg := ctrl.GetConfigOrDie()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	p, err := policy.New("gavel.las", nil)
	if err != nil {
		log.Fatal(err)
	}
	a := &kubernetes.Adapter{Client: c, Policy: p, State: types.NamespacedName{Namespace: "dlsched", Name: "journal"}}
	report := func(r *kubernetes.Report, took time.Duration, err error) {
		if err != nil {
			log.Print(err)
			return
		}
		log.Printf("%d jobs, %d pods bound, %d evicted in %v", r.Jobs, len(r.Bound), len(r.Evicted), took)
	}
	election := kubernetes.Election{Config: cfg, Lease: types.NamespacedName{Namespace: "dlsched", Name: "dlsched"}, ID: "replica-1"}
	election.Run(context.Background(), func(ctx context.Context) { a.Run(ctx, time.Minute, report) })
}
