// Package gavel implements the heterogeneity-aware scheduling policies of
// Gavel (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies
// for Deep Learning Workloads", OSDI 2020) as linear programs over the
// allocation matrix X (see package allocation).
//
// Each policy type decides time shares. Registered ("gavel.las", …), it is
// composed with Gavel's round-based mechanism (policy.Rounds over
// placement.Mechanism), so that its decisions carry the next round's
// placement in whole workers and wake at the round's end, as every policy's
// do; the configuration keys "round_seconds" and "recompute_seconds" set the
// round and the least time between two LP solves (Gavel's simulator: 360 s
// and 1920 s). The bare types are for callers who place shares themselves.
//
// # Max-min fairness (least attained service)
//
// MaxMinFairness, registered as "gavel.las", solves
//
//	maximize_X  min_j  (s_j / w_j) · (Σ_k T_jk X_jk) / T^prop_j
//
// under the base constraints, where s_j is the job's GPU count, w_j its
// weight and T^prop_j = Σ_k T_jk N_k / Σ_k N_k its throughput on a
// GPU-count-weighted average GPU (the allocation that shares every type
// equally). The scale factor multiplies only the numerator, so the policy
// equalizes GPU-time-weighted normalized throughput; a job with weight w ends
// up with w times the normalized throughput of a weight-1 job when both are
// bottlenecked. The Decision's Objective is the optimal minimum t*.
//
// With Agnostic set ("gavel.las-agnostic"), throughputs are replaced by 1 on
// every type where the job can run, so T^prop_j = 1 and the policy equalizes
// weighted GPU time regardless of GPU type: the heterogeneity-agnostic
// baseline of the paper.
//
// # Water-filling
//
// WaterFilling ("gavel.water-filling", "gavel.water-filling-agnostic") is the
// leximin refinement of max-min fairness: jobs that are not bottlenecked keep
// rising until they hit a limit of their own. Each level costs one LP: the
// jobs to freeze are certified by the LP's duals (or by having reached their
// own maximum), where Gavel's code solves a MILP per level. While capacity
// is slack, jobs freeze one by one at their own maximum; a search finds a
// run of m such levels in O(log m) LPs.
//
// Hierarchical ("gavel.hierarchical") water-fills across tenants in
// proportion to their weights, and within each tenant by job weight
// ("fairness") or in arrival order ("fifo"), recomputing the per-job weights
// as jobs freeze, as Gavel does.
//
// # Throughput, cost and makespan
//
// MaxThroughput ("gavel.max-throughput") maximizes Σ_j y_j in raw steps per
// second. MinCost ("gavel.min-cost") maximizes Σ_j Σ_k T_jk X_jk / c_k for
// hourly prices c_k; with SLO ("gavel.min-cost-slo") each job with a
// deadline must also reach y_j ≥ R_j/(deadline_j − now), and when those
// constraints cannot all hold the program is solved without them and the
// Decision carries a warning. Makespan ("gavel.makespan", and
// "gavel.makespan-agnostic") minimizes max_j R_j/y_j exactly, as the single LP
// max u s.t. y_j ≥ R_j·u, where Gavel bisects to within 5 %.
//
// # Finish-time fairness
//
// FinishTimeFairness ("gavel.ftf", "gavel.ftf-agnostic") minimizes
// max_j ρ_j, the ratio of a job's finish time in the shared cluster to its
// finish time on an isolated 1/n share, by bisection over LPs to 1e-9
// relative. Its isolated-time account is policy state, kept in an exported,
// JSON-serializable FTFState.
//
// # Space sharing
//
// With SpaceSharing ("gavel.las-ss", "gavel.makespan-ss", "gavel.ftf-ss"),
// two jobs of equal GPU count that list each other in Job.Colocated may share
// GPUs: the pair gets its own share P_ck of type k, counted once against
// capacity and against both jobs' time, during which each runs at its
// co-located throughput (normalized by its own T^prop). Jobs without pair
// data are not paired, nor, with a warning, are jobs of unequal GPU counts.
// The program has O(pairs) variables, so only the pairs a scheduler lists
// cost anything, not all n² of Gavel's formulation.
//
// # FIFO
//
// FIFO ("gavel.fifo", "gavel.fifo-agnostic") is first-in-first-out, not a
// program: each job runs all the time on one type or waits (X_jk ∈ {0,1}).
// Jobs queue by arrival, ties by ID. Running jobs (non-empty Placement) first
// keep the type of their servers if it still has room and their throughput
// there is positive; a job that cannot keep its type rejoins the queue, with a
// warning. Then, in queue order, each job takes a type with enough free GPUs
// where it can run: the fastest for it (aware), or the one with the most free
// GPUs, ties by name (agnostic). Gavel intends a random type there, but its
// code uses a stale loop variable and puts every job on the alphabetically
// last type, beyond its capacity. As in Gavel's code, a job that fits nowhere
// blocks the jobs behind it unless Backfill is set; Preemptive ignores where
// jobs run now, as Gavel's aware FIFO does. The Decision's Objective is the
// number of jobs scheduled.
//
// # Jobs left out of a round
//
// Every policy screens the snapshot with policy.Screen: a job that is
// invalid or can never fit is left out, with its reason, in the Decision's
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole fails. Beyond Screen, a policy leaves out an elastic job without a
// GPU count (Gavel runs a job on the GPUs it asks for) and an elastic job
// whose GPU count no type it can run on holds. FinishTimeFairness and
// Makespan leave out a job whose length (StepsTotal) is unknown, since
// neither ρ_j nor R_j/y_j exists without it; FinishTimeFairness keeps such a
// job's isolated-time account as it was, to resume when the job comes back.
// MaxMinFairness and WaterFilling leave out a job whose weight is so small
// that s_j/w_j overflows. MinCost with SLO schedules a job with a deadline
// but no known length without a deadline constraint, and warns, as it does
// for a deadline that has passed.
//
// # Where this implementation differs from Gavel's code
//
// The max-min optimum pins only the bottleneck jobs; Gavel returns whatever
// interior point its solver reaches. Here the choice is canonical. After
// finding t*, a second LP keeps every job at or above t* (within 1e-9
// relative) and maximizes the sum of the jobs' terms, spending leftover
// capacity where it gains the most normalized throughput. Where that second
// program still has several optima (jobs tied in what a unit of leftover
// capacity adds to their term), the engine's vertex picks among them: the
// result is deterministic and independent of the order of Snapshot.Jobs, but
// may change if jobs are renamed, or with the warm start. gavel.las-agnostic
// fills tied jobs together instead (below).
//
// Interchangeable jobs, which have the same GPU count, weight and
// throughputs, get equal shares in gavel.las, gavel.water-filling (and their
// agnostic twins), gavel.max-throughput and gavel.min-cost (and min-cost-slo
// in a round where no job's deadline is a constraint): their programs have
// one row per class of such jobs, counted once per member against capacity
// and in the objectives (allocation.NewClasses). These programs are symmetric
// within a class and convex, so averaging any optimum over each class gives
// an optimum with the same objectives (TestClassesEqualJobs,
// TestThroughputClasses), and water-filling the same leximin levels
// (TestWaterFillingClasses). An LP vertex over the jobs would instead split a
// class's time unevenly, as the engine happened to pivot; Gavel's
// interior-point solver approaches the equal split, the centre of the optimal
// face. Gavel's generator draws its jobs from about 150 (template, scale
// factor, priority) classes, so the program no longer grows with the jobs: a
// whole gavel.las decision on 2048 generated jobs takes 6.42 ms instead of
// 77.7 ms with a row per job, and on 20,000 jobs 75.2 ms (BenchmarkGenerated,
// docs/performance.md).
//
// An agnostic program sees every type alike, so its optimum fixes only each
// job's total time x_j, and how the LP's vertex splits it across types
// depends on where the engine started: a warm start and a cold one gave
// allocations that differed by whole shares, and gavel.ftf-agnostic's
// average JCT in `dlsched compare` (seed 0) was 7.0 h cold and 13.9 h warm
// at commit 134cb8c, the last without this split.
// Every agnostic variant therefore splits each job's time across the types
// it can run on in proportion to their GPU counts, X_jk = x_j · N_k /
// Σ_l N_l, the split Gavel's documentation describes. Where that overfills a
// type (jobs that cannot run everywhere), each type's weight N_k is scaled
// by a_k ≤ 1, found by iterative proportional fitting; if no such split fits
// within 500 rounds (it fitted all 60 crowded clusters of
// TestSplitCanonical), the LP's own split stays. The split depends on the
// x_j alone (TestSplitCanonical), so warm and cold allocations agree
// wherever the x_j do: always, for every agnostic variant, in
// TestAgnosticWarmEqualsCold. Fitting only approaches a split that must keep
// a job off a type, as when the jobs that can run only on a set of types
// fill it: then each job is kept off such full sets that do not hold all
// its types, and fitted again (TestSplitFullSet).
//
// The agnostic variants of LAS, water-filling, makespan and FTF are not
// solved by LP (unless the cluster has more than 12 types). With every type
// alike, all their programs ask of the types is each job's GPU time D_j =
// s_j·x_j on its set of types T_j, and by Gale's supply–demand theorem such
// demands fit exactly when Σ_{T_j ⊆ S} D_j ≤ N(S) for every set S of types:
// 2^K − 1 constraints. A max-min program over terms β_j·x_j then has t* in
// closed form, the minimum over sets and over each job's x_j ≤ 1; and its
// tie-break, max Σ_j β_j·x_j, which weighs a job's GPU time by β_j/s_j, is
// solved by filling jobs greedily in decreasing β_j/s_j, as on any
// polymatroid. Jobs tied in β_j/s_j are filled together, their terms rising
// as one level until each reaches x_j = 1 or a full set: the leximin among
// them.
//
// In gavel.las-agnostic, β_j/s_j is 1/w_j times a constant, so with equal
// weights it allocates as gavel.water-filling-agnostic does
// (TestGPUTimeLeximin). Its LP, which finds the same t* and tie-break
// total (TestGPUTimeMatchesLP), would hand leftover time among tied jobs
// to whichever its vertex favoured, so a warm start and a cold one
// differed: 9.37 h and 9.33 h in `dlsched compare --policies
// gavel.las-agnostic` (seed 0, at commit 7856c55). A decision no longer
// depends on where an engine started.
// gavel.makespan-agnostic's program and each of gavel.ftf-agnostic's have
// the same form, with terms y_j/R_j and y_j·(ρD_j − t_j)/R_j, and are
// solved alike (TestGPUTimeMakespanFTF); there β_j/s_j depends on the job's
// length, so ties are rare. gavel.water-filling-agnostic is progressive
// filling: every job rises from 0 as one level, each stopping at x_j = 1 or
// a full set, which on these constraints is the leximin that its LPs find
// one level at a time (TestGPUTimeLeximin, with weights).
//
// A job never gets time on a type where its throughput is zero or whose GPU
// count is below the job's; Gavel's agnostic LP can give such time, which its
// mechanism then wastes. Jobs are ordered by ID internally, so the order of
// Snapshot.Jobs does not affect the result.
package gavel
