// Package gandiva schedules jobs as Gandiva (Xiao et al., OSDI'18) does:
// time-slicing of oversubscribed server sets within affinity classes,
// packing of job pairs kept or reverted by introspection, migration to
// defragment, and grow-shrink of elastic jobs.
//
// Import it for its side effect to register "gandiva" with package policy:
//
//	import _ "github.com/dlsched/dlsched/policy/gandiva"
//
// # Model
//
// A set is one server, or for a job of g GPUs more than a server holds the
// fewest whole servers of one type that hold g, tagged with the affinity
// class g of the jobs it hosts. Its members are queued in round-robin
// order as units: a job alone, or a packed pair that shares its GPUs. The
// units that fit, in queue order, run; a set whose units request more GPUs
// than it has is time-sliced, and at every quantum boundary (60 s) the
// units that ran go to the back of its queue. With g-GPU jobs on a set of
// G GPUs, ⌊G/g⌋ run at once.
//
// A job in no set is placed, oldest first, by the first rule that applies:
//
//  1. a set of its class with g GPUs no unit requests;
//  2. free servers, which become a set of class g;
//  3. a set of another class with g GPUs no unit requests;
//  4. migration: units of one set move to other sets with room, so that
//     g GPUs free up in it, choosing the set needing the fewest migrated
//     jobs, if g × quantum > Σ migrated jobs' GPUs × migration cost;
//  5. rebalancing: if class g holds fewer GPUs than its target
//     min(demand_g, ⌊demand_g/Σ demand × GPUs⌋) (Targets), or none, a class
//     that stays at or above its target gives up a set, its members merging
//     onto its other sets, time-sliced there, if a quantum of the set's
//     GPUs outweighs the migration cost as in rule 4;
//  6. oversubscription of the set of its class with the least load, the
//     GPUs its units request over the GPUs it has;
//
// and else it waits. A job only goes where its throughput is positive.
// Suspended members of a set resume by rotation before a new job can join
// it, and grown jobs shrink back to their request before any job is
// placed.
//
// Packing happens only while the cluster is oversubscribed, the active
// jobs requesting more GPUs than it has; otherwise every job runs alone.
// In each time-sliced set, unpaired jobs of equal GPU count are paired in
// queue order, never a pair that was reverted, until the set is no longer
// time-sliced. A trial pair runs on the same GPUs; once it has run for a
// quantum, the policy reads the measurement the snapshot reports,
//
//	norm_sum = Colocated_a[b][t]/Throughput_a[t] + Colocated_b[a][t]/Throughput_b[t]
//
// on the set's type t (NormSum), and keeps the pair iff norm_sum ≥ 1
// (KeepThreshold), or else unpacks it for good. A pair dissolves when a
// member leaves.
//
// When no job waits (none outside a set, no set time-sliced), an elastic
// job running alone doubles its GPUs, up to Elastic.MaxGPUs (zero: its
// set's GPUs), on its set's idle GPUs.
//
// # Workers
//
// A job's GPUs come in workers of Job.GPUsPerWorker GPUs (zero: one), each
// on one server. Sets count GPUs, but every place a job goes must also hold
// it in whole workers, laid out as the decision lays units out (those that
// keep their GPUs first, then the others on the fewest servers):
//
//   - a job joins a set with room only if the set lays out its units and
//     the job in whole workers, and a multi-server set is made of servers
//     whose whole workers of the job add up to its GPUs;
//   - a migration target must lay out the units it has and takes in whole
//     workers, and the set migrated from its remaining units and the new
//     job; rebalancing and oversubscription only use sets whose servers
//     hold the job's GPUs in whole workers;
//   - grow-shrink grows a job by doubling, which keeps whole workers, up to
//     MaxGPUs (a multiple of the worker size) or its set's GPUs rounded
//     down to whole workers, and only while its set still lays out every
//     unit: a job of 2-GPU workers on a 7-GPU server grows 2, 4, 6;
//   - a packed pair shares GPUs in workers of the least common multiple of
//     both jobs' worker sizes (their common GPU count is a multiple of it),
//     and two jobs are paired only where their set's servers hold their
//     GPUs in such workers.
//
// With workers of one GPU every rule is the paper's. A unit of a
// time-sliced set whose workers do not fit the GPUs left by the units ahead
// of it waits for its turn.
//
// # Decisions
//
// Every job that runs has a Placement. A job alone gets the grant
// {Shares: {t: 1}, GPUs: n}; the two jobs of a pair each get
// {GPUs: g, Pairs: {partner: {t: 1}}} and the same placement. Wake is the
// next quantum boundary while some set is time-sliced or a trial pair
// waits for its measurement. Suspend and resume costs are charged by
// whoever runs the jobs (sim.Simulation.Restart); the migration cost is
// only weighed by the policy.
//
// # Jobs left out, and missing facts
//
// The snapshot is screened with policy.Screen: a job that is invalid or can
// never fit is left out of the call, with its reason, in the Decision's
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole fails. Gandiva also leaves out an elastic job whose GPU count (or,
// without one, Elastic.MinGPUs, at least 1) no type it can use holds. A job
// left out keeps no place in a set or a pair, and joins as a new job when
// it comes back; a reverted pair stays reverted while both jobs are in the
// snapshot, left out or not.
//
// The one per-system fact Gandiva reads is Job.Colocated, the introspection
// measurement. A pair whose jobs report none for each other measures a
// norm_sum of 0 and is unpacked after its trial quantum, as a pair that
// interferes badly would be: the jobs are then only time-sliced. A job's
// skew, adaptive or sensitivity facts are ignored.
//
// # Differences from the paper
//
//   - Gandiva has no public code. The rules are synthesised from the paper
//     and two public re-implementations, Gavel's packing policy and
//     Tiresias' Gandiva simulator (affinity sets, capacity, round-robin
//     slices, node-set rebalancing).
//   - Pairs are formed deterministically in round-robin order, not at
//     random as in Gavel, and only within a time-sliced set.
//   - Introspection is the snapshot's Colocated throughputs, read after the
//     pair has run a quantum, rather than a live measurement.
//   - A migration's gain is the GPU-seconds of a quantum the waiting job
//     gains; its cost is the migration cost for every GPU of every moved
//     job. The paper weighs the consolidated job's measured speed-up
//     instead, which a snapshot does not report. Migration frees room
//     within one set; it does not assemble a multi-server set from parts
//     of several.
//   - Rebalancing happens when a job of a class below its target cannot be
//     placed, not periodically, and a donor class never falls below its
//     own target, so that sets do not move back and forth.
//   - A set with room hosts jobs of another class before any job migrates,
//     so that grow-shrink and small jobs use what would sit idle.
//   - Sets are time-sliced by GPU count: units run in queue order while
//     their GPUs fit, which for one class is the first ⌊G/g⌋.
//   - NoPacking turns packing off, for time-slicing alone.
package gandiva
