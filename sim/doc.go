// Package sim is the engine of a trace-driven, round-based cluster
// simulator for choosing a policy before deploying it, following the
// simulators of Gavel (OSDI'20), Shockwave (NSDI'23) and Pollux (OSDI'21):
// it replays jobs under any policy.Policy, placing time shares with the
// placement package's round mechanism or running a policy's own placement,
// and records and summarizes what happened. The jobs, their physics (the
// Speed, Observe and Exclusive hooks) and the workloads come from package
// workload.
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
// # What is not
//
// Throughputs are the ones given, with no noise and no placement effects
// (a job split over servers runs as fast as one on a single server), except
// through a Speed model: the engine knows no physics of its own, and
// package workload supplies them (locality, interference, elastic goodput,
// batch-size regimes, CPU and memory); a finished job's GPUs stay idle
// until the next round; there is no preemption cost beyond Restart and
// Reallocate.
package sim
