package lp

import (
	"math"
	"math/bits"
)

// luFactor is a sparse LU factorization of a basis matrix B, with the
// basis changes since then as Forrest–Tomlin updates.
//
// Columns of B are numbered by basis position, rows by constraint. The
// factorization is a sequence of steps s = 0, 1, …: step s pivots on row
// prow[s] and column pcol[s], with B = L·U, L the product of the
// elimination steps and U the pivot rows as they were when pivoted: row s
// of U has the diagonal diag[s] and entries in the columns of later steps
// (uIdx holds step numbers).
//
// An update replaces the column of position r, pivoted at step t, by a new
// one. Forrest and Tomlin's method appends a step for it instead of
// recomputing: step t dies, the new column's image under L and the updates
// so far (the spike) becomes the column of the new last step, and the old
// row of step t, which now lies below the diagonal, is eliminated with the
// rows of the steps after t; the multipliers form a row eta, applied after
// L. The new step's row has only its diagonal left, and the spike's
// entries above it are kept by column (spike) and by row (rowSpikes). On
// the allocation LPs the images B⁻¹a of entering columns are dense (every
// basic share hangs on t), while spikes and row etas stay sparse: updates
// in product form, which store B⁻¹a, made FTRAN three quarters of the
// solve.
type luFactor struct {
	m, m0      int // rows; steps of the factorization proper
	prow, pcol []int
	diag       []float64
	dead       []bool
	stepOf     []int // basis position → its live step
	owner      []int // row → its live step
	uStart     []int
	uIdx       []int
	uVal       []float64
	// U by column too, for ftran, which then skips the columns of zero
	// values: the steps of column s's entries in ucStep[ucStart[s]:…].
	ucStart []int
	ucStep  []int
	ucVal   []float64
	// Multipliers of step s < m0: lIdx/lVal[lStart[s]:lStart[s+1]], by row;
	// and by the step whose pivot row they multiply: the multipliers in
	// row prow[s] are lrVal[lrStart[s]:…], of the steps lrStep.
	lStart  []int
	lIdx    []int
	lVal    []float64
	lrStart []int
	lrStep  []int
	lrVal   []float64
	// The steps with multipliers, and those whose rows have some: most
	// steps of a basis of slacks and sparse columns have none.
	lSteps, lrSteps []int
	// Update k (step m0+k): its spike, entries by row, and its row eta
	// (row rTarget[k] −= Σ rVal·row rIdx).
	spStart    []int
	spIdx      []int
	spVal      []float64
	rTarget    []int
	rStart     []int
	rIdx       []int
	rVal       []float64
	rowSpikes  [][]spikeEntry // live spike entries by row
	etaReaders [][]int        // by row, the row etas that read it
	build      luBuild        // kept for the next factorization
	work, elim []float64      // by step; work is zero between solves
	nz         []int          // positions ftran set, see ftran
	ynz        []int          // rows btran set, see btran
	// The spike of the last ftran that kept it, see update.
	spikeRow []int
	spikeVal []float64
	// Hypersparse solves: rows listed in rows, steps reached as bits.
	rowMark []bool
	rows    []int
	reached stepSet
	etas    stepSet // row etas to apply
}

type spikeEntry struct {
	step int
	v    float64
}

// luThreshold is the threshold of partial pivoting: a pivot is at least
// this fraction of the largest entry of its column, which bounds every
// multiplier by 10.
const luThreshold = 0.1

// luTiny is the magnitude below which an entry of the (scaled) active
// matrix counts as zero when choosing pivots.
const luTiny = 1e-11

// luBuild is the active submatrix during a factorization.
type luBuild struct {
	m    int
	rows [][]luEntry // active entries by row, by basis position
	// cols[k] lists rows that hold or held an entry in column k; rows
	// already pivoted stay listed (lazy deletion) and are skipped.
	cols     [][]int
	colCount []int
	rowDone  []bool
	colDone  []bool
	mark     []int
	rb, cb   buckets
}

type luEntry struct {
	k int
	v float64
}

// buckets are doubly linked lists of items by count, for finding the
// rows and columns of fewest entries in constant time.
type buckets struct {
	head       []int
	next, prev []int
	count      []int
}

// reset empties the buckets for items with counts up to maxCount,
// reusing their arrays.
func (b *buckets) reset(items, maxCount int) {
	b.head = resize(b.head, maxCount+2)
	b.next, b.prev, b.count = resize(b.next, items), resize(b.prev, items), resize(b.count, items)
	for i := range b.head {
		b.head[i] = -1
	}
}

// resize returns s with length n, reusing its array if large enough; the
// contents are left to the caller.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (b *buckets) insert(i, c int) {
	c = min(c, len(b.head)-1)
	b.count[i] = c
	b.prev[i] = -1
	b.next[i] = b.head[c]
	if b.head[c] >= 0 {
		b.prev[b.head[c]] = i
	}
	b.head[c] = i
}

func (b *buckets) remove(i int) {
	if b.prev[i] >= 0 {
		b.next[b.prev[i]] = b.next[i]
	} else {
		b.head[b.count[i]] = b.next[i]
	}
	if b.next[i] >= 0 {
		b.prev[b.next[i]] = b.prev[i]
	}
}

func (b *buckets) move(i, c int) {
	b.remove(i)
	b.insert(i, c)
}

// factorize computes the LU factorization of the m×m matrix whose column
// k is given by col(k) (row indices and values), and clears the updates. It
// returns the positions it could not pivot and the rows left without a
// pivot, equally many: empty unless B is singular (numerically).
func (f *luFactor) factorize(m int, col func(k int) ([]int, []float64)) (badCols, badRows []int) {
	f.reset(m)
	b := &f.build
	b.reset(m, col)
	for s := 0; s < m; s++ {
		p, q := b.findPivot()
		if p < 0 {
			break
		}
		f.eliminate(b, p, q)
	}
	f.finish()
	for k := range m {
		if !b.colDone[k] {
			badCols = append(badCols, k)
		}
	}
	for i := range m {
		if !b.rowDone[i] {
			badRows = append(badRows, i)
		}
	}
	return badCols, badRows
}

func (f *luFactor) reset(m int) {
	f.m = m
	f.prow, f.pcol, f.diag = f.prow[:0], f.pcol[:0], f.diag[:0]
	f.uStart, f.uIdx, f.uVal = append(f.uStart[:0], 0), f.uIdx[:0], f.uVal[:0]
	f.lStart, f.lIdx, f.lVal = append(f.lStart[:0], 0), f.lIdx[:0], f.lVal[:0]
	f.spStart, f.spIdx, f.spVal = append(f.spStart[:0], 0), f.spIdx[:0], f.spVal[:0]
	f.rTarget, f.rStart, f.rIdx, f.rVal = f.rTarget[:0], append(f.rStart[:0], 0), f.rIdx[:0], f.rVal[:0]
	if len(f.rowSpikes) != m {
		f.rowSpikes, f.etaReaders = make([][]spikeEntry, m), make([][]int, m)
		f.stepOf, f.owner = make([]int, m), make([]int, m)
		f.rowMark = make([]bool, m)
	}
	for i := range f.rowSpikes {
		f.rowSpikes[i] = f.rowSpikes[i][:0]
		f.etaReaders[i] = f.etaReaders[i][:0]
	}
}

// finish numbers U's entries by step and sizes the work arrays.
func (f *luFactor) finish() {
	f.m0 = len(f.prow)
	for s, k := range f.pcol {
		f.stepOf[k] = s
		f.owner[f.prow[s]] = s
	}
	for t, k := range f.uIdx {
		f.uIdx[t] = f.stepOf[k]
	}
	if f.m0 == f.m { // a singular B is factorized again, repaired
		f.transposeU()
		f.transposeL()
	}
	f.lSteps, f.lrSteps = f.lSteps[:0], f.lrSteps[:0]
	for s := range f.m0 {
		if f.lStart[s+1] > f.lStart[s] {
			f.lSteps = append(f.lSteps, s)
		}
		if f.m0 == f.m && f.lrStart[s+1] > f.lrStart[s] {
			f.lrSteps = append(f.lrSteps, s)
		}
	}
	f.dead = append(f.dead[:0], make([]bool, f.m0)...)
	if need := f.m0 + spMaxUpdates + 1; len(f.work) < need {
		f.work, f.elim = make([]float64, need), make([]float64, need)
		f.reached.bits = make([]uint64, (need+63)/64)
		f.etas.bits = make([]uint64, (spMaxUpdates+63)/64)
	}
}

// transposeL stores L's multipliers by the step of their row.
func (f *luFactor) transposeL() {
	f.lrStart = append(f.lrStart[:0], make([]int, f.m0+1)...)
	for _, i := range f.lIdx {
		f.lrStart[f.owner[i]+1]++
	}
	for s := range f.m0 {
		f.lrStart[s+1] += f.lrStart[s]
	}
	n := len(f.lIdx)
	f.lrStep, f.lrVal = append(f.lrStep[:0], make([]int, n)...), append(f.lrVal[:0], make([]float64, n)...)
	next := append([]int(nil), f.lrStart[:f.m0]...)
	for s := range f.m0 {
		for t := f.lStart[s]; t < f.lStart[s+1]; t++ {
			k := f.owner[f.lIdx[t]]
			f.lrStep[next[k]], f.lrVal[next[k]] = s, f.lVal[t]
			next[k]++
		}
	}
}

// transposeU stores U by column.
func (f *luFactor) transposeU() {
	f.ucStart = append(f.ucStart[:0], make([]int, f.m0+1)...)
	for _, k := range f.uIdx {
		f.ucStart[k+1]++
	}
	for s := range f.m0 {
		f.ucStart[s+1] += f.ucStart[s]
	}
	n := len(f.uIdx)
	f.ucStep, f.ucVal = append(f.ucStep[:0], make([]int, n)...), append(f.ucVal[:0], make([]float64, n)...)
	next := append([]int(nil), f.ucStart[:f.m0]...)
	for s := range f.m0 {
		for t := f.uStart[s]; t < f.uStart[s+1]; t++ {
			k := f.uIdx[t]
			f.ucStep[next[k]], f.ucVal[next[k]] = s, f.uVal[t]
			next[k]++
		}
	}
}

// reset loads the m×m matrix whose column k is col(k), reusing the
// arrays of the last factorization: they are many and small.
func (b *luBuild) reset(m int, col func(k int) ([]int, []float64)) {
	b.m = m
	b.rows, b.cols = resize(b.rows, m), resize(b.cols, m)
	b.colCount, b.mark = resize(b.colCount, m), resize(b.mark, m)
	b.rowDone, b.colDone = resize(b.rowDone, m), resize(b.colDone, m)
	clear(b.rowDone)
	clear(b.colDone)
	for i := range m {
		b.rows[i], b.cols[i] = b.rows[i][:0], b.cols[i][:0]
	}
	b.rb.reset(m, m)
	b.cb.reset(m, m)
	for k := range m {
		idx, val := col(k)
		for t, i := range idx {
			if val[t] != 0 {
				b.rows[i] = append(b.rows[i], luEntry{k, val[t]})
				b.cols[k] = append(b.cols[k], i)
			}
		}
		b.colCount[k] = len(b.cols[k])
	}
	for i := range m {
		b.mark[i] = -1
		b.rb.insert(i, len(b.rows[i]))
	}
	for k := range m {
		b.cb.insert(k, b.colCount[k])
	}
}

// value returns the entry of row i in column k, or 0.
func (b *luBuild) value(i, k int) float64 {
	for _, e := range b.rows[i] {
		if e.k == k {
			return e.v
		}
	}
	return 0
}

// colMax returns the largest magnitude in active column k.
func (b *luBuild) colMax(k int) float64 {
	var big float64
	for _, i := range b.cols[k] {
		if !b.rowDone[i] {
			big = max(big, math.Abs(b.value(i, k)))
		}
	}
	return big
}

// findPivot chooses the next pivot by Markowitz's rule, the product of the
// other entries in its row and column, among entries that pass the
// threshold: column singletons first (no elimination), then row singletons,
// then a search of the sparsest columns. It returns −1s when no column has
// an acceptable entry left.
func (b *luBuild) findPivot() (p, q int) {
	for k := b.cb.head[1]; k >= 0; k = b.cb.next[k] {
		for _, i := range b.cols[k] {
			if !b.rowDone[i] && math.Abs(b.value(i, k)) > luTiny {
				return i, k
			}
		}
	}
	for i := b.rb.head[1]; i >= 0; i = b.rb.next[i] {
		e := b.rows[i][0]
		if a := math.Abs(e.v); a > luTiny && a >= luThreshold*b.colMax(e.k) {
			return i, e.k
		}
	}
	return b.markowitz()
}

// markowitz searches the columns by increasing count, stopping after four
// columns with an acceptable pivot.
func (b *luBuild) markowitz() (p, q int) {
	p, q = -1, -1
	best, seen := math.MaxInt, 0
	for c := 1; c < len(b.cb.head); c++ {
		for k := b.cb.head[c]; k >= 0; k = b.cb.next[k] {
			big := b.colMax(k)
			if big <= luTiny {
				continue
			}
			found := false
			for _, i := range b.cols[k] {
				if b.rowDone[i] {
					continue
				}
				a := math.Abs(b.value(i, k))
				if a < luThreshold*big || a <= luTiny {
					continue
				}
				found = true
				if cost := (len(b.rows[i]) - 1) * (c - 1); cost < best {
					p, q, best = i, k, cost
				}
			}
			if found {
				seen++
			}
			if seen >= 4 || best == 0 {
				return p, q
			}
		}
	}
	return p, q
}

// eliminate pivots on entry (p, q): records row p as a row of U, and
// subtracts multiples of it from the other active rows of column q.
func (f *luFactor) eliminate(b *luBuild, p, q int) {
	piv := b.value(p, q)
	f.prow, f.pcol, f.diag = append(f.prow, p), append(f.pcol, q), append(f.diag, piv)
	urow := b.rows[p]
	for _, e := range urow {
		if e.k != q {
			f.uIdx, f.uVal = append(f.uIdx, e.k), append(f.uVal, e.v)
			b.colCount[e.k]--
			b.cb.move(e.k, b.colCount[e.k])
		}
	}
	b.rowDone[p] = true
	b.rb.remove(p)
	b.colDone[q] = true
	b.cb.remove(q)
	for _, i := range b.cols[q] {
		if b.rowDone[i] {
			continue
		}
		l := b.value(i, q) / piv
		f.lIdx, f.lVal = append(f.lIdx, i), append(f.lVal, l)
		b.update(i, q, l, urow)
	}
	b.rows[p] = b.rows[p][:0]
	b.cols[q] = b.cols[q][:0]
	f.uStart = append(f.uStart, len(f.uIdx))
	f.lStart = append(f.lStart, len(f.lIdx))
}

// update replaces row i by row i − l·urow, dropping column q.
func (b *luBuild) update(i, q int, l float64, urow []luEntry) {
	row := b.rows[i]
	for t := 0; t < len(row); t++ {
		if row[t].k == q {
			row[t] = row[len(row)-1]
			row = row[:len(row)-1]
			break
		}
	}
	for t, e := range row {
		b.mark[e.k] = t
	}
	for _, e := range urow {
		if e.k == q {
			continue
		}
		if t := b.mark[e.k]; t >= 0 {
			row[t].v -= l * e.v
			continue
		}
		row = append(row, luEntry{e.k, -l * e.v})
		b.cols[e.k] = append(b.cols[e.k], i)
		b.colCount[e.k]++
		b.cb.move(e.k, b.colCount[e.k])
	}
	for _, e := range row {
		b.mark[e.k] = -1
	}
	b.rows[i] = row
	b.rb.move(i, len(row))
}

// spHyper: a solve whose right-hand side has at most m/spHyper nonzeros
// follows them through the factors (hypersparse) instead of visiting
// every step, until it has reached that many steps. The iterations of the
// allocation LPs solve for a few percent of the rows.
const spHyper = 8

// ftran solves B·z = rhs. rhs is indexed by row, its nonzeros among idx
// (nil: anywhere), and is left zero; z, by basis position, must be zero
// and receives the solution, its nonzeros listed in f.nz in decreasing
// step order. With keep, ftran stores the spike that update needs for
// this column: rhs after L and the row etas.
func (f *luFactor) ftran(rhs []float64, idx []int, z []float64, keep bool) {
	hyper := idx != nil && len(idx) <= f.m/spHyper
	f.rows = f.rows[:0]
	if hyper {
		for _, i := range idx {
			f.addRow(i)
		}
	}
	hyper = f.ftranL(rhs, hyper)
	if keep {
		f.keepSpike(rhs, hyper)
	}
	for _, i := range f.rows {
		f.rowMark[i] = false
	}
	f.nz = f.nz[:0]
	if hyper {
		f.ftranUHyper(rhs, z)
	} else {
		f.ftranU(rhs, z, len(f.prow)-1)
	}
}

// addRow lists row i in f.rows, once.
func (f *luFactor) addRow(i int) {
	if !f.rowMark[i] {
		f.rowMark[i] = true
		f.rows = append(f.rows, i)
	}
}

// ftranL applies L and the row etas to rhs; while hyper, it lists the
// rows it makes nonzero, and it returns false once they are too many.
func (f *luFactor) ftranL(rhs []float64, hyper bool) bool {
	limit := f.m / spHyper
	for _, s := range f.lSteps {
		v := rhs[f.prow[s]]
		if v == 0 {
			continue
		}
		for t := f.lStart[s]; t < f.lStart[s+1]; t++ {
			rhs[f.lIdx[t]] -= f.lVal[t] * v
			if hyper {
				f.addRow(f.lIdx[t])
			}
		}
		hyper = hyper && len(f.rows) <= limit
	}
	if !hyper {
		f.ftranEtas(rhs, 0)
		return false
	}
	return f.ftranEtasHyper(rhs)
}

// ftranEtas applies the row etas from k on.
func (f *luFactor) ftranEtas(rhs []float64, k int) {
	for ; k < len(f.rTarget); k++ {
		rhs[f.rTarget[k]] -= f.etaDot(k, rhs)
	}
}

// etaDot returns row eta k's sum over rhs.
func (f *luFactor) etaDot(k int, rhs []float64) float64 {
	var acc float64
	for t := f.rStart[k]; t < f.rStart[k+1]; t++ {
		acc += f.rVal[t] * rhs[f.rIdx[t]]
	}
	return acc
}

// ftranEtasHyper applies only the row etas that read a listed row, in
// order, listing the rows they change; it hands over to ftranEtas and
// returns false once the rows are too many.
func (f *luFactor) ftranEtasHyper(rhs []float64) bool {
	set := &f.etas
	for _, i := range f.rows {
		for _, k := range f.etaReaders[i] {
			set.add(k)
		}
	}
	for k, w := set.next(0); k >= 0; k, w = set.next(w) {
		acc := f.etaDot(k, rhs)
		if acc == 0 {
			continue
		}
		target := f.rTarget[k]
		rhs[target] -= acc
		f.addRow(target)
		if len(f.rows) > f.m/spHyper {
			clear(set.bits)
			f.ftranEtas(rhs, k+1)
			return false
		}
		for _, k2 := range f.etaReaders[target] {
			if k2 > k {
				set.add(k2)
			}
		}
	}
	return true
}

// keepSpike stores rhs's nonzeros as the spike for update.
func (f *luFactor) keepSpike(rhs []float64, hyper bool) {
	f.spikeRow, f.spikeVal = f.spikeRow[:0], f.spikeVal[:0]
	add := func(i int) {
		if v := rhs[i]; v != 0 {
			f.spikeRow, f.spikeVal = append(f.spikeRow, i), append(f.spikeVal, v)
		}
	}
	if hyper {
		for _, i := range f.rows {
			add(i)
		}
		return
	}
	for i := range rhs {
		add(i)
	}
}

// ftranU solves with U and the updates' steps, visiting steps from top
// down.
func (f *luFactor) ftranU(rhs, z []float64, top int) {
	for s := top; s >= 0; s-- {
		if !f.dead[s] {
			f.ftranStep(s, rhs, z, false)
		}
	}
}

// ftranUHyper solves with U and the updates' steps, visiting only the
// steps that rhs reaches, from the top down, as ftranU would; it hands
// over to ftranU when they become many.
func (f *luFactor) ftranUHyper(rhs, z []float64) {
	set := &f.reached
	set.n = 0
	for _, i := range f.rows {
		if rhs[i] != 0 {
			set.add(f.owner[i])
		}
	}
	for w := (len(f.prow) - 1) >> 6; w >= 0; {
		b := set.bits[w]
		if b == 0 {
			w--
			continue
		}
		s := w<<6 + 63 - bits.LeadingZeros64(b)
		if set.n > f.m/spHyper {
			clear(set.bits[:w+1])
			f.ftranU(rhs, z, s)
			return
		}
		set.bits[w] = b &^ (1 << (s & 63))
		f.ftranStep(s, rhs, z, true)
	}
}

// ftranStep solves step s: z at its position, and its column taken out
// of the rows of the steps below; with reach, those steps are reached.
func (f *luFactor) ftranStep(s int, rhs, z []float64, reach bool) {
	v := rhs[f.prow[s]]
	if v == 0 {
		return
	}
	rhs[f.prow[s]] = 0
	v /= f.diag[s]
	z[f.pcol[s]] = v
	f.nz = append(f.nz, f.pcol[s])
	if s < f.m0 {
		// Entries in rows of steps an update replaced are gone.
		for t := f.ucStart[s]; t < f.ucStart[s+1]; t++ {
			if s2 := f.ucStep[t]; !f.dead[s2] {
				rhs[f.prow[s2]] -= f.ucVal[t] * v
				if reach {
					f.reached.add(s2)
				}
			}
		}
		return
	}
	// Entries in rows a later update took over were eliminated from them:
	// skip those.
	k := s - f.m0
	for t := f.spStart[k]; t < f.spStart[k+1]; t++ {
		if i := f.spIdx[t]; f.owner[i] < s {
			rhs[i] -= f.spVal[t] * v
			if reach {
				f.reached.add(f.owner[i])
			}
		}
	}
}

// stepSet is a set of steps as bits, which the hypersparse solves visit
// in order, and the number added since n was last cleared.
type stepSet struct {
	bits []uint64
	n    int
}

func (set *stepSet) add(s int) {
	if b := uint64(1) << (s & 63); set.bits[s>>6]&b == 0 {
		set.bits[s>>6] |= b
		set.n++
	}
}

// next removes and returns the smallest step in the set from word w on,
// and the word it is in; −1 if there is none.
func (set *stepSet) next(w int) (s, at int) {
	for ; w < len(set.bits); w++ {
		if b := set.bits[w]; b != 0 {
			s = w<<6 + bits.TrailingZeros64(b)
			set.bits[w] = b & (b - 1)
			return s, w
		}
	}
	return -1, w
}

// btran solves Bᵀ·y = c. c is indexed by basis position, its nonzeros
// among idx (nil: anywhere); y, by row, receives the solution and must be
// zero if idx is given; f.ynz lists the rows y may be nonzero in.
func (f *luFactor) btran(c []float64, idx []int, y []float64) {
	f.ynz = f.ynz[:0]
	if idx != nil && len(idx) <= f.m/spHyper {
		f.btranUHyper(c, idx, y)
	} else {
		for r, s := range f.stepOf {
			f.work[s] = c[r]
		}
		f.btranU(y, 0)
	}
	for k := len(f.rTarget) - 1; k >= 0; k-- {
		if v := y[f.rTarget[k]]; v != 0 {
			for t := f.rStart[k]; t < f.rStart[k+1]; t++ {
				y[f.rIdx[t]] -= f.rVal[t] * v
				f.addY(f.rIdx[t])
			}
		}
	}
	// Lᵀ by rows of L, skipping zeros: row prow[s] is final once the
	// steps after s are done, and feeds the steps before it.
	for k := len(f.lrSteps) - 1; k >= 0; k-- {
		s := f.lrSteps[k]
		if v := y[f.prow[s]]; v != 0 {
			for t := f.lrStart[s]; t < f.lrStart[s+1]; t++ {
				y[f.prow[f.lrStep[t]]] -= f.lrVal[t] * v
				f.addY(f.prow[f.lrStep[t]])
			}
		}
	}
	for _, i := range f.ynz {
		f.rowMark[i] = false
	}
}

// addY lists row i in f.ynz, once.
func (f *luFactor) addY(i int) {
	if !f.rowMark[i] {
		f.rowMark[i] = true
		f.ynz = append(f.ynz, i)
	}
}

// btranU solves with Uᵀ and the updates' steps from step from up, the
// values by step in f.work, which it leaves zero.
func (f *luFactor) btranU(y []float64, from int) {
	for s := from; s < len(f.prow); s++ {
		if !f.dead[s] {
			f.btranStep(s, y, false)
		}
	}
}

// btranUHyper is btranU visiting only the steps c reaches, from the
// bottom up, until they become many.
func (f *luFactor) btranUHyper(c []float64, idx []int, y []float64) {
	set := &f.reached
	set.n = 0
	for _, r := range idx {
		if s := f.stepOf[r]; c[r] != 0 {
			f.work[s] = c[r]
			set.add(s)
		}
	}
	for s, w := set.next(0); s >= 0; s, w = set.next(w) {
		if set.n > f.m/spHyper {
			clear(set.bits[w:])
			f.btranU(y, s)
			return
		}
		f.btranStep(s, y, true)
	}
}

// btranStep solves step s: y in its row, and its row of U and the spike
// entries in it taken out of the later steps; with reach, those steps are
// reached.
func (f *luFactor) btranStep(s int, y []float64, reach bool) {
	w := f.work
	if w[s] == 0 {
		y[f.prow[s]] = 0
		return
	}
	v := w[s] / f.diag[s]
	w[s] = 0
	y[f.prow[s]] = v
	f.addY(f.prow[s])
	if s < f.m0 {
		for t := f.uStart[s]; t < f.uStart[s+1]; t++ {
			if s2 := f.uIdx[t]; !f.dead[s2] {
				w[s2] -= f.uVal[t] * v
				if reach {
					f.reached.add(s2)
				}
			}
		}
	}
	for _, e := range f.rowSpikes[f.prow[s]] {
		if s2 := e.step; s2 > s && !f.dead[s2] {
			w[s2] -= e.v * v
			if reach {
				f.reached.add(s2)
			}
		}
	}
}

// spMaxUpdates bounds the updates between factorizations.
const spMaxUpdates = 100

// update replaces the column of basis position r by the one whose spike
// the last ftran with keep stored. It returns false when the new diagonal
// is too small for the factors to stay accurate: the caller must
// factorize.
func (f *luFactor) update(r int) bool {
	t, step := f.stepOf[r], len(f.prow)
	p := f.prow[t]
	var size, own float64
	for n, i := range f.spikeRow {
		v := f.spikeVal[n]
		size = max(size, math.Abs(v))
		if i == p {
			own = v
		} else if math.Abs(v) > 1e-14 {
			f.spIdx, f.spVal = append(f.spIdx, i), append(f.spVal, v)
			f.rowSpikes[i] = append(f.rowSpikes[i], spikeEntry{step, v})
		}
	}
	f.spStart = append(f.spStart, len(f.spIdx))
	f.dead = append(f.dead, false)
	diag, big := f.eliminateRow(t, step, own)
	f.dead[t] = true
	f.rowSpikes[p] = f.rowSpikes[p][:0]
	f.prow, f.pcol, f.diag = append(f.prow, p), append(f.pcol, r), append(f.diag, diag)
	f.stepOf[r], f.owner[p] = step, step
	f.rTarget = append(f.rTarget, p)
	f.rStart = append(f.rStart, len(f.rIdx))
	for _, i := range f.rIdx[f.rStart[len(f.rTarget)-1]:] {
		f.etaReaders[i] = append(f.etaReaders[i], len(f.rTarget)-1)
	}
	// Forrest–Tomlin does not pivot: large multipliers lose accuracy
	// (TestLUUpdates measured residuals of 1e-6 after a hundred updates
	// without this bound), and a tiny diagonal means B is nearly singular.
	return big < 1e3 && math.Abs(diag) > 1e-9*max(1, size) && len(f.rTarget) < spMaxUpdates
}

// eliminateRow clears the entries of step t's row in the columns of the
// steps after it, in order, recording the multipliers as a row eta, and
// returns what is left in the new step's column (the new diagonal) and the
// largest multiplier. It visits only the steps the row reaches, in the
// order of a loop over all of them.
func (f *luFactor) eliminateRow(t, step int, own float64) (diag, big float64) {
	w := f.elim
	f.subtractRow(t, -1)
	w[step] = own
	for s, at := f.reached.next(t >> 6); s >= 0; s, at = f.reached.next(at) {
		if s == step || w[s] == 0 {
			continue
		}
		mu := w[s] / f.diag[s]
		w[s] = 0
		big = max(big, math.Abs(mu))
		f.rIdx, f.rVal = append(f.rIdx, f.prow[s]), append(f.rVal, mu)
		f.subtractRow(s, mu)
	}
	diag = w[step]
	w[step] = 0
	return diag, big
}

// subtractRow subtracts mu times step s's row (of U and of the spikes)
// from f.elim, reaching the steps of its entries.
func (f *luFactor) subtractRow(s int, mu float64) {
	w := f.elim
	if s < f.m0 {
		for t := f.uStart[s]; t < f.uStart[s+1]; t++ {
			if k := f.uIdx[t]; !f.dead[k] {
				w[k] -= mu * f.uVal[t]
				f.reached.add(k)
			}
		}
	}
	for _, e := range f.rowSpikes[f.prow[s]] {
		if k := e.step; k > s && !f.dead[k] {
			w[k] -= mu * e.v
			f.reached.add(k)
		}
	}
}

// updates returns the number of updates since the last factorization.
func (f *luFactor) updates() int { return len(f.rTarget) }

// nnz returns the nonzeros of L and U.
func (f *luFactor) nnz() int { return len(f.uIdx) + len(f.lIdx) + len(f.diag) }
