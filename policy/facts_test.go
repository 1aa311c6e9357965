package policy_test

import (
	"context"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// reader is a policy that reads the facts it is given.
type reader struct{ uses, needs policy.Facts }

func (reader) Name() string { return "reader" }

func (reader) Allocate(context.Context, *policy.Snapshot) (*policy.Decision, error) {
	return &policy.Decision{Policy: "reader", Allocation: allocation.Allocation{}}, nil
}

func (r reader) Facts() (uses, needs policy.Facts) { return r.uses, r.needs }

// blind is a policy that does not say what it reads.
type blind struct{ reader }

// Facts hides reader's; blind is not a policy.Reader.
func (blind) Facts() {}

func TestFactsString(t *testing.T) {
	for _, c := range []struct {
		f    policy.Facts
		want string
	}{
		{0, ""},
		{policy.FactLength, "length"},
		{policy.FactResources | policy.FactHeterogeneity | policy.FactSkew, "heterogeneity, skew, resources"},
		{policy.FactAdaptive | policy.FactElastic | policy.FactColocation | policy.FactDeadline | policy.FactTenant | policy.FactWeight,
			"weight, tenant, deadline, colocation, elastic, adaptive"},
		{1 << 15, ""}, // no such fact
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("Facts(%#x).String() = %q, want %q", uint16(c.f), got, c.want)
		}
	}
}

func TestPresent(t *testing.T) {
	plain := allocation.Cluster{Servers: []allocation.Server{{ID: "a", Accelerator: "v100", GPUs: 4}, {ID: "b", Accelerator: "k80", GPUs: 4}}}
	fat := allocation.Cluster{Servers: []allocation.Server{{ID: "a", Accelerator: "v100", GPUs: 4, CPUs: 32}}}
	mem := allocation.Cluster{Servers: []allocation.Server{{ID: "a", Accelerator: "v100", GPUs: 4, MemoryGB: 256}}}
	job := func(f func(*policy.Job)) []policy.Job {
		j := policy.Job{ID: "j", GPUs: 1, Throughput: map[allocation.Accelerator]float64{"v100": 2}}
		f(&j)
		return []policy.Job{j}
	}
	sens := &throughput.Sensitivity{}
	for _, c := range []struct {
		name string
		s    policy.Snapshot
		want policy.Facts
	}{
		{"empty", policy.Snapshot{Cluster: plain}, 0},
		{"plain job", policy.Snapshot{Cluster: plain, Jobs: job(func(*policy.Job) {})}, 0},
		{"equal throughputs", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) {
			j.Throughput = map[allocation.Accelerator]float64{"v100": 2, "k80": 2}
		})}, 0},
		{"differing throughputs", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) {
			j.Throughput = map[allocation.Accelerator]float64{"v100": 2, "k80": 1}
		})}, policy.FactHeterogeneity},
		{"weight 1", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Weight = 1 })}, 0},
		{"weight 2", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Weight = 2 })}, policy.FactWeight},
		{"length", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.StepsTotal = 100 })}, policy.FactLength},
		{"tenant", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Tenant = "t" })}, policy.FactTenant},
		{"deadline", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Deadline = 1 })}, policy.FactDeadline},
		{"colocated", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) {
			j.Colocated = map[string]map[allocation.Accelerator]float64{"k": {"v100": 1}}
		})}, policy.FactColocation},
		{"skew", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Skew = 0.6 })}, policy.FactSkew},
		{"elastic", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Elastic = &policy.Elastic{BatchSize: 32} })}, policy.FactElastic},
		{"adaptive", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Adaptive = &policy.Adaptive{Epochs: 1} })}, policy.FactAdaptive},
		{"sensitivity without cpus", policy.Snapshot{Cluster: plain, Jobs: job(func(j *policy.Job) { j.Sensitivity = sens })}, 0},
		{"cpus without sensitivity", policy.Snapshot{Cluster: fat, Jobs: job(func(*policy.Job) {})}, 0},
		{"sensitivity and cpus", policy.Snapshot{Cluster: fat, Jobs: job(func(j *policy.Job) { j.Sensitivity = sens })}, policy.FactResources},
		{"sensitivity and memory", policy.Snapshot{Cluster: mem, Jobs: job(func(j *policy.Job) { j.Sensitivity = sens })}, policy.FactResources},
		{"facts of two jobs", policy.Snapshot{Cluster: plain, Jobs: append(
			job(func(j *policy.Job) { j.Skew = 0.1 }),
			policy.Job{ID: "k", GPUs: 1, Tenant: "t", Throughput: map[allocation.Accelerator]float64{"v100": 3, "k80": 1}})},
			policy.FactSkew | policy.FactTenant | policy.FactHeterogeneity},
	} {
		if got := policy.Present(&c.s); got != c.want {
			t.Errorf("%s: Present = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestNotes(t *testing.T) {
	p := reader{uses: policy.FactHeterogeneity | policy.FactElastic | policy.FactLength, needs: policy.FactElastic | policy.FactLength}
	present := policy.FactHeterogeneity | policy.FactLength | policy.FactAdaptive | policy.FactWeight
	lacks, ignores := policy.Notes(p, present)
	if lacks != policy.FactElastic || ignores != policy.FactWeight|policy.FactAdaptive {
		t.Errorf("Notes = lacks %q, ignores %q; want lacks %q, ignores %q", lacks, ignores, "elastic", "weight, adaptive")
	}
	if lacks, ignores := policy.Notes(p, p.uses); lacks != 0 || ignores != 0 {
		t.Errorf("Notes on what it uses = lacks %q, ignores %q; want neither", lacks, ignores)
	}
	// A policy that is not a Reader reads nothing: it ignores every fact.
	if lacks, ignores := policy.Notes(blind{p}, present); lacks != 0 || ignores != present {
		t.Errorf("Notes of a non-Reader = lacks %q, ignores %q; want lacks none, ignores %q", lacks, ignores, present)
	}
}

// Strict and Rounds say what the policy they wrap reads.
func TestFactsForwarded(t *testing.T) {
	p := reader{uses: policy.FactDeadline | policy.FactLength, needs: policy.FactLength}
	for name, w := range map[string]policy.Policy{
		"Strict":         policy.Strict(p),
		"Rounds":         &policy.Rounds{Shares: p},
		"Strict(Rounds)": policy.Strict(&policy.Rounds{Shares: p}),
	} {
		uses, needs := policy.FactsOf(w)
		if uses != p.uses || needs != p.needs {
			t.Errorf("%s: FactsOf = %q / %q, want %q / %q", name, uses, needs, p.uses, p.needs)
		}
	}
	for name, w := range map[string]policy.Policy{
		"Strict": policy.Strict(blind{p}),
		"Rounds": &policy.Rounds{Shares: blind{p}},
	} {
		if uses, needs := policy.FactsOf(w); uses != 0 || needs != 0 {
			t.Errorf("%s of a non-Reader: FactsOf = %q / %q, want none", name, uses, needs)
		}
	}
}

// An elastic job carries the batch fact only when its batch may grow.
func TestPresentBatch(t *testing.T) {
	fixed := policy.Job{ID: "a", GPUs: 1, Elastic: &policy.Elastic{BatchSize: 32, MaxBatchSize: 32}}
	grow := policy.Job{ID: "b", GPUs: 1, Elastic: &policy.Elastic{BatchSize: 32, MaxBatchSize: 256}}
	if got := policy.Present(&policy.Snapshot{Jobs: []policy.Job{fixed}}); got != policy.FactElastic {
		t.Errorf("fixed batch: %v", got)
	}
	if got := policy.Present(&policy.Snapshot{Jobs: []policy.Job{grow}}); got != policy.FactElastic|policy.FactBatch {
		t.Errorf("growing batch: %v", got)
	}
}
