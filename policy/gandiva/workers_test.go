package gandiva_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/gandiva"
)

// sized returns a job of gpus GPUs in workers of w.
func sized(id string, gpus, w int) policy.Job {
	j := job(id, gpus)
	j.GPUsPerWorker = w
	return j
}

// elastic returns an elastic job of gpus GPUs in workers of w.
func elastic(id string, gpus, w int) policy.Job {
	j := sized(id, gpus, w)
	j.Elastic = &policy.Elastic{BatchSize: 32}
	return j
}

// wholeWorkers checks that every placed job holds whole workers on each
// server.
func wholeWorkers(t *testing.T, s *policy.Snapshot, d *policy.Decision) {
	t.Helper()
	for _, j := range s.Jobs {
		for _, a := range d.Placement[j.ID] {
			if a.GPUs%j.Worker() != 0 {
				t.Errorf("at %v: job %s has %d GPUs on %s, workers of %d", s.Now, j.ID, a.GPUs, a.Server, j.Worker())
			}
		}
	}
}

// cluster returns one server of each size given, s0, s1, ...
func cluster(sizes ...int) allocation.Cluster {
	var c allocation.Cluster
	for i, n := range sizes {
		c.Servers = append(c.Servers, servers(i+1, n).Servers[i])
	}
	return c
}

// An elastic job alone on a 7-GPU server grows by doubling to the server's
// GPUs rounded down to whole workers: 2, 4, 6 in workers of 2, where one of
// one-GPU workers reaches 7.
func TestGrowWholeWorkers(t *testing.T) {
	for _, tc := range []struct{ w, want int }{{2, 6}, {1, 7}} {
		j := elastic("a", 2, tc.w)
		dr := newDriver(t, &gandiva.Gandiva{}, cluster(7), j)
		dr.at(0)
		d := dr.at(time.Minute)
		if got := d.Allocation["a"].GPUs; got != tc.want {
			t.Errorf("workers of %d: grew to %d GPUs, want %d", tc.w, got, tc.want)
		}
		wholeWorkers(t, &dr.snap, d)
	}
}

// A job of 4-GPU workers on two 6-GPU servers (a set of 4+4) does not grow
// to 12: its workers would not fit; it keeps running on 8.
func TestGrowOnlyWhereWorkersFit(t *testing.T) {
	dr := newDriver(t, &gandiva.Gandiva{}, cluster(6, 6), elastic("a", 8, 4))
	dr.at(0)
	d := dr.at(time.Minute)
	want := []allocation.Assignment{{Server: "s0", GPUs: 4}, {Server: "s1", GPUs: 4}}
	if got := d.Placement["a"]; !slices.Equal(got, want) {
		t.Errorf("a on %v, want %v", got, want)
	}
}

// A migration target must hold the moved job's workers. Set {s0} (4 GPUs)
// runs x and z (2 GPUs each); set {s1, s2} (3 GPUs each) runs y on 2+2,
// leaving 1+1 free. A new job j of 2-GPU workers fits neither. With x and
// z of one-GPU workers, z (the back of the queue) migrates to the 1+1 and
// j takes its place; with 2-GPU workers it cannot, and nothing moves.
func TestMigrationTargetHoldsWorkers(t *testing.T) {
	for _, tc := range []struct {
		w     int
		moved bool
	}{{1, true}, {2, false}} {
		x, z, y := sized("x", 2, tc.w), sized("z", 2, tc.w), sized("y", 4, 2)
		x.Placement = []allocation.Assignment{{Server: "s0", GPUs: 2}}
		z.Placement = []allocation.Assignment{{Server: "s0", GPUs: 2}}
		y.Placement = []allocation.Assignment{{Server: "s1", GPUs: 2}, {Server: "s2", GPUs: 2}}
		j := sized("j", 2, 2)
		j.Arrival = time.Minute
		p := &gandiva.Gandiva{State: gandiva.State{Sets: []gandiva.Set{
			{Class: 2, Servers: []string{"s0"}, Jobs: []string{"x", "z"}},
			{Class: 4, Servers: []string{"s1", "s2"}, Jobs: []string{"y"}},
		}}}
		s := &policy.Snapshot{Now: time.Minute, Cluster: cluster(4, 3, 3), Jobs: []policy.Job{j, x, y, z}}
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, d)
		wholeWorkers(t, s, d)
		kinds := map[string]policy.Kind{}
		for _, c := range policy.Changes(s, d) {
			kinds[c.Job] = c.Kind
		}
		want := map[string]policy.Kind{"x": policy.Keep, "y": policy.Keep, "z": policy.Keep}
		if tc.moved {
			want = map[string]policy.Kind{"x": policy.Keep, "y": policy.Keep, "z": policy.Migrate, "j": policy.Start}
		}
		if !mapsEqual(kinds, want) {
			t.Errorf("x of workers of %d: changes %v, want %v", tc.w, kinds, want)
		}
		if got := p.State.Migrations; got != map[bool]int{true: 1}[tc.moved] {
			t.Errorf("x of workers of %d: %d migrations", tc.w, got)
		}
	}
}

// Packed jobs share GPUs in workers of both shapes. On one 4-GPU server,
// jobs of 4 GPUs in workers of 2 and of 4 pack on s0:4. On two 4-GPU
// servers, jobs of 6 GPUs in workers of 2 and of 3 could only share 6-GPU
// workers, which no server holds: they are time-sliced instead.
func TestPackLeastCommonMultiple(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      allocation.Cluster
		a, b   policy.Job
		paired bool
	}{
		{"lcm 4", cluster(4), sized("a", 4, 2), sized("b", 4, 4), true},
		{"lcm 6", cluster(4, 4), sized("a", 6, 2), sized("b", 6, 3), false},
	} {
		dr := newDriver(t, &gandiva.Gandiva{}, tc.c, tc.a, tc.b)
		d := dr.at(0)
		wholeWorkers(t, &dr.snap, d)
		_, paired := d.Allocation["a"].Pairs["b"]
		if paired != tc.paired {
			t.Errorf("%s: paired %v, want %v; placement %v", tc.name, paired, tc.paired, d.Placement)
		}
		if !tc.paired && len(d.Placement) != 1 {
			t.Errorf("%s: %d jobs run, want one at a time: %v", tc.name, len(d.Placement), d.Placement)
		}
	}
}

func mapsEqual[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
