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
// program starts where this one's ended, and the prices its max-min
// stages ended at (see below). gavel BenchmarkWarm times a decision after
// one arrival or departure both ways (docs/performance.md); results equal
// a cold solve's within the engine's tolerance, not bit for bit (gavel
// TestWarmEqualsCold). Both engines take a start: CLP and the pure-Go
// sparse simplex.
//
// # Max-min programs by their prices
//
// MaximizeMin's programs are mostly one expression per job over that job's
// own shares, with floor rows for the jobs water-filling froze (gavel.las,
// gavel.ftf, gavel.makespan, gavel.water-filling, without space sharing).
// With the capacity rows priced at λ rather than enforced, the jobs part
// ways: each picks its cheapest shares to reach t (stage one) or its most
// profitable ones at its floor (the tie-break) alone, and by LP duality
// the prices of the optimum make each job's choice optimal. Cutting planes
// over the handful of prices, and in stage one Newton's method over t,
// find them. Three uses follow, each exact, none a heuristic.
//
//   - Where capacity does not hold t* back, because a job's own reach does
//     (weighted gavel.las, where the heaviest jobs bound t*), the jobs'
//     cheapest plans at their reach fit every type, and that proves t*
//     without an LP: the Result's Engine is then "reach".
//   - The prices decide every job but those near a tie. So each stage fixes
//     the others at their plans (in stage one, shares affine in t) and
//     solves the LP of the few left over what capacity the rest leave, then
//     prices the fixed jobs at that LP's capacity duals and brings in those
//     whose plan is no longer their best, until none is: the result is then
//     optimal for the whole LP, by duality. On gavel.las's kind of
//     program at 2048 jobs the LPs hold 32 to 64 jobs instead of 2,048
//     (TestMarginFewJobs; TestMarginSameOptimum and TestMarginFloors start
//     from random prices as well, compare with the slack start, and check
//     every bottleneck stage one names with an LP of its own). These LPs
//     read the program's rows in place, and the whole LP is built only
//     where an engine must solve it (TestRestrictReadsInPlace).
//   - Where more than a quarter of the jobs stay near a tie, the whole LP
//     starts from a basis built from the prices instead of the slack basis
//     (crash; TestCrashSameOptimum), which saves the engine thousands of
//     pivots where most jobs end at t*, as with equal weights.
//
// Every result taken this way, or from a crash or warm basis, must hold
// each row of the program to 1e-7 of the row's size. The engines' own
// tolerances are absolute, and where t* is tiny beside the expressions'
// coefficients they left floors short by a relative 0.16 %; such a stage is
// solved again, whole, from the slack basis (TestWideRangeFloors).
//
// A warm program keeps the prices each stage ended at, and starts the next
// round's from them, with no search. Water-filling's levels after the
// first, whose floor rows change every level, take the engine from the
// last level's basis instead: from the last level's prices, the LPs of the
// jobs near a tie grew past a quarter of the jobs on most levels. Times
// are in docs/performance.md (gavel's BenchmarkLAS, BenchmarkWarm,
// BenchmarkLASEqualWeights and BenchmarkPolicy, allocation's
// BenchmarkCrash).
//
// # Differences from Gavel's code
//
// A job is never given time on a type where its throughput is zero or where
// the type has fewer GPUs than the job needs at once: Gavel's LPs allow both,
// and the round mechanism then silently wastes that time.
package allocation
