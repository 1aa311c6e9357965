// Package workload is what a simulation replays: jobs with their true
// physics, the generators that draw them and the readers of the published
// traces of Gavel (OSDI'20), Tiresias (NSDI'19), Pollux (OSDI'21),
// Shockwave (NSDI'23) and Synergy (OSDI'22). Its models plug into the
// engine of package sim through Simulation.Speed, Observe and Exclusive.
//
// # Gavel
//
// Templates, DefaultProfile and Generator are Gavel's job table, its
// measured throughputs and its workload generator; ReadGavelTrace and
// LoadGavelThroughputs read its traces and throughput files; ReadTrace and
// WriteTrace are dlsched's own JSON-lines traces; ReadTiresiasTrace reads
// Tiresias' CSV traces.
//
// # Pollux
//
// Elastic jobs (Pollux) change GPUs and batch size between rounds: Elastic
// computes their speed in scale-invariant steps from Pollux's measured step
// times and gradient statistics (LoadApps, or SyntheticApps when the data is
// absent), Simulation.Reallocate charges Pollux's 30 s whenever a running
// job's GPUs change, and ReadPolluxWorkload reads Pollux's workloads.
//
// # Shockwave
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
package workload
