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
		got, typ, ok := g.Place(step.k, step.use)
		if !ok || typ != step.typ {
			t.Fatalf("Place(%d) = %v, %q, %v", step.k, got, typ, ok)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Fatalf("Place(%d) (-want +got):\n%s", step.k, diff)
		}
	}
	// 4 GPUs are left (a 1, c 3): a gang of 5 does not fit, nor one of 0.
	if _, _, ok := g.Place(5, any); ok {
		t.Fatal("placed 5 GPUs with 4 free")
	}
	if _, _, ok := g.Place(0, any); ok {
		t.Fatal("placed a job of no GPUs")
	}
	if g.Free() != 4 {
		t.Fatalf("Free = %d, want 4", g.Free())
	}
}
