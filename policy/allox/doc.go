// Package allox schedules jobs for the least total completion time on
// heterogeneous GPUs, as AlloX (Le et al., EuroSys'20) does in the versions
// of Gavel (Narayanan et al., OSDI'20) and Shockwave (Zheng et al., NSDI'23):
// non-preemptively, by a min-cost matching of the longest-waiting jobs to
// the free GPUs and their places in each GPU's queue.
//
// Import it for its side effect to register "allox" with package policy:
//
//	import _ "github.com/dlsched/dlsched/policy/allox"
//
// # The matching
//
// A job j that runs p-th from last on a GPU, taking q_j, delays itself and
// the p−1 jobs after it by q_j, so a schedule's total completion time is
// Σ_j p_j·q_j: the classic reduction of R‖ΣC_j to min-cost bipartite
// matching of jobs to (GPU, position) pairs. On heterogeneous GPUs q
// depends on the GPU's type k,
//
//	q_jk = (StepsTotal_j − StepsDone_j) / Throughput_jk,
//
// and online each job also carries the time d_j = Now − Arrival_j it has
// already waited, so the cost of j at position p on GPU w is
//
//	c_j(w, p) = g_j·p·q_{j,k(w)} + d_j,
//
// g_j = 1 in the paper, and the matching's total cost is the total job
// completion time of the considered jobs, from their arrivals. d_j is the
// same in every column of row j, so it changes the objective
// (Decision.Objective) but not the matching. The job in the highest
// position on each GPU runs first and starts now; AlloX decides again when a
// job arrives or finishes, so the rest of the plan is never used and
// Decision.Wake is zero. Only the ⌈α·m⌉ longest-waiting of the m waiting
// jobs are matched, AlloX's fairness knob. The solver is
// placement.AssignContext, the Hungarian method, in time O(n²·c) for n
// jobs and c (worker, position) columns. A round whose cost matrix would
// exceed MaxCells cells (about 512 MiB) fails with an error naming the
// bound; lower α to match fewer jobs.
//
// AlloX is clairvoyant: the matching needs each waiting job's StepsTotal. A
// job that already runs (Job.Placement) keeps its GPUs until it finishes.
//
// # Jobs left out, and jobs of unknown length
//
// The snapshot is screened with policy.Screen: a job that is invalid or can
// never fit is left out of the round, with its reason, in the Decision's
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole fails. AlloX also leaves out an elastic job without a GPU count and
// one whose GPU count no type it can run on holds, since it runs every job
// on the GPUs it asks for.
//
// A waiting job whose length is unknown (StepsTotal zero) is not left out:
// with no processing time to rank it by, it counts as longer than every job
// whose length is known, so it comes last on any GPU, and it starts on the
// GPUs the matching leaves free, longest-waiting first, on the type that
// needs the fewest servers. A running job of unknown length keeps its GPUs
// like any other.
//
// # Two rules for gangs
//
// AlloX's paper and Gavel's code schedule one-GPU jobs only. The
// configuration's "rule" picks how a g-GPU job is scheduled:
//
//   - "queues" (the default, [AlloX]): the job holds g of the matched
//     GPUs' queues, costs g·p·q at position p, and runs to completion once
//     it starts, as AlloX does for one-GPU jobs.
//   - "shockwave" ([Shares], composed with Gavel's round mechanism by
//     policy.Rounds): Shockwave's simulator's rule. The job first on a
//     GPU gets the time share 1/g there, so the mechanism runs it a 1/g
//     fraction of the rounds; a job keeps its shares only while they sum
//     to 1, so every multi-GPU job competes again at each decision, and
//     can be preempted. On Shockwave's 120-job trace this rule gives the
//     paper's AlloX row (makespan and average JCT within 3 %), where the
//     default rule (α = 1) gives 0.82× its average JCT and 10.8 % of jobs
//     unfair against its 27.5 %.
//     dlsched compare selects it, with α = 0.2, for Shockwave's workloads.
//
// # Differences from the paper's code
//
//   - Gangs. Gavel's AlloX accepts only one-GPU jobs; Shockwave's grants a
//     g-GPU job the time share 1/g of one GPU. Here a g-GPU job costs
//     g·p·q + d at position p of a GPU on whose type it can start now: it
//     holds g GPUs, so it delays g queues rather than one. The jobs that
//     come first on their GPU then start in increasing GPU-time g·q on that
//     type (ties: longer wait, then ID), each on g free GPUs of that type
//     taken by placement.Gangs.Place (fewest servers); one that no longer
//     fits waits for the next decision. For one-GPU jobs every first job
//     fits and this is AlloX exactly; with gangs the first of them in that
//     order always fits, so something starts whenever a job can.
//
//   - The α filter keeps ⌈α·m⌉ jobs, never fewer than the free GPUs (Gavel
//     keeps ⌊α·m⌋, with the same floor), so that no GPU idles for want of
//     candidates; and m counts only the waiting jobs that could start now,
//     on a type where their throughput is positive and enough GPUs are free.
//     Gavel counts every waiting job and gives a zero throughput a tiny
//     positive value, so a job could be "started" on a type it cannot use.
//
//   - Fewer positions. Gavel gives each of the F free GPUs all n positions,
//     an n × F·n matrix (300 × 30,000 for 300 jobs on 100 GPUs). The optimum
//     fills each GPU's positions from 1 up, and an optimum over the first
//     P_w positions of every GPU w that leaves each P_w-th empty is an
//     optimum over all of them; so each GPU starts with ⌈n/F⌉+1 positions
//     and gets more only when it fills them. The objective is the same;
//     among equally good matchings the one chosen may differ.
//
//   - A running job whose placement cannot be kept (a server gone, GPUs
//     claimed twice, a type where its throughput is zero) waits again, with
//     a warning, rather than failing the round. Gavel detects running jobs
//     by an allocation that sums to exactly 1.
package allox
