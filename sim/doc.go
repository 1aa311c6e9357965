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
// Simulation.Recompute) and at its Decision.Wake. Each round the mechanism
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
// # What is not
//
// Throughputs are the ones given, with no noise and no placement effects
// (a job split over servers runs as fast as one on a single server), except
// through a Speed model such as Elastic's; interference between jobs that
// share a server is not modelled (Pollux's main results assume none); a
// finished job's GPUs stay idle until the next round; there is no
// preemption cost beyond Restart; CPU and memory are not modelled.
package sim
