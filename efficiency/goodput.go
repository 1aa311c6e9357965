package efficiency

import (
	"math"

	"github.com/dlsched/dlsched/throughput"
)

// Grad are a job's gradient statistics: Sqr = |G|², the squared norm of the
// true gradient, and Var = tr Σ / M0, the variance of the gradient estimate
// at the initial batch size M0. The zero value (nothing measured yet) makes
// every batch size fully efficient, as does any Sqr of zero.
type Grad struct {
	Sqr float64 `json:"sqr"`
	Var float64 `json:"var"`
}

// Noise returns the gradient noise scale in examples, φ = Var/Sqr · m0
// (+Inf when Sqr is zero).
func (g Grad) Noise(m0 float64) float64 {
	if g.Sqr <= 0 {
		return math.Inf(1)
	}
	return g.Var / g.Sqr * m0
}

// Goodput is a job's goodput model: its throughput model, its gradient
// statistics and its initial batch size M0, which defines both the unit of
// progress and the batch at which efficiency is 1.
type Goodput struct {
	Perf throughput.Params
	Grad Grad
	// BatchSize is M0, the initial global batch size; it must be positive.
	BatchSize int
}

// Efficiency returns the statistical efficiency of a global batch of m
// examples, the progress per example relative to a batch of M0:
//
//	EFFICIENCY(m) = (φ + M0) / (φ + m),  φ = Var/Sqr · M0,
//
// which is 1 at m = M0, falls towards M0/m as the noise vanishes, and is 1
// everywhere when the noise dominates (Sqr = 0). Batches below M0 are
// outside the model; Optimize never proposes one.
func (g Goodput) Efficiency(m float64) float64 {
	m0 := float64(g.BatchSize)
	phi := g.Grad.Noise(m0)
	if math.IsInf(phi, 1) {
		return 1
	}
	if phi+m <= 0 {
		return 1
	}
	return (phi + m0) / (phi + m)
}

// Gain returns the progress one optimizer step with a batch of m examples
// makes, in steps at M0 (AdaScale's gain ratio): Efficiency(m)·m/M0.
func (g Goodput) Gain(m float64) float64 {
	return g.Efficiency(m) * m / float64(g.BatchSize)
}

// Evaluate returns the goodput, in examples of M0-equivalent progress per
// second, of replicas GPUs over nodes nodes with m examples per GPU per
// micro-step and accum extra micro-steps:
//
//	GOODPUT = THROUGHPUT(N, K, m, s) · EFFICIENCY(K·m·(s+1)).
func (g Goodput) Evaluate(nodes, replicas int, m float64, accum int) float64 {
	t := g.Perf.Throughput(nodes, replicas, m, accum)
	if t == 0 {
		return 0
	}
	return t * g.Efficiency(float64(replicas)*m*float64(accum+1))
}

// Limits bound the configurations Optimize considers. The zero value fixes
// the global batch at M0 with no per-GPU bounds and no accumulation.
type Limits struct {
	// MaxBatch is the largest global batch; zero means M0.
	MaxBatch int
	// LocalMin and LocalMax bound the per-GPU batch of one micro-step; zero
	// means 1 and MaxBatch.
	LocalMin, LocalMax int
	// Accumulation allows gradient accumulation: several micro-steps per
	// optimizer step, for batches larger than the GPUs hold at once.
	Accumulation bool
}

// Config is a goodput-optimal configuration for a placement.
type Config struct {
	Goodput float64
	// LocalBatch is the per-GPU batch of one micro-step, m.
	LocalBatch int
	// Accum is the number of extra micro-steps per optimizer step, s.
	Accum int
}

// Batch returns the global batch size K·m·(s+1) of c on replicas GPUs.
func (c Config) Batch(replicas int) int {
	return replicas * c.LocalBatch * (c.Accum + 1)
}

// Split divides a global batch over replicas GPUs into the fewest
// micro-steps whose per-GPU batch fits localMax (zero means no limit): s
// extra micro-steps of m examples per GPU, rounding m up so that
// K·m·(s+1) ≥ batch. It is how a job runs a batch that a policy fixed.
func Split(batch, replicas, localMax int) (m, s int) {
	local := float64(batch) / float64(max(replicas, 1))
	if localMax > 0 {
		s = max(int(math.Ceil(local/float64(localMax)-1e-8))-1, 0)
	}
	m = max(int(math.Ceil(local/float64(s+1)-1e-8)), 1)
	return m, s
}

// gridPoints is the number of candidate global batch sizes Optimize tries,
// log-spaced between the smallest and the largest allowed.
const gridPoints = 50

// Optimize returns the configuration with the highest goodput for replicas
// GPUs over nodes nodes, and false if none is allowed. It tries 50 global
// batch sizes M spaced geometrically from max(M0, LocalMin·K) to MaxBatch,
// splits each into s+1 micro-steps of m examples per GPU (s = 0 without
// accumulation, and with one GPU and no accumulation m = M0), clamps m into
// [LocalMin, LocalMax] and keeps the best; the first of equal candidates
// wins. This is the maintained library's semantics (clamp, then evaluate),
// with two guards the paper's code lacks:
//
//   - The batch never exceeds MaxBatch: when LocalMin·K > MaxBatch the
//     placement is refused, where the paper's code searched upward and could
//     return a batch several times MaxBatch. A rounded-up m is rounded down
//     again if that keeps the batch at least M0; only when no whole split
//     does (M0 = MaxBatch = 128 on 3 GPUs) is the smallest batch above M0
//     used, 129 here. A candidate that clamping to LocalMin still pushes
//     above MaxBatch (with accumulation: m raised to LocalMin on several
//     micro-steps) is skipped; on one GPU the forced second micro-step is
//     dropped first if that fits.
//   - The batch is never below M0, where efficiency is undefined: such
//     candidates are skipped, where the paper's code failed an assertion.
func (g Goodput) Optimize(nodes, replicas int, l Limits) (Config, bool) {
	if nodes <= 0 || replicas < nodes || g.BatchSize <= 0 {
		return Config{}, false
	}
	m0 := g.BatchSize
	maxBatch := max(l.MaxBatch, m0)
	lo := max(l.LocalMin, 1)
	hi := l.LocalMax
	if hi <= 0 {
		hi = maxBatch
	}
	if hi < lo {
		return Config{}, false
	}
	k := replicas
	minBatch := max(m0, lo*k)
	if minBatch > maxBatch {
		return Config{}, false
	}
	const eps = 1e-8
	// place clamps m into [lo, hi] for s extra micro-steps and applies the
	// two guards; it reports false if the candidate must be skipped.
	place := func(m, s int) (int, bool) {
		m = min(max(m, lo), hi)
		steps := k * (s + 1)
		if m*steps > maxBatch && m-1 >= lo && (m-1)*steps >= m0 {
			m--
		}
		if m*steps < m0 {
			return 0, false
		}
		// Above MaxBatch only as the smallest whole split reaching M0.
		if m*steps > maxBatch && m > (m0+steps-1)/steps {
			return 0, false
		}
		return m, true
	}
	var best Config
	found := false
	for _, total := range geomspace(float64(minBatch), float64(maxBatch), gridPoints) {
		local := total / float64(k)
		s := 0
		m := 0
		ok := false
		if l.Accumulation {
			s0 := int(math.Ceil(local/float64(hi)-eps)) - 1
			s = s0
			if k == 1 && local > float64(m0)+eps {
				s = max(s, 1) // two micro-batches at least, to measure the noise
			}
			m, ok = place(int(math.Ceil(local/float64(s+1)-eps)), s)
			if !ok && s != s0 {
				// The forced second micro-step would exceed MaxBatch.
				s = s0
				m, ok = place(int(math.Ceil(local/float64(s+1)-eps)), s)
			}
		} else if k == 1 {
			m, ok = place(m0, 0)
		} else {
			m, ok = place(int(math.Ceil(local-eps)), 0)
		}
		if !ok {
			continue
		}
		gp := g.Evaluate(nodes, k, float64(m), s)
		if !found || gp > best.Goodput {
			best, found = Config{Goodput: gp, LocalBatch: m, Accum: s}, true
		}
	}
	return best, found
}

// geomspace returns n points from a to b spaced evenly in log space, with
// the ends exactly a and b.
func geomspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	la, lb := math.Log10(a), math.Log10(b)
	for i := range out {
		out[i] = math.Pow(10, la+(lb-la)*float64(i)/float64(n-1))
	}
	out[0], out[n-1] = a, b
	return out
}
