// Package policy is the one interface between a scheduler and dlsched's
// scheduling policies: a scheduler describes the cluster and its jobs in a
// Snapshot, and a Policy answers with a Decision.
//
// A Policy is a pure function of its configuration, its own explicit state
// and the snapshot: it reads no clock, no global randomness and no map order,
// so the same inputs always give a bit-identical Decision. Policies live in
// sub-packages, one per system (policy/gavel, …), and register themselves
// under names of the form "<system>" or "<system>.<variant>"; New builds one
// by name, which is how the dlsched command and configuration files find
// them.
//
// Policies that keep memory across rounds (queues, accounts, leases, plans,
// a search's population) implement Stateful: their state is a JSON value
// that a scheduler saves after a decision and restores into a fresh policy
// of the same configuration after a restart, which then decides exactly as
// the policy that never stopped. Importing policy/all registers every policy.
//
// Runner runs a policy in the background for a scheduler's hot paths: it
// recomputes the decision when triggered or woken, rate-limited, and
// publishes it for lock-free reads; with a StateStore it restores a Stateful
// policy's state when it starts and saves it after each decision. It is
// plumbing, not a policy, and uses the wall clock.
//
// # Binding a decision
//
// There is one binding path for every policy. A job's GPUs come in workers
// of Job.GPUsPerWorker GPUs, and a worker never spans servers. Every
// registered policy's Decision carries Placement, the concrete GPUs of each
// job that runs in the next round, in whole workers; the policies that
// decide time shares (Gavel's programs, Themis' leases, Synergy's optimum)
// get it from the round mechanism they are composed with, Rounds. Changes
// (or Diff) turns the decision into what a binder does, job by job: Stop
// (checkpoint, then evict), Migrate, Resize, Start, Keep. Placement starts
// from where jobs run now (Job.Placement): a running job keeps its exact
// servers unless the policy deliberately moves it, which then shows up as a
// Migrate change.
//
// # Bad input
//
// Every policy screens its snapshot with Screen before it computes
// anything. A snapshot malformed as a whole (an invalid cluster, a duplicate
// job ID) fails the round with an error wrapping ErrInvalidSnapshot. A job
// that is invalid, can never fit on the cluster or lacks a fact the policy
// needs is left out, with its reason naming the field, in
// Decision.Unscheduled, and the other jobs are scheduled. Strict restores
// the all-or-nothing behaviour, and Validate is the strict check alone.
// Nothing a caller passes makes a policy panic.
package policy
