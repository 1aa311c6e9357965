package gavel

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// prepare validates s and returns its jobs in ID order, after checking what
// every Gavel policy needs beyond Validate: each job has a GPU count that some
// type it can run on holds (Validate lets elastic jobs through without one,
// and such a job would silently get nothing here).
func prepare(ctx context.Context, name string, s *policy.Snapshot) ([]*policy.Job, error) {
	if err := policy.Validate(s); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	jobs := sortedJobs(s.Jobs)
	for _, j := range jobs {
		if j.GPUs == 0 {
			return nil, fmt.Errorf("%w: job %q: gpus: 0; %s needs the number of GPUs the job runs on",
				policy.ErrInvalidSnapshot, j.ID, name)
		}
		if err := j.Runnable(s.Cluster); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// empty returns the decision for a snapshot without jobs, or err.
func empty(name string, err error) (*policy.Decision, error) {
	if err != nil {
		return nil, err
	}
	return &policy.Decision{Policy: name, Allocation: allocation.Allocation{}}, nil
}

// newProgram builds the allocation program of jobs on c with throughput
// tput(job, type), and returns it with the job IDs and the throughput matrix
// (columns in c.Types() order).
func newProgram(c allocation.Cluster, jobs []*policy.Job, solver allocation.Solver,
	tput func(*policy.Job, allocation.Accelerator) float64) (*allocation.Program, []string, [][]float64) {
	types := c.Types()
	ids := make([]string, len(jobs))
	gpus := make([]int, len(jobs))
	t := make([][]float64, len(jobs))
	for j, job := range jobs {
		ids[j], gpus[j] = job.ID, job.GPUs
		t[j] = make([]float64, len(types))
		for k, a := range types {
			t[j][k] = tput(job, a)
		}
	}
	prog := allocation.NewProgram(c, gpus, t)
	prog.Solver = solver
	return prog, ids, t
}

// normalized builds the allocation program of jobs on c and each job's
// normalized throughput z_j = y_j / T^prop_j, with T^prop_j = Σ_k T_jk N_k /
// Σ_k N_k. When agnostic, T_jk is 1 on every type where the job can run and
// T^prop_j is 1, as in Gavel.
func normalized(c allocation.Cluster, jobs []*policy.Job, agnostic bool, solver allocation.Solver) (*allocation.Program, []string, []allocation.Expr) {
	prog, ids, tput := newProgram(c, jobs, solver, func(j *policy.Job, t allocation.Accelerator) float64 {
		if x := j.Throughput[t]; !agnostic || x == 0 {
			return x
		}
		return 1
	})
	types := c.Types()
	capacity := make([]float64, len(types))
	var total float64
	for k, t := range types {
		capacity[k] = float64(c.GPUs(t))
		total += capacity[k]
	}
	z := make([]allocation.Expr, len(jobs))
	coef := make([]float64, len(types))
	for j := range jobs {
		prop := 1.0
		if !agnostic {
			prop = 0
			for k := range types {
				prop += tput[j][k] * capacity[k] / total
			}
		}
		for k := range types {
			coef[k] = tput[j][k] / prop // ≤ ΣN/N_k: no overflow
		}
		z[j] = prog.Linear(j, coef)
	}
	return prog, ids, z
}

// sortedJobs returns pointers to the jobs in ID order.
func sortedJobs(jobs []policy.Job) []*policy.Job {
	out := make([]*policy.Job, len(jobs))
	for i := range jobs {
		out[i] = &jobs[i]
	}
	slices.SortFunc(out, func(a, b *policy.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
