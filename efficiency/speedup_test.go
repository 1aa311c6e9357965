package efficiency

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSpeedup(t *testing.T) {
	s := NewSpeedup(specJob, specLim, 1, 1)
	base, _ := specJob.Optimize(1, 1, specLim)
	tests := []struct {
		nodes, replicas int
		want            float64 // NaN: Optimize(nodes, replicas)/base
	}{
		{0, 0, 0},
		{1, 0, 0},
		{2, 1, 0},
		{-1, 4, 0},
		{1, 1, 1},
		{2, 8, 2.0254719806},
		{1, 2, math.NaN()},
		{4, 16, math.NaN()},
		{4, 64, 0}, // LocalMin·K > MaxBatch: refused
	}
	for _, tc := range tests {
		want := tc.want
		if math.IsNaN(want) {
			c, _ := specJob.Optimize(tc.nodes, tc.replicas, specLim)
			want = c.Goodput / base.Goodput
		}
		if got := s.At(tc.nodes, tc.replicas); !approx(got, want, 1e-9) {
			t.Errorf("At(%d, %d) = %v, want %v", tc.nodes, tc.replicas, got, want)
		}
	}
}

func TestSpeedupMemo(t *testing.T) {
	s := NewSpeedup(specJob, specLim, 1, 1)
	placements := [][2]int{{1, 1}, {1, 2}, {2, 8}, {4, 16}, {1, 2}, {2, 8}}
	var first []float64
	for _, p := range placements {
		first = append(first, s.At(p[0], p[1]))
	}
	if len(s.memo) != 4 {
		t.Errorf("memo holds %d placements, want the 4 distinct ones", len(s.memo))
	}
	var again []float64
	for _, p := range placements {
		again = append(again, s.At(p[0], p[1]))
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("memoised values differ (-first +again):\n%s", diff)
	}
	// A fresh table computes the same values.
	fresh := NewSpeedup(specJob, specLim, 1, 1)
	for i, p := range placements {
		if v := fresh.At(p[0], p[1]); v != first[i] {
			t.Errorf("fresh At%v = %v, memoised %v", p, v, first[i])
		}
	}
	// At answers from the memo once a placement is known.
	s.memo[[2]int{2, 8}] = 42
	if v := s.At(2, 8); v != 42 {
		t.Errorf("At(2, 8) = %v, not the memoised 42", v)
	}
	if c, ok := s.Config(2, 8); !ok || c.LocalBatch != 64 {
		t.Errorf("Config(2, 8) = %+v, %v, want m 64", c, ok)
	}
}

func TestSpeedupBase(t *testing.T) {
	one, _ := specJob.Optimize(1, 1, specLim)
	eight, _ := specJob.Optimize(2, 8, specLim)
	tests := []struct {
		name                   string
		g                      Goodput
		lim                    Limits
		baseNodes, baseReplica int
		at                     [2]int
		want                   float64
	}{
		{"base (2, 8)", specJob, specLim, 2, 8, [2]int{2, 8}, 1},
		{"base (2, 8) at (1, 1)", specJob, specLim, 2, 8, [2]int{1, 1}, one.Goodput / eight.Goodput},
		{"invalid base falls back to (1, 1)", specJob, specLim, 2, 1, [2]int{2, 8}, eight.Goodput / one.Goodput},
		{"refused base falls back to (1, 1)", specJob, specLim, 4, 64, [2]int{2, 8}, eight.Goodput / one.Goodput},
		// One GPU cannot reach M0 without accumulation: no base, all zero.
		{"no base at all", specJob, Limits{MaxBatch: 1280, LocalMax: 32}, 1, 1, [2]int{1, 8}, 0},
		{"zero throughput", Goodput{Grad: specGrad, BatchSize: 128}, specLim, 1, 1, [2]int{2, 8}, 0},
	}
	for _, tc := range tests {
		s := NewSpeedup(tc.g, tc.lim, tc.baseNodes, tc.baseReplica)
		if got := s.At(tc.at[0], tc.at[1]); !approx(got, tc.want, 1e-9) {
			t.Errorf("%s: At%v = %v, want %v", tc.name, tc.at, got, tc.want)
		}
	}
}
