package allocation

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Tolerance is the slack Validate allows on every bound: LP engines satisfy
// constraints only to about 1e-7. Program.Allocation also drops shares
// below it, as solver noise.
const Tolerance = 1e-6

// Allocation is a policy's decision: a Grant per job ID. Jobs that are absent
// get nothing. A nil Allocation is valid and empty.
type Allocation map[string]Grant

// Grant is what one job receives.
type Grant struct {
	// Shares is the fraction of wall-clock time the job runs alone on each
	// accelerator type (a row of the matrix X). Missing types mean zero.
	Shares map[Accelerator]float64 `json:"shares,omitempty"`
	// GPUs is the number of GPUs the job holds while it runs: its requested
	// scale factor, or the count an elastic policy chose.
	GPUs int `json:"gpus"`
	// GPUsPerWorker is the size of one of the job's workers (pods, ranks):
	// its GPUs come in GPUs/GPUsPerWorker workers, and a worker's GPUs are
	// on one server, so whoever places the job puts a multiple of it on
	// each server. GPUs must be a multiple of it. Zero means 1: any split.
	GPUsPerWorker int `json:"gpus_per_worker,omitempty"`
	// CPUs and MemoryGB are the CPU cores and memory the job holds while it
	// runs, for policies that allocate them; zero means not allocated.
	CPUs     float64 `json:"cpus,omitempty"`
	MemoryGB float64 `json:"memory_gb,omitempty"`
	// BatchSize is the global batch size the policy chose; zero means the
	// job keeps its own.
	BatchSize int `json:"batch_size,omitempty"`
	// Pairs maps a partner job ID to the fraction of time the two run
	// co-located on each accelerator type. Pairs are symmetric: the partner's
	// Grant lists this job with the same shares.
	Pairs map[string]map[Accelerator]float64 `json:"pairs,omitempty"`
}

// Busy returns the fraction of time the grant keeps the job running, alone or
// co-located.
func (g Grant) Busy() float64 {
	var b float64
	for _, x := range g.Shares {
		b += x
	}
	for _, p := range g.Pairs {
		for _, x := range p {
			b += x
		}
	}
	return b
}

// Share returns the time share of job on type a, alone and co-located.
func (a Allocation) Share(job string, acc Accelerator) float64 {
	g, ok := a[job]
	if !ok {
		return 0
	}
	x := g.Shares[acc]
	for _, p := range g.Pairs {
		x += p[acc]
	}
	return x
}

// IDs returns the job IDs in the allocation, sorted.
func (a Allocation) IDs() []string {
	ids := make([]string, 0, len(a)) // sized: Validate and Next call it every round
	for id := range a {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Validate reports whether a fits in cluster c: every share is in [0,1], every
// job's time sums to at most 1, pairs are symmetric, and for each type k
//
//	Σ_j GPUs_j X_jk + Σ_{pairs i<j} max(GPUs_i, GPUs_j) P_ijk ≤ N_k
//
// and, for jobs that are granted CPUs or memory, the time-weighted totals
// Σ_j Busy_j·CPUs_j and Σ_j Busy_j·MemoryGB_j fit the cluster's totals. Each
// bound is allowed Tolerance of slack (relative to the bound, at least
// absolute). Errors wrap ErrInvalid or ErrOverCapacity and name the job and
// field.
func (a Allocation) Validate(c Cluster) error {
	if err := c.Validate(); err != nil {
		return err
	}
	types := c.Types()
	used := make([]float64, len(types)) // by index in types, every type known once validated
	add := func(k Accelerator, x float64) {
		i, _ := slices.BinarySearch(types, k)
		used[i] += x
	}
	var cpus, mem float64
	for _, id := range a.IDs() {
		g := a[id]
		busy := g.Busy()
		if err := g.validate(id, a, types, busy); err != nil {
			return err
		}
		for k, x := range g.Shares {
			add(k, float64(g.GPUs)*x)
		}
		for partner, p := range g.Pairs {
			if id < partner {
				s := max(g.GPUs, a[partner].GPUs)
				for k, x := range p {
					add(k, float64(s)*x)
				}
			}
		}
		cpus += busy * g.CPUs
		mem += busy * g.MemoryGB
	}
	for i, k := range types {
		if n := float64(c.GPUs(k)); !within(used[i], n) {
			return fmt.Errorf("%w: %s: uses %.9g GPUs of %g", ErrOverCapacity, k, used[i], n)
		}
	}
	if n := c.CPUs(); !within(cpus, n) {
		return fmt.Errorf("%w: cpus: uses %.9g of %g", ErrOverCapacity, cpus, n)
	}
	if n := c.MemoryGB(); !within(mem, n) {
		return fmt.Errorf("%w: memory_gb: uses %.9g of %g", ErrOverCapacity, mem, n)
	}
	return nil
}

// validate checks g, whose Busy is busy.
func (g Grant) validate(id string, a Allocation, types []Accelerator, busy float64) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w allocation: job %q: %s: %s", ErrInvalid, id, field, fmt.Sprintf(format, args...))
	}
	check := func(field string, k Accelerator, x float64) error {
		if _, ok := slices.BinarySearch(types, k); !ok {
			return bad(field, "unknown accelerator %q", k)
		}
		if math.IsNaN(x) || x < -Tolerance || x > 1+Tolerance {
			return bad(field, "%s share %v is outside [0,1]", k, x)
		}
		if x > Tolerance && g.GPUs <= 0 {
			return bad("gpus", "%d, but the job has time on %s", g.GPUs, k)
		}
		return nil
	}
	checkShares := func(field string, shares map[Accelerator]float64) error {
		// Validate runs every round on every grant: check in map order, and
		// sort only to report the first problem deterministically.
		for k, x := range shares {
			if check(field, k, x) != nil {
				for _, k := range slices.Sorted(maps.Keys(shares)) {
					if err := check(field, k, shares[k]); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	switch {
	case g.GPUs < 0:
		return bad("gpus", "%d is negative", g.GPUs)
	case g.GPUsPerWorker < 0:
		return bad("gpus_per_worker", "%d is negative", g.GPUsPerWorker)
	case g.GPUsPerWorker > 1 && g.GPUs%g.GPUsPerWorker != 0:
		return bad("gpus", "%d is not a multiple of gpus_per_worker %d", g.GPUs, g.GPUsPerWorker)
	}
	if err := checkShares("shares", g.Shares); err != nil {
		return err
	}
	for _, partner := range partners(g.Pairs) {
		p := g.Pairs[partner]
		field := fmt.Sprintf("pairs[%s]", partner)
		other, ok := a[partner]
		switch {
		case partner == id:
			return bad(field, "a job cannot pair with itself")
		case !ok:
			return bad(field, "partner is not in the allocation")
		}
		if err := checkShares(field, p); err != nil {
			return err
		}
		back := other.Pairs[id]
		for _, k := range types {
			if math.Abs(p[k]-back[k]) > Tolerance {
				return bad(field, "%s share %v, but the partner lists %v", k, p[k], back[k])
			}
		}
	}
	if busy > 1+Tolerance {
		return bad("shares", "time shares sum to %v > 1", busy)
	}
	if !finiteNonNeg(g.CPUs) {
		return bad("cpus", "%v is not a finite non-negative number", g.CPUs)
	}
	if !finiteNonNeg(g.MemoryGB) {
		return bad("memory_gb", "%v is not a finite non-negative number", g.MemoryGB)
	}
	if g.BatchSize < 0 {
		return bad("batch_size", "%d is negative", g.BatchSize)
	}
	return nil
}

// partners returns the partners of pairs sorted, allocating nothing for
// none (most grants, every round).
func partners(pairs map[string]map[Accelerator]float64) []string {
	if len(pairs) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(pairs))
}

// within reports x ≤ bound up to Tolerance, relative for large bounds.
func within(x, bound float64) bool {
	return x <= bound+Tolerance*max(1, bound)
}
