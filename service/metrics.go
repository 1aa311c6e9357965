package service

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/dlsched/dlsched/policy"
)

// metrics are a Service's Prometheus collectors, on a registry of its own
// so that several Services (tests, or one per port) never collide.
type metrics struct {
	registry  *prometheus.Registry
	latency   *prometheus.HistogramVec
	jobs      *prometheus.GaugeVec
	left      *prometheus.GaugeVec
	gpus      *prometheus.GaugeVec
	allocated *prometheus.GaugeVec
	errors    *prometheus.CounterVec
	requests  *prometheus.CounterVec
}

func newMetrics() *metrics {
	by := []string{"scheduler"}
	m := &metrics{
		registry: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "dlsched_decision_seconds",
			Help: "Time to decide one round, from a decoded snapshot to a saved state.",
			// 1 ms to about 65 s: a small FIFO round to a large LP.
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
		}, by),
		jobs:      gauge("dlsched_jobs", "Jobs in the scheduler's last snapshot.", by),
		left:      gauge("dlsched_jobs_unscheduled", "Jobs its last decision left out (Decision.Unscheduled).", by),
		gpus:      gauge("dlsched_gpus", "GPUs in the last snapshot's cluster.", by),
		allocated: gauge("dlsched_gpus_allocated", "GPUs in the last decision's placement.", by),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dlsched_errors_total",
			Help: "Failed decisions by reason: invalid (input), timeout, failed (the policy), state (saving it).",
		}, []string{"scheduler", "reason"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dlsched_requests_total",
			Help: "HTTP requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
	}
	m.registry.MustRegister(m.latency, m.jobs, m.left, m.gpus, m.allocated, m.errors, m.requests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func gauge(name, help string, labels []string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

// decided records a decision that seconds took.
func (m *metrics) decided(name string, s *policy.Snapshot, d *policy.Decision, seconds float64) {
	m.latency.WithLabelValues(name).Observe(seconds)
	m.jobs.WithLabelValues(name).Set(float64(len(s.Jobs)))
	m.left.WithLabelValues(name).Set(float64(len(d.Unscheduled)))
	m.gpus.WithLabelValues(name).Set(float64(s.Cluster.TotalGPUs()))
	n := 0
	for _, as := range d.Placement {
		for _, a := range as {
			n += max(a.GPUs, 0)
		}
	}
	m.allocated.WithLabelValues(name).Set(float64(n))
}

// forget drops a removed scheduler's series.
func (m *metrics) forget(name string) {
	for _, v := range []*prometheus.MetricVec{m.latency.MetricVec, m.jobs.MetricVec, m.left.MetricVec,
		m.gpus.MetricVec, m.allocated.MetricVec, m.errors.MetricVec} {
		v.DeletePartialMatch(prometheus.Labels{"scheduler": name})
	}
}
