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
// # One job physics
//
// Truth is one job's true physics and Physics a workload's, as the engine's
// Speed, Observe and Exclusive: per-type throughput (Gavel), scaling with
// GPUs and batch size at a gradient noise scale that grows over training
// (Pollux's iteration-time model and statistical efficiency), the job's
// own batch-size schedule over its epochs (Shockwave's GNS and Accordion
// rules), CPU and memory sensitivity (Synergy, through Resources.Factor),
// co-location interference (Gandiva's packing, Gavel's space sharing) and
// placement locality (a job whose workers span servers runs at its
// model's Spread). Each part is optional and each is a factor of the
// speed, 1 at the job's nominal run, so they compose; the engine's Restart
// and Reallocate charge preemption and migration. Observe gives the
// policies what a real job's profiler would report as it trains: gradient
// statistics, regime history, the throughput at the batch in force.
//
// # The mixed workload
//
// Mixed draws jobs that carry every system's facts at once, from a model
// catalogue (Catalogue) that joins the seeds' zoos under Gavel's five
// models with a counterpart in each:
//
//	Gavel            Pollux (fits)     Shockwave regimes   Synergy     Spread  Skew
//	ResNet-18        cifar10           ResNet-18           res18       0.728   0.112
//	ResNet-50        imagenet          ResNet-50           res50       1       0.112
//	Transformer      bert              Transformer         transformer 0.75    0.25
//	LM               deepspeech2       LM                  lstm        0.518   0.482
//	Recommendation   ncf               Recommendation      gnmt        1       0
//
// Sources and mappings:
//
//   - Throughput: Gavel's measured steps per second of the template (model
//     and per-GPU batch) on the job's GPU count, per type (DefaultProfile),
//     times the global batch: examples per second. Templates are drawn
//     uniformly among the model's batch sizes up to Shockwave's largest.
//   - Scaling and noise: the iteration-time model fitted (LoadApps) to
//     Pollux's traces of the application named, and its gradient noise
//     scale at the first and last epoch, per example of its initial batch,
//     carried over to the job's initial batch M0 = GPUs × per-GPU batch.
//     Pollux's applications are other models than Gavel's (BERT for the
//     Transformer, DeepSpeech2's recurrent network for the LSTM language
//     model); the pairing is by architecture and task.
//   - Regimes: Shockwave's GNS stage table and Accordion rule for the
//     model, initial batch and GPU count, half of the jobs each, as in
//     Shockwave's traces (static 0, Accordion 0.5, GNS 0.5); an epoch is
//     the model's dataset in Shockwave's table.
//   - CPU and memory: the Synergy zoo model named (no recommender is in
//     Synergy's zoo; GNMT, an embedding-heavy language model, stands in).
//   - Spread: the median of Gavel's "*_unconsolidated" over consolidated
//     throughputs for the model (multi-GPU templates on V100, P100 and
//     K80), capped at 1; Recommendation never spans servers.
//   - Skew: Tiresias' measured ResNet-50 tensor skew for both ResNets;
//     Tiresias measured no other catalogue model, so the others carry
//     1 − Spread, their measured loss when spread.
//   - Co-location: the median, over batch sizes and types, of Gavel's
//     single-GPU packed throughput over the isolated one for each pair of
//     models (the packing table Gandiva's policy reads).
//   - GPU counts and durations: the Philly trace as Gavel derived it
//     (33,192 jobs: 76 % on 1 GPU, 2 % on 2, 9 % on 4, 12 % on 8), with
//     durations drawn log-linearly between the quantiles of each GPU
//     count's distribution (median 3 h for 1 GPU, 18–28 h for multi-GPU
//     jobs, a tail to 60 days); the same heavy tail as Tiresias' YARN
//     GPU-time distribution. A duration holds at the initial batch on the
//     reference type and sets the epochs; Mixed.Scale shrinks it.
//   - Arrivals: Poisson at Mixed.Rate, optionally thinned to a diurnal
//     cycle (Mixed.Burst); tenants uniform over Mixed.Tenants; a
//     Mixed.Priority fraction of jobs weigh 5, as in Gavel's priorities.
//
// What each policy sees is what a real scheduler would be told: the
// throughputs, elastic facts (bounds, fitted model, gradient statistics at
// the start, on its requested GPUs), adaptive facts (its rule's regimes and
// an epoch's time in each), the sensitivity and the skew. Co-located
// throughputs are not given (a cluster does not profile every pair), so
// space-sharing policies see none; Gandiva learns a pair's worth by
// running it.
package workload
