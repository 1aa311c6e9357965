// Package kubernetes schedules GPU training jobs on a Kubernetes cluster
// with any dlsched policy: it turns nodes and pods into a policy.Snapshot
// each round, asks the policy, and carries out its changes by gang binding
// and eviction. It follows no paper of its own; the policy it runs does.
//
// # Jobs from pods
//
// The adapter schedules the pods whose spec.schedulerName is its
// SchedulerName ("dlsched"). Pods with the same value of the JobLabel
// ("dlsched.io/job") in one namespace form a job, whose ID is
// "namespace/value". Each pod is one worker: it requests the job's GPUs per
// worker as nvidia.com/gpu, and every pod of a job must request the same
// number. A job's GPUs are its pods times that number, so a job of two pods
// of four GPUs is bound as 4 + 4, never 5 + 3.
//
// A job's facts are annotations, read from its pods, which must agree:
//
//	dlsched.io/weight       priority weight, a positive number (default 1)
//	dlsched.io/tenant       the user or team the job belongs to
//	dlsched.io/throughput   steps per second by accelerator type, a JSON
//	                        object {"v100": 10, "k80": 2.5}; default 1 on
//	                        every type of the cluster
//	dlsched.io/steps        the job's total steps (default unknown)
//	dlsched.io/workers      the number of pods the job will have; until they
//	                        all exist it waits (default: the pods present)
//	dlsched.io/facts        any other job fact in the snapshot schema of
//	                        package policy, as a JSON object: "elastic",
//	                        "adaptive", "sensitivity", "deadline", ...
//
// A pod whose annotations or request do not parse gets a Warning Event
// naming the annotation and the error, and its job is left out of the
// round; no other job is affected.
//
// # Cluster from nodes
//
// Each node with nvidia.com/gpu allocatable is a server: its GPUs, its
// accelerator type from the AcceleratorLabel (default
// "nvidia.com/gpu.product"; "gpu" when absent), and its allocatable CPU
// and memory minus the requests of pods not scheduled by dlsched. A node
// that is cordoned or not Ready keeps only the GPUs dlsched's pods already
// hold there: running jobs stay, no new one comes.
//
// # Rounds
//
// Each round the adapter observes the cluster, decides, writes down what it
// is about to do, and does it:
//
//   - Start: every pod of the job is bound (the Binding subresource) to the
//     decision's servers, whole workers per server. A gang is bound only
//     when all its GPUs are free (not held by pods still terminating); one
//     that cannot bind completely is rolled back, so a job never runs on
//     part of its pods.
//   - Stop, Migrate, Resize: the job's pods are evicted (the Eviction API,
//     with Grace to checkpoint) and, for pods no controller owns, created
//     again unbound once they are gone, to be started again by a later
//     round. (Pods are rigid: a job's GPUs are its pods', so a Resize
//     restarts the job at its size.)
//   - Keep: nothing.
//
// The GPU-seconds each job has held, its attained service, are added up
// from round to round. Each pod gets an Event when it is bound, evicted or
// left waiting, saying which policy decided and why.
//
// # Restarts and replicas
//
// With State set, the adapter keeps a journal in that ConfigMap: the
// policy's state (policy.Stateful), attained service, the epoch of its
// clock, and, before it acts, the pods it is about to bind and the pods it
// must create again. An adapter killed at any moment and started again
// first finishes what the journal holds (binding the rest of a gang, or
// rolling it back; creating evicted pods again), so no job is lost,
// duplicated or moved needlessly. Run under a Lease (Elect), of two
// replicas only the leader acts.
package kubernetes
