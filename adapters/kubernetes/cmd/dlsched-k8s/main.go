// Command dlsched-k8s runs a dlsched policy as the scheduler of a
// Kubernetes cluster's GPU training jobs (package kubernetes): pods with
// schedulerName dlsched are grouped into jobs by a label, bound gang-wise
// and evicted when the policy preempts them.
//
// Usage:
//
//	dlsched-k8s --policy gavel.las [--config JSON] [--kubeconfig FILE]
//	            [--round 30s] [--namespace NS] [--scheduler-name dlsched]
//	            [--job-label dlsched.io/job]
//	            [--accelerator-label nvidia.com/gpu.product] [--grace 30s]
//	            [--state NS/NAME] [--leader-elect NS/NAME] [--id NAME]
//	            [--metrics-addr :9090]
//
// --state names the ConfigMap holding the journal (policy state, attained
// service, pending work) so that a restart loses nothing; --leader-elect
// names the Lease that lets only one of several replicas act. Metrics
// (Prometheus) and /healthz are served on --metrics-addr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/dlsched/dlsched/adapters/kubernetes"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all" // every policy registers itself
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "dlsched-k8s:", err)
		os.Exit(1)
	}
}

type flags struct {
	policy, config, kubeconfig, namespace, schedulerName, jobLabel, acceleratorLabel string
	id, metricsAddr                                                                  string
	state, lease                                                                     types.NamespacedName
	round, grace                                                                     time.Duration
}

func parse(args []string) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("dlsched-k8s", flag.ContinueOnError)
	fs.StringVar(&f.policy, "policy", "gavel.las", "registered policy name (dlsched policies lists them)")
	fs.StringVar(&f.config, "config", "", "the policy's configuration as a JSON object")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG)")
	fs.StringVar(&f.namespace, "namespace", "", "schedule only this namespace's pods (default all)")
	fs.StringVar(&f.schedulerName, "scheduler-name", kubernetes.DefaultSchedulerName, "spec.schedulerName of the pods to schedule")
	fs.StringVar(&f.jobLabel, "job-label", kubernetes.DefaultJobLabel, "label grouping pods into jobs")
	fs.StringVar(&f.acceleratorLabel, "accelerator-label", kubernetes.DefaultAcceleratorLabel, "node label naming the accelerator type")
	state := fs.String("state", "", "NAMESPACE/NAME of the ConfigMap keeping the journal (default: none, state lost on restart)")
	lease := fs.String("leader-elect", "", "NAMESPACE/NAME of the Lease for leader election (default: none, run alone)")
	fs.StringVar(&f.id, "id", "", "this replica's identity for leader election (default: the host name)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", ":9090", "address for /metrics and /healthz (empty: none)")
	fs.DurationVar(&f.round, "round", 30*time.Second, "time between rounds")
	fs.DurationVar(&f.grace, "grace", kubernetes.DefaultGrace, "time an evicted pod has to checkpoint")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.round <= 0 {
		return nil, fmt.Errorf("--round %v: want a positive duration", f.round)
	}
	var err error
	if f.state, err = name("--state", *state); err != nil {
		return nil, err
	}
	if f.lease, err = name("--leader-elect", *lease); err != nil {
		return nil, err
	}
	return f, nil
}

func run(ctx context.Context, args []string) error {
	f, err := parse(args)
	if err != nil {
		return err
	}
	p, err := policy.New(f.policy, []byte(f.config))
	if err != nil {
		return err
	}
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	a := &kubernetes.Adapter{
		Client: c, Policy: p, SchedulerName: f.schedulerName, JobLabel: f.jobLabel,
		AcceleratorLabel: f.acceleratorLabel, Namespace: f.namespace, State: f.state, Grace: f.grace,
	}
	m := newMetrics()
	if f.metricsAddr != "" {
		go serveMetrics(ctx, f.metricsAddr, m.registry)
	}
	lead := func(ctx context.Context) { a.Run(ctx, f.round, m.observe) }
	if f.lease.Name == "" {
		lead(ctx)
		return nil
	}
	id := f.id
	if id == "" {
		if id, err = os.Hostname(); err != nil {
			return err
		}
	}
	return kubernetes.Election{Config: cfg, Lease: f.lease, ID: id}.Run(ctx, lead)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

func name(flag, s string) (types.NamespacedName, error) {
	if s == "" {
		return types.NamespacedName{}, nil
	}
	ns, n, ok := strings.Cut(s, "/")
	if !ok || ns == "" || n == "" {
		return types.NamespacedName{}, fmt.Errorf("%s %q: want NAMESPACE/NAME", flag, s)
	}
	return types.NamespacedName{Namespace: ns, Name: n}, nil
}

type metrics struct {
	registry                          *prometheus.Registry
	rounds, bound, evicted, recreated *prometheus.CounterVec
	latency                           prometheus.Histogram
	jobs, invalid                     prometheus.Gauge
}

func newMetrics() *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		registry:  prometheus.NewRegistry(),
		rounds:    counter("dlsched_k8s_rounds_total", "Rounds by outcome (ok, error).", "outcome"),
		bound:     counter("dlsched_k8s_pods_bound_total", "Pods bound."),
		evicted:   counter("dlsched_k8s_pods_evicted_total", "Pods evicted (preempted, migrated, rolled back)."),
		recreated: counter("dlsched_k8s_pods_recreated_total", "Evicted pods created again, unbound."),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "dlsched_k8s_round_seconds", Help: "Time of one round, observing to acting.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		jobs:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "dlsched_k8s_jobs", Help: "Jobs in the last round's snapshot."}),
		invalid: prometheus.NewGauge(prometheus.GaugeOpts{Name: "dlsched_k8s_jobs_invalid", Help: "Jobs left out as malformed."}),
	}
	m.registry.MustRegister(m.rounds, m.bound, m.evicted, m.recreated, m.latency, m.jobs, m.invalid,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(r *kubernetes.Report, d time.Duration, err error) {
	m.latency.Observe(d.Seconds())
	if err != nil {
		m.rounds.WithLabelValues("error").Inc()
		fmt.Fprintln(os.Stderr, "dlsched-k8s: round:", err)
	} else {
		m.rounds.WithLabelValues("ok").Inc()
	}
	if r == nil {
		return
	}
	m.bound.WithLabelValues().Add(float64(len(r.Bound)))
	m.evicted.WithLabelValues().Add(float64(len(r.Evicted)))
	m.recreated.WithLabelValues().Add(float64(len(r.Recreated)))
	m.jobs.Set(float64(r.Jobs))
	m.invalid.Set(float64(r.Invalid))
}

func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "dlsched-k8s: metrics:", err)
	}
}
