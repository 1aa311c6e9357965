package gavel

import (
	"math"

	"github.com/dlsched/dlsched/allocation"
)

// Fitting rounds of proportionalSplit, and the overload it accepts, relative
// to a type's GPUs.
const (
	fitRounds   = 500
	fitOverload = 1e-7
)

// allocationOf returns res as an Allocation. An agnostic program's rows are
// split across types by proportionalSplit first (which rewrites res.X),
// unless its structure solved it (see structured).
func allocationOf(prog *allocation.Program, ids []string, res *allocation.Result, agnostic bool) allocation.Allocation {
	if agnostic && res.Engine != byStructure {
		proportionalSplit(prog, res.X)
	}
	return prog.Allocation(ids, res)
}

// proportionalSplit rewrites each job's time x_j = Σ_k X_jk across the types
// it can run on in proportion to their GPUs,
//
//	X_jk = x_j · a_k N_k / Σ_{l allowed} a_l N_l,
//
// with a_k = 1 unless type k would be over capacity. An agnostic program
// sees every type alike, so its optimum fixes only the x_j, and the split of
// the LP's vertex depends on where the engine started; this one depends on
// the x_j alone. The a_k come from iterative proportional fitting,
// a_k ← min(1, a_k·N_k/L_k) with L_k type k's load, which starts from the
// plain proportional split (a = 1) and leaves it as it is when it fits.
//
// Fitting only approaches a split that must leave some job off some type,
// which is what a full set of types S demands (the jobs that can run only
// inside S use all of it, so no other job may): it comes nearer every round
// and never arrives. When fitting fails, each job is therefore kept off the
// full sets that do not hold all its types, and fitted again (see
// offFullSets). If no split within fitRounds rounds fits every type to
// within fitOverload, x stays as it was and proportionalSplit reports false.
func proportionalSplit(prog *allocation.Program, x [][]float64) bool {
	capacity := prog.Capacity()
	if fit(prog, x, capacity, prog.Allowed) {
		return true
	}
	off, ok := offFullSets(prog, x, capacity)
	return ok && fit(prog, x, capacity, off)
}

// fit splits x by iterative proportional fitting over the types allowed
// for each row, and reports whether it fitted.
func fit(prog *allocation.Program, x [][]float64, capacity []float64, allowed func(j, k int) bool) bool {
	nk := len(capacity)
	a := make([]float64, nk)
	for k := range a {
		a[k] = 1
	}
	split := make([][]float64, len(x))
	for j := range split {
		split[j] = make([]float64, nk)
	}
	load := make([]float64, nk)
	for range fitRounds {
		splitBy(prog, x, capacity, a, allowed, split, load)
		fits := true
		for k := range a {
			if load[k] > capacity[k]*(1+fitOverload) {
				fits = false
			}
			if load[k] > 0 {
				a[k] = math.Min(1, a[k]*capacity[k]/load[k])
			}
		}
		if fits {
			copy(x, split)
			return true
		}
	}
	return false
}

// offFullSets returns which types each row may use once it is kept off
// every full set of types that does not hold all of its own: a set S is
// full when the rows whose types all lie in S use S's GPUs to within
// fitOverload. It reports false beyond exactTypes types, or if a row with
// time left would have no type.
func offFullSets(prog *allocation.Program, x [][]float64, capacity []float64) (func(j, k int) bool, bool) {
	nk := len(capacity)
	if nk > exactTypes {
		return nil, false
	}
	masks, used := typeSets(prog), make([]float64, 1<<nk)
	for j, row := range x {
		used[masks[j]] += float64(prog.Count(j)*prog.GPUs(j)) * sum(row)
	}
	used, room := subsetSums(used, nk), setGPUs(capacity)
	keep := make([]int, len(x))
	for j, m := range masks {
		keep[j] = m
		for s := 1; s < len(used); s++ {
			if m&s != m && used[s] >= room[s]*(1-fitOverload) {
				keep[j] &^= s
			}
		}
		if keep[j] == 0 && sum(x[j]) > 0 {
			return nil, false
		}
	}
	return func(j, k int) bool { return keep[j]&(1<<k) != 0 }, true
}

// sum returns the sum of v.
func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// splitBy writes into split each job's time split by the weights a_k·N_k
// over the types allowed to it, and into load each type's GPUs in use.
func splitBy(prog *allocation.Program, x [][]float64, capacity, a []float64, allowed func(j, k int) bool, split [][]float64, load []float64) {
	clear(load)
	for j, row := range x {
		var busy, weight float64
		for k, v := range row {
			busy += v
			if allowed(j, k) {
				weight += a[k] * capacity[k]
			}
		}
		for k := range row {
			split[j][k] = 0
			if allowed(j, k) && weight > 0 {
				split[j][k] = busy * a[k] * capacity[k] / weight
				load[k] += float64(prog.Count(j)*prog.GPUs(j)) * split[j][k]
			}
		}
	}
}
