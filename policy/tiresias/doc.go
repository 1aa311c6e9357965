// Package tiresias schedules distributed training jobs without knowing how
// long they run, as Tiresias (Gu et al., NSDI'19) does: priority by
// two-dimensional attained service (GPUs × time run), discretized into a
// few queues, or by the 2D-Gittins index of a learned distribution of job
// GPU-time, with consolidation only for models whose tensors are skewed.
//
// Import it for its side effect to register "tiresias.las" (Tiresias-L)
// and "tiresias.gittins" (Tiresias-G) with package policy:
//
//	import _ "github.com/dlsched/dlsched/policy/tiresias"
//
// The decision says which jobs run now and on which GPUs (Placement); a
// job left out waits, and a running job left out is preempted. Decisions
// are meant to be made at every arrival and completion and at the
// decision's Wake, the next predicted demotion or promotion: a
// sim.Simulation with Events set does exactly that. Queue positions and
// promotion clocks live in the State, which is plain JSON.
//
// Queues are K = len(Thresholds)+1, by default the simulator's three with
// limits 3250 and 7200 GPU-seconds (Tiresias' README shows two queues split
// at 3600; the paper finds two enough).
//
// # The Gittins distribution
//
// Tiresias-G needs a distribution of job GPU-time. With an empty
// configuration it starts from DefaultSamples, the percentiles of the
// distribution Tiresias' own simulator learns from (yarn-gput1000.csv, 1,001
// jobs of a production cluster), and, as Tiresias learns from its cluster's
// history, adds the total GPU-seconds of every job it sees finish (a job of
// its State that the next snapshot no longer holds) to State.Finished,
// keeping the most recent MaxSamples (10 000 by default). The prior counts
// as 100 jobs, so the cluster's own jobs soon dominate. Samples replaces the
// prior with the caller's own history; MaxSamples < 0 learns nothing.
//
// # Jobs left out, and missing facts
//
// Both policies screen the snapshot with policy.Screen: a job that is
// invalid or can never fit is left out of the decision, with its reason, in
// Unscheduled, and the others are scheduled; only a snapshot malformed as a
// whole (or a Now before the State's last decision) fails. An elastic job
// without a GPU count, or with one no type it can use holds, is left out
// too: Tiresias runs gangs of a fixed size. A job left out keeps its queue
// and clocks in the State, behind the others of its queue, for when it is
// back; it has not finished while it is in the snapshot.
//
// The one per-system fact Tiresias reads is Job.Skew. A job whose skew is
// unknown (zero) is spread like a model of small tensors, not left out.
//
// # Differences from the paper's code
//
//   - Demotion wakes at (T − service)/GPUs from now, the exact crossing. The
//     simulator computes (T − executed time)/GPUs, mixing GPU-time with
//     time, so only the first crossing is on time: on its two-job trace
//     the JCTs are 5000 and 3575 s instead of 4800 and 4100 s.
//   - The Gittins index is the textbook one, evaluated at each job's
//     attained service. The simulator's counts the whole size of the jobs
//     that end inside the quantum, not what they still need, which
//     underrates jobs that have run, and it keeps the index as a table with
//     one entry per sample (at s_k − 1), looked up at the first sample above
//     the attained service, so that jobs between two samples tie.
//     Gittins.Simulator selects the table for parity
//     (TestGittinsSimulatorTable shows a decision it changes);
//     Gittins.SimulatorAt the simulator's formula at the attained service.
//   - Placement is checked for consolidation only: a job whose model skew
//     (share of parameters in its largest tensor) exceeds 0.5 runs on the
//     fewest servers that can hold it or waits, as the paper's profiler
//     would decide; the simulator models no placement effect on speed.
//   - Which jobs run is decided by GPU counts in priority order, as in the
//     simulator; then running jobs keep their GPUs, new ones are placed,
//     and what is left is backfilled in priority order, so a job that the
//     counts admit but consolidation cannot place waits and lets smaller
//     jobs behind it run (placement.Priority).
package tiresias
