package allocation_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/allocation"
)

func TestClusterValidate(t *testing.T) {
	good := allocation.Server{ID: "s0", Accelerator: "v100", GPUs: 4, CPUs: 32, MemoryGB: 128}
	with := func(f func(*allocation.Server)) []allocation.Server {
		s := allocation.Server{ID: "bad", Accelerator: "k80", GPUs: 2, CPUs: 8, MemoryGB: 64}
		f(&s)
		return []allocation.Server{good, s}
	}
	tests := []struct {
		name    string
		servers []allocation.Server
		// wantMsg lists substrings the error must contain; nil means valid.
		wantMsg []string
	}{
		{name: "empty cluster"},
		{name: "valid", servers: with(func(*allocation.Server) {})},
		{name: "zero gpus cpus and memory are valid", servers: with(func(s *allocation.Server) {
			s.GPUs, s.CPUs, s.MemoryGB = 0, 0, 0
		})},
		{name: "empty id", servers: with(func(s *allocation.Server) { s.ID = "" }),
			wantMsg: []string{"server 1", "id", "empty"}},
		{name: "duplicate id", servers: with(func(s *allocation.Server) { s.ID = "s0" }),
			wantMsg: []string{`"s0"`, "id", "duplicate"}},
		{name: "empty accelerator", servers: with(func(s *allocation.Server) { s.Accelerator = "" }),
			wantMsg: []string{`"bad"`, "accelerator"}},
		{name: "negative gpus", servers: with(func(s *allocation.Server) { s.GPUs = -1 }),
			wantMsg: []string{`"bad"`, "gpus", "-1"}},
		{name: "NaN cpus", servers: with(func(s *allocation.Server) { s.CPUs = math.NaN() }),
			wantMsg: []string{`"bad"`, "cpus", "NaN"}},
		{name: "+Inf cpus", servers: with(func(s *allocation.Server) { s.CPUs = math.Inf(1) }),
			wantMsg: []string{`"bad"`, "cpus", "+Inf"}},
		{name: "-Inf cpus", servers: with(func(s *allocation.Server) { s.CPUs = math.Inf(-1) }),
			wantMsg: []string{`"bad"`, "cpus", "-Inf"}},
		{name: "negative cpus", servers: with(func(s *allocation.Server) { s.CPUs = -1 }),
			wantMsg: []string{`"bad"`, "cpus", "-1"}},
		{name: "NaN memory", servers: with(func(s *allocation.Server) { s.MemoryGB = math.NaN() }),
			wantMsg: []string{`"bad"`, "memory_gb", "NaN"}},
		{name: "+Inf memory", servers: with(func(s *allocation.Server) { s.MemoryGB = math.Inf(1) }),
			wantMsg: []string{`"bad"`, "memory_gb", "+Inf"}},
		{name: "-Inf memory", servers: with(func(s *allocation.Server) { s.MemoryGB = math.Inf(-1) }),
			wantMsg: []string{`"bad"`, "memory_gb", "-Inf"}},
		{name: "negative memory", servers: with(func(s *allocation.Server) { s.MemoryGB = -0.5 }),
			wantMsg: []string{`"bad"`, "memory_gb", "-0.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := allocation.Cluster{Servers: tt.servers}.Validate()
			if tt.wantMsg == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, allocation.ErrInvalid) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalid", err)
			}
			if errors.Is(err, allocation.ErrOverCapacity) {
				t.Errorf("Validate() = %v, also wraps ErrOverCapacity", err)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Validate() = %q, want it to mention %q", err, s)
				}
			}
		})
	}
}

func testCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{
		{ID: "v0", Accelerator: "v100", GPUs: 4, CPUs: 32, MemoryGB: 128},
		{ID: "k0", Accelerator: "k80", GPUs: 8, CPUs: 16, MemoryGB: 64},
		{ID: "v1", Accelerator: "v100", GPUs: 2, CPUs: 8, MemoryGB: 32.5},
		{ID: "a0", Accelerator: "a100", GPUs: 0, CPUs: 0, MemoryGB: 0},
	}}
}

func TestClusterTypes(t *testing.T) {
	base := testCluster().Servers
	tests := []struct {
		name  string
		order []int
		want  []allocation.Accelerator
	}{
		{name: "empty", order: nil, want: nil},
		{name: "one", order: []int{2}, want: []allocation.Accelerator{"v100"}},
		{name: "duplicates only", order: []int{0, 2}, want: []allocation.Accelerator{"v100"}},
		{name: "given order", order: []int{0, 1, 2, 3}, want: []allocation.Accelerator{"a100", "k80", "v100"}},
		{name: "reversed", order: []int{3, 2, 1, 0}, want: []allocation.Accelerator{"a100", "k80", "v100"}},
		{name: "interleaved", order: []int{2, 3, 0, 1}, want: []allocation.Accelerator{"a100", "k80", "v100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c allocation.Cluster
			for _, i := range tt.order {
				c.Servers = append(c.Servers, base[i])
			}
			if diff := cmp.Diff(tt.want, c.Types(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Types() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterTotals(t *testing.T) {
	c := testCluster()
	type totals struct {
		V100, K80, A100, P100, Total int
		CPUs, MemoryGB               float64
	}
	tests := []struct {
		name string
		c    allocation.Cluster
		want totals
	}{
		{name: "zero value", c: allocation.Cluster{}},
		{name: "mixed", c: c, want: totals{V100: 6, K80: 8, A100: 0, P100: 0, Total: 14, CPUs: 56, MemoryGB: 224.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := totals{
				V100: tt.c.GPUs("v100"), K80: tt.c.GPUs("k80"), A100: tt.c.GPUs("a100"), P100: tt.c.GPUs("p100"),
				Total: tt.c.TotalGPUs(), CPUs: tt.c.CPUs(), MemoryGB: tt.c.MemoryGB(),
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("totals mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterServer(t *testing.T) {
	c := testCluster()
	tests := []struct {
		id     string
		want   allocation.Server
		wantOK bool
	}{
		{id: "v0", want: c.Servers[0], wantOK: true},
		{id: "v1", want: c.Servers[2], wantOK: true},
		{id: "a0", want: c.Servers[3], wantOK: true},
		{id: "missing"},
		{id: ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, ok := c.Server(tt.id)
			if ok != tt.wantOK {
				t.Errorf("Server(%q) ok = %v, want %v", tt.id, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Server(%q) mismatch (-want +got):\n%s", tt.id, diff)
			}
		})
	}
}
