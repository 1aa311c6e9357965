package placement_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

type packFunc func(placement.Free, []placement.Item, placement.Options) (placement.Packing, error)

var packers = []struct {
	name string
	pack packFunc
}{
	{"FirstFitDecreasing", placement.FirstFitDecreasing},
	{"BestFit", placement.BestFit},
}

type asg = []allocation.Assignment

func one(server string, gpus int) asg { return asg{{Server: server, GPUs: gpus}} }

func gpuItem(id string, gpus int) placement.Item {
	return placement.Item{ID: id, Demand: placement.Demand{GPUs: gpus}}
}

func servers(acc allocation.Accelerator, gpus int, ids ...string) []allocation.Server {
	var ss []allocation.Server
	for _, id := range ids {
		ss = append(ss, allocation.Server{ID: id, Accelerator: acc, GPUs: gpus})
	}
	return ss
}

// take is a reservation made with Free.Take before packing.
type take struct {
	server string
	d      placement.Demand
}

func TestPack(t *testing.T) {
	tests := []struct {
		name    string
		servers []allocation.Server
		taken   []take
		items   []placement.Item
		opt     placement.Options
		// want maps a packer's name to its expected result; "" is for both.
		want         map[string]map[string]asg
		wantUnplaced map[string][]string
	}{
		{
			// Sorted: a(8) b(4) c(4) d(2) e(2) f(1) g(1). Both fill s1 with a,
			// s2 with b and c, and put the rest on s3, which keeps 2 GPUs.
			name:    "three 8-GPU servers, items 8 4 4 2 2 1 1",
			servers: servers("v100", 8, "s1", "s2", "s3"),
			items: []placement.Item{gpuItem("g", 1), gpuItem("b", 4), gpuItem("e", 2), gpuItem("a", 8),
				gpuItem("d", 2), gpuItem("c", 4), gpuItem("f", 1)},
			want: map[string]map[string]asg{"": {
				"a": one("s1", 8), "b": one("s2", 4), "c": one("s2", 4),
				"d": one("s3", 2), "e": one("s3", 2), "f": one("s3", 1), "g": one("s3", 1),
			}},
		},
		{
			// First fit puts the 3-GPU item on the 4-GPU server and then
			// cannot place the second 2-GPU item; best fit puts it on the
			// 3-GPU server, exactly filled, and places everything.
			name:    "first fit and best fit differ",
			servers: append(servers("v100", 4, "s1"), servers("v100", 3, "s2")...),
			items:   []placement.Item{gpuItem("x", 3), gpuItem("y", 2), gpuItem("z", 2)},
			want: map[string]map[string]asg{
				"FirstFitDecreasing": {"x": one("s1", 3), "y": one("s2", 2)},
				"BestFit":            {"x": one("s2", 3), "y": one("s1", 2), "z": one("s1", 2)},
			},
			wantUnplaced: map[string][]string{"FirstFitDecreasing": {"z"}},
		},
		{
			// s1 has GPUs but few cores: the CPU-hungry item can only go to
			// s2, and s1 takes two 8-core items before its cores run out.
			name: "CPU is the binding dimension",
			servers: []allocation.Server{
				{ID: "s1", Accelerator: "v100", GPUs: 8, CPUs: 16, MemoryGB: 128},
				{ID: "s2", Accelerator: "v100", GPUs: 8, CPUs: 64, MemoryGB: 128},
			},
			items: []placement.Item{
				{ID: "big", Demand: placement.Demand{GPUs: 2, CPUs: 40}},
				{ID: "m1", Demand: placement.Demand{GPUs: 1, CPUs: 8}},
				{ID: "m2", Demand: placement.Demand{GPUs: 1, CPUs: 8}},
				{ID: "m3", Demand: placement.Demand{GPUs: 1, CPUs: 8}},
				{ID: "m4", Demand: placement.Demand{GPUs: 1, CPUs: 8}},
				{ID: "m5", Demand: placement.Demand{GPUs: 1, CPUs: 8}},
				{ID: "m6", Demand: placement.Demand{GPUs: 1, CPUs: 8}},
			},
			want: map[string]map[string]asg{
				// s2 after big: 6 GPUs, 24 cores: three more items.
				"FirstFitDecreasing": {"big": one("s2", 2), "m1": one("s1", 1), "m2": one("s1", 1),
					"m3": one("s2", 1), "m4": one("s2", 1), "m5": one("s2", 1)},
				// Best fit prefers the server left with fewer GPUs: s2.
				"BestFit": {"big": one("s2", 2), "m1": one("s2", 1), "m2": one("s2", 1),
					"m3": one("s2", 1), "m4": one("s1", 1), "m5": one("s1", 1)},
			},
			wantUnplaced: map[string][]string{"": {"m6"}},
		},
		{
			// s1 does not track memory, so a 200 GB item fits there only;
			// the 48 GB item then fits s2 (64 GB) but not a second one.
			name: "memory binds; an untracked dimension is unconstrained",
			servers: []allocation.Server{
				{ID: "s1", Accelerator: "v100", GPUs: 4},
				{ID: "s2", Accelerator: "v100", GPUs: 4, MemoryGB: 64},
			},
			items: []placement.Item{
				{ID: "huge", Demand: placement.Demand{GPUs: 1, MemoryGB: 200}},
				{ID: "p", Demand: placement.Demand{GPUs: 3, MemoryGB: 48}},
				{ID: "q", Demand: placement.Demand{GPUs: 1, MemoryGB: 48}},
			},
			want: map[string]map[string]asg{
				// Sorted: huge (200/64), p (48/64, ID p < q), q.
				"FirstFitDecreasing": {"huge": one("s1", 1), "p": one("s1", 3), "q": one("s2", 1)},
				// p leaves 0 GPUs on s1 or 1 on s2: s1.
				"BestFit": {"huge": one("s1", 1), "p": one("s1", 3), "q": one("s2", 1)},
			},
		},
		{
			// Best fit breaks a GPU tie by the leftover CPU and memory: s2
			// is left with less of both.
			name: "best fit ties broken by normalized leftover",
			servers: []allocation.Server{
				{ID: "s1", Accelerator: "v100", GPUs: 4, CPUs: 32, MemoryGB: 256},
				{ID: "s2", Accelerator: "v100", GPUs: 4, CPUs: 16, MemoryGB: 128},
			},
			items: []placement.Item{{ID: "j", Demand: placement.Demand{GPUs: 2, CPUs: 4, MemoryGB: 8}}},
			want: map[string]map[string]asg{
				"FirstFitDecreasing": {"j": one("s1", 2)},
				"BestFit":            {"j": one("s2", 2)},
			},
		},
		{
			name:    "accelerator restriction",
			servers: append(servers("v100", 8, "s1"), servers("k80", 8, "s2")...),
			items: []placement.Item{
				{ID: "a", Demand: placement.Demand{GPUs: 4}, Accelerator: "v100"},
				{ID: "b", Demand: placement.Demand{GPUs: 4}, Accelerator: "k80"},
				{ID: "c", Demand: placement.Demand{GPUs: 6}, Accelerator: "v100"},
				{ID: "d", Demand: placement.Demand{GPUs: 1}, Accelerator: "p100"},
				{ID: "e", Demand: placement.Demand{GPUs: 2}},
			},
			// Sorted: c, a, b, e, d. After c, a would fit the k80 server
			// but must run on v100, where 2 GPUs are left. p100 is absent.
			opt:          placement.Options{Split: true},
			want:         map[string]map[string]asg{"": {"b": one("s2", 4), "c": one("s1", 6), "e": one("s1", 2)}},
			wantUnplaced: map[string][]string{"": {"a", "d"}},
		},
		{
			// s2 is half used. 20 GPUs need three servers: s1 and s3 whole,
			// and the remaining 4 on s2, the tightest fit, not on fresh s4.
			name:    "gang split over the fewest servers",
			servers: servers("v100", 8, "s1", "s2", "s3", "s4"),
			taken:   []take{{"s2", placement.Demand{GPUs: 4}}},
			items:   []placement.Item{gpuItem("gang", 20), gpuItem("small", 2)},
			opt:     placement.Options{Split: true},
			want: map[string]map[string]asg{
				"": {"gang": {{Server: "s1", GPUs: 8}, {Server: "s2", GPUs: 4}, {Server: "s3", GPUs: 8}},
					"small": one("s4", 2)},
			},
		},
		{
			name:         "gang not split unless allowed",
			servers:      servers("v100", 8, "s1", "s2", "s3", "s4"),
			items:        []placement.Item{gpuItem("gang", 20), gpuItem("small", 2)},
			want:         map[string]map[string]asg{"": {"small": one("s1", 2)}},
			wantUnplaced: map[string][]string{"": {"gang"}},
		},
		{
			// Only 2+2+2 GPUs are free: the 4-GPU item needs two servers
			// even though it is no larger than one.
			name:    "fragmented item split when allowed",
			servers: servers("v100", 4, "s1", "s2", "s3"),
			taken: []take{{"s1", placement.Demand{GPUs: 2}}, {"s2", placement.Demand{GPUs: 2}},
				{"s3", placement.Demand{GPUs: 2}}},
			items: []placement.Item{gpuItem("j", 4)},
			opt:   placement.Options{Split: true},
			want:  map[string]map[string]asg{"": {"j": {{Server: "s1", GPUs: 2}, {Server: "s2", GPUs: 2}}}},
		},
		{
			// A split gang stays on one type: the k80 servers need two,
			// the v100 ones three.
			name: "split chooses the type needing fewest servers",
			servers: append(servers("v100", 4, "a1", "a2", "a3"),
				servers("k80", 8, "b1", "b2")...),
			items: []placement.Item{gpuItem("gang", 12)},
			opt:   placement.Options{Split: true},
			want: map[string]map[string]asg{
				"": {"gang": {{Server: "b1", GPUs: 8}, {Server: "b2", GPUs: 4}}},
			},
		},
		{
			// CPU and memory travel with the GPUs: each GPU of the gang
			// needs 8 cores, so s1 (20 cores) holds 2 GPUs of it, not 4.
			name: "split divides CPU in proportion to GPUs",
			servers: []allocation.Server{
				{ID: "s1", Accelerator: "v100", GPUs: 4, CPUs: 20},
				{ID: "s2", Accelerator: "v100", GPUs: 4, CPUs: 32},
			},
			items: []placement.Item{{ID: "gang", Demand: placement.Demand{GPUs: 6, CPUs: 48}}},
			opt:   placement.Options{Split: true},
			want:  map[string]map[string]asg{"": {"gang": {{Server: "s1", GPUs: 2}, {Server: "s2", GPUs: 4}}}},
		},
		{
			// With Split, a 4-GPU job still lands whole on a free 4-GPU
			// server rather than on the partly used ones.
			name:    "4-GPU job on one free 4-GPU server",
			servers: servers("v100", 4, "s1", "s2", "s3", "s4"),
			taken: []take{{"s1", placement.Demand{GPUs: 1}}, {"s2", placement.Demand{GPUs: 3}},
				{"s4", placement.Demand{GPUs: 2}}},
			items: []placement.Item{gpuItem("j", 4)},
			opt:   placement.Options{Split: true},
			want:  map[string]map[string]asg{"": {"j": one("s3", 4)}},
		},
		{
			name:    "zero-GPU item takes no GPUs",
			servers: servers("v100", 0, "s1"),
			items:   []placement.Item{{ID: "cpu", Demand: placement.Demand{CPUs: 2}}},
			want:    map[string]map[string]asg{"": {"cpu": one("s1", 0)}},
		},
		{
			name:         "empty cluster",
			items:        []placement.Item{gpuItem("a", 1), gpuItem("b", 0)},
			opt:          placement.Options{Split: true},
			want:         map[string]map[string]asg{"": {}},
			wantUnplaced: map[string][]string{"": {"a", "b"}},
		},
		{
			name:    "no items",
			servers: servers("v100", 8, "s1"),
			want:    map[string]map[string]asg{"": {}},
		},
	}
	for _, tt := range tests {
		for _, p := range packers {
			t.Run(tt.name+"/"+p.name, func(t *testing.T) {
				free, err := placement.NewFree(allocation.Cluster{Servers: tt.servers})
				if err != nil {
					t.Fatal(err)
				}
				for _, tk := range tt.taken {
					if free, err = free.Take(tk.server, tk.d); err != nil {
						t.Fatal(err)
					}
				}
				before := free.Servers()
				got, err := p.pack(free, tt.items, tt.opt)
				if err != nil {
					t.Fatal(err)
				}
				want, ok := tt.want[p.name]
				if !ok {
					want = tt.want[""]
				}
				wantUn, ok := tt.wantUnplaced[p.name]
				if !ok {
					wantUn = tt.wantUnplaced[""]
				}
				if d := cmp.Diff(want, got.Placed, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("placed (-want +got):\n%s", d)
				}
				if d := cmp.Diff(wantUn, got.Unplaced, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("unplaced (-want +got):\n%s", d)
				}
				if d := cmp.Diff(before, free.Servers()); d != "" {
					t.Errorf("input Free changed (-before +after):\n%s", d)
				}
				checkPacking(t, tt.servers, tt.taken, tt.items, tt.opt, got)
			})
		}
	}
}

func TestPackInvalid(t *testing.T) {
	free, err := placement.NewFree(allocation.Cluster{Servers: servers("v100", 8, "s1")})
	if err != nil {
		t.Fatal(err)
	}
	ok := gpuItem("ok", 1)
	tests := []struct {
		name    string
		items   []placement.Item
		wantMsg []string
	}{
		{"empty id", []placement.Item{ok, {}}, []string{"item 1", "id", "empty"}},
		{"duplicate id", []placement.Item{ok, gpuItem("ok", 2)}, []string{`"ok"`, "id", "duplicate"}},
		{"negative gpus", []placement.Item{ok, gpuItem("bad", -1)}, []string{`"bad"`, "gpus", "-1"}},
		{"NaN cpus", []placement.Item{{ID: "bad", Demand: placement.Demand{CPUs: math.NaN()}}},
			[]string{`"bad"`, "cpus", "NaN"}},
		{"negative cpus", []placement.Item{{ID: "bad", Demand: placement.Demand{CPUs: -2}}},
			[]string{`"bad"`, "cpus", "-2"}},
		{"+Inf memory", []placement.Item{{ID: "bad", Demand: placement.Demand{MemoryGB: math.Inf(1)}}},
			[]string{`"bad"`, "memory_gb", "+Inf"}},
		{"NaN memory", []placement.Item{{ID: "bad", Demand: placement.Demand{MemoryGB: math.NaN()}}},
			[]string{`"bad"`, "memory_gb", "NaN"}},
		{"negative worker", []placement.Item{{ID: "bad", Demand: placement.Demand{GPUs: 4}, Worker: -4}},
			[]string{`"bad"`, "worker", "-4"}},
		{"gpus not whole workers", []placement.Item{ok, {ID: "bad", Demand: placement.Demand{GPUs: 6}, Worker: 4}},
			[]string{`"bad"`, "gpus", "6", "worker 4"}},
	}
	for _, tt := range tests {
		for _, p := range packers {
			t.Run(tt.name+"/"+p.name, func(t *testing.T) {
				_, err := p.pack(free, tt.items, placement.Options{Split: true})
				if !errors.Is(err, allocation.ErrInvalid) {
					t.Fatalf("error %v, want one wrapping allocation.ErrInvalid", err)
				}
				for _, m := range tt.wantMsg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not contain %q", err, m)
					}
				}
			})
		}
	}
}

func TestNewFreeInvalid(t *testing.T) {
	_, err := placement.NewFree(allocation.Cluster{Servers: servers("v100", 8, "s1", "s1")})
	if !errors.Is(err, allocation.ErrInvalid) {
		t.Fatalf("error %v, want one wrapping allocation.ErrInvalid", err)
	}
}

func TestFreeTake(t *testing.T) {
	free, err := placement.NewFree(allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4, CPUs: 16},
		{ID: "s0", Accelerator: "k80", GPUs: 2, MemoryGB: 64},
	}})
	if err != nil {
		t.Fatal(err)
	}
	inf := math.Inf(1)
	if d := cmp.Diff([]placement.Space{
		{Server: "s0", Accelerator: "k80", Remaining: placement.Demand{GPUs: 2, CPUs: inf, MemoryGB: 64}},
		{Server: "s1", Accelerator: "v100", Remaining: placement.Demand{GPUs: 4, CPUs: 16, MemoryGB: inf}},
	}, free.Servers()); d != "" {
		t.Errorf("Servers (-want +got):\n%s", d)
	}
	after, err := free.Take("s1", placement.Demand{GPUs: 3, CPUs: 10, MemoryGB: 500})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := after.Remaining("s1"); got != (placement.Demand{GPUs: 1, CPUs: 6, MemoryGB: inf}) {
		t.Errorf("Remaining(s1) after Take = %+v", got)
	}
	if got, _ := free.Remaining("s1"); got.GPUs != 4 {
		t.Errorf("Take changed its receiver: %+v", got)
	}
	if _, ok := free.Remaining("nope"); ok {
		t.Error("Remaining(nope) reported a server")
	}
	for _, tc := range []struct {
		server string
		d      placement.Demand
		want   error
	}{
		{"s1", placement.Demand{GPUs: 2}, allocation.ErrOverCapacity},
		{"s1", placement.Demand{CPUs: 7}, allocation.ErrOverCapacity},
		{"s0", placement.Demand{MemoryGB: 65}, allocation.ErrOverCapacity},
		{"nope", placement.Demand{}, allocation.ErrInvalid},
		{"s1", placement.Demand{CPUs: math.NaN()}, allocation.ErrInvalid},
	} {
		if _, err := after.Take(tc.server, tc.d); !errors.Is(err, tc.want) {
			t.Errorf("Take(%q, %+v) = %v, want %v", tc.server, tc.d, err, tc.want)
		}
	}
	var zero placement.Free
	if _, err := zero.Take("s1", placement.Demand{}); !errors.Is(err, allocation.ErrInvalid) {
		t.Errorf("zero Free Take = %v, want ErrInvalid", err)
	}
}

// checkPacking verifies the invariants every packing must satisfy: no
// server exceeds its capacity in any dimension, every item is either fully
// placed on allowed servers or listed as unplaced, splitting happens only
// when allowed, and the returned Free matches the capacity left.
func checkPacking(t *testing.T, ss []allocation.Server, taken []take, items []placement.Item,
	opt placement.Options, p placement.Packing) {
	t.Helper()
	type use struct {
		gpus      int
		cpus, mem float64
	}
	used := map[string]*use{}
	byID := map[string]allocation.Server{}
	for _, s := range ss {
		used[s.ID] = &use{}
		byID[s.ID] = s
	}
	for _, tk := range taken {
		u := used[tk.server]
		u.gpus += tk.d.GPUs
		u.cpus += tk.d.CPUs
		u.mem += tk.d.MemoryGB
	}
	unplaced := map[string]bool{}
	for _, id := range p.Unplaced {
		if unplaced[id] {
			t.Errorf("item %q listed unplaced twice", id)
		}
		unplaced[id] = true
	}
	if !slices.IsSorted(p.Unplaced) {
		t.Errorf("unplaced not sorted: %v", p.Unplaced)
	}
	for _, it := range items {
		as, placed := p.Placed[it.ID]
		if placed == unplaced[it.ID] {
			t.Errorf("item %q: placed %v and unplaced %v", it.ID, placed, unplaced[it.ID])
			continue
		}
		if !placed {
			continue
		}
		if len(as) == 0 || (len(as) > 1 && !opt.Split) {
			t.Errorf("item %q: %d assignments with Split %v", it.ID, len(as), opt.Split)
		}
		sum := 0
		var acc allocation.Accelerator
		for i, a := range as {
			s, ok := byID[a.Server]
			switch {
			case !ok:
				t.Errorf("item %q: unknown server %q", it.ID, a.Server)
				continue
			case i > 0 && as[i-1].Server >= a.Server:
				t.Errorf("item %q: assignments not sorted by distinct server: %v", it.ID, as)
			case it.Accelerator != "" && s.Accelerator != it.Accelerator:
				t.Errorf("item %q: on %s server %q, wants %s", it.ID, s.Accelerator, s.ID, it.Accelerator)
			case i > 0 && s.Accelerator != acc:
				t.Errorf("item %q: split over types %s and %s", it.ID, acc, s.Accelerator)
			case len(as) > 1 && a.GPUs <= 0:
				t.Errorf("item %q: split part with %d GPUs", it.ID, a.GPUs)
			case a.GPUs%max(it.Worker, 1) != 0:
				t.Errorf("item %q: %d GPUs on %q split a worker of %d", it.ID, a.GPUs, a.Server, it.Worker)
			}
			acc = s.Accelerator
			sum += a.GPUs
			u := used[a.Server]
			u.gpus += a.GPUs
			r := 1.0
			if len(as) > 1 {
				r = float64(a.GPUs) / float64(it.Demand.GPUs)
			}
			u.cpus += it.Demand.CPUs * r
			u.mem += it.Demand.MemoryGB * r
		}
		if sum != it.Demand.GPUs {
			t.Errorf("item %q: assigned %d GPUs, wants %d", it.ID, sum, it.Demand.GPUs)
		}
	}
	if len(p.Placed)+len(p.Unplaced) != len(items) {
		t.Errorf("%d placed + %d unplaced for %d items", len(p.Placed), len(p.Unplaced), len(items))
	}
	const tol = 1e-9
	for _, s := range ss {
		u := used[s.ID]
		if u.gpus > s.GPUs {
			t.Errorf("server %q: %d GPUs used of %d", s.ID, u.gpus, s.GPUs)
		}
		if s.CPUs > 0 && u.cpus > s.CPUs*(1+tol) {
			t.Errorf("server %q: %v CPUs used of %v", s.ID, u.cpus, s.CPUs)
		}
		if s.MemoryGB > 0 && u.mem > s.MemoryGB*(1+tol) {
			t.Errorf("server %q: %v GB used of %v", s.ID, u.mem, s.MemoryGB)
		}
		left, ok := p.Free.Remaining(s.ID)
		if !ok || left.GPUs != s.GPUs-u.gpus {
			t.Errorf("server %q: Free reports %+v, want %d GPUs", s.ID, left, s.GPUs-u.gpus)
		}
		if s.CPUs > 0 && math.Abs(left.CPUs-(s.CPUs-u.cpus)) > tol*s.CPUs {
			t.Errorf("server %q: Free reports %v CPUs, want %v", s.ID, left.CPUs, s.CPUs-u.cpus)
		}
		if s.CPUs == 0 && !math.IsInf(left.CPUs, 1) {
			t.Errorf("server %q: untracked CPUs reported as %v", s.ID, left.CPUs)
		}
	}
}

// instance is a random packing problem.
type instance struct {
	servers []allocation.Server
	taken   []take
	items   []placement.Item
}

func randomInstance(r *rand.Rand, maxServers, maxItems int) instance {
	var in instance
	types := []allocation.Accelerator{"k80", "v100"}
	for i := range 1 + r.IntN(maxServers) {
		s := allocation.Server{
			ID:          fmt.Sprintf("s%02d", i),
			Accelerator: types[r.IntN(len(types))],
			GPUs:        []int{0, 1, 2, 4, 8}[r.IntN(5)],
		}
		if r.IntN(3) > 0 {
			s.CPUs = float64(4 * (1 + r.IntN(16)))
		}
		if r.IntN(3) > 0 {
			s.MemoryGB = float64(16 * (1 + r.IntN(16)))
		}
		in.servers = append(in.servers, s)
		if r.IntN(4) == 0 && s.GPUs > 0 {
			in.taken = append(in.taken, take{s.ID, placement.Demand{GPUs: r.IntN(s.GPUs + 1)}})
		}
	}
	for i := range r.IntN(maxItems + 1) {
		it := placement.Item{ID: fmt.Sprintf("j%03d", i)}
		it.Demand.GPUs = []int{0, 1, 1, 1, 2, 2, 4, 4, 8, 12, 16}[r.IntN(11)]
		if r.IntN(2) == 0 {
			it.Demand.CPUs = 0.5 * float64(r.IntN(64))
		}
		if r.IntN(2) == 0 {
			it.Demand.MemoryGB = 0.5 * float64(r.IntN(256))
		}
		switch r.IntN(8) {
		case 0:
			it.Accelerator = "k80"
		case 1:
			it.Accelerator = "v100"
		case 2:
			it.Accelerator = "p100" // not in the cluster
		}
		in.items = append(in.items, it)
	}
	return in
}

func (in instance) free(t testing.TB) placement.Free {
	t.Helper()
	free, err := placement.NewFree(allocation.Cluster{Servers: in.servers})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range in.taken {
		if free, err = free.Take(tk.server, tk.d); err != nil {
			t.Fatal(err)
		}
	}
	return free
}

// TestPackProperties checks the invariants and determinism on 500 random
// instances, with and without splitting.
func TestPackProperties(t *testing.T) {
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		in := randomInstance(r, 12, 40)
		shuffled := instance{
			servers: slices.Clone(in.servers),
			taken:   slices.Clone(in.taken),
			items:   slices.Clone(in.items),
		}
		r.Shuffle(len(shuffled.servers), func(i, j int) {
			shuffled.servers[i], shuffled.servers[j] = shuffled.servers[j], shuffled.servers[i]
		})
		r.Shuffle(len(shuffled.items), func(i, j int) {
			shuffled.items[i], shuffled.items[j] = shuffled.items[j], shuffled.items[i]
		})
		for _, p := range packers {
			for _, split := range []bool{false, true} {
				opt := placement.Options{Split: split}
				got, err := p.pack(in.free(t), in.items, opt)
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, p.name, err)
				}
				t.Run("", func(t *testing.T) {
					checkPacking(t, in.servers, in.taken, in.items, opt, got)
				})
				again, err := p.pack(in.free(t), in.items, opt)
				if err != nil {
					t.Fatal(err)
				}
				other, err := p.pack(shuffled.free(t), shuffled.items, opt)
				if err != nil {
					t.Fatal(err)
				}
				for name, q := range map[string]placement.Packing{"repeat": again, "shuffled": other} {
					if d := cmp.Diff(summary(got), summary(q)); d != "" {
						t.Fatalf("seed %d %s split=%v %s differs (-first +%s):\n%s", seed, p.name, split, name, name, d)
					}
				}
				if t.Failed() {
					t.Fatalf("seed %d %s split=%v failed", seed, p.name, split)
				}
			}
		}
	}
}

type packSummary struct {
	Placed   map[string][]allocation.Assignment
	Unplaced []string
	Free     []placement.Space
}

func summary(p placement.Packing) packSummary {
	return packSummary{p.Placed, p.Unplaced, p.Free.Servers()}
}

// FuzzPack decodes servers and items from bytes, including malformed
// values, and checks that packing returns an error or a valid packing.
func FuzzPack(f *testing.F) {
	f.Add([]byte{3, 8, 16, 0, 8, 0, 4, 1, 1, 2, 4, 0, 0})
	f.Add([]byte{2, 4, 0, 0, 2, 255, 0, 3, 7, 0, 1, 9, 9, 9})
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			data = data[:512] // enough for 8 servers and 100 items
		}
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		// Server and item fields come from one byte each; 255 encodes a
		// malformed value (negative, NaN or +Inf) for items.
		num := func(b int, scale float64) float64 {
			switch b {
			case 255:
				return math.NaN()
			case 254:
				return math.Inf(1)
			case 253:
				return -1
			}
			return float64(b) * scale
		}
		var ss []allocation.Server
		types := []allocation.Accelerator{"a", "b"}
		for i := range next() % 9 {
			ss = append(ss, allocation.Server{
				ID:          fmt.Sprint("s", i),
				Accelerator: types[next()%2],
				GPUs:        next() % 17,
				CPUs:        float64(next() % 65),
				MemoryGB:    float64(next()%9) * 32,
			})
		}
		var items []placement.Item
		for len(data) > 0 {
			id := next()
			it := placement.Item{ID: fmt.Sprint("j", id%64)}
			if id == 255 {
				it.ID = ""
			}
			g := next()
			it.Demand.GPUs = g % 33
			if g == 255 {
				it.Demand.GPUs = -1
			}
			it.Demand.CPUs = num(next(), 0.5)
			it.Demand.MemoryGB = num(next(), 2)
			it.Accelerator = []allocation.Accelerator{"", "a", "b", "c"}[next()%4]
			items = append(items, it)
		}
		in := instance{servers: ss, items: items}
		free := in.free(t)
		for _, p := range packers {
			for _, split := range []bool{false, true} {
				opt := placement.Options{Split: split}
				got, err := p.pack(free, items, opt)
				if err != nil {
					if !errors.Is(err, allocation.ErrInvalid) {
						t.Fatalf("%s: error %v does not wrap ErrInvalid", p.name, err)
					}
					continue
				}
				checkPacking(t, ss, nil, items, opt, got)
			}
		}
	})
}

// benchInstance builds 2048 items on 512 servers: items of 1, 2, 4 and 8
// GPUs with probability 70, 10, 15 and 5 %, servers of 1, 4 or 8 GPUs, two
// accelerator types, and CPU and memory in proportion to GPUs.
func benchInstance() (placement.Free, []placement.Item) {
	r := rand.New(rand.NewPCG(1, 2))
	types := []allocation.Accelerator{"k80", "v100"}
	var ss []allocation.Server
	for i := range 512 {
		g := []int{1, 4, 8}[r.IntN(3)]
		ss = append(ss, allocation.Server{ID: fmt.Sprintf("s%03d", i), Accelerator: types[r.IntN(2)],
			GPUs: g, CPUs: float64(6 * g), MemoryGB: float64(32 * g)})
	}
	free, err := placement.NewFree(allocation.Cluster{Servers: ss})
	if err != nil {
		panic(err)
	}
	items := make([]placement.Item, 2048)
	for i := range items {
		var g int
		switch x := r.IntN(100); {
		case x < 70:
			g = 1
		case x < 80:
			g = 2
		case x < 95:
			g = 4
		default:
			g = 8
		}
		items[i] = placement.Item{ID: fmt.Sprintf("j%04d", i), Demand: placement.Demand{
			GPUs: g, CPUs: float64(g * (3 + r.IntN(4))), MemoryGB: float64(g * (16 + r.IntN(17)))}}
		if r.IntN(4) == 0 {
			items[i].Accelerator = types[r.IntN(2)]
		}
	}
	return free, items
}

func benchmarkPack(b *testing.B, pack packFunc) {
	free, items := benchInstance()
	b.ReportAllocs()
	var placed int
	for b.Loop() {
		p, err := pack(free, items, placement.Options{Split: true})
		if err != nil {
			b.Fatal(err)
		}
		placed = len(p.Placed)
	}
	b.ReportMetric(float64(placed), "placed")
}

func BenchmarkFirstFitDecreasing(b *testing.B) { benchmarkPack(b, placement.FirstFitDecreasing) }
func BenchmarkBestFit(b *testing.B)            { benchmarkPack(b, placement.BestFit) }

func TestFreePut(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 8, CPUs: 24, MemoryGB: 500},
		{ID: "b", Accelerator: "v100", GPUs: 4},
	}}
	full, err := placement.NewFree(c)
	if err != nil {
		t.Fatal(err)
	}
	f, err := full.Take("a", placement.Demand{GPUs: 2, CPUs: 18, MemoryGB: 125})
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.Put("a", placement.Demand{CPUs: 12, MemoryGB: 62.5})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Remaining("a"); got != (placement.Demand{GPUs: 6, CPUs: 18, MemoryGB: 437.5}) {
		t.Errorf("after Put: %+v, want {6 18 437.5}", got)
	}
	if got, _ := f.Remaining("a"); got.CPUs != 6 {
		t.Errorf("Put modified its receiver: %+v", got)
	}
	for _, tc := range []struct {
		server string
		d      placement.Demand
		want   string
	}{
		{"a", placement.Demand{GPUs: 3}, "more than it holds"},
		{"a", placement.Demand{CPUs: 18.5}, "more than it holds"},
		{"a", placement.Demand{MemoryGB: -1}, "memory_gb"},
		{"zz", placement.Demand{}, "unknown"},
	} {
		if _, err := f.Put(tc.server, tc.d); !errors.Is(err, allocation.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Put(%q, %+v) = %v, want ErrInvalid with %q", tc.server, tc.d, err, tc.want)
		}
	}
	// An untracked dimension takes any amount back.
	h, err := full.Put("b", placement.Demand{CPUs: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Remaining("b"); !math.IsInf(got.CPUs, 1) {
		t.Errorf("untracked CPUs after Put: %v", got.CPUs)
	}
	// Giving back exactly what was taken restores the capacity, within
	// rounding.
	k, err := full.Take("a", placement.Demand{CPUs: 0.1, MemoryGB: 0.3})
	if err == nil {
		k, err = k.Put("a", placement.Demand{CPUs: 0.1, MemoryGB: 0.3})
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := k.Remaining("a"); got.CPUs > 24 || got.MemoryGB > 500 {
		t.Errorf("round trip exceeds capacity: %+v", got)
	}
}
