package bayes

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalid is wrapped by every error about bad input data.
var ErrInvalid = errors.New("bayes: invalid input")

// Job is what the forecast knows about one adaptive job. Regime b is the
// b-th batch-size regime of the job's adaptation rule; Observed and
// EpochSeconds are indexed by it.
type Job struct {
	Epochs int // E, the job's total epochs
	Done   int // p, epochs completed

	// Observed[b] = n_b is the number of epochs seen in regime b: the Done
	// completed epochs plus the epoch under way, whose batch size is already
	// known. So Σ n_b = p+1 while p < E. Fewer is allowed (an epoch whose
	// regime is unknown simply does not count).
	Observed []int

	// EpochSeconds[b] = d̄_b is the profiled duration of one epoch in
	// regime b, in seconds.
	EpochSeconds []float64
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Validate reports the first bad field of j, as an error wrapping ErrInvalid:
// Epochs < 1, Done outside [0, Epochs], no regimes, Observed and EpochSeconds
// of different lengths, a negative count, Σ Observed above min(Done+1,
// Epochs) (more epochs seen than have started or exist), or a duration that
// is not a finite positive number.
func (j Job) Validate() error {
	switch {
	case j.Epochs < 1:
		return invalid("epochs: %d, want ≥ 1", j.Epochs)
	case j.Done < 0:
		return invalid("done: %d is negative", j.Done)
	case j.Done > j.Epochs:
		return invalid("done: %d exceeds epochs %d", j.Done, j.Epochs)
	case len(j.Observed) == 0:
		return invalid("observed: no regimes")
	case len(j.Observed) != len(j.EpochSeconds):
		return invalid("observed has %d regimes, epoch_seconds has %d", len(j.Observed), len(j.EpochSeconds))
	}
	limit := min(j.Done, j.Epochs-1) + 1 // written so that it cannot overflow
	for b, n := range j.Observed {
		if n < 0 {
			return invalid("observed[%d]: %d is negative", b, n)
		}
	}
	left := limit
	for _, n := range j.Observed {
		if n > left {
			return invalid("observed: sum exceeds %d (done+1, at most epochs)", limit)
		}
		left -= n
	}
	for b, d := range j.EpochSeconds {
		if !(d > 0) || math.IsInf(d, 1) {
			return invalid("epoch_seconds[%d]: %v is not a finite positive number", b, d)
		}
	}
	return nil
}

// Posterior returns Prior(E, K).Observe(Observed), K = len(Observed). It does
// not validate j.
func (j Job) Posterior() Dirichlet {
	return Prior(j.Epochs, len(j.Observed)).Observe(j.Observed)
}

// Remaining returns the forecast remaining runtime R̂ of j in seconds. With
// the posterior α'_b = E/K + n_b,
//
//	r_b = E·α'_b/Σα'             posterior-mean epochs in regime b over the whole job
//	R_b = r_b − min(n_b, ⌊r_b⌋)  of which still to come (never below the fractional part)
//	Ê   = max(⌊Σ_b R_b + 1⌋, E − p)
//	R̂   = (Σ_b R_b·d̄_b)·(E − p)/Ê
//
// The last factor only shrinks the estimate so that its implied epoch count
// is at most the known E − p. Mathematically Σ_b R_b + 1 ≥ E − p whenever
// Σ n_b ≤ p+1, with equality when no count is capped by ⌊r_b⌋; the bound on
// Ê catches the floating-point sums that land just below it.
//
// R̂ = 0 once p ≥ E. R̂ is never negative or NaN, and at most
// (E − p)·max_b d̄_b; it is +Inf only if R̂ itself exceeds math.MaxFloat64. The error, if any, is
// that of Validate.
func (j Job) Remaining() (float64, error) {
	if err := j.Validate(); err != nil {
		return 0, err
	}
	rem, _, _ := j.remaining()
	return rem, nil
}

// remaining computes R̂ for a valid job and also returns the unclamped
// Σ R_b + 1 and the Ê used, for tests.
func (j Job) remaining() (rem, sumPlus1, eHat float64) {
	if j.Done >= j.Epochs {
		return 0, 0, 0
	}
	e := float64(j.Epochs)
	alpha := j.Posterior().Alpha
	total := 0.0
	for _, a := range alpha {
		total += a
	}
	rb := make([]float64, len(alpha))
	sumR := 0.0
	for b, a := range alpha {
		r := e * a / total
		rb[b] = r - math.Min(float64(j.Observed[b]), math.Floor(r))
		sumR += rb[b]
	}
	left := float64(j.Epochs - j.Done)
	sumPlus1 = sumR + 1
	eHat = math.Max(math.Floor(sumPlus1), left)
	// Σ R_b·d̄_b·(E−p)/Ê, with R_b/Ê < 1 taken first so that nothing
	// overflows unless R̂ itself does.
	cost := 0.0
	for b, d := range j.EpochSeconds {
		cost += rb[b] / eHat * d
	}
	return cost * left, sumPlus1, eHat
}

// EpochMean returns the mean epoch duration so far,
//
//	d̃ = Σ_b n_b·d̄_b / Σ_b n_b,
//
// the rate at which Shockwave assumes the job progresses inside the next
// planning window. With no epoch observed it is the plain mean of
// EpochSeconds (the prior's weights, which are equal). EpochMean returns NaN
// if j is invalid.
func (j Job) EpochMean() float64 {
	if j.Validate() != nil {
		return math.NaN()
	}
	var num, den, plain float64
	for b, d := range j.EpochSeconds {
		n := float64(j.Observed[b])
		num += n * d
		den += n
		plain += d
	}
	if den == 0 {
		return plain / float64(len(j.EpochSeconds))
	}
	return num / den
}
