package shockwave

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/bayes"
	"github.com/dlsched/dlsched/market"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("shockwave",
		"Shockwave: plans GPU-rounds over a 40-minute window by a Nash-welfare market over forecast progress, under finish-time-fairness constraints",
		policy.Configured((*Shockwave).check))
}

// Defaults from the paper's code (its 32-GPU configuration).
const (
	DefaultRounds   = 20
	DefaultRound    = 120 * time.Second
	DefaultK        = 1e-3
	DefaultLambda   = 12
	DefaultRhoMax   = 1
	DefaultReplan   = 8
	DefaultMomentum = 0.9
	// priorityM is the exponent for unfair jobs that would finish within a
	// round on the relaxed path.
	priorityM = 100
	// maxPriority caps ρ̂^λ so that budgets stay finite.
	maxPriority = 1e200
)

// Shockwave is the policy of Shockwave. Every Replan rounds, and whenever a
// job arrives or finishes, it plans the next Rounds rounds with the
// volatile market of package market: each job i buys whole rounds of its
// gang, and the plan maximizes
//
//	(1/(J·T)) Σᵢ Bᵢ·log̃((pᵢ + yᵢ)/Eᵢ) − k·maxᵢ Sᵢ,
//
// where pᵢ/Eᵢ is the job's progress, yᵢ = min(Δ·nᵢ/d̃ᵢ, Eᵢ − pᵢ) the epochs
// its nᵢ rounds add at its mean epoch time so far d̃ᵢ, log̃ the
// piecewise-linear log on Breakpoints, and Sᵢ = max(0, R̂ᵢ − yᵢ·d̃ᵢ) the
// forecast seconds left after the window (bayes.Job.Remaining). On the fair
// path every Bᵢ = 1 and each job must keep its finish-time fairness:
//
//	now + T·Δ + Sᵢ/min(1, G/J) ≤ ρ_max·F̄ᵢ,
//
// with F̄ᵢ the smoothed fair finish time: Fᵢ = arrivalᵢ + (work doneᵢ +
// R̂ᵢ)/min(1, G/J), estimated whenever the set of jobs changes, averaged
// over time with momentum (0.9·time-weighted mean + 0.1·latest). When those
// constraints cannot all be met, Shockwave drops them and weights each job
// by Bᵢ = ρ̂ᵢ^λ if its projected ρ̂ᵢ = (now + R̂ᵢ/min(1, G/J))/F̄ᵢ exceeds
// ρ_max (ρ̂ᵢ^100 if it would also finish within a round), 1 otherwise, and
// runs the heaviest jobs earliest in the window. Each round runs the jobs
// planned for it and then fills idle GPUs with the other jobs, longest
// forecast first; jobs keep the GPUs they hold when they can, and the rest
// go on the fewest servers.
//
// An adaptive job (Job.Adaptive) is forecast by bayes: Eᵢ = Epochs,
// pᵢ = epochs done, d̃ᵢ the mean epoch time over the epochs observed. Any
// other job needs StepsTotal and a Throughput: its "epochs" are steps, at
// its best throughput. Shockwave plans over all the cluster's GPUs as if
// they were alike (the paper's clusters are); a job runs on a type where
// its Throughput is positive (any type when it has none).
//
// The decision grants each job of the round its GPUs with a share of 1 on
// one type, with a placement, and asks to be called again a round later
// (Wake). Objective is the plan's market objective. Shockwave keeps its
// plan and the fair-finish-time history in State; persist it (plain JSON)
// across restarts. Same snapshot and State, same decision.
type Shockwave struct {
	// Rounds is the planning window T; zero means 20, at most MaxRounds.
	Rounds int `json:"rounds,omitempty"`
	// RoundSeconds is the round length Δ; zero means 120 s.
	RoundSeconds float64 `json:"round_seconds,omitempty"`
	// K weighs the largest forecast time left after the window, per second;
	// zero means 10⁻³, negative leaves the term out.
	K float64 `json:"k,omitempty"`
	// Lambda is the priority exponent of the relaxed path; zero means 12.
	Lambda float64 `json:"lambda,omitempty"`
	// RhoMax is the finish-time-fairness target; zero means 1.
	RhoMax float64 `json:"rho_max,omitempty"`
	// Breakpoints are the progress values of the piecewise-linear log; nil
	// means 0, 0.2, …, 1.
	Breakpoints []float64 `json:"breakpoints,omitempty"`
	// Replan is the number of rounds after which a plan is remade even if
	// no job arrived or finished; zero means 8.
	Replan int `json:"replan_rounds,omitempty"`
	// Momentum weighs the time-averaged fair finish time against the latest
	// estimate; zero means 0.9.
	Momentum float64 `json:"momentum,omitempty"`
	// State is the plan and history, updated by Allocate.
	State State `json:"state,omitzero"`
}

// State is Shockwave's memory across rounds. Times are in seconds on the
// snapshot's clock.
type State struct {
	// Start is when the plan's first round began; Plan lists the jobs
	// planned for each round, and Jobs the jobs the plan was made for,
	// sorted.
	Start float64    `json:"start,omitempty"`
	Plan  [][]string `json:"plan,omitempty"`
	Jobs  []string   `json:"jobs,omitempty"`
	// Objective is the plan's objective; Relaxed reports that the plan
	// took the λ-priority path.
	Objective float64 `json:"objective,omitempty"`
	Relaxed   bool    `json:"relaxed,omitempty"`
	// Fair holds each job's fair-finish-time estimates, oldest first.
	Fair map[string][]Estimate `json:"fair,omitempty"`
}

// Estimate is one fair-finish-time estimate: made At, saying Finish.
type Estimate struct {
	At     float64 `json:"at"`
	Finish float64 `json:"finish"`
}

// Name returns "shockwave".
func (*Shockwave) Name() string { return "shockwave" }

// Facts implements policy.Reader: it forecasts adaptive jobs, and others by length as one regime (or not at all).
func (*Shockwave) Facts() (uses, needs policy.Facts) {
	return policy.FactLength | policy.FactAdaptive, policy.FactAdaptive
}

// MaxRounds bounds the planning window: the plan holds a row per round,
// so a window of 10⁸ rounds would exhaust memory before its first
// decision. 10,000 rounds of the default 120 s are two weeks.
const MaxRounds = 10000

func (p *Shockwave) check() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("%w: shockwave: %s: %v", policy.ErrInvalidConfig, field, v)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case p.Rounds < 0:
		return bad("rounds", p.Rounds)
	case p.Rounds > MaxRounds:
		return fmt.Errorf("%w: shockwave: rounds: %d is more than MaxRounds (%d)", policy.ErrInvalidConfig, p.Rounds, MaxRounds)
	case p.RoundSeconds < 0 || !finite(p.RoundSeconds):
		return bad("round_seconds", p.RoundSeconds)
	case !finite(p.K):
		return bad("k", p.K)
	case p.Lambda < 0 || !finite(p.Lambda):
		return bad("lambda", p.Lambda)
	case p.RhoMax < 0 || !finite(p.RhoMax):
		return bad("rho_max", p.RhoMax)
	case p.Replan < 0:
		return bad("replan_rounds", p.Replan)
	case p.Momentum < 0 || p.Momentum > 1 || !finite(p.Momentum):
		return bad("momentum", p.Momentum)
	}
	if p.Breakpoints != nil {
		if _, err := (market.Volatile{Rounds: 1, Capacity: 1, Breakpoints: p.Breakpoints}).Solve(context.Background(), nil); err != nil {
			return fmt.Errorf("%w: shockwave: %v", policy.ErrInvalidConfig, err)
		}
	}
	return nil
}

func (p *Shockwave) round() float64 {
	if p.RoundSeconds == 0 {
		return DefaultRound.Seconds()
	}
	return p.RoundSeconds
}

func (p *Shockwave) k() float64 {
	switch {
	case p.K == 0:
		return DefaultK
	case p.K < 0:
		return 0
	}
	return p.K
}

// job is what Shockwave knows about one job this round.
type job struct {
	j         *policy.Job
	width     int
	epochs    float64 // E
	done      float64 // p
	mean      float64 // d̃, seconds per epoch so far
	remaining float64 // R̂, forecast seconds left
	worked    float64 // seconds of work done at profiled speed
	fair      float64 // F̄, smoothed fair finish time
	rho       float64 // ρ̂, projected finish-time fairness
}

// Allocate plans (when due) and decides the round.
func (p *Shockwave) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("shockwave: %w", err)
	}
	delta := p.round()
	d := &policy.Decision{Policy: p.Name(), Allocation: allocation.Allocation{}, Unscheduled: out, Wake: s.Now + seconds(delta)}
	jobs, unknown := forecast(s, d)
	if len(jobs) == 0 {
		p.State = State{Fair: p.left(d.Unscheduled, nil)}
		p.decide(s, nil, nil, unknown, d)
		return d, nil
	}
	now := s.Now.Seconds()
	G := s.Cluster.TotalGPUs()
	share := math.Min(1, float64(G)/float64(len(jobs)))

	ids := make([]string, len(jobs))
	for i, jb := range jobs {
		ids[i] = jb.j.ID
	}
	changed := !slices.Equal(ids, p.State.Jobs)
	if changed {
		p.State.Fair = p.left(d.Unscheduled, p.estimate(jobs, now, share))
	}
	for _, jb := range jobs {
		jb.fair = smooth(p.State.Fair[jb.j.ID], now, cmp.Or(p.Momentum, DefaultMomentum))
		jb.rho = (now + jb.remaining/share) / jb.fair
	}

	T := cmp.Or(p.Rounds, DefaultRounds)
	at := int(math.Floor((now - p.State.Start) / delta))
	if changed || p.State.Plan == nil || at < 0 || at >= min(cmp.Or(p.Replan, DefaultReplan), len(p.State.Plan)) {
		if err := p.plan(ctx, jobs, now, share, G, T, delta, d); err != nil {
			return nil, err
		}
		p.State.Jobs = ids
		at = 0
	}
	d.Objective = p.State.Objective
	if p.State.Relaxed {
		d.Warnings = append(d.Warnings, "shockwave: the finish-time-fairness constraints cannot all be met; planned with λ priorities")
	}
	p.decide(s, jobs, p.State.Plan[at], unknown, d)
	return d, nil
}

// left adds to fair, which it returns (allocating it if need be), the
// fair-finish-time histories of the jobs left out of this call (the keys of
// out): a job left out for a while keeps its history for when it is back.
func (p *Shockwave) left(out map[string]string, fair map[string][]Estimate) map[string][]Estimate {
	for id := range out {
		if es, ok := p.State.Fair[id]; ok {
			if fair == nil {
				fair = make(map[string][]Estimate)
			}
			fair[id] = es
		}
	}
	return fair
}

// forecast reads each job's progress and forecast, in ID order, and leaves
// out in d the jobs Shockwave cannot run. A job that is neither adaptive nor
// of known length has no forecast: it comes back in unknown, in order of
// arrival, to take the GPUs the plan leaves idle.
func forecast(s *policy.Snapshot, d *policy.Decision) (jobs, unknown []*job) {
	jobs = make([]*job, 0, len(s.Jobs))
	census := policy.NewCensus(s.Cluster)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.GPUs < 1 {
			d.Leave(j.ID, fmt.Sprintf("gpus: %d; shockwave runs gangs of a fixed size", j.GPUs))
			continue
		}
		if j.Elastic == nil {
			// Screen checked that its GPU count fits.
		} else if err := census.Runnable(j); err != nil {
			d.Leave(j.ID, policy.Reason(err))
			continue
		}
		jb := &job{j: j, width: j.GPUs}
		if a := j.Adaptive; a != nil {
			observed := slices.Clone(a.History)
			if observed == nil {
				observed = make([]int, len(a.Regimes))
			}
			done := a.Done()
			if done < a.Epochs {
				observed[a.Regime()]++ // the epoch under way
			}
			fj := bayes.Job{Epochs: a.Epochs, Done: done, Observed: observed, EpochSeconds: a.EpochSeconds}
			r, err := fj.Remaining()
			if err != nil {
				d.Leave(j.ID, fmt.Sprintf("adaptive: %v", err))
				continue
			}
			jb.epochs, jb.done, jb.mean, jb.remaining = float64(a.Epochs), float64(done), fj.EpochMean(), r
			for b, h := range a.History {
				jb.worked += float64(h) * a.EpochSeconds[b]
			}
		} else {
			best := 0.0
			for _, x := range j.Throughput {
				best = math.Max(best, x)
			}
			if j.StepsTotal <= 0 || best <= 0 {
				unknown = append(unknown, jb)
				continue
			}
			jb.epochs, jb.done, jb.mean = j.StepsTotal, math.Min(j.StepsDone, j.StepsTotal), 1/best
			jb.remaining = (jb.epochs - jb.done) * jb.mean
			jb.worked = jb.done * jb.mean
		}
		jobs = append(jobs, jb)
	}
	slices.SortFunc(jobs, func(a, b *job) int { return cmp.Compare(a.j.ID, b.j.ID) })
	slices.SortFunc(unknown, func(a, b *job) int {
		return cmp.Or(cmp.Compare(a.j.Arrival, b.j.Arrival), cmp.Compare(a.j.ID, b.j.ID))
	})
	return jobs, unknown
}

// estimate appends each job's fair-finish-time estimate to its history and
// drops the histories of jobs that left.
func (p *Shockwave) estimate(jobs []*job, now, share float64) map[string][]Estimate {
	fair := make(map[string][]Estimate, len(jobs))
	for _, jb := range jobs {
		f := jb.j.Arrival.Seconds() + (jb.worked+jb.remaining)/share
		fair[jb.j.ID] = append(slices.Clone(p.State.Fair[jb.j.ID]), Estimate{At: now, Finish: f})
	}
	return fair
}

// smooth returns F̄: momentum times the average of the estimates, each
// weighted by how long it was in force up to now, plus the rest times the
// latest. With no time elapsed it is the latest (where the paper's code
// fails an assertion).
func smooth(es []Estimate, now, momentum float64) float64 {
	if len(es) == 0 {
		return math.Inf(1)
	}
	latest := es[len(es)-1].Finish
	sum, weight := 0.0, 0.0
	for k, e := range es {
		until := now
		if k+1 < len(es) {
			until = es[k+1].At
		}
		if w := until - e.At; w > 0 {
			sum += w * e.Finish
			weight += w
		}
	}
	if weight == 0 {
		return latest
	}
	return momentum*sum/weight + (1-momentum)*latest
}

// plan solves the volatile market, on the fair path when it can, and stores
// the plan in State.
func (p *Shockwave) plan(ctx context.Context, jobs []*job, now, share float64, G, T int, delta float64, d *policy.Decision) error {
	// Buyers go in the order in which, among equal budgets, they take the
	// earliest rounds: running jobs first, so that they keep running rather
	// than pay a restart, then the most unfair.
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b *job) int {
		return cmp.Or(cmp.Compare(min(len(b.j.Placement), 1), min(len(a.j.Placement), 1)), cmp.Compare(b.rho, a.rho))
	})
	v := market.Volatile{Rounds: T, Capacity: G, Seconds: delta, Breakpoints: p.Breakpoints, Makespan: p.k()}
	buyers := make([]market.Buyer, len(order))
	rhoMax := cmp.Or(p.RhoMax, DefaultRhoMax)
	feasible := true
	for i, jb := range order {
		b := market.Buyer{Budget: 1, Width: jb.width, Progress: jb.done / jb.epochs, Remaining: jb.remaining}
		if jb.mean > 0 {
			b.Gain = delta / (jb.mean * jb.epochs)
		}
		// The fairness constraint bounds the time left after the window.
		limit := share * (rhoMax*jb.fair - now - float64(T)*delta)
		n := 0
		for n <= T && b.Left(n, delta) > limit {
			n++
		}
		if n > T || limit < 0 {
			feasible = false
		}
		b.Min = n
		buyers[i] = b
	}
	var plan market.Plan
	var err error
	if feasible {
		plan, err = v.Solve(ctx, buyers)
	}
	relaxed := !feasible || errors.Is(err, market.ErrInfeasible)
	if relaxed {
		lambda := cmp.Or(p.Lambda, DefaultLambda)
		for i, jb := range order {
			b := &buyers[i]
			b.Min, b.Budget = 0, 1
			if jb.rho > rhoMax {
				e := lambda
				if jb.remaining < delta {
					e = priorityM
				}
				b.Budget = math.Min(math.Pow(jb.rho, e), maxPriority)
			}
		}
		plan, err = v.Solve(ctx, buyers)
	}
	if err != nil {
		return fmt.Errorf("shockwave: %w", err)
	}
	st := State{Start: now, Plan: make([][]string, T), Objective: plan.Objective, Relaxed: relaxed, Fair: p.State.Fair}
	for t, run := range plan.Schedule {
		st.Plan[t] = []string{}
		for _, i := range run {
			st.Plan[t] = append(st.Plan[t], order[i].j.ID)
		}
		slices.Sort(st.Plan[t])
	}
	p.State = st
	return nil
}

// decide runs the round: the planned jobs, then the others longest forecast
// first while GPUs are idle, then those without a forecast (unknown);
// running jobs keep their GPUs when free, and otherwise wait.
func (p *Shockwave) decide(s *policy.Snapshot, jobs []*job, planned []string, unknown []*job, d *policy.Decision) {
	var cands []*job
	for _, jb := range jobs {
		if _, ok := slices.BinarySearch(planned, jb.j.ID); ok {
			cands = append(cands, jb)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(jobs), func(jb *job) bool { return slices.Contains(cands, jb) })
	slices.SortStableFunc(rest, func(a, b *job) int { return cmp.Compare(b.remaining, a.remaining) })
	n := len(cands)
	cands = append(cands, rest...)
	cands = append(cands, unknown...)

	g := placement.NewGangs(s.Cluster)
	grant := func(jb *job, t allocation.Accelerator, place []allocation.Assignment) {
		d.Allocation[jb.j.ID] = allocation.Grant{GPUs: jb.width, GPUsPerWorker: jb.j.GPUsPerWorker, Shares: map[allocation.Accelerator]float64{t: 1}}
		if d.Placement == nil {
			d.Placement = make(map[string][]allocation.Assignment)
		}
		d.Placement[jb.j.ID] = place
	}
	usable := func(j *policy.Job) func(allocation.Accelerator) bool {
		return func(t allocation.Accelerator) bool { return len(j.Throughput) == 0 || j.Throughput[t] > 0 }
	}
	// Planned jobs first keep their GPUs, then every candidate in order
	// takes what is left.
	for _, jb := range cands[:n] {
		if t, ok := g.Keep(jb.j.Placement, jb.width, usable(jb.j)); ok {
			grant(jb, t, slices.Clone(jb.j.Placement))
		}
	}
	for _, jb := range cands {
		if _, ok := d.Allocation[jb.j.ID]; ok || g.Free() == 0 {
			continue
		}
		if t, ok := g.Keep(jb.j.Placement, jb.width, usable(jb.j)); ok {
			grant(jb, t, slices.Clone(jb.j.Placement))
		} else if _, stays := placement.NewGangs(s.Cluster).Keep(jb.j.Placement, jb.width, usable(jb.j)); !stays {
			// A running job that could keep its place but whose GPUs the
			// jobs ahead of it took is preempted, not moved: Shockwave
			// does not migrate. The others are placed afresh.
			if place, t, ok := g.Place(jb.width, jb.j.Worker(), usable(jb.j)); ok {
				grant(jb, t, place)
			}
		}
	}
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
