package gandiva

import (
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

// A set counts GPUs, but a job's GPUs come in workers (Job.GPUsPerWorker),
// each on one server: the helpers here check that the units a set runs can
// be laid out on its servers in whole workers, as decide lays them out.

// gcd returns the greatest common divisor of two positive numbers.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// worker returns the GPUs of one worker of unit u: a job's worker size, or
// for a pair the least common multiple of both, so that the GPUs the pair
// shares hold whole workers of each job.
func (r *run) worker(u []string) int {
	w := 1
	for _, id := range u {
		k := r.jobs[id].Worker()
		w = w / gcd(w, k) * k
	}
	return w
}

// pairable reports whether jobs a and b may share GPUs in set s: they
// request the same count (a multiple of both worker sizes, hence of their
// least common multiple), and the set's servers hold it in workers of that
// multiple.
func (r *run) pairable(s *set, a, b string) bool {
	return r.req[a] == r.req[b] && r.capacity(s.Servers, r.worker([]string{a, b})) >= r.req[a]
}

// size returns the GPUs unit u runs on: a grown job's grown count, else
// its request.
func (r *run) size(u []string) int {
	if len(u) == 1 && r.grown[u[0]] > r.req[u[0]] {
		return r.grown[u[0]]
	}
	return r.req[u[0]]
}

// whole reports whether every entry of place is a multiple of w.
func whole(place []allocation.Assignment, w int) bool {
	return !slices.ContainsFunc(place, func(a allocation.Assignment) bool { return a.GPUs%w != 0 })
}

// layout places the units us on set s's servers as decide does: first the
// units that keep the GPUs they hold, then the others in order, each on the
// fewest servers in whole workers of the unit. It returns the assignments
// of the units placed, by their first job.
func (r *run) layout(s *set, us [][]string) map[string][]allocation.Assignment {
	servers := make([]allocation.Server, len(s.Servers))
	for i, id := range s.Servers {
		servers[i] = r.srv[id]
	}
	g := placement.NewGangs(allocation.Cluster{Servers: servers})
	anyType := func(allocation.Accelerator) bool { return true }
	out := make(map[string][]allocation.Assignment, len(us))
	var later [][]string
	for _, u := range us {
		place := r.jobs[u[0]].Placement
		if whole(place, r.worker(u)) {
			if _, ok := g.Keep(place, r.size(u), anyType); ok {
				out[u[0]] = slices.Clone(place)
				continue
			}
		}
		later = append(later, u)
	}
	for _, u := range later {
		if as, _, ok := g.Place(r.size(u), r.worker(u), anyType); ok {
			out[u[0]] = as
		}
	}
	return out
}

// holds reports whether set s can run all its units and the extra ones at
// once, in whole workers.
func (r *run) holds(s *set, extra ...[]string) bool {
	us := append(r.units(s), extra...)
	return len(r.layout(s, us)) == len(us)
}

// capacity returns the GPUs the servers hold in whole workers of w GPUs.
func (r *run) capacity(servers []string, w int) int {
	n := 0
	for _, id := range servers {
		n += r.srv[id].GPUs / w * w
	}
	return n
}
