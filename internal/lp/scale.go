package lp

import "math"

// scaling is an equivalent, better scaled form of min cᵀx, Ax = b, x ≥ 0:
//
//	Â = R·A·S,  b̂ = R·b/β,  ĉ = S·c/γ,
//
// with R = diag(row), S = diag(col) and β, γ > 0. x̂ solves the scaled
// problem exactly when x = β·S·x̂ solves the original one, and its duals ŷ
// map to y = γ·R·ŷ. Every factor is a power of two, so scaling and
// unscaling change no bit of any mantissa (barring underflow to subnormal
// numbers): the scaled problem is the original one exactly, only with exponents that gonum's absolute
// tolerances (1e-13 on the ratio test, 1e-12 in its phase 1, a fixed
// tolerance on reduced costs) suit.
type scaling struct {
	row, col []float64
	// β = 2^bExp and γ = 2^cExp, kept as exponents: for data near the
	// float64 limit β itself may not be representable.
	bExp, cExp int
}

// computeScaling balances the m×n row-major matrix a: a few passes of
// geometric scaling (divide each row, then each column, by the geometric
// mean of its smallest and largest magnitude), which shrinks the spread of
// magnitudes, then equilibration of the columns to a largest magnitude in
// (½, 1]. Row factors are computed from the columns that hold more than one
// nonzero when a row has any: singleton columns (slacks) follow their row
// and would only pull its factor towards 1. β and γ bring b̂ and ĉ to a
// largest magnitude in (½, 1].
//
// Each factor stays within [2⁻⁴⁰, 2⁴⁰] (about 1e±12), enough to balance
// data that spans 1e-9 to 1e8 and more, while a coefficient that is
// negligible next to the rest of its row, such as 4e-308 beside 1, is not
// blown up into a pivot candidate: gonum's ratio test treats entries below
// 1e-13 as zero, and scaling them up would let it mistake round-off for a
// direction of unboundedness.
func computeScaling(m, n int, a, b, c []float64) *scaling {
	s := &scaling{row: make([]float64, m), col: make([]float64, n)}
	count := make([]int, n)
	for i := range m {
		for j, v := range a[i*n : (i+1)*n] {
			if v != 0 {
				count[j]++
			}
		}
	}
	for i := range s.row {
		s.row[i] = 1
	}
	for j := range s.col {
		s.col[j] = 1
	}
	const passes = 4
	for range passes {
		for i := range m {
			r := a[i*n : (i+1)*n]
			lo, hi := spread(r, s.col, count, true)
			if hi == 0 {
				lo, hi = spread(r, s.col, count, false)
			}
			if hi > 0 {
				s.row[i] = clampScale(1 / (math.Sqrt(lo) * math.Sqrt(hi)))
			}
		}
		for j := range n {
			lo, hi := math.Inf(1), 0.0
			for i := range m {
				if v := math.Abs(a[i*n+j]) * s.row[i]; v != 0 {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
			if hi > 0 {
				s.col[j] = clampScale(1 / (math.Sqrt(lo) * math.Sqrt(hi)))
			}
		}
	}
	for i := range s.row {
		s.row[i] = pow2(s.row[i])
	}
	for j := range n {
		var hi float64
		for i := range m {
			hi = max(hi, math.Abs(a[i*n+j])*s.row[i])
		}
		s.col[j] = 1
		if hi > 0 {
			s.col[j] = clampScale(below(hi))
		}
	}
	s.bExp = normalizer(b, s.row)
	s.cExp = normalizer(c, s.col)
	return s
}

// spread returns the smallest and largest magnitude of the nonzeros of r
// scaled by col, over columns with more than one nonzero if multi.
func spread(r, col []float64, count []int, multi bool) (lo, hi float64) {
	lo = math.Inf(1)
	for j, v := range r {
		if v == 0 || multi && count[j] < 2 {
			continue
		}
		v = math.Abs(v) * col[j]
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// maxScale bounds every row and column factor: 2⁻⁴⁰ ≤ factor ≤ 2⁴⁰.
const maxScale = 1 << 40

func clampScale(v float64) float64 { return min(max(v, 1/maxScale), maxScale) }

// pow2 returns the power of two nearest to v > 0 (in ratio).
func pow2(v float64) float64 {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 1
	}
	frac, exp := math.Frexp(v) // v = frac·2^exp, frac ∈ [½, 1)
	if frac < math.Sqrt2/2 {
		exp--
	}
	return math.Ldexp(1, exp)
}

// below returns the power of two 2^-e such that v·2^-e lies in (½, 1].
func below(v float64) float64 {
	frac, exp := math.Frexp(v) // v = frac·2^exp, frac ∈ [½, 1)
	if frac == 0.5 {
		exp-- // v is a power of two: scale it to exactly 1
	}
	return math.Ldexp(1, -exp)
}

// normalizer returns the e such that the largest |v_i|·f_i is in
// (2^(e−1), 2^e], or 0 if v is 0. It works on exponents, so that nothing
// overflows even for data near the float64 limit.
func normalizer(v, f []float64) int {
	best := math.MinInt
	for i, x := range v {
		if x == 0 {
			continue
		}
		frac, e := math.Frexp(math.Abs(x))
		e += log2(f[i])
		if frac == 0.5 {
			e-- // |x|·f[i] is a power of two, 2^e exactly
		}
		best = max(best, e)
	}
	if best == math.MinInt {
		return 0
	}
	return best
}

// log2 returns k for a power of two 2^k.
func log2(p float64) int {
	_, e := math.Frexp(p) // p = ½·2^e
	return e - 1
}

// apply returns Â, b̂ and ĉ.
func (s *scaling) apply(m, n int, a, b, c []float64) (as, bs, cs []float64) {
	as = make([]float64, m*n)
	for i := range m {
		for j := range n {
			as[i*n+j] = a[i*n+j] * s.row[i] * s.col[j]
		}
	}
	bs = make([]float64, m)
	for i := range m {
		bs[i] = math.Ldexp(b[i], log2(s.row[i])-s.bExp) // one step: no overflow
	}
	cs = make([]float64, n)
	for j := range n {
		cs[j] = math.Ldexp(c[j], log2(s.col[j])-s.cExp)
	}
	return as, bs, cs
}

// unscale maps a solution of the scaled problem back, in place.
func (s *scaling) unscale(x, y []float64) {
	for j := range x {
		x[j] = math.Ldexp(x[j], s.bExp+log2(s.col[j]))
	}
	for i := range y {
		y[i] = math.Ldexp(y[i], s.cExp+log2(s.row[i]))
	}
}
