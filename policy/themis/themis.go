package themis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/market"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("themis",
		"Themis: finish-time-fair leases, auctioned to the jobs with the worst ρ by partial allocation",
		factory)
}

// factory builds Themis composed with the round mechanism, whose rounds are
// Themis' own.
func factory(config []byte) (policy.Policy, error) {
	p, err := policy.Configured((*Themis).check)(config)
	if err != nil {
		return nil, err
	}
	return &policy.Rounds{Shares: p, Mechanism: placement.Mechanism{Round: p.(*Themis).round()}}, nil
}

// Defaults.
const (
	// DefaultFilter is the paper's fairness knob f.
	DefaultFilter = 0.8
	// DefaultLeaseRounds leases GPUs for 10 rounds of DefaultRound, 20
	// minutes, within the paper's 10 to 20.
	DefaultLeaseRounds = 10
	DefaultRound       = 120 * time.Second
)

// eps is the share below which nothing is leased.
const eps = 1e-9

// Themis is the policy of Themis. A job's finish-time fairness is
//
//	ρ = T_shared / T_alone,  T_alone = X·max(1, N/G),
//	T_shared = (now − arrival) + X_left·max(1, N/G),
//
// with X and X_left its whole and remaining run time alone at its best
// throughput, N the active jobs and G the GPUs: the finish time it would
// reach with a 1/N share from now on, against the one it would have had
// with 1/N from its arrival.
//
// GPUs are leased. Whenever some are free (at a lease's expiry, or when
// jobs arrive or finish), they are offered to the ⌈(1−f)·n⌉ jobs with the
// worst ρ (at least one), of the n jobs that could use more. Each of them
// values a GPU of type t by how much it lowers its ρ, to first order in
// proportion to ρ·thr_t/(w·thr_best) for a gang of w GPUs. The
// partial-allocation auction (market.Fisher.PartialAllocation) finds the
// proportional-fair division A* of the free GPUs and lets bidder i keep only
// the fraction cᵢ = Π_{j≠i} V_j(A*) / Π_{j≠i} V_j(A*₋ᵢ) of its bundle, the
// hidden payment that makes truthful bids the best ones. What the payments
// leave goes to the other jobs, divided proportionally fairly, and what
// they cannot use goes back to the bidders. A bundle of x GPUs of type t is
// leased as the time share x/w of the job's gang on t, until the lease
// expires.
//
// The decision holds every live lease as time shares (rows sum to at most
// 1), for a round mechanism such as placement.Mechanism to place, and wakes
// at the next expiry. Objective is the worst ρ. Themis keeps its leases in
// State; persist it (plain JSON) across restarts. Same snapshot and State,
// same decision.
type Themis struct {
	// Filter is the fairness knob f in [0,1]: the free GPUs are offered to
	// the worst 1−f of the jobs; 0 offers them to every job, values near 1
	// to the single worst. Nil means 0.8.
	Filter *float64 `json:"filter,omitempty"`
	// LeaseRounds and RoundSeconds set a lease's length; zero means 10
	// rounds of 120 s.
	LeaseRounds  int     `json:"lease_rounds,omitempty"`
	RoundSeconds float64 `json:"round_seconds,omitempty"`
	// State holds the leases, updated by Allocate.
	State State `json:"state,omitzero"`
}

// State is Themis's memory: the live leases.
type State struct {
	Leases []Lease `json:"leases,omitempty"`
}

// Lease grants Job the time share Share of its gang on Accelerator until
// Expires, in seconds on the snapshot's clock.
type Lease struct {
	Job         string                 `json:"job"`
	Accelerator allocation.Accelerator `json:"accelerator"`
	Share       float64                `json:"share"`
	Expires     float64                `json:"expires"`
}

// Name returns "themis".
func (*Themis) Name() string { return "themis" }

// Facts implements policy.Reader: ρ needs each job's length (unknown: no bid); bids weigh types by speed.
func (*Themis) Facts() (uses, needs policy.Facts) {
	return policy.FactHeterogeneity | policy.FactLength, policy.FactLength
}

func (p *Themis) check() error {
	switch {
	case p.Filter != nil && !(*p.Filter >= 0 && *p.Filter <= 1):
		return fmt.Errorf("%w: themis: filter: %v is not in [0, 1]", policy.ErrInvalidConfig, *p.Filter)
	case p.LeaseRounds < 0:
		return fmt.Errorf("%w: themis: lease_rounds: %d is negative", policy.ErrInvalidConfig, p.LeaseRounds)
	case !(p.RoundSeconds >= 0) || math.IsInf(p.RoundSeconds, 0):
		return fmt.Errorf("%w: themis: round_seconds: %v is not a finite non-negative number", policy.ErrInvalidConfig, p.RoundSeconds)
	}
	return nil
}

func (p *Themis) filter() float64 {
	if p.Filter == nil {
		return DefaultFilter
	}
	return *p.Filter
}

func (p *Themis) lease() float64 {
	round := p.RoundSeconds
	if round == 0 {
		round = DefaultRound.Seconds()
	}
	return float64(cmp.Or(p.LeaseRounds, DefaultLeaseRounds)) * round
}

// round returns the length of the mechanism's rounds: RoundSeconds, or
// DefaultRound when zero, at most a lease, at least 1 ns and within a
// Duration.
func (p *Themis) round() time.Duration {
	if p.RoundSeconds == 0 {
		return DefaultRound
	}
	return time.Duration(max(1, min(p.RoundSeconds*1e9, p.lease()*1e9, 1<<62)))
}

// job is what Themis knows about one job.
type job struct {
	j    *policy.Job
	best float64 // steps per second on its best type
	rho  float64
	room float64 // the share it may still get: 1 − leased
	// speed is its throughput on each type it can run on: with a
	// positive Throughput and GPUs for its gang
	speed map[allocation.Accelerator]float64
	// unknown is set for a job whose length is unknown: its ρ cannot be
	// estimated, and counts as 1.
	unknown bool
}

// Rho returns the finish-time fairness of each job of s, by ID, as Themis
// estimates it (see Themis). Every job needs StepsTotal and a positive
// Throughput.
func Rho(s *policy.Snapshot) (map[string]float64, error) {
	for i := range s.Jobs {
		if j := &s.Jobs[i]; j.StepsTotal <= 0 || best(j) <= 0 || j.GPUs < 1 {
			return nil, fmt.Errorf("%w: job %q: themis needs gpus, steps_total and a positive throughput to estimate ρ", policy.ErrInvalidSnapshot, j.ID)
		}
	}
	jobs := estimate(s, nil)
	rho := make(map[string]float64, len(jobs))
	for _, jb := range jobs {
		rho[jb.j.ID] = jb.rho
	}
	return rho, nil
}

// best returns the job's best throughput.
func best(j *policy.Job) float64 {
	b := 0.0
	for _, x := range j.Throughput {
		b = math.Max(b, x)
	}
	return b
}

// estimate returns what Themis knows of the jobs of s but those left out
// (the keys of out), which have a positive GPU count and throughput. A job
// whose length is unknown gets ρ = 1 and is marked unknown.
func estimate(s *policy.Snapshot, out map[string]string) []*job {
	n := 0
	for i := range s.Jobs {
		if _, left := out[s.Jobs[i].ID]; !left {
			n++
		}
	}
	contention := math.Max(1, float64(n)/float64(max(s.Cluster.TotalGPUs(), 1)))
	now := s.Now.Seconds()
	gpus := make(map[allocation.Accelerator]int) // Cluster.GPUs scans every server
	for _, t := range s.Cluster.Types() {
		gpus[t] = s.Cluster.GPUs(t)
	}
	jobs := make([]*job, 0, n)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if _, left := out[j.ID]; left {
			continue
		}
		best := best(j)
		jb := &job{j: j, best: best, rho: 1, room: 1, speed: map[allocation.Accelerator]float64{}, unknown: j.StepsTotal <= 0}
		if !jb.unknown {
			alone := j.StepsTotal / best * contention
			left := math.Max(j.StepsTotal-j.StepsDone, 0) / best * contention
			jb.rho = (math.Max(now-j.Arrival.Seconds(), 0) + left) / alone
		}
		for t, n := range gpus {
			if j.Throughput[t] > 0 && n >= j.GPUs {
				jb.speed[t] = j.Throughput[t]
			}
		}
		jobs = append(jobs, jb)
	}
	return jobs
}

// Allocate expires leases, auctions what is free and returns the leases.
func (p *Themis) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("themis: %w", err)
	}
	out = leaveOut(s, out)
	jobs := estimate(s, out)
	now := s.Now.Seconds()
	leases, free := p.keep(s.Cluster, jobs, now)
	leases, warnings, err := p.lend(ctx, s.Cluster.Types(), jobs, leases, free, now)
	if err != nil {
		return nil, err
	}
	p.State.Leases = leases
	d := p.decide(leases, jobs)
	d.Unscheduled, d.Warnings = out, warnings
	return d, nil
}

// leaveOut adds to out, the jobs Screen left out, those Themis cannot
// lease to: it leases time on gangs of a fixed size, so an elastic job
// needs a GPU count that some type holds.
func leaveOut(s *policy.Snapshot, out map[string]string) map[string]string {
	census := policy.NewCensus(s.Cluster)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		why := ""
		if j.GPUs < 1 {
			why = fmt.Sprintf("gpus: %d; themis leases time on gangs of a fixed size", j.GPUs)
		} else if j.Elastic == nil {
			// Screen checked that its GPU count fits.
		} else if err := census.Runnable(j); err != nil {
			why = policy.Reason(err)
		}
		if why != "" {
			if out == nil {
				out = make(map[string]string)
			}
			out[j.ID] = why
		}
	}
	return out
}

// keep returns the live leases of active jobs, that still fit in the
// cluster and in the job's time (a State set by hand may hold more than a
// job's whole time), taking their shares from the jobs' room, and the GPUs of each type they do not
// hold, which are free.
func (p *Themis) keep(c allocation.Cluster, jobs []*job, now float64) ([]Lease, map[allocation.Accelerator]float64) {
	byID := make(map[string]*job, len(jobs))
	for _, jb := range jobs {
		byID[jb.j.ID] = jb
	}
	free := make(map[allocation.Accelerator]float64)
	for _, t := range c.Types() {
		free[t] = float64(c.GPUs(t))
	}
	var leases []Lease
	for _, l := range p.State.Leases {
		jb := byID[l.Job]
		if jb == nil || l.Expires <= now || free[l.Accelerator] < l.Share*float64(jb.j.GPUs)-eps || l.Share > jb.room+eps {
			continue
		}
		leases = append(leases, l)
		jb.room -= l.Share
		free[l.Accelerator] -= l.Share * float64(jb.j.GPUs)
	}
	return leases, free
}

// lend leases the free GPUs, appending to leases: the auction among the
// offered jobs, then the hidden payments to the jobs that were not
// offered, and what they cannot use back to the bidders. It returns the
// leases and the warnings of approximate markets.
func (p *Themis) lend(ctx context.Context, types []allocation.Accelerator, jobs []*job, leases []Lease, free map[allocation.Accelerator]float64, now float64) ([]Lease, []string, error) {
	offered, others := p.offer(jobs)
	left := make([]float64, len(types))
	for k, t := range types {
		left[k] = math.Max(free[t], 0)
	}
	var warnings []string
	if len(offered) > 0 {
		sp, err := auction(ctx, offered, types, free)
		if err != nil {
			return nil, nil, err
		}
		leases = p.grant(leases, sp.got, types, now)
		left, warnings = sp.left, sp.warn("auction", warnings)
	}
	// The hidden payments go to the jobs that were not offered, and what
	// they cannot use back to the bidders.
	for _, group := range [][]*job{others, offered} {
		if total(left) <= eps {
			break
		}
		sp, err := divide(ctx, usable(group, types, left), types, left)
		if err != nil {
			return nil, nil, err
		}
		leases = p.grant(leases, sp.got, types, now)
		left, warnings = sp.left, sp.warn("division of the hidden payments", warnings)
	}
	return leases, warnings, nil
}

// offer returns the jobs that may bid, the worst ρ first, and the others
// that could use more GPUs. A job of unknown length cannot state its ρ: it
// never bids, and is among the others.
func (p *Themis) offer(jobs []*job) (offered, others []*job) {
	var open, unknown []*job
	for _, jb := range jobs {
		switch {
		case jb.room <= eps || len(jb.speed) == 0:
		case jb.unknown:
			unknown = append(unknown, jb)
		default:
			open = append(open, jb)
		}
	}
	slices.SortStableFunc(open, func(a, b *job) int { return cmp.Or(cmp.Compare(b.rho, a.rho), cmp.Compare(a.j.ID, b.j.ID)) })
	n := int(math.Ceil((1 - p.filter()) * float64(len(open))))
	n = min(max(n, 1), len(open))
	return open[:n], append(open[n:len(open):len(open)], unknown...)
}

// usable returns the jobs of group that value some good with supply.
func usable(group []*job, types []allocation.Accelerator, supply []float64) []*job {
	var out []*job
	for _, jb := range group {
		if jb.room <= eps {
			continue
		}
		for k, t := range types {
			if supply[k] > eps && jb.speed[t] > 0 {
				out = append(out, jb)
				break
			}
		}
	}
	return out
}

// fisher builds the Fisher market of jobs over the types with supply:
// utility ρ·thr_t/(w·thr_best) per GPU of type t. It returns the market and
// the types its goods stand for.
func fisher(jobs []*job, types []allocation.Accelerator, supply []float64) (market.Fisher, []int) {
	var goods []int
	for k, t := range types {
		if supply[k] <= eps {
			continue
		}
		for _, jb := range jobs {
			if jb.speed[t] > 0 {
				goods = append(goods, k)
				break
			}
		}
	}
	m := market.Fisher{Budgets: make([]float64, len(jobs)), Utilities: make([][]float64, len(jobs)), Supplies: make([]float64, len(goods))}
	for g, k := range goods {
		m.Supplies[g] = supply[k]
	}
	for i, jb := range jobs {
		m.Budgets[i] = 1
		m.Utilities[i] = make([]float64, len(goods))
		for g, k := range goods {
			m.Utilities[i][g] = jb.rho * jb.speed[types[k]] / (float64(jb.j.GPUs) * jb.best)
		}
	}
	return m, goods
}

// split is a division of GPUs among jobs: each job's GPUs per type, the
// supply left, and the market's duality gap (0 when exact).
type split struct {
	got   map[*job][]float64
	left  []float64
	gap   float64
	buyer int
}

// warn appends a warning about an approximate market to warnings.
func (sp split) warn(what string, warnings []string) []string {
	if sp.gap == 0 {
		return warnings
	}
	return append(warnings, fmt.Sprintf("themis: %s among %d jobs: approximate equilibrium, Eisenberg–Gale duality gap %.3g", what, sp.buyer, sp.gap))
}

// auction runs the partial-allocation auction of the free GPUs among the
// bidders.
func auction(ctx context.Context, bidders []*job, types []allocation.Accelerator, free map[allocation.Accelerator]float64) (split, error) {
	supply := make([]float64, len(types))
	for k, t := range types {
		supply[k] = math.Max(free[t], 0)
	}
	bidders = usable(bidders, types, supply)
	if len(bidders) == 0 {
		return split{left: supply}, nil
	}
	m, goods := fisher(bidders, types, supply)
	pa, err := m.PartialAllocation(ctx)
	if err != nil {
		return split{}, fmt.Errorf("themis: %w", err)
	}
	got, left := settle(bidders, goods, pa.Allocation, types, supply)
	return split{got, left, pa.Gap, len(bidders)}, nil
}

// divide splits supply among jobs proportionally fairly, without payments.
func divide(ctx context.Context, jobs []*job, types []allocation.Accelerator, supply []float64) (split, error) {
	if len(jobs) == 0 {
		return split{left: supply}, nil
	}
	m, goods := fisher(jobs, types, supply)
	eq, err := m.Solve(ctx)
	if err != nil {
		return split{}, fmt.Errorf("themis: %w", err)
	}
	got, left := settle(jobs, goods, eq.Allocation, types, supply)
	return split{got, left, eq.Gap, len(jobs)}, nil
}

// settle caps each job's bundle at the share it may still get (a gang
// cannot run more than all the time), and returns the bundles, per type,
// and the supply left.
func settle(jobs []*job, goods []int, x [][]float64, types []allocation.Accelerator, supply []float64) (map[*job][]float64, []float64) {
	left := slices.Clone(supply)
	got := make(map[*job][]float64, len(jobs))
	for i, jb := range jobs {
		bundle := make([]float64, len(types))
		share := 0.0
		for g, k := range goods {
			bundle[k] = math.Max(x[i][g], 0)
			share += bundle[k] / float64(jb.j.GPUs)
		}
		if share > jb.room {
			for k := range bundle {
				bundle[k] *= jb.room / share
			}
		}
		for k := range bundle {
			left[k] = math.Max(left[k]-bundle[k], 0)
		}
		got[jb] = bundle
	}
	return got, left
}

// grant turns bundles into leases.
func (p *Themis) grant(leases []Lease, got map[*job][]float64, types []allocation.Accelerator, now float64) []Lease {
	jobs := make([]*job, 0, len(got))
	for jb := range got {
		jobs = append(jobs, jb)
	}
	slices.SortFunc(jobs, func(a, b *job) int { return cmp.Compare(a.j.ID, b.j.ID) })
	for _, jb := range jobs {
		for k, x := range got[jb] {
			share := math.Min(x/float64(jb.j.GPUs), jb.room)
			if share <= eps {
				continue
			}
			jb.room -= share
			leases = append(leases, Lease{Job: jb.j.ID, Accelerator: types[k], Share: share, Expires: now + p.lease()})
		}
	}
	return leases
}

func total(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// decide turns the leases into time shares, waking at the next expiry.
func (p *Themis) decide(leases []Lease, jobs []*job) *policy.Decision {
	d := &policy.Decision{Policy: p.Name(), Allocation: allocation.Allocation{}}
	gpus := make(map[string]int, len(jobs))
	for _, jb := range jobs {
		gpus[jb.j.ID] = jb.j.GPUs
		if !jb.unknown {
			d.Objective = math.Max(d.Objective, jb.rho)
		}
	}
	next := math.Inf(1)
	for _, l := range leases {
		g, ok := d.Allocation[l.Job]
		if !ok {
			g = allocation.Grant{GPUs: gpus[l.Job], Shares: map[allocation.Accelerator]float64{}}
		}
		g.Shares[l.Accelerator] = math.Min(g.Shares[l.Accelerator]+l.Share, 1)
		d.Allocation[l.Job] = g
		next = math.Min(next, l.Expires)
	}
	if ns := math.Round(next * 1e9); ns < math.MaxInt64 { // beyond: never
		d.Wake = time.Duration(ns)
	}
	return d
}
