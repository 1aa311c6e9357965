// Package efficiency models what a training example is worth: the gradient
// noise scale, the statistical efficiency of a batch size, and goodput =
// throughput × efficiency with its batch-size optimizer, as in Pollux (Qiao
// et al., "Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep
// Learning", OSDI'21). It is what a scheduler asks "how fast does this job
// progress on N nodes and K GPUs?".
//
// # Model
//
// A job starts with the global batch size M0 and has gradient statistics
// Grad: Sqr = |G|², the squared norm of the true gradient, and Var = tr Σ/M0,
// the variance of a gradient estimate from M0 examples. With the gradient
// noise scale φ = Var/Sqr · M0 (Grad.Noise) and S = M/M0,
//
//	GAIN(M)       = (Var + Sqr) / (Var/S + Sqr)          (AdaScale's gain ratio)
//	EFFICIENCY(M) = GAIN(M)/S = (φ + M0) / (φ + M)
//	GOODPUT(N, K, m, s) = THROUGHPUT(N, K, m, s) · EFFICIENCY(K·m·(s+1)),
//
// where THROUGHPUT is the throughput.Params model for K GPUs over N nodes,
// m examples per GPU per micro-step and s extra accumulation micro-steps.
// Efficiency is 1 at M0, falls towards M0/M when the noise vanishes (Var =
// 0) and is 1 everywhere when Sqr = 0. The zero Grad{} means "nothing
// measured yet" and, like the allocator's GradParams(0, 1) default, makes
// every batch fully efficient. Batches below M0 are outside the model.
//
// The speedup of a placement is the best goodput on it relative to the best
// goodput on a base placement (Speedup; the scheduler's base is (1, 1)):
//
//	SPEEDUP(N, K) = max goodput on (N, K) / max goodput on (N₀, K₀),  SPEEDUP(0, 0) = 0.
//
// # Optimize
//
// Goodput.Optimize follows the maintained library (adaptdl master, after PR
// #129): 50 global batch sizes log-spaced from max(M0, LocalMin·K) to
// MaxBatch are split into per-GPU micro-batches, the micro-batch is clamped
// into [LocalMin, LocalMax], and then evaluated; the best wins, the first of
// equals. (The OSDI'21 artifact instead scored out-of-range candidates as
// zero.) Two pitfalls of the original are guarded:
//
//   - MaxBatch exceeded: when LocalMin·K > MaxBatch the original searched
//     upward from LocalMin·K (K = 64, LocalMin = 64, MaxBatch = 1280 gave
//     4096); Optimize refuses such a placement instead, and never returns a
//     batch above MaxBatch except the smallest whole split reaching M0 (128
//     on 3 GPUs: 129). Candidates that clamping to LocalMin pushes above
//     MaxBatch (with accumulation, LocalMin on several micro-steps) are
//     skipped.
//   - Efficiency assertion: the original asserted M ≥ M0 and failed when
//     LocalMax < M0 on one GPU without accumulation; Optimize skips every
//     candidate below M0 and refuses if none is left.
//
// # Gradient noise scale
//
// Estimator measures Grad during training as Pollux's GradientNoiseScale
// does. From the C ≥ 2 micro-batch gradients g_i of one optimizer step
// (C = replicas × micro-steps) and their average ḡ,
//
//	|G|²    ≈ (C·‖ḡ‖² − mean‖g_i‖²) / (C−1),
//	tr Σ/M0 ≈ (mean‖g_i‖² − ‖ḡ‖²) · S/(C−1),
//
// which are unbiased, then smoothed with bias-corrected exponential moving
// averages of decay 0.999^S per step. A job with one gradient per step (one
// replica, no accumulation) differences consecutive steps instead (C = 2,
// twice the scale); this path is biased, since the true gradient moves
// between the two steps, and the averages restart when the job returns to
// the unbiased path.
package efficiency
