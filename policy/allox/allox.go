package allox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("allox",
		"AlloX: non-preemptive; matches the longest-waiting jobs to free GPUs for the least total completion time",
		newPolicy)
}

// DefaultAlpha is Gavel's default fairness knob: every waiting job is
// considered.
const DefaultAlpha = 1.0

// MaxCells bounds jobs × (worker, position) columns, the cells of the
// cost matrix one matching holds (twice, as the solver copies it): 2²⁵
// cells are about 512 MiB. A larger round fails with an error naming it,
// rather than the process running out of memory. The matching takes time
// O(jobs² × columns), so rounds near the bound take minutes.
const MaxCells = 1 << 25

// AlloX is the policy of AlloX. It keeps no state: same snapshot, same
// decision.
//
// Running jobs keep their GPUs. Of the m waiting jobs that could start on
// the free GPUs, the n = min(m, max(⌈α·m⌉, F)) that have waited longest are
// matched to F free GPUs (workers) w and positions p = 1…n, position p
// meaning p-th from last, at the least total cost
//
//	Σ_j  g_j·p_j·q_{j,k(w_j)} + d_j,   q_jk = (StepsTotal_j − StepsDone_j) / Throughput_jk,
//
// with g_j the job's GPUs, k(w) the worker's accelerator type and d_j the
// time the job has waited. For one-GPU jobs this is the total completion
// time, measured from arrival, of the jobs if each worker runs its jobs from
// the highest position down. The job in the highest position on each worker
// starts now; the others wait for the next decision. Objective is the least
// total cost, in seconds.
type AlloX struct {
	// Alpha is the fairness knob α in (0,1]: only the ⌈α·m⌉ longest-waiting
	// of the m waiting jobs are considered, but never fewer than the free
	// GPUs. Nil means 1 (Gavel's default, every job); Shockwave's
	// comparison used 0.2.
	Alpha *float64 `json:"alpha,omitempty"`
	// Rule is empty or RuleQueues; "allox" with RuleShockwave is a Shares.
	Rule string `json:"rule,omitempty"`
}

// Name returns "allox".
func (*AlloX) Name() string { return "allox" }

// Facts implements policy.Reader: the matching needs each job's length (unknown waits behind it) and its speed per type.
func (*AlloX) Facts() (uses, needs policy.Facts) {
	return policy.FactHeterogeneity | policy.FactLength, policy.FactLength
}

func (p *AlloX) check() error {
	if p.Rule != "" && p.Rule != RuleQueues {
		return fmt.Errorf("%w: allox: rule: %q; AlloX follows %q, Shares %q", policy.ErrInvalidConfig, p.Rule, RuleQueues, RuleShockwave)
	}
	if p.Alpha != nil && !(*p.Alpha > 0 && *p.Alpha <= 1) {
		return fmt.Errorf("%w: allox: alpha: %v is not in (0, 1]", policy.ErrInvalidConfig, *p.Alpha)
	}
	return nil
}

func (p *AlloX) alpha() float64 {
	if p.Alpha == nil {
		return DefaultAlpha
	}
	return *p.Alpha
}

// job is a waiting job as AlloX sees it.
type job struct {
	j    *policy.Job
	wait float64 // seconds since arrival
	left float64 // steps to go
	// first is the least g·q over the types it can use: the key that
	// orders the matching's rows, longest first.
	first float64
}

// q returns the job's processing time on type k, or +Inf if it cannot
// start there now.
func (jb *job) q(k allocation.Accelerator, free map[allocation.Accelerator]int) float64 {
	thr := jb.j.Throughput[k]
	if thr <= 0 || free[k] < jb.j.GPUs {
		return math.Inf(1)
	}
	return jb.left / thr
}

// worker is one free GPU.
type worker struct {
	server string
	k      allocation.Accelerator
}

// Allocate keeps running jobs on their GPUs and starts the waiting jobs that
// come first on the free GPUs in AlloX's matching.
func (p *AlloX) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, d, jobs, err := open(ctx, p.check, s)
	if err != nil {
		return nil, err
	}

	var round placement.Round
	grant := func(j *policy.Job, k allocation.Accelerator, place []allocation.Assignment) {
		round.Runs = append(round.Runs, placement.Run{Job: j.ID, Accelerator: k, Assignments: place})
	}
	g := placement.NewGangs(s.Cluster)
	used, waiting := keep(g, jobs, d, grant)
	workers, free := idle(s.Cluster, used, len(waiting))
	cands, unknown := contenders(s.Now, waiting, free)
	cands = p.cut(cands, len(workers))
	if len(cands) > 0 {
		gangQ := func(jb *job, k allocation.Accelerator) float64 { return float64(jb.j.GPUs) * jb.q(k, free) }
		heads, cost, err := match(ctx, cands, workers, gangQ)
		if err != nil {
			return nil, err
		}
		d.Objective = cost
		start(g, heads, grant)
	}
	backfill(g, unknown, grant)
	d.Allocation, d.Placement = round.Allocation(), round.Placement()
	return d, nil
}

// keep grants the running jobs their GPUs in g, and returns the GPUs they
// use by server and the jobs that wait. Running jobs are never preempted;
// one whose GPUs are not all its own (gone, shared with another, of a type
// it cannot use) waits again, with a warning in d.
func keep(g *placement.Gangs, jobs []*policy.Job, d *policy.Decision, grant func(*policy.Job, allocation.Accelerator, []allocation.Assignment)) (used map[string]int, waiting []*policy.Job) {
	used = make(map[string]int)
	for _, j := range jobs {
		if len(j.Placement) == 0 {
			waiting = append(waiting, j)
			continue
		}
		k, ok := g.Keep(j.Placement, j.GPUs, func(k allocation.Accelerator) bool { return j.Throughput[k] > 0 })
		if !ok {
			d.Warnings = append(d.Warnings, fmt.Sprintf("job %q: placement: its GPUs are not all free, of one usable type and %d in number; it waits", j.ID, j.GPUs))
			waiting = append(waiting, j)
			continue
		}
		grant(j, k, slices.Clone(j.Placement))
		for _, a := range j.Placement {
			used[a.Server] += a.GPUs
		}
	}
	return used, waiting
}

// idle returns the workers of the GPUs the running jobs leave free on c, at
// most limit of a type, servers in ID order, and the free GPUs by type. A
// matching uses at most one worker per waiting job, and the workers of a
// type are alike: listing that many of each type keeps memory in
// proportion to the jobs, not to the GPUs a server declares.
func idle(c allocation.Cluster, used map[string]int, limit int) ([]worker, map[allocation.Accelerator]int) {
	servers := slices.SortedFunc(slices.Values(c.Servers), func(a, b allocation.Server) int { return cmp.Compare(a.ID, b.ID) })
	var workers []worker
	free, listed := make(map[allocation.Accelerator]int), make(map[allocation.Accelerator]int)
	for _, srv := range servers {
		n := srv.GPUs - used[srv.ID]
		for range min(n, limit-listed[srv.Accelerator]) {
			workers = append(workers, worker{srv.ID, srv.Accelerator})
			listed[srv.Accelerator]++
		}
		free[srv.Accelerator] += n
	}
	return workers, free
}

// contenders returns the waiting jobs that could start now on the free
// GPUs, longest-waiting first, with their least g·q as key, and those of
// unknown length, which wait for the GPUs the matching leaves free.
func contenders(now time.Duration, waiting []*policy.Job, free map[allocation.Accelerator]int) (cands, unknown []*job) {
	for _, j := range waiting {
		jb := &job{j: j, wait: (now - j.Arrival).Seconds(), left: j.StepsTotal - j.StepsDone, first: math.Inf(1)}
		if j.StepsTotal == 0 {
			unknown = append(unknown, jb)
			continue
		}
		for k := range free {
			jb.first = math.Min(jb.first, float64(j.GPUs)*jb.q(k, free))
		}
		if !math.IsInf(jb.first, 1) {
			cands = append(cands, jb)
		}
	}
	slices.SortStableFunc(cands, func(a, b *job) int { return cmp.Compare(b.wait, a.wait) })
	return cands, unknown
}

// cut keeps the ⌈α·m⌉ longest-waiting of the m candidates, but never fewer
// than the free workers.
func (p *AlloX) cut(cands []*job, workers int) []*job {
	// ⌈α·m⌉, forgiving rounding: 0.7·10 is 7.000000000000001.
	n := int(math.Ceil(p.alpha()*float64(len(cands)) - 1e-9))
	return cands[:min(len(cands), max(n, workers))]
}

// start places the heads of the matching on their workers' types. The
// heads start in increasing GPU-time g·q on their type, so that when gangs
// cannot all start, those that free their GPUs soonest do.
func start(g *placement.Gangs, heads []head, grant func(*policy.Job, allocation.Accelerator, []allocation.Assignment)) {
	slices.SortStableFunc(heads, func(a, b head) int {
		return cmp.Or(cmp.Compare(a.area, b.area), cmp.Compare(b.jb.wait, a.jb.wait), cmp.Compare(a.jb.j.ID, b.jb.j.ID))
	})
	for _, h := range heads {
		if place, k, ok := g.Place(h.jb.j.GPUs, h.jb.j.Worker(), func(k allocation.Accelerator) bool { return k == h.k }); ok {
			grant(h.jb.j, k, place)
		}
	}
}

// open checks the configuration and ctx, screens s, and returns the
// screened snapshot, a decision that leaves out the jobs AlloX cannot run,
// and the others.
func open(ctx context.Context, check func() error, s *policy.Snapshot) (*policy.Snapshot, *policy.Decision, []*policy.Job, error) {
	if err := check(); err != nil {
		return nil, nil, nil, err
	}
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("allox: %w", err)
	}
	d := &policy.Decision{Policy: "allox", Unscheduled: out}
	return s, d, eligible(s, d), nil
}

// eligible returns the jobs of a screened snapshot that AlloX can run, by
// ID, and leaves the others out of d: it runs every job on the GPUs it asks
// for, so an elastic job needs a GPU count that some type holds.
func eligible(s *policy.Snapshot, d *policy.Decision) []*policy.Job {
	jobs := make([]*policy.Job, 0, len(s.Jobs))
	census := policy.NewCensus(s.Cluster)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.GPUs < 1 {
			d.Leave(j.ID, fmt.Sprintf("gpus: %d; allox needs a fixed GPU count", j.GPUs))
			continue
		}
		if j.Elastic == nil {
			// Screen checked that its GPU count fits.
		} else if err := census.Runnable(j); err != nil {
			d.Leave(j.ID, policy.Reason(err))
			continue
		}
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b *policy.Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs
}

// backfill starts the waiting jobs of unknown length on the GPUs still free,
// longest-waiting first (ties by ID), each on a type where it can run: with
// no length to rank them by, AlloX counts them longer than every job whose
// length it knows, so they come after the matching.
func backfill(g *placement.Gangs, unknown []*job, grant func(*policy.Job, allocation.Accelerator, []allocation.Assignment)) {
	slices.SortStableFunc(unknown, func(a, b *job) int { return cmp.Compare(b.wait, a.wait) })
	for _, jb := range unknown {
		j := jb.j
		if place, k, ok := g.Place(j.GPUs, j.Worker(), func(k allocation.Accelerator) bool { return j.Throughput[k] > 0 }); ok {
			grant(j, k, place)
		}
	}
}

// head is a job that comes first on its worker.
type head struct {
	jb   *job
	k    allocation.Accelerator
	area float64 // g·q on k
}

// match solves AlloX's matching of jobs to (worker, position) and returns
// the job in the highest position on each worker that has one, and the
// total cost. Job j at position p of worker w costs p·q(j, k(w)) + wait_j;
// q is +Inf where j cannot run.
//
// Gavel gives every worker n positions, an n×(F·n) matrix. Fewer suffice:
// the optimum fills a worker's positions from 1 up, and if an optimum over
// the first P_w positions of each worker w leaves every worker's last one
// empty, it is an optimum over all of them (an improving exchange that used
// a higher position would improve as much or more through the empty
// P_w-th, whose cost p·q is smaller). So each worker starts with
// ⌈n/F⌉+1 positions, and a worker whose last one is taken gets twice as
// many, up to n, until none is.
func match(ctx context.Context, jobs []*job, workers []worker, qf func(*job, allocation.Accelerator) float64) ([]head, float64, error) {
	m := newMatching(jobs, workers, qf)
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("allox: %w", err)
		}
		cols, cost, err := m.costs(ctx)
		if err != nil {
			return nil, 0, err
		}
		got, err := placement.AssignContext(ctx, cost)
		switch {
		case errors.Is(err, placement.ErrInfeasible):
			// Too few positions on the few workers some jobs can use.
			if !m.deepen() {
				return nil, 0, fmt.Errorf("allox: %w", err)
			}
			continue
		case err != nil:
			return nil, 0, fmt.Errorf("allox: %w", err)
		}
		top, total, grow := m.tops(got, cols, cost)
		if grow {
			continue
		}
		return m.heads(top), total, nil
	}
}

// matching is one matching in progress: its rows, its workers, q per row
// and worker type, and the positions each worker offers so far.
type matching struct {
	rows    []*job
	workers []worker
	types   map[allocation.Accelerator]int // index of a worker type in q's rows
	q       [][]float64
	pos     []int
}

// column is a (worker, position) of the cost matrix.
type column struct{ w, p int }

// newMatching orders the rows, tabulates q, shared by the workers of a
// type, and gives each worker ⌈n/F⌉+1 positions, up to n.
func newMatching(jobs []*job, workers []worker, qf func(*job, allocation.Accelerator) float64) *matching {
	n, nw := len(jobs), len(workers)
	// Longest first: a newly added row then tends to take a position no
	// one holds, and the solver's augmenting paths stay short.
	m := &matching{rows: slices.Clone(jobs), workers: workers, types: make(map[allocation.Accelerator]int), q: make([][]float64, n), pos: make([]int, nw)}
	slices.SortStableFunc(m.rows, func(a, b *job) int { return cmp.Compare(b.first, a.first) })
	for _, w := range workers {
		if _, ok := m.types[w.k]; !ok {
			m.types[w.k] = len(m.types)
		}
	}
	for r, jb := range m.rows {
		m.q[r] = make([]float64, len(m.types))
		for k, t := range m.types {
			m.q[r][t] = qf(jb, k)
		}
	}
	for w := range m.pos {
		m.pos[w] = min(n, (n+nw-1)/nw+1)
	}
	return m
}

// costs returns the columns of the workers' positions and the cost matrix
// over them, refusing, before it is built, a matrix of more than MaxCells.
func (m *matching) costs(ctx context.Context) ([]column, [][]float64, error) {
	n := len(m.rows)
	ncols := uint64(0)
	for w := range m.workers {
		ncols += uint64(m.pos[w])
	}
	if cells := uint64(n) * ncols; cells > MaxCells {
		return nil, nil, fmt.Errorf("%w: allox: %d jobs × %d (worker, position) columns = %d cost cells, more than MaxCells (%d)",
			policy.ErrInvalidSnapshot, n, ncols, cells, uint64(MaxCells))
	}
	cols := make([]column, 0, ncols)
	for w := range m.workers {
		for p := 1; p <= m.pos[w]; p++ {
			cols = append(cols, column{w, p})
		}
	}
	cost := make([][]float64, n)
	for r := range m.rows {
		if r%256 == 255 && ctx.Err() != nil {
			return nil, nil, fmt.Errorf("allox: %w", ctx.Err())
		}
		cost[r] = make([]float64, len(cols))
		for c, col := range cols {
			cost[r][c] = float64(col.p)*m.q[r][m.types[m.workers[col.w].k]] + m.rows[r].wait
		}
	}
	return cols, cost, nil
}

// deepen doubles every worker's positions, up to n, and reports whether
// any worker gained some.
func (m *matching) deepen() bool {
	n, grow := len(m.rows), false
	for w := range m.pos {
		if m.pos[w] < n {
			m.pos[w], grow = min(2*m.pos[w], n), true
		}
	}
	return grow
}

// tops returns the row in each worker's highest position (-1 for none)
// and the total cost of the assignment got of rows to cols; a worker whose
// last position is taken, short of n, gets twice as many, and grow tells
// that the matching must be solved again.
func (m *matching) tops(got []int, cols []column, cost [][]float64) (top []int, total float64, grow bool) {
	n := len(m.rows)
	top = make([]int, len(m.workers)) // the row in each worker's highest position
	for w := range top {
		top[w] = -1
	}
	for r, c := range got {
		col := cols[c]
		total += cost[r][c]
		if col.p == m.pos[col.w] && m.pos[col.w] < n {
			m.pos[col.w], grow = min(2*m.pos[col.w], n), true
		}
		if t := top[col.w]; t < 0 || cols[got[t]].p < col.p {
			top[col.w] = r
		}
	}
	return top, total, grow
}

// heads returns the jobs in the rows top, with their workers' types and
// g·q there.
func (m *matching) heads(top []int) []head {
	var heads []head
	for w, r := range top {
		if r >= 0 {
			k := m.workers[w].k
			heads = append(heads, head{m.rows[r], k, m.q[r][m.types[k]]})
		}
	}
	return heads
}
