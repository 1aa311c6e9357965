package placement

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/allocation"
)

// naivePlaceOn is placeOn by scanning every server: the definition the
// index must agree with.
func (g *Gangs) naivePlaceOn(t allocation.Accelerator, k, w int) []allocation.Assignment {
	var cands []allocation.Server
	for _, srv := range g.servers {
		if srv.Accelerator == t && g.room(srv.ID, w) > 0 {
			cands = append(cands, srv)
		}
	}
	fit := -1
	for i, srv := range cands {
		if g.room(srv.ID, w) >= k && (fit < 0 || g.free[srv.ID] < g.free[cands[fit].ID]) {
			fit = i
		}
	}
	if fit >= 0 {
		return []allocation.Assignment{{Server: cands[fit].ID, GPUs: k}}
	}
	slices.SortStableFunc(cands, func(a, b allocation.Server) int { return cmp.Compare(g.room(b.ID, w), g.room(a.ID, w)) })
	var place []allocation.Assignment
	left := k
	for _, srv := range cands {
		n := min(left, g.room(srv.ID, w))
		place = append(place, allocation.Assignment{Server: srv.ID, GPUs: n})
		if left -= n; left == 0 {
			return place
		}
	}
	return nil
}

// The indexed placeOn chooses exactly the servers the scan does, over
// random clusters and sequences of gangs that fill them.
func TestPlaceOnIndexMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for c := range 300 {
		var cl allocation.Cluster
		for i := range 1 + r.IntN(40) {
			cl.Servers = append(cl.Servers, allocation.Server{ID: fmt.Sprintf("s%02d", r.IntN(100)*100+i),
				Accelerator: []allocation.Accelerator{"a", "b"}[r.IntN(2)], GPUs: 1 + r.IntN(12)})
		}
		g := NewGangs(cl)
		for range 60 {
			w := []int{1, 1, 2, 3, 4}[r.IntN(5)]
			k := w * (1 + r.IntN(6))
			for _, typ := range g.types {
				want, got := g.naivePlaceOn(typ, k, w), g.placeOn(typ, k, w)
				if !slices.Equal(want, got) {
					t.Fatalf("cluster %d: %d GPUs in workers of %d on %s: got %v, want %v", c, k, w, typ, got, want)
				}
			}
			g.Place(k, w, func(allocation.Accelerator) bool { return true })
		}
	}
}
