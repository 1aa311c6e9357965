package placement

import (
	"cmp"
	"slices"

	"github.com/dlsched/dlsched/allocation"
)

// Gangs hands out a cluster's whole GPUs to jobs one at a time, in the order
// the caller decides: the primitive of policies that pick which jobs run
// now (Shockwave's round plans, FIFO and priority queues). Keep gives a
// running job back the GPUs it holds (lease extension); Place puts a job on
// the fewest servers of one type, in whole workers: a worker's GPUs are on
// one server. Only GPUs are counted.
//
// Place takes time in the number of distinct free counts of a type's
// servers, not in its servers: an index keeps each type's servers by free
// count.
type Gangs struct {
	servers []allocation.Server // sorted by ID
	types   []allocation.Accelerator
	free    map[string]int
	at      map[string]int                   // index of each server in servers
	onType  map[allocation.Accelerator]int   // free GPUs per type, so a gang that cannot fit fails at once
	byFree  map[allocation.Accelerator]index // each type's servers by free count
	fewer   map[fewKey]int                   // fewest's answers
}

type fewKey struct {
	t    allocation.Accelerator
	k, w int
}

// NewGangs returns the free GPUs of c.
func NewGangs(c allocation.Cluster) *Gangs {
	g := &Gangs{
		servers: slices.SortedFunc(slices.Values(c.Servers), func(a, b allocation.Server) int { return cmp.Compare(a.ID, b.ID) }),
		types:   c.Types(),
		free:    make(map[string]int),
		at:      make(map[string]int),
		onType:  make(map[allocation.Accelerator]int),
		byFree:  make(map[allocation.Accelerator]index),
		fewer:   make(map[fewKey]int),
	}
	for i, srv := range g.servers {
		g.free[srv.ID] = srv.GPUs
		g.at[srv.ID] = i
		g.onType[srv.Accelerator] += srv.GPUs
		ix, ok := g.byFree[srv.Accelerator]
		if !ok {
			ix = index{}
			g.byFree[srv.Accelerator] = ix
		}
		ix.add(srv.GPUs, i, len(c.Servers))
	}
	return g
}

// Free returns the free GPUs left in all.
func (g *Gangs) Free() int {
	n := 0
	for _, f := range g.onType {
		n += f
	}
	return n
}

// FreeOn returns the free GPUs left of type t.
func (g *Gangs) FreeOn(t allocation.Accelerator) int { return g.onType[t] }

func (g *Gangs) take(id string, t allocation.Accelerator, n int) {
	ix, i := g.byFree[t], g.at[id]
	ix.remove(g.free[id], i)
	g.free[id] -= n
	ix.add(g.free[id], i, len(g.servers))
	g.onType[t] -= n
}

// Keep takes the GPUs of place for a job if they are all still free, on one
// type that usable accepts, and number gpus (any number when gpus is 0). It
// returns the type, or false, taking nothing. The GPUs of place on each
// server are whole workers of the job: callers get them from a placement
// validated upstream (policy.Validate), so Keep does not need to know the
// worker size.
func (g *Gangs) Keep(place []allocation.Assignment, gpus int, usable func(allocation.Accelerator) bool) (allocation.Accelerator, bool) {
	need := make(map[string]int)
	total := 0
	var types []allocation.Accelerator
	for _, a := range place {
		need[a.Server] += a.GPUs
		total += a.GPUs
		i, ok := slices.BinarySearchFunc(g.servers, a.Server, func(s allocation.Server, id string) int { return cmp.Compare(s.ID, id) })
		if !ok {
			return "", false
		}
		if t := g.servers[i].Accelerator; !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(types) != 1 || !usable(types[0]) || total == 0 || (gpus > 0 && total != gpus) {
		return "", false
	}
	for id, n := range need {
		if g.free[id] < n {
			return "", false
		}
	}
	for id, n := range need {
		g.take(id, types[0], n)
	}
	return types[0], true
}

// Place takes k GPUs in workers of w GPUs (w ≤ 1: any split) on the fewest
// servers of one type that usable accepts. Each server gets a multiple of
// w, so a server has room for ⌊free/w⌋·w of the gang. Place picks the
// fullest server that holds all k, or else the servers with the most room;
// among types, the one needing the fewest servers, then the first by name.
// It returns the assignments, sorted by server, and the type, or false,
// taking nothing, when no usable type has room for k GPUs in whole workers
// (or k is not a multiple of w).
func (g *Gangs) Place(k, w int, usable func(allocation.Accelerator) bool) ([]allocation.Assignment, allocation.Accelerator, bool) {
	return g.place(k, max(w, 1), usable, false)
}

// Consolidate is Place for a job that must be consolidated: it takes k GPUs
// in workers of w only on as few servers as could ever hold k GPUs of the
// type in whole workers (one server when one is big enough, else the
// biggest servers whole), and otherwise takes nothing and returns false, so
// that the job waits.
func (g *Gangs) Consolidate(k, w int, usable func(allocation.Accelerator) bool) ([]allocation.Assignment, allocation.Accelerator, bool) {
	return g.place(k, max(w, 1), usable, true)
}

// fewest returns the fewest servers of type t that hold k GPUs in workers of
// w when empty: a server holds ⌊GPUs/w⌋·w of them.
func (g *Gangs) fewest(t allocation.Accelerator, k, w int) int {
	key := fewKey{t, k, w}
	if n, ok := g.fewer[key]; ok {
		return n
	}
	var sizes []int
	for _, srv := range g.servers {
		if srv.Accelerator == t {
			sizes = append(sizes, srv.GPUs/w*w)
		}
	}
	slices.SortFunc(sizes, func(a, b int) int { return b - a })
	n := 0
	for _, size := range sizes {
		if k <= 0 {
			break
		}
		k -= size
		n++
	}
	g.fewer[key] = n
	return n
}

// room returns the GPUs of a gang in workers of w that server id can take.
func (g *Gangs) room(id string, w int) int { return g.free[id] / w * w }

func (g *Gangs) place(k, w int, usable func(allocation.Accelerator) bool, consolidate bool) ([]allocation.Assignment, allocation.Accelerator, bool) {
	if k < 1 || k%w != 0 {
		return nil, "", false
	}
	var best []allocation.Assignment
	var bestType allocation.Accelerator
	for _, t := range g.types {
		// The free GPUs bound the room: a cheap test first.
		if g.onType[t] < k || !usable(t) {
			continue
		}
		place := g.placeOn(t, k, w)
		if place == nil || (consolidate && len(place) > g.fewest(t, k, w)) {
			continue
		}
		if best == nil || len(place) < len(best) {
			best, bestType = place, t
		}
	}
	if best == nil {
		return nil, "", false
	}
	for _, a := range best {
		g.take(a.Server, bestType, a.GPUs)
	}
	slices.SortFunc(best, func(a, b allocation.Assignment) int { return cmp.Compare(a.Server, b.Server) })
	return best, bestType, true
}

// placeOn returns where k GPUs in workers of w would go on type t, taking
// nothing: the fullest server with room for all of them, or else the
// servers with the most room (ties by ID); nil if the type's room is short.
// A server with f free has room for ⌊f/w⌋·w, so one with room for all k
// (a multiple of w) is one with f ≥ k.
func (g *Gangs) placeOn(t allocation.Accelerator, k, w int) []allocation.Assignment {
	ix := g.byFree[t]
	counts := ix.counts()
	for _, c := range counts {
		if c.free >= k {
			return []allocation.Assignment{{Server: g.servers[ix[c.free].next(0)].ID, GPUs: k}}
		}
	}
	total := 0
	for _, c := range counts {
		total += c.free / w * w * c.n
	}
	if total < k {
		return nil
	}
	var place []allocation.Assignment
	left := k
	// Rooms descending; the servers of one room, whose free counts differ
	// by less than w, in ID order.
	for hi := len(counts) - 1; hi >= 0 && left > 0; {
		room := counts[hi].free / w * w
		lo := hi
		for lo > 0 && counts[lo-1].free/w*w == room {
			lo--
		}
		if room == 0 {
			break
		}
		for _, i := range ix.merged(counts[lo : hi+1]) {
			n := min(left, room)
			place = append(place, allocation.Assignment{Server: g.servers[i].ID, GPUs: n})
			if left -= n; left == 0 {
				break
			}
		}
		hi = lo - 1
	}
	return place
}
