package gandiva

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// place puts job j into a set by the first rule that applies, or leaves it
// waiting: a set of its class with room; a free server (or servers) which
// becomes a set of its class; room in a set of another class; migration to
// make room; rebalancing between classes; oversubscribing the least-loaded
// set of its class.
func (r *run) place(j *policy.Job, failed map[string]bool) {
	g := r.req[j.ID]
	if s := r.join(j, g, true); s != nil {
		r.add(s, j.ID)
		return
	}
	if servers := r.free(j, g); servers != nil {
		r.create(servers, g, j.ID)
		return
	}
	if s := r.join(j, g, false); s != nil {
		r.add(s, j.ID)
		return
	}
	if r.migrate(j, g, failed) || r.rebalance(j, g) {
		return
	}
	if s := r.oversubscribe(j, g); s != nil {
		r.add(s, j.ID)
	}
}

func usable(j *policy.Job, t allocation.Accelerator) bool { return j.Throughput[t] > 0 }

// fits reports whether every job of unit u can run on type t.
func (r *run) fits(u []string, t allocation.Accelerator) bool {
	for _, id := range u {
		if !usable(r.jobs[id], t) {
			return false
		}
	}
	return true
}

// join returns the fullest set, of class g or (same false) of another
// class, where j can run and that has g GPUs no unit requests, in whole
// workers of j beside its units' workers.
func (r *run) join(j *policy.Job, g int, same bool) *set {
	var best *set
	for _, s := range r.opened() {
		if (s.Class == g) != same || !usable(j, s.typ) || s.need+g > s.gpus || !r.holds(s, []string{j.ID}) {
			continue
		}
		if best == nil || s.need > best.need {
			best = s
		}
	}
	return best
}

// oversubscribe returns the least-loaded set of class g where j can run
// (its servers hold j's workers): load is the GPUs its units request over
// the GPUs it has.
func (r *run) oversubscribe(j *policy.Job, g int) *set {
	h := r.ix.light[g]
	if h == nil {
		return nil
	}
	// The least loaded first: pop until one holds j, then put them back.
	var popped []*set
	var best *set
	for h.Len() > 0 {
		s := heap.Pop(h).(*set)
		popped = append(popped, s)
		if usable(j, s.typ) && r.setCap(s, j.Worker()) >= g {
			best = s
			break
		}
	}
	for _, s := range popped {
		heap.Push(h, s)
	}
	return best
}

// free returns free servers for a new set of class g where j can run: the
// smallest one that holds g GPUs, or else, of one type, the fewest that do
// together in whole workers of j, the most room first.
func (r *run) free(j *policy.Job, g int) []string {
	if !slices.ContainsFunc(r.types, func(t allocation.Accelerator) bool { return r.ix.idle[t] > 0 && usable(j, t) }) {
		return nil
	}
	var one *allocation.Server
	for i := range r.servers {
		srv := &r.servers[i]
		if r.busy[srv.ID] || srv.GPUs < g || !usable(j, srv.Accelerator) {
			continue
		}
		if one == nil || srv.GPUs < one.GPUs {
			one = srv
		}
	}
	if one != nil {
		return []string{one.ID}
	}
	var best []string
	for _, t := range r.types {
		if !usable(j, t) {
			continue
		}
		w := j.Worker()
		room := func(srv allocation.Server) int { return srv.GPUs / w * w }
		var cand []allocation.Server
		for _, srv := range r.servers {
			if srv.Accelerator == t && !r.busy[srv.ID] && room(srv) > 0 {
				cand = append(cand, srv)
			}
		}
		slices.SortStableFunc(cand, func(a, b allocation.Server) int { return cmp.Compare(room(b), room(a)) })
		var ids []string
		n := 0
		for _, srv := range cand {
			if n >= g {
				break
			}
			ids, n = append(ids, srv.ID), n+room(srv)
		}
		if n >= g && (best == nil || len(ids) < len(best)) {
			best = ids
		}
	}
	if best != nil {
		slices.Sort(best)
	}
	return best
}

func (r *run) add(s *set, ids ...string) {
	for _, id := range ids {
		s.Jobs = append(s.Jobs, id)
		r.owner[id] = s
	}
	r.more(s, r.req[ids[0]])
}

func (r *run) create(servers []string, class int, id string) {
	s := &set{Set: Set{Class: class, Servers: servers, SliceStart: r.now}, typ: r.srv[servers[0]].Accelerator}
	for _, sid := range servers {
		s.gpus += r.srv[sid].GPUs
		r.busy[sid] = true
		if r.ix != nil {
			r.ix.idle[s.typ]--
		}
	}
	s.seq, r.seq = r.seq, r.seq+1
	r.sets = append(r.sets, s)
	r.indexSet(s)
	r.add(s, id)
}

// move is a unit to migrate and the set it goes to.
type move struct {
	unit []string
	to   *set
}

// plan frees room in set from by moving units elsewhere.
type plan struct {
	from  *set
	moves []move
	jobs  int // jobs migrated
	gpus  int // GPUs of the jobs migrated
}

// migrate makes room for j in one set by moving units of that set onto
// other sets with room, without time-slicing them, when the cluster has g
// GPUs to spare where j can run. Of the sets that could take j, it picks
// the one needing the fewest migrated jobs, and carries the plan out only
// if the gain exceeds the cost:
//
//	g × quantum  >  Σ migrated jobs' GPUs × migration cost
//
// the gain counting the GPU-seconds j runs at least one quantum earlier.
// failed remembers, by class and usable types, what cannot succeed in this
// call.
func (r *run) migrate(j *policy.Job, g int, failed map[string]bool) bool {
	var ts []allocation.Accelerator
	for _, t := range r.types {
		if usable(j, t) {
			ts = append(ts, t)
		}
	}
	fk := fmt.Sprint(g, ts)
	if failed[fk] {
		return false
	}
	spare := 0
	for _, s := range r.opened() { // the others have no room
		if usable(j, s.typ) {
			spare += max(0, s.gpus-s.need)
		}
	}
	var best *plan
	if spare >= g {
		for _, s := range r.sets {
			if !usable(j, s.typ) || s.gpus < g {
				continue
			}
			p := r.evict(s, j.ID, g)
			if p != nil && (best == nil || p.jobs < best.jobs || (p.jobs == best.jobs && p.gpus < best.gpus)) {
				best = p
			}
			if best != nil && best.jobs == 1 {
				break
			}
		}
	}
	if best == nil || !r.worth(g, best.gpus) {
		failed[fk] = true
		return false
	}
	r.carry(best, j.ID, g)
	clear(failed)
	return true
}

// worth reports whether starting a g-GPU job now is worth migrating jobs
// holding gpus GPUs.
func (r *run) worth(g, gpus int) bool {
	return float64(g)*r.q > float64(gpus)*r.p.migrationCost()
}

// evict plans to free g GPUs in set from for job id, moving its largest
// units first (the back of the round-robin queue first among equals) each
// to the set with room that fits it best, of its own class first. Every
// set must still lay out its units in whole workers: a target beside the
// units it already has and takes, from beside job id.
func (r *run) evict(from *set, id string, g int) *plan {
	deficit := g - (from.gpus - from.need)
	us := r.units(from)
	slices.Reverse(us)
	slices.SortStableFunc(us, func(a, b []string) int { return cmp.Compare(r.req[b[0]], r.req[a[0]]) })
	p := &plan{from: from}
	taken := make(map[*set]int)
	gets := make(map[*set][][]string) // the units each target takes
	for _, u := range us {
		if deficit <= 0 && r.holdsAfter(p, id) {
			break
		}
		ug := r.req[u[0]]
		var to *set
		for _, s := range r.sets {
			room := s.gpus - s.need - taken[s]
			if s == from || room < ug || !r.fits(u, s.typ) || !r.holds(s, append(slices.Clone(gets[s]), u)...) {
				continue
			}
			if to == nil {
				to = s
				continue
			}
			best := to.gpus - to.need - taken[to]
			if (s.Class == ug) != (to.Class == ug) {
				if s.Class == ug {
					to = s
				}
			} else if room < best {
				to = s
			}
		}
		if to == nil {
			return nil
		}
		taken[to] += ug
		gets[to] = append(gets[to], u)
		p.moves = append(p.moves, move{slices.Clone(u), to})
		p.jobs += len(u)
		p.gpus += len(u) * ug
		deficit -= ug
	}
	if deficit > 0 || !r.holdsAfter(p, id) {
		return nil
	}
	return p
}

// holdsAfter reports whether the plan's source set, without the units it
// moves, lays out its other units and job id in whole workers.
func (r *run) holdsAfter(p *plan, id string) bool {
	moved := make(map[string]bool, len(p.moves))
	for _, m := range p.moves {
		moved[m.unit[0]] = true
	}
	us := slices.DeleteFunc(r.units(p.from), func(u []string) bool { return moved[u[0]] })
	us = append(us, []string{id})
	return len(r.layout(p.from, us)) == len(us)
}

// carry moves the plan's units and puts job id in the room made: a set
// left empty becomes a set of class g.
func (r *run) carry(p *plan, id string, g int) {
	for _, m := range p.moves {
		p.from.Jobs = slices.DeleteFunc(p.from.Jobs, func(x string) bool { return slices.Contains(m.unit, x) })
		p.from.need -= r.req[m.unit[0]]
		r.needs(p.from)
		r.add(m.to, m.unit...)
		r.migrated += len(m.unit)
	}
	r.reopen(p.from)
	if len(p.from.Jobs) > 0 {
		r.add(p.from, id)
		return
	}
	r.sets = slices.DeleteFunc(r.sets, func(s *set) bool { return s == p.from })
	r.unindexSet(p.from)
	for _, sid := range p.from.Servers {
		r.busy[sid] = false
		if r.ix != nil {
			r.ix.idle[p.from.typ]++
		}
	}
	r.create(p.from.Servers, g, id)
}

// rebalance gives class g a set when it holds fewer GPUs than its target
// (Targets), or none: a class that would stay at or above its target gives
// up one of its sets where j can run, its members merging onto the class's
// other sets, the least-loaded first, time-sliced there. The set with the
// fewest members goes, if the gain exceeds the cost as for migration, the
// gain counting a quantum of all the set's GPUs for class g.
func (r *run) rebalance(j *policy.Job, g int) bool {
	best := r.giver(j, g)
	if best == nil || !r.worth(best.from.gpus, best.gpus) {
		return false
	}
	r.carry(best, j.ID, g)
	return true
}

// giver returns the plan rebalance would carry out for job j of class g,
// before weighing it, or nil: the set with the fewest members that can go,
// the first in set order among equals, found as the first candidate in
// that order with a plan.
func (r *run) giver(j *policy.Job, g int) *plan {
	held, target := r.ix.held, r.ix.target
	if held[g] > 0 && held[g] >= target[g] {
		return nil
	}
	var cands []*set
	for k, sets := range r.ix.byClass {
		if k == g || len(sets) < 2 {
			continue
		}
		for _, from := range sets {
			if held[k]-from.gpus >= target[k] && r.setCap(from, j.Worker()) >= g && usable(j, from.typ) {
				cands = append(cands, from)
			}
		}
	}
	slices.SortFunc(cands, func(a, b *set) int { return cmp.Or(cmp.Compare(len(a.Jobs), len(b.Jobs)), cmp.Compare(a.seq, b.seq)) })
	for _, from := range cands {
		if p := r.regroup(from); p != nil {
			return p
		}
	}
	return nil
}

// regroup plans to empty set from onto the other sets of its class, each
// unit onto the least loaded that holds it, or returns nil.
func (r *run) regroup(from *set) *plan {
	p := &plan{from: from}
	taken := make(map[*set]int)
	for _, u := range r.units(from) {
		ug := r.req[u[0]]
		var to *set
		for _, s := range r.ix.byClass[from.Class] {
			if s == from || r.setCap(s, r.worker(u)) < ug || !r.fits(u, s.typ) {
				continue
			}
			if to == nil || (s.need+taken[s])*to.gpus < (to.need+taken[to])*s.gpus {
				to = s
			}
		}
		if to == nil {
			return nil
		}
		taken[to] += ug
		p.moves = append(p.moves, move{slices.Clone(u), to})
		p.jobs += len(u)
		p.gpus += len(u) * ug
	}
	return p
}
