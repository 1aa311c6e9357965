package workload

import (
	"math"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

// Elastic simulates jobs whose GPUs and batch size change between rounds,
// as in Pollux's evaluation: each job trains one App, and its progress is
// counted in scale-invariant steps, the steps at the App's initial batch
// size M0 that make the same statistical progress. With K GPUs over the
// placement's nodes and global batch M, a step splits M into s+1
// micro-steps of m examples per GPU (m ≤ the App's LocalBatchMax), takes
// T = step + s·(step − sync) seconds from the App's measured step and sync
// times, and makes Gain(M) = EFFICIENCY(M)·M/M0 steps of progress, with the
// App's true gradient statistics at the job's current epoch. Set Speed and
// Observe of a Simulation to the methods of the same Elastic.
//
// The jobs report what a real job would: the throughput model fitted to all
// of the App's measurements (an oracle, for every policy alike), the
// gradient statistics at their current progress and batch, the largest GPU
// count they ran on, and their restarts (counted by the Simulation). Use
// Prepare to give jobs those facts before they first run, as if each had
// been profiled on one GPU at submission.
type Elastic struct {
	// Apps maps a job ID to the App it trains.
	Apps map[string]*App
}

// Prepare sets the Elastic facts of the jobs that train an App to what they
// report at submission.
func (e *Elastic) Prepare(jobs []policy.Job) {
	for i := range jobs {
		j := &jobs[i]
		app := e.Apps[j.ID]
		if app == nil || j.Elastic == nil {
			continue
		}
		el := *j.Elastic
		el.Perf = app.Perf
		g := grad(app, 0, float64(el.BatchSize))
		el.GradSqr, el.GradVar = g.Sqr, g.Var
		el.ProfiledGPUs = max(el.ProfiledGPUs, 1)
		j.Elastic = &el
	}
}

// grad returns the App's true gradient statistics at progress and batch,
// floored as a real estimator reports them (Sqr ≥ 0, Var ≥ 10⁻⁶): some
// measured epochs have negative values.
func grad(app *App, progress, batch float64) efficiency.Grad {
	g := app.Grad(progress, batch)
	return efficiency.Grad{Sqr: math.Max(g.Sqr, 0), Var: math.Max(g.Var, 1e-6)}
}

// batch returns the global batch a grant runs at: the policy's choice, or
// the job's own.
func batch(j *policy.Job, g allocation.Grant, app *App) int {
	switch {
	case g.BatchSize > 0:
		return g.BatchSize
	case j.Elastic != nil:
		return j.Elastic.BatchSize
	}
	return app.BatchSize
}

// Speed returns the scale-invariant steps per second job j makes in run; a
// job without an App runs at its Throughput on the run's type.
func (e *Elastic) Speed(j *policy.Job, g allocation.Grant, run placement.Run) float64 {
	app := e.Apps[j.ID]
	if app == nil {
		return j.Throughput[run.Accelerator]
	}
	perNode := make([]int, 0, len(run.Assignments))
	k := 0
	for _, a := range run.Assignments {
		perNode = append(perNode, a.GPUs)
		k += a.GPUs
	}
	if k == 0 {
		return 0
	}
	b := batch(j, g, app)
	m, s := efficiency.Split(b, k, app.LocalBatchMax)
	step, sync := app.StepTime(perNode, float64(m))
	t := step + float64(s)*math.Max(step-sync, 0)
	if !(t > 0) {
		return 0
	}
	total := float64(k * m * (s + 1))
	gp := efficiency.Goodput{Grad: grad(app, j.StepsDone, total), BatchSize: app.BatchSize}
	return gp.Gain(total) / t
}

// Observe updates what job j reports after it ran: its gradient statistics
// at its new progress and batch, and the largest GPU count it ran on.
func (e *Elastic) Observe(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration) {
	app := e.Apps[j.ID]
	if app == nil || j.Elastic == nil {
		return
	}
	k := sumGPUs(run.Assignments)
	b := batch(j, g, app)
	gr := grad(app, j.StepsDone, float64(b))
	j.Elastic.GradSqr, j.Elastic.GradVar = gr.Sqr, gr.Var
	j.Elastic.Perf = app.Perf
	j.Elastic.ProfiledGPUs = max(j.Elastic.ProfiledGPUs, k)
}
