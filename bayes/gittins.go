package bayes

import (
	"math"
	"slices"
	"sort"
)

// Service is an empirical distribution of job service (for example
// GPU-seconds), each sample equally likely. The zero value has no samples
// and every index is 0.
type Service struct {
	s []float64 // sorted samples
	// hi[i] + lo[i] = s[0] + … + s[i-1] in double-double, so that the sum of
	// a range minus a·count keeps its digits when it is tiny next to the sum.
	hi, lo []float64
}

// twoSum returns s = fl(x+y) and the rounding error e, x + y = s + e exactly.
func twoSum(x, y float64) (s, e float64) {
	s = x + y
	v := s - x
	return s, (x - (s - v)) + (y - v)
}

// NewService returns the empirical distribution of samples, which it copies.
// Every sample must be finite and non-negative, and their sum must be finite.
// The error wraps ErrInvalid.
func NewService(samples []float64) (Service, error) {
	if len(samples) == 0 {
		return Service{}, invalid("samples: empty")
	}
	for i, v := range samples {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Service{}, invalid("samples[%d]: %v is not a finite non-negative number", i, v)
		}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	hi := make([]float64, len(s)+1)
	lo := make([]float64, len(s)+1)
	for i, v := range s {
		var e float64
		hi[i+1], e = twoSum(hi[i], v)
		lo[i+1] = lo[i] + e
	}
	if math.IsInf(hi[len(s)], 1) {
		return Service{}, invalid("samples: sum overflows float64")
	}
	return Service{s: s, hi: hi, lo: lo}, nil
}

// Len returns the number of samples.
func (s Service) Len() int { return len(s.s) }

// above returns the index of the first sample > x, len(s.s) if none.
func (s Service) above(x float64) int {
	return sort.Search(len(s.s), func(i int) bool { return s.s[i] > x })
}

// Gittins returns the Gittins index of a job that has attained service a,
// for the service quantum Δ:
//
//	G(a) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a].
//
// Over the sorted samples s_0 ≤ … ≤ s_{N−1}, with i = #{s ≤ a} and
// j = #{s ≤ a+Δ}, the common 1/(N−i) cancels:
//
//	G(a) = (j − i) / (Σ_{i≤k<j} (s_k − a) + Δ·(N − j)).
//
// A higher index means a job more likely to finish per unit of service it
// still needs, so a higher priority. Gittins is 0 when no sample exceeds a
// (the distribution has nothing to say about such a job), when no sample
// lies in (a, a+Δ], when Δ is not positive and when a or Δ is NaN; a < 0
// counts as a = 0. It costs O(log N) through two binary searches and prefix
// sums.
func (s Service) Gittins(attained, quantum float64) float64 {
	return s.gittins(attained, quantum, false)
}

// GittinsSimulator returns the index as the Tiresias simulator computes it,
// without its ×10⁶ scale: the same as Gittins except that jobs finishing
// inside the quantum contribute their whole size s_k instead of the service
// still needed, s_k − a,
//
//	G_sim(a) = (j − i) / (Σ_{i≤k<j} s_k + Δ·(N − j)).
//
// It equals Gittins at a = 0 and is smaller for a > 0. Use it only for
// parity with that simulator.
func (s Service) GittinsSimulator(attained, quantum float64) float64 {
	return s.gittins(attained, quantum, true)
}

func (s Service) gittins(a, delta float64, biased bool) float64 {
	if math.IsNaN(a) || !(delta > 0) {
		return 0
	}
	a = math.Max(a, 0)
	n := len(s.s)
	i := s.above(a)
	if i == n {
		return 0
	}
	j := n
	if hi := a + delta; hi < s.s[n-1] { // also false for Δ = +Inf
		j = s.above(hi)
	}
	if j == i {
		return 0 // nobody finishes within the quantum
	}
	count := float64(j - i)
	// den = Σ_{i≤k<j} s_k (− a·count) from the double-double prefix sums,
	// with the big terms cancelled exactly first.
	big, small := twoSum(s.hi[j], -s.hi[i])
	small += s.lo[j] - s.lo[i]
	if !biased {
		p := a * count
		big -= p                        // exact when it cancels (Sterbenz)
		small -= math.FMA(a, count, -p) // the rounding error of p
	}
	den := big + small
	if !(den > 0) {
		// Every term is positive; only rounding can get here.
		den = 0
		for _, v := range s.s[i:j] {
			if biased {
				den += v
			} else {
				den += v - a
			}
		}
	}
	if j < n {
		den += delta * float64(n-j)
	}
	return count / den
}
