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
// fewest servers wins, ties by type name. Each part carries CPU and memory in
// proportion to its GPUs, so a part fits only where its share of every
// dimension fits. An item that fits whole on some server is never split.
//
// Malformed items (an empty or duplicate ID, a negative GPU count, a
// negative or non-finite CPU or memory demand) are errors wrapping
// [allocation.ErrInvalid] that name the item and field; nothing fitting is
// not an error.
package placement
