package throughput

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Defaults. Rank, Mu and Iterations are Gavel's (throughput_estimator.py
// DEFAULT_MATRIX_COMPLETION_K and _MU, pmf_solve's max_iterations), as are
// the EMA weight and the failure limit (scheduler.py EMA_ALPHA and
// MAX_FAILED_ATTEMPTS). Tol is not: see the package documentation.
const (
	defaultRank       = 10
	defaultMu         = 1e-2
	defaultIterations = 100
	defaultTol        = 1e-5
	maxRank           = 1 << 10
	defaultAlpha      = 0.5
	defaultLimit      = 5
)

// Reference is the normalized co-location matrix of n reference job types
// on one accelerator type: Pair[i][j] is the throughput of reference i
// when it shares the accelerator with reference j, divided by i's
// throughput alone. Values lie in [0, 1] in Gavel's data; 0 means the two
// cannot run together.
type Reference struct {
	// Names optionally labels the references; nil or of length n.
	Names []string
	// Pair is the n×c matrix, c = n as above; a wider one puts several
	// measurements of each reference side by side, as Gavel does with one
	// block of n columns per accelerator type (then Beside(j) indexes the
	// columns and Partner has no meaning).
	Pair [][]float64
	// Completion sets the matrix completion; its zero value is the
	// default.
	Completion Completion
}

// Completion sets the probabilistic matrix factorization that completes a
// profiled row. Zero fields take the defaults.
type Completion struct {
	Rank       int     // factors k, at most 1024; 0 means 10
	Mu         float64 // L2 penalty μ on the factors; 0 means 1e-2
	Iterations int     // most alternating sweeps; 0 means 100
	// Tol stops the sweeps once ‖X − X_prev‖_F/(rows·cols) < Tol, where
	// X = UVᵀ; 0 means 1e-5. Gavel's is 1e-3.
	Tol float64
	// Seed seeds the N(0, 1) initial factors.
	Seed uint64
}

// Estimate is the outcome of [Reference.Estimate] for one new job.
type Estimate struct {
	// Match is the index of the reference closest to the job.
	Match int
	// Distance is the cosine distance from Row to the Match's row.
	Distance float64
	// Row is the job's completed row: the observed values, and the
	// completion, clipped to [0, max(1, largest entry)], elsewhere.
	Row []float64

	beside, partner []float64 // row and column Match of the matrix
}

// Validate reports the first malformed part of r: an empty matrix or rows
// of unequal lengths, an entry that is negative or not finite, Names of the wrong
// length, or a negative or non-finite Completion setting.
func (r Reference) Validate() error {
	n := len(r.Pair)
	if n == 0 {
		return errors.New("throughput: Reference: empty Pair")
	}
	if r.Names != nil && len(r.Names) != n {
		return fmt.Errorf("throughput: Reference: %d Names for %d references", len(r.Names), n)
	}
	c := len(r.Pair[0])
	if c == 0 {
		return errors.New("throughput: Reference: empty Pair[0]")
	}
	for i, row := range r.Pair {
		if len(row) != c {
			return fmt.Errorf("throughput: Reference: Pair[%d] has %d entries, want %d", i, len(row), c)
		}
		for j, v := range row {
			if !(v >= 0 && v <= math.MaxFloat64) {
				return fmt.Errorf("throughput: Reference: Pair[%d][%d] = %v, want finite and non-negative", i, j, v)
			}
		}
	}
	return r.Completion.validate()
}

func (c Completion) validate() error {
	switch {
	case c.Rank < 0 || c.Rank > maxRank:
		return fmt.Errorf("throughput: Completion: Rank = %d, want in [0, %d]", c.Rank, maxRank)
	case c.Iterations < 0:
		return fmt.Errorf("throughput: Completion: Iterations = %d, want ≥ 0", c.Iterations)
	case !(c.Mu >= 0 && c.Mu <= math.MaxFloat64):
		return fmt.Errorf("throughput: Completion: Mu = %v, want finite and ≥ 0", c.Mu)
	case !(c.Tol >= 0 && c.Tol <= math.MaxFloat64):
		return fmt.Errorf("throughput: Completion: Tol = %v, want finite and ≥ 0", c.Tol)
	}
	return nil
}

// or returns v, or def if v is zero.
func or[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Estimate matches a new job to a reference from its profile: observed[j]
// is the job's normalized throughput in column j (beside reference j), for
// each profiled j. Unless all c columns were profiled, the job's row is
// completed by probabilistic matrix factorization of the (n+1)×c matrix A
// of the reference rows and the partial row, with U (n+1)×k and V c×k:
//
//	min over U, V of  Σ_observed (A_ij − u_i·v_j)² + μ·(‖U‖² + ‖V‖²).
//
// Alternating least squares from N(0, 1) factors solves exactly for every
// u_i, then every v_j, until the Completion's Tol or Iterations. The
// reference rows count as observed in full, zeros included. The completed
// entries are clipped to [0, 1] after dividing A by max(1, largest entry),
// which changes nothing for Gavel's data and prevents overflow.
//
// Match is the reference nearest to the completed row in cosine distance
//
//	d(a, b) = 1 − a·b / (‖a‖·‖b‖),
//
// a zero vector being at distance 1 from a non-zero one and 0 from
// another zero one; ties go to the reference nearest in Euclidean
// distance, then to the lowest index, so a row equal to a reference's
// matches it.
//
// Estimate reports an invalid r (see [Reference.Validate]), no
// observations, or the lowest index out of range or with a negative or
// non-finite value. It is deterministic and safe for concurrent use.
func (r Reference) Estimate(observed map[int]float64) (Estimate, error) {
	if err := r.Validate(); err != nil {
		return Estimate{}, err
	}
	row, seen, err := r.profile(observed)
	if err != nil {
		return Estimate{}, err
	}
	if len(observed) < len(r.Pair[0]) {
		if err := r.complete(row, seen); err != nil {
			return Estimate{}, err
		}
	}
	e := Estimate{Row: row}
	e.Match, e.Distance = nearest(r.Pair, row)
	e.beside = slices.Clone(r.Pair[e.Match])
	e.partner = make([]float64, len(r.Pair))
	for j, p := range r.Pair {
		e.partner[j] = math.NaN()
		if e.Match < len(p) {
			e.partner[j] = p[e.Match]
		}
	}
	return e, nil
}

// profile returns the partial row and its mask, checking observed in
// index order so that the error names the lowest bad index.
func (r Reference) profile(observed map[int]float64) ([]float64, []bool, error) {
	n := len(r.Pair[0])
	if len(observed) == 0 {
		return nil, nil, errors.New("throughput: Estimate: no observations")
	}
	keys := make([]int, 0, len(observed))
	for j := range observed {
		keys = append(keys, j)
	}
	slices.Sort(keys)
	row, seen := make([]float64, n), make([]bool, n)
	for _, j := range keys {
		v := observed[j]
		switch {
		case j < 0 || j >= n:
			return nil, nil, fmt.Errorf("throughput: Estimate: observed index %d out of range [0, %d)", j, n)
		case !(v >= 0 && v <= math.MaxFloat64):
			return nil, nil, fmt.Errorf("throughput: Estimate: observed[%d] = %v, want finite and non-negative", j, v)
		}
		row[j], seen[j] = v, true
	}
	return row, seen, nil
}

// complete fills the unobserved entries of row, clipped to [0, s] as
// Gavel clips them to [0, 1]. The fit sees the values divided by
// s = max(1, largest value), which leaves Gavel's data (at most 1)
// unchanged and keeps larger ones from overflowing.
func (r Reference) complete(row []float64, seen []bool) error {
	n, c := len(r.Pair), len(r.Pair[0])
	s := max(1, slices.Max(row))
	for _, p := range r.Pair {
		s = max(s, slices.Max(p))
	}
	a := make([][]float64, n+1)
	mask := make([][]bool, n+1)
	all := slices.Repeat([]bool{true}, c)
	for i := range a {
		src, m := row, seen
		if i < n {
			src, m = r.Pair[i], all
		}
		a[i], mask[i] = make([]float64, c), m
		for j, v := range src {
			a[i][j] = v / s
		}
	}
	x, err := r.Completion.factor(a, mask)
	if err != nil {
		return err
	}
	for j, v := range x {
		if !seen[j] {
			row[j] = s * min(max(v, 0), 1)
		}
	}
	return nil
}

// factor runs alternating least squares on the observed entries of a and
// returns the last row of UVᵀ.
func (c Completion) factor(a [][]float64, mask [][]bool) ([]float64, error) {
	k := or(c.Rank, defaultRank)
	mu, tol := or(c.Mu, defaultMu), or(c.Tol, defaultTol)
	rows, cols := len(a), len(a[0])
	rng := rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15))
	u, v := make([]float64, rows*k), make([]float64, cols*k)
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	at, maskT := transpose(a), transpose(mask)
	prev := product(u, v, k, rows, cols)
	for range or(c.Iterations, defaultIterations) {
		if !solveRows(u, v, a, mask, k, mu) || !solveRows(v, u, at, maskT, k, mu) {
			return nil, errors.New("throughput: Estimate: completion failed")
		}
		x := product(u, v, k, rows, cols)
		done := dist(x, prev)/float64(rows*cols) < tol
		prev = x
		if done {
			break
		}
	}
	last := prev[(rows-1)*cols:]
	for _, x := range last {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("throughput: Estimate: completion diverged")
		}
	}
	return last, nil
}

// solveRows sets each row i of dst (k values) to the ridge solution
//
//	(Σ_j src_j src_jᵀ + μI)⁻¹ Σ_j a_ij src_j  over the observed j,
//
// reporting false if a system is not positive definite. Rows observed
// alike share one Cholesky factorization: all reference rows do.
func solveRows(dst, src []float64, a [][]float64, mask [][]bool, k int, mu float64) bool {
	chol := make(map[string]blas64.Triangular)
	key := make([]byte, len(a[0]))
	for i, row := range a {
		for j, m := range mask[i] {
			key[j] = 0
			if m {
				key[j] = 1
			}
		}
		t, ok := chol[string(key)]
		if !ok {
			if t, ok = gram(src, mask[i], k, mu); !ok {
				return false
			}
			chol[string(key)] = t
		}
		b := dst[i*k : (i+1)*k]
		clear(b)
		for j, x := range row {
			if mask[i][j] {
				for p, f := range src[j*k : (j+1)*k] {
					b[p] += x * f
				}
			}
		}
		lapack64.Potrs(t, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: b})
	}
	return true
}

// gram returns the Cholesky factor of Σ_j src_j src_jᵀ + μI over the
// observed j.
func gram(src []float64, mask []bool, k int, mu float64) (blas64.Triangular, bool) {
	g := blas64.Symmetric{Uplo: blas.Upper, N: k, Stride: k, Data: make([]float64, k*k)}
	for p := range k {
		g.Data[p*k+p] = mu
	}
	for j, m := range mask {
		if !m {
			continue
		}
		f := src[j*k : (j+1)*k]
		for p, fp := range f {
			for q := p; q < k; q++ {
				g.Data[p*k+q] += fp * f[q]
			}
		}
	}
	return lapack64.Potrf(g)
}

// product returns UVᵀ, rows×cols, row-major.
func product(u, v []float64, k, rows, cols int) []float64 {
	x := make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			var s float64
			for p := range k {
				s += u[i*k+p] * v[j*k+p]
			}
			x[i*cols+j] = s
		}
	}
	return x
}

// dist returns the Euclidean distance between a and b.
func dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

func transpose[T any](a [][]T) [][]T {
	t := make([][]T, len(a[0]))
	for j := range t {
		t[j] = make([]T, len(a))
		for i := range a {
			t[j][i] = a[i][j]
		}
	}
	return t
}

// nearest returns the index of the row of pair nearest to x in cosine
// distance, ties broken by Euclidean distance and then index, and the
// distance.
func nearest(pair [][]float64, x []float64) (int, float64) {
	best, dBest, eBest := 0, math.Inf(1), math.Inf(1)
	for i, p := range pair {
		d, e := cosine(p, x), dist(p, x)
		if d < dBest || d == dBest && e < eBest {
			best, dBest, eBest = i, d, e
		}
	}
	return best, dBest
}

// cosine returns the cosine distance of a and b, clamped to [0, 2]. Each
// vector is first divided by its largest magnitude (which leaves the
// distance unchanged) so that no product overflows.
func cosine(a, b []float64) float64 {
	sa, sb := maxAbs(a), maxAbs(b)
	switch {
	case sa == 0 && sb == 0:
		return 0
	case sa == 0 || sb == 0:
		return 1
	}
	var ab, aa, bb float64
	for i := range a {
		x, y := a[i]/sa, b[i]/sb
		ab += x * y
		aa += x * x
		bb += y * y
	}
	// sqrt(aa·aa) == aa exactly, so a row's distance to itself is 0.
	return min(max(1-ab/math.Sqrt(aa*bb), 0), 2)
}

func maxAbs(a []float64) float64 {
	var m float64
	for _, x := range a {
		m = max(m, math.Abs(x))
	}
	return m
}

// Beside returns the estimated normalized throughput of the job when it
// shares an accelerator with reference j, Pair[Match][j]; Gavel multiplies
// it by the job's isolated throughput. Beside returns NaN if j is out of
// range or e is the zero Estimate.
func (e Estimate) Beside(j int) float64 { return at(e.beside, j) }

// Partner returns the estimated normalized throughput of reference j when
// it shares an accelerator with the job, Pair[j][Match]. For two estimated
// jobs a and b, Gavel uses a.Beside(b.Match) and b.Beside(a.Match).
// Partner returns NaN if j is out of range or e is the zero Estimate.
func (e Estimate) Partner(j int) float64 { return at(e.partner, j) }

func at(s []float64, j int) float64 {
	if j < 0 || j >= len(s) {
		return math.NaN()
	}
	return s[j]
}

// EMA is an exponential moving average of measured throughputs, Gavel's
// online update of an estimate after each round:
//
//	Value ← α·m + (1 − α)·Value.
//
// Set Value to a prior estimate before the first measurement, or leave it
// 0 for none: a zero Value with N = 0 is replaced by the first measurement.
type EMA struct {
	// Alpha is the weight α of a new measurement; values outside (0, 1]
	// (including 0 and NaN) mean 0.5.
	Alpha float64
	// Value is the current estimate.
	Value float64
	// N counts the measurements taken.
	N int
}

// Observe folds the measurement m into the average and returns the new
// Value. A negative or non-finite m is ignored, so that one bad reading
// cannot poison the average; a failed round measures 0.
func (e *EMA) Observe(m float64) float64 {
	if !(m >= 0 && m <= math.MaxFloat64) {
		return e.Value
	}
	a := e.Alpha
	if !(a > 0 && a <= 1) {
		a = defaultAlpha
	}
	if e.N == 0 && e.Value == 0 {
		e.Value = m
	} else {
		e.Value = a*m + (1-a)*e.Value
	}
	e.N++
	return e.Value
}

// Failures counts a job's consecutive failed micro-tasks; Gavel drops a job
// after 5.
type Failures struct {
	// Limit is the number of consecutive failures that drops the job;
	// values ≤ 0 mean 5.
	Limit int
	// N counts the consecutive failures so far.
	N int
}

// Fail records a failure and reports whether the job should be dropped:
// whether N has reached the Limit.
func (f *Failures) Fail() (drop bool) {
	f.N++
	limit := f.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	return f.N >= limit
}

// Succeed records a success, which resets the count.
func (f *Failures) Succeed() { f.N = 0 }
