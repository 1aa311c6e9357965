// Package throughput models how fast a training job runs: heterogeneous
// throughput tables (job × accelerator type, alone and co-located), and the
// iteration-time model of Pollux (Qiao et al., OSDI'21),
// T_iter = s·T_accum + (T_accum^γ + T_net^γ)^(1/γ), with its fitting.
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
package throughput
