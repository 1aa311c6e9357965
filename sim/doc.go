// Package sim is a trace-driven, round-based cluster simulator for choosing
// a policy before deploying it, following the simulators of Gavel (OSDI'20)
// and Shockwave (NSDI'23): it replays jobs under any policy.Policy with the
// placement package's round mechanism and records what happened.
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
// # What is not
//
// Throughputs are the ones given, with no noise and no placement effects
// (a job split over servers runs as fast as one on a single server); a
// finished job's GPUs stay idle until the next round; there is no
// preemption cost beyond Restart; CPU and memory are not modelled.
package sim
