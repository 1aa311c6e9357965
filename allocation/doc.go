// Package allocation is the vocabulary of GPU-cluster scheduling decisions:
// accelerator types, servers and clusters, the Allocation a policy returns,
// and the linear-programming layer in which Gavel (Narayanan et al., OSDI'20)
// writes its policies as optimization problems over the allocation matrix.
//
// # The allocation matrix
//
// For jobs j and accelerator types k, X_jk ∈ [0,1] is the fraction of
// wall-clock time job j should spend on GPUs of type k. A job running on s_j
// GPUs at once holds s_j GPUs while it runs, so the base constraints are
//
//	X_jk ≥ 0
//	Σ_k X_jk ≤ 1              (a job runs at most all of the time)
//	Σ_j s_j X_jk ≤ N_k        (no more GPUs of type k than the cluster has)
//
// and a job's effective throughput is the linear expression
//
//	y_j(X) = Σ_k T_jk X_jk
//
// where T_jk is its throughput on type k. Program builds such problems:
// a policy adds objectives and constraints over these expressions and solves.
//
// Co-located pairs (space sharing) get their own shares: a pair {i, j} that
// shares GPUs of type k for a fraction P_ijk of the time counts once against
// the capacity, with max(s_i, s_j) GPUs, and against both jobs' time.
//
// Pair shares are priced, not listed up front: with every pair of equal-size
// jobs allowed there is a column per pair and type (278,443 pairs at 1024
// jobs), but an optimal basis has no more basic columns than the LP has
// rows, a few thousand. Each solve starts without them (or with those a warm
// start, or MaximizeMin's first stage, used), prices every column left out
// with the rows' duals y (reduced cost c_v − yᵀa_v over the pair's two time
// rows, its type's capacity row and the expressions it appears in), adds a
// batch of the most favourable and re-solves from the last basis, until none
// is favourable. The last duals are then feasible for the whole LP, so by LP
// duality the restricted optimum is the whole LP's (TestColumnsEqualWholeLP
// compares both): exact, not a heuristic. gavel.las-ss at 1024 jobs went
// from 138–243 s to 1.9–2.0 s, at 256 jobs from 0.9–1.5 s to 0.3–0.5 s
// (BenchmarkScaling, both in one run on a loaded two-core machine; Gavel's
// paper reports 296 s at 1024).
//
// # Classes of interchangeable jobs
//
// NewClasses builds the program over classes of jobs a policy sees alike: row
// j stands for count_j jobs, each of which gets X_j, so capacity reads
// Σ_j count_j s_j X_jk ≤ N_k. When a policy's program is symmetric in such
// jobs, as max-min fairness is, averaging an optimum over each class keeps it
// optimal, so the program over classes loses nothing and its size follows
// the classes, not the jobs.
//
// # Warm starts
//
// A policy re-solves its program every round, while between two rounds the
// jobs barely change. Program.Remember gives a program a Warm, which keeps
// the optimal bases of its solves by job and type, so that the next round's
// program starts where this one's ended. With CLP this cuts gavel.las on
// 2048 jobs, after one arrival or departure, from 60 to 13 ms per decision
// (gavel BenchmarkWarm, docs/performance.md); results equal a cold solve's
// within the engine's tolerance, not bit for bit (gavel TestWarmEqualsCold).
// Both engines take a start: CLP and the pure-Go sparse simplex.
//
// # Cold starts
//
// MaximizeMin's two stages, with no warm start to take, start from bases
// built from the prices of the capacity rows rather than from the slack
// basis, where the program is one expression per job over that job's own
// shares (gavel.las, gavel.ftf, gavel.makespan and the first level of
// gavel.water-filling, without space sharing). With the capacity rows
// priced, the jobs part ways: each picks its cheapest shares (stage one)
// or its most profitable ones (the tie-break) alone. Cutting planes over
// the handful of prices, and in stage one Newton's method over t, find the
// prices of the optimum; each job's choice at those prices makes the
// basis, and the engine pivots from there. The optimum is the LP's, as
// from any start (TestCrashSameOptimum compares both, and checks the
// prices' dual value against the tie-break's optimum). It matters where
// most jobs end at t*, as with equal weights: stage one over 2048 such jobs
// took 20.3 ms instead of 257 with CLP, and 27.4 ms instead of 411 with
// the pure-Go engine (BenchmarkCrash); the policies' figures are beside it
// in docs/performance.md (gavel's BenchmarkLASEqualWeights, and
// BenchmarkPolicy for gavel.ftf and gavel.makespan).
//
// Two cases need less than the whole LP. Where capacity does not hold t*
// back, because a job's own reach does (weighted gavel.las, where the
// heaviest jobs bound t*), the jobs' cheapest plans at their reach fit
// every type, and that proves t* without an LP: the Result's Engine is
// then "reach". And the tie-break's prices decide every job but those
// near a tie: the tie-break fixes the others at their plans and solves
// the LP of the few left, over the capacity the rest leave, then prices
// the fixed jobs at that LP's duals and brings in any whose plan no
// longer earns the most, until none does. The result is then optimal for
// the whole LP by duality (TestMarginSameOptimum starts it from random
// prices as well, and compares it with the slack start). Where more than
// a quarter of the jobs stay near a tie (equal weights), the whole LP is
// solved from the crash basis.
//
// # Differences from Gavel's code
//
// A job is never given time on a type where its throughput is zero or where
// the type has fewer GPUs than the job needs at once: Gavel's LPs allow both,
// and the round mechanism then silently wastes that time.
package allocation
