package policy

import (
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/throughput"
)

// Snapshot is an immutable view of one scheduling round. In JSON, times are
// in seconds and field names are snake_case.
type Snapshot struct {
	// Now is the current time, measured from an epoch of the caller's choice.
	Now     time.Duration      `json:"-"`
	Cluster allocation.Cluster `json:"cluster"`
	// Jobs are the active jobs. Order does not matter: policies work in ID
	// order.
	Jobs []Job `json:"jobs"`
}

// Job holds what a scheduler knows about one job. The common facts come
// first; the per-system facts after them are optional and only read by the
// policies that need them, each of which documents what it does for a job
// that lacks one: a fallback, or leaving the job out of the round
// (Decision.Unscheduled). A missing fact never fails the round.
type Job struct {
	ID string `json:"id"`
	// Tenant is the user or team the job belongs to; empty means none.
	Tenant string `json:"tenant,omitempty"`
	// Weight is the job's priority weight; zero means 1.
	Weight float64 `json:"weight,omitempty"`
	// GPUs is the number of GPUs the job needs at once (its scale factor).
	// It may be zero only for elastic jobs, whose GPU count a policy picks.
	GPUs int `json:"gpus"`
	// GPUsPerWorker is the size of one of the job's workers (pods, ranks):
	// its GPUs come in GPUs/GPUsPerWorker workers, and each worker's GPUs
	// lie on one server. Zero means 1, so the GPUs may be split any way.
	// GPUs (and an elastic job's limits) must be multiples of it.
	GPUsPerWorker int `json:"gpus_per_worker,omitempty"`
	// Arrival is when the job was submitted, on the same clock as Now.
	Arrival time.Duration `json:"-"`
	// Throughput is the job's training throughput in steps per second on
	// each accelerator type, using all its GPUs. Zero means it cannot run on
	// that type; a type that is missing counts as zero.
	Throughput map[allocation.Accelerator]float64 `json:"throughput"`
	// StepsDone and StepsTotal count training steps; StepsTotal zero means
	// the length is unknown.
	StepsDone  float64 `json:"steps_done,omitempty"`
	StepsTotal float64 `json:"steps_total,omitempty"`
	// AttainedGPUSeconds is the service received so far: GPUs × seconds run.
	AttainedGPUSeconds float64 `json:"attained_gpu_seconds,omitempty"`
	// Deadline is when the job should finish, on the clock of Now; zero
	// means none.
	Deadline time.Duration `json:"-"`
	// Placement is where the job runs now; empty means it is not running.
	Placement []allocation.Assignment `json:"placement,omitempty"`

	// Colocated maps a partner job ID to this job's throughput, per type,
	// while it shares GPUs with that partner (space sharing in Gavel,
	// packing in Gandiva).
	Colocated map[string]map[allocation.Accelerator]float64 `json:"colocated,omitempty"`
	// Skew is the share of the model's parameters in its largest tensor, in
	// [0,1]; Tiresias consolidates jobs with high skew. Zero means unknown.
	Skew float64 `json:"skew,omitempty"`
	// Elastic describes a job whose GPU count and batch size a policy may
	// choose (Pollux).
	Elastic *Elastic `json:"elastic,omitempty"`
	// Adaptive describes a job that changes its batch size as it trains
	// (Shockwave).
	Adaptive *Adaptive `json:"adaptive,omitempty"`
	// Sensitivity describes how the job's throughput depends on the CPU and
	// memory it gets per GPU, relative to Throughput (Synergy): the job makes
	// Throughput × Sensitivity.At(c, m) steps per second with c cores and m
	// GB per GPU.
	Sensitivity *throughput.Sensitivity `json:"sensitivity,omitempty"`
}

// EffectiveWeight returns the job's weight, with zero meaning 1.
func (j *Job) EffectiveWeight() float64 {
	if j.Weight == 0 {
		return 1
	}
	return j.Weight
}

// Worker returns the GPUs of one of the job's workers: GPUsPerWorker, with
// zero meaning 1.
func (j *Job) Worker() int {
	return max(j.GPUsPerWorker, 1)
}

// Elastic holds the facts Pollux needs: the job's throughput model, its
// gradient statistics and the limits within which its resources may change.
type Elastic struct {
	// MinGPUs and MaxGPUs bound the GPU count; MaxGPUs zero means no bound.
	// Both are multiples of the job's worker size: an elastic job grows and
	// shrinks by whole workers.
	MinGPUs int `json:"min_gpus,omitempty"`
	MaxGPUs int `json:"max_gpus,omitempty"`
	// BatchSize is the initial global batch size, the reference for
	// statistical efficiency; MaxBatchSize bounds the global batch size
	// (zero means BatchSize).
	BatchSize    int `json:"batch_size"`
	MaxBatchSize int `json:"max_batch_size,omitempty"`
	// LocalBatchMin and LocalBatchMax bound the per-GPU batch size; zero
	// means no bound.
	LocalBatchMin int `json:"local_batch_min,omitempty"`
	LocalBatchMax int `json:"local_batch_max,omitempty"`
	// Perf are the fitted parameters of the iteration-time model; the zero
	// value means not yet fitted, and the job is then assumed to scale
	// linearly.
	Perf throughput.Params `json:"perf"`
	// GradSqr and GradVar are the squared norm of the gradient and the
	// trace of its covariance at BatchSize (efficiency.Grad); both zero
	// means not yet measured, and every batch size is then taken to be
	// fully efficient.
	GradSqr float64 `json:"grad_sqr"`
	GradVar float64 `json:"grad_var"`
	// ProfiledGPUs is the largest GPU count the job has been measured on;
	// Pollux offers a job at most twice that, so that it grows only as fast
	// as its model can be trusted. Zero means never measured.
	ProfiledGPUs int `json:"profiled_gpus,omitempty"`
	// Restarts counts how often the job has been restarted to change its
	// resources; Pollux discounts further restarts of a job that has had
	// many.
	Restarts int `json:"restarts,omitempty"`
}

// Adaptive holds the facts Shockwave needs about a job whose batch size
// changes during training.
type Adaptive struct {
	// Regimes are the batch sizes the job may use, ascending.
	Regimes []int `json:"regimes"`
	// EpochSeconds is the duration of one epoch in each regime on the job's
	// GPUs, aligned with Regimes.
	EpochSeconds []float64 `json:"epoch_seconds"`
	// Epochs is the total number of epochs the job trains.
	Epochs int `json:"epochs"`
	// History counts the epochs completed so far in each regime, aligned
	// with Regimes.
	History []int `json:"history,omitempty"`
	// BatchSize is the batch size in force now, one of Regimes; zero means
	// Regimes[0]. The epoch under way is observed in this regime.
	BatchSize int `json:"batch_size,omitempty"`
}

// Done returns the number of epochs completed, the sum of History.
func (a *Adaptive) Done() int {
	n := 0
	for _, h := range a.History {
		n += h
	}
	return n
}

// Regime returns the index in Regimes of the batch size in force now, or -1
// if BatchSize is not one of them.
func (a *Adaptive) Regime() int {
	if a.BatchSize == 0 {
		return 0
	}
	for i, b := range a.Regimes {
		if b == a.BatchSize {
			return i
		}
	}
	return -1
}
