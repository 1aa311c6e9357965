package policy

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/dlsched/dlsched/allocation"
)

// Validate reports whether s is well formed as a whole and in every job: a
// valid cluster; unique, non-empty job IDs; non-negative numbers within
// range (see MaxMagnitude);
// throughputs only on accelerator types the cluster has, positive on at least
// one type whose servers can hold the job's workers; GPU counts that are
// multiples of the worker size; arrivals not after Now; placements on known
// servers in whole workers; and consistent per-system facts. Errors wrap
// ErrInvalidSnapshot and name the job and the field.
//
// Validate is the strict check: policies use Screen, which leaves a bad job
// out of the round instead of failing it.
func Validate(s *Snapshot) error {
	if err := validateWhole(s); err != nil {
		return err
	}
	cs := newCensus(s.Cluster)
	ids := jobIDs(s)
	for i := range s.Jobs {
		if err := validateJob(s, &s.Jobs[i], cs, ids); err != nil {
			return fmt.Errorf("%w: job %q: %w", ErrInvalidSnapshot, s.Jobs[i].ID, err)
		}
	}
	return nil
}

// Screen splits s into the jobs a policy can schedule and the ones it must
// leave out. Only a snapshot that is malformed as a whole (nil, an invalid
// cluster, a negative Now, an empty or duplicate job ID) is an error, wrapping
// ErrInvalidSnapshot. A job that fails Validate's checks, or that can never
// fit on the cluster, is left out with its reason ("gpus: ..."), keyed by its
// ID; the returned snapshot holds the other jobs, in their order, with
// co-location facts about left-out partners dropped. When no job is left out,
// Screen returns s itself and a nil map.
func Screen(s *Snapshot) (*Snapshot, map[string]string, error) {
	if err := validateWhole(s); err != nil {
		return nil, nil, err
	}
	cs := newCensus(s.Cluster)
	ids := jobIDs(s)
	var out map[string]string
	for i := range s.Jobs {
		if err := validateJob(s, &s.Jobs[i], cs, ids); err != nil {
			if out == nil {
				out = make(map[string]string)
			}
			out[s.Jobs[i].ID] = err.Error()
		}
	}
	if out == nil {
		return s, nil, nil
	}
	kept := &Snapshot{Now: s.Now, Cluster: s.Cluster, Jobs: make([]Job, 0, len(s.Jobs)-len(out))}
	for _, j := range s.Jobs {
		if _, left := out[j.ID]; left {
			continue
		}
		for partner := range j.Colocated {
			if _, left := out[partner]; left {
				j.Colocated = maps.Clone(j.Colocated) // the caller's job stays as it was
				maps.DeleteFunc(j.Colocated, func(p string, _ map[allocation.Accelerator]float64) bool {
					_, left := out[p]
					return left
				})
				break
			}
		}
		kept.Jobs = append(kept.Jobs, j)
	}
	return kept, out, nil
}

// Reason returns the part of a job's error that a decision reports in
// Unscheduled: the field and what is wrong with it ("gpus: wants 8 GPUs
// ..."), without the snapshot and job prefix of errors such as Runnable's.
func Reason(err error) string {
	if fe, ok := errors.AsType[*fieldError](err); ok {
		return fe.Error()
	}
	return err.Error()
}

// Leave records in d that job id is left out of the round, and why. A
// policy calls it for a job it cannot schedule, such as one that lacks a
// fact the policy needs.
func (d *Decision) Leave(id, reason string) {
	if d.Unscheduled == nil {
		d.Unscheduled = make(map[string]string)
	}
	d.Unscheduled[id] = reason
}

func validateWhole(s *Snapshot) error {
	if s == nil {
		return fmt.Errorf("%w: nil snapshot", ErrInvalidSnapshot)
	}
	if err := s.Cluster.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSnapshot, err)
	}
	if s.Now < 0 {
		return fmt.Errorf("%w: now: %v is negative", ErrInvalidSnapshot, s.Now)
	}
	seen := make(map[string]bool, len(s.Jobs))
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.ID == "" {
			return fmt.Errorf("%w: job %d: id: empty", ErrInvalidSnapshot, i)
		}
		if seen[j.ID] {
			return fmt.Errorf("%w: job %q: id: duplicate", ErrInvalidSnapshot, j.ID)
		}
		seen[j.ID] = true
	}
	return nil
}

func jobIDs(s *Snapshot) map[string]bool {
	ids := make(map[string]bool, len(s.Jobs))
	for i := range s.Jobs {
		ids[s.Jobs[i].ID] = true
	}
	return ids
}

// fieldError is a problem with one field of a job; Validate adds the job.
type fieldError struct {
	field, msg string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func bad(field, format string, args ...any) error {
	return &fieldError{field, fmt.Sprintf(format, args...)}
}

// The range of a snapshot's numbers. A positive rate or size (a
// throughput, a weight, steps_total, an epoch's seconds) lies in
// [MinPositive, MaxMagnitude], and every other number of a job at most
// MaxMagnitude, but for the gradient statistics, which need only be finite. Within the range, the products, quotients and sums a
// policy forms of a few of them stay far from float64's overflow and
// underflow, so no decision or saved state can hold an infinity or NaN;
// beyond it, a number is a unit mistake (10¹⁵ steps or GPU-seconds is
// 3·10⁷ GPU-years).
const (
	MinPositive  = 1e-12
	MaxMagnitude = 1e15
)

// nonNeg checks a count or accumulator: finite, in [0, MaxMagnitude].
func nonNeg(field string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return bad(field, "%v is not a finite non-negative number", x)
	}
	if x > MaxMagnitude {
		return bad(field, "%v is above %v", x, MaxMagnitude)
	}
	return nil
}

// rate checks a rate or size: 0, or in [MinPositive, MaxMagnitude].
func rate(field string, x float64) error {
	if err := nonNeg(field, x); err != nil {
		return err
	}
	if x > 0 && x < MinPositive {
		return bad(field, "%v is below %v; use 0 or a number in [%v, %v]", x, MinPositive, MinPositive, MaxMagnitude)
	}
	return nil
}

// census is what Validate needs of the cluster, computed once per snapshot:
// validating is linear in jobs plus servers, not their product.
type census struct {
	types   []allocation.Accelerator
	gpus    map[allocation.Accelerator]int
	servers map[string]allocation.Server
	sizes   map[allocation.Accelerator]map[int]int // server GPU count → servers, per type
	workers map[shape]int                          // memo of capacity
}

// shape is an accelerator type and a worker size.
type shape struct {
	t allocation.Accelerator
	w int
}

func newCensus(c allocation.Cluster) *census {
	cs := &census{
		types:   c.Types(),
		gpus:    make(map[allocation.Accelerator]int),
		servers: make(map[string]allocation.Server, len(c.Servers)),
		sizes:   make(map[allocation.Accelerator]map[int]int),
		workers: make(map[shape]int),
	}
	for _, srv := range c.Servers {
		cs.gpus[srv.Accelerator] += srv.GPUs
		cs.servers[srv.ID] = srv
		if cs.sizes[srv.Accelerator] == nil {
			cs.sizes[srv.Accelerator] = make(map[int]int)
		}
		cs.sizes[srv.Accelerator][srv.GPUs]++
	}
	return cs
}

// capacity returns the most GPUs of type t that whole workers of w GPUs
// can use: Σ over servers of ⌊GPUs/w⌋·w. Distinct server sizes are few, so
// this is cheap, and memoized per shape.
func (cs *census) capacity(t allocation.Accelerator, w int) int {
	if w <= 1 {
		return cs.gpus[t]
	}
	sh := shape{t, w}
	if n, ok := cs.workers[sh]; ok {
		return n
	}
	n := 0
	for size, count := range cs.sizes[t] {
		n += size / w * w * count
	}
	cs.workers[sh] = n
	return n
}

func validateJob(s *Snapshot, j *Job, cs *census, ids map[string]bool) error {
	types := cs.types
	for _, f := range []struct {
		name  string
		v     float64
		check func(string, float64) error
	}{
		{"weight", j.Weight, rate},
		{"steps_done", j.StepsDone, nonNeg},
		{"steps_total", j.StepsTotal, rate},
		{"attained_gpu_seconds", j.AttainedGPUSeconds, nonNeg},
		{"skew", j.Skew, nonNeg},
	} {
		if err := f.check(f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case j.Skew > 1:
		return bad("skew", "%v is above 1", j.Skew)
	case j.StepsTotal > 0 && j.StepsDone > j.StepsTotal:
		return bad("steps_done", "%v exceeds steps_total %v", j.StepsDone, j.StepsTotal)
	case j.Arrival < 0:
		return bad("arrival", "%v is negative", j.Arrival)
	case j.Arrival > s.Now:
		return bad("arrival", "%v is after now (%v)", j.Arrival, s.Now)
	case j.Deadline < 0:
		return bad("deadline", "%v is negative", j.Deadline)
	case j.GPUs < 0:
		return bad("gpus", "%d is negative", j.GPUs)
	case j.GPUs == 0 && j.Elastic == nil:
		return bad("gpus", "0; only elastic jobs may leave the GPU count to the policy")
	case j.GPUsPerWorker < 0:
		return bad("gpus_per_worker", "%d is negative", j.GPUsPerWorker)
	case j.GPUs%j.Worker() != 0:
		return bad("gpus", "%d is not a multiple of gpus_per_worker %d", j.GPUs, j.Worker())
	}
	if err := throughputs("throughput", j.Throughput, types); err != nil {
		return err
	}
	if j.Elastic == nil {
		if err := j.runnable(cs); err != nil {
			return err
		}
	}
	for _, p := range j.Placement {
		srv, ok := cs.servers[p.Server]
		switch {
		case !ok:
			return bad("placement", "unknown server %q", p.Server)
		case p.GPUs < 1 || p.GPUs > srv.GPUs:
			return bad("placement", "%d GPUs on server %q, which has %d", p.GPUs, p.Server, srv.GPUs)
		case p.GPUs%j.Worker() != 0:
			return bad("placement", "%d GPUs on server %q splits a worker of gpus_per_worker %d", p.GPUs, p.Server, j.Worker())
		}
	}
	if !colocatedValid(j, ids, types) {
		// Report the first bad partner in ID order.
		for _, partner := range slices.Sorted(maps.Keys(j.Colocated)) {
			field := fmt.Sprintf("colocated[%s]", partner)
			if partner == j.ID || !ids[partner] {
				return bad(field, "partner must be another job of the snapshot")
			}
			if err := throughputs(field, j.Colocated[partner], types); err != nil {
				return err
			}
		}
	}
	if j.Elastic != nil {
		if err := j.Elastic.validate(j.Worker()); err != nil {
			return err
		}
	}
	if j.Adaptive != nil {
		if err := j.Adaptive.validate(); err != nil {
			return err
		}
	}
	if j.Sensitivity != nil {
		if err := j.Sensitivity.Validate(); err != nil {
			// Validate names the field first: "cpus: empty".
			field, msg, _ := strings.Cut(err.Error(), ": ")
			return bad("sensitivity."+field, "%s", msg)
		}
	}
	return nil
}

func throughputs(field string, t map[allocation.Accelerator]float64, types []allocation.Accelerator) error {
	ok := true
	for k, x := range t { // the common case, without allocating
		if _, known := slices.BinarySearch(types, k); !known || !(x == 0 || x >= MinPositive && x <= MaxMagnitude) {
			ok = false
			break
		}
	}
	if ok {
		return nil
	}
	// Report the first bad entry in key order, whatever the map's order.
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if _, ok := slices.BinarySearch(types, k); !ok {
			return bad(field, "unknown accelerator %q (cluster has %v)", k, types)
		}
		if err := rate(fmt.Sprintf("%s[%s]", field, k), t[k]); err != nil {
			return err
		}
	}
	return nil
}

// colocatedValid reports whether every partner in j.Colocated is another
// job of the snapshot with valid throughputs. Partners alike often share
// one map (workload.Physics.Inform builds them so), which is checked once:
// a job has O(n) partners and a snapshot O(n²).
func colocatedValid(j *Job, ids map[string]bool, types []allocation.Accelerator) bool {
	var checked map[uintptr]bool
	for partner, t := range j.Colocated {
		if partner == j.ID || !ids[partner] {
			return false
		}
		m := reflect.ValueOf(t).Pointer()
		if checked[m] {
			continue
		}
		if throughputs("", t, types) != nil {
			return false
		}
		if checked == nil {
			checked = make(map[uintptr]bool)
		}
		checked[m] = true
	}
	return true
}

// Runnable reports whether the job, with its GPU count, can run on cluster c:
// some accelerator type on which its throughput is positive has servers that
// hold j.GPUs GPUs in whole workers of j.Worker() GPUs. Validate applies it to every job except elastic ones, whose
// GPU count a policy may change; a policy that keeps GPU counts fixed applies
// it to those too. The error wraps ErrInvalidSnapshot and names the job.
//
// It takes the measure of the whole cluster at each call: a policy that
// checks many jobs builds a Census once and asks it instead.
func (j *Job) Runnable(c allocation.Cluster) error { return NewCensus(c).Runnable(j) }

// Census is what deciding whether jobs fit needs of a cluster, measured
// once: checking n jobs against a Census costs O(n + servers), where
// Job.Runnable for each costs O(n·servers). It is not safe for concurrent
// use.
type Census struct{ cs *census }

// NewCensus measures cluster c.
func NewCensus(c allocation.Cluster) Census { return Census{newCensus(c)} }

// Runnable is Job.Runnable on the census' cluster.
func (c Census) Runnable(j *Job) error {
	if err := j.runnable(c.cs); err != nil {
		return fmt.Errorf("%w: job %q: %w", ErrInvalidSnapshot, j.ID, err)
	}
	return nil
}

func (j *Job) runnable(cs *census) error {
	var runnable []string
	for _, k := range cs.types {
		if j.Throughput[k] > 0 {
			n := cs.capacity(k, j.Worker())
			if n >= j.GPUs {
				return nil
			}
			runnable = append(runnable, fmt.Sprintf("%s: %d", k, n))
		}
	}
	if len(runnable) == 0 {
		return bad("throughput", "zero on every accelerator type; the job cannot run")
	}
	if j.Worker() > 1 {
		return bad("gpus", "wants %d GPUs at once in workers of %d, more than any type it can run on holds in whole workers (%v)", j.GPUs, j.Worker(), runnable)
	}
	return bad("gpus", "wants %d GPUs at once, more than any type it can run on has (%v)", j.GPUs, runnable)
}

func (e *Elastic) validate(worker int) error {
	// The gradient statistics are in the model's own units (AdaptDL's traces
	// hold variances near 10¹⁶) and enter only as their ratio, where an
	// overflow means "noise dominates": they need only be finite.
	for _, f := range []struct {
		name string
		v    float64
	}{{"elastic.grad_sqr", e.GradSqr}, {"elastic.grad_var", e.GradVar}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return bad(f.name, "%v is not a finite non-negative number", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"elastic.perf.alpha_c", e.Perf.AlphaC}, {"elastic.perf.beta_c", e.Perf.BetaC},
		{"elastic.perf.alpha_n", e.Perf.AlphaN}, {"elastic.perf.beta_n", e.Perf.BetaN},
		{"elastic.perf.alpha_r", e.Perf.AlphaR}, {"elastic.perf.beta_r", e.Perf.BetaR},
		{"elastic.perf.gamma", e.Perf.Gamma},
	} {
		if err := nonNeg(f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case e.ProfiledGPUs < 0:
		return bad("elastic.profiled_gpus", "%d is negative", e.ProfiledGPUs)
	case e.Restarts < 0:
		return bad("elastic.restarts", "%d is negative", e.Restarts)
	case e.MinGPUs < 0:
		return bad("elastic.min_gpus", "%d is negative", e.MinGPUs)
	case e.MaxGPUs < 0 || (e.MaxGPUs > 0 && e.MaxGPUs < e.MinGPUs):
		return bad("elastic.max_gpus", "%d is negative or below min_gpus %d", e.MaxGPUs, e.MinGPUs)
	case e.BatchSize < 1:
		return bad("elastic.batch_size", "%d; the initial batch size must be positive", e.BatchSize)
	case e.MaxBatchSize < 0 || (e.MaxBatchSize > 0 && e.MaxBatchSize < e.BatchSize):
		return bad("elastic.max_batch_size", "%d is negative or below batch_size %d", e.MaxBatchSize, e.BatchSize)
	case e.LocalBatchMin < 0:
		return bad("elastic.local_batch_min", "%d is negative", e.LocalBatchMin)
	case e.LocalBatchMax < 0 || (e.LocalBatchMax > 0 && e.LocalBatchMax < e.LocalBatchMin):
		return bad("elastic.local_batch_max", "%d is negative or below local_batch_min %d", e.LocalBatchMax, e.LocalBatchMin)
	case e.Perf.Gamma != 0 && e.Perf.Gamma < 1:
		return bad("elastic.perf.gamma", "%v; the overlap exponent is at least 1", e.Perf.Gamma)
	case e.MinGPUs%worker != 0:
		return bad("elastic.min_gpus", "%d is not a multiple of gpus_per_worker %d", e.MinGPUs, worker)
	case e.MaxGPUs%worker != 0:
		return bad("elastic.max_gpus", "%d is not a multiple of gpus_per_worker %d", e.MaxGPUs, worker)
	}
	return nil
}

func (a *Adaptive) validate() error {
	n := len(a.Regimes)
	switch {
	case n == 0:
		return bad("adaptive.regimes", "empty")
	case len(a.EpochSeconds) != n:
		return bad("adaptive.epoch_seconds", "%d values for %d regimes", len(a.EpochSeconds), n)
	case a.History != nil && len(a.History) != n:
		return bad("adaptive.history", "%d values for %d regimes", len(a.History), n)
	case a.Epochs < 1:
		return bad("adaptive.epochs", "%d; a job trains at least one epoch", a.Epochs)
	}
	done := 0
	for i := range n {
		if a.Regimes[i] < 1 || (i > 0 && a.Regimes[i] <= a.Regimes[i-1]) {
			return bad("adaptive.regimes", "batch sizes must be positive and strictly ascending: %v", a.Regimes)
		}
		if x := a.EpochSeconds[i]; !(x >= MinPositive && x <= MaxMagnitude) { // named only when wrong: Screen checks every job every call
			field := fmt.Sprintf("adaptive.epoch_seconds[%d]", i)
			if x == 0 {
				return bad(field, "0 is not a finite positive number")
			} else if err := rate(field, x); err != nil {
				return err
			}
		}
		if a.History != nil {
			if a.History[i] < 0 {
				return bad(fmt.Sprintf("adaptive.history[%d]", i), "%d is negative", a.History[i])
			}
			if a.History[i] > a.Epochs-done { // compared before adding, which could overflow
				return bad(fmt.Sprintf("adaptive.history[%d]", i), "%d puts the epochs done above the %d in total", a.History[i], a.Epochs)
			}
			done += a.History[i]
		}
	}
	if a.BatchSize != 0 && a.Regime() < 0 {
		return bad("adaptive.batch_size", "%d is not one of the regimes %v", a.BatchSize, a.Regimes)
	}
	return nil
}
