package gavel

import (
	"context"
	"fmt"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gavel.ftf",
		"Gavel finish-time fairness, heterogeneity-aware: minimizes the largest ratio of shared to isolated finish time",
		policy.InRounds(variantFactory(false, false, newFTF)))
	policy.Register("gavel.ftf-agnostic",
		"Gavel finish-time fairness, heterogeneity-agnostic baseline: every type as fast as the job's fastest",
		policy.InRounds(variantFactory(true, false, newFTF)))
	policy.Register("gavel.ftf-ss",
		"Gavel finish-time fairness with space sharing: pairs of jobs may share GPUs",
		policy.InRounds(variantFactory(false, true, newFTF)))
}

func newFTF() (policy.Policy, switches) {
	p := &FinishTimeFairness{}
	return p, switches{&p.Agnostic, &p.SpaceSharing}
}

// FinishTimeFairness is Themis' finish-time fairness as Gavel writes it:
//
//	minimize_X  max_j ρ_j(X),   ρ_j(X) = (t_j + R_j / y_j(X)) / (t^iso_j + R_j / T^iso_j)
//
// where t_j is the time since job j arrived, R_j its remaining steps, y_j its
// effective throughput, T^iso_j its throughput under the isolated allocation
// (an equal 1/n share of every type, as time on its GPU count) and t^iso_j
// the time it would have needed so far had it always run isolated. ρ_j is
// the job's finish time in the shared cluster relative to its finish time in
// a cluster of its own 1/n share.
//
// The program is not linear in ρ. ρ is feasible when the LP
// y_j ≥ R_j / (ρ·D_j − t_j) for all j has a solution, with
// D_j = t^iso_j + R_j/T^iso_j. Starting from the isolated allocation's ρ,
// the policy first descends: it maximizes the common room u in those
// constraints at the current ρ and moves to the ρ of the allocation found,
// which is smaller while u > 1; at ρ*, u = 1. Bisection then closes any gap
// left, each feasible solution also tightening the upper bound to its own
// max_j ρ_j. The search stops when the bounds agree to 1e-9 relative, and the allocation for the final ρ is pinned
// with MaxMinFairness' canonical tie-break. The Decision's Objective is
// max_j ρ_j of the returned allocation.
//
// t^iso_j is memory across rounds, kept in State: at every call a job's
// account grows by the steps it made since the last call divided by the
// isolated throughput it had then. A job appears in State the first time it
// is seen, and leaves when it is no longer in the snapshot. Persist State
// (it is plain JSON) to survive a restart.
//
// Like Gavel's code, the policy ignores job weights. With Agnostic set, a
// job's throughput on every type it can run on is taken to be its best one.
// The isolated share counts only types the job can run on, so that it is a
// feasible allocation here.
type FinishTimeFairness struct {
	Agnostic bool `json:"agnostic,omitempty"`
	// SpaceSharing lets pairs of jobs share GPUs, as in MaxMinFairness
	// ("gavel.ftf-ss"); the isolated share stays unpaired.
	SpaceSharing bool `json:"space_sharing,omitempty"`
	// Solver selects the LP engine; the zero value is allocation.Auto.
	Solver allocation.Solver `json:"solver,omitempty"`
	// Warm starts each call's LPs where the last call's ended
	// (allocation.Warm): faster when the jobs change a little; results
	// equal a cold start's within CLP's tolerance, not bit for bit.
	Warm  bool `json:"warm,omitempty"`
	bases *allocation.Warm
	// State is the isolated-time account, updated by Allocate.
	State FTFState `json:"state,omitzero"`
	// byLP solves an agnostic program by LP too: what its structure is
	// tested against.
	byLP bool
}

// FTFState is FinishTimeFairness' memory: per job ID, its isolated-time
// account.
type FTFState struct {
	Jobs map[string]IsolatedAccount `json:"jobs,omitempty"`
}

// IsolatedAccount is one job's isolated-time account.
type IsolatedAccount struct {
	// Seconds is t^iso: the time the job's progress so far would have taken
	// under its isolated allocation.
	Seconds float64 `json:"seconds"`
	// StepsDone and Rate are the job's progress and isolated throughput at
	// the last call, from which the next call credits the new steps.
	StepsDone float64 `json:"steps_done"`
	Rate      float64 `json:"rate"`
}

// Name returns "gavel.ftf", "gavel.ftf-agnostic" or "gavel.ftf-ss".
func (p *FinishTimeFairness) Name() string {
	return variant("gavel.ftf", p.Agnostic, p.SpaceSharing)
}

// Facts implements policy.Reader: every job's length, and per its switches heterogeneity and co-location.
func (p *FinishTimeFairness) Facts() (uses, needs policy.Facts) {
	return variantFacts(policy.FactLength, p.Agnostic, p.SpaceSharing), policy.FactLength
}

// Allocate minimizes the largest finish-time fairness ratio and updates
// State. It is not safe for concurrent use.
func (p *FinishTimeFairness) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, jobs, out, err := prepare(ctx, p.Name(), s)
	if err != nil {
		return nil, err
	}
	jobs, out = needSteps(p.Name(), jobs, out)
	pp, warnings, err := variantPairs(p.Name(), s.Cluster, jobs, p.Agnostic, p.SpaceSharing)
	if err != nil {
		return nil, err
	}
	// The search's LPs differ only in their coefficients: each starts from
	// the last one's bases.
	prog, ids, tput := newProgram(s.Cluster, jobs, p.Solver, chainBases(p.Warm, &p.bases), bestIfAgnostic(p.Agnostic), pp...)
	iso, isoX := isolated(prog, tput)
	p.account(jobs, iso, out)
	if len(jobs) == 0 {
		return empty(p.Name(), out, nil)
	}

	active := p.running(s, jobs, iso)
	d := &policy.Decision{Policy: p.Name(), Unscheduled: out, Warnings: warnings}
	if len(active) == 0 {
		d.Allocation = prog.Allocation(ids, &allocation.Result{X: zeros(len(ids), len(tput[0]))})
		return d, nil
	}
	f := newFTFSearch(ctx, prog, active)
	if p.Agnostic && !p.byLP {
		f.agnostic(tput)
	}
	best, err := f.run(iso, isoX)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name(), err)
	}
	d.Allocation = allocationOf(prog, ids, best, p.Agnostic)
	d.Objective = f.ratio(best)
	return d, nil
}

// running returns the jobs with steps left, with t_j, R_j and D_j.
func (p *FinishTimeFairness) running(s *policy.Snapshot, jobs []*policy.Job, iso []float64) []ftfJob {
	var active []ftfJob
	for j, job := range jobs {
		r := job.StepsTotal - job.StepsDone
		if r <= 0 {
			continue
		}
		age := (s.Now - job.Arrival).Seconds()
		active = append(active, ftfJob{j: j, age: age, remaining: r, isolated: p.State.Jobs[job.ID].Seconds + r/iso[j]})
	}
	return active
}

// ftfSearch looks for ρ* = min_X max_j ρ_j(X) over one decision's program.
type ftfSearch struct {
	ctx    context.Context
	prog   *allocation.Program
	active []ftfJob
	y      []allocation.Expr // the active jobs' throughputs, by program index
	// An agnostic program's throughput per unit of time, by program
	// index: its LPs are solved by structure.
	speed []float64
}

func newFTFSearch(ctx context.Context, prog *allocation.Program, active []ftfJob) *ftfSearch {
	y := make([]allocation.Expr, prog.NumJobs())
	for _, a := range active {
		y[a.j] = prog.Throughput(a.j)
	}
	return &ftfSearch{ctx: ctx, prog: prog, active: active, y: y}
}

// agnostic has the search's LPs solved by structure (agnosticMaxMin):
// tput is the agnostic program's throughput matrix.
func (f *ftfSearch) agnostic(tput [][]float64) {
	f.speed = make([]float64, len(tput))
	for j, row := range tput {
		f.speed[j] = slices.Max(row)
	}
}

// run returns an allocation at ρ*: the isolated allocation bounds it from
// above, and ρ > t_j/D_j for every job from below. The descent, then
// bisection, close the bounds; the allocation at the final ρ is then pinned
// canonically, or, if the LP's tolerance makes that solve miss, the best
// allocation the search found is kept.
func (f *ftfSearch) run(iso []float64, isoX [][]float64) (*allocation.Result, error) {
	var lo, hi float64
	for _, a := range f.active {
		lo = max(lo, a.age/a.isolated)
		hi = max(hi, (a.age+a.remaining/iso[a.j])/a.isolated)
	}
	best := &allocation.Result{X: isoX} // the isolated allocation meets hi
	lo, hi, best, err := f.descend(lo, hi, best)
	if err != nil {
		return nil, err
	}
	hi, best, err = f.bisect(lo, hi, best)
	if err != nil {
		return nil, err
	}
	if x, err := f.meet(hi*(1+1e-9), true); err != nil {
		return nil, err
	} else if x != nil {
		best = x
	}
	return best, nil
}

// descend starts at ρ = hi: the LP's allocation there meets every job with
// room u to spare; when u > 1 its own ρ is strictly below hi and becomes
// the new hi, and at ρ* the room is exactly 1. This reaches ρ* in a few LPs
// on typical instances, where bisection needs about thirty.
func (f *ftfSearch) descend(lo, hi float64, best *allocation.Result) (float64, float64, *allocation.Result, error) {
	for range 20 {
		res, err := f.slack(hi, false)
		if err != nil {
			return 0, 0, nil, err
		}
		if res == nil || res.Objective <= 1+1e-9 {
			if res != nil && res.Objective >= 1-1e-9 {
				lo = hi // hi meets ρ with no room: it is ρ*
			}
			break
		}
		r := f.ratio(res)
		if r >= hi {
			break
		}
		best, hi = res, r
	}
	return lo, hi, best, nil
}

// bisect closes whatever gap the descent left, until the bounds agree to
// 1e-9 relative; each feasible solution also tightens hi to its own ρ.
func (f *ftfSearch) bisect(lo, hi float64, best *allocation.Result) (float64, *allocation.Result, error) {
	for range 100 {
		if hi-lo <= 1e-9*hi {
			break
		}
		mid := (lo + hi) / 2
		x, err := f.meet(mid, false)
		if err != nil {
			return 0, nil, err
		}
		if x == nil {
			lo = mid
			continue
		}
		best, hi = x, min(mid, f.ratio(x))
	}
	return hi, best, nil
}

// slack solves max u s.t. y_j·(ρD_j − t_j)/R_j ≥ u for all j: u ≥ 1
// exactly when some allocation meets ρ. It returns nil if some job cannot
// meet ρ at any throughput (ρD_j ≤ t_j).
func (f *ftfSearch) slack(rho float64, tieBreak bool) (*allocation.Result, error) {
	terms := make([]allocation.Expr, len(f.active))
	beta := make([]float64, f.prog.NumJobs())
	for i, a := range f.active {
		s := rho*a.isolated - a.age // y_j ≥ R_j/s ⇔ y_j·s/R_j ≥ 1
		if s <= 0 {
			return nil, nil
		}
		terms[i] = f.y[a.j].Scale(s / a.remaining)
		if f.speed != nil {
			beta[a.j] = f.speed[a.j] * s / a.remaining
		}
	}
	var tb allocation.Expr
	if tieBreak {
		tb = allocation.Sum(terms...)
	}
	if f.speed != nil {
		return agnosticMaxMin(f.ctx, f.prog, beta, terms, tb)
	}
	return f.prog.MaximizeMin(f.ctx, terms, tb)
}

// meet returns an allocation meeting ρ, or nil if the LP finds none.
func (f *ftfSearch) meet(rho float64, tieBreak bool) (*allocation.Result, error) {
	res, err := f.slack(rho, tieBreak)
	if err != nil || res == nil || res.Objective < 1-1e-9 {
		return nil, err
	}
	return res, nil
}

// ratio returns max_j ρ_j of result r.
func (f *ftfSearch) ratio(r *allocation.Result) float64 {
	var worst float64
	for _, a := range f.active {
		worst = max(worst, (a.age+a.remaining/f.prog.Eval(f.y[a.j], r))/a.isolated)
	}
	return worst
}

type ftfJob struct {
	j                        int // index in the program
	age, remaining, isolated float64
}

// isolated returns the isolated allocation X^iso_jk = (N_k/(n·s_j)) /
// max(1, Σ_l N_l/(n·s_j)), restricted to the types job j can run on, and
// T^iso_j = Σ_k T_jk X^iso_jk.
func isolated(prog *allocation.Program, tput [][]float64) ([]float64, [][]float64) {
	n := float64(prog.NumJobs())
	gpus := prog.Capacity()
	total := sum(gpus)
	iso := make([]float64, prog.NumJobs())
	x := zeros(prog.NumJobs(), len(prog.Types()))
	for j := range iso {
		s := float64(prog.GPUs(j))
		norm := max(1, total/(n*s))
		for k := range prog.Types() {
			if prog.Allowed(j, k) {
				x[j][k] = gpus[k] / (n * s) / norm
				iso[j] += tput[j][k] * x[j][k]
			}
		}
	}
	return iso, x
}

// account updates the isolated-time accounts for this call's jobs and
// drops the accounts of jobs that left. A job left out of this call (a key
// of out) keeps its account as it was, to resume when it is scheduled again.
func (p *FinishTimeFairness) account(jobs []*policy.Job, iso []float64, out map[string]string) {
	next := make(map[string]IsolatedAccount, len(jobs))
	for id := range out {
		if a, seen := p.State.Jobs[id]; seen {
			next[id] = a
		}
	}
	for j, job := range jobs {
		a, seen := p.State.Jobs[job.ID]
		if seen && job.StepsDone > a.StepsDone && a.Rate > 0 {
			a.Seconds += (job.StepsDone - a.StepsDone) / a.Rate
		}
		a.StepsDone, a.Rate = job.StepsDone, iso[j]
		next[job.ID] = a
	}
	p.State.Jobs = next
}

func zeros(n, k int) [][]float64 {
	x := make([][]float64, n)
	for j := range x {
		x[j] = make([]float64, k)
	}
	return x
}
