package gandiva

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// The scans the index replaces, as they were: every set in set order.

func (r *run) scanJoin(j *policy.Job, g int, same bool) *set {
	var best *set
	for _, s := range r.sets {
		if (s.Class == g) != same || !usable(j, s.typ) || s.need+g > s.gpus || !r.holds(s, []string{j.ID}) {
			continue
		}
		if best == nil || s.need > best.need {
			best = s
		}
	}
	return best
}

func (r *run) scanOversubscribe(j *policy.Job, g int) *set {
	var best *set
	for _, s := range r.sets {
		if s.Class != g || !usable(j, s.typ) || r.capacity(s.Servers, j.Worker()) < g {
			continue
		}
		if best == nil || s.need*best.gpus < best.need*s.gpus {
			best = s
		}
	}
	return best
}

func (r *run) scanGiver(j *policy.Job, g int) *set {
	held, count := map[int]int{}, map[int]int{}
	for _, s := range r.sets {
		held[s.Class] += s.gpus
		count[s.Class]++
	}
	target := Targets(r.demand, r.snap.Cluster.TotalGPUs())
	if held[g] > 0 && held[g] >= target[g] {
		return nil
	}
	var best *plan
	for _, from := range r.sets {
		k := from.Class
		if k == g || count[k] < 2 || held[k]-from.gpus < target[k] || r.capacity(from.Servers, j.Worker()) < g || !usable(j, from.typ) {
			continue
		}
		if best != nil && len(from.Jobs) >= best.jobs {
			continue
		}
		if p := r.regroup(from); p != nil {
			best = p
		}
	}
	if best == nil {
		return nil
	}
	return best.from
}

// At every job admit places, on random clusters and job mixes, the index
// answers as the scans of every set did.
func TestIndexMatchesScans(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	types := []allocation.Accelerator{"k80", "v100"}
	for c := range 40 {
		s := &policy.Snapshot{Now: time.Hour}
		for i := range 2 + r.IntN(12) {
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("s%02d", i), Accelerator: types[r.IntN(2)], GPUs: []int{1, 2, 4, 8}[r.IntN(4)]})
		}
		for i := range 5 + r.IntN(60) {
			w := []int{1, 1, 2, 4}[r.IntN(4)]
			j := policy.Job{ID: fmt.Sprintf("j%02d", i), GPUs: w * (1 + r.IntN(2)), GPUsPerWorker: w, Arrival: time.Duration(r.IntN(3600)) * time.Second,
				StepsTotal: 1000, Throughput: map[allocation.Accelerator]float64{}}
			for _, typ := range types {
				if r.IntN(3) > 0 || len(j.Throughput) == 0 {
					j.Throughput[typ] = 1
				}
			}
			s.Jobs = append(s.Jobs, j)
		}
		s, out, err := policy.Screen(s)
		if err != nil {
			t.Fatal(err)
		}
		run := (&Gandiva{}).begin(s, out)
		run.index()
		failed := map[string]bool{}
		for i := range s.Jobs {
			j := &s.Jobs[i]
			if run.jobs[j.ID] == nil {
				continue
			}
			g := run.req[j.ID]
			for _, same := range []bool{true, false} {
				if want, got := run.scanJoin(j, g, same), run.join(j, g, same); want != got {
					t.Fatalf("case %d, job %s: join(same %v) = %v, scan %v", c, j.ID, same, got, want)
				}
			}
			if want, got := run.scanOversubscribe(j, g), run.oversubscribe(j, g); want != got {
				t.Fatalf("case %d, job %s: oversubscribe = %v, scan %v", c, j.ID, got, want)
			}
			var got *set
			if p := run.giver(j, g); p != nil {
				got = p.from
			}
			if want := run.scanGiver(j, g); want != got {
				t.Fatalf("case %d, job %s: giver = %v, scan %v", c, j.ID, got, want)
			}
			run.place(j, failed)
		}
	}
}
