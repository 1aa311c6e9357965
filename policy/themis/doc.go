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
//   - A lease is a time share of the job's gang for a fixed time, for a
//     round mechanism to place, rather than specific GPUs.
package themis
