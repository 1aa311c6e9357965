package sim

import "time"

// JobRecord is what a simulation records of one job.
type JobRecord struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant,omitempty"`
	GPUs   int    `json:"gpus"`
	// Arrival is the job's true arrival; admission waits for the next
	// round boundary, but JCT counts from here.
	Arrival time.Duration `json:"arrival"`
	// FirstRun is when the job first ran; Ran is false if it never did.
	FirstRun time.Duration `json:"first_run"`
	Ran      bool          `json:"ran"`
	// Finish is when the job completed; Finished is false if the
	// simulation ended first.
	Finish   time.Duration `json:"finish"`
	Finished bool          `json:"finished"`
	// Exclusive is the job's run time alone on its own GPUs of the type
	// it runs fastest on: T_excl of finish-time fairness.
	Exclusive time.Duration `json:"exclusive"`
	// ActiveJobs is the mean number of jobs in the system over the job's
	// lifetime, weighted by time, for the contention variant of finish-time
	// fairness.
	ActiveJobs float64 `json:"active_jobs"`
	// GPUSeconds is the GPU time the job ran: GPUs × seconds.
	GPUSeconds float64 `json:"gpu_seconds"`
	// Preemptions counts the times the job stopped running before it
	// finished; Migrations the times it kept running on other GPUs.
	Preemptions int `json:"preemptions,omitempty"`
	Migrations  int `json:"migrations,omitempty"`
	// Unscheduled is why the policy left the job out (an invalid job, one
	// that can never fit, one that lacks a fact the policy needs); such a
	// job is dropped from the simulation unfinished. Empty for the others.
	Unscheduled string `json:"unscheduled,omitempty"`
}

// JCT returns the job completion time, Finish − Arrival.
func (r JobRecord) JCT() time.Duration { return r.Finish - r.Arrival }

// RoundRecord is what a simulation records of one round.
type RoundRecord struct {
	Start  time.Duration `json:"start"`
	Length time.Duration `json:"length"`
	// Active is the number of admitted, unfinished jobs; Running of them
	// ran this round.
	Active  int `json:"active"`
	Running int `json:"running"`
	// BusyGPUs and GPUs count the GPUs in use and in the cluster.
	BusyGPUs int `json:"busy_gpus"`
	GPUs     int `json:"gpus"`
}
