package lp

import "math"

// sparseModel is a Problem in the form the sparse engine works on, scaled:
//
//	minimize ĉᵀx̂  subject to  Â·x̂ − r̂ = 0,  l ≤ (x̂, r̂) ≤ u,
//
// with one logical variable r̂_i per row, the row's activity, whose column
// is −e_i. Variable j < n is structural, n+i is row i's logical. Â = R·A·C
// with R and C diagonal powers of two: x_j = C_j·x̂_j, r_i = r̂_i/R_i,
// ĉ_j = γ·sense·C_j·c_j.
type sparseModel struct {
	n, m int
	// Â by column and by row, duplicates summed.
	colStart []int
	colRow   []int
	colVal   []float64
	rowStart []int
	rowCol   []int
	rowVal   []float64

	lower, upper, cost []float64 // n+m entries, scaled

	colScale, rowScale []float64
	costScale          float64 // γ
	sense              float64
}

// newSparseModel builds the scaled model of p.
func newSparseModel(p *Problem) *sparseModel {
	md := &sparseModel{n: p.NumVars(), m: p.NumRows(), sense: 1}
	if p.Sense == Maximize {
		md.sense = -1
	}
	md.buildColumns(p)
	md.computeScaling()
	md.applyScaling(p)
	md.buildRows()
	return md
}

// buildColumns stores A by column, summing duplicate terms of a row.
func (md *sparseModel) buildColumns(p *Problem) {
	n, m := md.n, md.m
	count := make([]int, n+1)
	for _, t := range p.terms {
		count[t.Var+1]++
	}
	for j := range n {
		count[j+1] += count[j]
	}
	end := append([]int(nil), count[:n]...)
	rows := make([]int, len(p.terms))
	vals := make([]float64, len(p.terms))
	for i := range m {
		_, _, terms := p.Row(i)
		for _, t := range terms {
			j := t.Var
			if k := end[j] - 1; k >= count[j] && rows[k] == i {
				vals[k] += t.Coef // entries of column j arrive in row order
				continue
			}
			rows[end[j]], vals[end[j]] = i, t.Coef
			end[j]++
		}
	}
	md.colStart = make([]int, n+1)
	for j := range n {
		for k := count[j]; k < end[j]; k++ {
			if vals[k] != 0 {
				md.colRow = append(md.colRow, rows[k])
				md.colVal = append(md.colVal, vals[k])
			}
		}
		md.colStart[j+1] = len(md.colRow)
	}
}

// computeScaling sets R and C: a few passes of geometric scaling (each
// row, then each column, divided by the geometric mean of its smallest and
// largest magnitude), rounded to powers of two, then each column
// equilibrated to a largest magnitude in (½, 1]. Factors stay within
// 2^±40, as in the dense engine's scaling (see scale.go for why).
func (md *sparseModel) computeScaling() {
	n, m := md.n, md.m
	md.rowScale, md.colScale = ones(m), ones(n)
	rlo, rhi := make([]float64, m), make([]float64, m)
	for range 4 {
		for i := range m {
			rlo[i], rhi[i] = math.Inf(1), 0
		}
		for j := range n {
			for k := md.colStart[j]; k < md.colStart[j+1]; k++ {
				v := math.Abs(md.colVal[k]) * md.colScale[j]
				i := md.colRow[k]
				rlo[i], rhi[i] = min(rlo[i], v), max(rhi[i], v)
			}
		}
		for i := range m {
			if rhi[i] > 0 {
				md.rowScale[i] = clampScale(1 / (math.Sqrt(rlo[i]) * math.Sqrt(rhi[i])))
			}
		}
		for j := range n {
			lo, hi := md.colSpread(j)
			if hi > 0 {
				md.colScale[j] = clampScale(1 / (math.Sqrt(lo) * math.Sqrt(hi)))
			}
		}
	}
	for i := range m {
		md.rowScale[i] = pow2(md.rowScale[i])
	}
	for j := range n {
		md.colScale[j] = 1
		if _, hi := md.colSpread(j); hi > 0 {
			md.colScale[j] = clampScale(below(hi))
		}
	}
}

// colSpread returns the smallest and largest magnitude of column j scaled
// by the row factors.
func (md *sparseModel) colSpread(j int) (lo, hi float64) {
	lo = math.Inf(1)
	for k := md.colStart[j]; k < md.colStart[j+1]; k++ {
		v := math.Abs(md.colVal[k]) * md.rowScale[md.colRow[k]]
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

func ones(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// applyScaling scales the matrix, the bounds and the costs; γ brings the
// largest cost to (½, 1] (within 2^±40: a cost of 2e-308 stays tiny rather
// than dominate the tolerances).
func (md *sparseModel) applyScaling(p *Problem) {
	n, m := md.n, md.m
	for j := range n {
		for k := md.colStart[j]; k < md.colStart[j+1]; k++ {
			md.colVal[k] *= md.rowScale[md.colRow[k]] * md.colScale[j]
		}
	}
	md.lower, md.upper, md.cost = make([]float64, n+m), make([]float64, n+m), make([]float64, n+m)
	var big float64
	for j := range n {
		l, u, c := p.Var(j)
		md.lower[j], md.upper[j] = l/md.colScale[j], u/md.colScale[j]
		md.cost[j] = md.sense * c * md.colScale[j]
		big = max(big, math.Abs(md.cost[j]))
	}
	for i := range m {
		md.lower[n+i], md.upper[n+i] = p.rowLower[i]*md.rowScale[i], p.rowUpper[i]*md.rowScale[i]
	}
	md.costScale = 1
	if big > 0 {
		md.costScale = clampScale(below(big))
	}
	for j := range n {
		md.cost[j] *= md.costScale
	}
}

// buildRows stores Â by row as well, for computing pivot rows.
func (md *sparseModel) buildRows() {
	n, m := md.n, md.m
	md.rowStart = make([]int, m+1)
	for _, i := range md.colRow {
		md.rowStart[i+1]++
	}
	for i := range m {
		md.rowStart[i+1] += md.rowStart[i]
	}
	next := append([]int(nil), md.rowStart[:m]...)
	md.rowCol = make([]int, len(md.colRow))
	md.rowVal = make([]float64, len(md.colRow))
	for j := range n {
		for k := md.colStart[j]; k < md.colStart[j+1]; k++ {
			i := md.colRow[k]
			md.rowCol[next[i]], md.rowVal[next[i]] = j, md.colVal[k]
			next[i]++
		}
	}
}

// column returns the entries of variable j's column.
func (md *sparseModel) column(j int, one []int, minusOne []float64) ([]int, []float64) {
	if j < md.n {
		return md.colRow[md.colStart[j]:md.colStart[j+1]], md.colVal[md.colStart[j]:md.colStart[j+1]]
	}
	one[0], minusOne[0] = j-md.n, -1
	return one, minusOne
}
