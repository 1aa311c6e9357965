// Package service serves dlsched's policies over HTTP, for schedulers that
// cannot import a Go package: Slurm plugins, Ray, schedulers in Python or
// Java. It follows no paper: it is plumbing around package policy, and
// decides exactly as policy.New's policy would in process.
//
// A Service holds named schedulers. Each is one policy instance with its
// own configuration and its own memory across rounds (policy.Stateful), so
// that two clusters, or two partitions of one, never share a queue or an
// account. A scheduler's calls are served one at a time, in the order they
// arrive; different schedulers decide in parallel.
//
// # Endpoints
//
//	POST   /v1/allocate?scheduler=NAME  a snapshot in (package policy's JSON
//	                                    schema), its decision out: shares,
//	                                    placement, the jobs left out and why,
//	                                    and "changes", what a binder does
//	                                    (policy.Changes); NAME defaults to
//	                                    "default"; &lenient=1 accepts unknown
//	                                    keys, as dlsched allocate --lenient
//	PUT    /v1/schedulers/NAME          {"policy": "gavel.las", "config": {},
//	                                    "strict": false} creates NAME (201),
//	                                    or confirms it if it exists with the
//	                                    same spec (200); another spec is 409
//	GET    /v1/schedulers               every scheduler: its spec and
//	                                    decisions served
//	DELETE /v1/schedulers/NAME          removes NAME and its saved state
//	GET    /v1/policies                 the registered policies
//	GET    /healthz                     200 "ok" while serving
//	GET    /metrics                     Prometheus metrics
//
// Errors are JSON, {"error": "..."}, naming the job and field where the
// input was at fault: 400 for a malformed snapshot or spec, 404 for an
// unknown scheduler, 405 for a wrong method, 409 for a conflicting spec,
// 413 for a body over Config.MaxBytes, 415 for a body that is not JSON,
// 503 when a decision outlasts Config.Timeout (the scheduler is left as it
// was, so the call can be retried), and 500 when a policy or the state
// directory fails.
//
// # State
//
// With Config.Dir set, each scheduler lives in a file, NAME.json: its spec
// and its policy's state after its last decision, written atomically
// (a temporary file, fsync, rename) before the decision is answered. New
// loads every scheduler found there, so a service killed at any moment and
// started again on the same directory decides as one that never stopped.
// A decision whose state cannot be saved is answered with 500, and the
// scheduler goes back to its last saved state. A call retried after its
// answer was lost counts as a second round.
//
// # Metrics
//
// Metrics() is a Prometheus registry with the process and Go collectors
// and, by scheduler: dlsched_decision_seconds (histogram of decision
// latency), dlsched_jobs and dlsched_jobs_unscheduled (in the last
// snapshot and decision), dlsched_gpus and dlsched_gpus_allocated (the
// cluster's and the placement's), and dlsched_errors_total by reason
// (invalid, timeout, failed, state); and dlsched_requests_total by
// endpoint and status code.
package service
