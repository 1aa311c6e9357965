// Package sim is a trace-driven, round-based cluster simulator for choosing
// a policy before deploying it, following the simulators of Gavel (OSDI'20),
// Shockwave (NSDI'23) and Pollux (OSDI'21): it replays jobs under any
// policy.Policy, placing time shares with the placement package's round
// mechanism or running a policy's own placement, and records what happened.
//
// # What is modelled
//
// Time advances in rounds (Simulation.Round, Gavel's 360 s by default).
// Jobs are admitted at the first round boundary at or after their arrival,
// but their completion time counts from the arrival itself. The policy is
// asked again at a boundary after jobs arrived or finished (at most every
// Simulation.Recompute) and at its Decision.Wake. Every registered policy
// places its own decisions; a share policy composed with the round mechanism
// (policy.Rounds) runs with the simulation's Round and Recompute, and a
// policy of the caller's that returns shares without a placement is placed
// by the same mechanism in the engine. Each round, then, the decision
// picks which jobs run where; a job that runs makes progress at its
// throughput on the type it runs on (its co-located throughput when it runs
// in a pair), less Simulation.Restart when it did not run in the previous
// round, and finishes at the exact moment its steps run out, mid-round.
//
// Elastic jobs (Pollux) change GPUs and batch size between rounds: Elastic
// computes their speed in scale-invariant steps from Pollux's measured step
// times and gradient statistics (LoadApps, or SyntheticApps when the data is
// absent), Simulation.Reallocate charges Pollux's 30 s whenever a running
// job's GPUs change, and ReadPolluxWorkload reads Pollux's workloads.
//
// Adaptive jobs (Shockwave) change their batch size as they train, by the
// GNS or Accordion rule (Schedule, Regimes); ReadShockwaveTrace reads
// Shockwave's traces and Adaptive simulates them. Their unit of progress is
// the epoch: StepsTotal counts epochs, each taking the time of its own batch
// size, and the throughput a job reports is epochs per second at the batch
// size in force now. Simulation.Exclusive set to Adaptive.Exclusive makes
// finish-time fairness use the post-adaptation runtime, as Shockwave does.
// Shockwave profiles Accordion jobs with one rule and simulates them with
// another (without its 30 % clause); here the profile rule serves both, so
// the simulated job is the profiled one. Shockwave's GNS profiles give the
// last epoch an earlier batch size by an off-by-one; that is fixed.
//
// # What is not
//
// Throughputs are the ones given, with no noise and no placement effects
// (a job split over servers runs as fast as one on a single server), except
// through a Speed model such as Elastic's; interference between jobs that
// share a server is not modelled (Pollux's main results assume none); a
// finished job's GPUs stay idle until the next round; there is no
// preemption cost beyond Restart. CPU and memory matter only through a
// Speed model such as Resources, described next.
//
// # CPU and memory (Synergy)
//
// Synergy (OSDI'22) gives jobs CPU cores and memory beyond or below their
// GPU-proportional share. Resources.Speed, set as Simulation.Speed, makes a
// job with a Sensitivity run at its Throughput times the profile's speedup
// at the cores and memory per GPU its grant gives it (the proportional
// share when the grant names none), and the simulation checks that a
// placing policy's grants fit each server's CPUs and memory. SynergyModels
// holds the profiles of Synergy's default model zoo, SynergyGenerator draws
// Synergy's Philly-derived workloads (deficit-based class split, Poisson
// arrivals), ReadSynergyTrace reads its recorded traces, and SynergyRound
// is its 300 s lease. Progress is continuous: at 0.64 s per iteration a job
// advances 468.75 iterations in a 300 s round, where Synergy's simulator
// credits floor(300/0.64) = 468, and a job finishes the moment its
// iterations run out, where Synergy's finishes only at a round's end.
package sim
