package tiresias

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dlsched/dlsched/bayes"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("tiresias.las",
		"Tiresias: discretized two-dimensional least-attained-service queues (GPUs × time), preemptive, skew-aware consolidation",
		policy.Configured((*LAS).check))
	policy.Register("tiresias.gittins",
		"Tiresias: discretized queues ordered by the 2D-Gittins index of an empirical GPU-time distribution",
		policy.Configured((*Gittins).check))
}

// Defaults, from Tiresias' simulator.
var (
	// DefaultThresholds are the simulator's queue limits in GPU-seconds:
	// three queues, Q0 below 3250, Q1 below 7200, Q2 above.
	DefaultThresholds = []float64{3250, 7200}
)

const (
	// DefaultSkewThreshold consolidates VGG and AlexNet (skew 0.61–0.77)
	// and spreads ResNet and Inception (0.04–0.14).
	DefaultSkewThreshold = 0.5
	// DefaultQuantum is the simulator's Gittins service quantum Δ, in
	// GPU-seconds.
	DefaultQuantum = 3250
	// DefaultMaxSamples bounds the finished jobs Tiresias-G learns from:
	// the GPU-seconds of the most recent 10 000, 80 kB of State.
	DefaultMaxSamples = 10000
)

// eps is the slack, in GPU-seconds (or seconds), within which a threshold
// counts as reached: a scheduler that wakes at the predicted crossing sees
// the service up to rounding.
const eps = 1e-6

// Queues is what both Tiresias policies share: the discretized queues, the
// promotion knob, the placement rule and the state.
//
// A job's attained service is its GPUs × the time it has run
// (Job.AttainedGPUSeconds) since it was last promoted, or the time alone
// with TimeOnly. A job is in queue k when T_{k−1} ≤ service < T_k: it
// enters Q0 and is demoted, to the back of the next queue, when its
// service reaches its queue's threshold. Queues are served from Q0 down;
// each job runs if GPUs are free for it, smaller jobs behind a blocked one
// run in its place (backfilling, without reservation), and a running job
// that does not fit is preempted. A job whose model skew (Job.Skew) is
// above SkewThreshold runs only consolidated, on as few servers as its
// GPUs need, and waits otherwise; the others may be spread.
//
// With PromoteKnob P > 0, a job in a lower queue that has run before and
// has been pending, in total since it last entered Q0, for at least P
// times the time it has run since then goes back to Q0 with its service
// and both clocks reset.
//
// The decision wakes at the next predicted demotion of a running job or
// promotion of a waiting one.
type Queues struct {
	// Thresholds are the queue limits T_0 < T_1 < … in GPU-seconds (in
	// seconds with TimeOnly), giving len+1 queues. Nil means
	// DefaultThresholds, the simulator's [3250, 7200]; Tiresias' README
	// uses [3600], two queues.
	Thresholds []float64 `json:"thresholds,omitempty"`
	// PromoteKnob is P; zero disables promotion, as in the paper's
	// headline runs.
	PromoteKnob float64 `json:"promote_knob,omitempty"`
	// SkewThreshold is the model skew above which a job is consolidated;
	// nil means DefaultSkewThreshold. Jobs with unknown skew (zero) are
	// spread.
	SkewThreshold *float64 `json:"skew_threshold,omitempty"`
	// TimeOnly measures service in time run, whatever the GPU count: the
	// one-dimensional LAS the paper compares against.
	TimeOnly bool `json:"time_only,omitempty"`
	// State is the queues' memory, updated by Allocate.
	State State `json:"state,omitzero"`
}

// State is what Tiresias remembers between decisions; persist it (plain
// JSON) across restarts. A scheduler that loses it starts over with every
// job placed by its service, running jobs first, and promotions forgotten.
type State struct {
	// Seen is the time of the last decision, in seconds on the snapshot's
	// clock, from which waiting time is counted.
	Seen float64 `json:"seen"`
	// Jobs holds each active job's queue and clocks, by ID. Allocate
	// updates the map in place; copy it (through JSON, say) to keep an
	// earlier state. A job left out of a decision (Decision.Unscheduled)
	// keeps its entry, behind the others, while it is in the snapshot.
	Jobs map[string]JobState `json:"jobs,omitempty"`
	// Finished holds the total GPU-seconds of the jobs Tiresias-G has seen
	// finish, oldest first, at most its MaxSamples of them: with Samples,
	// the distribution of its Gittins index. Tiresias-L leaves it empty.
	// Values that are not finite non-negative numbers are ignored.
	Finished []float64 `json:"finished,omitempty"`
}

// JobState is one job's place in the queues.
type JobState struct {
	// Queue is the job's queue, 0 the highest.
	Queue int `json:"queue"`
	// Order ranks the job in its queue, lowest first: jobs enter at the
	// back, and after each decision the running ones move ahead of the
	// waiting ones.
	Order int `json:"order"`
	// Base is the job's attained service when it was last promoted.
	Base float64 `json:"base,omitempty"`
	// Pending is the time, in seconds, the job has waited in a lower queue
	// after having run, since it was last promoted.
	Pending float64 `json:"pending,omitempty"`
	// Promotions counts its promotions to Q0.
	Promotions int `json:"promotions,omitempty"`
	// Service and Running are what Tiresias-G knows of the job's service
	// at the last decision, to learn its total when the job finishes: its
	// AttainedGPUSeconds then, and the GPUs that decision ran it on (zero
	// when it waited). Tiresias-L leaves them zero.
	Service float64 `json:"service,omitempty"`
	Running int     `json:"running,omitempty"`
}

// LAS is Tiresias' discretized two-dimensional least-attained-service
// policy (Tiresias-L): within a queue, running jobs first, then the others
// in the order they entered it.
type LAS struct {
	Queues
}

// Gittins is Tiresias-G: the same queues, ordered inside each by the
// 2D-Gittins index of the job's attained service (higher first, then
// earlier arrival),
//
//	G(a) = P(S − a ≤ Δ | S > a) / E[min(S − a, Δ) | S > a],
//
// with S a job's total GPU-time and Δ the service quantum. S is
// distributed as Samples together with the jobs the policy has seen
// finish (State.Finished), each equally likely: the prior gives way to the
// cluster's own history as it accrues, as Tiresias learns the distribution
// from its cluster. A job that was in the State and is absent from the next
// snapshot has finished; its total is its AttainedGPUSeconds at the last
// decision plus, if that decision ran it, its GPUs × the time since (exact
// for a caller that decides at every completion, an upper bound
// otherwise). A job left out of a decision is still in the snapshot, so it
// has not finished.
type Gittins struct {
	Queues
	// Samples are the total GPU-seconds of past jobs, the prior
	// distribution of S (Tiresias learns it from its cluster's history,
	// e.g. yarn-gput1000.csv). Empty means DefaultSamples(), the percentiles
	// of Tiresias' own yarn-gput1000.csv. The distribution is built at the
	// first decision; give a new slice, not new values in this one, to
	// change it.
	Samples []float64 `json:"samples,omitempty"`
	// Quantum is Δ in GPU-seconds; zero means DefaultQuantum.
	Quantum float64 `json:"quantum,omitempty"`
	// Simulator selects the index as Tiresias' simulator computes it, for
	// parity: its table (bayes.Service.SimulatorTable), one entry per
	// sample at the attained service s_k − 1, looked up at the first sample
	// above a job's attained service, with the simulator's formula (its
	// expected service counts the whole size of jobs that finish within the
	// quantum) and rounding. SimulatorAt evaluates that formula at the
	// attained service itself instead (bayes.Service.GittinsSimulator); it
	// overrides Simulator.
	Simulator   bool `json:"simulator,omitempty"`
	SimulatorAt bool `json:"simulator_at,omitempty"`
	// MaxSamples bounds State.Finished: the totals of at most this many
	// finished jobs, the most recent, are kept. Zero means
	// DefaultMaxSamples; a negative value learns nothing, keeping the
	// distribution at Samples, as Tiresias' simulator does.
	MaxSamples int `json:"max_samples,omitempty"`

	service bayes.Service
	built   []float64 // the samples service was built from
	learned []float64 // and the finished jobs' totals
}

// Name returns "tiresias.las".
func (*LAS) Name() string { return "tiresias.las" }

// Name returns "tiresias.gittins".
func (*Gittins) Name() string { return "tiresias.gittins" }

// Facts implements policy.Reader: a job starts on its fastest type with room, consolidated by its skew.
func (q *Queues) Facts() (uses, needs policy.Facts) {
	uses = policy.FactHeterogeneity
	if q.SkewThreshold == nil || *q.SkewThreshold < 1 { // skew is at most 1
		uses |= policy.FactSkew
	}
	return uses, 0
}

func (q *Queues) check(name string) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s: %s", policy.ErrInvalidConfig, name, field, fmt.Sprintf(format, args...))
	}
	for i, t := range q.Thresholds {
		if !(t > 0) || math.IsInf(t, 1) {
			return bad(fmt.Sprintf("thresholds[%d]", i), "%v is not a finite positive number", t)
		}
		if i > 0 && t <= q.Thresholds[i-1] {
			return bad(fmt.Sprintf("thresholds[%d]", i), "%v does not exceed the one before, %v", t, q.Thresholds[i-1])
		}
	}
	if !(q.PromoteKnob >= 0) || math.IsInf(q.PromoteKnob, 1) {
		return bad("promote_knob", "%v is not a finite non-negative number", q.PromoteKnob)
	}
	if s := q.SkewThreshold; s != nil && !(*s >= 0 && *s <= 1) {
		return bad("skew_threshold", "%v is not in [0, 1]", *s)
	}
	return nil
}

func (p *LAS) check() error { return p.Queues.check(p.Name()) }

func (p *Gittins) check() error {
	if err := p.Queues.check(p.Name()); err != nil {
		return err
	}
	if !(p.Quantum >= 0) || math.IsInf(p.Quantum, 1) {
		return fmt.Errorf("%w: %s: quantum: %v is not a finite non-negative number", policy.ErrInvalidConfig, p.Name(), p.Quantum)
	}
	return p.build(p.finished())
}

// build makes the distribution of Samples (or the default prior) and the
// finished jobs' totals, once per Samples slice and finished totals.
func (p *Gittins) build(finished []float64) error {
	samples := p.Samples
	if len(samples) == 0 {
		samples = yarnPercentiles[:]
	}
	if len(p.built) == len(samples) && len(p.built) > 0 && &p.built[0] == &samples[0] && slices.Equal(p.learned, finished) {
		return nil
	}
	all := make([]float64, 0, len(samples)+len(finished))
	svc, err := bayes.NewService(append(append(all, samples...), finished...))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", policy.ErrInvalidConfig, p.Name(), err)
	}
	p.service, p.built, p.learned = svc, samples, slices.Clone(finished)
	return nil
}

// Allocate ranks the jobs by queue and, within a queue, running jobs first
// and then in the order they entered it.
func (p *LAS) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	kept, out, err := screen(p.Name(), s)
	if err != nil {
		return nil, err
	}
	return p.allocate(ctx, p.Name(), kept, out, nil)
}

// Allocate learns the totals of the jobs that finished since the last
// decision and ranks the jobs by queue and, within a queue, by Gittins
// index.
func (p *Gittins) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	kept, out, err := screen(p.Name(), s)
	if err != nil {
		return nil, err
	}
	finished := p.learn(s)
	if err := p.build(finished); err != nil {
		return nil, err
	}
	delta := cmp.Or(p.Quantum, DefaultQuantum)
	index := func(service float64) float64 { return p.service.Gittins(service, delta) }
	switch {
	case p.SimulatorAt:
		index = func(service float64) float64 { return p.service.GittinsSimulator(service, delta) }
	case p.Simulator:
		index = p.service.SimulatorTable(delta).At
	}
	d, err := p.allocate(ctx, p.Name(), kept, out, index)
	if err != nil {
		return nil, err
	}
	p.State.Finished = finished
	return d, nil
}

// screen screens s with policy.Screen and also leaves out the elastic jobs
// that Tiresias cannot run: without a GPU count (it needs a fixed one), or
// with one that no type they can use holds. It returns the snapshot of the
// other jobs and the jobs left out, with why.
func screen(name string, s *policy.Snapshot) (*policy.Snapshot, map[string]string, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, nil, err
	}
	var never []string
	census := policy.NewCensus(s.Cluster)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		why := ""
		if j.GPUs < 1 {
			why = fmt.Sprintf("gpus: %d; %s needs a fixed GPU count", j.GPUs, name)
		} else if j.Elastic == nil {
			continue // Screen checked that its GPU count fits
		} else if err := census.Runnable(j); err != nil {
			why = policy.Reason(err)
		} else {
			continue
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[j.ID] = why
		never = append(never, j.ID)
	}
	if never == nil {
		return s, out, nil
	}
	kept := &policy.Snapshot{Now: s.Now, Cluster: s.Cluster, Jobs: make([]policy.Job, 0, len(s.Jobs)-len(never))}
	for _, j := range s.Jobs {
		if !slices.Contains(never, j.ID) {
			kept.Jobs = append(kept.Jobs, j)
		}
	}
	return kept, out, nil
}

// entry is one job during a decision.
type entry struct {
	j       *policy.Job
	st      JobState
	known   bool
	service float64 // since the last promotion
	rate    float64 // service per second while running
	index   float64 // Gittins index, for Tiresias-G
	runs    bool
}

// executed is the time the job has run since it was last promoted.
func (e *entry) executed() float64 { return e.service / e.rate }

// allocate decides for the jobs of s, a screened snapshot; out holds the
// jobs left out, which keep their place in the State.
func (q *Queues) allocate(ctx context.Context, name string, s *policy.Snapshot, out map[string]string, index func(float64) float64) (*policy.Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	now := s.Now.Seconds()
	dt := now - q.State.Seen
	if len(q.State.Jobs) > 0 && dt < 0 {
		return nil, fmt.Errorf("%w: now: %v is before the state's last decision at %vs", policy.ErrInvalidSnapshot, s.Now, q.State.Seen)
	}
	thresholds := q.Thresholds
	if thresholds == nil {
		thresholds = DefaultThresholds
	}
	skew := DefaultSkewThreshold
	if q.SkewThreshold != nil {
		skew = *q.SkewThreshold
	}
	es := make([]*entry, len(s.Jobs)) // made here so that a small one stays on the stack
	q.entries(es, s)
	q.requeue(es, thresholds, dt)
	rank(es, index)
	d, err := admit(name, s, es, skew, out)
	if err != nil {
		return nil, err
	}
	d.Wake = q.wake(es, thresholds, s.Now)
	q.remember(es, out, now, index)
	return d, nil
}

// entries fills es with an entry per job of s, with its state and its
// service since its last promotion: known jobs in their order, new ones
// behind them (see entrance).
func (q *Queues) entries(es []*entry, s *policy.Snapshot) {
	for i := range s.Jobs {
		j := &s.Jobs[i]
		e := &entry{j: j, rate: float64(j.GPUs)}
		e.st, e.known = q.State.Jobs[j.ID]
		attained := j.AttainedGPUSeconds
		if q.TimeOnly {
			attained /= float64(j.GPUs)
			e.rate = 1
		}
		if attained < e.st.Base { // the scheduler's count went back: start over
			e.st.Base = 0
		}
		e.service = attained - e.st.Base
		es[i] = e
	}
	slices.SortFunc(es, entrance)
}

// entrance orders known jobs in their order, and new ones behind them,
// running first, then by arrival: a scheduler that lost its State keeps
// what runs running.
func entrance(a, b *entry) int {
	switch {
	case a.known != b.known:
		if a.known {
			return -1
		}
		return 1
	case a.known:
		return byQueue(a, b)
	}
	ra, rb := len(a.j.Placement) > 0, len(b.j.Placement) > 0
	if ra != rb {
		if ra {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.j.Arrival, b.j.Arrival), cmp.Compare(a.j.ID, b.j.ID))
}

// requeue moves the entries, in order, to the queue their service reaches,
// or back to the first when they have waited PromoteKnob times what they
// ran; dt is the time since the last decision. A job that enters or
// changes queue goes to its back, so es must be in entrance order.
func (q *Queues) requeue(es []*entry, thresholds []float64, dt float64) {
	next := len(es) // orders of this decision's entrants, behind every known job
	for _, e := range es {
		queue := sort.Search(len(thresholds), func(k int) bool { return e.service+eps < thresholds[k] })
		if !e.known {
			e.st = JobState{Queue: queue, Order: next}
			next++
			continue
		}
		if e.st.Queue > 0 && len(e.j.Placement) == 0 && e.service > 0 {
			e.st.Pending += dt
		}
		if q.PromoteKnob > 0 && e.st.Queue > 0 && e.service > 0 && e.st.Pending+eps >= q.PromoteKnob*e.executed() {
			e.st.Base += e.service
			e.service, e.st.Pending = 0, 0
			e.st.Promotions++
			queue = 0
		} else if queue == e.st.Queue {
			continue
		}
		e.st.Queue, e.st.Order = queue, next
		next++
	}
}

// rank sorts the entries into priority order: by queue, and within one by
// order or, for Tiresias-G (index not nil), by Gittins index, then arrival.
func rank(es []*entry, index func(float64) float64) {
	if index != nil {
		for _, e := range es {
			e.index = index(e.service)
		}
	}
	slices.SortFunc(es, func(a, b *entry) int {
		if index == nil || a.st.Queue != b.st.Queue {
			return byQueue(a, b)
		}
		switch {
		case a.index != b.index:
			return cmp.Compare(b.index, a.index)
		case a.j.Arrival != b.j.Arrival:
			return cmp.Compare(a.j.Arrival, b.j.Arrival)
		}
		return strings.Compare(a.j.ID, b.j.ID)
	})
}

// admit runs the ranked entries that the cluster admits in priority order,
// marks them, and returns the decision without its Wake.
func admit(name string, s *policy.Snapshot, es []*entry, skew float64, out map[string]string) (*policy.Decision, error) {
	reqs := make([]placement.Request, len(es))
	for i, e := range es {
		reqs[i] = placement.Request{ID: e.j.ID, GPUs: e.j.GPUs, Worker: e.j.Worker(), Current: e.j.Placement, Throughput: e.j.Throughput, Consolidate: e.j.Skew > skew}
	}
	runs, err := placement.Priority{}.Admit(s.Cluster, reqs)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", policy.ErrInvalidSnapshot, name, err)
	}
	round := placement.Round{Runs: runs}
	d := &policy.Decision{Policy: name, Allocation: round.Allocation(), Placement: round.Placement(), Unscheduled: out}
	k := 0 // runs come in the order of the requests, that of es
	for _, e := range es {
		if k < len(runs) && runs[k].Job == e.j.ID {
			e.runs = true
			k++
		}
	}
	return d, nil
}

// wake returns when to decide again, at the next demotion or promotion,
// or zero if none comes.
func (q *Queues) wake(es []*entry, thresholds []float64, now time.Duration) time.Duration {
	wake := math.Inf(1)
	for _, e := range es {
		switch {
		case e.runs && e.st.Queue < len(thresholds):
			wake = math.Min(wake, (thresholds[e.st.Queue]-e.service)/e.rate)
		case !e.runs && q.PromoteKnob > 0 && e.st.Queue > 0 && e.service > 0:
			wake = math.Min(wake, q.PromoteKnob*e.executed()-e.st.Pending)
		}
	}
	// A demotion beyond time.Duration's range (a threshold of 10¹² GPU-s)
	// never comes: converting it would wrap to a time already past, and
	// waking every nanosecond would stall the caller.
	if ns := math.Ceil(wake * 1e9); ns < float64(math.MaxInt64-now) {
		return now + max(time.Nanosecond, time.Duration(ns))
	}
	return 0
}

// remember keeps the decided entries' places in q.State, and those of the
// jobs left out behind them; it forgets the jobs that finished.
func (q *Queues) remember(es []*entry, out map[string]string, now float64, index func(float64) float64) {
	// Within each queue the running jobs move ahead of the waiting ones.
	if index == nil {
		slices.SortStableFunc(es, func(a, b *entry) int {
			if c := cmp.Compare(a.st.Queue, b.st.Queue); c != 0 {
				return c
			}
			if a.runs != b.runs {
				if a.runs {
					return -1
				}
				return 1
			}
			return 0
		})
	}
	// Reuse the map: most jobs stay from one decision to the next.
	jobs := q.State.Jobs
	if jobs == nil {
		jobs = make(map[string]JobState, len(es))
	}
	for i, e := range es {
		e.st.Order = i
		e.st.Service, e.st.Running = 0, 0
		if index != nil { // Tiresias-G learns the job's total when it finishes
			e.st.Service = e.j.AttainedGPUSeconds
			if e.runs {
				e.st.Running = e.j.GPUs
			}
		}
		jobs[e.j.ID] = e.st
	}
	left := keepPlaces(jobs, out, len(es))
	if len(jobs) > len(es)+left { // some finished
		active := make(map[string]bool, len(es))
		for _, e := range es {
			active[e.j.ID] = true
		}
		for id := range jobs {
			if _, kept := out[id]; !active[id] && !kept {
				delete(jobs, id)
			}
		}
	}
	q.State = State{Seen: now, Jobs: jobs, Finished: q.State.Finished}
}

// keepPlaces puts the known jobs left out behind the n decided ones, in
// their old order, not running, and returns how many there are.
func keepPlaces(jobs map[string]JobState, out map[string]string, n int) int {
	var left []string
	for id := range out {
		if _, known := jobs[id]; known {
			left = append(left, id)
		}
	}
	slices.SortFunc(left, func(a, b string) int {
		x, y := jobs[a], jobs[b]
		return cmp.Or(cmp.Compare(x.Queue, y.Queue), cmp.Compare(x.Order, y.Order), strings.Compare(a, b))
	})
	for k, id := range left {
		st := jobs[id]
		st.Order, st.Running = n+k, 0
		jobs[id] = st
	}
	return len(left)
}

// byQueue orders by queue, then by order in the queue (unique among the
// jobs of a state), then by ID.
func byQueue(a, b *entry) int {
	switch {
	case a.st.Queue != b.st.Queue:
		return cmp.Compare(a.st.Queue, b.st.Queue)
	case a.st.Order != b.st.Order:
		return cmp.Compare(a.st.Order, b.st.Order)
	}
	return strings.Compare(a.j.ID, b.j.ID)
}
