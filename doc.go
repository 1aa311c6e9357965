// Package dlsched is a library of deep-learning GPU-cluster scheduling
// policies, each faithful to its paper, behind one interface that an existing
// scheduler embeds: it describes its cluster and jobs in a policy.Snapshot and
// gets back a policy.Decision that every policy fills the same way: the GPUs
// of each job that runs next round, in whole workers, its time shares and
// resources, and the jobs left out with the reason.
//
// # Quick start
//
//	import (
//		"github.com/dlsched/dlsched/policy"
//		_ "github.com/dlsched/dlsched/policy/all" // registers every policy
//	)
//
//	p, err := policy.New("gavel.las", nil) // or "tiresias.las", "pollux", …
//	s := &policy.Snapshot{Cluster: c, Jobs: jobs}
//	d, err := p.Allocate(ctx, s)
//	for _, c := range policy.Changes(s, d) { // stop, migrate, resize, start, keep
//		bind(c) // checkpoint and evict, or start workers on c.To
//	}
//
// # Packages
//
// The interface and the policies:
//
//   - policy: the Policy interface, Snapshot, Job, Decision, screening and
//     validation, Changes for binders, Rounds (share policies composed with
//     the round mechanism), Stateful, the name → policy registry and a
//     Runner for background recomputation.
//   - policy/all: imported for its side effect, registers every policy below.
//   - policy/gavel: Gavel's heterogeneity-aware LP policies (OSDI'20).
//   - policy/tiresias: Tiresias' discretized 2D-LAS and 2D-Gittins queues
//     (NSDI'19).
//   - policy/gandiva: Gandiva's time-slicing, packing, migration and
//     grow-shrink (OSDI'18).
//   - policy/themis: Themis' finish-time-fair leases and partial-allocation
//     auctions (NSDI'20).
//   - policy/allox: AlloX's min-cost matching of jobs to GPUs (EuroSys'20).
//   - policy/shockwave: Shockwave's round plans for jobs that change their
//     batch size (NSDI'23).
//   - policy/synergy: Synergy's CPU and memory allocation by sensitivity
//     (OSDI'22).
//   - policy/pollux: Pollux's co-adaptive GPU and batch-size search
//     (OSDI'21), with Optimus and fixed-configuration baselines.
//   - policy/baseline: FIFO, YARN-CS, SRTF and SRSF.
//   - policy/internal/statetest: a test helper that checks a policy's saved
//     state restores into identical decisions.
//
// What they rest on:
//
//   - allocation: accelerator types, servers, clusters, the Allocation a
//     policy returns, and the LP layer over the allocation matrix.
//   - throughput: job speed (throughput tables, Pollux's iteration-time
//     model, Synergy's CPU and memory sensitivity).
//   - efficiency: gradient noise, statistical efficiency, goodput and the
//     batch-size optimizer.
//   - bayes: batch-size regime forecasts and the Gittins index.
//   - market: Fisher-market equilibrium, Shockwave's multi-round market and
//     the partial-allocation mechanism.
//   - placement: bin packing, gang placement, consolidation, the Hungarian
//     method and Gavel's round mechanism (shares → next round's placement).
//   - internal/lp: the LP engines, pure-Go simplex and CLP.
//
// Running them:
//
//   - sim: the simulator engine and its metrics; workload: the jobs, their
//     physics, workload generators and trace readers,
//     to compare policies before deploying one.
//   - cmd/dlsched: the command-line tool (policies, allocate, simulate,
//     compare).
//   - examples/quickstart: one decision of Gavel's max-min fairness.
//   - examples/embed: a complete scheduler loop (Runner and round
//     mechanism).
//   - examples/simulate: two policies compared in simulation.
//   - examples/elastic: feeding Pollux measured step times and gradient
//     statistics.
//   - examples/adaptive: a job that changes its batch size, Shockwave's
//     forecast and plan.
//   - examples/resources: Synergy's allocators dividing one server's CPU
//     and memory.
//
// Every package is pure and deterministic: no clock, no global randomness, no
// dependence on map order.
//
// # Linear programs
//
// The default build solves linear programs with a pure-Go simplex, so that
// go get and go build need no C library; it is meant for small problems
// (about 200 jobs at most under Gavel's max-min fairness, and seconds at
// 128). Build with -tags clp (cgo and COIN-OR CLP, Debian package
// coinor-libclp-dev) for CLP, which handles thousands of jobs; see package
// internal/lp.
package dlsched
