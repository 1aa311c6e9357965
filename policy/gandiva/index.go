package gandiva

import (
	"container/heap"
	"slices"

	"github.com/dlsched/dlsched/allocation"
)

// index is what placing one job needs of the sets and servers without
// scanning them all: the free servers of each type, the sets that may
// have room, the sets of each class and the GPUs each class holds. admit
// builds it once; create and carry keep it. Every choice stays the one a
// scan of the sets in order makes: lists are kept in set order (seq).
type index struct {
	idle    map[allocation.Accelerator]int // free servers per type
	open    []*set                         // sets that had room when last seen, in set order
	byClass map[int][]*set                 // in set order
	light   map[int]*loads                 // each class's sets, least loaded first
	held    map[int]int                    // GPUs of each class's sets
	target  map[int]int                    // Targets of the call's demand
}

// index builds the index of the call's sets and servers.
func (r *run) index() {
	ix := index{idle: make(map[allocation.Accelerator]int), byClass: make(map[int][]*set), held: make(map[int]int),
		light: make(map[int]*loads)}
	for _, srv := range r.servers {
		if !r.busy[srv.ID] {
			ix.idle[srv.Accelerator]++
		}
	}
	r.ix = &ix
	for _, s := range r.sets {
		r.indexSet(s)
	}
	if r.demand == nil {
		r.demand = make(map[int]int)
		for _, g := range r.req {
			r.demand[g] += g
		}
	}
	ix.target = Targets(r.demand, r.snap.Cluster.TotalGPUs())
}

// indexSet adds a set that has just been made (the last in set order).
func (r *run) indexSet(s *set) {
	if r.ix == nil {
		return
	}
	r.ix.byClass[s.Class] = append(r.ix.byClass[s.Class], s)
	r.ix.held[s.Class] += s.gpus
	h := r.ix.light[s.Class]
	if h == nil {
		h = &loads{}
		r.ix.light[s.Class] = h
	}
	heap.Push(h, s)
	r.reopen(s)
}

// unindexSet removes a set that is deleted, and frees its servers.
func (r *run) unindexSet(s *set) {
	if r.ix == nil {
		return
	}
	r.ix.byClass[s.Class] = slices.DeleteFunc(r.ix.byClass[s.Class], func(x *set) bool { return x == s })
	r.ix.held[s.Class] -= s.gpus
	heap.Remove(r.ix.light[s.Class], s.at)
	r.ix.open = slices.DeleteFunc(r.ix.open, func(x *set) bool { return x == s })
	s.listed = false
}

// reopen lists a set whose need may have fallen below its GPUs.
func (r *run) reopen(s *set) {
	if r.ix == nil || s.listed || s.need >= s.gpus {
		return
	}
	at, _ := slices.BinarySearchFunc(r.ix.open, s.seq, func(x *set, seq int) int { return x.seq - seq })
	r.ix.open = slices.Insert(r.ix.open, at, s)
	s.listed = true
}

// opened returns the sets with room, in set order, dropping those that
// filled up since.
func (r *run) opened() []*set {
	open := r.ix.open[:0]
	for _, s := range r.ix.open {
		if s.need < s.gpus {
			open = append(open, s)
		} else {
			s.listed = false
		}
	}
	clear(r.ix.open[len(open):])
	r.ix.open = open
	return open
}

// setCap is capacity for a set's servers, which never change: computed
// once per worker size.
func (r *run) setCap(s *set, w int) int {
	if c, ok := s.caps[w]; ok {
		return c
	}
	if s.caps == nil {
		s.caps = make(map[int]int)
	}
	s.caps[w] = r.capacity(s.Servers, w)
	return s.caps[w]
}

// needs records that a set's need changed.
func (r *run) needs(s *set) {
	if r.ix == nil {
		return
	}
	if h := r.ix.light[s.Class]; h != nil && s.at >= 0 && s.at < h.Len() && (*h)[s.at] == s {
		heap.Fix(h, s.at)
	}
}

// loads is a heap of sets, least loaded (need/gpus) first, then in set
// order: the order in which oversubscribe looks at them.
type loads []*set

func (h loads) Len() int { return len(h) }
func (h loads) Less(a, b int) bool {
	x, y := h[a].need*h[b].gpus, h[b].need*h[a].gpus
	return x < y || x == y && h[a].seq < h[b].seq
}
func (h loads) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].at, h[b].at = a, b
}
func (h *loads) Push(x any) {
	s := x.(*set)
	s.at = len(*h)
	*h = append(*h, s)
}
func (h *loads) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.at = -1
	return s
}
