// Package bayes forecasts what an adaptive job will do next, with the
// Bayesian model of dynamic adaptation of Shockwave (Zheng et al., "Shockwave:
// Fair and Efficient Cluster Scheduling for Dynamic Adaptation in Machine
// Learning", NSDI'23), and holds the Gittins index over an empirical service
// distribution used by Tiresias (Gu et al., "Tiresias: A GPU Cluster Manager
// for Distributed Deep Learning", NSDI'19).
//
// # Forecast
//
// A job of E epochs changes its batch size as it trains; the K distinct batch
// sizes it can use are its regimes. The fraction of its epochs spent in each
// regime has a symmetric Dirichlet prior ([Prior]) of total mass E,
//
//	α_b = E/K,
//
// and after p completed epochs the posterior ([Dirichlet.Observe]) adds the
// number n_b of epochs seen in regime b: α'_b = α_b + n_b. The epochs seen
// are the p completed ones plus the one under way, whose batch size is
// already known, so Σ n_b = p+1 and Σ α' = E+p+1. The posterior is rebuilt
// from the counts every time; nothing is kept between calls.
//
// [Job.Remaining] turns it into a remaining runtime: the posterior-mean
// epochs r_b = E·α'_b/Σα' of each regime, less those already seen (but never
// below r_b's fractional part), R_b = r_b − min(n_b, ⌊r_b⌋), priced at the
// profiled epoch durations d̄_b and scaled so that the implied number of
// epochs left, Ê = max(⌊Σ R_b + 1⌋, E − p), is at most the known E − p:
//
//	R̂ = (Σ_b R_b·d̄_b)·(E − p)/Ê.
//
// Progress inside the next planning window is not forecast but taken from
// the past, at d̃ = Σ n_b·d̄_b/Σ n_b seconds per epoch ([Job.EpochMean]).
//
// # Gittins index
//
// For a job whose service S (for example GPU-seconds) follows the empirical
// distribution of past jobs ([NewService]) and which has attained a, the
// index for the quantum Δ is ([Service.Gittins])
//
//	G(a) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a],
//
// the chance of finishing within the next quantum per unit of service it is
// expected to use. Higher is served first.
//
// # Differences from the paper's code
//
//   - Remaining returns 0 for a finished job (p ≥ E); the paper's code
//     returns 1.0 as a sentinel.
//   - The regimes come from the caller, who derives them from the job's
//     adaptation rule (for example every doubling of the initial batch size
//     up to its cap); the paper's code takes the distinct batch sizes of the
//     job's full future schedule, so it knows in advance which regimes occur.
//   - Dirichlet.Sample draws its gammas in log space, so very small α (1e-300)
//     still give a vertex of the simplex rather than 0/0; when even the
//     logarithms underflow, all mass goes to the regime with the largest α.
//     The paper's code has no sampling; a plain Dirichlet draw returns NaN
//     there.
//   - Gittins is the textbook index. The Tiresias simulator counts a job that
//     finishes inside the quantum at its full size s instead of the service
//     s − a it still needs, which overestimates the expected service and
//     underestimates the index for a > 0; GittinsSimulator reproduces that
//     form (without the simulator's ×10⁶ scale) for parity. The index is
//     computed for any a with two binary searches and prefix sums instead
//     of being tabulated at the samples; SimulatorTable builds the
//     simulator's table (one entry per sample, at s_k − 1, with its
//     rounding and its bound on the last sample) for full parity.
//   - Invalid input is reported as an error wrapping ErrInvalid that names the
//     field.
package bayes
