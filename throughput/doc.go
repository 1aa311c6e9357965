// Package throughput models how fast a training job runs: heterogeneous
// throughput tables (job × accelerator type, alone and co-located), the
// iteration-time model of Pollux (Qiao et al., OSDI'21),
// T_iter = s·T_accum + (T_accum^γ + T_net^γ)^(1/γ), with its fitting, and
// the CPU and memory sensitivity of Synergy (Mohan et al., OSDI'22) with
// its optimistic profiling.
//
// # Model
//
// [Params] holds the seven parameters of the paper's PerfParams, in its
// order: α_c, β_c (compute), α_n, β_n (synchronisation across nodes),
// α_r, β_r (synchronisation within a node) and γ (overlap). For m examples
// per GPU and micro-step, K GPUs over N nodes and s extra accumulation
// micro-steps:
//
//	T_accum(m)  = α_c + β_c·m
//	T_net(N, K) = α_n + β_n·max(K−2, 1e-8)   if N > 1
//	            = α_r + β_r·max(K−2, 1e-8)   if N = 1 and K > 1
//	            = 1e-8 + 1e-8·max(K−2, 1e-8) if K = 1
//	T_optim     = (T_accum^γ + T_net^γ)^(1/γ)
//	T_iter      = s·T_accum + T_optim
//	throughput  = K·m·(s+1) / T_iter  examples per second
//
// γ = 1 adds compute and communication; γ → ∞ overlaps them completely.
//
// # Fitting
//
// [Fit] follows fit_perf_params of the paper's code (adaptdl goodput.py).
// It minimises [Loss],
//
//	RMSE_i(log T_accum(m_i) − log AccumTime_i)
//	  + RMSE_i(log T_optim(N_i, K_i, m_i) − log OptimTime_i)
//	  + 1e-3·(γ−1)² + 1e-2·((β_n/α_n)² + (β_r/α_r)²),
//
// two RMSEs of log times (relative errors, not squared before they are
// added), a prior towards little overlap and one towards optimistic
// scaling. The bounds are α, β ∈ [1e-8, ∞) ([MinParam]) and
// γ ∈ [1, 10] ([MinGamma], [MaxGamma]); the start is the paper's
// (0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001).
//
// Parameters the samples cannot identify are pinned (removed from the
// optimisation), as in the paper's code; all four rules are applied:
//
//  1. only one distinct local batch: α_c = mean(AccumTime)/2;
//  2. no sample with N > 1: α_n = β_n = 1e-8;
//  3. no sample with N = 1 and K > 1: α_r = β_r = 1e-8;
//  4. no sample with K > 2: β_n = β_r = 1e-8.
//
// After the fit, if no sample spans several nodes, the paper's prior that
// inter-node synchronisation is at least 10 % slower than intra-node
// synchronisation applies: α_n = max(α_n, 1.1·α_r) and
// β_n = max(β_n, 1.1·β_r).
//
// # Differences from the paper's code
//
//   - The paper uses scipy's L-BFGS-B with box bounds and autograd
//     gradients. Here the bounds come from a reparametrisation,
//     p = 1e-8 + e^u for the α/β and γ = 1 + 9·sigmoid(v), and an
//     unconstrained L-BFGS (gonum's optimize) with analytic gradients. A
//     bound is approached but never reached by a fitted parameter; pinned
//     ones sit exactly on it.
//   - Because γ = 1.001 lies where the sigmoid is flat, Fit also starts
//     from γ = 2 and from a point scaled to the measured times, and keeps
//     the fit with the lowest loss. Fit is deterministic.
//   - Samples with the same placement and local batch are grouped
//     (their squared log errors summed exactly through their mean and
//     spread), which makes the loss cheaper but not different.
//   - The paper's code rebinds the module-global numpy to autograd's
//     during the fit, which is not thread-safe; Fit has no global state
//     and is safe for concurrent use.
//   - Fit validates its input and reports the first bad sample and field.
//
// # CPU and memory sensitivity
//
// [Sensitivity] is Synergy's (Mohan et al., OSDI'22) model of a job's
// appetite for CPU cores and memory: its throughput on a grid of cores
// and GB per GPU, relative to a reference, in Synergy the
// GPU-proportional share of a server (3 cores and 62.5 GB per GPU on a
// 24-core, 500-GB, 8-GPU server), whose cell is then 1. A g-GPU job with
// c cores and m GB per GPU uses g·c cores and g·m GB.
//
// [Sensitivity.At] reads the grid bilinearly. For c_i ≤ c ≤ c_{i+1} and
// m_j ≤ m ≤ m_{j+1}, with S the grid's speedups,
//
//	u    = (c − c_i)/(c_{i+1} − c_i),  v = (m − m_j)/(m_{j+1} − m_j)
//	S_i  = S[i][j] + v·(S[i][j+1] − S[i][j])
//	At   = S_i + u·(S_{i+1} − S_i)
//
// so At is the grid's value on its points and a grant a rounding error
// below a point keeps (nearly) that point's value. Outside the grid each
// coordinate is clamped to the axis's nearest end (NaN to the first).
// For a grid non-decreasing along both axes At is (up to rounding)
// non-decreasing in both arguments and stays within the grid's range.
//
// [Sensitivity.Ideal] is the job's ideal demand: the greatest speedup on
// the grid, at the fewest cores and then the least memory that reach it
// (res18: 9 cores and 62.5 GB per GPU, speedup 2.4; alexnet: 12 cores and
// 125 GB, 2.94). [Sensitivity.Clip] limits the ideal demand to at most c
// cores and m GB per GPU, for a job whose ideal exceeds a server:
//
//	Clip(c, m) = (min(c_ideal, c), min(m_ideal, m), At(min(c_ideal, c), min(m_ideal, m)))
//
// Synergy's code (jobs/workload.py) instead interpolates linearly between
// the proportional cell (speedup 1) and the ideal along the CPU axis,
// ignoring the rows in between: 1 + (S_ideal − 1)·(c − c_prop)/(c_ideal −
// c_prop). Clip reads the profiled rows: alexnet limited to 6 cores per
// GPU (a 4-GPU job on a 24-core server) gets the 6-core row's 1.75, not
// 1 + 1.94·3/9 ≈ 1.647.
//
// # Optimistic profiling
//
// Synergy profiles a job empirically along the CPU axis only, with its
// whole dataset cached, and predicts the memory axis: its DNN-aware cache
// (MinIO) makes the number of cache hits per epoch, and so the epoch
// time, a function of the cached fraction. [Sweep] is the profiler's CPU
// sweep: from all the job's cores down, halving the cores after a point
// within 10 % of the previous one's epoch time and otherwise giving up
// one core per GPU, until fewer than one core is left. The first point,
// which has no previous one, is followed by a halving.
//
// [Profile] holds the sweep's epoch times T(c) per profiled cores per
// GPU c, the rates B(c) at which those cores read cached data, the
// dataset's size D (GB) and the storage bandwidth W (MB/s).
// [Profile.EpochTime] predicts the epoch time of a g-GPU job with m GB of
// cache per GPU, the slower of computing and reading the data:
//
//	cache       = min(D, g·m)
//	epoch(c, m) = max(T(c), cache/B(c) + (D − cache)·1024/W)
//
// [Profile.Sensitivity] turns the predictions into a [Sensitivity]:
// throughput 1/epoch(c, m) on the grid of the profiled cores and the
// given memory sizes, divided by its interpolated value at the reference
// so that At there is 1.
//
// # Estimation
//
// Gavel (Narayanan et al., OSDI'20) estimates how fast a new job runs
// beside others from a partial profile. A [Reference] holds the
// normalized co-location matrix of n reference job types on one
// accelerator type; [Reference.Estimate] completes the job's profiled row
// by probabilistic matrix factorization (rank 10, μ = 10⁻², alternating
// least squares) and matches it to the reference nearest in cosine
// distance. The job's normalized throughput beside reference j is then
// [Estimate.Beside](j) = Pair[match][j], and j's beside the job
// [Estimate.Partner](j) = Pair[j][match]; Gavel multiplies them by the
// isolated throughputs. Measured rounds refine an estimate through an
// [EMA] with α = 0.5; [Failures] drops a job after 5 consecutive failed
// micro-tasks.
//
// Differences from Gavel's code (scheduler/throughput_estimator.py,
// scheduler.py, and pmf_solve of the matrix_completion package):
//
//   - None in the layout: a Reference may be square (one type) or, as
//     Gavel's, one block of columns per accelerator type side by side,
//     matched once (workload.Colocation does so).
//   - pmf_solve starts from unseeded random factors and stops once
//     ‖X − X_prev‖_F/(rows·cols) < 10⁻³, after about 3 sweeps on Gavel's
//     matrices, so its match depends on the start. Here the start is
//     seeded and Tol is 10⁻⁵ (20 to 40 sweeps). Leaving each of Gavel's
//     26 job types out and profiling it beside 40 % of the rest, the mean
//     absolute error of Beside drops from 0.148, 0.091, 0.100 (v100,
//     p100, k80) to 0.128, 0.084, 0.087, against 0.183, 0.094, 0.109 for
//     the column means. Completion{Tol: 1e-3} restores Gavel's rule.
//   - Gavel picks a random reference for a zero row and the first of
//     equal distances; here ties go to the reference nearest in Euclidean
//     distance, then to the lowest index.
//   - Gavel's _profile_jobs reads profiled values at reference-relative
//     offsets of the full matrix, the wrong columns when there are fewer
//     references than job types; here they are passed by index.
//   - Gavel's EMA blends even the first measurement with the prior (its
//     check old_throughput != INFINITY compares a list with a number);
//     [EMA] takes the first measurement as is when it has no prior.
package throughput
