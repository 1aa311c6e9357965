package throughput

import (
	"fmt"
	"math"
	"slices"
)

// Sensitivity is a job's throughput as a function of the CPU cores and the
// memory it gets per GPU, measured on a grid and relative to a reference
// throughput (Synergy normalises to the GPU-proportional share, whose cell
// is then 1). A g-GPU job with c cores and m GB per GPU uses g·c cores and
// g·m GB.
//
// The zero value has an empty grid; [Sensitivity.Validate] rejects it.
type Sensitivity struct {
	// CPUs and MemoryGB are the grid's axes, per GPU, strictly ascending.
	CPUs     []float64 `json:"cpus"`
	MemoryGB []float64 `json:"memory_gb"`
	// Speedup[i][m] is the relative throughput with CPUs[i] cores and
	// MemoryGB[m] GB per GPU.
	Speedup [][]float64 `json:"speedup"`
}

// Point is an allocation of CPU cores and memory per GPU and the relative
// throughput it gives.
type Point struct {
	CPUs     float64 `json:"cpus"`
	MemoryGB float64 `json:"memory_gb"`
	Speedup  float64 `json:"speedup"`
}

// Validate reports the first malformed field of s, by its JSON name: an
// empty, non-positive, non-finite or unsorted axis, a grid of the wrong
// shape, or a negative or non-finite speedup.
func (s Sensitivity) Validate() error {
	for _, axis := range []struct {
		name string
		v    []float64
	}{{"cpus", s.CPUs}, {"memory_gb", s.MemoryGB}} {
		if len(axis.v) == 0 {
			return fmt.Errorf("%s: empty", axis.name)
		}
		for i, x := range axis.v {
			if !(x > 0 && x <= math.MaxFloat64) || (i > 0 && x <= axis.v[i-1]) {
				return fmt.Errorf("%s: values must be finite, positive and strictly ascending: %v", axis.name, axis.v)
			}
		}
	}
	if len(s.Speedup) != len(s.CPUs) {
		return fmt.Errorf("speedup: %d rows for %d CPU values", len(s.Speedup), len(s.CPUs))
	}
	for i, row := range s.Speedup {
		if len(row) != len(s.MemoryGB) {
			return fmt.Errorf("speedup[%d]: %d values for %d memory values", i, len(row), len(s.MemoryGB))
		}
		for m, x := range row {
			if !(x >= 0 && x <= math.MaxFloat64) {
				return fmt.Errorf("speedup[%d][%d]: %v is not a finite non-negative number", i, m, x)
			}
		}
	}
	return nil
}

// At returns the relative throughput with cpus cores and memGB GB per GPU,
// interpolated linearly between the grid's points in both dimensions
// (bilinearly inside a cell). Outside the grid the nearest edge holds: the
// grid is expected to span from the least a job is given to where its
// throughput stops growing. s must be valid.
//
// Interpolating rather than rounding down to a grid cell keeps a grant a
// rounding error below a grid point, such as 62.499999 GB, at that point's
// throughput, and gives a share clipped to a server between two profiled
// points the throughput between them.
func (s Sensitivity) At(cpus, memGB float64) float64 {
	i, fi := bracket(s.CPUs, cpus)
	m, fm := bracket(s.MemoryGB, memGB)
	row := func(i int) float64 {
		v := s.Speedup[i][m]
		if fm > 0 {
			v += fm * (s.Speedup[i][m+1] - v)
		}
		return v
	}
	v := row(i)
	if fi > 0 {
		v += fi * (row(i+1) - v)
	}
	return v
}

// bracket returns the index i of the grid point at or below x and the
// fraction f ∈ [0, 1) of the way to the next one; x outside the axis is
// clamped to its ends.
func bracket(axis []float64, x float64) (int, float64) {
	n := len(axis)
	switch {
	case !(x > axis[0]): // NaN too
		return 0, 0
	case x >= axis[n-1]:
		return n - 1, 0
	}
	j, exact := slices.BinarySearch(axis, x)
	if exact {
		return j, 0
	}
	return j - 1, (x - axis[j-1]) / (axis[j] - axis[j-1])
}

// Ideal returns the job's ideal demand: the grid's greatest speedup at the
// fewest CPU cores and then the least memory that reach it. s must be valid.
func (s Sensitivity) Ideal() Point {
	best := Point{CPUs: s.CPUs[0], MemoryGB: s.MemoryGB[0], Speedup: s.Speedup[0][0]}
	for i, row := range s.Speedup {
		for m, x := range row {
			if x > best.Speedup {
				best = Point{CPUs: s.CPUs[i], MemoryGB: s.MemoryGB[m], Speedup: x}
			}
		}
	}
	return best
}

// Clip returns the ideal demand limited to at most cpus cores and memGB GB
// per GPU, with the throughput At gives there: what a job whose ideal
// exceeds a server can have on one. s must be valid.
func (s Sensitivity) Clip(cpus, memGB float64) Point {
	p := s.Ideal()
	if p.CPUs <= cpus && p.MemoryGB <= memGB {
		return p
	}
	p.CPUs, p.MemoryGB = min(p.CPUs, cpus), min(p.MemoryGB, memGB)
	p.Speedup = s.At(p.CPUs, p.MemoryGB)
	return p
}
