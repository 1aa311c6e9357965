package synergy

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/internal/lp"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// Bound is Opt's solution for one round.
type Bound struct {
	// Objective is the total relative throughput of the jobs the GPU order
	// admits, at most what any allocation of the cluster's CPU and memory
	// can give them.
	Objective float64
	// Points holds each admitted job's CPU cores and memory per GPU, the
	// average of the configurations the LP mixes, and the relative
	// throughput the LP credits it with.
	Points map[string]throughput.Point
	// Servers holds, per admitted job, the fraction of it on each server.
	// It is nil when no fractional packing exists (servers of different
	// shapes can make the cluster-wide bound unpackable).
	Servers map[string]map[string]float64

	out      map[string]string // jobs left out of the round, and why
	warnings []string
}

// Allocate grants the jobs the GPU order admits the CPU and memory of the
// bound. The bare Opt's decision has no placement, since the bound's is
// fractional (registered as "synergy.opt", it is composed with the round
// mechanism, which places its GPUs); its Objective is the bound.
func (p *Opt) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	b, admitted, err := p.solve(ctx, s)
	if err != nil {
		return nil, err
	}
	d := &policy.Decision{Policy: p.Name(), Allocation: allocation.Allocation{}, Objective: b.Objective, Wake: s.Now + p.lease(),
		Unscheduled: b.out, Warnings: b.warnings}
	for _, x := range admitted {
		pt, g := b.Points[x.j.ID], float64(x.j.GPUs)
		d.Allocation[x.j.ID] = allocation.Grant{
			Shares:        map[allocation.Accelerator]float64{x.acc: 1},
			GPUs:          x.j.GPUs,
			GPUsPerWorker: x.j.GPUsPerWorker,
			CPUs:          g * pt.CPUs,
			MemoryGB:      g * pt.MemoryGB,
		}
	}
	if b.Servers == nil && len(admitted) > 0 {
		d.Warnings = append(d.Warnings, "no fractional packing of the bound onto the servers exists; the bound is the cluster-wide one")
	}
	return d, nil
}

// Bound returns the round's bound without a decision.
func (p *Opt) Bound(ctx context.Context, s *policy.Snapshot) (*Bound, error) {
	b, _, err := p.solve(ctx, s)
	return b, err
}

// config is one configuration a job may take in the LP.
type config struct {
	cpus, mem, speedup float64
}

// configs returns the configurations x may take: its proportional share, its
// ideal demand clipped to a server (off the grid where a server's cores or
// memory per GPU are) and every grid cell its servers can hold that gives it
// at least as much as its share. A job without a profile, or with more GPUs
// than a server, has only its share.
//
// Leaving out the cells below the fairness floor, rather than bounding the
// mixture's throughput from below, changes nothing for a choice of one
// configuration per job but tightens the relaxation: otherwise a job could
// mix a cheap cell below the floor with a rich one above it and, where the
// profile is not concave, beat every single cell (eight ResNet-18 jobs on a
// server would be credited 8.08 instead of 8).
func (x *job) configs(sh *shape) []config {
	cs := []config{{x.prop.CPUs, x.prop.MemoryGB, x.prop.Speedup}}
	s := x.j.Sensitivity
	if s == nil || x.flat || x.j.GPUs > sh.maxGPUs {
		return cs
	}
	cs = append(cs, config{x.ideal.CPUs, x.ideal.MemoryGB, x.ideal.Speedup})
	g := float64(x.j.GPUs)
	for i, c := range s.CPUs {
		for k, m := range s.MemoryGB {
			if g*c <= sh.maxCPUs && g*m <= sh.maxMemory && s.Speedup[i][k] >= x.prop.Speedup {
				cs = append(cs, config{c, m, s.Speedup[i][k]})
			}
		}
	}
	return cs
}

// solve admits jobs in the GPU order, then bounds their throughput by an
// LP over their configurations (phase 1) and looks for a fractional
// packing of the result onto the servers (phase 2).
func (p *Opt) solve(ctx context.Context, s *policy.Snapshot) (*Bound, []*job, error) {
	name := p.Name()
	eng, ok := lp.Named(p.Solver.String())
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s: solver: %v is not compiled into this build", policy.ErrInvalidConfig, name, p.Solver)
	}
	r, jobs, err := prepare(ctx, name, p.Config, s)
	if err != nil {
		return nil, nil, err
	}
	admitted := r.admitAll(p.Order, jobs)
	b := &Bound{Points: map[string]throughput.Point{}, out: r.out, warnings: r.warnings()}
	if len(admitted) == 0 {
		b.Servers = map[string]map[string]float64{}
		return b, nil, nil
	}
	sol, err := b.configure(ctx, eng, r, s, admitted)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: configuration LP: %w", name, err)
	}
	psol, err := b.pack(ctx, eng, r, s, admitted)
	switch {
	case err == nil:
	case sol.Status == lp.Optimal && psol != nil && psol.Status == lp.Infeasible:
	default:
		return nil, nil, fmt.Errorf("%s: packing LP: %w", name, err)
	}
	return b, admitted, nil
}

// admitAll admits the jobs in order o while their GPUs fit, and returns
// those admitted. Built here, away from the calls that read it, the
// slice's first appends stay on the stack, as they did inside solve;
// built in solve now, it costs three more allocations per round.
func (r *round) admitAll(o Order, jobs []*job) []*job {
	var admitted []*job
	for _, x := range r.candidates(o, jobs) {
		if r.admit(x) {
			r.shapes[x.acc].freeByType -= x.j.GPUs
			admitted = append(admitted, x)
		}
	}
	return admitted
}

// configure is phase 1: one configuration per job, relaxed to a mixture.
// It sets b's Points and Objective from the LP's solution.
func (b *Bound) configure(ctx context.Context, eng lp.Engine, r *round, s *policy.Snapshot, admitted []*job) (*lp.Solution, error) {
	var prob lp.Problem
	prob.Sense = lp.Maximize
	vars := make([][]int, len(admitted))
	cfgs := make([][]config, len(admitted))
	cpuRow := map[allocation.Accelerator][]lp.Term{}
	memRow := map[allocation.Accelerator][]lp.Term{}
	for i, x := range admitted {
		cfgs[i] = x.configs(r.shapes[x.acc])
		one := make([]lp.Term, len(cfgs[i]))
		g := float64(x.j.GPUs)
		sh := r.shapes[x.acc]
		for k, c := range cfgs[i] {
			// Among configurations of equal throughput, the one that
			// takes the least: a tie-break far below any real difference.
			var cost float64
			if !r.flat { // a flat round has one configuration, of nothing
				cost = 1e-5 * g * (c.cpus/sh.maxCPUs + c.mem/sh.maxMemory)
			}
			v := prob.AddVar(0, 1, c.speedup-cost)
			vars[i] = append(vars[i], v)
			one[k] = lp.Term{Var: v, Coef: 1}
			cpuRow[x.acc] = append(cpuRow[x.acc], lp.Term{Var: v, Coef: g * c.cpus})
			memRow[x.acc] = append(memRow[x.acc], lp.Term{Var: v, Coef: g * c.mem})
		}
		prob.AddRow(1, 1, one...)
	}
	for _, t := range slices.Sorted(maps.Keys(cpuRow)) { // sorted: the same LP every time
		terms := cpuRow[t]
		var cpus, mem float64
		for _, i := range r.shapes[t].servers {
			cpus += s.Cluster.Servers[i].CPUs
			mem += s.Cluster.Servers[i].MemoryGB
		}
		prob.AddRow(math.Inf(-1), cpus, terms...)
		prob.AddRow(math.Inf(-1), mem, memRow[t]...)
	}
	sol, err := eng.Solve(ctx, &prob)
	if err != nil {
		return nil, err
	}
	b.credit(admitted, cfgs, vars, sol)
	return sol, nil
}

// credit sets each admitted job's point to the mixture of its
// configurations cfgs that sol gives its variables vars, and the objective
// to their total throughput.
func (b *Bound) credit(admitted []*job, cfgs [][]config, vars [][]int, sol *lp.Solution) {
	for i, x := range admitted {
		var pt throughput.Point
		for k, c := range cfgs[i] {
			y := max(sol.X[vars[i][k]], 0)
			pt.CPUs += y * c.cpus
			pt.MemoryGB += y * c.mem
			pt.Speedup += y * c.speedup
		}
		b.Points[x.j.ID] = pt
		b.Objective += pt.Speedup
	}
}

// cell is the fraction of an admitted job on a server, variable v of the
// packing LP.
type cell struct {
	job    int
	server int
	v      int
}

// pack is phase 2: a fractional packing of the jobs at b's Points. It sets
// b's Servers when one exists, and returns the LP's solution and error.
func (b *Bound) pack(ctx context.Context, eng lp.Engine, r *round, s *policy.Snapshot, admitted []*job) (*lp.Solution, error) {
	var prob lp.Problem
	var cells []cell
	perServer := map[int][]cell{}
	for i, x := range admitted {
		var one []lp.Term
		for _, si := range r.shapes[x.acc].servers {
			v := prob.AddVar(0, 1, 0)
			c := cell{i, si, v}
			cells = append(cells, c)
			perServer[si] = append(perServer[si], c)
			one = append(one, lp.Term{Var: v, Coef: 1})
		}
		prob.AddRow(1, 1, one...)
	}
	for _, si := range slices.Sorted(maps.Keys(perServer)) {
		cs, sv := perServer[si], s.Cluster.Servers[si]
		gpus := make([]lp.Term, len(cs))
		cpus := make([]lp.Term, len(cs))
		mem := make([]lp.Term, len(cs))
		for k, c := range cs {
			x := admitted[c.job]
			g, pt := float64(x.j.GPUs), b.Points[x.j.ID]
			gpus[k] = lp.Term{Var: c.v, Coef: g}
			cpus[k] = lp.Term{Var: c.v, Coef: g * pt.CPUs}
			mem[k] = lp.Term{Var: c.v, Coef: g * pt.MemoryGB}
		}
		prob.AddRow(math.Inf(-1), float64(sv.GPUs), gpus...)
		prob.AddRow(math.Inf(-1), sv.CPUs*(1+1e-9), cpus...)
		prob.AddRow(math.Inf(-1), sv.MemoryGB*(1+1e-9), mem...)
	}
	psol, err := eng.Solve(ctx, &prob)
	if err != nil {
		return psol, err
	}
	b.Servers = map[string]map[string]float64{}
	for _, c := range cells {
		if f := psol.X[c.v]; f > 1e-9 {
			id := admitted[c.job].j.ID
			if b.Servers[id] == nil {
				b.Servers[id] = map[string]float64{}
			}
			b.Servers[id][s.Cluster.Servers[c.server].ID] = f
		}
	}
	return psol, nil
}
