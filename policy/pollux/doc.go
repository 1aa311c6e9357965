// Package pollux schedules elastic training jobs as Pollux (Qiao et al.,
// OSDI'21) does: it co-adapts every job's GPU count and batch size to
// maximize a fair mean of the jobs' goodput speedups, by genetic search over
// the jobs × nodes allocation matrix.
//
// Importing the package registers "pollux" (Pollux), "pollux.optimus"
// (Optimus, a greedy baseline that adds GPUs one at a time to the job that
// gains most, at a fixed batch size) and "pollux.fixed" (every job at its
// own fixed GPU count and batch size, placed in arrival order).
//
// # The search
//
// An individual is an integer matrix A[j][n], the GPUs job j holds on node
// n. Each generation, binary tournaments pick parents; with probability 0.9
// a child takes its mate's rows for the jobs before a random point; every
// child is mutated (a row reset to the current allocation with probability
// 0.1, a row shrunk with probability 0.1, and a grow step that raises
// counts on nodes with free GPUs, favouring nodes the job already uses) and
// repaired, in the paper's order: interference avoidance (a node hosts at
// most one job that spans several nodes), each job's GPU bound (trimming
// random nodes), node capacity in priority order (least attained service
// first), and the smallest GPU count. Parents and children compete for the
// next population, the best surviving. The fitness is the p-mean of the
// speedups (see Pollux).
//
// # Differences from the paper's code
//
//   - The paper's search is NSGA-II with a second objective, cluster
//     utility, that only shapes the Pareto front; the pick is the individual
//     with the best fitness. Here the search is single-objective with
//     (μ+λ) survival, which keeps that best individual by construction.
//   - Speedups are relative to the job's fair share, as in the paper's
//     simulator, but the fair share is capped at what the job may use, and
//     the dominant-share factor, the same for every GPU-only job, is left
//     out.
//   - The restart factor applies to jobs that run now; the paper's code
//     also discounts starting a waiting job, which with an age of zero
//     would forbid ever starting a job in its first round.
//   - ProfiledGPUs of zero means no bound from profiling, so that a caller
//     that does not track it is not limited to one GPU; the paper's code
//     starts every job at one GPU and doubles from there.
//   - The cluster may have several accelerator types: each job uses one
//     type at a time, among those where its Throughput is positive. The
//     paper assumes one type.
//   - The search stops between generations, and between evaluations of the
//     first one, when ctx is done.
package pollux
