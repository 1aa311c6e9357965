// Package baseline implements the classic schedulers that Tiresias (Gu et
// al., NSDI'19) compares against: FIFO, YARN-CS (FIFO with consolidated
// placement, YARN's capacity scheduler), and the clairvoyant SRTF and SRSF.
//
// Import it for its side effect to register "baseline.fifo",
// "baseline.yarn-cs", "baseline.srtf" and "baseline.srsf" with package
// policy:
//
//	import _ "github.com/dlsched/dlsched/policy/baseline"
//
// Every job is a gang of a fixed number of whole GPUs that runs all the time
// of its GPUs, on one accelerator type, or not at all. The policies rank the
// jobs and admit them in that order with placement.Priority: a running job
// keeps its GPUs while it stays admitted, a new one goes on the fewest
// servers of its fastest type with room.
//
//   - baseline.fifo ranks by Arrival (ties by ID) and stops at the first
//     job that does not fit: head-of-line blocking, no backfilling. A job
//     never runs ahead of an earlier one, so none is preempted.
//   - baseline.yarn-cs is FIFO whose jobs run only consolidated, on as few
//     servers as could ever hold them (placement.Gangs.Consolidate); a job
//     that would have to be spread waits, and blocks those behind it.
//   - baseline.srtf ranks by remaining time, (StepsTotal − StepsDone) at the
//     job's best Throughput, ties by Arrival then ID; it preempts running
//     jobs that rank too low and backfills: a job that does not fit lets
//     later ones that do run. A running job keeps its GPUs when it runs
//     again; a preempted job waits rather than backfill other GPUs, so no
//     job migrates. A job whose StepsTotal is unknown ranks after every
//     job whose length is known, in arrival order.
//   - baseline.srsf is SRTF ranked by remaining service, remaining time ×
//     GPUs.
//
// The decisions carry their placements, have no Objective and no Wake: the
// policies keep no state, and need only be asked again when a job arrives or
// finishes (sim.Simulation with Events).
//
// The snapshot is screened with policy.Screen: a job that is invalid or can
// never fit is left out of the round, with its reason, in the Decision's
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole fails. An elastic job without a GPU count, or whose GPU count no
// type it can run on holds, is left out too: the policies run gangs of a
// fixed size, and such a job would block FIFO forever.
//
// # Differences from Tiresias' simulator
//
//   - Its srtf ("shortest") and srsf ("shortest-gpu") rank by the job's
//     given duration minus the time it has run, on its own GPUs; here the
//     remaining time is computed from steps and the best throughput, so on
//     a heterogeneous cluster it is the time at the job's fastest type.
//   - Its YARN placement takes all of a job's GPUs from one switch: one node
//     for a job that fits in a node, else ⌊g/G⌋ fully idle nodes of G GPUs
//     plus one node for the rest. Here there are no switches, and a job runs
//     on any servers of one type as long as they are no more than the fewest
//     that could hold it, partly busy ones included.
//   - Preemption and restart cost nothing here either; a simulator charges
//     them (sim.Simulation.Restart).
package baseline
