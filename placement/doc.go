// Package placement decides where jobs run: multi-dimensional bin packing of
// GPUs, CPU and memory, consolidation onto few servers, and the round-based
// mechanism of Gavel (Narayanan et al., OSDI'20) that turns time shares into
// the next round's concrete server assignment.
//
// # Packing primitives
//
// [FirstFitDecreasing] and [BestFit] pack [Item]s, each with a [Demand] of
// whole GPUs, CPU cores and memory, onto the remaining capacity of a
// cluster's servers, a [Free] value built by [NewFree] and reduced by
// [Free.Take] for work that is already placed. They are the shared heuristics
// behind Gavel's rounds, Tiresias' consolidation, Gandiva's packing and
// Synergy's CPU- and memory-aware placement. Both are pure: the input Free
// is not modified and the result carries the capacity left, so calls chain.
//
// A server's capacity is a vector (GPUs, CPUs, MemoryGB). A demand fits on a
// server when it fits in every dimension; a server whose CPUs or MemoryGB is
// zero in the [allocation.Cluster] does not track that dimension, and any
// demand fits it there (Free reports it as +Inf). An item whose Accelerator
// is set only goes to servers of that type.
//
// Demands are compared by their dominant share: the largest of GPUs/G,
// CPUs/C and MemoryGB/M, where G, C and M are the largest server's capacity
// in each dimension (a dimension no server has is skipped). Both functions
// take items in decreasing dominant share, ties by ID, so the result depends
// neither on the order of the items nor on the order of the servers.
//
//   - FirstFitDecreasing puts each item on the first server in server-ID
//     order (byte-wise string order) that fits it. It is the fastest and
//     tends to fill low-ID servers first.
//   - BestFit puts each item on the fitting server it leaves with the fewest
//     free GPUs; ties go to the server left with the smallest normalized
//     CPU plus memory, (C_left/C + M_left/M), an untracked dimension counting
//     as 1, then to the smaller server ID. It minimizes GPU fragmentation:
//     large holes stay open for large jobs.
//
// An item that fits on no single server is reported in Packing.Unplaced,
// unless [Options].Split allows it to run as a gang over several servers of
// one accelerator type. The gang then uses as few servers as possible, the
// consolidation rule of Gavel's placement: among the servers of the type,
// those with room for the most of the item are filled whole (ties by ID),
// and the remainder goes to the tightest fit among the others, as BestFit
// would choose. When several types could hold it, the type needing the
// fewest servers wins, ties by type name. Each part is whole workers of the
// item (Item.Worker) and carries CPU and memory in proportion to its GPUs,
// so a part fits only where its share of every dimension fits. An item that
// fits whole on some server is never split, nor is an item of one worker.
//
// Malformed items (an empty or duplicate ID, a negative GPU count, a
// negative or non-finite CPU or memory demand, a negative Worker or GPUs
// that are not a multiple of it) are errors wrapping
// [allocation.ErrInvalid] that name the item and field; nothing fitting is
// not an error.
//
// [Gangs] is the sequential form for policies that decide which jobs run
// now in a priority order of their own (Shockwave's rounds, FIFO and
// priority queues): [Gangs.Keep] gives a running job back the GPUs it holds
// when they are still free (lease extension), and [Gangs.Place] puts a gang
// in whole workers on the fewest servers of one type, in the fullest server
// that holds it whole or else the servers with the most room. Only GPUs are
// counted.
//
// # Worker shapes
//
// A training job runs as N workers (pods, ranks) of w GPUs each, and a
// worker's GPUs must lie on one server: a job of 8 GPUs in workers of 4
// may run 8 or 4+4, never 5+3. Every primitive takes the worker size —
// [Item].Worker, [Request].Worker, the w of [Gangs.Place] and
// [Gangs.Consolidate], [allocation.Grant].GPUsPerWorker for the mechanism —
// where 0 or 1 means one-GPU workers, any split, and gives each server a
// multiple of it: a server with f free GPUs has room for ⌊f/w⌋·w of the
// gang. Otherwise the rules are unchanged (the fullest single server that
// holds the gang, else the most room first, on as few servers as
// possible), and with workers of one GPU every result is what it was
// before worker sizes existed. Placements a caller passes in
// (Request.Current, the Ledger's Placement, Gangs.Keep) are taken to be in
// whole workers, as policy.Validate checks them: Admit rejects a Current
// that is not, and the mechanism does not extend such a lease.
//
// [Assign] solves the assignment problem, rows to distinct columns at the
// least total cost, by the Hungarian method in O(n²m): AlloX's matching of
// jobs to (GPU, position) pairs. A +Inf cost forbids a pair, and
// [ErrInfeasible] reports that every complete assignment needs one.
//
// # Round-based mechanism
//
// [Mechanism.Next] is Gavel's round-based scheduling mechanism: it turns an [allocation.Allocation], the time share X_jk of every job j on
// every accelerator type k, into the concrete placement of the coming round,
// a [Round] of fixed length (Mechanism.Round, 360 s by default). Its memory
// is a [Ledger] the caller passes in and gets back, serializable as JSON: for
// every job, and every co-located pair of Grant.Pairs, an [Account] of the
// time it was eligible since its last reset (E_j), the time it received on
// each type (R_jk), a carried deficit, and where it ran last.
//
// Each round, every (account, type) with X_jk > 0 gets the priority
//
//	priority_jk = X_jk / (R_jk / E_j)      (+Inf when R_jk = 0)
//
// and candidates are taken greedily in decreasing priority, ties by deficit
// (carried + X_jk·E_j − R_jk), then share, then ID and type name (among +Inf
// priorities the share comes before the deficit). A candidate runs if none
// of its jobs runs yet this round and its type still has as many free GPUs
// as its gang (Grant.GPUs, the larger of the two for a pair); all of a
// gang's GPUs are of one type. Chosen runs keep the GPUs they had last round
// when those are free (lease extension); the rest are placed largest gang
// first on the tightest server that holds them whole, or over as few servers
// as possible, so a 4-GPU job never straddles 4-GPU servers while one of
// them is wholly free. Every server gets whole workers of
// Grant.GPUsPerWorker (for a pair, of the least common multiple of both
// members'). Since the choice counts GPUs, a gang of large workers may find
// the free GPUs too scattered: it is then dropped for the round, and the
// candidates not running are walked again in priority order, each running
// if it can be placed on what is left. A pair runs as one unit on the same
// GPUs. The returned Ledger credits the full round to every job that runs;
// [Ledger.Shorten] corrects it when a round ends early.
//
// The Ledger's Placement is where jobs run now. A scheduler that starts,
// or restarts without its saved Ledger, builds one with [Ledger.Seed] from
// where the cluster runs its jobs (policy.Job.Placement), so that running
// jobs keep exactly their GPUs when they run again instead of all being
// placed anew: seeded jobs count as having run in the last round.
//
// Where this differs from Gavel's scheduler code:
//
//   - The fraction of time received is R_jk / E_j, the share of the job's own
//     eligible wall-clock time, compared directly with X_jk; Gavel divides by
//     the total time received by all jobs on type k.
//   - An account is reset (R and E to zero, what it was owed folded into its
//     deficit) when its own row of the allocation changes, not all accounts
//     whenever the allocation is recomputed; Gavel's simulator also throttles
//     recomputation to once per 1920 s, which a caller reproduces by passing
//     the same allocation until it recomputes. Gavel restarts received time
//     at half a round (180 s); here it restarts at zero, so fresh accounts
//     have infinite priority and are ordered by share, deficit and ID.
//   - One queue over all types (Gavel's optional global queue) instead of
//     per-type queues concatenated in a fixed or, for throughput-agnostic
//     policies, randomly shuffled type order: the result is deterministic.
//   - A job with no share never runs: Gavel lets new jobs without an
//     allocation entry use leftover GPUs at priority zero. The mechanism
//     sees shares, not throughputs, so "zero throughput" means "zero share".
//   - All lease extensions come before any new placement (Gavel interleaves
//     them by scale factor), so a job that runs again on its type always
//     keeps its GPUs while the cluster is unchanged; except that a gang split
//     over several servers gives up its lease when a whole server is free,
//     to consolidate, and that runs backfilled after a gang of large
//     workers could not be placed come after the new placements.
//   - Gavel spreads a gang's GPUs over servers freely; here each server
//     gets whole workers of Grant.GPUsPerWorker, so the selection by GPU
//     counts can pick a gang that cannot be placed, which Gavel's cannot.
//   - Pair members may differ in GPUs (the pair holds the larger count);
//     Gavel requires equal scale factors. Each run is credited the round's
//     length, not its measured execution time; use Ledger.Shorten.
//   - Only GPUs are placed; Grant.CPUs and Grant.MemoryGB are not checked
//     against servers.
package placement
