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
// the fewest servers of one type. Only GPUs are counted.
type Gangs struct {
	servers []allocation.Server // sorted by ID
	types   []allocation.Accelerator
	free    map[string]int
	onType  map[allocation.Accelerator]int // free GPUs per type, so a gang that cannot fit fails at once
}

// NewGangs returns the free GPUs of c.
func NewGangs(c allocation.Cluster) *Gangs {
	g := &Gangs{
		servers: slices.SortedFunc(slices.Values(c.Servers), func(a, b allocation.Server) int { return cmp.Compare(a.ID, b.ID) }),
		types:   c.Types(),
		free:    make(map[string]int),
		onType:  make(map[allocation.Accelerator]int),
	}
	for _, srv := range g.servers {
		g.free[srv.ID] = srv.GPUs
		g.onType[srv.Accelerator] += srv.GPUs
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
	g.free[id] -= n
	g.onType[t] -= n
}

// Keep takes the GPUs of place for a job if they are all still free, on one
// type that usable accepts, and number gpus (any number when gpus is 0). It
// returns the type, or false, taking nothing.
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

// Place takes k GPUs on the fewest servers of one type that usable accepts:
// the fullest server that holds them all, or else the servers with the most
// free GPUs; among types, the one needing the fewest servers, then the
// first by name. It returns the assignments, sorted by server, and the type,
// or false, taking nothing, when no usable type has k free GPUs.
func (g *Gangs) Place(k int, usable func(allocation.Accelerator) bool) ([]allocation.Assignment, allocation.Accelerator, bool) {
	return g.place(k, usable, false)
}

// Consolidate is Place for a job that must be consolidated: it takes k GPUs
// only on as few servers as could ever hold k GPUs of the type (one server
// when one is big enough, else the biggest servers whole), and otherwise
// takes nothing and returns false, so that the job waits.
func (g *Gangs) Consolidate(k int, usable func(allocation.Accelerator) bool) ([]allocation.Assignment, allocation.Accelerator, bool) {
	return g.place(k, usable, true)
}

// fewest returns the fewest servers of type t whose GPUs add up to k.
func (g *Gangs) fewest(t allocation.Accelerator, k int) int {
	var sizes []int
	for _, srv := range g.servers {
		if srv.Accelerator == t {
			sizes = append(sizes, srv.GPUs)
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
	return n
}

func (g *Gangs) place(k int, usable func(allocation.Accelerator) bool, consolidate bool) ([]allocation.Assignment, allocation.Accelerator, bool) {
	if k < 1 {
		return nil, "", false
	}
	var best []allocation.Assignment
	var bestType allocation.Accelerator
	for _, t := range g.types {
		if g.onType[t] < k || !usable(t) {
			continue
		}
		var cands []allocation.Server
		for _, srv := range g.servers {
			if srv.Accelerator == t && g.free[srv.ID] > 0 {
				cands = append(cands, srv)
			}
		}
		var place []allocation.Assignment
		fit := -1
		for i, srv := range cands {
			if g.free[srv.ID] >= k && (fit < 0 || g.free[srv.ID] < g.free[cands[fit].ID]) {
				fit = i
			}
		}
		if fit >= 0 {
			place = []allocation.Assignment{{Server: cands[fit].ID, GPUs: k}}
		} else {
			slices.SortStableFunc(cands, func(a, b allocation.Server) int { return cmp.Compare(g.free[b.ID], g.free[a.ID]) })
			left := k
			for _, srv := range cands {
				n := min(left, g.free[srv.ID])
				place = append(place, allocation.Assignment{Server: srv.ID, GPUs: n})
				if left -= n; left == 0 {
					break
				}
			}
		}
		if consolidate && len(place) > g.fewest(t, k) {
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
