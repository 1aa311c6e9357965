package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

// DefaultRound is the round length when Simulation.Round is zero: Gavel's
// 360 s.
const DefaultRound = placement.DefaultRound

// maxIdleRounds bounds how long a simulation waits while nothing runs and
// nothing arrives, for a policy that keeps asking to be woken (as every
// policy composed with the round mechanism does) without ever running the
// jobs that wait.
const maxIdleRounds = 1000

// ErrStalled reports a simulation in which jobs wait but none can ever run.
var ErrStalled = errors.New("sim: stalled: jobs are waiting but none can run")

// ErrClock reports a simulation whose clock reached its end, time.Duration's
// largest value (292 years), with jobs still active.
var ErrClock = errors.New("sim: the simulated clock reached its end (292 years)")

// Simulation replays jobs on a cluster under a policy, round by round, with
// Gavel's round mechanism placing each round. The zero value needs a Cluster
// and a Policy; every other field has a documented default.
type Simulation struct {
	Cluster allocation.Cluster
	Policy  policy.Policy
	// Round is the round length; zero means DefaultRound.
	Round time.Duration
	// Recompute is the least simulated time between two policy calls caused
	// by arrivals and completions; zero means every round boundary at which
	// a job arrived or finished (Gavel throttles to 1920 s). The policy's
	// Wake is always honoured at the first boundary after it.
	Recompute time.Duration
	// Restart is the time a job loses each time it starts running after a
	// round in which it did not run, its first run included (Shockwave
	// charges 20 s); zero means none.
	Restart time.Duration
	// Reallocate is the time a running job loses when its GPUs change from
	// one round to the next, to checkpoint and restart on the new ones
	// (Pollux charges 30 s, and the same as Restart); zero means none. Each
	// restart of an elastic job counts in its Elastic.Restarts.
	Reallocate time.Duration
	// Speed, if set, returns the steps per second job j makes in run,
	// given the grant g the policy made it (GPU count, batch size, CPU and
	// memory): the hook through which models of speed plug in (Pollux's
	// goodput, Shockwave's batch-size schedules, Synergy's CPU and memory
	// sensitivity). Nil means the job's Throughput on the run's type, or
	// its Colocated throughput with the partner when the run is a pair.
	// The job passed in carries its progress so far; Speed must not modify
	// it.
	Speed func(j *policy.Job, g allocation.Grant, run placement.Run) float64
	// Observe, if set, is called after every run of a job with the time it
	// worked, so that a model can update what the job reports: its
	// throughput model, gradient statistics and profiled GPUs. It may modify
	// j, which is the simulation's own copy (Elastic and Adaptive included).
	Observe func(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration)
	// Inform, if set, is called with every snapshot before the policy
	// sees it, to add the facts that relate jobs to one another, such as
	// their throughputs when co-located (Job.Colocated), which no job
	// knows alone. It may set the snapshot's jobs' fields but must not
	// modify the maps they hold, which the simulation's jobs share.
	Inform func(s *policy.Snapshot)
	// Exclusive, if set, returns the job's runtime alone on its GPUs, the
	// denominator of finish-time fairness ρ recorded as JobRecord.Exclusive
	// (Adaptive.Exclusive gives an adaptive job's post-adaptation runtime).
	// It is called once per job at the start of Run, with the simulation's
	// own copy. Nil means StepsTotal over its best Throughput.
	Exclusive func(j *policy.Job) time.Duration
	// Events makes the simulation event-driven, as Tiresias' and Gandiva's
	// simulators are: jobs are admitted at their exact arrival, and a round
	// ends early at the next arrival, the first completion of a running job
	// or the policy's Wake, whichever comes first, so that the policy is
	// asked again right then (Recompute still throttles arrivals and
	// completions). Round is then the longest a round may last.
	Events bool
	// Progress, if set, is called after every round with the number of
	// jobs finished and the total.
	Progress func(finished, total int)
}

// Result holds a simulation's records: jobs in arrival order (ties by ID)
// and rounds in time order.
type Result struct {
	Jobs   []JobRecord   `json:"jobs"`
	Rounds []RoundRecord `json:"rounds"`
	// Calls is every call of the policy, in time order. Their wall-clock
	// latencies are the one part of a Result that is not deterministic.
	Calls []Call `json:"calls"`
}

// Call is one call of the policy: when, in simulated time, how many jobs it
// was shown and how long it took on the wall clock.
type Call struct {
	At      time.Duration `json:"at"`
	Jobs    int           `json:"jobs"`
	Latency time.Duration `json:"latency"`
}

// state is one job during a simulation.
type state struct {
	job      policy.Job
	rec      JobRecord
	ranLast  bool
	ran      bool          // in the round under way, from advance to record
	overhead time.Duration // restart or reallocation time still to lose
	activeΣ  float64       // ∫ number of active jobs dt over its lifetime, in seconds
	lifetime float64       // seconds admitted
	finished bool
}

// work is one job's part in a run: its speed, when it starts working after
// the time it loses, and when it would finish at that speed.
type work struct {
	st     *state
	run    placement.Run
	rate   float64
	start  time.Duration
	finish time.Duration // math.MaxInt64 when it cannot finish
}

// Run simulates jobs (Arrival, GPUs, Throughput and StepsTotal set) until
// every job finishes. Jobs are admitted at the first round boundary at or
// after their arrival; a job that completes its steps mid-round finishes at
// that exact time. A decision with a Placement is carried out as it is for
// the round; otherwise Gavel's round mechanism places its time shares. A
// job the policy leaves out (Decision.Unscheduled) is dropped, unfinished,
// with the reason in its record. Run fails with ErrStalled when jobs wait,
// nothing arrives and nothing runs, at once if the policy asks to be woken
// no more, or after maxIdleRounds (1000) such rounds if it keeps asking.
// Run checks every round that no GPU is given twice and no
// job runs where its throughput is zero, that a placing decision grants no
// server more CPU cores or memory than it has (errors wrap
// allocation.ErrOverCapacity), and honours ctx between rounds.
func (s *Simulation) Run(ctx context.Context, jobs []policy.Job) (*Result, error) {
	r, err := s.start(jobs)
	if err != nil {
		return nil, err
	}
	for len(r.pending) > 0 || len(r.active) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		if !r.admit() {
			continue // idle: skipped to the next arrival
		}
		if err := r.decide(ctx); err != nil {
			return nil, err
		}
		if len(r.active) == 0 {
			continue
		}
		if err := r.step(); err != nil {
			return nil, err
		}
	}
	for _, st := range r.all {
		r.res.Jobs = append(r.res.Jobs, st.rec)
	}
	return &r.res, nil
}

// replay is one Run under way.
type replay struct {
	s                    *Simulation
	pol                  policy.Policy
	round                time.Duration
	res                  Result
	all, pending, active []*state
	now, lastCall        time.Duration
	decision             *policy.Decision
	changed              bool
	ledger               placement.Ledger
	mech                 placement.Mechanism
	finished             int // jobs done: finished or left out
	idle                 int // rounds in a row in which nothing ran and nothing changed
	gpus                 int

	// alloc and byID are the decision's grants of the active jobs and
	// those jobs by ID, nil to be built again. Jobs that arrive or finish
	// update them one by one, unless the decision pairs jobs (paired) or
	// two jobs share an ID (!unique). checked says that the mechanism
	// accepted alloc, or must: the decision is trusted.
	alloc                            allocation.Allocation
	byID                             map[string]*state
	checked, trusted, paired, unique bool
	// servers indexes the cluster's servers by ID; used counts the GPUs
	// each gives out in a round. byServer is the cluster with its servers
	// sorted by ID, as the mechanism would sort them every round.
	servers  map[string]int
	used     []int
	byServer allocation.Cluster
	workBuf  []work // the last round's works, for reuse
}

// start checks the simulation and its jobs and returns the replay at time
// zero, with the jobs pending in arrival order.
func (s *Simulation) start(jobs []policy.Job) (*replay, error) {
	if s.Policy == nil {
		return nil, fmt.Errorf("%w: sim: no policy", policy.ErrInvalidConfig)
	}
	round := cmp.Or(s.Round, DefaultRound)
	if round < 0 || s.Recompute < 0 || s.Restart < 0 || s.Reallocate < 0 {
		return nil, fmt.Errorf("%w: sim: negative round, recompute, restart or reallocate time", policy.ErrInvalidConfig)
	}
	if err := s.Cluster.Validate(); err != nil {
		return nil, err
	}
	r := &replay{s: s, pol: s.rounds(round), round: round, mech: placement.Mechanism{Round: round}, gpus: s.Cluster.TotalGPUs()}
	r.indexServers()
	r.pending = make([]*state, len(jobs))
	for i, j := range jobs {
		st, err := s.admitted(j)
		if err != nil {
			return nil, err
		}
		r.pending[i] = st
	}
	slices.SortStableFunc(r.pending, func(a, b *state) int {
		return cmp.Or(cmp.Compare(a.job.Arrival, b.job.Arrival), cmp.Compare(a.job.ID, b.job.ID))
	})
	r.all = slices.Clone(r.pending)
	ids := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		ids[j.ID] = true
	}
	r.unique = len(ids) == len(jobs)
	return r, nil
}

// indexServers sets servers, used and byServer from the cluster.
func (r *replay) indexServers() {
	c := r.s.Cluster
	r.servers, r.used = make(map[string]int, len(c.Servers)), make([]int, len(c.Servers))
	for i, srv := range c.Servers {
		r.servers[srv.ID] = i
	}
	r.byServer.Servers = slices.SortedFunc(slices.Values(c.Servers), func(x, y allocation.Server) int { return cmp.Compare(x.ID, y.ID) })
}

// admitted returns the simulation's own state of job j, with its own
// copies of what Observe may change.
func (s *Simulation) admitted(j policy.Job) (*state, error) {
	if j.StepsTotal <= 0 {
		return nil, fmt.Errorf("%w: job %q: steps_total: %v; a simulated job needs its length", policy.ErrInvalidSnapshot, j.ID, j.StepsTotal)
	}
	if j.StepsTotal > policy.MaxMagnitude {
		return nil, fmt.Errorf("%w: job %q: steps_total: %v is above %v", policy.ErrInvalidSnapshot, j.ID, j.StepsTotal, policy.MaxMagnitude)
	}
	j.StepsDone, j.Placement = 0, nil
	if j.Elastic != nil {
		e := *j.Elastic
		j.Elastic = &e
	}
	if j.Adaptive != nil {
		a := *j.Adaptive
		a.Regimes = slices.Clone(a.Regimes)
		a.EpochSeconds = slices.Clone(a.EpochSeconds)
		a.History = slices.Clone(a.History)
		j.Adaptive = &a
	}
	best := slices.Max(append(slices.Collect(maps.Values(j.Throughput)), 0))
	if alone := j.StepsTotal / best; best > 0 && alone >= maxSeconds {
		return nil, fmt.Errorf("%w: job %q: steps_total: %v steps at its best throughput %v take %.3g s alone, beyond the simulated clock's %.3g s (292 years)", policy.ErrInvalidSnapshot, j.ID, j.StepsTotal, best, alone, maxSeconds)
	}
	excl := seconds(j.StepsTotal / best)
	if s.Exclusive != nil {
		excl = s.Exclusive(&j)
	}
	return &state{job: j, rec: JobRecord{
		ID: j.ID, Tenant: j.Tenant, GPUs: j.GPUs, Arrival: j.Arrival,
		Exclusive: excl,
	}}, nil
}

// admit moves the jobs that have arrived by now to active, sorted by ID.
// With none active it moves the clock to the next arrival (its round
// boundary) and returns false.
func (r *replay) admit() bool {
	n := len(r.active)
	for len(r.pending) > 0 && r.pending[0].job.Arrival <= r.now {
		r.active = append(r.active, r.pending[0])
		r.pending = r.pending[1:]
		r.changed = true
	}
	if len(r.active) == 0 {
		r.now = r.pending[0].job.Arrival
		if !r.s.Events {
			r.now = ceilTo(r.now, r.round)
		}
		return false
	}
	if len(r.active) > n { // leaving out and retiring keep the order
		for _, st := range r.active[n:] {
			r.add(st)
		}
		slices.SortFunc(r.active, func(a, b *state) int { return cmp.Compare(a.job.ID, b.job.ID) })
	}
	return true
}

// decide asks the policy again when it has not decided yet, asked to be
// woken by now, or jobs arrived or finished (throttled by Recompute), and
// drops the jobs it leaves out.
func (r *replay) decide(ctx context.Context) error {
	d := r.decision
	woken := d != nil && d.Wake > 0 && r.now >= d.Wake
	if d != nil && !woken && (!r.changed || r.now-r.lastCall < r.s.Recompute) {
		return nil
	}
	t0 := time.Now()
	d, err := ask(ctx, r.pol, r.now, r.s.Cluster, r.active, r.s.Inform)
	if err != nil {
		return err
	}
	r.res.Calls = append(r.res.Calls, Call{At: r.now, Jobs: len(r.active), Latency: time.Since(t0)})
	r.decision, r.lastCall, r.changed = d, r.now, false
	r.alloc, r.trusted = nil, d.Placement == nil && trusted(d.Allocation, r.s.Cluster)
	r.paired = false
	for _, g := range d.Allocation {
		r.paired = r.paired || len(g.Pairs) > 0
	}
	left := len(r.active)
	r.active = leaveOut(r.active, d.Unscheduled)
	r.finished += left - len(r.active)
	return nil
}

// step plays one round of the decision: places it, runs the jobs, records
// the round and retires the jobs that finished.
func (r *replay) step() error {
	alloc, byID := r.grants()
	next, err := r.place(alloc)
	if err != nil {
		return fmt.Errorf("sim: round at %v: %w", r.now, err)
	}
	works, busy, err := r.works(next, alloc, byID)
	if err != nil {
		return fmt.Errorf("sim: round at %v: %w", r.now, err)
	}
	end := r.end(works)
	if end == math.MaxInt64 {
		return fmt.Errorf("%w: %d jobs active at %v", ErrClock, len(r.active), r.now)
	}
	ran := r.advance(works, alloc, end)
	r.workBuf = works[:0]
	if err := r.record(next, ran, busy, end); err != nil {
		return err
	}
	r.now = end
	r.retire()
	return nil
}

// add puts an arriving job and its grant in the round's grants, or has
// them built again where pairs may change or IDs repeat.
func (r *replay) add(st *state) {
	id := st.job.ID
	if r.alloc == nil || r.paired || !r.unique {
		r.alloc = nil
		return
	}
	r.byID[id] = st
	if g, ok := r.decision.Allocation[id]; ok {
		r.alloc[id] = g
		r.checked = r.trusted
	}
}

// drop takes a job that finished out of the round's grants, as add puts
// one in.
func (r *replay) drop(st *state) {
	id := st.job.ID
	if r.alloc == nil || r.paired || !r.unique {
		r.alloc = nil
		return
	}
	delete(r.byID, id)
	if _, ok := r.alloc[id]; ok {
		delete(r.alloc, id)
		r.checked = r.trusted
	}
}

// grants returns the decision's grants of the jobs still active (a
// throttled policy's decision may name jobs that finished since), with
// pairs cut to partners still active, and the active jobs by ID: the last
// round's, unless they were to be built again (see add and drop).
func (r *replay) grants() (allocation.Allocation, map[string]*state) {
	if r.alloc != nil {
		return r.alloc, r.byID
	}
	alloc := make(allocation.Allocation, len(r.active))
	byID := make(map[string]*state, len(r.active))
	for _, st := range r.active {
		byID[st.job.ID] = st
		if g, ok := r.decision.Allocation[st.job.ID]; ok {
			alloc[st.job.ID] = g
		}
	}
	for id, g := range alloc {
		if len(g.Pairs) > 0 && slices.ContainsFunc(slices.Collect(maps.Keys(g.Pairs)), func(p string) bool { return byID[p] == nil }) {
			pairs := make(map[string]map[allocation.Accelerator]float64)
			for p, sh := range g.Pairs {
				if byID[p] != nil {
					pairs[p] = sh
				}
			}
			g.Pairs = pairs // a copy: the decision stays as the policy made it
			alloc[id] = g
		}
	}
	r.alloc, r.byID, r.checked = alloc, byID, r.trusted
	return alloc, byID
}

// place returns the round's runs: the decision's placement, or the round
// mechanism's for a decision of shares alone, checked against capacity.
func (r *replay) place(alloc allocation.Allocation) (placement.Round, error) {
	var (
		next placement.Round
		err  error
	)
	switch {
	case r.decision.Placement != nil:
		next, err = placed(r.s.Cluster, r.active, alloc, r.decision.Placement)
	case r.checked:
		// Grants known to pass, and a ledger the mechanism made.
		next, r.ledger, err = r.mech.NextValid(r.ledger, r.byServer, alloc)
	default:
		next, r.ledger, err = r.mech.Next(r.ledger, r.s.Cluster, alloc)
		// Later rounds of alloc may skip the checks, unless a job without
		// an ID gives the ledger an account Next refuses.
		_, unnamed := alloc[""]
		r.checked = err == nil && !unnamed
	}
	if err != nil {
		return next, err
	}
	if err := r.checkRound(next); err != nil {
		return next, err
	}
	if _, mech := r.pol.(*policy.Rounds); r.decision.Placement != nil && !mech {
		// The round mechanism places GPUs only; a policy that places
		// itself answers for CPU cores and memory too.
		return next, checkResources(r.s.Cluster, next, alloc)
	}
	return next, nil
}

// trusted reports whether every round's grants of decision a pass the
// mechanism's checks because a does: they are a's grants of the active
// jobs, pairs cut to active partners, and leaving out shares that are not
// negative only lowers the sums Validate bounds.
func trusted(a allocation.Allocation, c allocation.Cluster) bool {
	negative := func(shares map[allocation.Accelerator]float64) bool {
		for _, x := range shares {
			if x < 0 {
				return true
			}
		}
		return false
	}
	for id, g := range a {
		if id == "" || negative(g.Shares) {
			return false // see place on jobs without an ID
		}
		for _, p := range g.Pairs {
			if negative(p) {
				return false
			}
		}
	}
	return a.Validate(c) == nil
}

// works returns each running job's speed, the time it loses and when it
// would finish, and the GPUs busy.
func (r *replay) works(next placement.Round, alloc allocation.Allocation, byID map[string]*state) ([]work, int, error) {
	works := r.workBuf[:0]
	busy := 0
	for _, run := range next.Runs {
		busy += sumGPUs(run.Assignments)
		members := []string{run.Job, run.Partner}
		if run.Partner == "" {
			members = members[:1]
		}
		for _, id := range members {
			st := byID[id]
			if st == nil {
				continue
			}
			rate := st.job.ThroughputIn(run)
			if r.s.Speed != nil {
				rate = r.s.Speed(&st.job, alloc[id], run)
			}
			// A pair that cannot share makes no progress (Gandiva
			// finds out by trying); a job alone must be able to run.
			if !(rate > 0) && (run.Partner == "" || !(rate == 0)) {
				return nil, 0, fmt.Errorf("job %q runs on %s where its throughput is %v", id, run.Accelerator, rate)
			}
			works = append(works, r.starting(st, run, rate))
		}
	}
	return works, busy, nil
}

// starting charges job st the time it loses to start in run, if it did not
// run last round or runs on other GPUs now, and returns its work.
func (r *replay) starting(st *state, run placement.Run, rate float64) work {
	restart := true
	switch {
	case !st.ranLast:
		st.overhead = r.s.Restart
	case !sameGPUs(st.job.Placement, run.Assignments):
		st.overhead = r.s.Reallocate
		st.rec.Migrations++
	default:
		restart = false
	}
	if restart && st.overhead > 0 && st.job.Elastic != nil {
		st.job.Elastic.Restarts++
	}
	if !st.rec.Ran {
		st.rec.Ran, st.rec.FirstRun = true, r.now
	}
	w := work{st: st, run: run, rate: rate, start: later(r.now, st.overhead), finish: math.MaxInt64}
	if rate > 0 {
		w.finish = later(w.start, seconds((st.job.StepsTotal-st.job.StepsDone)/rate))
	}
	return w
}

// end returns when the round ends: a Round later, or in event-driven mode
// at the next arrival, wake-up or completion if sooner (at least 1 ns on).
func (r *replay) end(works []work) time.Duration {
	end := later(r.now, r.round)
	if !r.s.Events {
		return end
	}
	if len(r.pending) > 0 {
		end = min(end, r.pending[0].job.Arrival)
	}
	if r.decision.Wake > r.now {
		end = min(end, r.decision.Wake)
	}
	for _, w := range works {
		end = min(end, max(w.finish, later(r.now, 1)))
	}
	return end
}

// advance runs every work until end, marks the jobs that ran and returns
// their number.
func (r *replay) advance(works []work, alloc allocation.Allocation, end time.Duration) int {
	length := end - r.now
	ran := 0
	for _, w := range works {
		st := w.st
		if !st.ran {
			st.ran = true
			ran++
		}
		lost := min(st.overhead, length)
		st.overhead -= lost
		secs := (length - lost).Seconds()
		// A finish a nanosecond past the end, its time rounded up, can
		// still do every step: it finishes at the end, not a round later
		// (a policy that gives no time to a job without steps left would
		// never run it again).
		if done := st.job.StepsDone + w.rate*secs; w.finish <= end || done >= st.job.StepsTotal {
			fin := min(w.finish, end)
			st.finished = true
			st.rec.Finished, st.rec.Finish = true, fin
			secs = max(0, (fin - w.start).Seconds())
			st.job.StepsDone = st.job.StepsTotal
		} else {
			st.job.StepsDone = done
		}
		// Service is charged on the GPUs the run holds, which an
		// elastic policy may have set apart from the job's request.
		gpus := float64(sumGPUs(w.run.Assignments))
		st.job.AttainedGPUSeconds += gpus * secs
		st.rec.GPUSeconds += gpus * secs
		if r.s.Observe != nil {
			r.s.Observe(&st.job, alloc[st.job.ID], w.run, seconds(secs))
		}
	}
	return ran
}

// record counts preemptions, moves the jobs to their new placements,
// records the round, and fails with ErrStalled when nothing ran, arrived
// or changed and the policy will not (or no longer may) wake.
func (r *replay) record(next placement.Round, ran, busy int, end time.Duration) error {
	length := end - r.now
	for _, st := range r.active {
		if st.ranLast && !st.ran && !st.finished {
			st.rec.Preemptions++
		}
		if !st.ran {
			st.overhead = 0
		}
		st.ranLast, st.ran = st.ran, false
		st.job.Placement = nil
		st.activeΣ += float64(len(r.active)) * length.Seconds()
		st.lifetime += length.Seconds()
	}
	r.move(next)
	r.res.Rounds = append(r.res.Rounds, RoundRecord{
		Start: r.now, Length: length, Active: len(r.active), Running: ran, BusyGPUs: busy, GPUs: r.gpus,
	})
	r.idle++
	if ran > 0 || len(r.pending) > 0 || r.changed {
		r.idle = 0
	}
	if w := r.decision.Wake; r.idle > 0 && (w == 0 || w <= r.now || r.idle > maxIdleRounds) {
		return fmt.Errorf("%w (%d jobs at %v)", ErrStalled, len(r.active), r.now)
	}
	return nil
}

// move sets the placement of every active job that runs in next, as
// next.Placement would, without building its map every round.
func (r *replay) move(next placement.Round) {
	for _, run := range next.Runs {
		if st := r.byID[run.Job]; st != nil {
			st.job.Placement = run.Assignments
		}
		if st := r.byID[run.Partner]; run.Partner != "" && st != nil {
			st.job.Placement = run.Assignments
		}
	}
}

// retire drops the finished jobs from active and reports progress.
func (r *replay) retire() {
	kept := r.active[:0]
	for _, st := range r.active {
		if st.finished {
			st.rec.ActiveJobs = st.activeΣ / st.lifetime
			r.finished++
			r.changed = true
			r.drop(st)
		} else {
			kept = append(kept, st)
		}
	}
	r.active = kept
	if r.s.Progress != nil {
		r.s.Progress(r.finished, len(r.all))
	}
}

// rounds returns the policy to simulate: s.Policy, or, for a share policy
// composed with the round mechanism, a copy that plans the simulation's
// rounds and recomputes as the simulation says, so that the caller's
// policy keeps its own settings.
func (s *Simulation) rounds(round time.Duration) policy.Policy {
	r, ok := s.Policy.(*policy.Rounds)
	if !ok {
		return s.Policy
	}
	c := *r
	c.Mechanism.Round, c.Recompute = round, s.Recompute
	return &c
}

// ask gives the policy a snapshot of the active jobs at now, informed by
// inform if it is set.
func ask(ctx context.Context, pol policy.Policy, now time.Duration, c allocation.Cluster, active []*state, inform func(*policy.Snapshot)) (*policy.Decision, error) {
	snap := &policy.Snapshot{Now: now, Cluster: c, Jobs: make([]policy.Job, len(active))}
	for i, st := range active {
		snap.Jobs[i] = st.job
	}
	if inform != nil {
		inform(snap)
	}
	d, err := pol.Allocate(ctx, snap)
	if err != nil {
		return nil, fmt.Errorf("sim: %s at %v: %w", pol.Name(), now, err)
	}
	return d, nil
}

// leaveOut drops from active the jobs a policy left out of the round: they
// never run again here, and their records say why.
func leaveOut(active []*state, out map[string]string) []*state {
	if len(out) == 0 {
		return active
	}
	kept := active[:0]
	for _, st := range active {
		if why, ok := out[st.job.ID]; ok {
			st.rec.Unscheduled = why
			continue
		}
		kept = append(kept, st)
	}
	return kept
}

// placed turns a decision's placement into the round's runs, for the active
// jobs it names. Two jobs placed on the same GPUs whose grants pair them run
// as a co-located pair.
func placed(c allocation.Cluster, active []*state, alloc allocation.Allocation, p map[string][]allocation.Assignment) (placement.Round, error) {
	var r placement.Round
	for _, st := range active {
		id := st.job.ID
		as := p[id]
		if len(as) == 0 {
			continue
		}
		var partner string
		for q := range alloc[id].Pairs {
			if _, mutual := alloc[q].Pairs[id]; mutual && len(p[q]) > 0 && sameGPUs(as, p[q]) && (partner == "" || q < partner) {
				partner = q
			}
		}
		if partner != "" && partner < id {
			continue // placed with its partner
		}
		var typ allocation.Accelerator
		for _, a := range as {
			if a.GPUs <= 0 {
				return r, fmt.Errorf("job %q placed on %d GPUs of server %q", id, a.GPUs, a.Server)
			}
			srv, ok := c.Server(a.Server)
			if !ok {
				return r, fmt.Errorf("job %q placed on unknown server %q", st.job.ID, a.Server)
			}
			if typ != "" && srv.Accelerator != typ {
				return r, fmt.Errorf("job %q placed on both %s and %s", st.job.ID, typ, srv.Accelerator)
			}
			typ = srv.Accelerator
		}
		if g := alloc[st.job.ID]; g.GPUs != sumGPUs(as) {
			return r, fmt.Errorf("job %q granted %d GPUs but placed on %d", st.job.ID, g.GPUs, sumGPUs(as))
		}
		if g := alloc[partner]; partner != "" && g.GPUs != sumGPUs(as) {
			return r, fmt.Errorf("job %q granted %d GPUs but placed on %d", partner, g.GPUs, sumGPUs(as))
		}
		as = slices.Clone(as)
		slices.SortFunc(as, func(a, b allocation.Assignment) int { return cmp.Compare(a.Server, b.Server) })
		r.Runs = append(r.Runs, placement.Run{Job: id, Partner: partner, Accelerator: typ, Assignments: as})
	}
	return r, nil
}

// sameGPUs reports whether two placements hold the same GPUs per server.
func sameGPUs(a, b []allocation.Assignment) bool {
	if slices.Equal(a, b) {
		return true // a job that kept its GPUs: most runs, every round
	}
	count := make(map[string]int)
	for _, x := range a {
		count[x.Server] += x.GPUs
	}
	for _, x := range b {
		count[x.Server] -= x.GPUs
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// checkRound verifies that no server gives out more GPUs than it has.
func (r *replay) checkRound(next placement.Round) error {
	used := r.used
	clear(used)
	for _, run := range next.Runs {
		for _, a := range run.Assignments {
			if i, ok := r.servers[a.Server]; ok {
				used[i] += a.GPUs
			}
		}
	}
	for i, srv := range r.s.Cluster.Servers {
		if used[i] > srv.GPUs {
			return fmt.Errorf("%w: server %q: %d GPUs given, %d exist", allocation.ErrOverCapacity, srv.ID, used[i], srv.GPUs)
		}
	}
	return nil
}

// checkResources verifies that no server gives out more CPU cores or memory
// than it has, for a decision that places jobs itself. A job's granted CPUs
// and memory are split over its assignments in proportion to their GPUs; a
// server with zero of a resource does not track it. A relative tolerance of
// 1e-9 absorbs rounding in the policy's arithmetic.
func checkResources(c allocation.Cluster, r placement.Round, alloc allocation.Allocation) error {
	cpus := make(map[string]float64)
	mem := make(map[string]float64)
	for _, run := range r.Runs {
		total := float64(sumGPUs(run.Assignments))
		for _, id := range []string{run.Job, run.Partner} {
			g, ok := alloc[id]
			if id == "" || !ok || (g.CPUs == 0 && g.MemoryGB == 0) || total == 0 {
				continue
			}
			if !(g.CPUs >= 0 && g.CPUs <= math.MaxFloat64) {
				return fmt.Errorf("%w: job %q: cpus: %v is not a finite non-negative number", allocation.ErrInvalid, id, g.CPUs)
			}
			if !(g.MemoryGB >= 0 && g.MemoryGB <= math.MaxFloat64) {
				return fmt.Errorf("%w: job %q: memory_gb: %v is not a finite non-negative number", allocation.ErrInvalid, id, g.MemoryGB)
			}
			for _, a := range run.Assignments {
				w := float64(a.GPUs) / total
				cpus[a.Server] += w * g.CPUs
				mem[a.Server] += w * g.MemoryGB
			}
		}
	}
	for _, srv := range c.Servers {
		if srv.CPUs > 0 && cpus[srv.ID] > srv.CPUs*(1+1e-9) {
			return fmt.Errorf("%w: server %q: cpus: %.9g granted, %g exist", allocation.ErrOverCapacity, srv.ID, cpus[srv.ID], srv.CPUs)
		}
		if srv.MemoryGB > 0 && mem[srv.ID] > srv.MemoryGB*(1+1e-9) {
			return fmt.Errorf("%w: server %q: memory_gb: %.9g GB granted, %g exist", allocation.ErrOverCapacity, srv.ID, mem[srv.ID], srv.MemoryGB)
		}
	}
	return nil
}

func sumGPUs(as []allocation.Assignment) int {
	n := 0
	for _, a := range as {
		n += a.GPUs
	}
	return n
}

// ceilTo rounds t up to a multiple of d, or the largest one.
func ceilTo(t, d time.Duration) time.Duration {
	if c := later(t, d-1) / d * d; c >= t {
		return c
	}
	return math.MaxInt64
}

// later returns t + d, saturating at the end of the clock (d ≥ 0).
func later(t, d time.Duration) time.Duration {
	if d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// maxSeconds is the end of the simulated clock, in seconds.
const maxSeconds = math.MaxInt64 / 1e9

// seconds converts float seconds to a Duration, saturating at the largest.
func seconds(s float64) time.Duration {
	if s >= maxSeconds {
		return math.MaxInt64
	}
	return time.Duration(math.Round(s * 1e9))
}
