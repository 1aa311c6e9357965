package placement_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

func TestGangs(t *testing.T) {
	c := allocation.Cluster{Servers: append(append(servers("v100", 4, "a", "b", "c"), servers("k80", 2, "k")...),
		allocation.Server{ID: "d", Accelerator: "v100", GPUs: 2})}
	any := func(allocation.Accelerator) bool { return true }
	only := func(want allocation.Accelerator) func(allocation.Accelerator) bool {
		return func(t allocation.Accelerator) bool { return t == want }
	}
	g := placement.NewGangs(c)
	if g.Free() != 16 {
		t.Fatalf("Free = %d, want 16", g.Free())
	}
	// A running job keeps its GPUs when they are free and of one type.
	if typ, ok := g.Keep(asg{{Server: "a", GPUs: 3}}, 3, any); !ok || typ != "v100" {
		t.Fatalf("Keep = %q, %v", typ, ok)
	}
	for _, tc := range []struct {
		name  string
		place asg
		gpus  int
		use   func(allocation.Accelerator) bool
	}{
		{"taken", asg{{Server: "a", GPUs: 2}}, 2, any},
		{"two types", asg{{Server: "b", GPUs: 1}, {Server: "k", GPUs: 1}}, 2, any},
		{"wrong count", asg{{Server: "b", GPUs: 1}}, 2, any},
		{"unusable type", asg{{Server: "k", GPUs: 1}}, 1, only("v100")},
		{"unknown server", asg{{Server: "z", GPUs: 1}}, 1, any},
		{"nothing", nil, 0, any},
	} {
		if _, ok := g.Keep(tc.place, tc.gpus, tc.use); ok {
			t.Errorf("Keep %s: granted", tc.name)
		}
	}
	if g.Free() != 13 {
		t.Fatalf("refused Keeps took GPUs: Free = %d, want 13", g.Free())
	}
	// One server holds 2: the fullest that does (d, with exactly 2) rather
	// than the emptier b or c; then a gang of 5 spreads over the servers
	// with the most free GPUs, b and c.
	for _, step := range []struct {
		k    int
		use  func(allocation.Accelerator) bool
		want asg
		typ  allocation.Accelerator
	}{
		{2, only("v100"), asg{{Server: "d", GPUs: 2}}, "v100"},
		{5, any, asg{{Server: "b", GPUs: 4}, {Server: "c", GPUs: 1}}, "v100"},
		{2, any, asg{{Server: "k", GPUs: 2}}, "k80"},
	} {
		got, typ, ok := g.Place(step.k, 1, step.use)
		if !ok || typ != step.typ {
			t.Fatalf("Place(%d) = %v, %q, %v", step.k, got, typ, ok)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Fatalf("Place(%d) (-want +got):\n%s", step.k, diff)
		}
	}
	// 4 GPUs are left (a 1, c 3): a gang of 5 does not fit, nor one of 0.
	if _, _, ok := g.Place(5, 1, any); ok {
		t.Fatal("placed 5 GPUs with 4 free")
	}
	if _, _, ok := g.Place(0, 1, any); ok {
		t.Fatal("placed a job of no GPUs")
	}
	if g.Free() != 4 {
		t.Fatalf("Free = %d, want 4", g.Free())
	}
}

// anyType accepts every accelerator type.
func anyType(allocation.Accelerator) bool { return true }

// onlyType accepts the type want only.
func onlyType(want allocation.Accelerator) func(allocation.Accelerator) bool {
	return func(t allocation.Accelerator) bool { return t == want }
}

func TestGangsConsolidateTwoServers(t *testing.T) {
	c := allocation.Cluster{Servers: servers("v100", 4, "a", "b")}
	// Both servers wholly free: an 8-GPU gang takes both of them.
	g := placement.NewGangs(c)
	got, typ, ok := g.Consolidate(8, 1, anyType)
	if !ok || typ != "v100" {
		t.Fatalf("Consolidate(8) on a free cluster = %v, %q, %v", got, typ, ok)
	}
	if diff := cmp.Diff(asg{{Server: "a", GPUs: 4}, {Server: "b", GPUs: 4}}, got); diff != "" {
		t.Fatalf("Consolidate(8) (-want +got):\n%s", diff)
	}
	if g.Free() != 0 || g.FreeOn("v100") != 0 {
		t.Fatalf("after Consolidate(8): Free = %d, FreeOn = %d, want 0, 0", g.Free(), g.FreeOn("v100"))
	}

	// One GPU busy on either server: 7 GPUs cannot hold 8, and nothing is
	// taken.
	for _, busy := range []string{"a", "b"} {
		g := placement.NewGangs(c)
		if _, ok := g.Keep(one(busy, 1), 1, anyType); !ok {
			t.Fatalf("Keep %s:1 refused", busy)
		}
		if got, _, ok := g.Consolidate(8, 1, anyType); ok {
			t.Errorf("busy %s: Consolidate(8) = %v with 7 free", busy, got)
		}
		if g.FreeOn("v100") != 7 || g.Free() != 7 {
			t.Errorf("busy %s: refused Consolidate took GPUs: FreeOn = %d, Free = %d, want 7", busy, g.FreeOn("v100"), g.Free())
		}
	}

	// 4 free GPUs split 3+1: a 4-GPU gang needs one whole server, so
	// Consolidate refuses (taking nothing) while Place splits it.
	g = placement.NewGangs(c)
	if _, ok := g.Keep(one("a", 1), 1, anyType); !ok {
		t.Fatal("Keep a:1 refused")
	}
	if _, ok := g.Keep(one("b", 3), 3, anyType); !ok {
		t.Fatal("Keep b:3 refused")
	}
	if got, _, ok := g.Consolidate(4, 1, anyType); ok {
		t.Fatalf("Consolidate(4) on 3+1 free = %v", got)
	}
	if g.FreeOn("v100") != 4 {
		t.Fatalf("refused Consolidate took GPUs: FreeOn = %d, want 4", g.FreeOn("v100"))
	}
	got, _, ok = g.Place(4, 1, anyType)
	if diff := cmp.Diff(asg{{Server: "a", GPUs: 3}, {Server: "b", GPUs: 1}}, got); !ok || diff != "" {
		t.Fatalf("Place(4) on 3+1 free: ok %v (-want +got):\n%s", ok, diff)
	}
	if g.FreeOn("v100") != 0 {
		t.Fatalf("FreeOn = %d after Place, want 0", g.FreeOn("v100"))
	}

	// 4-GPU gangs on a free cluster: one server each, then none is left.
	g = placement.NewGangs(c)
	for _, want := range []string{"a", "b"} {
		got, _, ok := g.Consolidate(4, 1, anyType)
		if diff := cmp.Diff(one(want, 4), got); !ok || diff != "" {
			t.Fatalf("Consolidate(4): ok %v (-want +got):\n%s", ok, diff)
		}
	}
	if got, _, ok := g.Consolidate(1, 1, anyType); ok {
		t.Fatalf("Consolidate(1) on a full cluster = %v", got)
	}
	// Degenerate sizes and unusable types take nothing.
	g = placement.NewGangs(c)
	for _, tc := range []struct {
		k   int
		use func(allocation.Accelerator) bool
	}{{0, anyType}, {-1, anyType}, {9, anyType}, {1, onlyType("k80")}} {
		if got, _, ok := g.Consolidate(tc.k, 1, tc.use); ok {
			t.Errorf("Consolidate(%d) = %v", tc.k, got)
		}
	}
	if g.Free() != 8 {
		t.Fatalf("refused Consolidates took GPUs: Free = %d, want 8", g.Free())
	}
}

func TestGangsConsolidateMixedSizes(t *testing.T) {
	// One 8-GPU server and two 4-GPU ones: 12 GPUs need exactly 2 servers
	// (8 + 4), never 3.
	c := allocation.Cluster{Servers: append(servers("v100", 8, "x"), servers("v100", 4, "y", "z")...)}
	g := placement.NewGangs(c)
	got, _, ok := g.Consolidate(12, 1, anyType)
	if diff := cmp.Diff(asg{{Server: "x", GPUs: 8}, {Server: "y", GPUs: 4}}, got); !ok || diff != "" {
		t.Fatalf("Consolidate(12) on a free cluster: ok %v (-want +got):\n%s", ok, diff)
	}
	if g.FreeOn("v100") != 4 {
		t.Fatalf("FreeOn = %d, want 4", g.FreeOn("v100"))
	}

	// One GPU busy on the 8-GPU server: 15 free, but 12 would take 3
	// servers; Consolidate refuses, Place takes 7 + 4 + 1.
	g = placement.NewGangs(c)
	g.Keep(one("x", 1), 1, anyType)
	if got, _, ok := g.Consolidate(12, 1, anyType); ok {
		t.Fatalf("Consolidate(12) with x:1 busy = %v", got)
	}
	if g.FreeOn("v100") != 15 {
		t.Fatalf("refused Consolidate took GPUs: FreeOn = %d, want 15", g.FreeOn("v100"))
	}
	got, _, ok = g.Place(12, 1, anyType)
	if diff := cmp.Diff(asg{{Server: "x", GPUs: 7}, {Server: "y", GPUs: 4}, {Server: "z", GPUs: 1}}, got); !ok || diff != "" {
		t.Fatalf("Place(12) with x:1 busy: ok %v (-want +got):\n%s", ok, diff)
	}
	if g.FreeOn("v100") != 3 || g.Free() != 3 {
		t.Fatalf("after Place: FreeOn = %d, Free = %d, want 3", g.FreeOn("v100"), g.Free())
	}

	// A whole 4-GPU server busy: 8 + 4 are still free, 2 servers.
	g = placement.NewGangs(c)
	g.Keep(one("y", 4), 4, anyType)
	got, _, ok = g.Consolidate(12, 1, anyType)
	if diff := cmp.Diff(asg{{Server: "x", GPUs: 8}, {Server: "z", GPUs: 4}}, got); !ok || diff != "" {
		t.Fatalf("Consolidate(12) with y busy: ok %v (-want +got):\n%s", ok, diff)
	}

	// 8 GPUs need one server (x); with x partly busy, 4 + 4 are too many.
	g = placement.NewGangs(c)
	g.Keep(one("x", 2), 2, anyType)
	if got, _, ok := g.Consolidate(8, 1, anyType); ok {
		t.Fatalf("Consolidate(8) with x:2 busy = %v, want one server", got)
	}
	got, _, ok = g.Consolidate(6, 1, anyType)
	if diff := cmp.Diff(one("x", 6), got); !ok || diff != "" {
		t.Fatalf("Consolidate(6): ok %v (-want +got):\n%s", ok, diff)
	}
}

func TestGangsConsolidateTypes(t *testing.T) {
	// The fewest servers are counted per type: an 8-GPU server of type a
	// does not make 8 GPUs of type b a one-server gang.
	c := allocation.Cluster{Servers: append(append(servers("a", 8, "a8"), servers("a", 4, "a4")...),
		servers("b", 4, "b1", "b2", "b3")...)}
	g := placement.NewGangs(c)
	got, typ, ok := g.Consolidate(8, 1, onlyType("b"))
	if diff := cmp.Diff(asg{{Server: "b1", GPUs: 4}, {Server: "b2", GPUs: 4}}, got); !ok || typ != "b" || diff != "" {
		t.Fatalf("Consolidate(8, b): %q, ok %v (-want +got):\n%s", typ, ok, diff)
	}
	// Among types, the fewest servers: a (one server) beats b.
	g = placement.NewGangs(c)
	got, typ, ok = g.Consolidate(8, 1, anyType)
	if diff := cmp.Diff(one("a8", 8), got); !ok || typ != "a" || diff != "" {
		t.Fatalf("Consolidate(8): %q, ok %v (-want +got):\n%s", typ, ok, diff)
	}
	// With a8 partly busy, type a cannot consolidate 8 but b still can.
	g = placement.NewGangs(c)
	g.Keep(one("a8", 1), 1, anyType)
	got, typ, ok = g.Consolidate(8, 1, anyType)
	if diff := cmp.Diff(asg{{Server: "b1", GPUs: 4}, {Server: "b2", GPUs: 4}}, got); !ok || typ != "b" || diff != "" {
		t.Fatalf("Consolidate(8) with a8:1 busy: %q, ok %v (-want +got):\n%s", typ, ok, diff)
	}
	if g.FreeOn("a") != 11 || g.FreeOn("b") != 4 || g.FreeOn("c") != 0 || g.Free() != 15 {
		t.Fatalf("FreeOn a, b, c = %d, %d, %d, Free = %d; want 11, 4, 0, 15",
			g.FreeOn("a"), g.FreeOn("b"), g.FreeOn("c"), g.Free())
	}
}

func TestGangsFreeOn(t *testing.T) {
	c := allocation.Cluster{Servers: append(servers("v100", 4, "a", "b"), servers("k80", 2, "k1", "k2")...)}
	g := placement.NewGangs(c)
	check := func(step string, v100, k80 int) {
		t.Helper()
		if g.FreeOn("v100") != v100 || g.FreeOn("k80") != k80 || g.Free() != v100+k80 {
			t.Fatalf("%s: FreeOn v100, k80 = %d, %d, Free = %d; want %d, %d, %d",
				step, g.FreeOn("v100"), g.FreeOn("k80"), g.Free(), v100, k80, v100+k80)
		}
	}
	check("new", 8, 4)
	if _, ok := g.Keep(asg{{Server: "k1", GPUs: 1}, {Server: "k2", GPUs: 1}}, 2, anyType); !ok {
		t.Fatal("Keep k1:1 k2:1 refused")
	}
	check("Keep", 8, 2)
	if _, ok := g.Keep(one("k1", 2), 2, anyType); ok {
		t.Fatal("Keep k1:2 granted with 1 free")
	}
	check("refused Keep", 8, 2)
	if _, typ, ok := g.Place(3, 1, onlyType("v100")); !ok || typ != "v100" {
		t.Fatal("Place(3, v100) refused")
	}
	check("Place", 5, 2)
	if _, typ, ok := g.Consolidate(4, 1, anyType); !ok || typ != "v100" {
		t.Fatal("Consolidate(4) refused")
	}
	check("Consolidate", 1, 2)
	if _, _, ok := g.Consolidate(2, 1, anyType); ok {
		t.Fatal("Consolidate(2) granted on k80 1+1")
	}
	check("refused Consolidate", 1, 2)
	if _, typ, ok := g.Place(2, 1, anyType); !ok || typ != "k80" {
		t.Fatal("Place(2) refused")
	}
	check("split Place", 1, 0)
	if g.FreeOn("a100") != 0 {
		t.Fatalf("FreeOn of an absent type = %d", g.FreeOn("a100"))
	}
}
