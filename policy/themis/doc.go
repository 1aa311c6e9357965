// Package themis shares a cluster by finish-time fairness, as Themis
// (Mahajan et al., NSDI'20) does: GPUs are leased for a limited time, and
// whenever some are free they are auctioned, by the partial-allocation
// mechanism of package market, among the jobs whose finish-time fairness ρ
// is worst.
//
// Import it for its side effect to register "themis" with package policy:
//
//	import _ "github.com/dlsched/dlsched/policy/themis"
//
// This is the paper's mechanism. The min–max-ρ program that Gavel and
// Shockwave compare against under the name Themis is "gavel.ftf".
//
// # Jobs left out, and jobs of unknown length
//
// The snapshot is screened with policy.Screen: a job that is invalid or can
// never fit is left out of the round, with its reason, in the Decision's
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole fails. Themis also leaves out an elastic job without a GPU count or
// whose GPU count no type it can run on holds: it leases time on gangs of a
// fixed size. A job left out holds no lease.
//
// ρ needs a job's length (StepsTotal). A job of unknown length cannot state
// how unfairly it is treated, so it never bids; it is among the jobs that
// were not offered the GPUs, which share what the hidden payments leave (all
// the free GPUs when no job of known length wants them) as if its ρ were 1,
// and it does not count towards the Objective, the worst ρ. Rho, which must
// estimate every job's ρ, still fails for it.
//
// # Large auctions
//
// The markets are solved exactly (package market). Should one find no
// exact equilibrium, the round still goes on with the approximate one, and
// the Decision's Warnings say which market, among how many jobs, and its
// Eisenberg–Gale duality gap. TestManyJobs pins an exact round of 5000
// jobs on 1200 GPUs.
//
// # Differences from the paper
//
//   - Valuations are linear: a job values a GPU of each type by the speed
//     it adds, scaled by its ρ. The proportional-fair division does not
//     change when one bidder's valuations are scaled, so ρ decides who bids
//     (the filter) and speeds decide the division.
//   - ρ uses the current number of jobs for the contention N, not its
//     average over the job's life, so that Themis keeps no history beyond
//     its leases.
//   - What the hidden payments leave goes first to the jobs that did not
//     bid, divided proportionally fairly; what they cannot use goes back to
//     the bidders rather than idling until the next auction.
//   - A lease is a time share of the job's gang for a fixed time, rather
//     than specific GPUs. Registered as "themis", the policy is composed with
//     Gavel's round mechanism (policy.Rounds) in rounds of RoundSeconds,
//     which places the leases' shares on whole workers each round.
package themis
