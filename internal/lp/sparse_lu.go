package lp

import "math"

// luFactor is a sparse LU factorization of a basis matrix B, with the
// basis changes since then kept in product form (eta vectors).
//
// Columns of B are numbered by basis position, rows by constraint. The
// factorization is a sequence of pivots s = 0, 1, …: pivot s eliminates
// column pcol[s] using row prow[s], so that B = L·U with L the product of
// the elimination steps (lower triangular after permutation) and U the
// pivot rows as they were when they were pivoted.
type luFactor struct {
	m          int
	prow, pcol []int
	diag       []float64
	// Row s of U (without its pivot): uIdx/uVal[uStart[s]:uStart[s+1]],
	// indexed by basis position.
	uStart []int
	uIdx   []int
	uVal   []float64
	// Multipliers of step s: lIdx/lVal[lStart[s]:lStart[s+1]], by row.
	lStart []int
	lIdx   []int
	lVal   []float64
	// Eta k replaced basis position etaPos[k] by a column whose FTRAN
	// image had etaPiv[k] there and etaIdx/etaVal[etaStart[k]:…] elsewhere.
	etaPos   []int
	etaPiv   []float64
	etaStart []int
	etaIdx   []int
	etaVal   []float64

	work []float64
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

func newBuckets(items, maxCount int) buckets {
	b := buckets{head: make([]int, maxCount+2), next: make([]int, items), prev: make([]int, items), count: make([]int, items)}
	for i := range b.head {
		b.head[i] = -1
	}
	return b
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
// k is given by col(k) (row indices and values), and clears the etas. It
// returns the positions it could not pivot and the rows left without a
// pivot, equally many: empty unless B is singular (numerically).
func (f *luFactor) factorize(m int, col func(k int) ([]int, []float64)) (badCols, badRows []int) {
	f.reset(m)
	b := newLUBuild(m, col)
	for s := 0; s < m; s++ {
		p, q := b.findPivot()
		if p < 0 {
			break
		}
		f.eliminate(b, p, q)
	}
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
	f.clearEtas()
	if len(f.work) != m {
		f.work = make([]float64, m)
	}
}

func (f *luFactor) clearEtas() {
	f.etaPos, f.etaPiv = f.etaPos[:0], f.etaPiv[:0]
	f.etaStart, f.etaIdx, f.etaVal = append(f.etaStart[:0], 0), f.etaIdx[:0], f.etaVal[:0]
}

func newLUBuild(m int, col func(k int) ([]int, []float64)) *luBuild {
	b := &luBuild{
		m: m, rows: make([][]luEntry, m), cols: make([][]int, m), colCount: make([]int, m),
		rowDone: make([]bool, m), colDone: make([]bool, m), mark: make([]int, m),
		rb: newBuckets(m, m), cb: newBuckets(m, m),
	}
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
	return b
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
	b.rows[p] = nil
	b.cols[q] = nil
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

// ftran solves B·z = rhs. rhs is indexed by row and is overwritten; z, by
// basis position, receives the solution.
func (f *luFactor) ftran(rhs, z []float64) {
	for s, p := range f.prow {
		v := rhs[p]
		if v == 0 {
			continue
		}
		for t := f.lStart[s]; t < f.lStart[s+1]; t++ {
			rhs[f.lIdx[t]] -= f.lVal[t] * v
		}
	}
	for s := len(f.prow) - 1; s >= 0; s-- {
		v := rhs[f.prow[s]]
		for t := f.uStart[s]; t < f.uStart[s+1]; t++ {
			v -= f.uVal[t] * z[f.uIdx[t]]
		}
		z[f.pcol[s]] = v / f.diag[s]
	}
	for k, r := range f.etaPos {
		v := z[r]
		if v == 0 {
			continue
		}
		v /= f.etaPiv[k]
		z[r] = v
		for t := f.etaStart[k]; t < f.etaStart[k+1]; t++ {
			z[f.etaIdx[t]] -= f.etaVal[t] * v
		}
	}
}

// btran solves Bᵀ·y = c. c is indexed by basis position and is
// overwritten; y, by row, receives the solution.
func (f *luFactor) btran(c, y []float64) {
	for k := len(f.etaPos) - 1; k >= 0; k-- {
		r := f.etaPos[k]
		v := c[r]
		for t := f.etaStart[k]; t < f.etaStart[k+1]; t++ {
			v -= f.etaVal[t] * c[f.etaIdx[t]]
		}
		c[r] = v / f.etaPiv[k]
	}
	for s, p := range f.prow {
		v := c[f.pcol[s]] / f.diag[s]
		y[p] = v
		if v == 0 {
			continue
		}
		for t := f.uStart[s]; t < f.uStart[s+1]; t++ {
			c[f.uIdx[t]] -= f.uVal[t] * v
		}
	}
	for s := len(f.prow) - 1; s >= 0; s-- {
		v := y[f.prow[s]]
		for t := f.lStart[s]; t < f.lStart[s+1]; t++ {
			v -= f.lVal[t] * y[f.lIdx[t]]
		}
		y[f.prow[s]] = v
	}
}

// update records that basis position r now holds the column whose FTRAN
// image (before the change) is alpha.
func (f *luFactor) update(r int, alpha []float64) {
	f.etaPos = append(f.etaPos, r)
	f.etaPiv = append(f.etaPiv, alpha[r])
	for i, v := range alpha {
		if i != r && math.Abs(v) > 1e-14 {
			f.etaIdx, f.etaVal = append(f.etaIdx, i), append(f.etaVal, v)
		}
	}
	f.etaStart = append(f.etaStart, len(f.etaIdx))
}

// etas returns the number of updates since the last factorization and
// their nonzeros.
func (f *luFactor) etas() (count, nnz int) { return len(f.etaPos), len(f.etaIdx) }

// nnz returns the nonzeros of L and U.
func (f *luFactor) nnz() int { return len(f.uIdx) + len(f.lIdx) + len(f.diag) }
