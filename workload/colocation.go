package workload

import (
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// Colocation is the space sharing of Gavel's jobs (Narayanan et al.,
// OSDI'20): the truth a simulation runs pairs at, from the pair throughputs
// Gavel measured (Pairs), and what the scheduler is told of them
// (Job.Colocated), either that truth (an oracle, as in Gavel's main
// simulations) or, with Estimation set, Gavel's estimate.
//
// Plug it into a sim.Simulation as its Inform, Speed and Observe. A job
// pairs only with jobs of its own GPU count, as in Gavel, and only where
// both would make progress. A Colocation keeps state when it estimates:
// use one per simulation.
type Colocation struct {
	// Profile and Pairs are the measured isolated and pair throughputs,
	// from LoadGavelThroughputs.
	Profile Profile
	Pairs   Pairs
	// Templates gives each job's template by job ID
	// (Generator.GenerateTemplates); jobs not listed never pair.
	Templates map[string]string
	// Estimation, if set, makes the scheduler estimate pair throughputs
	// rather than know them.
	Estimation *Estimation

	reference map[string]bool
	refs      map[int]*reference
	matches   map[matchKey]int
	measured  map[pairOf]*throughput.EMA
}

// Estimation is Gavel's throughput estimator (its throughput_estimator.py,
// as in the paper's experiment: 16 references, 20 % profiled). Some
// templates measured in Pairs are references, whose normalized pair
// throughputs are known offline. A new job is profiled beside a random
// Profiled fraction of the references (the truth), its row is completed by
// matrix factorization and matched to the closest reference
// (throughput.Reference.Estimate). Its throughput beside another job is
// then its isolated throughput times the normalized pair throughput of the
// two jobs' matches, until the pair has run: each round the pair runs, the
// measured throughput updates the estimate by an exponential moving
// average (throughput.EMA, α = ½, from that prior).
//
// As in Gavel, a job is matched once, on a row that puts every type's
// columns side by side (per GPU count, which Gavel's single-GPU experiment
// does not need). Gavel profiles each entry with probability Profiled;
// here a job is profiled in exactly the nearest whole number of entries to
// that fraction (at least one), so that no job goes unprofiled.
type Estimation struct {
	// References is the number of templates that are references, drawn
	// by Seed; values ≤ 0 or above the templates' number mean all.
	References int
	// Profiled is the fraction of references a new job is profiled
	// beside, in (0, 1]; values outside mean 1.
	Profiled float64
	// Seed draws the references, and the references each job is
	// profiled beside.
	Seed uint64
}

type matchKey struct {
	job  string
	gpus int
}

type pairOf struct {
	job, partner string
	k            allocation.Accelerator
}

// reference is the normalized pair matrix of the reference templates on
// one GPU count: one block of columns per type, as in Gavel, and the
// index of each template's row and each type's block.
type reference struct {
	m     throughput.Reference
	index map[string]int
	types []allocation.Accelerator
}

// at returns the normalized throughput of reference i beside reference j
// on type k, or 0 if k is not measured.
func (r *reference) at(i, j int, k allocation.Accelerator) float64 {
	t := slices.Index(r.types, k)
	if t < 0 {
		return 0
	}
	return r.m.Pair[i][t*len(r.m.Pair)+j]
}

// truth returns the steps per second of template a beside template b, both
// on gpus GPUs of type k, as measured; 0 if the pair was not measured.
func (c *Colocation) truth(a, b string, k allocation.Accelerator, gpus int) float64 {
	return c.Pairs[PairKey{Template: a, Partner: b, Accelerator: k, GPUs: gpus, PartnerGPUs: gpus}][0]
}

// Speed is the simulation's Speed: a job alone runs at its Throughput, a
// pair at its measured throughput.
func (c *Colocation) Speed(j *policy.Job, _ allocation.Grant, run placement.Run) float64 {
	if run.Partner == "" {
		return j.Throughput[run.Accelerator]
	}
	return c.truth(c.Templates[j.ID], c.Templates[partner(j.ID, run)], run.Accelerator, j.GPUs)
}

func partner(id string, run placement.Run) string {
	if id == run.Partner {
		return run.Job
	}
	return run.Partner
}

// Inform is the simulation's Inform: it tells each job its throughput
// beside every other job of its GPU count with which both make progress,
// as the scheduler knows it.
func (c *Colocation) Inform(s *policy.Snapshot) { tellPairs(s, c.known) }

// tellPairs sets each job's Colocated from rate: its throughput beside
// every other job of its GPU count, on each of its types, where rate gives
// both jobs of the pair a positive one.
func tellPairs(s *policy.Snapshot, rate func(a, b *policy.Job, k allocation.Accelerator) float64) {
	for i := range s.Jobs {
		a := &s.Jobs[i]
		col := make(map[string]map[allocation.Accelerator]float64)
		types := slices.Sorted(maps.Keys(a.Throughput))
		for j := range s.Jobs {
			b := &s.Jobs[j]
			if i == j || a.GPUs != b.GPUs {
				continue
			}
			for _, k := range types {
				if x, y := rate(a, b, k), rate(b, a, k); x > 0 && y > 0 {
					if col[b.ID] == nil {
						col[b.ID] = make(map[allocation.Accelerator]float64)
					}
					col[b.ID][k] = x
				}
			}
		}
		if len(col) > 0 {
			a.Colocated = col
		}
	}
}

// Observe is the simulation's Observe: a pair that ran measures its
// throughput, which updates the estimate.
func (c *Colocation) Observe(j *policy.Job, g allocation.Grant, run placement.Run, _ time.Duration) {
	if c.Estimation == nil || run.Partner == "" {
		return
	}
	b := &policy.Job{ID: partner(j.ID, run), GPUs: j.GPUs}
	key := pairOf{j.ID, b.ID, run.Accelerator}
	e := c.measured[key]
	if e == nil {
		e = &throughput.EMA{Value: c.prior(j, b, run.Accelerator)}
		if c.measured == nil {
			c.measured = make(map[pairOf]*throughput.EMA)
		}
		c.measured[key] = e
	}
	e.Observe(c.Speed(j, g, run))
}

// known returns a's throughput beside b on k as the scheduler knows it.
func (c *Colocation) known(a, b *policy.Job, k allocation.Accelerator) float64 {
	if c.Estimation == nil {
		return c.truth(c.Templates[a.ID], c.Templates[b.ID], k, a.GPUs)
	}
	if e := c.measured[pairOf{a.ID, b.ID, k}]; e != nil {
		return e.Value
	}
	return c.prior(a, b, k)
}

// prior is the estimate before the pair has run: a's isolated throughput
// times the normalized pair throughput of the two jobs' matches.
func (c *Colocation) prior(a, b *policy.Job, k allocation.Accelerator) float64 {
	ma, mb := c.match(a.ID, a.GPUs), c.match(b.ID, a.GPUs)
	if ma < 0 || mb < 0 {
		return 0
	}
	return a.Throughput[k] * c.ref(a.GPUs).at(ma, mb, k)
}

// match returns the reference job id is matched to on gpus GPUs,
// profiling it the first time; -1 if it cannot be.
func (c *Colocation) match(id string, gpus int) int {
	key := matchKey{id, gpus}
	if m, ok := c.matches[key]; ok {
		return m
	}
	if c.matches == nil {
		c.matches = make(map[matchKey]int)
	}
	c.matches[key] = c.profile(id, gpus)
	return c.matches[key]
}

// profile measures job id beside a random subset of the references, on
// every type, and matches its completed row.
func (c *Colocation) profile(id string, gpus int) int {
	r := c.ref(gpus)
	n := len(r.m.Pair)
	if n == 0 {
		return -1
	}
	f := c.Estimation.Profiled
	if !(f > 0 && f <= 1) {
		f = 1
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	cols := len(r.m.Pair[0])
	order := rand.New(rand.NewPCG(c.Estimation.Seed, h.Sum64())).Perm(cols)
	t := c.Templates[id]
	observed := make(map[int]float64)
	for _, col := range order[:max(1, int(f*float64(cols)+0.5))] {
		k := r.types[col/n]
		if iso := c.Profile.Throughput(t, k, gpus); iso > 0 {
			observed[col] = c.truth(t, r.m.Names[col%n], k, gpus) / iso
		}
	}
	e, err := r.m.Estimate(observed)
	if err != nil {
		return -1
	}
	return e.Match
}

// isReference reports whether template t is one of the references: all
// templates measured in Pairs, or the Estimation's References of them
// drawn by its Seed.
func (c *Colocation) isReference(t string) bool {
	if c.reference == nil {
		seen := make(map[string]bool)
		for key := range c.Pairs {
			seen[key.Template] = true
		}
		names := slices.Sorted(maps.Keys(seen))
		n := len(names)
		if e := c.Estimation; e != nil && e.References > 0 && e.References < n {
			rand.New(rand.NewPCG(e.Seed, 0)).Shuffle(n, func(i, j int) { names[i], names[j] = names[j], names[i] })
			n = e.References
		}
		c.reference = make(map[string]bool, n)
		for _, name := range names[:n] {
			c.reference[name] = true
		}
	}
	return c.reference[t]
}

// ref returns the reference matrix on gpus GPUs, building it the first
// time: the references measured there with an isolated throughput on
// every type measured, by name, each entry a pair throughput over the
// isolated one.
func (c *Colocation) ref(gpus int) *reference {
	if r := c.refs[gpus]; r != nil {
		return r
	}
	seen := make(map[string]bool)
	types := make(map[allocation.Accelerator]bool)
	for key := range c.Pairs {
		if key.GPUs == gpus && key.PartnerGPUs == gpus && c.isReference(key.Template) {
			seen[key.Template], types[key.Accelerator] = true, true
		}
	}
	r := &reference{index: make(map[string]int), types: slices.Sorted(maps.Keys(types))}
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		if c.measuredOn(name, r.types, gpus) {
			r.index[name] = len(r.m.Names)
			r.m.Names = append(r.m.Names, name)
		}
	}
	for _, a := range r.m.Names {
		row := make([]float64, 0, len(r.types)*len(r.m.Names))
		for _, k := range r.types {
			for _, b := range r.m.Names {
				row = append(row, c.truth(a, b, k, gpus)/c.Profile.Throughput(a, k, gpus))
			}
		}
		r.m.Pair = append(r.m.Pair, row)
	}
	if c.refs == nil {
		c.refs = make(map[int]*reference)
	}
	c.refs[gpus] = r
	return r
}

// measuredOn reports whether template t has an isolated throughput on
// every one of types.
func (c *Colocation) measuredOn(t string, types []allocation.Accelerator, gpus int) bool {
	for _, k := range types {
		if c.Profile.Throughput(t, k, gpus) <= 0 {
			return false
		}
	}
	return true
}
