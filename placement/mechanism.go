package placement

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dlsched/dlsched/allocation"
)

// DefaultRound is the length of a round when Mechanism.Round is zero: 360 s,
// Gavel's default time_per_iteration.
const DefaultRound = 360 * time.Second

// Mechanism is Gavel's round-based mechanism: it turns an allocation's time
// shares into the concrete placement of the coming round, running first the
// jobs that are furthest behind their shares. The zero value uses
// DefaultRound. A Mechanism holds no state; its memory is the Ledger passed
// to and returned by Next, so it is safe for concurrent use.
type Mechanism struct {
	// Round is the length of a round, the time credited to every job that
	// runs in it. Zero means DefaultRound (360 s); negative is an error.
	Round time.Duration
}

// Ledger is the mechanism's memory between rounds: what each job has
// received of its shares and where it ran last. The zero value is an empty
// ledger, right for the first round. Next never modifies the Ledger it is
// given and returns a new one, which the caller passes to the next call;
// the Ledger marshals to JSON and back without loss, so a scheduler can
// persist it and resume with bit-identical rounds.
type Ledger struct {
	// Accounts holds one account per job that has a positive share, and one
	// per co-located pair with a positive pair share, sorted by Job then
	// Partner (a single job's account, with an empty Partner, comes first).
	// Next accepts them in any order. Seed also adds accounts with no
	// Types for jobs that run now.
	Accounts []Account `json:"accounts,omitempty"`
	// Placement is where jobs run now, by job ID, with assignments sorted
	// by server ID: where Next placed them for the last round, or, for a
	// scheduler that starts or restarts, where the cluster runs them (see
	// Seed). Both members of a co-located pair list the same assignments.
	// A job keeps these GPUs in the next round if it runs again on the same
	// type, they are free and they hold whole workers of its
	// Grant.GPUsPerWorker (a lease extension). Jobs that do not run are
	// absent.
	Placement map[string][]allocation.Assignment `json:"placement,omitempty"`
	// Rounds is the number of rounds planned with this ledger so far.
	Rounds int64 `json:"rounds"`
}

// Seed returns a copy of l in which every job absent from l.Placement takes
// its placement from current, where the cluster runs it now (e.g. the
// policy.Job.Placement of a snapshot); jobs l already places keep theirs,
// and empty entries of current are ignored. A scheduler that starts, or
// restarts without its saved Ledger, seeds an empty Ledger so that running
// jobs keep exactly their GPUs when they run again (lease extension)
// instead of all being moved.
//
// So that Next extends these leases as it would have without the restart,
// Seed also adds, for every seeded job that has no account of its own in l,
// an account that ran and holds no shares yet: Next resets it like a new
// account but extends its lease among the first, before a split gang
// decides whether to move to a server with room for it whole. Co-located
// pairs cannot be told from two jobs on the same servers, so a pair keeps
// its GPUs as a job that ran in another account does (after the others,
// if they are free). l is not modified; Next validates the assignments.
func (l Ledger) Seed(current map[string][]allocation.Assignment) Ledger {
	out := Ledger{Rounds: l.Rounds}
	if l.Accounts != nil {
		out.Accounts = make([]Account, len(l.Accounts))
		for i, a := range l.Accounts {
			a.Types = slices.Clone(a.Types)
			out.Accounts[i] = a
		}
	}
	for job, as := range l.Placement {
		out.place(job, slices.Clone(as))
	}
	var seeded []string
	for job, as := range current {
		if _, ok := l.Placement[job]; !ok && len(as) > 0 {
			out.place(job, sortedCopy(as))
			seeded = append(seeded, job)
		}
	}
	slices.Sort(seeded)
	out.Accounts = append(out.Accounts, ranAccounts(out.Placement, seeded, l.Accounts)...)
	slices.SortFunc(out.Accounts, func(x, y Account) int { return compareKeys(x.Job, x.Partner, y.Job, y.Partner) })
	return out
}

// place records as for job, making the map on first use so that seeding
// with nothing leaves a zero Ledger zero.
func (l *Ledger) place(job string, as []allocation.Assignment) {
	if l.Placement == nil {
		l.Placement = make(map[string][]allocation.Assignment)
	}
	l.Placement[job] = as
}

// ranAccounts returns the accounts Seed adds: one that ran on its GPUs for
// each seeded job that has no account of its own among have.
func ranAccounts(place map[string][]allocation.Assignment, seeded []string, have []Account) []Account {
	had := make(map[string]bool, len(have))
	for _, a := range have {
		if a.Partner == "" {
			had[a.Job] = true
		}
	}
	var out []Account
	for _, job := range seeded {
		if had[job] {
			continue
		}
		gpus := 0
		for _, x := range place[job] {
			gpus += x.GPUs
		}
		out = append(out, Account{Job: job, GPUs: gpus, Ran: true})
	}
	return out
}

// Account is the record of one job, or of one co-located pair, since its
// last reset. An account is reset when its row of the allocation (its
// shares or its GPUs) changes by more than allocation.Tolerance, when it
// first appears, and after it has been absent: the time received and the
// time eligible restart from zero, and what the job was owed is folded into
// Deficit.
type Account struct {
	// Job is the job's ID; for a pair, the smaller of the two IDs.
	Job string `json:"job"`
	// Partner is, for a co-located pair, the larger of the two IDs; empty
	// for a job that runs alone.
	Partner string `json:"partner,omitempty"`
	// GPUs is the gang size the account runs with: the job's Grant.GPUs,
	// or for a pair the larger of the two members' GPUs.
	GPUs int `json:"gpus"`
	// Eligible is the time, in seconds, the account has had a positive
	// share since its last reset: the length of every round planned since,
	// whether it ran or not.
	Eligible float64 `json:"eligible"`
	// Rounds is the number of rounds planned since the last reset.
	Rounds int64 `json:"rounds"`
	// Types holds one entry per accelerator type on which the account has
	// a positive share, sorted by type.
	Types []TypeAccount `json:"types"`
	// Ran reports that the account ran in the last round, on the GPUs
	// Ledger.Placement lists for its job. Such accounts get their lease
	// extended before jobs that ran in another account (a pair member now
	// running alone), so they can always keep their GPUs.
	Ran bool `json:"ran,omitempty"`
}

// TypeAccount is an account's record on one accelerator type.
type TypeAccount struct {
	Accelerator allocation.Accelerator `json:"accelerator"`
	// Share is the time share X_jk of the current allocation.
	Share float64 `json:"share"`
	// Received is the time, in seconds, the account ran on this type since
	// its last reset: the sum of the lengths of the rounds it ran in.
	Received float64 `json:"received"`
	// Deficit is the time, in seconds, the account was owed on this type
	// when it was last reset, summed over all earlier resets:
	// Σ (Share·Eligible − Received). It may be negative (the job got more
	// than its share). The deficit used to break ties is
	// Deficit + Share·Eligible − Received.
	Deficit float64 `json:"deficit"`
}

// Round is the placement of one round.
type Round struct {
	// Length is the length of the round, the time Next credited to every
	// account that runs.
	Length time.Duration `json:"length"`
	// Runs lists what runs, sorted by Job then Partner.
	Runs []Run `json:"runs"`
}

// Run is one job, or one co-located pair, running for a round.
type Run struct {
	// Job is the job's ID; for a pair, the smaller of the two IDs.
	Job string `json:"job"`
	// Partner is, for a co-located pair, the larger ID; both run on the
	// same GPUs. Empty for a job that runs alone.
	Partner string `json:"partner,omitempty"`
	// Accelerator is the type of all the GPUs the run uses.
	Accelerator allocation.Accelerator `json:"accelerator"`
	// Assignments are the GPUs used, sorted by server ID, on as few
	// servers as possible; they sum to the account's GPUs.
	Assignments []allocation.Assignment `json:"assignments"`
	// Extended reports a lease extension: the run keeps exactly the GPUs
	// it had in the previous round, so it need not be preempted.
	Extended bool `json:"extended,omitempty"`
}

// Placement returns the assignments of every job that runs, by job ID; both
// members of a pair get the same assignments. The slices are shared with r.
func (r Round) Placement() map[string][]allocation.Assignment {
	p := make(map[string][]allocation.Assignment, len(r.Runs))
	for _, run := range r.Runs {
		p[run.Job] = run.Assignments
		if run.Partner != "" {
			p[run.Partner] = run.Assignments
		}
	}
	return p
}

// Allocation returns the grants that give every run all the time of its
// GPUs: a job alone gets its type's whole share, the two jobs of a pair the
// whole share together, on as many GPUs as the run holds. With Placement it
// makes the decision of a policy that says which jobs run now and where.
func (r Round) Allocation() allocation.Allocation {
	a := make(allocation.Allocation, len(r.Runs))
	for _, run := range r.Runs {
		gpus := 0
		for _, as := range run.Assignments {
			gpus += as.GPUs
		}
		whole := map[allocation.Accelerator]float64{run.Accelerator: 1}
		if run.Partner == "" {
			a[run.Job] = allocation.Grant{GPUs: gpus, Shares: whole}
			continue
		}
		a[run.Job] = allocation.Grant{GPUs: gpus, Pairs: map[string]map[allocation.Accelerator]float64{run.Partner: whole}}
		a[run.Partner] = allocation.Grant{GPUs: gpus, Pairs: map[string]map[allocation.Accelerator]float64{run.Job: whole}}
	}
	return a
}

// Next plans the coming round from the ledger l, the cluster c and the
// allocation a, and returns the round and the ledger to pass to the next
// call. The returned ledger already credits the whole round: every account
// is credited the round's length as eligible time, and every account that
// runs the same as received time on its type. If a round ends early, pass
// the returned ledger through Shorten before the next call. l is not
// modified and shares no memory with the results; the returned Round and
// Ledger share their assignment slices, which callers should not modify.
//
// For every account j with a positive share X_jk on type k,
//
//	priority_jk = X_jk / (Received_jk / Eligible_j)
//
// which is +Inf for an account that has received nothing on k since its last
// reset. Candidates (j, k) are taken in decreasing priority; ties go to the
// larger deficit (Deficit + X·Eligible − Received), then the larger share,
// then to the smaller ID and type name; among +Inf priorities the larger
// share comes before the larger deficit. A candidate is taken when no member
// of it runs yet this round and its type still has as many free GPUs as its
// gang size; otherwise it is skipped and the walk continues. A job never
// runs on a type where its share is zero, and runs at most once per round:
// alone or in one pair.
//
// The taken runs are then placed in whole workers: every server gets a
// multiple of the account's worker size, the job's Grant.GPUsPerWorker, or
// for a pair the least common multiple of both members' (a pair whose gang
// is not a multiple of it never runs). First, leases are extended: every
// account that ran on one server of the same type in the previous round
// keeps its GPUs (while the cluster is unchanged this always succeeds,
// since last round's placement fit); then every account that ran split over
// several servers keeps its GPUs if they are free and no server of the type
// has room for the whole gang (so that it consolidates when it can); then
// every job that ran in another account, e.g. a pair member now alone,
// keeps its GPUs if they are free, under the same rule. The accounts Seed
// adds count as having run; GPUs that do not hold whole workers are not
// kept. The others, largest gang first (ties by larger worker, then ID), go
// to the server of their type with the fewest free GPUs that holds them
// whole (ties by server ID), or, if none does, over as few servers as
// possible as described on Options.Split, each server taking what it has
// room for in whole workers. With workers of several GPUs the free GPUs a
// type counted may be too scattered to hold a gang: such a run is dropped,
// and the candidates not running are then walked again in priority order,
// each running if it can be placed on what is left (on its last GPUs if it
// can keep them). Only GPUs are placed: Grant.CPUs and Grant.MemoryGB are
// not checked against servers.
//
// Accounts of jobs absent from a, or whose shares are all zero, are dropped.
// Next returns an error wrapping allocation.ErrInvalid or
// allocation.ErrOverCapacity if a fails a.Validate(c), if the ledger holds a
// negative, NaN or infinite time, a share outside [0,1], duplicate
// accounts or a malformed assignment, or if m.Round is negative.
func (m Mechanism) Next(l Ledger, c allocation.Cluster, a allocation.Allocation) (Round, Ledger, error) {
	length, err := m.length()
	if err != nil {
		return Round{}, Ledger{}, err
	}
	if err := a.Validate(c); err != nil {
		return Round{}, Ledger{}, err
	}
	old, err := l.sorted()
	if err != nil {
		return Round{}, Ledger{}, err
	}
	if l.Rounds < 0 {
		return Round{}, Ledger{}, fmt.Errorf("%w placement: ledger: rounds: %d is negative", allocation.ErrInvalid, l.Rounds)
	}
	r, next := plan(length, l, old, c, a)
	return r, next, nil
}

// NextValid is Next for input Next has already accepted: a passed
// a.Validate(c), and l is a ledger Next returned, unmodified (its accounts
// sorted). A simulation that replays one allocation for many rounds checks
// it once, at its first round, rather than every round: the checks take
// up to half of Next's time (BenchmarkMechanismNext). Only m.Round is
// checked; any other input gives an unspecified round, or an error wrapping
// allocation.ErrInvalid where planning it would fail, but never a panic.
func (m Mechanism) NextValid(l Ledger, c allocation.Cluster, a allocation.Allocation) (r Round, next Ledger, err error) {
	length, err := m.length()
	if err != nil {
		return Round{}, Ledger{}, err
	}
	defer func() {
		if v := recover(); v != nil {
			r, next, err = Round{}, Ledger{}, fmt.Errorf("%w placement: mechanism: input Next would refuse: %v", allocation.ErrInvalid, v)
		}
	}()
	r, next = plan(length, l, l.Accounts, c, a)
	return r, next, nil
}

// length returns the round's length, DefaultRound for zero.
func (m Mechanism) length() (time.Duration, error) {
	switch {
	case m.Round < 0:
		return 0, fmt.Errorf("%w placement: mechanism: round: %v is negative", allocation.ErrInvalid, m.Round)
	case m.Round == 0:
		return DefaultRound, nil
	}
	return m.Round, nil
}

// plan is Next on checked input, old being l's accounts sorted.
func plan(length time.Duration, l Ledger, old []Account, c allocation.Cluster, a allocation.Allocation) (Round, Ledger) {
	w := scratches.Get().(*scratch)
	defer scratches.Put(w)
	types := c.Types()
	ids, gs := grants(w, a, old)
	es := entries(w, ids, gs, types, old)
	cands := candidates(w, es)
	busy := resize(&w.busy, len(ids))
	chosen := choose(w, es, cands, c, types, busy)
	placed, runs := place(w, es, cands, chosen, c, types, l.Placement, busy)
	return settle(es, placed, runs, types, length, l.Rounds)
}

// scratch is the working memory of a plan, reused through scratches: a
// simulation plans a round every few tens of microseconds, and allocating
// it anew made almost half of a plan's garbage. Nothing a plan returns
// points into it.
type scratch struct {
	ids          []string
	gs           []allocation.Grant
	es           []entry
	rowK         []int32
	cands        []cand
	order        []int32
	busy, placed []bool
	chosen       []int32
	runs         []Run
	prevs        [][]allocation.Assignment
	free         []int
	sv           servers
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// resize sets *s to n zero elements, in its array if it has room, and
// returns it.
func resize[T any](s *[]T, n int) []T {
	*s = slices.Grow((*s)[:0], n)[:n]
	clear(*s)
	return *s
}

// candidates returns every (account, type) pair in priority order.
func candidates(w *scratch, es []entry) []cand {
	n := 0
	for ei := range es {
		n += len(es[ei].acct.Types)
	}
	cands := slices.Grow(w.cands[:0], n)
	for ei := range es {
		acct := &es[ei].acct
		for ti, ta := range acct.Types {
			x := ta.Share
			p := math.Inf(1)
			if ta.Received > 0 {
				p = x * acct.Eligible / ta.Received
			}
			d := ta.Deficit + x*acct.Eligible - ta.Received
			k := w.rowK[int(es[ei].first)+ti]
			cd := cand{e: int32(ei), t: int32(ti), k: k, prio: p, tie1: d, tie2: x}
			if math.IsInf(p, 1) {
				cd.tie1, cd.tie2 = x, d
			}
			cands = append(cands, cd)
		}
	}
	// Sorting indices moves 4 bytes where a cand has 40: 2 to 3 times
	// faster. The order is total, so any sort gives the same one.
	order := resize(&w.order, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int { return compareCands(&cands[i], &cands[j]) })
	permute(cands, order)
	w.cands = cands
	return cands
}

// permute moves cands[order[i]] to cands[i], one cycle of the permutation
// at a time; it leaves order all -1.
func permute(cands []cand, order []int32) {
	for i := range order {
		if order[i] < 0 {
			continue
		}
		first, j := cands[i], int32(i)
		for {
			k := order[j]
			order[j] = -1
			if k == int32(i) {
				cands[j] = first
				break
			}
			cands[j], j = cands[k], k
		}
	}
}

// choose selects the round's accounts greedily by GPU counts, in
// candidate order, marking their members busy; each chosen entry's k and t
// say its type.
func choose(w *scratch, es []entry, cands []cand, c allocation.Cluster, types []allocation.Accelerator, busy []bool) []int32 {
	free := resize(&w.free, len(types))
	for _, s := range c.Servers {
		k, _ := slices.BinarySearch(types, s.Accelerator)
		free[k] += s.GPUs
	}
	chosen := w.chosen[:0]
	for _, cd := range cands {
		e := &es[cd.e]
		if busy[e.a] || (e.b >= 0 && busy[e.b]) || e.acct.GPUs > free[cd.k] || e.acct.GPUs <= 0 {
			continue
		}
		free[cd.k] -= e.acct.GPUs
		busy[e.a] = true
		if e.b >= 0 {
			busy[e.b] = true
		}
		e.k, e.t = cd.k, cd.t
		chosen = append(chosen, cd.e)
	}
	w.chosen = chosen
	return chosen
}

// place puts the chosen accounts on servers: lease extensions first (see
// Next), then new placements largest gang first, then, if a gang of large
// workers could not be placed, a backfill. It returns which entries run
// and where.
func place(w *scratch, es []entry, cands []cand, chosen []int32, c allocation.Cluster, types []allocation.Accelerator, last map[string][]allocation.Assignment, busy []bool) ([]bool, []Run) {
	sv := w.sv.reset(c, types)
	runs := resize(&w.runs, len(es))
	bySize(es, chosen)
	placed := resize(&w.placed, len(es))
	// Lease extensions: accounts that ran on one server, then accounts that
	// ran split over several (unless a whole server of the type is now
	// free), then jobs that ran in another account.
	prevs := resize(&w.prevs, len(chosen))
	for i, ei := range chosen {
		prevs[i] = last[es[ei].acct.Job]
	}
	for pass := range 3 {
		for i, ei := range chosen {
			e, prev := &es[ei], prevs[i]
			if placed[ei] || len(prev) == 0 || e.acct.Ran != (pass < 2) || (pass == 0 && len(prev) > 1) {
				continue
			}
			if as := sv.lease(prev, last, e); as != nil {
				runs[ei] = Run{Assignments: as, Extended: true}
				placed[ei] = true
			}
		}
	}
	dropped := false
	for _, ei := range chosen {
		if placed[ei] {
			continue
		}
		e := &es[ei]
		as := sv.place(int(e.k), e.acct.GPUs, e.w)
		if as == nil {
			// Selection counted the type's free GPUs, which hold any
			// gang of one-GPU workers: only larger workers get here.
			busy[e.a] = false
			if e.b >= 0 {
				busy[e.b] = false
			}
			dropped = true
			continue
		}
		runs[ei] = Run{Assignments: as}
		placed[ei] = true
	}
	if dropped {
		backfill(es, cands, sv, last, busy, placed, runs)
	}
	return placed, runs
}

// bySize sorts the chosen entries largest gang first, ties by larger
// worker, then by entry. Gangs of one shape, as most rounds' are, sort by
// entry alone: as ints, several times faster.
func bySize(es []entry, chosen []int32) {
	if !slices.ContainsFunc(chosen, func(i int32) bool {
		return es[i].acct.GPUs != es[chosen[0]].acct.GPUs || es[i].w != es[chosen[0]].w
	}) {
		slices.Sort(chosen)
		return
	}
	slices.SortFunc(chosen, func(x, y int32) int {
		if gx, gy := es[x].acct.GPUs, es[y].acct.GPUs; gx != gy {
			return cmp.Compare(gy, gx)
		}
		return cmp.Or(cmp.Compare(es[y].w, es[x].w), cmp.Compare(x, y))
	})
}

// settle returns the round of the placed entries and the ledger after it:
// every account eligible for one more round, the placed ones credited with
// it on the type they ran on.
func settle(es []entry, placed []bool, runs []Run, types []allocation.Accelerator, length time.Duration, rounds int64) (Round, Ledger) {
	sec := length.Seconds()
	n, jobs := 0, 0 // runs and jobs running, to size the results
	for ei := range es {
		if placed[ei] {
			n++
			jobs += 1 + min(len(es[ei].acct.Partner), 1)
		}
	}
	r := Round{Length: length, Runs: make([]Run, 0, n)}
	next := Ledger{
		Accounts:  make([]Account, len(es)),
		Placement: make(map[string][]allocation.Assignment, jobs),
		Rounds:    rounds + 1,
	}
	for ei := range es {
		e := &es[ei]
		acct := &next.Accounts[ei]
		*acct = e.acct
		acct.Eligible += sec
		acct.Rounds++
		acct.Ran = placed[ei]
		if acct.Ran {
			acct.Types[e.t].Received += sec
			run := runs[ei]
			run.Job, run.Partner, run.Accelerator = acct.Job, acct.Partner, types[e.k]
			r.Runs = append(r.Runs, run)
			next.Placement[acct.Job] = run.Assignments
			if acct.Partner != "" {
				next.Placement[acct.Partner] = run.Assignments
			}
		}
	}
	return r, next
}

// backfill walks the candidates again in priority order after a chosen run
// could not be placed in whole workers, and runs each one whose members do
// not run yet and whose gang fits on the GPUs left: on its last GPUs (last
// maps each job to them) when it can keep them, else, if it did not run,
// placed anew. A job that ran and lost its GPUs to a new run waits rather
// than move: moving would cost a checkpoint and restart to fill a gap.
func backfill(es []entry, cands []cand, sv *servers, last map[string][]allocation.Assignment, busy, placed []bool, runs []Run) {
	// Free GPUs only shrink here: a gang shape that did not fit never will.
	type shape struct{ k, gpus, w int }
	failed := make(map[shape]bool)
	for _, cd := range cands {
		e := &es[cd.e]
		if placed[cd.e] || busy[e.a] || (e.b >= 0 && busy[e.b]) || e.acct.GPUs <= 0 {
			continue
		}
		e.k, e.t = cd.k, cd.t
		prev := last[e.acct.Job]
		as, extended := sv.lease(prev, last, e), true
		if sh := (shape{int(cd.k), e.acct.GPUs, e.w}); as == nil && len(prev) == 0 && !failed[sh] {
			as, extended = sv.place(sh.k, sh.gpus, sh.w), false
			failed[sh] = as == nil
		}
		if as == nil {
			continue
		}
		runs[cd.e], placed[cd.e] = Run{Assignments: as, Extended: extended}, true
		busy[e.a] = true
		if e.b >= 0 {
			busy[e.b] = true
		}
	}
}

// Shorten returns l with the last round cut to actual: l must be the ledger
// Next returned together with r, and actual the time the round really ran,
// between 0 and r.Length. Every account loses r.Length − actual of eligible
// time and every run of r as much of received time (never below zero). l
// is not modified. It returns an error wrapping allocation.ErrInvalid if
// actual is outside [0, r.Length] or l is malformed. The result shares
// Placement with l.
func (l Ledger) Shorten(r Round, actual time.Duration) (Ledger, error) {
	if actual < 0 || actual > r.Length {
		return Ledger{}, fmt.Errorf("%w placement: shorten: actual %v is outside [0, %v]", allocation.ErrInvalid, actual, r.Length)
	}
	accts, err := l.sorted()
	if err != nil {
		return Ledger{}, err
	}
	cut := (r.Length - actual).Seconds()
	out := Ledger{Accounts: make([]Account, len(accts)), Placement: l.Placement, Rounds: l.Rounds}
	for i, a := range accts {
		a.Types = slices.Clone(a.Types)
		a.Eligible = max(0, a.Eligible-cut)
		out.Accounts[i] = a
	}
	for _, run := range r.Runs {
		i, ok := slices.BinarySearchFunc(out.Accounts, run, func(a Account, run Run) int {
			return compareKeys(a.Job, a.Partner, run.Job, run.Partner)
		})
		if !ok {
			continue
		}
		for t := range out.Accounts[i].Types {
			if ta := &out.Accounts[i].Types[t]; ta.Accelerator == run.Accelerator {
				ta.Received = max(0, ta.Received-cut)
			}
		}
	}
	return out, nil
}

// entry is one account for the coming round.
type entry struct {
	acct  Account // a fresh copy: Types does not alias the input ledger
	a, b  int32   // indices of the members in the sorted job IDs; b = -1 alone
	k, t  int32   // chosen type: index in the cluster's types and in acct.Types
	first int32   // index of the first of acct.Types in scratch.rowK
	w     int     // worker size: every server gets a multiple of it
}

// cand is an (entry, type) candidate. tie1 and tie2 break ties of
// priority: the deficit then the share, or the other way round when the
// priority is +Inf.
type cand struct {
	prio, tie1, tie2 float64
	e                int32 // index in the entries
	k, t             int32 // index in the cluster's types and in the account's
}

// compareCands orders candidates by decreasing priority, tie1 and tie2, then
// by entry (ID order) and type.
func compareCands(x, y *cand) int {
	switch {
	case x.prio > y.prio: // before cmp.Compare, which checks for NaN first
		return -1
	case x.prio < y.prio:
		return 1
	case x.prio != y.prio:
		return cmp.Compare(y.prio, x.prio)
	case x.tie1 != y.tie1:
		return cmp.Compare(y.tie1, x.tie1)
	case x.tie2 != y.tie2:
		return cmp.Compare(y.tie2, x.tie2)
	case x.e != y.e:
		return cmp.Compare(x.e, y.e)
	}
	return cmp.Compare(x.k, y.k)
}

func compareKeys(j1, p1, j2, p2 string) int {
	if c := strings.Compare(j1, j2); c != 0 {
		return c
	}
	return strings.Compare(p1, p2)
}

// grants returns a's job IDs sorted and their grants. Most rounds plan the
// jobs of the last, whose accounts old lists in that order: it checks that
// rather than sort.
func grants(w *scratch, a allocation.Allocation, old []Account) ([]string, []allocation.Grant) {
	ids, gs := w.ids[:0], w.gs[:0]
	for i := range old {
		if old[i].Partner != "" {
			continue
		}
		if g, ok := a[old[i].Job]; ok {
			ids, gs = append(ids, old[i].Job), append(gs, g)
		}
	}
	if len(ids) != len(a) {
		ids, gs = append(ids[:0], a.IDs()...), gs[:0]
		for _, id := range ids {
			gs = append(gs, a[id])
		}
	}
	w.ids, w.gs = ids, gs
	return ids, gs
}

// entries builds the accounts of the coming round from the allocation's
// grants gs of jobs ids, sorted by (Job, Partner), carrying over or
// resetting the old ones.
func entries(w *scratch, ids []string, gs []allocation.Grant, types []allocation.Accelerator, old []Account) []entry {
	es := slices.Grow(w.es[:0], len(ids))
	// One backing array for all the rows, the next ledger's: sized as the
	// last one's, most rounds exactly, with room for new jobs' rows.
	rows := len(types) * max(0, len(ids)-len(old))
	for i := range old {
		rows += len(old[i].Types)
	}
	tas := make([]TypeAccount, 0, rows)
	rowK := w.rowK[:0] // each row's index in types
	add := func(job, partner string, ai, bi int, gpus, size int, shares map[allocation.Accelerator]float64) {
		start := len(tas)
		for k, acc := range types {
			if x := shares[acc]; x > 0 {
				tas = append(tas, TypeAccount{Accelerator: acc, Share: x})
				rowK = append(rowK, int32(k))
			}
		}
		if len(tas) == start {
			return
		}
		es = append(es, entry{
			acct: Account{Job: job, Partner: partner, GPUs: gpus},
			a:    int32(ai), b: int32(bi),
			k: int32(start), t: int32(len(tas)), // temporarily the row's bounds
			w: size,
		})
	}
	for ai, id := range ids {
		g := &gs[ai]
		add(id, "", ai, -1, g.GPUs, worker(*g), g.Shares)
		if len(g.Pairs) == 0 {
			continue
		}
		partners := make([]string, 0, len(g.Pairs))
		for p := range g.Pairs {
			if p > id {
				partners = append(partners, p)
			}
		}
		slices.Sort(partners)
		for _, p := range partners {
			bi, _ := slices.BinarySearch(ids, p)
			add(id, p, ai, bi, max(g.GPUs, gs[bi].GPUs), lcm(worker(*g), worker(gs[bi])), g.Pairs[p])
		}
	}
	oi := 0
	for i := range es {
		e := &es[i]
		row := tas[e.k:e.t:e.t]
		e.first, e.k, e.t = e.k, -1, -1
		e.acct.Types = row
		for oi < len(old) && compareKeys(old[oi].Job, old[oi].Partner, e.acct.Job, e.acct.Partner) < 0 {
			oi++
		}
		if oi == len(old) || old[oi].Job != e.acct.Job || old[oi].Partner != e.acct.Partner {
			continue // new account
		}
		o := &old[oi]
		e.acct.Ran = o.Ran
		if sameRow(o, e.acct.GPUs, row) {
			e.acct.Eligible, e.acct.Rounds = o.Eligible, o.Rounds
			for t := range row {
				row[t].Received, row[t].Deficit = o.Types[t].Received, o.Types[t].Deficit
			}
			continue
		}
		// Reset: fold what the old row was owed into the deficit.
		for t := range row {
			for _, ot := range o.Types {
				if ot.Accelerator == row[t].Accelerator {
					row[t].Deficit = ot.Deficit + ot.Share*o.Eligible - ot.Received
				}
			}
		}
	}
	w.es, w.rowK = es, rowK
	return es
}

// worker returns the grant's worker size, at least 1.
func worker(g allocation.Grant) int { return max(g.GPUsPerWorker, 1) }

// lcm returns the least common multiple of two positive numbers: the
// worker size of a pair, whose GPUs must hold whole workers of both jobs.
func lcm(x, y int) int {
	a, b := x, y
	for b != 0 {
		a, b = b, a%b
	}
	return x / a * y
}

// sameRow reports whether the account o was kept for the same gang size and
// the same shares, up to allocation.Tolerance.
func sameRow(o *Account, gpus int, row []TypeAccount) bool {
	if o.GPUs != gpus || len(o.Types) != len(row) {
		return false
	}
	for t := range row {
		if o.Types[t].Accelerator != row[t].Accelerator || math.Abs(o.Types[t].Share-row[t].Share) > allocation.Tolerance {
			return false
		}
	}
	return true
}

// Validate reports whether l is a ledger Next could have returned: accounts
// with job IDs, unique, with finite non-negative times and shares in [0,1],
// placements of positive GPU counts on named servers, and a non-negative
// round count. Errors wrap allocation.ErrInvalid. Next checks the same.
func (l Ledger) Validate() error {
	if l.Rounds < 0 {
		return fmt.Errorf("%w placement: ledger: rounds: %d is negative", allocation.ErrInvalid, l.Rounds)
	}
	_, err := l.sorted()
	return err
}

// sorted validates l and returns its accounts sorted by (Job, Partner),
// without modifying l.
func (l Ledger) sorted() ([]Account, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w placement: ledger: %s", allocation.ErrInvalid, fmt.Sprintf(format, args...))
	}
	accts := l.Accounts
	byKey := func(x, y Account) int { return compareKeys(x.Job, x.Partner, y.Job, y.Partner) }
	if !slices.IsSortedFunc(accts, byKey) {
		accts = slices.Clone(accts)
		slices.SortFunc(accts, byKey)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for i, a := range accts {
		name := accountName(a)
		switch {
		case a.Job == "":
			return nil, bad("account %d: job: empty", i)
		case a.Partner != "" && a.Partner <= a.Job:
			return nil, bad("%s: partner: must sort after job", name)
		case i > 0 && byKey(accts[i-1], a) == 0:
			return nil, bad("%s: duplicate", name)
		case a.GPUs < 0:
			return nil, bad("%s: gpus: %d is negative", name, a.GPUs)
		case !finite(a.Eligible) || a.Eligible < 0:
			return nil, bad("%s: eligible: %v is not a finite non-negative time", name, a.Eligible)
		case a.Rounds < 0:
			return nil, bad("%s: rounds: %d is negative", name, a.Rounds)
		}
		for t, ta := range a.Types {
			switch {
			case t > 0 && a.Types[t-1].Accelerator >= ta.Accelerator:
				return nil, bad("%s: types: %q is duplicate or out of order", name, ta.Accelerator)
			case !(ta.Share >= 0 && ta.Share <= 1+allocation.Tolerance):
				return nil, bad("%s: %s share: %v is outside [0,1]", name, ta.Accelerator, ta.Share)
			case !finite(ta.Received) || ta.Received < 0:
				return nil, bad("%s: %s received: %v is not a finite non-negative time", name, ta.Accelerator, ta.Received)
			case !finite(ta.Deficit):
				return nil, bad("%s: %s deficit: %v is not finite", name, ta.Accelerator, ta.Deficit)
			}
		}
	}
	for job, as := range l.Placement {
		for _, x := range as {
			if x.Server == "" || x.GPUs <= 0 {
				return nil, bad("placement of job %q: %+v: needs a server and a positive GPU count", job, x)
			}
		}
	}
	return accts, nil
}

// accountName formats an account's key for error messages, lazily.
type accountName Account

func (a accountName) String() string {
	if a.Partner != "" {
		return fmt.Sprintf("account (%q, %q)", a.Job, a.Partner)
	}
	return fmt.Sprintf("account %q", a.Job)
}

// servers is the free GPUs of a cluster during placement.
type servers struct {
	ids    []string
	types  []int32 // index of each server's type
	free   []int
	byType [][]int32 // server indices of each type, in ID order
	buf    []int32   // scratch for splitting
	order  []int32   // scratch for sorting by ID
	arena  []allocation.Assignment
}

// copy returns a copy of as carved from a shared array, with no room to
// grow into its neighbour's: one allocation for many runs.
func (sv *servers) copy(as ...allocation.Assignment) []allocation.Assignment {
	n := len(sv.arena)
	if n+len(as) > cap(sv.arena) {
		sv.arena, n = make([]allocation.Assignment, 0, max(64, len(as))), 0
	}
	sv.arena = append(sv.arena, as...)
	return sv.arena[n : n+len(as) : n+len(as)]
}

// reset makes sv the free GPUs of cluster c, all of them, reusing its
// arrays; the assignments it hands out are new.
func (sv *servers) reset(c allocation.Cluster, types []allocation.Accelerator) *servers {
	n := len(c.Servers)
	order := resize(&sv.order, n)
	for i := range order {
		order[i] = int32(i)
	}
	byID := func(x, y int32) int { return strings.Compare(c.Servers[x].ID, c.Servers[y].ID) }
	if !slices.IsSortedFunc(order, byID) { // a caller may keep its servers sorted
		slices.SortFunc(order, byID)
	}
	resize(&sv.ids, n)
	resize(&sv.types, n)
	resize(&sv.free, n)
	sv.byType = slices.Grow(sv.byType[:0], len(types))[:len(types)]
	for k := range sv.byType {
		sv.byType[k] = sv.byType[k][:0] // kept arrays: resize would clear them
	}
	sv.arena = nil
	for i, o := range order {
		s := c.Servers[o]
		k, _ := slices.BinarySearch(types, s.Accelerator)
		sv.ids[i], sv.types[i], sv.free[i] = s.ID, int32(k), s.GPUs
		sv.byType[k] = append(sv.byType[k], int32(i))
	}
	return sv
}

// extend takes and returns the GPUs prev the entry had in the previous round
// (last maps each job to its GPUs then), or
// returns nil if it had none, they were of another type or another count,
// do not hold whole workers, or are no longer all free.
func (sv *servers) extend(prev []allocation.Assignment, last map[string][]allocation.Assignment, e *entry) []allocation.Assignment {
	if len(prev) == 0 {
		return nil
	}
	if e.acct.Partner != "" && !slices.Equal(prev, last[e.acct.Partner]) {
		return nil
	}
	sum := 0
	for _, x := range prev {
		if x.GPUs%e.w != 0 {
			return nil
		}
		sum += x.GPUs
	}
	if sum != e.acct.GPUs {
		return nil
	}
	for j, x := range prev {
		i, ok := sv.index(x.Server)
		if !ok || sv.types[i] != e.k || sv.free[i] < x.GPUs {
			for _, y := range prev[:j] { // undo
				i, _ := sv.index(y.Server)
				sv.free[i] += y.GPUs
			}
			return nil
		}
		sv.free[i] -= x.GPUs
	}
	return sv.copy(prev...)
}

// index returns the index of the server with the given ID.
func (sv *servers) index(id string) (int32, bool) {
	i, ok := slices.BinarySearch(sv.ids, id)
	return int32(i), ok
}

// lease extends the entry's lease on prev, its GPUs in the last round, as
// extend does, unless prev is split over several servers and one server of
// the entry's type now has room for the whole gang: the gang then gives up
// its lease to consolidate.
func (sv *servers) lease(prev []allocation.Assignment, last map[string][]allocation.Assignment, e *entry) []allocation.Assignment {
	if len(prev) > 1 && sv.whole(int(e.k), e.acct.GPUs, e.w) {
		return nil
	}
	return sv.extend(prev, last, e)
}

// whole reports whether some server of type k has room for g GPUs in
// workers of w: a split gang gives up its lease to move there.
func (sv *servers) whole(k, g, w int) bool {
	for _, i := range sv.byType[k] {
		if sv.room(i, w) >= g {
			return true
		}
	}
	return false
}

// room returns the GPUs in workers of w that server i can take.
func (sv *servers) room(i int32, w int) int { return sv.free[i] / w * w }

// place takes g GPUs of type k in workers of w: on the server that holds
// them whole with the fewest GPUs left (ties by ID), or else over as few
// servers as possible, those with the most room in whole workers first and
// the remainder on the tightest fit. It returns the assignments sorted by
// server ID, or nil if the type has no room for g GPUs in whole workers.
func (sv *servers) place(k, g, w int) []allocation.Assignment {
	if g%w != 0 {
		return nil
	}
	list := sv.byType[k]
	best := int32(-1)
	for _, i := range list {
		// g is whole workers: a server with g free has room for them.
		if f := sv.free[i]; f >= g && (best < 0 || f < sv.free[best]) {
			best = i
			if f == g {
				break
			}
		}
	}
	if best >= 0 {
		sv.free[best] -= g
		return sv.copy(allocation.Assignment{Server: sv.ids[best], GPUs: g})
	}
	cs := sv.buf[:0]
	for _, i := range list {
		if sv.room(i, w) > 0 {
			cs = append(cs, i)
		}
	}
	sv.buf = cs
	slices.SortFunc(cs, func(x, y int32) int {
		return cmp.Or(cmp.Compare(sv.room(y, w), sv.room(x, w)), cmp.Compare(x, y))
	})
	n, sum := 0, 0
	for n < len(cs) && sum < g {
		sum += sv.room(cs[n], w)
		n++
	}
	if sum < g {
		return nil
	}
	rest := g - (sum - sv.room(cs[n-1], w)) // a multiple of w
	last := -1
	for j := n - 1; j < len(cs); j++ {
		if sv.room(cs[j], w) < rest {
			continue
		}
		f := sv.free[cs[j]]
		if last < 0 || f < sv.free[cs[last]] || (f == sv.free[cs[last]] && cs[j] < cs[last]) {
			last = j
		}
	}
	as := make([]allocation.Assignment, 0, n)
	for _, i := range cs[:n-1] {
		r := sv.room(i, w)
		as = append(as, allocation.Assignment{Server: sv.ids[i], GPUs: r})
		sv.free[i] -= r
	}
	i := cs[last]
	as = append(as, allocation.Assignment{Server: sv.ids[i], GPUs: rest})
	sv.free[i] -= rest
	slices.SortFunc(as, func(x, y allocation.Assignment) int { return strings.Compare(x.Server, y.Server) })
	return as
}
