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
// GPU policy, [FIFO], [SRTF], [LAS] or [FTF], and allocated from scratch. A
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
// configurations and has no placement: it cannot be carried out.
//
// Placement uses [placement.FirstFitDecreasing] one job at a time
// (Synergy's default first fit) or [placement.BestFit] with
// Config.Consolidate (Synergy's consolidating variant); either spreads a
// job that fits on no single server over as few servers as possible.
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
