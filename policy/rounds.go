package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

// Rounds composes a policy that decides time shares (an LP over the
// allocation matrix, a market's leases) with Gavel's round-based mechanism
// (placement.Mechanism), so that its decisions carry the next round's
// concrete placement like every other policy's. The share policies of this
// module register themselves wrapped in a Rounds.
//
// Each Allocate plans one round of Mechanism.Round and wakes at its end. The
// shares are decided again when the set of jobs (their IDs and GPU counts)
// has changed since the last time and at least Recompute has passed since
// then, when the share decision's own Wake is due, when the cluster has
// changed (a server came, went or changed size: shares are fractions of
// its capacity), and at the first call;
// otherwise the last shares are reused for the jobs still present, as Gavel
// recomputes its allocation only when jobs arrive or finish. A call before
// the planned round has ended (a job arrived) credits the last round only
// for the time it ran (placement.Ledger.Shorten).
//
// The mechanism's ledger starts from where jobs run now (Job.Placement,
// placement.Ledger.Seed): a running job keeps its GPUs when it runs again
// on their type, so a scheduler restarted with an empty state moves no
// running job, except to consolidate a gang split over servers or to
// follow its shares to another type, as the mechanism always does. Every
// run holds whole workers of the job's GPUsPerWorker.
//
// Rounds is Stateful: its state holds the ledger, the last shares and, when
// Shares is Stateful, the state of Shares. It is not safe for concurrent use.
type Rounds struct {
	// Shares decides the time shares; required.
	Shares Policy
	// Mechanism turns the shares into rounds; its zero value plans rounds
	// of placement.DefaultRound (360 s).
	Mechanism placement.Mechanism
	// Recompute is the least time between two share decisions while jobs
	// arrive and finish; zero decides again at every change. Gavel's
	// simulator uses 1920 s.
	Recompute time.Duration

	state RoundsState
}

// RoundsState is what Rounds remembers between calls.
type RoundsState struct {
	// Ledger is the mechanism's memory.
	Ledger placement.Ledger `json:"ledger"`
	// Last is the round planned by the last call, for shortening it.
	Last placement.Round `json:"last"`
	// Planned is when the last round started, in seconds on the clock of
	// Snapshot.Now; Solved when the shares were last decided.
	Planned float64 `json:"planned"`
	Solved  float64 `json:"solved"`
	// Shares is the last share decision; nil before the first.
	Shares *Decision `json:"shares,omitempty"`
	// Jobs are the jobs it was decided for, "ID/GPUs" sorted.
	Jobs []string `json:"jobs,omitempty"`
	// Cluster is a digest of the cluster it was decided for.
	Cluster string `json:"cluster,omitempty"`
	// Inner is the state of Shares, when it is Stateful.
	Inner json.RawMessage `json:"inner,omitempty"`
}

var _ Stateful = (*Rounds)(nil)

// Name returns the name of Shares.
func (r *Rounds) Name() string { return r.Shares.Name() }

// Facts implements Reader: those of Shares, whose shares the mechanism only places.
func (r *Rounds) Facts() (uses, needs Facts) { return FactsOf(r.Shares) }

// Allocate decides (or reuses) the shares and plans the next round.
func (r *Rounds) Allocate(ctx context.Context, s *Snapshot) (*Decision, error) {
	if r.Shares == nil {
		return nil, fmt.Errorf("%w: policy.Rounds needs a Shares policy", ErrInvalidConfig)
	}
	if err := validateWhole(s); err != nil {
		return nil, err
	}
	st := r.state
	jobs := jobSet(s)
	now := s.Now.Seconds()
	fresh := st.Shares == nil || r.due(st, s, jobs)
	if fresh {
		if err := r.decide(ctx, &st, s, jobs); err != nil {
			return nil, err
		}
	}
	ledger, err := r.shorten(st, now)
	if err != nil {
		return nil, err
	}
	alloc := withWorkers(present(st.Shares.Allocation, s), s)
	current := placed(s)
	round, next, err := r.Mechanism.Next(seed(ledger, current), s.Cluster, alloc)
	if err != nil && !fresh {
		// Shares decided for another cluster, or restored from a state:
		// decide them again for this snapshot rather than fail the round.
		if err := r.decide(ctx, &st, s, jobs); err != nil {
			return nil, err
		}
		alloc = withWorkers(present(st.Shares.Allocation, s), s)
		round, next, err = r.Mechanism.Next(seed(ledger, current), s.Cluster, alloc)
	}
	ledger = next
	if err != nil {
		return nil, fmt.Errorf("%s: round mechanism: %w", r.Name(), err)
	}
	st.Ledger, st.Last, st.Planned = ledger, round, now
	d := *st.Shares
	d.Allocation = alloc
	d.Placement = round.Placement()
	d.Unscheduled = presentReasons(st.Shares.Unscheduled, s)
	d.Wake = 0 // past time.Duration's range: never
	if round.Length <= math.MaxInt64-s.Now {
		d.Wake = s.Now + round.Length
	}
	if w := st.Shares.Wake; w > s.Now && (d.Wake == 0 || w < d.Wake) {
		d.Wake = w
	}
	if inner, ok := r.Shares.(Stateful); ok {
		if st.Inner, err = inner.SaveState(); err != nil {
			return nil, err
		}
	}
	r.state = st
	return &d, nil
}

// decide asks Shares for the shares of s and records them in st.
func (r *Rounds) decide(ctx context.Context, st *RoundsState, s *Snapshot, jobs []string) error {
	d, err := r.Shares.Allocate(ctx, s)
	if err != nil {
		return err
	}
	st.Shares, st.Jobs, st.Solved, st.Cluster = d, jobs, s.Now.Seconds(), digest(s.Cluster)
	return nil
}

// digest identifies a cluster's servers: IDs, types and sizes.
func digest(c allocation.Cluster) string {
	h := fnv.New64a()
	for _, srv := range c.Servers {
		fmt.Fprintf(h, "%q %q %d %g %g\n", srv.ID, srv.Accelerator, srv.GPUs, srv.CPUs, srv.MemoryGB)
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// due reports whether the shares must be decided again.
func (r *Rounds) due(st RoundsState, s *Snapshot, jobs []string) bool {
	if w := st.Shares.Wake; w > 0 && s.Now >= w {
		return true
	}
	if digest(s.Cluster) != st.Cluster {
		return true
	}
	return !slices.Equal(jobs, st.Jobs) && s.Now.Seconds()-st.Solved >= r.Recompute.Seconds()
}

// shorten credits the last round only for the time it ran.
func (r *Rounds) shorten(st RoundsState, now float64) (placement.Ledger, error) {
	ran := time.Duration(math.Round((now - st.Planned) * 1e9))
	if st.Last.Length == 0 || ran >= st.Last.Length {
		return st.Ledger, nil
	}
	if ran < 0 {
		return placement.Ledger{}, fmt.Errorf("%w: now: %v is before the last round at %vs", ErrInvalidSnapshot, time.Duration(now*1e9), st.Planned)
	}
	l, err := st.Ledger.Shorten(st.Last, ran)
	if err != nil {
		return placement.Ledger{}, fmt.Errorf("%s: round mechanism: %w", r.Name(), err)
	}
	return l, nil
}

// SetWarm implements Warmer for a Shares policy that is one.
func (r *Rounds) SetWarm(on bool) { SetWarm(r.Shares, on) }

// SaveState returns the ledger, the last shares and the state of Shares.
func (r *Rounds) SaveState() (json.RawMessage, error) { return SaveState(r.state) }

// RestoreState restores a state SaveState returned, into Shares as well
// when it is Stateful. A ledger Next would refuse, or times that are not
// finite and non-negative, are an error wrapping ErrInvalidConfig.
func (r *Rounds) RestoreState(b json.RawMessage) error {
	st, err := RestoreState[RoundsState](b)
	if err != nil {
		return err
	}
	if err := st.Ledger.Validate(); err != nil {
		return fmt.Errorf("%w: state: %w", ErrInvalidConfig, err)
	}
	for _, t := range []float64{st.Planned, st.Solved, st.Last.Length.Seconds()} {
		if !(t >= 0) || t > maxSeconds {
			return fmt.Errorf("%w: state: time %v is not in [0, %v] s", ErrInvalidConfig, t, maxSeconds)
		}
	}
	if inner, ok := r.Shares.(Stateful); ok {
		if err := inner.RestoreState(st.Inner); err != nil {
			return err
		}
	}
	r.state = st
	return nil
}

// jobSet lists the snapshot's jobs as "ID/GPUs", sorted.
func jobSet(s *Snapshot) []string {
	out := make([]string, len(s.Jobs))
	for i := range s.Jobs {
		out[i] = fmt.Sprintf("%s/%d", s.Jobs[i].ID, s.Jobs[i].GPUs)
	}
	slices.Sort(out)
	return out
}

// present returns the grants of a for the jobs of s, with pairs whose
// partner has left dropped; a itself is not modified.
func present(a allocation.Allocation, s *Snapshot) allocation.Allocation {
	in := make(map[string]bool, len(s.Jobs))
	for i := range s.Jobs {
		in[s.Jobs[i].ID] = true
	}
	out := make(allocation.Allocation, len(a))
	for id, g := range a {
		if !in[id] {
			continue
		}
		if slices.ContainsFunc(slices.Collect(maps.Keys(g.Pairs)), func(p string) bool { return !in[p] }) {
			g.Pairs = maps.Clone(g.Pairs)
			maps.DeleteFunc(g.Pairs, func(p string, _ map[allocation.Accelerator]float64) bool { return !in[p] })
		}
		out[id] = g
	}
	return out
}

func presentReasons(u map[string]string, s *Snapshot) map[string]string {
	if len(u) == 0 {
		return nil
	}
	out := make(map[string]string)
	for i := range s.Jobs {
		if why, ok := u[s.Jobs[i].ID]; ok {
			out[s.Jobs[i].ID] = why
		}
	}
	return out
}

// seed makes the ledger agree with where the jobs run now (current, from
// placed): a placement the ledger remembers but the cluster does not run (a
// binder that could not carry it out) is forgotten, and a running job the
// ledger does not know is seeded (placement.Ledger.Seed), so that it keeps
// its GPUs.
func seed(l placement.Ledger, current map[string][]allocation.Assignment) placement.Ledger {
	agrees := func(id string, as []allocation.Assignment) bool {
		return slices.Equal(normalize(as), normalize(current[id]))
	}
	for id, as := range l.Placement {
		if !agrees(id, as) {
			kept := make(map[string][]allocation.Assignment, len(l.Placement))
			for id, as := range l.Placement {
				if agrees(id, as) {
					kept[id] = as
				}
			}
			l.Placement = kept
			break
		}
	}
	return l.Seed(current)
}

// placed returns where the jobs of s that pass Screen run now. Only their
// placements seed the ledger: a job left out, whatever its placement, is
// stopped. Only jobs with a placement, a few per GPU, are validated, not
// every job with its co-location facts: s's Screen passes over the whole
// snapshot took 8 % of a 2000-job comparison's CPU time.
func placed(s *Snapshot) map[string][]allocation.Assignment {
	current := make(map[string][]allocation.Assignment)
	var cs *census
	var ids map[string]bool
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if len(j.Placement) == 0 {
			continue
		}
		if cs == nil {
			cs, ids = newCensus(s.Cluster), jobIDs(s)
		}
		if validateJob(s, j, cs, ids) == nil {
			current[j.ID] = j.Placement
		}
	}
	return current
}

// withWorkers returns a with every job's worker size from the snapshot, for
// the mechanism to place whole workers; a itself is not modified.
func withWorkers(a allocation.Allocation, s *Snapshot) allocation.Allocation {
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if g, ok := a[j.ID]; ok && g.GPUsPerWorker != j.GPUsPerWorker && g.GPUs%j.Worker() == 0 {
			g.GPUsPerWorker = j.GPUsPerWorker
			a[j.ID] = g
		}
	}
	return a
}

// roundsKeys are the configuration keys of Rounds itself, in seconds.
type roundsKeys struct {
	Round     float64 `json:"round_seconds"`
	Recompute float64 `json:"recompute_seconds"`
}

// InRounds wraps the policies a share factory f builds in a Rounds. Their
// configuration may also set the keys "round_seconds" (Mechanism.Round) and
// "recompute_seconds" (Recompute); f gets the rest.
func InRounds(f Factory) Factory {
	return func(config []byte) (Policy, error) {
		var keys roundsKeys
		rest, err := splitKeys(config, &keys)
		if err != nil {
			return nil, err
		}
		p, err := f(rest)
		if err != nil {
			return nil, err
		}
		r := &Rounds{Shares: p}
		for _, f := range []struct {
			name string
			v    float64
			to   *time.Duration
		}{{"round_seconds", keys.Round, &r.Mechanism.Round}, {"recompute_seconds", keys.Recompute, &r.Recompute}} {
			if math.IsNaN(f.v) || f.v < 0 || f.v > maxSeconds {
				return nil, fmt.Errorf("%w: %s: %v is not in [0, %v]", ErrInvalidConfig, f.name, f.v, maxSeconds)
			}
			*f.to = time.Duration(f.v * 1e9)
		}
		return r, nil
	}
}

// maxSeconds bounds durations given in seconds: about 290 years, well
// inside time.Duration.
const maxSeconds = 1e10

// splitKeys decodes the fields of keys out of a JSON object and returns the
// object without them.
func splitKeys(config []byte, keys *roundsKeys) ([]byte, error) {
	if len(bytes.TrimSpace(config)) == 0 {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	for _, k := range []struct {
		name string
		to   *float64
	}{{"round_seconds", &keys.Round}, {"recompute_seconds", &keys.Recompute}} {
		name, to := k.name, k.to
		raw, ok := fields[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, to); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidConfig, name, err)
		}
		delete(fields, name)
	}
	return json.Marshal(fields)
}

// ThroughputIn is job j's speed in a run of the round mechanism, from the
// facts it carries: its Throughput on the run's type, or its Colocated
// throughput with the partner when the run is a pair.
func (j *Job) ThroughputIn(run placement.Run) float64 {
	if run.Partner == "" {
		return j.Throughput[run.Accelerator]
	}
	other := run.Partner
	if j.ID == run.Partner {
		other = run.Job
	}
	return j.Colocated[other][run.Accelerator]
}
