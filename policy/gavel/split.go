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
// split across types by proportionalSplit first (which rewrites res.X).
func allocationOf(prog *allocation.Program, ids []string, c allocation.Cluster, res *allocation.Result, agnostic bool) allocation.Allocation {
	if agnostic {
		proportionalSplit(prog, c, res.X)
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
// plain proportional split (a = 1) and leaves it as it is when it fits. If
// no split within fitRounds rounds fits every type to within fitOverload,
// x stays as the LP gave it.
func proportionalSplit(prog *allocation.Program, c allocation.Cluster, x [][]float64) {
	nk := len(prog.Types())
	capacity := make([]float64, nk)
	for k, t := range prog.Types() {
		capacity[k] = float64(c.GPUs(t))
	}
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
		splitBy(prog, x, capacity, a, split, load)
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
			return
		}
	}
}

// splitBy writes into split each job's time split by the weights a_k·N_k
// over the types it can run on, and into load each type's GPUs in use.
func splitBy(prog *allocation.Program, x [][]float64, capacity, a []float64, split [][]float64, load []float64) {
	clear(load)
	for j, row := range x {
		var busy, weight float64
		for k, v := range row {
			busy += v
			if prog.Allowed(j, k) {
				weight += a[k] * capacity[k]
			}
		}
		for k := range row {
			split[j][k] = 0
			if prog.Allowed(j, k) && weight > 0 {
				split[j][k] = busy * a[k] * capacity[k] / weight
				load[k] += float64(prog.Count(j)*prog.GPUs(j)) * split[j][k]
			}
		}
	}
}
