// Package pollux schedules elastic training jobs as Pollux (Qiao et al.,
// OSDI'21) does: it co-adapts every job's GPU count and batch size to
// maximize a fair mean of the jobs' goodput speedups, by genetic search over
// the jobs × nodes allocation matrix.
//
// Importing the package registers "pollux" (Pollux), "pollux.optimus"
// (Optimus, a greedy baseline that adds GPUs a worker at a time to the job
// that gains most per GPU, at a fixed batch size) and "pollux.fixed" (every job at its
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
// # Workers
//
// A job's GPUs come in workers of Job.GPUsPerWorker GPUs (zero: one), each
// on one node, so every count A[j][n] is a multiple of the job's worker
// size w: the grow mutation redraws a count among the multiples of w that
// fit the node, only on nodes with a worker's GPUs free; repair rounds
// every count down to whole workers (rows from the warm start or a
// crossover included) and trims node capacity in whole workers; the
// smallest count is max(MinGPUs, w) and the largest is rounded down to a
// multiple of w; the cold seed hands out a worker at a time. An elastic
// job's GPU count thus moves by whole workers within [MinGPUs, MaxGPUs].
// Optimus adds a worker at a time and Fixed places whole workers. With
// workers of one GPU every result is what it was before worker sizes
// existed.
//
// Pollux reallocates running jobs by design: a job whose row changes is
// restarted, which the binder sees as a Migrate (same GPU count elsewhere)
// or Resize change, and which the restart factor r_j prices.
//
// # Speed
//
// A round costs population × generations children, each mutated, repaired
// and evaluated; the work per child is kept small without changing a
// decision (the same seed, snapshot and State give the same decision as a
// plain implementation of the search):
//
//   - A job's term of the fitness depends only on its GPU count, whether
//     it spans one node or several (the only distinction the goodput model
//     makes) and whether it restarts, so each job memoizes its terms.
//   - The genetic algorithm is the package's own, over a population kept
//     best first: a binary tournament draws two indices and the lower
//     wins, two random numbers per parent. eaopt, which the package used
//     before (up to commit 1b153f2), drew one per individual for every
//     parent, cloned every survivor with a random ID and ran each
//     generation on a goroutine: 46 % of the CPU time of a whole 160-job
//     `dlsched compare --cpuprofile` run at that commit. With the same
//     operators the search is as good: TestSearchQuality's small search
//     averages a fitness of 1.03474 over 400 seeds (`go test -run
//     TestSearchQuality -v` prints it), and its loop gave 1.03467 over
//     2,000 seeds with eaopt at commit 1b153f2; BenchmarkPollux at 64 GPUs
//     took 33 ms against 48 ms (the two commits' benchmarks, one run).
//   - Clones share their matrix until one changes it, and the matrices a
//     generation leaves behind are reused, found by block number: a search
//     allocates about two populations' worth, not a matrix per child. The
//     genomes a generation drops lend their structs to the next children,
//     and only the children are sorted before they merge into the sorted
//     parents.
//   - With the default p = −1 the mean's power is a division (math.Pow's
//     own result, bit for bit).
//   - Repair scans each row once, listing its nonzero cells for the later
//     steps, and records the GPUs used per node and the fitness, which the
//     next mutation and Evaluate read instead of recounting; the grow
//     mutation visits only nodes with GPUs free; scratch vectors are
//     reused.
//
// # Jobs left out, and jobs without Elastic facts
//
// Every policy of the package screens the snapshot with policy.Screen: a job
// that is invalid or can never fit is left out of the round, with its
// reason, in the Decision's Unscheduled, and the others are scheduled; only
// a snapshot malformed as a whole fails. An elastic job is also left out
// when no accelerator type it can use holds its least GPU count
// (max(MinGPUs, 1); under pollux.fixed its own GPUs when it gives them) in
// whole workers. A job left out has no row in the next warm start, and
// joins as a new job when it comes back.
//
// A job without Elastic facts is not left out: all three policies treat it
// as a rigid job of its requested GPUs, with linear scaling and perfect
// statistical efficiency. Pollux gives it exactly its GPUs or none, with a
// speedup of 1 when it runs; Optimus gives it exactly its GPUs; Fixed places
// it like any other job. It gets no batch size in its Grant. Likewise an
// elastic job whose Perf is not fitted scales linearly, and one without
// gradient statistics is fully efficient at every batch size.
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
