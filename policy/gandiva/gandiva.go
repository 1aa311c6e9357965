package gandiva

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("gandiva",
		"Gandiva: time-slicing within affinity classes, packing kept by introspection, migration to defragment, grow-shrink",
		policy.Configured((*Gandiva).check))
}

// Defaults and the packing rule.
const (
	// DefaultQuantum is the paper's time slice.
	DefaultQuantum = 60 * time.Second
	// DefaultMigrationCost is the progress a migrated job is taken to lose
	// to checkpoint and restart, within the 10 to 60 s the paper reports.
	DefaultMigrationCost = 30 * time.Second
	// KeepThreshold is the least norm_sum for which a packed pair is kept:
	// below it the pair does less than time-slicing its two jobs would.
	KeepThreshold = 1.0
)

// eps absorbs rounding when times in seconds are compared.
const eps = 1e-6

// Gandiva is the policy of Gandiva; see the package documentation for the
// rules. It keeps its server sets, pairs and grown jobs in State, which
// Allocate updates: persist it (plain JSON) across restarts. Same snapshot
// and State, same decision. Allocate places every job it runs
// (Decision.Placement), and wakes at the next quantum boundary while some
// set is time-sliced or a trial pair awaits its measurement.
//
// Suspending and resuming a job costs time that whoever runs the jobs
// charges (sim.Simulation.Restart, at every resume); the policy does not
// account for it. MigrationCostSeconds is only what the policy weighs
// against the gain of a migration.
type Gandiva struct {
	// QuantumSeconds is the time slice; zero means 60 s, the paper's.
	QuantumSeconds float64 `json:"quantum_seconds,omitempty"`
	// MigrationCostSeconds is the progress a migrated job loses, in
	// seconds; nil means 30 s, and zero is valid (migration is free).
	MigrationCostSeconds *float64 `json:"migration_cost_seconds,omitempty"`
	// NoPacking turns packing off, leaving time-slicing alone; false, the
	// default, packs as the paper does.
	NoPacking bool `json:"no_packing,omitempty"`
	// State is the policy's memory, updated by Allocate.
	State State `json:"state,omitzero"`
}

// State is Gandiva's memory across calls. Times are in seconds on the
// snapshot's clock.
type State struct {
	// Sets are the server sets that host jobs; servers in none are free.
	Sets []Set `json:"sets,omitempty"`
	// Pairs are the packed pairs on trial or kept, and the reverted ones,
	// which are never tried again while both jobs live.
	Pairs []Pair `json:"pairs,omitempty"`
	// Grown maps an elastic job that grew to the GPUs it runs on.
	Grown map[string]int `json:"grown,omitempty"`
	// Migrations counts the jobs migrated so far.
	Migrations int `json:"migrations,omitempty"`
}

// Set is one server set: whole servers of one accelerator type, tagged with
// the affinity class (GPU count) of the jobs it hosts, and its members in
// round-robin order, the partners of a pair next to each other.
type Set struct {
	Class   int      `json:"class"`
	Servers []string `json:"servers"`
	Jobs    []string `json:"jobs"`
	// SliceStart is when the current time slice began.
	SliceStart float64 `json:"slice_start"`
}

// Status is the state of a packed pair.
type Status string

// The states of a pair.
const (
	// Trial pairs run together until they have run a quantum and are
	// measured.
	Trial Status = "trial"
	// Kept pairs measured a norm_sum of at least KeepThreshold.
	Kept Status = "kept"
	// Reverted pairs measured less, and are never packed again.
	Reverted Status = "reverted"
)

// Pair is two jobs packed on the same GPUs, IDs in ascending order.
type Pair struct {
	Jobs   [2]string `json:"jobs"`
	Status Status    `json:"status"`
	// NormSum is the measurement that decided a kept or reverted pair.
	NormSum float64 `json:"norm_sum,omitempty"`
	// Since is when the pair was decided, or, for a running trial, when it
	// began to run.
	Since float64 `json:"since"`
	// Running tells that a trial pair ran in the last decision.
	Running bool `json:"running,omitempty"`
}

// Name returns "gandiva".
func (*Gandiva) Name() string { return "gandiva" }

// Facts implements policy.Reader: elastic jobs grow; packing needs co-located throughputs, or pairs revert.
func (p *Gandiva) Facts() (uses, needs policy.Facts) {
	if p.NoPacking {
		return policy.FactElastic, 0
	}
	return policy.FactElastic | policy.FactColocation, policy.FactColocation
}

func (p *Gandiva) check() error {
	switch {
	case !(p.QuantumSeconds >= 0) || math.IsInf(p.QuantumSeconds, 0):
		return fmt.Errorf("%w: gandiva: quantum_seconds: %v is not a finite non-negative number", policy.ErrInvalidConfig, p.QuantumSeconds)
	case p.MigrationCostSeconds != nil && (!(*p.MigrationCostSeconds >= 0) || math.IsInf(*p.MigrationCostSeconds, 0)):
		return fmt.Errorf("%w: gandiva: migration_cost_seconds: %v is not a finite non-negative number", policy.ErrInvalidConfig, *p.MigrationCostSeconds)
	}
	return nil
}

func (p *Gandiva) quantum() float64 {
	if p.QuantumSeconds == 0 {
		return DefaultQuantum.Seconds()
	}
	return p.QuantumSeconds
}

func (p *Gandiva) migrationCost() float64 {
	if p.MigrationCostSeconds == nil {
		return DefaultMigrationCost.Seconds()
	}
	return *p.MigrationCostSeconds
}

// NormSum is the introspection measurement of jobs a and b packed on type t:
//
//	norm_sum = Colocated_a[b][t]/Throughput_a[t] + Colocated_b[a][t]/Throughput_b[t]
//
// each term zero when either throughput is missing or zero. A pair is kept
// iff NormSum ≥ KeepThreshold.
func NormSum(a, b *policy.Job, t allocation.Accelerator) float64 {
	term := func(x, y *policy.Job) float64 {
		iso := x.Throughput[t]
		if !(iso > 0) {
			return 0
		}
		return x.Colocated[y.ID][t] / iso
	}
	return term(a, b) + term(b, a)
}

// Targets returns each affinity class's GPU target for rebalancing, from the
// GPUs its jobs request (demand, by class) and the cluster's GPUs:
//
//	target_k = min(demand_k, ⌊demand_k / Σ demand × gpus⌋)
//
// Non-positive demands count as zero.
func Targets(demand map[int]int, gpus int) map[int]int {
	var total int64
	for _, d := range demand {
		total += int64(max(d, 0))
	}
	out := make(map[int]int, len(demand))
	for k, d := range demand {
		d = max(d, 0)
		if total == 0 {
			out[k] = 0
			continue
		}
		out[k] = int(min(int64(d), int64(d)*int64(max(gpus, 0))/total))
	}
	return out
}

// Allocate decides which jobs run for the next slice and where.
func (p *Gandiva) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gandiva: %w", err)
	}
	r := p.begin(s, out)
	r.measure()
	if !r.oversub || p.NoPacking {
		r.dissolve()
	}
	r.rotate()
	if err := r.admit(ctx); err != nil {
		return nil, err
	}
	if r.oversub && !p.NoPacking {
		r.pack()
	}
	d := r.decide()
	p.State = r.state()
	return d, nil
}

// set is a server set during one call.
type set struct {
	Set
	typ  allocation.Accelerator
	gpus int
	need int // GPUs its units request, all running at once
	seq  int // its place in set order, which only ever appends and deletes
	// caps caches capacity per worker size; listed marks a set in the
	// index's open list.
	caps   map[int]int
	listed bool
	at     int // its place in the index's heap of its class
}

// run is the working state of one call.
type run struct {
	p        *Gandiva
	snap     *policy.Snapshot
	now, q   float64
	servers  []allocation.Server // sorted by ID
	srv      map[string]allocation.Server
	types    []allocation.Accelerator
	jobs     map[string]*policy.Job
	req      map[string]int // requested GPUs
	sets     []*set
	owner    map[string]*set
	busy     map[string]bool  // servers in a set
	pairs    []*Pair          // in State order, then new ones
	partner  map[string]*Pair // active (trial or kept) pair of a job
	reverted map[[2]string]bool
	grown    map[string]int
	oversub  bool
	demand   map[int]int // GPUs requested per class, for rebalancing
	migrated int
	out      map[string]string // jobs left out of the call, and why
	seq      int               // sets made so far
	ix       *index            // built by admit
}

func key(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

func (pr *Pair) other(id string) string {
	if pr.Jobs[0] == id {
		return pr.Jobs[1]
	}
	return pr.Jobs[0]
}

// begin builds the call's working state, keeping of State what still
// holds for the snapshot: sets on known servers, members that are active,
// can run there and fit, pairs of active jobs, and reverted pairs of jobs
// still in the snapshot, even if left out of this call. out holds the jobs
// left out by policy.Screen; begin adds the elastic jobs whose minimum no
// type holds.
func (p *Gandiva) begin(s *policy.Snapshot, out map[string]string) *run {
	r := &run{
		p: p, snap: s, now: s.Now.Seconds(), q: p.quantum(), out: out,
		servers:  slices.SortedFunc(slices.Values(s.Cluster.Servers), func(a, b allocation.Server) int { return cmp.Compare(a.ID, b.ID) }),
		srv:      make(map[string]allocation.Server, len(s.Cluster.Servers)),
		types:    s.Cluster.Types(),
		jobs:     make(map[string]*policy.Job, len(s.Jobs)),
		req:      make(map[string]int, len(s.Jobs)),
		owner:    make(map[string]*set, len(s.Jobs)),
		busy:     make(map[string]bool),
		partner:  make(map[string]*Pair),
		reverted: make(map[[2]string]bool, len(p.State.Pairs)),
		grown:    make(map[string]int),
	}
	for _, srv := range r.servers {
		r.srv[srv.ID] = srv
	}
	r.enlist()
	for _, st := range p.State.Sets {
		r.restoreSet(st)
	}
	r.restorePairs(p.State.Pairs)
	for id, n := range p.State.Grown {
		if r.jobs[id] != nil && n > 0 {
			r.grown[id] = n
		}
	}
	for _, ss := range r.sets {
		r.normalize(ss)
	}
	return r
}

// enlist takes in the snapshot's jobs with the GPUs each requests, an
// elastic job its minimum in whole workers, leaving out the elastic jobs
// whose minimum no type holds (Screen checked the others' GPU counts), and
// tells whether their requests oversubscribe the cluster.
func (r *run) enlist() {
	demand := 0
	census := policy.NewCensus(r.snap.Cluster)
	for i := range r.snap.Jobs {
		j := &r.snap.Jobs[i]
		g := j.GPUs
		if g == 0 { // only elastic jobs: start from their minimum, whole workers
			g = max(j.Elastic.MinGPUs, j.Worker())
		}
		if j.Elastic != nil { // Screen checked the others' GPU counts
			c := *j
			c.GPUs = g
			if err := census.Runnable(&c); err != nil {
				if r.out == nil {
					r.out = make(map[string]string)
				}
				r.out[j.ID] = policy.Reason(err)
				continue
			}
		}
		r.jobs[j.ID], r.req[j.ID] = j, g
		demand += g
	}
	r.oversub = demand > r.snap.Cluster.TotalGPUs()
}

// restoreSet keeps a saved set if its servers are known, free, distinct,
// of one type and have GPUs, and its slice start is finite, with those of
// its members that are active, can run on its type and fit; a set no
// member is left in frees its servers.
func (r *run) restoreSet(st Set) {
	ss := r.restoreServers(st)
	if ss == nil {
		return
	}
	for _, id := range st.Jobs {
		j := r.jobs[id]
		if j == nil || r.owner[id] != nil || !(j.Throughput[ss.typ] > 0) || r.capacity(ss.Servers, j.Worker()) < r.req[id] {
			continue
		}
		ss.Jobs = append(ss.Jobs, id)
		r.owner[id] = ss
	}
	if len(ss.Jobs) == 0 {
		return // every member left: the servers are free again
	}
	for _, id := range ss.Servers {
		r.busy[id] = true
	}
	ss.seq, r.seq = r.seq, r.seq+1
	r.sets = append(r.sets, ss)
}

// restoreServers returns a saved set's servers, type and GPUs as a set
// without members, or nil if they no longer make one set (or its slice
// start is not finite), so that a stale State cannot overcommit a server.
func (r *run) restoreServers(st Set) *set {
	ss := &set{Set: Set{Class: st.Class, SliceStart: st.SliceStart, Servers: slices.Clone(st.Servers)}}
	if len(st.Servers) == 0 {
		return nil
	}
	for i, id := range st.Servers {
		srv, found := r.srv[id]
		if !found || r.busy[id] || srv.GPUs == 0 || slices.Contains(st.Servers[:i], id) || (i > 0 && srv.Accelerator != ss.typ) {
			return nil
		}
		ss.typ, ss.gpus = srv.Accelerator, ss.gpus+srv.GPUs
	}
	if math.IsNaN(ss.SliceStart) || math.IsInf(ss.SliceStart, 0) {
		return nil
	}
	return ss
}

// restorePairs keeps the reverted pairs of jobs still in the snapshot, and
// the active pairs whose members are both scheduled, share a set and still
// pair there. Reverted pairs go first, so that a pair listed both ways
// stays apart. The pairs kept live in one array, sized so that it never
// moves.
func (r *run) restorePairs(saved []Pair) {
	buf := make([]Pair, 0, len(saved))
	var active []Pair
	for _, pr := range saved {
		a, b := pr.Jobs[0], pr.Jobs[1]
		if a == b || !r.present(a) || !r.present(b) || (pr.Status != Reverted && (r.jobs[a] == nil || r.jobs[b] == nil)) {
			continue
		}
		pr.Jobs = key(a, b)
		switch pr.Status {
		case Reverted:
			if !r.reverted[pr.Jobs] {
				r.reverted[pr.Jobs] = true
				buf = append(buf, pr)
			}
		case Trial, Kept:
			active = append(active, pr)
		}
	}
	for _, pr := range active {
		a, b := pr.Jobs[0], pr.Jobs[1]
		if r.reverted[pr.Jobs] || r.partner[a] != nil || r.partner[b] != nil || r.owner[a] == nil ||
			r.owner[a] != r.owner[b] || !r.pairable(r.owner[a], a, b) {
			continue // dissolved: a member left, moved or changed
		}
		buf = append(buf, pr)
		c := &buf[len(buf)-1]
		r.partner[a], r.partner[b] = c, c
	}
	r.pairs = make([]*Pair, len(buf))
	for i := range buf {
		r.pairs[i] = &buf[i]
	}
}

// present reports whether job id is in the snapshot, scheduled in this call
// or left out of it.
func (r *run) present(id string) bool {
	_, left := r.out[id]
	return left || r.jobs[id] != nil
}

// normalize puts partners next to each other, recomputes the set's need,
// and retags a set none of whose members is of its class with the class of
// its first member.
func (r *run) normalize(s *set) {
	out := make([]string, 0, len(s.Jobs))
	done := make(map[string]bool, len(s.Jobs))
	s.need = 0
	for _, id := range s.Jobs {
		if done[id] {
			continue
		}
		out, done[id] = append(out, id), true
		s.need += r.req[id]
		if pr := r.partner[id]; pr != nil {
			o := pr.other(id)
			out, done[o] = append(out, o), true
		}
	}
	s.Jobs = out
	if !slices.ContainsFunc(s.Jobs, func(id string) bool { return r.req[id] == s.Class }) {
		s.Class = r.req[s.Jobs[0]]
	}
}

// units returns the set's units in round-robin order: a job alone or a
// packed pair.
func (r *run) units(s *set) [][]string {
	var us [][]string
	for i := 0; i < len(s.Jobs); i++ {
		id := s.Jobs[i]
		if pr := r.partner[id]; pr != nil && i+1 < len(s.Jobs) && s.Jobs[i+1] == pr.other(id) {
			us = append(us, s.Jobs[i:i+2])
			i++
			continue
		}
		us = append(us, s.Jobs[i:i+1])
	}
	return us
}

// running splits the set's units into those that run now, in round-robin
// order while their GPUs fit, and the others.
func (r *run) running(s *set) (ran, rest [][]string) {
	free := s.gpus
	for _, u := range r.units(s) {
		if g := r.req[u[0]]; g <= free {
			ran, free = append(ran, u), free-g
		} else {
			rest = append(rest, u)
		}
	}
	return ran, rest
}

func (s *set) sliced() bool { return s.need > s.gpus }

// more adds n GPUs to the set's need; if that makes it time-sliced, its
// first slice starts now.
func (r *run) more(s *set, n int) {
	if !s.sliced() && s.need+n > s.gpus {
		s.SliceStart = r.now
	}
	s.need += n
	r.needs(s)
}

// measure reads the introspection measurement of every trial pair that has
// run for a quantum, and keeps or reverts it.
func (r *run) measure() {
	for _, pr := range r.pairs {
		if pr.Status != Trial || !pr.Running || r.now < pr.Since+r.q-eps {
			continue
		}
		a, b := r.jobs[pr.Jobs[0]], r.jobs[pr.Jobs[1]]
		s := r.owner[a.ID]
		pr.NormSum, pr.Since, pr.Running = NormSum(a, b, s.typ), r.now, false
		if pr.NormSum >= KeepThreshold {
			pr.Status = Kept
			continue
		}
		pr.Status = Reverted
		r.reverted[pr.Jobs] = true
		delete(r.partner, a.ID)
		delete(r.partner, b.ID)
		r.more(s, r.req[a.ID])
	}
}

// dissolve unpacks every pair: packing is only for an oversubscribed
// cluster.
func (r *run) dissolve() {
	kept := r.pairs[:0]
	for _, pr := range r.pairs {
		if pr.Status == Reverted {
			kept = append(kept, pr)
			continue
		}
		delete(r.partner, pr.Jobs[0])
		delete(r.partner, pr.Jobs[1])
		r.more(r.owner[pr.Jobs[0]], r.req[pr.Jobs[0]])
	}
	r.pairs = kept
}

// rotate ends the slices that are over: the units that ran go to the back.
// A set that is not time-sliced starts a slice now, for when it becomes so.
func (r *run) rotate() {
	for _, s := range r.sets {
		if !s.sliced() {
			s.SliceStart = r.now
			continue
		}
		if r.now < s.SliceStart+r.q-eps {
			continue
		}
		ran, rest := r.running(s)
		s.Jobs = slices.Concat(slices.Concat(rest...), slices.Concat(ran...))
		s.SliceStart = r.now
	}
}

// admit places the jobs that are in no set, oldest first, after shrinking
// every grown job: suspended members of sets are resumed by rotation before
// new jobs can oversubscribe their sets.
func (r *run) admit(ctx context.Context) error {
	var queue []*policy.Job
	for i := range r.snap.Jobs {
		if j := &r.snap.Jobs[i]; r.owner[j.ID] == nil && r.jobs[j.ID] != nil {
			queue = append(queue, j)
		}
	}
	if len(queue) == 0 {
		return nil
	}
	clear(r.grown)
	r.index()
	slices.SortFunc(queue, func(a, b *policy.Job) int { return cmp.Or(cmp.Compare(a.Arrival, b.Arrival), cmp.Compare(a.ID, b.ID)) })
	failed := make(map[string]bool) // migration plans that failed, by class and types
	for i, j := range queue {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("gandiva: %w", err)
			}
		}
		r.place(j, failed)
	}
	r.ix = nil // what follows changes sets without keeping it
	return nil
}

// pack pairs the unpaired jobs of equal GPU count of each time-sliced set,
// in round-robin order, never a reverted pair, as trials, until the set is
// no longer time-sliced. The pair runs in workers of the least common
// multiple of both jobs' worker sizes, which the set must hold (pairable).
func (r *run) pack() {
	for _, s := range r.sets {
		for i := 0; i < len(s.Jobs) && s.sliced(); i++ {
			a := s.Jobs[i]
			if r.partner[a] != nil {
				continue
			}
			for k := i + 1; k < len(s.Jobs); k++ {
				b := s.Jobs[k]
				if r.partner[b] != nil || !r.pairable(s, a, b) || r.reverted[key(a, b)] {
					continue
				}
				pr := &Pair{Jobs: key(a, b), Status: Trial, Since: r.now}
				r.pairs = append(r.pairs, pr)
				r.partner[a], r.partner[b] = pr, pr
				s.Jobs = slices.Insert(slices.Delete(s.Jobs, k, k+1), i+1, b)
				s.need -= r.req[a]
				break
			}
		}
	}
}

// decide grows elastic jobs when nothing waits, places the units that run
// and builds the decision.
func (r *run) decide() *policy.Decision {
	d := &policy.Decision{Policy: r.p.Name(), Unscheduled: r.out}
	waiting := len(r.owner) < len(r.jobs) || slices.ContainsFunc(r.sets, (*set).sliced)
	if waiting {
		clear(r.grown)
	} else {
		r.grow()
	}
	wake := math.Inf(1)
	runs := make(map[*Pair]bool)
	var round placement.Round
	for _, s := range r.sets {
		if s.sliced() {
			wake = math.Min(wake, s.SliceStart+r.q)
		}
		ran, _ := r.running(s)
		// Units that can keep their GPUs go first, so that they do; the
		// set has room for all that run. Counts fit; workers of several
		// GPUs may not, when a set is time-sliced: such a unit waits.
		where := r.layout(s, ran)
		for _, u := range ran {
			as, ok := where[u[0]]
			if !ok {
				continue
			}
			run := placement.Run{Job: u[0], Accelerator: s.typ, Assignments: as}
			if len(u) == 2 {
				run.Job, run.Partner = min(u[0], u[1]), max(u[0], u[1])
				runs[r.partner[u[0]]] = true
			}
			round.Runs = append(round.Runs, run)
		}
	}
	d.Allocation, d.Placement = round.Allocation(), round.Placement()
	for _, pr := range r.pairs {
		if pr.Status != Trial {
			continue
		}
		switch {
		case !runs[pr]:
			pr.Running = false
		case !pr.Running:
			pr.Running, pr.Since = true, r.now
		}
		if pr.Running {
			wake = math.Min(wake, pr.Since+r.q)
		}
	}
	switch {
	case math.IsInf(wake, 1):
	case wake >= math.MaxInt64/1e9:
		d.Wake = math.MaxInt64
	default:
		d.Wake = max(time.Duration(math.Round(wake*1e9)), r.snap.Now+time.Nanosecond)
	}
	return d
}

// grow doubles elastic jobs that run alone, up to their maximum, on the
// idle GPUs of their own set; jobs grown before keep their size first. A
// job grows by whole workers (doubling keeps them whole; the maximum is
// rounded down to them) and only while the set can still lay out all its
// units in whole workers.
func (r *run) grow() {
	prev := r.grown
	r.grown = make(map[string]int)
	for _, s := range r.sets {
		idle := s.gpus - s.need
		var alone []string
		for _, u := range r.units(s) {
			if j := r.jobs[u[0]]; len(u) == 1 && j.Elastic != nil {
				alone = append(alone, u[0])
			}
		}
		slices.Sort(alone)
		limit := func(id string) int {
			m := s.gpus
			if x := r.jobs[id].Elastic.MaxGPUs; x > 0 {
				m = x
			}
			return m - m%r.jobs[id].Worker()
		}
		for _, id := range alone {
			n := min(prev[id], limit(id))
			if n > r.req[id] && n-r.req[id] <= idle && n%r.jobs[id].Worker() == 0 && r.resize(s, id, n) {
				idle -= n - r.req[id]
			}
		}
		for _, id := range alone {
			if r.grown[id] > 0 {
				continue
			}
			cur := r.req[id]
			for {
				next := min(2*cur, limit(id))
				if next <= cur || next-cur > idle || !r.resize(s, id, next) {
					break
				}
				idle, cur = idle-(next-cur), next
			}
		}
	}
}

// resize grows job id of set s to n GPUs if the set still lays out all its
// units in whole workers, and reports whether it did.
func (r *run) resize(s *set, id string, n int) bool {
	old, had := r.grown[id]
	r.grown[id] = n
	if r.holds(s) {
		return true
	}
	if had {
		r.grown[id] = old
	} else {
		delete(r.grown, id)
	}
	return false
}

// state returns the State to keep for the next call.
func (r *run) state() State {
	st := State{Migrations: r.p.State.Migrations + r.migrated, Sets: make([]Set, 0, len(r.sets)), Pairs: make([]Pair, 0, len(r.pairs))}
	for _, s := range r.sets {
		st.Sets = append(st.Sets, s.Set)
	}
	for _, pr := range r.pairs {
		st.Pairs = append(st.Pairs, *pr)
	}
	if len(r.grown) > 0 {
		st.Grown = r.grown
	}
	return st
}
