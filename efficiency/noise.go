package efficiency

import "math"

// smoothing is the per-example-equivalent decay of the moving averages: a
// step with scale S = M/M0 decays them by smoothing^S.
const smoothing = 0.999

// minVar is the floor Grad puts under the variance estimate.
const minVar = 1e-6

// Estimator estimates a job's gradient statistics (Grad) from the gradients
// of its optimizer steps, as Pollux's GradientNoiseScale does: from the
// squared norms of C ≥ 2 micro-batch gradients g_i and of their average ḡ,
//
//	|G|²   ≈ (C·‖ḡ‖² − mean‖g_i‖²) / (C−1),
//	tr Σ/M0 ≈ (mean‖g_i‖² − ‖ḡ‖²) · S/(C−1),   S = M/M0,
//
// both smoothed by bias-corrected exponential moving averages with decay
// 0.999^S per step. With a single gradient per step (one replica, no
// accumulation) it differences consecutive steps instead, which is biased
// when the true gradient moves between them; the averages are reset when
// the job returns to the unbiased multi-gradient path.
//
// The zero value is ready to use and reports Grad{} until the first update.
// An Estimator is not safe for concurrent use.
type Estimator struct {
	sqrBiased float64   // moving average of |G|² before bias correction
	varBiased float64   // moving average of tr Σ/M0 before bias correction
	unbias    float64   // the weight both averages have accumulated
	biased    bool      // the last step took the single-gradient path
	prev      []float64 // the last single gradient, for differencing
	hasPrev   bool
	sum       []float64 // scratch for the mean gradient
}

// Observe records an optimizer step that averaged count micro-batch
// gradients (count = replicas × micro-steps): localSqr is the mean of their
// squared norms, totalSqr the squared norm of their average and scale =
// M/M0. It needs count ≥ 2 and skips the step otherwise, as it does when an
// input is not finite or scale is not positive. It is the unbiased path:
// if the previous update was differenced, the averages restart here.
func (e *Estimator) Observe(localSqr, totalSqr float64, count int, scale float64) {
	if count < 2 || !finite(localSqr, totalSqr, scale) || scale <= 0 {
		return
	}
	if e.biased {
		e.reset()
	}
	e.biased = false
	e.hasPrev = false
	e.update(localSqr, totalSqr, count, scale)
}

// ObserveDifferenced records a step with a single gradient (one replica, no
// accumulation) by differencing it with the previous step's: prevSqr and
// curSqr are the squared norms of the two gradients, meanSqr the squared
// norm of their mean, and scale = M/M0 of one step. It is Observe with
// localSqr = (prevSqr+curSqr)/2, totalSqr = meanSqr, count = 2 and twice
// the scale, on the biased path. Non-finite inputs skip the step.
func (e *Estimator) ObserveDifferenced(prevSqr, curSqr, meanSqr, scale float64) {
	if !finite(prevSqr, curSqr, meanSqr, scale) || scale <= 0 {
		return
	}
	e.biased = true
	e.update((prevSqr+curSqr)/2, meanSqr, 2, 2*scale)
}

// ObserveGradients records an optimizer step from its micro-batch gradient
// vectors, which must all have the same length, with scale = M/M0. Two or
// more gradients take the unbiased path of Observe. A single gradient is
// differenced with the single gradient of the previous step, if there was
// one, and kept (copied) for the next; the first single gradient after a
// multi-gradient step only marks the switch to the biased path (the
// averages are kept; only the return to the unbiased path restarts them).
// A step with a non-finite component, or a squared norm that overflows, is
// skipped entirely. It panics if the gradients differ in length.
func (e *Estimator) ObserveGradients(grads [][]float64, scale float64) {
	if len(grads) == 0 || !finite(scale) || scale <= 0 {
		return
	}
	n := len(grads[0])
	for _, g := range grads[1:] {
		if len(g) != n {
			panic("efficiency: ObserveGradients with gradients of different lengths")
		}
	}
	// A non-finite component makes a norm non-finite (squares cannot
	// cancel), so checking the norms checks every component.
	if len(grads) >= 2 {
		local, total := e.sqrNorms(grads)
		if finite(local, total) {
			e.Observe(local, total, len(grads), scale)
		}
		return
	}
	cur := grads[0]
	if e.hasPrev && len(e.prev) == n {
		local, total := e.sqrNorms([][]float64{e.prev, cur})
		if !finite(local, total) {
			return
		}
		e.update(local, total, 2, 2*scale)
	} else if sqr, _ := e.sqrNorms(grads); !finite(sqr) {
		return
	}
	e.biased = true
	e.prev = append(e.prev[:0], cur...)
	e.hasPrev = true
}

// Grad returns the current estimate, with Sqr = max(|G|², 0) and Var =
// max(tr Σ/M0, 1e-6), or Grad{} (efficiency 1 everywhere) before the first
// update.
func (e *Estimator) Grad() Grad {
	if e.unbias == 0 {
		return Grad{}
	}
	return Grad{
		Sqr: math.Max(e.sqrBiased/e.unbias, 0),
		Var: math.Max(e.varBiased/e.unbias, minVar),
	}
}

// Biased reports whether the last update took the single-gradient
// (differenced, biased) path.
func (e *Estimator) Biased() bool { return e.biased }

// Reset forgets every observation, leaving the zero value.
func (e *Estimator) Reset() {
	*e = Estimator{prev: e.prev[:0], sum: e.sum}
}

func (e *Estimator) reset() {
	e.sqrBiased, e.varBiased, e.unbias = 0, 0, 0
}

func (e *Estimator) update(local, total float64, count int, scale float64) {
	c := float64(count)
	sqr := (c*total - local) / (c - 1)
	vr := (local - total) * scale / (c - 1)
	if !finite(sqr, vr) {
		return
	}
	theta := math.Pow(smoothing, scale)
	e.sqrBiased = theta*e.sqrBiased + (1-theta)*sqr
	e.varBiased = theta*e.varBiased + (1-theta)*vr
	e.unbias = theta*e.unbias + (1 - theta)
}

// sqrNorms returns the mean squared norm of the vectors and the squared
// norm of their mean, summing into e.sum (kept to avoid allocating).
func (e *Estimator) sqrNorms(grads [][]float64) (local, total float64) {
	n := len(grads[0])
	if cap(e.sum) < n {
		e.sum = make([]float64, n)
	}
	sum := e.sum[:n]
	copy(sum, grads[0])
	for _, x := range grads[0] {
		local += x * x
	}
	for _, g := range grads[1:] {
		g = g[:n]
		for j, x := range g {
			local += x * x
			sum[j] += x
		}
	}
	inv := 1 / float64(len(grads))
	for _, x := range sum {
		x *= inv
		total += x * x
	}
	return local * inv, total
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
