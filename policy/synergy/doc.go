// Package synergy divides a cluster's CPU cores and memory among the jobs a
// GPU policy runs by how sensitive each job is to them, following Synergy
// (Mohan et al., OSDI'22), instead of in proportion to GPUs.
//
// # Model
//
// A job's [throughput.Sensitivity] gives its relative throughput s(c, m)
// with c cores and m GB per GPU; the job makes Throughput·s(c, m) steps per
// second. On a server with G GPUs, C cores and M GB the proportional share
// of a g-GPU job is
//
//	(g, g·C/G cores, g·M/G GB)    e.g. (4, 12, 250 GB) on 8 GPUs, 24 cores, 500 GB
//
// and its ideal demand is g times the smallest grid cell reaching the
// grid's maximum ([throughput.Sensitivity.Ideal]), clipped to a whole
// server ([throughput.Sensitivity.Clip]); a job with more GPUs than a
// server has only its proportional share. A job without a Sensitivity
// counts as insensitive (s = 1): it gets its proportional share.
//
// # Rounds
//
// Every round (a 300 s lease, [DefaultLease]) the jobs are ordered by the
// GPU policy, [FIFO], [SRTF], [LAS] or [FTF], and the CPU and memory are
// divided again; running jobs keep their GPUs (lease extension, below). A
// job is considered only if its GPUs fit in the free GPUs of a type it can
// use (GPU backfilling); what the four allocators change is the CPU and
// memory attached to those GPUs:
//
//   - [Proportional] gives each job its proportional share.
//   - [Greedy] gives each job its ideal demand if GPUs can be found whose
//     servers still hold it, and otherwise skips the job for the round.
//   - [Tune] tries the ideal demand; if it does not fit and asks for more
//     than the proportional share, the proportional share; if that does
//     not fit either, it takes back, on the servers with free GPUs, what
//     placed jobs hold beyond their proportional share (jobs spanning the
//     fewest servers first, then those with the most CPU and memory per
//     GPU), and tries again. Since every GPU leaves its proportional share
//     behind once no job holds more, the jobs Tune runs are exactly those
//     Proportional runs, and none gets less than its proportional share.
//
// [Opt] is an upper bound, not a schedule. With y_jk the weight of
// configuration (c_k, m_k) of job j and w_jk its relative throughput, it
// solves
//
//	maximise   Σ_j Σ_k w_jk·y_jk
//	subject to Σ_k y_jk = 1, y_jk ≥ 0                          for every job
//	           Σ_j g_j Σ_k c_k·y_jk ≤ C,  Σ_j g_j Σ_k m_k·y_jk ≤ M   per GPU type
//
// over the configurations with w_jk at least the job's proportional
// throughput, then a fractional packing of the jobs at the resulting
// points onto the servers (an LP that splits jobs across servers in any
// fractions). Its decision grants each job the average of its
// configurations. Registered as "synergy.opt", it is composed with the round
// mechanism (policy.Rounds), which places the jobs' GPUs for the next round;
// the CPU and memory it grants are a bound, not checked per server, so the
// decision cannot be carried out as granted.
//
// Placement uses [placement.FirstFitDecreasing] one job at a time
// (Synergy's default first fit) or [placement.BestFit] with
// Config.Consolidate (Synergy's consolidating variant); either spreads a
// job that fits on no single server over as few servers as possible, in
// whole workers (Job.GPUsPerWorker), each server giving it CPU and memory
// in proportion to its GPUs there. Tune reclaims CPU and memory on the
// servers where the job's workers would go.
//
// # Lease extension
//
// Placement starts from where jobs run (Job.Placement), as Synergy's
// deployment path extends a lease whose allocation is unchanged. Before
// the round, the jobs are walked in the order they are allocated, counting
// GPUs per type as admission does; a running job whose GPU count is
// unchanged, on servers of one type it can use in whole workers, keeps
// those GPUs reserved unless the jobs ahead of it need its type's GPUs
// (then it is preempted for the lease). Jobs placed afresh cannot take
// reserved GPUs. At its turn a running job gets its allocator's CPU and
// memory on exactly its servers (Tune reclaiming there) when they fit
// there; otherwise, and when a preempted job's GPUs were taken, it waits
// for the next lease: Synergy never moves a running job, so a binder sees
// only Keep, Stop and Start for jobs whose GPU count is unchanged. Jobs
// that do not run, or whose placement no longer matches their GPU count,
// are placed afresh. With no job running, every round is exactly
// Synergy's allocation from scratch.
//
// # Jobs left out, and missing facts
//
// The snapshot is screened with policy.Screen: a job that is invalid or can
// never fit is left out of the round, with its reason, in the Decision's
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole fails. Synergy also leaves out an elastic job without a GPU count
// or whose GPU count no type it can run on holds: it runs gangs of a fixed
// size.
//
// A missing fact never fails the round:
//
//   - A job without a Sensitivity counts as insensitive: its throughput
//     does not depend on CPU and memory, and every allocator gives it its
//     proportional share (Opt too, as its only configuration).
//   - When some server with GPUs reports no CPU cores or no memory, the
//     round places GPUs only: every job counts as insensitive and is
//     granted no CPU and memory, so that the four allocators decide alike,
//     and the Decision carries a warning.
//   - Under SRTF and FTF a job of unknown length (StepsTotal zero) comes
//     after every job whose length is known, in arrival order.
//
// # Differences from the paper's code
//
//   - FTF runs the job with the worst finish-time fairness ρ first, as
//     Themis does; Synergy's code sorts ρ ascending, favouring the jobs that
//     are already best off.
//   - SRTF ranks every allocator's jobs by their remaining time at the
//     proportional share. Synergy's code divides it by the ideal speedup
//     for Greedy and Tune, so that Tune may run other jobs than
//     Proportional and lose its guarantee.
//   - A resource share clipped to a server reads the profile there
//     (bilinear interpolation between its grid points); Synergy's code
//     interpolates linearly between the proportional cell and the ideal,
//     ignoring the measured rows between them (1.75 against 1.647 for a
//     4-GPU AlexNet on a 24-core server).
//   - The proportional share is C/G cores per GPU exactly, not
//     floor(C·g/G); both are the same on Synergy's servers. With servers of
//     several shapes, a type's share is the smallest among its servers.
//   - Tune never exits: a job that still does not fit waits with a
//     warning. That needs a job whose ideal is above its share in one
//     resource and below it in the other, which no profile of Synergy's has.
//     A peer is downgraded only where its proportional share fits.
//   - A job that fits on no single server is spread over the fewest
//     servers, not taken GPU by GPU in server order (in Synergy's
//     simulator splitting costs nothing).
//   - Running jobs keep their GPUs across leases, as in Synergy's
//     deployment path; its simulator ends every lease and places every
//     job afresh. A new job that would fit only on GPUs running jobs keep
//     (in whole workers) waits for the lease, as does a running job whose
//     CPU and memory no longer fit on its servers (under Greedy) or whose
//     GPUs a job ahead of it took.
//   - Opt solves the LP relaxation of Synergy's integer program, with the
//     fairness floor as a filter on configurations (equivalent for the
//     integer program, tighter for the relaxation) and the job's clipped
//     ideal as a configuration where it is off the grid, so its bound is at
//     least Synergy's and at least Tune's; on the paper's checks it is the
//     integer optimum (8.0 and 10.12). A job granted a mixture of cells is
//     credited their average throughput, which the profile read at the
//     average point (what a simulator charges) may not reach.
//   - Synergy's starvation guard (priority after 1000 h unscheduled) and
//     its DRF and Tetris baselines are not included; job weights and
//     tenants are not used, as in Synergy.
package synergy
