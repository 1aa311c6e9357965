package bayes

import (
	"math"
	"math/rand/v2"
)

// Dirichlet is a Dirichlet distribution over the fraction of a job's epochs
// spent in each batch-size regime. Alpha[b] is the concentration of regime b;
// a proper distribution has every Alpha[b] > 0.
type Dirichlet struct{ Alpha []float64 }

// Prior returns the symmetric prior of a job with epochs epochs and k
// regimes: α_b = E/K for every b, so the total mass is E and the prior weighs
// as much as the whole job. k < 1 gives an empty distribution.
func Prior(epochs, k int) Dirichlet {
	if k < 1 {
		return Dirichlet{}
	}
	alpha := make([]float64, k)
	a := float64(epochs) / float64(k)
	for b := range alpha {
		alpha[b] = a
	}
	return Dirichlet{Alpha: alpha}
}

// Observe returns the posterior after counts[b] epochs were observed in
// regime b: α'_b = α_b + n_b. The receiver is not modified.
//
// Observe panics if len(counts) != len(d.Alpha): that is a programming error
// (the regimes of the counts are not those of the distribution), not bad data.
func (d Dirichlet) Observe(counts []int) Dirichlet {
	if len(counts) != len(d.Alpha) {
		panic("bayes: Dirichlet.Observe: len(counts) != len(Alpha)")
	}
	alpha := make([]float64, len(d.Alpha))
	for b, a := range d.Alpha {
		alpha[b] = a + float64(counts[b])
	}
	return Dirichlet{Alpha: alpha}
}

// Mean returns the mean fractions α_b/Σα. The division is done after scaling
// by the largest α, so Σα overflowing float64 does not matter. If no α is
// positive the mean is undefined and Mean returns the uniform vector; if some
// α are +Inf they share the mass equally.
func (d Dirichlet) Mean() []float64 {
	k := len(d.Alpha)
	m := make([]float64, k)
	top := 0.0
	for _, a := range d.Alpha {
		if a > top {
			top = a
		}
	}
	if top == 0 {
		for b := range m {
			m[b] = 1 / float64(k)
		}
		return m
	}
	sum := 0.0
	for b, a := range d.Alpha {
		switch {
		case math.IsInf(top, 1):
			if math.IsInf(a, 1) {
				m[b] = 1
				sum++
			}
		case a > 0: // NaN and non-positive α carry no mass.
			m[b] = a / top
			sum += m[b]
		}
	}
	for b := range m {
		m[b] /= sum
	}
	return m
}

// Sample draws one fraction vector from the distribution using r. The draw
// is the usual one, x_b = g_b/Σg with g_b ~ Gamma(α_b, 1), but the gammas are
// drawn and normalised in log space: for α < 1,
//
//	log g = log Gamma(α+1) + log(U)/α,   U ~ Uniform(0, 1],
//
// which stays finite where g itself underflows to 0 (α = 1e-300 gives
// log g ≈ −1e300). Then x_b = exp(log g_b − max log g)/Σ. This keeps the
// right small-α behaviour, where the Dirichlet concentrates on one vertex
// chosen with probability α_b/Σα; a plain Gamma draw returns 0 for every
// regime there and the ratio is NaN.
//
// If every log g_b is −∞ (every α is subnormal, zero, negative or NaN), or
// some α is +Inf, there is nothing to normalise and Sample puts all mass on
// the regime with the largest α, the lowest index among ties (regime 0 if no
// α is a number).
// Sample never returns NaN; every draw is on the simplex.
func (d Dirichlet) Sample(r *rand.Rand) []float64 {
	k := len(d.Alpha)
	x := make([]float64, k)
	if k == 0 {
		return x
	}
	top := math.Inf(-1)
	for b, a := range d.Alpha {
		x[b] = logGamma(a, r)
		top = math.Max(top, x[b])
	}
	if math.IsInf(top, 0) {
		best := 0
		for b, a := range d.Alpha {
			if a > d.Alpha[best] || math.IsNaN(d.Alpha[best]) && !math.IsNaN(a) {
				best = b
			}
		}
		for b := range x {
			x[b] = 0
		}
		x[best] = 1
		return x
	}
	sum := 0.0
	for b := range x {
		x[b] = math.Exp(x[b] - top) // the largest becomes exactly 1, so sum ≥ 1
		sum += x[b]
	}
	for b := range x {
		x[b] /= sum
	}
	return x
}

// logGamma returns the logarithm of one Gamma(a, 1) draw: −∞ when a is not
// positive (no mass) or so small that log(U)/a overflows, +∞ when a is +Inf.
func logGamma(a float64, r *rand.Rand) float64 {
	switch {
	case math.IsInf(a, 1):
		return a
	case !(a > 0):
		return math.Inf(-1)
	}
	if a < 1 {
		// Boost: Gamma(a) = Gamma(a+1)·U^(1/a).
		u := 1 - r.Float64() // (0, 1], so log u is finite
		return logGamma(a+1, r) + math.Log(u)/a
	}
	// Marsaglia and Tsang (2000), accepted in log form so that a near
	// math.MaxFloat64 does not overflow d·v.
	dd := a - 1.0/3
	c := 1 / math.Sqrt(9*dd)
	for {
		z := r.NormFloat64()
		v := 1 + c*z
		if v <= 0 {
			continue
		}
		lv := 3 * math.Log(v)
		v = v * v * v
		u := 1 - r.Float64()
		z2 := z * z
		if u < 1-0.0331*z2*z2 || math.Log(u) < 0.5*z2+dd*(1-v+lv) {
			return math.Log(dd) + lv
		}
	}
}
