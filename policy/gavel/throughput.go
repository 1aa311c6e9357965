package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gavel.max-throughput",
		"Gavel maximum total throughput: maximizes the sum of the jobs' steps per second",
		policy.InRounds(func(config []byte) (policy.Policy, error) {
			p := &MaxThroughput{}
			return p, policy.DecodeConfig(config, p)
		}))
	policy.Register("gavel.min-cost",
		"Gavel minimum cost: maximizes throughput per dollar, Σ_j Σ_k T_jk X_jk / price_k",
		policy.InRounds(costFactory(false)))
	policy.Register("gavel.min-cost-slo",
		"Gavel minimum cost with SLOs: as gavel.min-cost, and each job with a deadline meets it when all can",
		policy.InRounds(costFactory(true)))
}

func costFactory(slo bool) policy.Factory {
	return func(config []byte) (policy.Policy, error) {
		p := &MinCost{}
		if err := policy.DecodeConfig(config, p); err != nil {
			return nil, err
		}
		p.SLO = p.SLO || slo
		return p, p.check()
	}
}

// MaxThroughput maximizes the cluster's total throughput,
//
//	maximize_X  Σ_j Σ_k T_jk X_jk
//
// in raw steps per second, as Gavel does: jobs with high step rates dominate.
// The Decision's Objective is the total throughput.
type MaxThroughput struct {
	// Solver selects the LP engine; the zero value is allocation.Auto.
	Solver allocation.Solver `json:"solver,omitempty"`
	// Warm starts each call's LPs where the last call's ended
	// (allocation.Warm): faster when the jobs change a little; results
	// equal a cold start's within CLP's tolerance, not bit for bit.
	Warm  bool `json:"warm,omitempty"`
	bases *allocation.Warm
}

// Name returns "gavel.max-throughput".
func (p *MaxThroughput) Name() string { return "gavel.max-throughput" }

// Facts implements policy.Reader: it maximizes the throughputs as they are, type by type.
func (p *MaxThroughput) Facts() (uses, needs policy.Facts) { return policy.FactHeterogeneity, 0 }

// Allocate solves the program for the snapshot's jobs.
func (p *MaxThroughput) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return maximizeThroughput(ctx, p.Name(), s, p.Solver, warmBases(p.Warm, &p.bases), nil, false)
}

// MinCost maximizes throughput per dollar,
//
//	maximize_X  Σ_j Σ_k T_jk X_jk / c_k
//
// where c_k is the hourly price of one GPU of type k. With SLO set, every job
// with a deadline must also reach the throughput that finishes it in time,
//
//	y_j ≥ R_j / (deadline_j − now),
//
// where R_j is its remaining steps. If those constraints cannot all hold, the
// program is solved without them and the Decision says so in Warnings. The
// Objective is the optimal throughput per dollar.
type MinCost struct {
	// Prices maps every accelerator type of the cluster to the hourly price
	// of one GPU; a type without a price is an error. Nil means
	// DefaultPrices().
	Prices map[allocation.Accelerator]float64 `json:"prices,omitempty"`
	// SLO adds the deadline constraints ("gavel.min-cost-slo").
	SLO bool `json:"slo,omitempty"`
	// Solver selects the LP engine; the zero value is allocation.Auto.
	Solver allocation.Solver `json:"solver,omitempty"`
	// Warm starts each call's LPs where the last call's ended
	// (allocation.Warm): faster when the jobs change a little; results
	// equal a cold start's within CLP's tolerance, not bit for bit.
	Warm  bool `json:"warm,omitempty"`
	bases *allocation.Warm
}

// DefaultPrices returns the fixed hourly GPU prices, in dollars, that
// Gavel's code uses for Google Cloud.
func DefaultPrices() map[allocation.Accelerator]float64 {
	return map[allocation.Accelerator]float64{"k80": 0.135, "p100": 0.43, "v100": 0.74}
}

// Name returns "gavel.min-cost" or, with SLO, "gavel.min-cost-slo".
func (p *MinCost) Name() string {
	if p.SLO {
		return "gavel.min-cost-slo"
	}
	return "gavel.min-cost"
}

// Facts implements policy.Reader: heterogeneity and, with SLO, deadlines and the lengths they need.
func (p *MinCost) Facts() (uses, needs policy.Facts) {
	uses = policy.FactHeterogeneity
	if p.SLO {
		uses |= policy.FactDeadline | policy.FactLength
	}
	return uses, 0
}

func (p *MinCost) check() error {
	for k, c := range p.Prices {
		if !(c > 0) || math.IsInf(c, 0) {
			return fmt.Errorf("%w: %s: prices[%s]: %v is not a finite positive price", policy.ErrInvalidConfig, p.Name(), k, c)
		}
	}
	return nil
}

// Allocate solves the program for the snapshot's jobs.
func (p *MinCost) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	prices := p.Prices
	if prices == nil {
		prices = DefaultPrices()
	}
	types := s.Cluster.Types()
	price := make([]float64, len(types))
	for k, t := range types {
		c, ok := prices[t]
		if !ok {
			return nil, fmt.Errorf("%w: %s: prices: no price for accelerator %q", policy.ErrInvalidConfig, p.Name(), t)
		}
		price[k] = c
	}
	return maximizeThroughput(ctx, p.Name(), s, p.Solver, warmBases(p.Warm, &p.bases), price, p.SLO)
}

// maximizeThroughput maximizes Σ_j Σ_k T_jk X_jk / price_k (price nil means
// 1), with deadline constraints when slo is set.
func maximizeThroughput(ctx context.Context, name string, s *policy.Snapshot, solver allocation.Solver, warm *allocation.Warm, price []float64, slo bool) (*policy.Decision, error) {
	s, jobs, out, err := prepare(ctx, name, s)
	if err != nil || len(jobs) == 0 {
		return empty(name, out, err)
	}
	d := &policy.Decision{Policy: name, Unscheduled: out}
	var needs []float64 // per job, the throughput its deadline requires; 0 = none
	if slo {
		needs = deadlines(s, jobs)
	}
	for j, r := range needs {
		if math.IsNaN(r) {
			d.Warnings = append(d.Warnings, fmt.Sprintf("job %q: steps_total: unknown; without the remaining steps its deadline sets no constraint", jobs[j].ID))
			needs[j] = 0
		}
		if math.IsInf(r, 1) {
			d.Warnings = append(d.Warnings, fmt.Sprintf("job %q: its deadline has passed; no constraint for it", jobs[j].ID))
			needs[j] = 0
		}
	}
	constrained := slices.ContainsFunc(needs, func(r float64) bool { return r > 0 })
	if !constrained {
		needs = nil
	}
	a, objective, err := throughputProgram(ctx, s.Cluster, jobs, solver, warm, price, needs)
	if constrained && errors.Is(err, allocation.ErrInfeasible) {
		d.Warnings = append(d.Warnings, "the deadlines cannot all be met; solved without them")
		a, objective, err = throughputProgram(ctx, s.Cluster, jobs, solver, warm, price, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.Objective, d.Allocation = objective, a
	return d, nil
}

// throughputProgram builds and solves the program of maximizeThroughput,
// with the deadline constraints y_j ≥ needs[j] where needs[j] > 0. Without
// needs the program is symmetric in interchangeable jobs, and its rows are
// their classes (see classes), each counted once per member in the
// objective.
func throughputProgram(ctx context.Context, c allocation.Cluster, jobs []*policy.Job, solver allocation.Solver, warm *allocation.Warm,
	price, needs []float64) (allocation.Allocation, float64, error) {
	seen := func(j *policy.Job, t allocation.Accelerator) float64 { return j.Throughput[t] }
	prog, ids, tput, cl := newRows(c, jobs, solver, warm, seen, needs == nil)
	objective := make([]allocation.Expr, len(tput))
	coef := make([]float64, len(c.Types()))
	for j := range tput {
		for k := range coef {
			coef[k] = tput[j][k] * float64(prog.Count(j))
			if price != nil {
				coef[k] /= price[k]
			}
		}
		objective[j] = prog.Linear(j, coef)
		if needs != nil && needs[j] > 0 {
			prog.Constrain(prog.Throughput(j), needs[j], math.Inf(1))
		}
	}
	res, err := prog.Maximize(ctx, allocation.Sum(objective...))
	if err != nil {
		return nil, 0, err
	}
	return cl.expand(prog.Allocation(ids, res)), res.Objective, nil
}

// deadlines returns, per job, the throughput R_j/(deadline_j − now) that
// meets its deadline, 0 for jobs without one, +Inf for a deadline that has
// passed and NaN for a job with a deadline whose length is unknown.
func deadlines(s *policy.Snapshot, jobs []*policy.Job) []float64 {
	needs := make([]float64, len(jobs))
	for j, job := range jobs {
		if job.Deadline == 0 {
			continue
		}
		if job.StepsTotal == 0 {
			needs[j] = math.NaN()
			continue
		}
		left := (job.Deadline - s.Now).Seconds()
		remaining := job.StepsTotal - job.StepsDone
		switch {
		case remaining <= 0:
		case left <= 0:
			needs[j] = math.Inf(1) // already late: no allocation meets it
		default:
			needs[j] = remaining / left
		}
	}
	return needs
}
