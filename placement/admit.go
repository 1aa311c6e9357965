package placement

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dlsched/dlsched/allocation"
)

// Request is a gang of whole GPUs asking to run, as a priority scheduler
// (Tiresias, FIFO, SRTF) ranks it.
type Request struct {
	ID   string
	GPUs int
	// Worker is the size of one of the job's workers: GPUs come in
	// GPUs/Worker workers, each on one server, so every server gets a
	// multiple of Worker. GPUs must be a multiple of it. Zero means 1.
	Worker int
	// Current is where the job runs now, in whole workers; empty if it
	// does not. A job that keeps running keeps these GPUs when it can.
	Current []allocation.Assignment
	// Throughput is the job's speed per type; it may run only on types
	// where it is positive. On several, the fastest with room wins.
	Throughput map[allocation.Accelerator]float64
	// Consolidate makes the job wait rather than run on more servers than
	// its GPUs need (Gangs.Consolidate).
	Consolidate bool
}

// Priority admits requests in priority order. The zero value backfills:
// a request that cannot run does not stop those after it, and holds no
// reservation.
type Priority struct {
	// HeadOfLine stops at the first request that cannot run: strict FIFO,
	// whose blocked head keeps the rest waiting.
	HeadOfLine bool
}

// Admit returns the runs of the requests that run now, in the order of
// reqs, highest priority first.
//
// Which requests run is decided by GPU counts first, as in Tiresias'
// simulator: walking in order, a request runs if its type has as many free
// GPUs as it needs (a running request counts on the type it runs on). Then
// the chosen running requests keep their GPUs, and the chosen new ones are
// placed in order, in whole workers on the fewest servers (Gangs.Place, or
// Gangs.Consolidate). A request that was not chosen, or could not be
// placed (the counts ignore how free GPUs are spread, which matters for
// workers of several GPUs), may still backfill what is left, in order, so
// that no GPU idles while a request that fits waits; a running request
// backfills only on its own GPUs, so that no job moves (a checkpoint and a
// restart) to run on where it could as well wait its turn. A running
// request that does not run is preempted. With HeadOfLine nothing is preempted:
// running requests keep their GPUs, and the others run in order up to the
// first that cannot.
//
// IDs must be unique and non-empty, GPUs positive and a multiple of a
// non-negative Worker, and Current in whole workers; the error wraps
// allocation.ErrInvalid and names the request and field.
func (p Priority) Admit(c allocation.Cluster, reqs []Request) ([]Run, error) {
	if err := checkRequests(reqs); err != nil {
		return nil, err
	}
	a := &admission{reqs: reqs, g: NewGangs(c), runs: make([]*Run, len(reqs)),
		typesOf: make([][]allocation.Accelerator, len(reqs)), failed: make(map[shape]bool)}
	if p.HeadOfLine {
		a.inLine()
		return collect(a.runs), nil
	}
	// Choose by counts, keep the chosen running ones, place the chosen new
	// ones, then backfill.
	chosen := make([]bool, len(reqs))
	typeOf := make(map[string]allocation.Accelerator, len(c.Servers))
	a.choose(c, chosen, typeOf)
	for i := range reqs {
		if chosen[i] {
			a.keep(i)
		}
	}
	for i := range reqs {
		if chosen[i] && a.runs[i] == nil {
			a.try(i)
		}
	}
	a.backfill(typeOf)
	return collect(a.runs), nil
}

// checkRequests returns the first request that breaks Admit's rules, in
// order, as an error wrapping allocation.ErrInvalid.
func checkRequests(reqs []Request) error {
	seen := make(map[string]bool, len(reqs))
	for i, r := range reqs {
		switch {
		case r.ID == "":
			return fmt.Errorf("%w request %d: empty id", allocation.ErrInvalid, i)
		case seen[r.ID]:
			return fmt.Errorf("%w request %q: duplicate id", allocation.ErrInvalid, r.ID)
		case r.GPUs < 1:
			return fmt.Errorf("%w request %q: gpus: %d is not positive", allocation.ErrInvalid, r.ID, r.GPUs)
		case r.Worker < 0:
			return fmt.Errorf("%w request %q: worker: %d is negative", allocation.ErrInvalid, r.ID, r.Worker)
		case r.GPUs%r.worker() != 0:
			return fmt.Errorf("%w request %q: gpus: %d is not a multiple of worker %d", allocation.ErrInvalid, r.ID, r.GPUs, r.Worker)
		}
		for _, a := range r.Current {
			if a.GPUs < 1 || a.GPUs%r.worker() != 0 {
				return fmt.Errorf("%w request %q: current: %d GPUs on server %q are not whole workers of %d", allocation.ErrInvalid, r.ID, a.GPUs, a.Server, r.worker())
			}
		}
		seen[r.ID] = true
	}
	return nil
}

// admission is one call of Admit: the gangs of the cluster and, by
// request, the run it got and the types it may use.
type admission struct {
	reqs    []Request
	g       *Gangs
	runs    []*Run
	typesOf [][]allocation.Accelerator // computed on first use
	// A gang that did not fit will not fit until something is taken:
	// remembering that keeps a long queue behind a full cluster cheap.
	failed map[shape]bool
}

// shape is what decides whether a gang fits the free GPUs.
type shape struct {
	t            allocation.Accelerator
	gpus, worker int
	consolidate  bool
}

// types returns the types request i may use, fastest first; most requests
// behind a full cluster never need them.
func (a *admission) types(i int) []allocation.Accelerator {
	if a.typesOf[i] == nil {
		a.typesOf[i] = fastest(a.reqs[i].Throughput)
	}
	return a.typesOf[i]
}

// keep runs request i on the GPUs it runs on now, if it runs and they are
// free.
func (a *admission) keep(i int) bool {
	r := &a.reqs[i]
	if len(r.Current) == 0 {
		return false
	}
	t, ok := a.g.Keep(r.Current, r.GPUs, func(t allocation.Accelerator) bool { return r.Throughput[t] > 0 })
	if ok {
		a.runs[i] = &Run{Job: r.ID, Accelerator: t, Assignments: sortedCopy(r.Current), Extended: true}
	}
	return ok
}

// try runs request i where it is, or else places it on its fastest type
// with room.
func (a *admission) try(i int) bool {
	r := &a.reqs[i]
	if a.keep(i) {
		clear(a.failed)
		return true
	}
	for _, t := range a.types(i) {
		sh := shape{t, r.GPUs, r.worker(), r.Consolidate}
		if a.failed[sh] {
			continue
		}
		only := func(u allocation.Accelerator) bool { return u == t }
		place := a.g.Place
		if r.Consolidate {
			place = a.g.Consolidate
		}
		if as, _, ok := place(r.GPUs, r.worker(), only); ok {
			a.runs[i] = &Run{Job: r.ID, Accelerator: t, Assignments: as}
			clear(a.failed)
			return true
		}
		a.failed[sh] = true
	}
	return false
}

// inLine is HeadOfLine: every running request keeps its GPUs, so none is
// preempted, and the others run in order up to the first that cannot.
func (a *admission) inLine() {
	for i := range a.reqs {
		a.keep(i)
	}
	for i := range a.reqs {
		if a.runs[i] == nil && !a.try(i) {
			break
		}
	}
}

// choose walks the requests in order and marks in chosen those whose type
// has as many free GPUs as they need, as Tiresias' simulator does: a
// running request counts on the type it runs on. It fills typeOf with each
// server's type. Admit makes both, so that they stay off the heap.
func (a *admission) choose(c allocation.Cluster, chosen []bool, typeOf map[string]allocation.Accelerator) {
	count := make(map[allocation.Accelerator]int)
	for _, srv := range c.Servers {
		count[srv.Accelerator] += srv.GPUs
		typeOf[srv.ID] = srv.Accelerator
	}
	left := c.TotalGPUs()
	for i, r := range a.reqs {
		if left == 0 {
			break
		}
		var ts []allocation.Accelerator
		if len(r.Current) > 0 {
			if t, ok := typeOf[r.Current[0].Server]; ok && r.Throughput[t] > 0 {
				ts = []allocation.Accelerator{t}
			}
		}
		if ts == nil {
			ts = a.types(i)
		}
		for _, t := range ts {
			if count[t] >= r.GPUs {
				count[t] -= r.GPUs
				left -= r.GPUs
				chosen[i] = true
				break
			}
		}
	}
}

// backfill gives what is left to the requests that do not run yet, in
// order, so that no GPU idles while a request that fits waits. A preempted
// request runs on again only where it is: a move (a checkpoint and a
// restart) to where it could as well wait its turn gains nothing.
func (a *admission) backfill(typeOf map[string]allocation.Accelerator) {
	for i := range a.reqs {
		switch {
		case a.runs[i] != nil || a.g.Free() == 0:
		case keepable(&a.reqs[i], typeOf):
			a.keep(i)
		default:
			a.try(i)
		}
	}
}

// keepable reports whether a running request's GPUs could be kept on the
// empty cluster: all of them on existing servers of one type it can use,
// as many as it needs. Such a request, once preempted, never moves in the
// same decision; one that could not keep its GPUs anyway (a new GPU count,
// a type it can no longer use) is placed afresh.
func keepable(r *Request, typeOf map[string]allocation.Accelerator) bool {
	if len(r.Current) == 0 {
		return false
	}
	t, total := typeOf[r.Current[0].Server], 0
	for _, a := range r.Current {
		if u, ok := typeOf[a.Server]; !ok || u != t {
			return false
		}
		total += a.GPUs
	}
	return r.Throughput[t] > 0 && total == r.GPUs
}

// worker returns the request's worker size, at least 1.
func (r *Request) worker() int { return max(r.Worker, 1) }

// fastest returns the types with positive throughput, fastest first, ties
// by name.
func fastest(thr map[allocation.Accelerator]float64) []allocation.Accelerator {
	ts := []allocation.Accelerator{} // not nil: computed
	for t, x := range thr {
		if x > 0 {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(a, b allocation.Accelerator) int {
		return cmp.Or(cmp.Compare(thr[b], thr[a]), cmp.Compare(a, b))
	})
	return ts
}

func sortedCopy(as []allocation.Assignment) []allocation.Assignment {
	as = slices.Clone(as)
	slices.SortFunc(as, func(a, b allocation.Assignment) int { return cmp.Compare(a.Server, b.Server) })
	return as
}

func collect(runs []*Run) []Run {
	var out []Run
	for _, r := range runs {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out
}
