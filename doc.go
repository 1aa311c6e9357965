// Package dlsched is a library of deep-learning GPU-cluster scheduling
// policies, each faithful to its paper, behind one interface that an existing
// scheduler embeds: it describes its cluster and jobs in a policy.Snapshot and
// gets back a policy.Decision of time shares and resources (and, for
// policies that place, GPUs per server and batch sizes).
//
// # Quick start
//
//	import (
//		"github.com/dlsched/dlsched/policy"
//		_ "github.com/dlsched/dlsched/policy/gavel" // registers gavel.*
//	)
//
//	p, err := policy.New("gavel.las", nil)      // or &gavel.MaxMinFairness{}
//	d, err := p.Allocate(ctx, &policy.Snapshot{Cluster: c, Jobs: jobs})
//	share := d.Allocation.Share("job-1", "v100") // fraction of time on V100s
//
// # Packages
//
//   - policy: the Policy interface, Snapshot, Job, Decision, validation and
//     the name → policy registry.
//   - policy/gavel: Gavel's heterogeneity-aware policies (OSDI'20).
//   - policy/pollux: Pollux's co-adaptive GPU and batch-size search
//     (OSDI'21), with Optimus and fixed-configuration baselines.
//   - policy/shockwave: Shockwave's round plans for jobs that change their
//     batch size (NSDI'23): forecasts, a multi-round market, fairness.
//   - policy/themis: Themis' finish-time-fair leases and partial-allocation
//     auctions (NSDI'20).
//   - allocation: accelerator types, servers, clusters, the Allocation a
//     policy returns, and the LP layer over the allocation matrix.
//   - throughput, efficiency, bayes: the models policies rest on (job speed,
//     statistical efficiency, batch-size regime forecasts and the Gittins
//     index).
//   - market, placement: the solvers (Fisher-market equilibrium, the
//     multi-round market and partial allocation; bin packing, gang placement
//     and the round-based mechanism).
//   - sim: a trace-driven simulator to compare policies.
//   - cmd/dlsched: the command-line tool; examples: programs to copy from.
//
// Every package is pure and deterministic: no clock, no global randomness, no
// dependence on map order. Linear programs are solved by COIN-OR CLP when
// built with cgo, and by a pure-Go simplex (for small problems) otherwise.
package dlsched
