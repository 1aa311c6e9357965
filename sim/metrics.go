package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/policy"
)

// DefaultUnfairThreshold is the finish-time fairness above which a job counts
// as unfairly treated when Options.UnfairThreshold is zero: Shockwave's
// FTF_FAIRNESS_THRESHOLD, ρ > 1.05 (0.05 of slack for throughput noise).
const DefaultUnfairThreshold = 1.05

// ErrInvalidRecord reports a job or round record that cannot be measured:
// a negative time, a finish before the arrival, a finished job without a
// positive Exclusive time, a duplicate job ID, and so on. The message names
// the job (or round) and the field.
var ErrInvalidRecord = errors.New("sim: invalid record")

// ErrNoFinishedJobs reports a window in which no job finished, so that no
// completion-time statistic exists.
var ErrNoFinishedJobs = errors.New("sim: no finished job in the window")

// Window selects the jobs whose metrics are measured. The whole trace still
// counts where a metric is defined over it (N of finish-time fairness,
// makespan, utilization).
//
// The zero value selects every job. With IDs set, exactly those jobs are
// measured, in the order of IDs; an ID that is absent from the records or
// listed twice is an error. Otherwise the jobs are ordered by arrival (ties
// by ID, then by position in the input, the order of Result.Jobs) and the
// window is the index range [Start, End) of that order; End = 0 means the
// end of the trace. Gavel's continuous-trace protocol, which measures job IDs
// 4000–4999 of a trace numbered in arrival order, is Window{Start: 4000,
// End: 5000}. Setting IDs together with Start or End is an error.
type Window struct {
	Start int      `json:"start,omitempty"`
	End   int      `json:"end,omitempty"`
	IDs   []string `json:"ids,omitempty"`
}

// Options configure Summarize and PerJob.
type Options struct {
	// Window selects the jobs measured; the zero value measures all.
	Window Window `json:"window"`
	// GPUs is G of finish-time fairness, the number of GPUs in the
	// cluster. It is required: zero or negative is an error.
	GPUs int `json:"gpus"`
	// UnfairThreshold is the ρ above which (strictly) a job counts as
	// unfair; zero means DefaultUnfairThreshold (Shockwave's 1.05;
	// Shockwave's fidelity script uses 1.1). Negative, NaN or infinite is
	// an error.
	UnfairThreshold float64 `json:"unfair_threshold,omitempty"`
}

// JobMetrics holds the metrics of one measured job. Times are in seconds.
// Fields that need a finished job (JCT, FTF, FTFContention) are zero when
// Finished is false; TimeToFirstRun is zero when Ran is false.
type JobMetrics struct {
	ID       string `json:"id"`
	Finished bool   `json:"finished"`
	Ran      bool   `json:"ran"`
	// Unscheduled is true for a job the policy left out.
	Unscheduled bool `json:"unscheduled,omitempty"`
	// Preemptions and Migrations are the record's counts.
	Preemptions int `json:"preemptions"`
	Migrations  int `json:"migrations"`
	// JCT is Finish − Arrival.
	JCT float64 `json:"jct_s"`
	// TimeToFirstRun is FirstRun − Arrival.
	TimeToFirstRun float64 `json:"time_to_first_run_s"`
	// FTF is Shockwave's static finish-time fairness
	// ρ = JCT / (Exclusive · max(1, N/G)), N the number of jobs in the
	// whole trace and G Options.GPUs.
	FTF float64 `json:"ftf"`
	// FTFContention is the contention ("Themis") variant: N replaced by
	// the job's ActiveJobs.
	FTFContention float64 `json:"ftf_contention"`
}

// Summary holds the metrics of a simulation. Times are in seconds.
//
// The completion-time and fairness statistics are over the finished jobs of
// the window only: Unfinished counts the window's jobs that did not finish,
// so that a run cut short is visible rather than silently flattered.
type Summary struct {
	// TraceJobs is N, the number of jobs in the whole trace, and GPUs is G.
	TraceJobs int `json:"trace_jobs"`
	GPUs      int `json:"gpus"`
	// Jobs is the number of jobs measured (in the window), Finished and
	// Unfinished split it, NeverRan counts those that never ran and
	// Unscheduled those the policy left out (which are also unfinished).
	Jobs        int `json:"jobs"`
	Finished    int `json:"finished"`
	Unfinished  int `json:"unfinished"`
	NeverRan    int `json:"never_ran"`
	Unscheduled int `json:"unscheduled"`

	// AvgJCT is the arithmetic mean JCT of the finished jobs of the
	// window. MedianJCT is the middle value (the mean of the two middle
	// values for an even count). P99JCT is the 99th percentile by the
	// nearest-rank rule: the ⌈0.99·n⌉-th smallest of the n JCTs.
	AvgJCT    float64 `json:"avg_jct_s"`
	MedianJCT float64 `json:"median_jct_s"`
	P99JCT    float64 `json:"p99_jct_s"`

	// Makespan is over the whole trace, not the window: the last finish
	// minus the first arrival (Shockwave's and Gavel's final simulated
	// time when the trace starts at t = 0). If some job of the trace did
	// not finish, TraceUnfinished counts them and Makespan is only a lower
	// bound, from the jobs that did.
	Makespan        float64 `json:"makespan_s"`
	TraceUnfinished int     `json:"trace_unfinished"`

	// MeanFTF and WorstFTF are the mean and maximum static ρ over the
	// finished jobs of the window; UnfairFraction is the share of them
	// with ρ > UnfairThreshold. The Contention fields are the same for the
	// contention variant.
	MeanFTF                  float64 `json:"mean_ftf"`
	WorstFTF                 float64 `json:"worst_ftf"`
	UnfairFraction           float64 `json:"unfair_fraction"`
	MeanFTFContention        float64 `json:"mean_ftf_contention"`
	WorstFTFContention       float64 `json:"worst_ftf_contention"`
	UnfairFractionContention float64 `json:"unfair_fraction_contention"`
	UnfairThreshold          float64 `json:"unfair_threshold"`

	// Utilization is Σ BusyGPUs·Length / Σ GPUs·Length over all rounds
	// (the whole simulation, not the window); zero if there are no rounds
	// or they hold no GPU time.
	Utilization float64 `json:"utilization"`

	// MeanTimeToFirstRun is the mean of FirstRun − Arrival over the jobs
	// of the window that ran (responsiveness); zero if none ran.
	MeanTimeToFirstRun float64 `json:"mean_time_to_first_run_s"`

	// PreemptionsPerJob and MigrationsPerJob are the mean counts over the
	// jobs of the window: how often a policy stops a job before it
	// finishes, and moves one that keeps running (each a checkpoint and a
	// restart on a real cluster).
	PreemptionsPerJob float64 `json:"preemptions_per_job"`
	MigrationsPerJob  float64 `json:"migrations_per_job"`

	// DecisionP50 and DecisionP99 are the median and 99th percentile
	// (nearest rank) of the policy's wall-clock decision latency over the
	// simulation's calls, set by Result.Summary only: Summarize sees no
	// calls. They vary from run to run, as wall-clock times do.
	DecisionP50 float64 `json:"decision_p50_s"`
	DecisionP99 float64 `json:"decision_p99_s"`
	// DecisionTotal is the sum of those latencies: what deciding cost over
	// the whole simulation, which the percentiles of one call do not show
	// where a few crowded rounds take most of it.
	DecisionTotal float64 `json:"decision_total_s"`
}

// PerJob returns the metrics of each job in o.Window, in window order (see
// Window), for plots such as a CDF of finish-time fairness. It validates
// every record of the trace, not only the window's, and returns an error
// wrapping ErrInvalidRecord naming the job and field of the first bad one,
// or wrapping policy.ErrInvalidConfig for bad options.
func PerJob(jobs []JobRecord, o Options) ([]JobMetrics, error) {
	if _, err := o.threshold(); err != nil {
		return nil, err
	}
	if o.GPUs <= 0 {
		return nil, fmt.Errorf("%w: sim: metrics: gpus: %d must be positive", policy.ErrInvalidConfig, o.GPUs)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%w: sim: metrics: no jobs", ErrInvalidRecord)
	}
	for i := range jobs {
		if err := checkJobRecord(&jobs[i]); err != nil {
			return nil, err
		}
	}
	idx, err := o.Window.selectJobs(jobs)
	if err != nil {
		return nil, err
	}
	n := float64(len(jobs))
	g := float64(o.GPUs)
	out := make([]JobMetrics, len(idx))
	for k, i := range idx {
		r := &jobs[i]
		m := JobMetrics{ID: r.ID, Finished: r.Finished, Ran: r.Ran, Unscheduled: r.Unscheduled != "",
			Preemptions: r.Preemptions, Migrations: r.Migrations}
		if r.Ran {
			m.TimeToFirstRun = (r.FirstRun - r.Arrival).Seconds()
		}
		if r.Finished {
			m.JCT = r.JCT().Seconds()
			m.FTF = ftfRho(r.JCT(), r.Exclusive, n, g)
			m.FTFContention = ftfRho(r.JCT(), r.Exclusive, r.ActiveJobs, g)
		}
		out[k] = m
	}
	return out, nil
}

// Summarize computes the metrics of a simulation from its job records (the
// whole trace) and round records; see Summary for each metric's definition.
// It returns an error wrapping ErrInvalidRecord naming the job (or round)
// and field of a bad record, wrapping policy.ErrInvalidConfig for bad
// options, or wrapping ErrNoFinishedJobs if no job of the window finished.
func Summarize(jobs []JobRecord, rounds []RoundRecord, o Options) (Summary, error) {
	per, err := PerJob(jobs, o)
	if err != nil {
		return Summary{}, err
	}
	thr, _ := o.threshold()
	util, err := metricsUtilization(rounds)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{
		TraceJobs:       len(jobs),
		GPUs:            o.GPUs,
		Jobs:            len(per),
		UnfairThreshold: thr,
		Utilization:     util,
	}
	if len(per) == 0 {
		return Summary{}, fmt.Errorf("%w: the window selects no job", ErrNoFinishedJobs)
	}
	s.count(per)
	if s.Finished == 0 {
		return Summary{}, fmt.Errorf("%w: %d jobs measured, none finished", ErrNoFinishedJobs, s.Jobs)
	}
	s.fairness(per)
	s.completion(per)
	s.makespan(jobs)
	return s, nil
}

// count sets the counts of the window's jobs (finished, unfinished, never
// ran, unscheduled), their mean preemptions and migrations, and the mean
// time to first run of those that ran.
func (s *Summary) count(per []JobMetrics) {
	var ttfr float64
	var ran int
	for _, m := range per {
		s.PreemptionsPerJob += float64(m.Preemptions) / float64(len(per))
		s.MigrationsPerJob += float64(m.Migrations) / float64(len(per))
		if m.Ran {
			ran++
			ttfr += m.TimeToFirstRun
		} else {
			s.NeverRan++
		}
		if m.Unscheduled {
			s.Unscheduled++
		}
		if m.Finished {
			s.Finished++
		} else {
			s.Unfinished++
		}
	}
	if ran > 0 {
		s.MeanTimeToFirstRun = ttfr / float64(ran)
	}
}

// fairness sets the mean and worst finish-time fairness, static and
// contention, over the finished jobs, and the shares of them above
// s.UnfairThreshold. s.Finished must be positive.
func (s *Summary) fairness(per []JobMetrics) {
	var ftfΣ, ftfcΣ float64
	var unfair, unfairC int
	for _, m := range per {
		if !m.Finished {
			continue
		}
		ftfΣ += m.FTF
		ftfcΣ += m.FTFContention
		s.WorstFTF = max(s.WorstFTF, m.FTF)
		s.WorstFTFContention = max(s.WorstFTFContention, m.FTFContention)
		if m.FTF > s.UnfairThreshold {
			unfair++
		}
		if m.FTFContention > s.UnfairThreshold {
			unfairC++
		}
	}
	f := float64(s.Finished)
	s.MeanFTF, s.MeanFTFContention = ftfΣ/f, ftfcΣ/f
	s.UnfairFraction, s.UnfairFractionContention = float64(unfair)/f, float64(unfairC)/f
}

// completion sets the mean, median and 99th-percentile JCT of the finished
// jobs. s.Finished must be positive.
func (s *Summary) completion(per []JobMetrics) {
	var jcts []float64
	for _, m := range per {
		if m.Finished {
			jcts = append(jcts, m.JCT)
		}
	}
	slices.Sort(jcts)
	var Σ float64
	for _, v := range jcts {
		Σ += v
	}
	s.AvgJCT = Σ / float64(s.Finished)
	nj := len(jcts)
	if nj%2 == 1 {
		s.MedianJCT = jcts[nj/2]
	} else {
		s.MedianJCT = (jcts[nj/2-1] + jcts[nj/2]) / 2
	}
	s.P99JCT = nearestRank(jcts, 99)
}

// makespan sets the makespan over the whole trace, from the jobs that
// finished, and counts the trace's jobs that did not.
func (s *Summary) makespan(jobs []JobRecord) {
	first := jobs[0].Arrival
	var last time.Duration
	for i := range jobs {
		r := &jobs[i]
		first = min(first, r.Arrival)
		if r.Finished {
			last = max(last, r.Finish)
		} else {
			s.TraceUnfinished++
		}
	}
	if last > first {
		s.Makespan = (last - first).Seconds()
	}
}

// Summary summarizes the result as Summarize does, with the policy's
// decision latencies added.
func (r *Result) Summary(o Options) (Summary, error) {
	s, err := Summarize(r.Jobs, r.Rounds, o)
	if err != nil {
		return s, err
	}
	lat := make([]float64, len(r.Calls))
	for i, c := range r.Calls {
		lat[i] = c.Latency.Seconds()
		s.DecisionTotal += lat[i]
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		s.DecisionP50, s.DecisionP99 = nearestRank(lat, 50), nearestRank(lat, 99)
	}
	return s, nil
}

// nearestRank returns the p-th percentile of sorted, non-empty xs by the
// nearest-rank rule: the ⌈p/100·n⌉-th smallest.
func nearestRank(xs []float64, p int) float64 {
	n := len(xs)
	return xs[max(1, (p*n+99)/100)-1]
}

// threshold returns the unfair threshold in effect.
func (o Options) threshold() (float64, error) {
	t := o.UnfairThreshold
	if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
		return 0, fmt.Errorf("%w: sim: metrics: unfair_threshold: %v is not a finite non-negative number", policy.ErrInvalidConfig, t)
	}
	if t == 0 {
		t = DefaultUnfairThreshold
	}
	return t, nil
}

// ftfRho is JCT / (T_excl · max(1, n/g)).
func ftfRho(jct, excl time.Duration, n, g float64) float64 {
	return float64(jct) / (float64(excl) * max(1, n/g))
}

// checkJobRecord validates one job record.
func checkJobRecord(r *JobRecord) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: job %q: %s: %s", ErrInvalidRecord, r.ID, field, fmt.Sprintf(format, args...))
	}
	switch {
	case r.GPUs < 0:
		return bad("gpus", "%d is negative", r.GPUs)
	case r.Arrival < 0:
		return bad("arrival", "%v is negative", r.Arrival)
	case r.Exclusive < 0:
		return bad("exclusive", "%v is negative", r.Exclusive)
	case math.IsNaN(r.ActiveJobs) || math.IsInf(r.ActiveJobs, 0) || r.ActiveJobs < 0:
		return bad("active_jobs", "%v is not a finite non-negative number", r.ActiveJobs)
	case math.IsNaN(r.GPUSeconds) || math.IsInf(r.GPUSeconds, 0) || r.GPUSeconds < 0:
		return bad("gpu_seconds", "%v is not a finite non-negative number", r.GPUSeconds)
	case r.Ran && r.FirstRun < r.Arrival:
		return bad("first_run", "%v is before the arrival %v", r.FirstRun, r.Arrival)
	}
	if !r.Finished {
		return nil
	}
	switch {
	case r.Finish < r.Arrival:
		return bad("finish", "%v is before the arrival %v", r.Finish, r.Arrival)
	case r.Exclusive <= 0:
		return bad("exclusive", "%v must be positive for a finished job", r.Exclusive)
	case !r.Ran:
		return bad("ran", "false for a finished job")
	case r.FirstRun > r.Finish:
		return bad("first_run", "%v is after the finish %v", r.FirstRun, r.Finish)
	}
	return nil
}

// selectJobs returns the indices into jobs of the window's jobs, in window
// order. It also rejects duplicate job IDs.
func (w Window) selectJobs(jobs []JobRecord) ([]int, error) {
	byID := make(map[string]int, len(jobs))
	for i := range jobs {
		id := jobs[i].ID
		if j, dup := byID[id]; dup {
			return nil, fmt.Errorf("%w: job %q: id: records %d and %d share it", ErrInvalidRecord, id, j, i)
		}
		byID[id] = i
	}
	if len(w.IDs) > 0 {
		if w.Start != 0 || w.End != 0 {
			return nil, fmt.Errorf("%w: sim: metrics: window: ids and start/end are exclusive", policy.ErrInvalidConfig)
		}
		idx := make([]int, len(w.IDs))
		seen := make(map[string]bool, len(w.IDs))
		for k, id := range w.IDs {
			i, ok := byID[id]
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: sim: metrics: window: job %q is not in the records", policy.ErrInvalidConfig, id)
			case seen[id]:
				return nil, fmt.Errorf("%w: sim: metrics: window: job %q is listed twice", policy.ErrInvalidConfig, id)
			}
			seen[id] = true
			idx[k] = i
		}
		return idx, nil
	}
	end := w.End
	if end == 0 {
		end = len(jobs)
	}
	if w.Start < 0 || end < w.Start || end > len(jobs) {
		return nil, fmt.Errorf("%w: sim: metrics: window: [%d, %d) is not a range of the %d jobs", policy.ErrInvalidConfig, w.Start, w.End, len(jobs))
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(jobs[a].Arrival, jobs[b].Arrival), cmp.Compare(jobs[a].ID, jobs[b].ID))
	})
	return order[w.Start:end], nil
}

// metricsUtilization returns Σ busy GPU-seconds / Σ GPU-seconds over rounds.
func metricsUtilization(rounds []RoundRecord) (float64, error) {
	var busy, total float64
	for i, r := range rounds {
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("%w: round %d: %s: %s", ErrInvalidRecord, i, field, fmt.Sprintf(format, args...))
		}
		switch {
		case r.Start < 0:
			return 0, bad("start", "%v is negative", r.Start)
		case r.Length < 0:
			return 0, bad("length", "%v is negative", r.Length)
		case r.Active < 0:
			return 0, bad("active", "%d is negative", r.Active)
		case r.Running < 0 || r.Running > r.Active:
			return 0, bad("running", "%d is not in [0, active = %d]", r.Running, r.Active)
		case r.GPUs < 0:
			return 0, bad("gpus", "%d is negative", r.GPUs)
		case r.BusyGPUs < 0 || r.BusyGPUs > r.GPUs:
			return 0, bad("busy_gpus", "%d is not in [0, gpus = %d]", r.BusyGPUs, r.GPUs)
		}
		l := r.Length.Seconds()
		busy += float64(r.BusyGPUs) * l
		total += float64(r.GPUs) * l
	}
	if total == 0 {
		return 0, nil
	}
	return busy / total, nil
}
