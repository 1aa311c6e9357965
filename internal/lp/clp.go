//go:build clp && cgo

package lp

/*
#cgo pkg-config: clp
#include <stdlib.h>
#include "Clp_C_Interface.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

// dlsched_pad_heap sets glibc malloc's top pad (M_TOP_PAD) and, if mmap is
// positive, its mmap threshold (M_MMAP_THRESHOLD); elsewhere it does
// nothing.
static void dlsched_pad_heap(int pad, int mmap) {
#ifdef __GLIBC__
	if (pad > 0) mallopt(M_TOP_PAD, pad);
	if (mmap > 0) mallopt(M_MMAP_THRESHOLD, mmap);
#endif
}

// dlsched_start sets every status of a starting basis, and with it each
// nonbasic variable's value at its bound, in one cgo call: columns first,
// then rows, as in CLP's own status array.
static void dlsched_start(Clp_Simplex *m, int ncols, int nrows, const unsigned char *s) {
	for (int j = 0; j < ncols; j++) Clp_setColumnStatus(m, j, s[j]);
	for (int i = 0; i < nrows; i++) Clp_setRowStatus(m, i, s[ncols + i]);
}
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// CLPAlgorithm selects the simplex variant CLP runs.
type CLPAlgorithm int

const (
	// CLPAuto runs the dual simplex. On dlsched's max-min allocation LPs
	// (BenchmarkMaxMin) the two variants tied at 512 and 2048 jobs (about
	// 27 ms and 0.4 s of CPU, averaged over 30 instances), and the dual
	// was faster at 128 jobs (1.7 ms against 2.6 ms).
	CLPAuto CLPAlgorithm = iota
	// CLPDual runs the dual simplex.
	CLPDual
	// CLPPrimal runs the primal simplex.
	CLPPrimal
)

func (a CLPAlgorithm) String() string {
	switch a {
	case CLPAuto:
		return "auto"
	case CLPDual:
		return "dual"
	case CLPPrimal:
		return "primal"
	}
	return fmt.Sprintf("CLPAlgorithm(%d)", int(a))
}

// CLP solves problems with the COIN-OR CLP sparse simplex, through cgo
// and CLP's C interface. It is compiled in, and the default engine, only in
// builds with the clp tag and cgo (see the package documentation); it
// solves the max-min allocation LP for 2048 jobs (6145 variables, 4099
// rows) in about 0.3 s (BenchmarkMaxMin, docs/performance.md).
//
// CLP cannot be interrupted, so Solve runs it in slices of simplex
// iterations, each continuing from the basis the last one left, and looks
// at ctx between them. A slice's length is a count of iterations set by
// the problem's size (about 20 ms of work here), not a time, so that the
// path CLP takes, and with it the optimal vertex it returns, never depends
// on the machine's load: cancellation ends a solve within about 20 ms
// (TestCLPCancel), and the same problem always gives the same solution
// (TestCLPDeterministicUnderLoad). A deadline is CLP's time limit as well;
// as CLP measures it in process CPU time, under concurrent load it may
// stop before the deadline. Either way the error wraps ErrTimeLimit and
// context.DeadlineExceeded.
//
// A problem with a starting basis (Problem.Start) that fits it starts
// from that basis, and every optimal Solution carries its Basis.
//
// The zero value is ready to use. CLP values are safe for concurrent use:
// every Solve builds its own CLP model and frees it before returning.
//
// CLP allocates its work arrays afresh on every solve and frees them at the
// end. Under glibc's default malloc settings the freed top of the heap went
// back to the kernel each time, and the next solve took it again page by
// page: a quarter of gavel.water-filling's CPU time at 1024 jobs was spent
// in the kernel, most of it on page faults (perf record of policy/gavel's
// BenchmarkPolicy). The first Solve therefore sets glibc's M_TOP_PAD to 64
// MiB (clpHeapPad), so that a heap keeps that much free memory for the next
// solve: thirty times fewer page faults over a series of solves
// (TestCLPHeapPad) and 12 to 25% less time on policy/gavel's BenchmarkLAS
// (clp, 2048 jobs), BenchmarkScaling (gavel.hierarchical, 1024) and
// BenchmarkPolicy (gavel.water-filling, 1024), measured before and after in
// one run, for some 20 MiB more resident memory (the maximum resident size
// of those benchmarks' processes, 358 against 380 MB).
//
// Setting M_TOP_PAD also turns off glibc's dynamic mmap threshold, and the
// threads' own arenas, from which cgo calls on other threads allocate,
// take no top pad: arrays above 128 KiB were mapped and unmapped again on
// every solve. The first Solve therefore sets M_MMAP_THRESHOLD to 32 MiB
// as well (clpMmapThreshold): 25 times fewer page faults over a series of
// solves of an LP of 32,768 columns from a thread other than the main one
// (TestCLPMmapThreshold). perf stat of dlsched simulate --policy
// gavel.makespan-ss --jobs 600 counted 4,565 munmap calls before and 7
// after; BenchmarkPolicy (gavel.water-filling, 1024) took 4% less time
// (3 runs each, alternating) and the simulation at 1000 jobs 3% less, at
// no more resident memory (182 against 188 to 196 MB).
//
// Both settings are process-wide; a process that sets MALLOC_TOP_PAD_ or
// MALLOC_MMAP_THRESHOLD_, or glibc.malloc.top_pad or
// glibc.malloc.mmap_threshold in GLIBC_TUNABLES, keeps its own.
type CLP struct {
	// Algorithm selects the simplex variant; the zero value is CLPAuto.
	Algorithm CLPAlgorithm
	// MaxIterations caps the simplex iterations of a solve; reaching the
	// cap yields ErrTimeLimit. Zero means no cap.
	MaxIterations int

	slice int // iterations of a slice, if positive: for tests
}

const clpName = "clp"

// CLP's primary statuses (ClpModel::status).
const (
	clpOptimal    = 0
	clpInfeasible = 1
	clpUnbounded  = 2
	clpStopped    = 3
	// clpStoppedOnTime is the secondary status of a solve that reached its
	// time limit.
	clpStoppedOnTime = 9
)

// Solve implements Engine.
func (e CLP) Solve(ctx context.Context, p *Problem) (*Solution, error) {
	if sol, done, err := begin(ctx, p, clpName); done {
		return sol, err
	}
	padHeap.Do(func() { setHeap(heapSettings(os.Getenv)) })
	m := newClpModel(p)
	defer C.Clp_deleteModel(m.ptr)
	start := time.Now()
	status := e.sliced(ctx, m)
	elapsed := time.Since(start)
	secondary := int(C.Clp_secondaryStatus(m.ptr))

	if err := ctx.Err(); err != nil {
		err = ctxError(clpName, fmt.Sprintf("context done after %v (status %d, secondary %d)", elapsed, status, secondary), err)
		return failed(err, clpName), err
	}
	_, hasDeadline := ctx.Deadline()
	if status == clpStopped && hasDeadline && secondary == clpStoppedOnTime {
		// CLP measures its limit in process CPU time, which can run ahead
		// of the wall clock; the limit still came from the deadline.
		err := fmt.Errorf("lp: clp: stopped on the deadline's time limit after %v (secondary status %d): %w: %w",
			elapsed, secondary, ErrTimeLimit, context.DeadlineExceeded)
		return failed(err, clpName), err
	}

	var err error
	switch status {
	case clpOptimal:
		// Any secondary status still means optimal for the scaled problem.
		// Secondary status 2 (unscaled primal infeasible) shows up on large
		// max-min LPs with violations near 1e-7; finish clamps x into its
		// bounds, and row violations stay within CLP's tolerance.
		sol := finish(p, m.primal(), m.duals(), clpName)
		sol.Basis = m.basis()
		return sol, nil
	case clpInfeasible:
		err = fmt.Errorf("lp: clp (%v, secondary status %d): %w", e.Algorithm, secondary, ErrInfeasible)
	case clpUnbounded:
		err = fmt.Errorf("lp: clp (%v, secondary status %d): %w", e.Algorithm, secondary, ErrUnbounded)
	case clpStopped:
		err = fmt.Errorf("lp: clp stopped after %v (secondary status %d): %w", elapsed, secondary, ErrTimeLimit)
	default:
		err = fmt.Errorf("lp: clp status %d (secondary status %d): %w", status, secondary, ErrNumerical)
	}
	return failed(err, clpName), err
}

// clpHeapPad is the M_TOP_PAD the first Solve sets (see CLP). 16 MiB
// already saved most page faults; 64 MiB was a little faster again.
const clpHeapPad = 64 << 20

// clpMmapThreshold is the M_MMAP_THRESHOLD the first Solve sets (see CLP):
// glibc's largest, 32 MiB on 64-bit systems.
const clpMmapThreshold = 32 << 20

// setHeap sets glibc's top pad and mmap threshold, each if positive.
func setHeap(pad, mmap int) { C.dlsched_pad_heap(C.int(pad), C.int(mmap)) }

// heapSettings returns the top pad and mmap threshold the first Solve sets,
// 0 for each that the process sets itself, by environment variable or
// glibc tunable (getenv reads the environment).
func heapSettings(getenv func(string) string) (pad, mmap int) {
	tunables := getenv("GLIBC_TUNABLES")
	if getenv("MALLOC_TOP_PAD_") == "" && !strings.Contains(tunables, "malloc.top_pad") {
		pad = clpHeapPad
	}
	if getenv("MALLOC_MMAP_THRESHOLD_") == "" && !strings.Contains(tunables, "malloc.mmap_threshold") {
		mmap = clpMmapThreshold
	}
	return pad, mmap
}

var padHeap sync.Once

// clpModel is a loaded CLP model; the caller frees ptr with
// Clp_deleteModel.
type clpModel struct {
	ptr         unsafe.Pointer
	nr, nc, nnz int
	objScale    float64
}

// newClpModel loads p into a new CLP model, with its starting basis if it
// has one that fits. CLP copies every array it is given.
func newClpModel(p *Problem) clpModel {
	m := clpModel{ptr: C.Clp_newModel(), nr: p.NumRows(), nc: p.NumVars()}
	C.Clp_setLogLevel(m.ptr, 0)
	start, index, value := columns(p)
	m.nnz = len(index)
	var obj []float64
	obj, m.objScale = scaledObjective(p.obj)
	C.Clp_loadProblem(m.ptr, C.int(m.nc), C.int(m.nr), &start[0], cIndex(index), cDouble(value),
		cDouble(p.colLower), cDouble(p.colUpper), cDouble(obj), cDouble(p.rowLower), cDouble(p.rowUpper))
	C.Clp_scaling(m.ptr, 2) // geometric
	dir := 1.0
	if p.Sense == Maximize {
		dir = -1
	}
	C.Clp_setOptimizationDirection(m.ptr, C.double(dir))
	if b := p.startFor(); b != nil {
		s := make([]byte, 0, m.nc+m.nr)
		for _, v := range b.Vars {
			s = append(s, byte(v))
		}
		for _, r := range b.Rows {
			s = append(s, byte(r))
		}
		C.dlsched_start(m.ptr, C.int(m.nc), C.int(m.nr), (*C.uchar)(unsafe.Pointer(&s[0])))
	}
	return m
}

// cDouble passes a float64 slice to C; nil for an empty one.
func cDouble(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s[0]))
}

func cIndex(s []C.int) *C.int {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// primal copies out the column solution.
func (m clpModel) primal() []float64 {
	return slices.Clone(unsafe.Slice((*float64)(unsafe.Pointer(C.Clp_primalColumnSolution(m.ptr))), m.nc))
}

// duals copies out the row duals, in the problem's own sense (as CLP
// reports them) and its objective's scale.
func (m clpModel) duals() []float64 {
	if m.nr == 0 {
		return []float64{}
	}
	d := slices.Clone(unsafe.Slice((*float64)(unsafe.Pointer(C.Clp_dualRowSolution(m.ptr))), m.nr))
	for i := range d {
		d[i] /= m.objScale
	}
	return d
}

// basis copies out the status of every column and row.
func (m clpModel) basis() *Basis {
	s := unsafe.Slice((*byte)(unsafe.Pointer(C.Clp_statusArray(m.ptr))), m.nc+m.nr)
	b := &Basis{Vars: make([]BasisStatus, m.nc), Rows: make([]BasisStatus, m.nr)}
	for j := range b.Vars {
		b.Vars[j] = BasisStatus(s[j] & 7) // the upper bits are CLP's own flags
	}
	for i := range b.Rows {
		b.Rows[i] = BasisStatus(s[m.nc+i] & 7)
	}
	return b
}

// clpSliceWork is the work of one slice of a solve: its iterations times
// the problem's rows, columns and nonzeros. Each slice restarts CLP, which
// then scales and factorizes again and forgets its pivoting weights, so
// slices should be few; each must still be short enough for cancellation to
// be noticed within about 100 ms (TestCLPCancel, on 4096 jobs, measures
// it: about 8 ms on an idle machine, up to 55 ms with both cores busy). A
// slice of gavel.las's LPs takes about 7 ms here; gavel.ftf's first LP
// from the slack basis, whose iterations cost ten times as much, up to
// about 100 ms at 1024 jobs (it starts from prices now: allocation's doc).
// At a third of this size, gavel.las on 2048 jobs took 80 ms instead of 56
// (nine restarts per stage instead of three).
const clpSliceWork = 2e7

// sliceIterations returns the iterations of one slice of m's solve.
func (m clpModel) sliceIterations() int {
	return max(50, int(clpSliceWork/float64(m.nr+m.nc+m.nnz)))
}

// sliced runs the simplex in slices of iterations, each continuing from
// the basis the last one left, until it ends for a reason other than the
// slice's iteration limit, ctx is done, or MaxIterations are spent, and
// returns CLP's status. CLP offers no way to interrupt a solve. A deadline
// is CLP's time limit (in process CPU time) over the whole solve. A slice
// that moved neither the objective nor the primal infeasibility to a new
// low doubles the next one (up to 16 times), so that restarts cannot stall
// a degenerate solve.
func (e CLP) sliced(ctx context.Context, m clpModel) int {
	dl, hasDeadline := ctx.Deadline()
	slice, left := m.sliceIterations(), e.MaxIterations
	if e.slice > 0 {
		slice = e.slice
	}
	first, last, low := slice, math.NaN(), math.Inf(1)
	for {
		n := slice
		if e.MaxIterations > 0 {
			n = min(n, left)
		}
		C.Clp_setMaximumIterations(m.ptr, C.int(n))
		limit := -1.0 // none
		if hasDeadline {
			limit = max(time.Until(dl).Seconds(), 0)
		}
		C.Clp_setMaximumSeconds(m.ptr, C.double(limit))
		if e.Algorithm == CLPPrimal {
			C.Clp_primal(m.ptr, 0)
		} else {
			C.Clp_dual(m.ptr, 0)
		}
		status := int(C.Clp_status(m.ptr))
		left -= int(C.Clp_numberIterations(m.ptr))
		if status != clpStopped || int(C.Clp_secondaryStatus(m.ptr)) == clpStoppedOnTime || ctx.Err() != nil ||
			e.MaxIterations > 0 && left <= 0 {
			return status
		}
		// On a degenerate stretch a short slice can end, and the restart
		// undo, the work that would leave it: the objective stands still
		// and the primal infeasibility reaches no new low, slice after
		// slice. The next slice is then twice as long, up to 16 times the
		// first.
		obj, inf := float64(C.Clp_objectiveValue(m.ptr)), float64(C.Clp_sumPrimalInfeasibilities(m.ptr))
		if math.Abs(obj-last) <= 1e-12*max(1, math.Abs(obj)) && !(inf < low) {
			slice = min(2*slice, 16*first)
		}
		last, low = obj, min(low, inf)
	}
}

// scaledObjective returns obj scaled by a power of two so that its largest
// coefficient is at most about 1e15, and the scale. CLP aborts the whole
// process on an objective coefficient of 1e25 or more (an assertion in
// createRim). Smaller objectives are left alone: scaling them down would push
// their small coefficients under CLP's absolute dual tolerance.
func scaledObjective(obj []float64) ([]float64, float64) {
	var big float64
	for _, c := range obj {
		big = max(big, math.Abs(c))
	}
	if big < 1e20 {
		return obj, 1
	}
	_, exp := math.Frexp(big)
	scale := math.Ldexp(1, 50-exp)
	scaled := make([]float64, len(obj))
	for i, c := range obj {
		scaled[i] = c * scale
	}
	return scaled, scale
}

// columns converts the row-wise terms of p into CLP's column-major arrays
// (starts, row indices, values), summing duplicate terms (AddRow keeps
// them, CLP must not see them).
func columns(p *Problem) (start, index []C.int, value []float64) {
	nr, nc := p.NumRows(), p.NumVars()
	first := make([]int, nc+1)
	for _, t := range p.terms {
		first[t.Var+1]++
	}
	for j := range nc {
		first[j+1] += first[j]
	}
	end := make([]int, nc) // end[j] is one past column j's last entry so far
	copy(end, first)
	rows := make([]C.int, len(p.terms))
	vals := make([]float64, len(p.terms))
	for i := range nr {
		_, _, terms := p.Row(i)
		for _, t := range terms {
			j := t.Var
			if k := end[j] - 1; k >= first[j] && rows[k] == C.int(i) {
				// A duplicate within row i: entries of column j arrive in
				// row order, so it can only follow the previous one.
				vals[k] += t.Coef
				if vals[k] == 0 {
					end[j]--
				}
				continue
			}
			rows[end[j]], vals[end[j]] = C.int(i), t.Coef
			end[j]++
		}
	}
	// Close the gaps that cancelled duplicates left: CLP wants none.
	start = make([]C.int, nc+1)
	n := 0
	for j := range nc {
		start[j] = C.int(n)
		n += copy(rows[n:], rows[first[j]:end[j]])
		copy(vals[n-(end[j]-first[j]):], vals[first[j]:end[j]])
	}
	start[nc] = C.int(n)
	return start, rows[:n], vals[:n]
}
