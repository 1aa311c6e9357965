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

// allocCluster has 4 V100 and 4 K80, 64 CPU cores and 256 GB in total.
func allocCluster() allocation.Cluster {
	return allocation.Cluster{Servers: []allocation.Server{
		{ID: "v0", Accelerator: "v100", GPUs: 4, CPUs: 32, MemoryGB: 128},
		{ID: "k0", Accelerator: "k80", GPUs: 4, CPUs: 32, MemoryGB: 128},
	}}
}

type shares = map[allocation.Accelerator]float64

// pair returns the Pairs entry of a job co-located with partner.
func pair(partner string, s shares) map[string]map[allocation.Accelerator]float64 {
	return map[string]map[allocation.Accelerator]float64{partner: s}
}

func TestAllocationValidate(t *testing.T) {
	tests := []struct {
		name    string
		c       allocation.Cluster // allocCluster() when zero
		a       allocation.Allocation
		wantErr error    // nil, ErrInvalid or ErrOverCapacity
		wantMsg []string // substrings of the error
	}{
		{name: "nil allocation"},
		{name: "nil allocation on empty cluster", c: allocation.Cluster{Servers: []allocation.Server{}}},
		{name: "empty grant on empty cluster", c: allocation.Cluster{Servers: []allocation.Server{}},
			a: allocation.Allocation{"a": {}}},
		{name: "valid", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 0.5, "k80": 0.5}, CPUs: 4, MemoryGB: 16, BatchSize: 64},
			"b": {GPUs: 2, Shares: shares{"v100": 1}},
			"c": {}, // nothing granted
		}},
		{name: "zero gpus with zero share", a: allocation.Allocation{"a": {GPUs: 0, Shares: shares{"v100": 0}}}},
		{name: "whole workers", a: allocation.Allocation{"a": {GPUs: 8, GPUsPerWorker: 4, Shares: shares{"v100": 0.5}}}},
		{name: "no gpus with workers", a: allocation.Allocation{"a": {GPUs: 0, GPUsPerWorker: 4}}},
		{name: "exactly at capacity", a: allocation.Allocation{
			"a": {GPUs: 2, Shares: shares{"v100": 1}},
			"b": {GPUs: 4, Shares: shares{"v100": 0.5, "k80": 0.5}},
			"c": {GPUs: 2, Shares: shares{"k80": 1}},
		}},
		{name: "within 1e-7 over capacity and time", a: allocation.Allocation{
			"a": {GPUs: 4, Shares: shares{"v100": 1 + 1e-7}},
			"b": {GPUs: 4, Shares: shares{"k80": 0.5 + 1e-7, "v100": 1e-7}},
			"c": {GPUs: 2, Shares: shares{"k80": 1}},
		}},
		{name: "share within tolerance below zero", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": -1e-7}},
		}},

		// Malformed grants.
		{name: "share NaN", a: allocation.Allocation{"a": {GPUs: 1, Shares: shares{"v100": math.NaN()}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "shares", "NaN"}},
		{name: "share -0.1", a: allocation.Allocation{"a": {GPUs: 1, Shares: shares{"v100": -0.1}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "shares", "-0.1"}},
		{name: "share 1.5", a: allocation.Allocation{"a": {GPUs: 1, Shares: shares{"k80": 1.5}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "shares", "1.5"}},
		{name: "unknown accelerator", a: allocation.Allocation{"a": {GPUs: 1, Shares: shares{"a100": 0.1}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "shares", `unknown accelerator "a100"`}},
		{name: "row sum over 1", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 0.6}},
			"b": {GPUs: 1, Shares: shares{"v100": 0.6, "k80": 0.6}},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "b"`, "shares", "1.2"}},
		{name: "row sum over 1 with pair shares", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 0.6}, Pairs: pair("b", shares{"k80": 0.5})},
			"b": {GPUs: 1, Pairs: pair("a", shares{"k80": 0.5})},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "shares", "1.1"}},
		{name: "negative gpus", a: allocation.Allocation{"a": {GPUs: -1}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "gpus", "-1"}},
		{name: "negative gpus per worker", a: allocation.Allocation{"a": {GPUs: 2, GPUsPerWorker: -2}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "gpus_per_worker", "-2"}},
		{name: "gpus not whole workers", a: allocation.Allocation{"a": {GPUs: 6, GPUsPerWorker: 4, Shares: shares{"v100": 0.5}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "gpus", "6", "gpus_per_worker 4"}},
		{name: "zero gpus with positive share", a: allocation.Allocation{"a": {GPUs: 0, Shares: shares{"v100": 0.1}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "gpus", "v100"}},
		{name: "zero gpus with positive pair share", a: allocation.Allocation{
			"a": {GPUs: 1, Pairs: pair("b", shares{"k80": 0.5})},
			"b": {GPUs: 0, Pairs: pair("a", shares{"k80": 0.5})},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "b"`, "gpus", "k80"}},
		{name: "NaN cpus", a: allocation.Allocation{"a": {GPUs: 1, CPUs: math.NaN()}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "cpus"}},
		{name: "negative memory", a: allocation.Allocation{"a": {GPUs: 1, MemoryGB: -1}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "memory_gb"}},
		{name: "negative batch size", a: allocation.Allocation{"a": {GPUs: 1, Shares: shares{"v100": 1}, BatchSize: -32}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "batch_size", "-32"}},
		{name: "invalid cluster", c: allocation.Cluster{Servers: []allocation.Server{{ID: "x", GPUs: 1}}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{"cluster", `"x"`, "accelerator"}},

		// Pairs.
		{name: "self pair", a: allocation.Allocation{"a": {GPUs: 1, Pairs: pair("a", shares{"v100": 0.5})}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "pairs[a]", "itself"}},
		{name: "unknown partner", a: allocation.Allocation{"a": {GPUs: 1, Pairs: pair("zz", shares{"v100": 0.5})}},
			wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "pairs[zz]", "not in the allocation"}},
		{name: "asymmetric pair shares", a: allocation.Allocation{
			"a": {GPUs: 1, Pairs: pair("b", shares{"v100": 0.3})},
			"b": {GPUs: 1, Pairs: pair("a", shares{"v100": 0.2})},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "pairs[b]", "v100", "0.3", "0.2"}},
		{name: "one-sided pair", a: allocation.Allocation{
			"a": {GPUs: 1},
			"b": {GPUs: 1, Pairs: pair("a", shares{"k80": 0.4})},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "b"`, "pairs[a]", "k80"}},
		{name: "pair share outside [0,1]", a: allocation.Allocation{
			"a": {GPUs: 1, Pairs: pair("b", shares{"k80": 1.5})},
			"b": {GPUs: 1, Pairs: pair("a", shares{"k80": 1.5})},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "pairs[b]", "1.5"}},
		{name: "pair on unknown accelerator", a: allocation.Allocation{
			"a": {GPUs: 1, Pairs: pair("b", shares{"a100": 0.5})},
			"b": {GPUs: 1, Pairs: pair("a", shares{"a100": 0.5})},
		}, wantErr: allocation.ErrInvalid, wantMsg: []string{`job "a"`, "pairs[b]", "a100"}},
		{name: "symmetric pair within tolerance", a: allocation.Allocation{
			"a": {GPUs: 1, Pairs: pair("b", shares{"v100": 0.3})},
			"b": {GPUs: 1, Pairs: pair("a", shares{"v100": 0.3 + 1e-7})},
		}},
		// 4 GPUs × 1.0 fills the V100s: valid only if the pair counts once.
		{name: "pair counted once", a: allocation.Allocation{
			"a": {GPUs: 4, Pairs: pair("b", shares{"v100": 1})},
			"b": {GPUs: 4, Pairs: pair("a", shares{"v100": 1})},
		}},
		// max(4,2)·0.5 + 2·1 = 4: valid with max counted once; the sum of
		// the two jobs' GPUs (3 + 2) or max counted twice (4 + 2) is over.
		{name: "pair counts max gpus once", a: allocation.Allocation{
			"a": {GPUs: 4, Pairs: pair("b", shares{"v100": 0.5})},
			"b": {GPUs: 2, Pairs: pair("a", shares{"v100": 0.5})},
			"c": {GPUs: 2, Shares: shares{"v100": 1}},
		}},
		// max(4,2)·0.8 + 2·0.5 = 4.2 > 4; with min(4,2) it would be 2.6.
		{name: "pair counts max not min", a: allocation.Allocation{
			"a": {GPUs: 4, Pairs: pair("b", shares{"v100": 0.8})},
			"b": {GPUs: 2, Pairs: pair("a", shares{"v100": 0.8})},
			"c": {GPUs: 2, Shares: shares{"v100": 0.5}},
		}, wantErr: allocation.ErrOverCapacity, wantMsg: []string{"v100", "4.2"}},

		// Capacity.
		{name: "over gpu capacity", a: allocation.Allocation{
			"a": {GPUs: 4, Shares: shares{"v100": 0.6}},
			"b": {GPUs: 4, Shares: shares{"v100": 0.4001}},
		}, wantErr: allocation.ErrOverCapacity, wantMsg: []string{"v100", "4.0004"}},
		// 4·0.6 + 2·0.9 = 4.2 > 4, although the shares sum to 1.5.
		{name: "multi-gpu jobs count gpus times share", a: allocation.Allocation{
			"a": {GPUs: 4, Shares: shares{"k80": 0.6}},
			"b": {GPUs: 2, Shares: shares{"k80": 0.9}},
		}, wantErr: allocation.ErrOverCapacity, wantMsg: []string{"k80", "4.2"}},
		// 40·1 + 40·0.5 = 60 ≤ 64: CPUs count only while the job runs.
		{name: "cpus time weighted fit", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 1}, CPUs: 40},
			"b": {GPUs: 1, Shares: shares{"k80": 0.5}, CPUs: 40},
		}},
		{name: "cpus over", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 1}, CPUs: 40},
			"b": {GPUs: 1, Shares: shares{"k80": 0.7}, CPUs: 40},
		}, wantErr: allocation.ErrOverCapacity, wantMsg: []string{"cpus", "68"}},
		// Pair time counts as busy time: 40·1 + 40·0.6 = 64 fits exactly,
		// 40·1 + 40·0.7 = 68 does not.
		{name: "cpus busy includes pairs fit", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 0.5}, Pairs: pair("b", shares{"k80": 0.5}), CPUs: 40},
			"b": {GPUs: 1, Shares: shares{"v100": 0.1}, Pairs: pair("a", shares{"k80": 0.5}), CPUs: 40},
		}},
		{name: "cpus busy includes pairs over", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 0.5}, Pairs: pair("b", shares{"k80": 0.5}), CPUs: 40},
			"b": {GPUs: 1, Shares: shares{"v100": 0.2}, Pairs: pair("a", shares{"k80": 0.5}), CPUs: 40},
		}, wantErr: allocation.ErrOverCapacity, wantMsg: []string{"cpus", "68"}},
		{name: "memory time weighted fit", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 1}, MemoryGB: 200},
			"b": {GPUs: 1, Shares: shares{"k80": 0.25}, MemoryGB: 200},
		}},
		{name: "memory over", a: allocation.Allocation{
			"a": {GPUs: 1, Shares: shares{"v100": 1}, MemoryGB: 200},
			"b": {GPUs: 1, Shares: shares{"k80": 0.3}, MemoryGB: 200},
		}, wantErr: allocation.ErrOverCapacity, wantMsg: []string{"memory_gb", "260"}},
		{name: "cpus on a cluster without cpus", c: allocation.Cluster{Servers: []allocation.Server{
			{ID: "v0", Accelerator: "v100", GPUs: 1},
		}}, a: allocation.Allocation{"a": {GPUs: 1, Shares: shares{"v100": 1}, CPUs: 1}},
			wantErr: allocation.ErrOverCapacity, wantMsg: []string{"cpus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			if c.Servers == nil {
				c = allocCluster()
			}
			err := tt.a.Validate(c)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error wrapping %v", err, tt.wantErr)
			}
			for _, other := range []error{allocation.ErrInvalid, allocation.ErrOverCapacity} {
				if other != tt.wantErr && errors.Is(err, other) {
					t.Errorf("Validate() = %v, also wraps %v", err, other)
				}
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Validate() = %q, want it to mention %q", err, s)
				}
			}
		})
	}
}

func TestAllocationShareBusyIDs(t *testing.T) {
	a := allocation.Allocation{
		"b": {GPUs: 1, Shares: shares{"v100": 0.25, "k80": 0.125}, Pairs: map[string]map[allocation.Accelerator]float64{
			"a": {"v100": 0.5},
			"c": {"v100": 0.0625, "k80": 0.03125},
		}},
		"a": {GPUs: 2, Pairs: pair("b", shares{"v100": 0.5})},
		"c": {GPUs: 1, Shares: shares{"k80": 0.75}, Pairs: pair("b", shares{"v100": 0.0625, "k80": 0.03125})},
		"d": {},
	}
	type row struct {
		V100, K80, A100, Busy float64
	}
	got := map[string]row{}
	for _, id := range []string{"a", "b", "c", "d", "missing"} {
		got[id] = row{
			V100: a.Share(id, "v100"), K80: a.Share(id, "k80"), A100: a.Share(id, "a100"),
			Busy: a[id].Busy(),
		}
	}
	want := map[string]row{
		"a":       {V100: 0.5, Busy: 0.5},
		"b":       {V100: 0.8125, K80: 0.15625, Busy: 0.96875},
		"c":       {V100: 0.0625, K80: 0.78125, Busy: 0.84375},
		"d":       {},
		"missing": {},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 1e-15)); diff != "" {
		t.Errorf("Share/Busy mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, a.IDs()); diff != "" {
		t.Errorf("IDs() mismatch (-want +got):\n%s", diff)
	}
	if err := a.Validate(allocCluster()); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
	var empty allocation.Allocation
	if diff := cmp.Diff([]string{}, empty.IDs(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("nil IDs() mismatch (-want +got):\n%s", diff)
	}
	if got := empty.Share("a", "v100"); got != 0 {
		t.Errorf("nil Share() = %v, want 0", got)
	}
}
