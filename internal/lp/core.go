package lp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	gonumlp "gonum.org/v1/gonum/optimize/convex/lp"
)

// Why gonum hangs, and what core does about it.
//
// gonum's lp.Simplex (optimize/convex/lp/simplex.go, the loop in the
// unexported simplex) enters the column of most negative reduced cost
// (Dantzig's rule) and, when the minimum ratio xb_i/|d_i| of that column is
// ≤ 0 (a degenerate step), calls replaceBland. That function takes the
// first column, in the current order of its nonbasic list, whose reduced
// cost is below −1e-14, and, if that column's step is 0 too, the first
// zero-ratio row, by position in its basic list, that keeps the basis well
// conditioned. Every swap permutes both lists, so this is not Bland's rule,
// which orders by variable index, and has none of its guarantee against
// cycling. The loop
// has no iteration limit and no context, and gonum's phase 1
// (findInitialBasic) runs the same loop on a private copy of A.
//
// The fuzz input hang-purego-agnostic (TestSimplexDegenerateGavel) is a
// heterogeneity-agnostic max-min program, all throughputs 1, whose second
// stage is degenerate at nearly every vertex. The old Simplex first solved
// it, then failed to certify the optimum (gonum wrongly found the LP for
// its duals infeasible) and retried on a form with rows scaled to 1 and an
// extra row Σx + s = M. There gonum's phase 2 cycles forever: its Dantzig
// column (34) has ratio 0 at every iteration, so replaceBland picks the
// pivot, column 1 one time and column 0 the next (the two halves of one
// job's allocation, which the program's symmetry makes interchangeable),
// and the two bases alternate without the objective moving
// (TestSimplexGuardStopsCycling runs that form under the guard).

// core removes degeneracy instead of changing the pivoting rule, which
// gonum does not expose. It solves the problem with b replaced by
//
//	b̃ = b + A·v,   v_j = ε·ρ_j,  ρ_j ∈ [1, 2) pseudo-random and fixed,
//
// that is the problem with every bound x_j ≥ 0 relaxed to x_j ≥ −v_j
// (substitute x ← x + v). This perturbation of the right-hand side is
// generic: a basic solution x_B = B⁻¹b̃ has component k equal to
// (B⁻¹b)_k + v_{B_k} + Σ_{j∉B} (B⁻¹A_j)_k·v_j, an affine function of v in
// which v_{B_k} has coefficient 1, so it vanishes only on a hyperplane of v,
// which pseudo-random ρ misses. No basic solution is then degenerate, in
// phase 1 (artificial columns do not break this: B⁻¹A has full row rank)
// and in phase 2, and ε (1e-7 of the scaled data, whose largest b̂ and
// entries of Â are about 1) is far above the round-off of x_B. Every gonum
// pivot then has a ratio > 0 and an entering reduced cost < −tol, so it
// lowers the objective strictly, no basis can recur, and gonum ends after
// finitely many pivots, on Dantzig's rule alone. Unlike perturbing each
// b_i on its own, b + A·v is a relaxation: x + v is feasible for b̃ whenever
// x is feasible for b, so a feasible problem stays feasible, equality rows
// included, and phase 1 proves infeasibility outright.
//
// gonum returns x only, not its basis; but with no degeneracy its final
// basis is exactly the support of x̃ (nonbasic values are exactly 0, basic
// ones > 0). core recovers it, completes it if round-off zeroed a basic
// value, and recomputes x_B = B⁻¹b for the unperturbed b and the duals
// y = B⁻ᵀc_B. Reduced costs do not depend on b, so B stays dual feasible;
// if x_B ≥ 0 too (up to a relative 1e-9, see violations), B is optimal for
// the original problem and x_B, y are its exact primal and dual solutions. If the perturbation moved
// the optimum to a vertex that is infeasible without it (a feasible region
// thinner than ε in some direction), a few dual simplex pivots from B
// restore feasibility (dualCleanup).
//
// Termination: gonum ends on its own for the reason above. As a safety net
// against round-off defeating the argument, every gonum call runs under a
// guardedMatrix (guard.go), which stops it after about gonumIterations
// pivots or when the context is done. core never lets gonum run its own
// phase 1 (which the guard could not see). An attempt makes at most four
// gonum calls (phase 1, phase 2 and at most two restarts) and at most three
// dual cleanups of at most dualCleanupPivots pivots each, and there are
// len(coreAttempts) attempts; every other loop is over the rows or columns.
// So Solve returns after a bounded amount of work on every input.

// coreAttempt is one way to run core: a perturbation size (0 for none) and
// the seed of ρ. Later attempts run only when earlier ones fail
// numerically (never, so far, outside TestSimplexEachAttempt): a larger
// perturbation with other ρ, then none at all, which relies on the
// restarts in attempt to break degeneracy and on the guard.
type coreAttempt struct {
	eps  float64
	seed uint64
}

var coreAttempts = []coreAttempt{{1e-7, 1}, {1e-5, 2}, {0, 0}}

const (
	phase1Tol = 1e-11 // gonum's reduced-cost tolerance in phase 1 (costs 0 and 1)
	phase2Tol = 1e-10 // the same in phase 2, against the largest |ĉ_j|, which is about 1
	dualTol   = 1e-9  // reduced costs at least −dualTol certify optimality
	primalTol = 1e-9  // a basic value is negative if it moves a row by more (see violations)
	infeasTol = 1e-7  // a violation beyond this (CLP's primal tolerance) is infeasibility
	// infeasNoise·noise(x_B) (1e-9·max(1, |x_B|∞)) is the least violation
	// that can prove infeasibility, whatever its rows.
	infeasNoise = 1e3
)

// errNotDualFeasible reports a basis that gonum's answer does not make
// optimal for any right-hand side.
var errNotDualFeasible = fmt.Errorf("lp: simplex: basis is not dual feasible: %w", ErrNumerical)

// dualCleanupPivots bounds the pivots of dualCleanup.
func dualCleanupPivots(m, n int) int { return 2*(m+n) + 100 }

// core is a scaled standard form min cᵀx, Ax = b, x ≥ 0 whose matrix has
// full row rank and no zero column.
type core struct {
	ctx  context.Context
	m, n int
	a    []float64 // m×n, row-major
	b, c []float64
	// single[j] is the row of column j's only nonzero, or −1.
	single []int
}

func newCore(ctx context.Context, m, n int, a, b, c []float64) *core {
	k := &core{ctx: ctx, m: m, n: n, a: a, b: b, c: c, single: make([]int, n)}
	count := make([]int, n)
	for i := range m {
		for j, v := range a[i*n : (i+1)*n] {
			if v != 0 {
				count[j]++
				k.single[j] = i
			}
		}
	}
	for j, c := range count {
		if c != 1 {
			k.single[j] = -1
		}
	}
	return k
}

// solve returns an optimal x and the duals y of the rows.
func (k *core) solve() (x, y []float64, err error) {
	var last error
	for _, at := range coreAttempts {
		x, y, err = k.attempt(at)
		if err == nil || errors.Is(err, ErrInfeasible) || errors.Is(err, ErrUnbounded) || k.ctx.Err() != nil {
			return x, y, err
		}
		last = err
	}
	return nil, nil, last
}

// attempt runs phase 1 and phase 2 on the perturbed problem, then
// recovers and cleans up the basis.
func (k *core) attempt(at coreAttempt) (x, y []float64, err error) {
	m, n := k.m, k.n
	bt := slices.Clone(k.b)
	if at.eps > 0 {
		r := rand.New(rand.NewPCG(at.seed, 0x6c70))
		eps := at.eps * max(1, maxAbs(k.b))
		for j := range n {
			v := eps * (1 + r.Float64())
			for i := range m {
				bt[i] += k.a[i*n+j] * v
			}
		}
	}
	basis, err := k.phase1(bt, at.eps > 0)
	if err != nil {
		return nil, nil, err
	}
	if m == n {
		return k.dualCleanup(basis)
	}
	// When some of gonum's basic values are 0 (without perturbation, or if
	// round-off zeroed one), complete cannot know which zero columns were
	// basic, and its guess may not be dual feasible. gonum then restarts
	// from that guess B with b̃ + B·w, w > 0 pseudo-random: B is feasible
	// there (x_B grows by w) and, by the argument above, no basic solution is
	// degenerate, so the restart ends at a basis core recovers exactly.
	for round := 0; ; round++ {
		xt, err := safeSimplex(k.ctx, k.c, m, n, k.a, bt, phase2Tol, basis)
		switch {
		case errors.Is(err, gonumlp.ErrUnbounded):
			// The entering column had a reduced cost below −phase2Tol and
			// a ray of the perturbed problem is one of the original.
			return nil, nil, fmt.Errorf("lp: simplex: %w", ErrUnbounded)
		case xt == nil:
			return nil, nil, gonumError(err)
		}
		// With err != nil (gonum gave up on a pivot) xt is still a basic
		// point; dualCleanup decides whether it is optimal.
		if basis, err = k.complete(support(xt, n)); err != nil {
			return nil, nil, err
		}
		x, y, err = k.dualCleanup(slices.Clone(basis))
		if !errors.Is(err, errNotDualFeasible) || round == 2 {
			return x, y, err
		}
		r := rand.New(rand.NewPCG(at.seed, uint64(round)))
		eps := 1e-7 * max(1, maxAbs(k.b))
		for _, j := range basis {
			w := eps * (1 + r.Float64())
			for i := range m {
				bt[i] += k.a[i*n+j] * w
			}
		}
	}
}

// phase1 finds a basis feasible for b̃. Each row starts with a singleton
// column that is nonnegative there (a slack, usually) or, failing one, an
// artificial column ±e_i; gonum then minimizes the sum of the artificials.
// perturbed says b̃ is a relaxation of b (see above): then a positive
// optimum proves the problem infeasible.
func (k *core) phase1(bt []float64, perturbed bool) ([]int, error) {
	m, n := k.m, k.n
	basis := make([]int, m)
	for i := range basis {
		basis[i] = -1
	}
	for j, i := range k.single {
		if i >= 0 && basis[i] < 0 && bt[i]/k.a[i*n+j] >= 0 {
			basis[i] = j
		}
	}
	var art []int
	for i, j := range basis {
		if j < 0 {
			art = append(art, i)
		}
	}
	if len(art) == 0 {
		return basis, nil
	}
	n1 := n + len(art)
	a1 := make([]float64, m*n1)
	for i := range m {
		copy(a1[i*n1:i*n1+n], k.a[i*n:(i+1)*n])
	}
	c1 := make([]float64, n1)
	for q, i := range art {
		a1[i*n1+n+q] = 1
		if bt[i] < 0 {
			a1[i*n1+n+q] = -1
		}
		c1[n+q] = 1
		basis[i] = n + q
	}
	x1, err := safeSimplex(k.ctx, c1, m, n1, a1, bt, phase1Tol, basis)
	if x1 == nil || err != nil && !errors.Is(err, gonumlp.ErrBland) {
		return nil, gonumError(err)
	}
	var sum float64
	for _, v := range x1[n:] {
		sum += v
	}
	switch {
	case sum > primalTol*max(1, maxAbs(bt)):
		if err != nil {
			return nil, gonumError(err)
		}
		return nil, fmt.Errorf("lp: simplex: phase 1 ends with infeasibility %v: %w", sum, ErrInfeasible)
	case sum > 0 && perturbed:
		// No basic solution of the perturbed problem is degenerate, so an
		// artificial basic at a round-off level means trouble.
		return nil, fmt.Errorf("lp: simplex: phase 1 ends with infeasibility %v, at round-off level: %w", sum, ErrNumerical)
	}
	return k.complete(support(x1, n))
}

// gonumError wraps an error of gonum as ErrNumerical, unless it is already
// one of ours (the guard's).
func gonumError(err error) error {
	switch {
	case err == nil:
		return fmt.Errorf("lp: simplex: gonum returned no point: %w", ErrNumerical)
	case errors.Is(err, ErrTimeLimit), errors.Is(err, ErrNumerical),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("lp: simplex: gonum: %v: %w", err, ErrNumerical)
}

// support returns the columns j < n where x is positive.
func support(x []float64, n int) []int {
	var s []int
	for j, v := range x[:n] {
		if v > 0 {
			s = append(s, j)
		}
	}
	return s
}

// complete extends the independent columns s to a basis: a set of m
// independent columns, singleton columns tried first (they keep the basis
// well conditioned). It orthogonalizes each candidate against the columns
// taken so far (Gram-Schmidt, twice for stability).
func (k *core) complete(s []int) ([]int, error) {
	m, n := k.m, k.n
	if len(s) > m {
		return nil, fmt.Errorf("lp: simplex: %d basic columns for %d rows: %w", len(s), m, ErrNumerical)
	}
	if len(s) == m {
		return s, nil
	}
	var q [][]float64
	in := make([]bool, n)
	add := func(j int, tol float64) bool {
		v := make([]float64, m)
		var n0 float64
		for i := range m {
			v[i] = k.a[i*n+j]
			n0 += v[i] * v[i]
		}
		for range 2 {
			for _, u := range q {
				var d float64
				for i := range m {
					d += u[i] * v[i]
				}
				for i := range m {
					v[i] -= d * u[i]
				}
			}
		}
		var n1 float64
		for _, x := range v {
			n1 += x * x
		}
		if n1 <= tol*tol*n0 {
			return false
		}
		n1 = math.Sqrt(n1)
		for i := range v {
			v[i] /= n1
		}
		q = append(q, v)
		in[j] = true
		return true
	}
	basis := make([]int, 0, m)
	for _, j := range s {
		if !add(j, 1e-12) {
			return nil, fmt.Errorf("lp: simplex: basic columns are dependent: %w", ErrNumerical)
		}
		basis = append(basis, j)
	}
	for _, singles := range [2]bool{true, false} {
		for j := range n {
			if len(basis) == m {
				return basis, nil
			}
			if !in[j] && (k.single[j] >= 0) == singles && add(j, 1e-6) {
				basis = append(basis, j)
			}
		}
	}
	if len(basis) < m {
		return nil, fmt.Errorf("lp: simplex: cannot complete a basis: %w", ErrNumerical)
	}
	return basis, nil
}

// factor returns the LU factorization of the basis matrix.
func (k *core) factor(basis []int) (*mat.LU, error) {
	m, n := k.m, k.n
	bm := mat.NewDense(m, m, nil)
	for c, j := range basis {
		for i := range m {
			bm.Set(i, c, k.a[i*n+j])
		}
	}
	var lu mat.LU
	lu.Factorize(bm)
	if c := lu.Cond(); math.IsInf(c, 1) || math.IsNaN(c) || c > 1e15 {
		return nil, fmt.Errorf("lp: simplex: basis is singular (condition number %v): %w", c, ErrNumerical)
	}
	return &lu, nil
}

// solveLU solves B·x = rhs, or Bᵀ·x = rhs if trans.
func solveLU(lu *mat.LU, trans bool, rhs []float64) ([]float64, error) {
	var x mat.VecDense
	if err := lu.SolveVecTo(&x, trans, mat.NewVecDense(len(rhs), rhs)); err != nil {
		var cond mat.Condition
		if !errors.As(err, &cond) {
			return nil, fmt.Errorf("lp: simplex: %v: %w", err, ErrNumerical)
		}
	}
	return x.RawVector().Data, nil
}

// violations returns, for each basic variable, how much setting it to 0
// when it is negative changes the rows it is in: the largest
// |a_ik·x_k| / (|b_i| + Σ_j |a_ij·x_j|) over its rows i, the relative change
// of row i's activity. A tolerance on that, rather than on x_k itself, lets
// a row whose terms are all tiny next to the rest of the problem (like
// 9.99e11·X ≥ t with t ≈ 1, whose scaled right-hand side is 6e-11) hold as
// exactly as any other. Negatives above −noise(xb) count as round-off
// everywhere: at a degenerate vertex a row can have b_i = 0 and all its
// terms 0, and then round-off alone would look like a total violation.
func (k *core) violations(basis []int, xb []float64) []float64 {
	m, n := k.m, k.n
	sig := make([]float64, m)
	noise := noise(xb)
	var rowMag []float64 // |b_i| + Σ_j |a_ij·x_j|, computed on demand
	for r, v := range xb {
		if v >= -noise {
			continue
		}
		if rowMag == nil {
			rowMag = make([]float64, m)
			for i := range m {
				rowMag[i] = math.Abs(k.b[i])
				for q, j := range basis {
					rowMag[i] += math.Abs(k.a[i*n+j] * xb[q])
				}
			}
		}
		j := basis[r]
		for i := range m {
			if a := k.a[i*n+j]; a != 0 && rowMag[i] > 0 {
				sig[r] = max(sig[r], math.Abs(a*v)/rowMag[i])
			}
		}
	}
	return sig
}

// noise is the size below which a negative basic value is round-off:
// 1e-12 of the largest, scaled, basic value or of 1.
func noise(xb []float64) float64 { return 1e-12 * max(1, maxAbs(xb)) }

// dualCleanup takes a basis B that gonum left dual feasible (all reduced
// costs ≥ −dualTol) and primal feasible for the perturbed b̃, and makes it
// primal feasible for b with the dual simplex method: while some basic
// value is negative (significantly: see violations), that variable leaves,
// and the entering column is the one whose reduced cost reaches zero first
// along the leaving row, so that the basis stays dual feasible. Usually x_B = B⁻¹b ≥ 0 already and no
// pivot is needed. Leaving and entering ties go to the smallest column
// index (Bland's rule for the dual simplex, which cannot cycle), and the
// loop makes at most dualCleanupPivots pivots in any case.
//
// It returns the basic solution x and the duals y.
func (k *core) dualCleanup(basis []int) (x, y []float64, err error) {
	m, n := k.m, k.n
	inBasis := make([]int, n)
	limit := dualCleanupPivots(m, n)
	for pivots := 0; ; pivots++ {
		if err := k.ctx.Err(); err != nil {
			return nil, nil, err
		}
		lu, err := k.factor(basis)
		if err != nil {
			return nil, nil, err
		}
		xb, err := solveLU(lu, false, k.b)
		if err != nil {
			return nil, nil, err
		}
		cb := make([]float64, m)
		for r, j := range basis {
			cb[r] = k.c[j]
		}
		y, err = solveLU(lu, true, cb)
		if err != nil {
			return nil, nil, err
		}
		for j := range inBasis {
			inBasis[j] = -1
		}
		for r, j := range basis {
			inBasis[j] = r
		}
		d := make([]float64, n) // reduced costs c − Aᵀy
		copy(d, k.c)
		for i := range m {
			if y[i] == 0 {
				continue
			}
			for j, v := range k.a[i*n : (i+1)*n] {
				d[j] -= v * y[i]
			}
		}
		for j, v := range d {
			if inBasis[j] < 0 && v < -dualTol {
				return nil, nil, fmt.Errorf("lp: simplex: reduced cost %v of column %d: %w", v, j, errNotDualFeasible)
			}
		}

		sig := k.violations(basis, xb)
		leave := -1
		for r, v := range sig {
			if v > primalTol && (leave < 0 || basis[r] < basis[leave]) {
				leave = r
			}
		}
		if leave < 0 {
			x = make([]float64, n)
			for r, j := range basis {
				x[j] = max(xb[r], 0)
			}
			return x, y, nil
		}
		if pivots == limit {
			return nil, nil, fmt.Errorf("lp: simplex: dual cleanup: %d pivots: %w", limit, ErrTimeLimit)
		}

		// Row leave of B⁻¹A: α = uᵀA with Bᵀu = e_leave.
		e := make([]float64, m)
		e[leave] = 1
		u, err := solveLU(lu, true, e)
		if err != nil {
			return nil, nil, err
		}
		alpha := make([]float64, n)
		for i := range m {
			if u[i] == 0 {
				continue
			}
			for j, v := range k.a[i*n : (i+1)*n] {
				alpha[j] += v * u[i]
			}
		}
		var big float64
		for j, v := range alpha {
			if inBasis[j] < 0 {
				big = max(big, math.Abs(v))
			}
		}
		tolA := 1e-9 * max(1, big)
		enter, best := -1, math.Inf(1)
		for j, v := range alpha {
			if inBasis[j] >= 0 || v >= -tolA {
				continue
			}
			if ratio := max(d[j], 0) / -v; ratio < best {
				enter, best = j, ratio
			}
		}
		if enter < 0 {
			// uᵀA ≥ 0 (within tolA) and uᵀb = x_leave < 0: no x ≥ 0 has
			// Ax = b (Farkas), unless the violation is within tolerance,
			// relative to its rows, or near round-off, against the whole
			// problem: a verdict of infeasibility needs both.
			if sig[leave] > infeasTol && -xb[leave] > infeasNoise*noise(xb) {
				return nil, nil, fmt.Errorf("lp: simplex: dual cleanup proves infeasibility %v: %w", xb[leave], ErrInfeasible)
			}
			x = make([]float64, n)
			for r, j := range basis {
				x[j] = max(xb[r], 0)
			}
			return x, y, nil
		}
		basis[leave] = enter
	}
}
