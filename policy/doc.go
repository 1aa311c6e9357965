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
// Runner runs a policy in the background for a scheduler's hot paths: it
// recomputes the decision when triggered or woken, rate-limited, and
// publishes it for lock-free reads. It is plumbing, not a policy, and uses
// the wall clock.
//
// Every policy validates its snapshot with Validate before it computes
// anything: bad input yields an error wrapping ErrInvalidSnapshot that names
// the job and the field, never a panic.
package policy
