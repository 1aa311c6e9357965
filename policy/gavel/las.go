package gavel

import (
	"context"
	"fmt"
	"math"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// MaxMinFairness is Gavel's max-min fairness policy over least attained
// service. The zero value is the heterogeneity-aware policy solved with the
// default LP engine.
type MaxMinFairness struct {
	// Agnostic treats every accelerator type on which a job can run as
	// equally fast: the heterogeneity-agnostic baseline.
	Agnostic bool `json:"agnostic,omitempty"`
	// SpaceSharing lets pairs of jobs that list each other in
	// Job.Colocated share GPUs, with the throughputs given there
	// ("gavel.las-ss"). It needs real throughputs, so not Agnostic.
	SpaceSharing bool `json:"space_sharing,omitempty"`
	// Solver selects the LP engine; the zero value is allocation.Auto.
	Solver allocation.Solver `json:"solver,omitempty"`
	// Warm starts each call's LPs where the last call's ended
	// (allocation.Warm): faster when the jobs change a little; results
	// equal a cold start's within CLP's tolerance, not bit for bit.
	Warm  bool `json:"warm,omitempty"`
	bases *allocation.Warm
	// perJob builds one row per job instead of per class: what
	// BenchmarkGenerated compares with.
	perJob bool
	// byLP solves an agnostic program by LP too: what the structure's
	// closed forms are tested against.
	byLP bool
}

func init() {
	policy.Register("gavel.las",
		"Gavel max-min fairness (LAS), heterogeneity-aware: equalizes normalized throughput",
		policy.InRounds(variantFactory(false, false, newLAS)))
	policy.Register("gavel.las-agnostic",
		"Gavel max-min fairness (LAS), heterogeneity-agnostic baseline: equalizes GPU time",
		policy.InRounds(variantFactory(true, false, newLAS)))
	policy.Register("gavel.las-ss",
		"Gavel max-min fairness (LAS) with space sharing: pairs of jobs may share GPUs",
		policy.InRounds(variantFactory(false, true, newLAS)))
}

func newLAS() (policy.Policy, switches) {
	p := &MaxMinFairness{}
	return p, switches{&p.Agnostic, &p.SpaceSharing}
}

// Name returns "gavel.las", "gavel.las-agnostic" or "gavel.las-ss".
func (p *MaxMinFairness) Name() string { return variant("gavel.las", p.Agnostic, p.SpaceSharing) }

// Facts implements policy.Reader: weights, and per its switches heterogeneity and co-location.
func (p *MaxMinFairness) Facts() (uses, needs policy.Facts) {
	return variantFacts(policy.FactWeight, p.Agnostic, p.SpaceSharing), 0
}

// Allocate solves the max-min program for the snapshot's jobs. Every job
// gets a Grant with its GPU count; the Decision's Objective is t*.
func (p *MaxMinFairness) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, jobs, out, err := prepare(ctx, p.Name(), s)
	if err == nil {
		jobs, out = p.check(jobs, out)
	}
	if err != nil || len(jobs) == 0 {
		return empty(p.Name(), out, err)
	}
	pp, warnings, err := variantPairs(p.Name(), s.Cluster, jobs, p.Agnostic, p.SpaceSharing)
	if err != nil {
		return nil, err
	}
	m := p.program(s.Cluster, jobs, pp...)
	res, err := m.maximizeMin(ctx, p.Agnostic && !p.byLP)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name(), err)
	}
	return &policy.Decision{
		Policy:      p.Name(),
		Objective:   res.Objective * m.unit,
		Allocation:  m.allocation(res, p.Agnostic),
		Unscheduled: out,
		Warnings:    warnings,
	}, nil
}

// check leaves out, recording why in out, the jobs whose weight is so small
// that s_j/w_j overflows (such a job has no finite term), and returns the
// others.
func (p *MaxMinFairness) check(jobs []*policy.Job, out map[string]string) ([]*policy.Job, map[string]string) {
	kept := jobs[:0:0]
	for _, j := range jobs {
		if s := float64(j.GPUs) / j.EffectiveWeight(); math.IsInf(s, 0) {
			out = leave(out, j.ID, fmt.Sprintf("weight: %v is too small for a finite fairness term", j.Weight))
			continue
		}
		kept = append(kept, j)
	}
	return kept, out
}

// maxMin is a max-min program over a snapshot's jobs: its rows (jobs, or
// classes of interchangeable jobs), each row's term, the sum of every job's
// term and the unit of the terms.
type maxMin struct {
	prog  *allocation.Program
	ids   []string
	terms []allocation.Expr
	total allocation.Expr // Σ_j over jobs: a class's term counted once per member
	scale []float64       // s_j/(w_j·unit): each term's factor on y_j/T^prop_j
	unit  float64
	cl    *classes // nil when the rows are the jobs
}

// program builds the max-min LP: one term (s_j/w_j)·y_j/T^prop_j per row, in
// the order of jobs (ID order), or of their classes' first members. Without
// pairs the rows are classes of interchangeable jobs (see classes): both of
// MaximizeMin's programs are symmetric in them. Terms are divided by unit =
// max_j s_j/w_j, so that the LP's coefficients stay near 1 whatever the
// weights; t* is unit times the LP's optimum.
func (p *MaxMinFairness) program(c allocation.Cluster, jobs []*policy.Job, pairs ...allocation.Pair) *maxMin {
	return p.build(c, jobs, !p.perJob, pairs...)
}

// build is program, over classes only if classed.
func (p *MaxMinFairness) build(c allocation.Cluster, jobs []*policy.Job, classed bool, pairs ...allocation.Pair) *maxMin {
	prog, ids, z, cl := normalized(c, jobs, p.Agnostic, p.Solver, warmBases(p.Warm, &p.bases), classed, pairs...)
	rows := jobs
	if cl != nil {
		rows = cl.reps()
	}
	m := &maxMin{prog: prog, ids: ids, terms: make([]allocation.Expr, len(rows)), scale: make([]float64, len(rows)), cl: cl}
	for _, job := range rows {
		m.unit = max(m.unit, float64(job.GPUs)/job.EffectiveWeight())
	}
	weighted := make([]allocation.Expr, len(rows))
	for j, job := range rows {
		m.scale[j] = float64(job.GPUs) / job.EffectiveWeight() / m.unit
		m.terms[j] = z[j].Scale(m.scale[j])
		weighted[j] = m.terms[j].Scale(float64(prog.Count(j)))
	}
	m.total = allocation.Sum(weighted...)
	return m
}

// maximizeMin solves MaximizeMin's two programs for m: by their structure
// if agnostic (an agnostic term is scale_j times the row's time; see
// gpuTime) unless that does not apply, else by LP.
func (m *maxMin) maximizeMin(ctx context.Context, agnostic bool) (*allocation.Result, error) {
	if agnostic {
		return agnosticMaxMin(ctx, m.prog, m.scale, m.terms, m.total)
	}
	return m.prog.MaximizeMin(ctx, m.terms, m.total)
}

// allocation returns res as the jobs' Allocation (see allocationOf).
func (m *maxMin) allocation(res *allocation.Result, agnostic bool) allocation.Allocation {
	return m.cl.expand(allocationOf(m.prog, m.ids, res, agnostic))
}
