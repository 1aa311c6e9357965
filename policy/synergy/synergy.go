package synergy

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

func init() {
	policy.Register("synergy.proportional",
		"Synergy's baseline: CPU and memory in proportion to GPUs, over a FIFO, SRTF, LAS or FTF GPU order",
		policy.Configured[Proportional](checkConfig[*Proportional]))
	policy.Register("synergy.greedy",
		"Synergy-Greedy: each job in the GPU order gets its ideal CPU and memory, or waits",
		policy.Configured[Greedy](checkConfig[*Greedy]))
	policy.Register("synergy.tune",
		"Synergy-Tune: ideal CPU and memory where they fit, otherwise proportional, reclaiming peers' excess; never below proportional",
		policy.Configured[Tune](checkConfig[*Tune]))
	policy.Register("synergy.opt",
		"Synergy-OPT: an upper bound from an LP over each job's CPU × memory configuration and a fractional packing; not deployable",
		policy.InRounds(policy.Configured[Opt](checkConfig[*Opt])))
}

// DefaultLease is Synergy's round: every lease ends after 300 s and the
// cluster's CPU and memory are divided again.
const DefaultLease = 300 * time.Second

// Order is the GPU policy that orders the jobs each round.
type Order string

// The GPU orders Synergy layers over.
const (
	// FIFO orders jobs by arrival.
	FIFO Order = "fifo"
	// SRTF orders jobs by remaining time at the proportional share,
	// (StepsTotal − StepsDone) / Throughput, for every allocator, so that
	// the order, and with it the jobs Tune runs, does not depend on the
	// allocator.
	SRTF Order = "srtf"
	// LAS orders jobs by attained service, AttainedGPUSeconds (GPUs ×
	// time run), least first; the jobs chosen are then allocated with the
	// most GPUs first, to limit fragmentation.
	LAS Order = "las"
	// FTF orders jobs by finish-time fairness ρ = (Now − Arrival +
	// remaining time) / (StepsTotal / Throughput), worst (largest) first.
	FTF Order = "ftf"
)

// Config is what every Synergy policy is configured by. The zero value is
// FIFO with first-fit placement and 300 s leases.
type Config struct {
	// Order is the GPU order; empty means FIFO.
	Order Order `json:"order,omitempty"`
	// Consolidate places each job on the server it leaves with the fewest
	// free GPUs (placement.BestFit), Synergy's "placement" variant; false
	// is first fit in server order (placement.FirstFitDecreasing),
	// Synergy's default. Either way a job that fits on no single server is
	// spread over as few servers as possible.
	Consolidate bool `json:"consolidate,omitempty"`
	// LeaseSeconds is how long a decision holds before the policy wants to
	// be asked again (Decision.Wake); zero means DefaultLease.
	LeaseSeconds float64 `json:"lease_seconds,omitempty"`
}

// Proportional gives every job CPU and memory in proportion to its GPUs:
// on a server with G GPUs, C cores and M GB, a g-GPU job gets g·C/G cores
// and g·M/G GB. It is the baseline Synergy is measured against.
type Proportional struct{ Config }

// Greedy gives each job, in the GPU order, its ideal CPU and memory if
// some GPUs can be found whose servers still have them, and otherwise
// skips the job for the round. It gives no fairness guarantee: hungry jobs
// at the head of the queue can strand GPUs and starve the jobs behind.
type Greedy struct{ Config }

// Tune gives each job, in the GPU order, its ideal CPU and memory where
// they fit, otherwise its proportional share, otherwise its proportional
// share after taking back from jobs on the servers with free GPUs what they
// hold beyond theirs. It runs the same jobs as Proportional and gives none
// of them less than its proportional share.
type Tune struct{ Config }

// Opt is Synergy's upper bound: an LP over each job's CPU × memory
// configuration, maximising the total relative throughput under the
// cluster's CPU and memory and the floor of every job's proportional
// throughput, then a fractional packing of the result onto servers. Jobs
// may be split across servers in any fractions and configurations mixed,
// so no scheduler can carry it out: use it to see how far Tune is from the
// best possible.
type Opt struct {
	Config
	// Solver selects the LP engine; the zero value is CLP when compiled
	// in.
	Solver allocation.Solver `json:"solver,omitempty"`
}

// Name returns "synergy.proportional".
func (*Proportional) Name() string { return "synergy.proportional" }

// Name returns "synergy.greedy".
func (*Greedy) Name() string { return "synergy.greedy" }

// Name returns "synergy.tune".
func (*Tune) Name() string { return "synergy.tune" }

// Name returns "synergy.opt".
func (*Opt) Name() string { return "synergy.opt" }

// Allocate gives the jobs the GPU order admits their proportional CPU and
// memory.
func (p *Proportional) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return allocate(ctx, p.Name(), p.Config, proportional, s)
}

// Allocate gives the jobs in the GPU order their ideal CPU and memory or
// nothing.
func (p *Greedy) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return allocate(ctx, p.Name(), p.Config, greedy, s)
}

// Allocate gives the jobs the GPU order admits their ideal CPU and memory
// where they fit and at least their proportional share.
func (p *Tune) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	return allocate(ctx, p.Name(), p.Config, tune, s)
}

// mode is how an allocator attaches CPU and memory to GPUs.
type mode int

const (
	proportional mode = iota
	greedy
	tune
)

func checkConfig[P interface{ config() Config }](p P) error {
	c := p.config()
	switch c.Order {
	case "", FIFO, SRTF, LAS, FTF:
	default:
		return fmt.Errorf("%w: synergy: order: %q (want fifo, srtf, las or ftf)", policy.ErrInvalidConfig, c.Order)
	}
	if !(c.LeaseSeconds >= 0 && c.LeaseSeconds <= math.MaxInt64/1e9) {
		return fmt.Errorf("%w: synergy: lease_seconds: %v is not a non-negative number of seconds", policy.ErrInvalidConfig, c.LeaseSeconds)
	}
	return nil
}

func (c Config) config() Config { return c }

// Facts implements policy.Reader: CPU and memory by sensitivity, the fastest type first, and length under SRTF and FTF.
func (c Config) Facts() (uses, needs policy.Facts) {
	uses, needs = policy.FactHeterogeneity|policy.FactResources, policy.FactResources
	if c.Order == SRTF || c.Order == FTF {
		uses, needs = uses|policy.FactLength, needs|policy.FactLength
	}
	return uses, needs
}

// lease returns how long a decision holds.
func (c Config) lease() time.Duration {
	if c.LeaseSeconds == 0 {
		return DefaultLease
	}
	return time.Duration(c.LeaseSeconds * float64(time.Second))
}

// shape is what Synergy needs to know of the servers of one accelerator
// type: the proportional share per GPU (the smallest among them, so that it
// fits wherever a GPU is free) and the largest server, to which ideal
// demands are clipped.
type shape struct {
	share      throughput.Point // CPUs and MemoryGB per GPU; Speedup unused
	maxGPUs    int
	maxCPUs    float64
	maxMemory  float64
	servers    []int // indices into Cluster.Servers, in its order
	freeByType int
}

// job is one job during a round.
type job struct {
	j     *policy.Job
	acc   allocation.Accelerator // the type it runs on this round
	types []allocation.Accelerator
	prop  throughput.Point // proportional share per GPU and its speedup
	ideal throughput.Point // ideal demand per GPU, clipped, and its speedup
	key   float64
	got   throughput.Point // granted per GPU
	where []allocation.Assignment
	// home is where the job runs now, one entry per server sorted by ID,
	// when it may keep it (lease extension), on servers of type homeType;
	// held is set while its GPUs are reserved for it (round.hold).
	home     []allocation.Assignment
	homeType allocation.Accelerator
	held     bool
	// flat is set when the round divides no CPU and memory (round.flat):
	// the job then counts as insensitive.
	flat bool
}

// point returns the job's relative throughput with c cores and m GB per
// GPU; a job without a sensitivity profile, or in a round that divides no
// CPU and memory, counts as insensitive.
func (x *job) point(c, m float64) throughput.Point {
	p := throughput.Point{CPUs: c, MemoryGB: m, Speedup: 1}
	if s := x.j.Sensitivity; s != nil && !x.flat {
		p.Speedup = s.At(c, m)
	}
	return p
}

// round is the state of one allocation round: the cluster's free capacity
// and the jobs placed so far, per server.
type round struct {
	c      *allocation.Cluster
	free   placement.Free
	pack   func(placement.Free, []placement.Item, placement.Options) (placement.Packing, error)
	shapes map[allocation.Accelerator]*shape
	on     map[string][]*job // server ID → jobs placed there
	// flat is set when some server with GPUs lacks CPU cores or memory:
	// the round then places GPUs only, granting no CPU and memory.
	flat bool
	out  map[string]string // jobs left out of the round, and why
}

// warnings returns the Decision's warnings about the round itself.
func (r *round) warnings() []string {
	if !r.flat {
		return nil
	}
	return []string{"some servers report no cpus or memory_gb: CPU and memory are not divided this round; jobs get GPUs only and count as insensitive"}
}

// allocate is the round shared by the allocators but Opt's.
func allocate(ctx context.Context, name string, cfg Config, m mode, s *policy.Snapshot) (*policy.Decision, error) {
	r, jobs, err := prepare(ctx, name, cfg, s)
	if err != nil {
		return nil, err
	}
	d := &policy.Decision{Policy: name, Allocation: allocation.Allocation{}, Placement: map[string][]allocation.Assignment{},
		Unscheduled: r.out, Warnings: r.warnings(), Wake: s.Now + cfg.lease()}
	order := r.candidates(cfg.Order, jobs)
	r.hold(order)
	for i, x := range order {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		// A running job stays on its GPUs or waits: Synergy never
		// migrates. Only the others are placed afresh.
		at := r.resume(x)
		if at == nil && (x.home != nil || !r.admit(x)) {
			continue
		}
		var ok bool
		switch m {
		case proportional:
			ok = r.put(x, x.prop, at)
		case greedy:
			ok = r.put(x, x.ideal, at)
		case tune:
			ok = r.tune(x, at)
		}
		if !ok && m != greedy {
			d.Warnings = append(d.Warnings, r.stuck(x, at))
		}
	}
	r.decide(d, jobs)
	return d, nil
}

// prepare screens the snapshot (policy.Screen) and returns the round, with
// the jobs left out and why, and the other jobs in ID order with their
// shares, ideal demands and order keys.
func prepare(ctx context.Context, name string, cfg Config, s *policy.Snapshot) (*round, []*job, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &round{c: &s.Cluster, shapes: map[allocation.Accelerator]*shape{}, on: map[string][]*job{}, out: out}
	r.pack = placement.FirstFitDecreasing
	if cfg.Consolidate {
		r.pack = placement.BestFit
	}
	r.flat = slices.ContainsFunc(s.Cluster.Servers, func(sv allocation.Server) bool {
		return sv.GPUs > 0 && (sv.CPUs <= 0 || sv.MemoryGB <= 0)
	})
	for i, sv := range s.Cluster.Servers {
		if sv.GPUs == 0 {
			continue
		}
		sh := r.shapes[sv.Accelerator]
		c, mem := sv.CPUs/float64(sv.GPUs), sv.MemoryGB/float64(sv.GPUs)
		if r.flat {
			c, mem = 0, 0
		}
		if sh == nil {
			sh = &shape{share: throughput.Point{CPUs: c, MemoryGB: mem}}
			r.shapes[sv.Accelerator] = sh
		}
		sh.share.CPUs, sh.share.MemoryGB = min(sh.share.CPUs, c), min(sh.share.MemoryGB, mem)
		sh.maxGPUs = max(sh.maxGPUs, sv.GPUs)
		if !r.flat {
			sh.maxCPUs, sh.maxMemory = max(sh.maxCPUs, sv.CPUs), max(sh.maxMemory, sv.MemoryGB)
		}
		sh.freeByType += sv.GPUs
		sh.servers = append(sh.servers, i)
	}
	free, err := placement.NewFree(s.Cluster)
	if err != nil {
		return nil, nil, err
	}
	r.free = free
	jobs := make([]*job, 0, len(s.Jobs))
	census := policy.NewCensus(s.Cluster)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.GPUs < 1 {
			r.leave(j.ID, fmt.Sprintf("gpus: %d; %s runs gangs of a fixed size, not elastic jobs", j.GPUs, name))
			continue
		}
		if j.Elastic == nil {
			// Screen checked that its GPU count fits.
		} else if err := census.Runnable(j); err != nil {
			r.leave(j.ID, policy.Reason(err))
			continue
		}
		x := &job{j: j, flat: r.flat}
		for t, thr := range j.Throughput {
			if thr > 0 && r.shapes[t] != nil {
				x.types = append(x.types, t)
			}
		}
		// Fastest type first, ties by name.
		slices.SortFunc(x.types, func(a, b allocation.Accelerator) int {
			return cmp.Or(cmp.Compare(j.Throughput[b], j.Throughput[a]), strings.Compare(string(a), string(b)))
		})
		if len(x.types) > 0 {
			x.setType(r.shapes[x.types[0]])
		}
		x.key = orderKey(cfg.Order, s.Now, x)
		jobs = append(jobs, x)
	}
	slices.SortFunc(jobs, func(a, b *job) int { return strings.Compare(a.j.ID, b.j.ID) })
	return r, jobs, nil
}

// leave records that job id is left out of the round, and why.
func (r *round) leave(id, why string) {
	if r.out == nil {
		r.out = make(map[string]string)
	}
	r.out[id] = why
}

// setType sets the job's proportional share and ideal demand on servers of
// shape sh. A job with more GPUs than the largest server has is pinned to
// its proportional share, as in Synergy; an ideal beyond a whole server is
// clipped to it.
func (x *job) setType(sh *shape) {
	x.prop = x.point(sh.share.CPUs, sh.share.MemoryGB)
	x.ideal = x.prop
	if s := x.j.Sensitivity; s != nil && !x.flat && x.j.GPUs <= sh.maxGPUs {
		g := float64(x.j.GPUs)
		x.ideal = s.Clip(sh.maxCPUs/g, sh.maxMemory/g)
	}
}

// orderKey returns the job's sort key under the order: smaller runs first.
// Under SRTF and FTF a job of unknown length (StepsTotal zero) has key +Inf:
// it comes after every job whose length is known, in arrival order.
func orderKey(o Order, now time.Duration, x *job) float64 {
	j := x.j
	best := 0.0
	for _, thr := range j.Throughput {
		best = max(best, thr)
	}
	if (o == SRTF || o == FTF) && (j.StepsTotal <= 0 || best == 0) {
		return math.Inf(1)
	}
	remaining := max(j.StepsTotal-j.StepsDone, 0) / best
	switch o {
	case SRTF:
		return remaining
	case LAS:
		return j.AttainedGPUSeconds
	case FTF:
		rho := ((now - j.Arrival).Seconds() + remaining) / (j.StepsTotal / best)
		return -rho
	}
	return 0
}

// candidates returns the jobs in the order they are allocated: by key,
// then arrival, then ID. Under LAS the jobs whose GPUs fit, in LAS order,
// are chosen first and then allocated with the most GPUs first, as
// Synergy's LAS does to limit fragmentation.
func (r *round) candidates(o Order, jobs []*job) []*job {
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b *job) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.j.Arrival, b.j.Arrival))
	})
	if o != LAS {
		return order
	}
	free := map[allocation.Accelerator]int{}
	for t, sh := range r.shapes {
		free[t] = sh.freeByType
	}
	var chosen []*job
	for _, x := range order {
		for _, t := range x.types {
			if free[t] >= x.j.GPUs {
				free[t] -= x.j.GPUs
				chosen = append(chosen, x)
				break
			}
		}
	}
	slices.SortStableFunc(chosen, func(a, b *job) int { return cmp.Compare(b.j.GPUs, a.j.GPUs) })
	return chosen
}

// admit picks the first type, fastest first, with enough free GPUs for the
// job, and reports whether there is one. The choice depends on GPUs alone,
// so every allocator puts a job on the same type.
func (r *round) admit(x *job) bool {
	for _, t := range x.types {
		if sh := r.shapes[t]; sh.freeByType >= x.j.GPUs {
			if t != x.acc {
				x.acc = t
				x.setType(sh)
			}
			return true
		}
	}
	return false
}

// hold reserves the GPUs of the running jobs that keep them this lease
// (lease extension), walking the jobs in the order they are allocated and
// counting GPUs per type as admit does: a running job keeps its GPUs unless
// the jobs ahead of it in the order need its type's GPUs. Jobs placed
// afresh cannot take reserved GPUs, so that a running job finds its GPUs
// free at its turn.
func (r *round) hold(order []*job) {
	left := make(map[allocation.Accelerator]int, len(r.shapes))
	for t, sh := range r.shapes {
		left[t] = sh.freeByType
	}
	for _, x := range order {
		if x.home, x.homeType = r.home(x); x.home != nil {
			// It runs here or not at all, so it counts on no other type.
			if t := x.homeType; left[t] >= x.j.GPUs && r.reserve(x.home, 1) {
				x.held, left[t] = true, left[t]-x.j.GPUs
				r.shapes[t].freeByType -= x.j.GPUs
			}
			continue
		}
		for _, t := range x.types {
			if left[t] >= x.j.GPUs {
				left[t] -= x.j.GPUs
				break
			}
		}
	}
}

// home returns where x runs now, one entry per server sorted by ID, and the
// servers' type, if x may keep it: the same GPU count in whole workers on
// servers of one type it can use. Otherwise it returns nil: the job is
// placed afresh.
func (r *round) home(x *job) ([]allocation.Assignment, allocation.Accelerator) {
	per := make(map[string]int, len(x.j.Placement))
	n := 0
	for _, a := range x.j.Placement {
		per[a.Server] += a.GPUs
		n += a.GPUs
	}
	if n != x.j.GPUs {
		return nil, "" // not running, or resized
	}
	var at []allocation.Assignment
	var t allocation.Accelerator
	for _, id := range slices.Sorted(maps.Keys(per)) {
		sv, ok := r.c.Server(id)
		if !ok || (at != nil && sv.Accelerator != t) || per[id]%x.j.Worker() != 0 {
			return nil, ""
		}
		t = sv.Accelerator
		at = append(at, allocation.Assignment{Server: id, GPUs: per[id]})
	}
	if !slices.Contains(x.types, t) {
		return nil, ""
	}
	return at, t
}

// reserve takes (sign 1) or gives back (sign −1) the GPUs of at in r.free,
// all or none, and reports whether it could.
func (r *round) reserve(at []allocation.Assignment, sign int) bool {
	free := r.free
	for _, a := range at {
		var err error
		if sign > 0 {
			free, err = free.Take(a.Server, placement.Demand{GPUs: a.GPUs})
		} else {
			free, err = free.Put(a.Server, placement.Demand{GPUs: a.GPUs})
		}
		if err != nil {
			return false
		}
	}
	r.free = free
	return true
}

// resume returns the GPUs x keeps at its turn, releasing its reservation,
// and sets x on their type; or nil if x has no home or another job took
// its GPUs (it then waits: Synergy does not migrate).
func (r *round) resume(x *job) []allocation.Assignment {
	if x.home == nil {
		return nil
	}
	if x.held {
		r.reserve(x.home, -1)
		x.held = false
		r.shapes[x.homeType].freeByType += x.j.GPUs
	}
	for _, a := range x.home {
		if left, _ := r.free.Remaining(a.Server); left.GPUs < a.GPUs {
			return nil
		}
	}
	if x.acc != x.homeType {
		x.acc = x.homeType
		x.setType(r.shapes[x.acc])
	}
	return x.home
}

// stuck explains why x, admitted by its GPU count, could not be placed.
func (r *round) stuck(x *job, at []allocation.Assignment) string {
	if at == nil {
		it := placement.Item{ID: x.j.ID, Demand: placement.Demand{GPUs: x.j.GPUs}, Accelerator: x.acc, Worker: x.j.Worker()}
		if pk, err := r.pack(r.free, []placement.Item{it}, placement.Options{Split: true}); err != nil || len(pk.Unplaced) > 0 {
			// The GPUs are free in pieces too small for its workers, or
			// running jobs keep them.
			return fmt.Sprintf("job %q: the free GPUs of type %s, outside those running jobs keep, do not hold its %d GPUs in whole workers of %d; it waits",
				x.j.ID, x.acc, x.j.GPUs, x.j.Worker())
		}
	}
	// Cannot happen for profiles whose ideal is at or above the
	// proportional share in both dimensions or at or below it in both; a
	// job whose ideal is above in one and below in the other may hold CPU
	// or memory peers cannot give back.
	return fmt.Sprintf("job %q: its %d GPUs are free but their CPU and memory are not; it waits", x.j.ID, x.j.GPUs)
}

// demand is what a job needs for g of its GPUs at p per GPU.
func demand(g int, p throughput.Point) placement.Demand {
	return placement.Demand{GPUs: g, CPUs: float64(g) * p.CPUs, MemoryGB: float64(g) * p.MemoryGB}
}

// place tries to place x at p per GPU and records it if it fits.
func (r *round) place(x *job, p throughput.Point) bool {
	it := placement.Item{ID: x.j.ID, Demand: demand(x.j.GPUs, p), Accelerator: x.acc, Worker: x.j.Worker()}
	pk, err := r.pack(r.free, []placement.Item{it}, placement.Options{Split: true})
	if err != nil || len(pk.Unplaced) > 0 {
		return false
	}
	r.free = pk.Free
	r.record(x, p, pk.Placed[x.j.ID])
	return true
}

// record notes that x runs at p per GPU on where.
func (r *round) record(x *job, p throughput.Point, where []allocation.Assignment) {
	x.got, x.where = p, where
	for _, a := range where {
		r.on[a.Server] = append(r.on[a.Server], x)
	}
	r.shapes[x.acc].freeByType -= x.j.GPUs
}

// put places x at p per GPU: on the GPUs at when given (lease extension),
// else afresh.
func (r *round) put(x *job, p throughput.Point, at []allocation.Assignment) bool {
	if at != nil {
		return r.keep(x, p, at)
	}
	return r.place(x, p)
}

// keep places x at p per GPU on exactly the GPUs at if every server there
// still has the CPU and memory of its GPUs, and records it.
func (r *round) keep(x *job, p throughput.Point, at []allocation.Assignment) bool {
	free := r.free
	for _, a := range at {
		var err error
		if free, err = free.Take(a.Server, demand(a.GPUs, p)); err != nil {
			return false
		}
	}
	r.free = free
	r.record(x, p, slices.Clone(at))
	return true
}

// tune is Synergy-Tune for one job: its ideal demand; else its
// proportional share if the ideal asks more of either resource; else the
// same after reclaiming what peers hold beyond their proportional share on
// the servers with free GPUs (on its own servers for a job that keeps its
// GPUs, at).
func (r *round) tune(x *job, at []allocation.Assignment) bool {
	if r.put(x, x.ideal, at) {
		return true
	}
	want := x.ideal
	if want.CPUs > x.prop.CPUs || want.MemoryGB > x.prop.MemoryGB {
		want = x.prop
		if r.put(x, want, at) {
			return true
		}
	}
	var ts []target
	if at == nil {
		ts = r.targets(x)
	}
	for _, a := range at {
		ts = append(ts, target{a.Server, a.GPUs})
	}
	for _, sv := range ts {
		r.reclaim(sv.id, demand(sv.gpus, want))
	}
	return r.put(x, want, at)
}

type target struct {
	id   string
	gpus int
}

// targets returns the servers (of the job's type) whose free GPUs it will
// take: for a gang, the first server with enough; otherwise servers in
// increasing order of free GPUs until the job's GPUs are covered. A server's
// free GPUs count in whole workers of the job, as placement splits it, so
// that CPU and memory are reclaimed where its workers can go.
func (r *round) targets(x *job) []target {
	sh := r.shapes[x.acc]
	type cand struct {
		id   string
		free int
	}
	var cs []cand
	w := x.j.Worker()
	for _, i := range sh.servers {
		id := r.c.Servers[i].ID
		if left, _ := r.free.Remaining(id); left.GPUs >= w {
			cs = append(cs, cand{id, left.GPUs / w * w})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return strings.Compare(a.id, b.id) })
	g := x.j.GPUs
	if g > 1 {
		for _, c := range cs {
			if c.free >= g {
				return []target{{c.id, g}}
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.free, b.free) })
	var ts []target
	for _, c := range cs {
		if g == 0 {
			break
		}
		k := min(c.free, g)
		ts = append(ts, target{c.id, k})
		g -= k
	}
	return ts
}

// reclaim downgrades jobs placed on the server to their proportional share
// until the server has room for need: those spanning the fewest servers
// first, then those with the most CPU and then memory per GPU. A job is
// downgraded everywhere it runs; one with nothing beyond its share of a
// resource the server lacks is left alone.
func (r *round) reclaim(server string, need placement.Demand) {
	left, _ := r.free.Remaining(server)
	short := func() (cpu, mem bool) {
		return need.CPUs > left.CPUs*(1+1e-12), need.MemoryGB > left.MemoryGB*(1+1e-12)
	}
	peers := slices.Clone(r.on[server])
	slices.SortStableFunc(peers, func(a, b *job) int {
		return cmp.Or(cmp.Compare(len(a.where), len(b.where)), cmp.Compare(b.got.CPUs, a.got.CPUs),
			cmp.Compare(b.got.MemoryGB, a.got.MemoryGB), strings.Compare(a.j.ID, b.j.ID))
	})
	for _, p := range peers {
		cpu, mem := short()
		if !cpu && !mem {
			return
		}
		if !(cpu && p.got.CPUs > p.prop.CPUs || mem && p.got.MemoryGB > p.prop.MemoryGB) {
			continue
		}
		if r.downgrade(p) {
			left, _ = r.free.Remaining(server)
		}
	}
}

// downgrade sets a placed job to exactly its proportional share on the same
// GPUs, if that fits on each of its servers, and reports whether it did.
func (r *round) downgrade(x *job) bool {
	free := r.free
	for _, a := range x.where {
		g := float64(a.GPUs)
		dc, dm := g*(x.got.CPUs-x.prop.CPUs), g*(x.got.MemoryGB-x.prop.MemoryGB)
		var err error
		// Release first, then take what the share adds (a job above its
		// share in one resource may be below it in the other).
		free, err = free.Put(a.Server, placement.Demand{CPUs: max(dc, 0), MemoryGB: max(dm, 0)})
		if err == nil {
			free, err = free.Take(a.Server, placement.Demand{CPUs: max(-dc, 0), MemoryGB: max(-dm, 0)})
		}
		if err != nil {
			return false
		}
	}
	r.free, x.got = free, x.prop
	return true
}

// decide writes the grants and placements of the placed jobs into d.
func (r *round) decide(d *policy.Decision, jobs []*job) {
	for _, x := range jobs {
		if x.where == nil {
			continue
		}
		g := float64(x.j.GPUs)
		d.Allocation[x.j.ID] = allocation.Grant{
			Shares:        map[allocation.Accelerator]float64{x.acc: 1},
			GPUs:          x.j.GPUs,
			GPUsPerWorker: x.j.GPUsPerWorker,
			CPUs:          g * x.got.CPUs,
			MemoryGB:      g * x.got.MemoryGB,
		}
		d.Placement[x.j.ID] = x.where
		d.Objective += x.got.Speedup
	}
}
