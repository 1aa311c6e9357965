package bayes

import "math"

// GittinsTable is the Gittins index as Tiresias' simulator keeps it: a table
// with one entry per sample s_k, the simulator's index at the attained
// service s_k − 1, looked up for attained service a at the first sample
// above a. Between two samples every job thus gets the index of the grid
// point at the next sample, not of its own attained service. Build it with
// Service.SimulatorTable; the zero value gives 0 everywhere.
type GittinsTable struct {
	s, g []float64
}

// SimulatorTable returns the table Tiresias' simulator computes for the
// quantum Δ. Entry k is
//
//	G_k = round₄(round₅(P)·10⁶ / round₅(E)) / 10⁶,
//	P = (j − i)/(N − i),  E = (Σ_{i≤m<j} s_m + Δ·(N − j))/(N − i),
//
// at a = s_k − 1, with i = #{s ≤ a} and j = #{s ≤ a + Δ}, except that j is
// N − 1 once a + Δ passes s_{N−1} − 1 (the simulator's own bound, which
// leaves the largest sample out of the jobs that finish within the
// quantum). The rounding to 5 and 4 decimals is the simulator's; dividing by
// 10⁶ puts the index on Gittins's scale. Δ not positive or NaN gives an
// empty table.
func (s Service) SimulatorTable(quantum float64) GittinsTable {
	if !(quantum > 0) {
		return GittinsTable{}
	}
	t := GittinsTable{s: s.s, g: make([]float64, len(s.s))}
	for k, v := range s.s {
		t.g[k] = s.simulatorIndex(v-1, quantum)
	}
	return t
}

// simulatorIndex is the simulator's index at attained service a.
func (s Service) simulatorIndex(a, delta float64) float64 {
	n := len(s.s)
	if a > s.s[n-1]-1 {
		return 0
	}
	i := s.above(a)
	j := n - 1
	if a+delta <= s.s[n-1]-1 {
		j = s.above(a + delta)
	}
	if j < i {
		return 0
	}
	sum := (s.hi[j] - s.hi[i]) + (s.lo[j] - s.lo[i])
	p := roundTo(float64(j-i)/float64(n-i), 5)
	e := roundTo((sum+delta*float64(n-j))/float64(n-i), 5)
	if !(e > 0) {
		return 0
	}
	return roundTo(p*1e6/e, 4) / 1e6
}

// roundTo rounds x to d decimals, halves to even, as Python's round does
// for the decimal value nearest x.
func roundTo(x float64, d int) float64 {
	scale := math.Pow(10, float64(d))
	return math.RoundToEven(x*scale) / scale
}

// At returns the table's index for attained service a: 0 past the largest
// sample (or for NaN), else the entry of the first sample above a.
func (t GittinsTable) At(a float64) float64 {
	n := len(t.s)
	if n == 0 || math.IsNaN(a) || a > t.s[n-1] {
		return 0
	}
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.s[m] > a {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == n { // a is the largest sample: the simulator's sentinel, 0
		return 0
	}
	return t.g[lo]
}
