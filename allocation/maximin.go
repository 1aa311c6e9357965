package allocation

// maximin returns a mixture μ (μ ≥ 0, Σ_k μ_k = 1) that maximizes
// min_m v[m]·μ, and that value, for a small matrix v ≥ 0 with at least one
// row of len(v[0]) columns: the value of the matrix game in which the
// minimizer picks a row. It is the linear program
//
//	maximize z   subject to   z − v[m]·μ ≤ 0 for every m,   Σ_k μ_k ≤ 1,   z, μ ≥ 0,
//
// which small solves.
func maximin(v [][]float64) ([]float64, float64) {
	nk := len(v[0])
	a := make([][]float64, len(v)+1)
	for m, vm := range v {
		a[m] = make([]float64, 1+nk)
		a[m][0] = 1
		for k, x := range vm {
			a[m][1+k] = -x
		}
	}
	a[len(v)] = make([]float64, 1+nk)
	for k := range nk {
		a[len(v)][1+k] = 1
	}
	b := make([]float64, len(a))
	b[len(v)] = 1
	c := make([]float64, 1+nk)
	c[0] = 1
	x, value := small(c, a, b)
	return x[1:], value
}

// small solves the small linear program
//
//	maximize c·x   subject to   a x ≤ b,   x ≥ 0,
//
// whose b ≥ 0 makes the slack basis feasible, by a dense primal simplex
// from there, and returns x and c·x. The program must be bounded. Bland's
// rule (the lowest index enters, and leaves among ties) keeps the pivots,
// degenerate from the first in crash's programs, from cycling, and no
// entry under 1e-9 is a pivot: with 1e-12 allowed, a 34-row game lost
// 3e-4 of its value to round-off (TestMaximin). Crash's cutting planes give
// it a few dozen rows over a handful of prices, where the general engines'
// fixed cost per solve was most of the crash's time.
func small(c []float64, a [][]float64, b []float64) ([]float64, float64) {
	const eps, pivotTol = 1e-12, 1e-9
	rows, n := len(a), len(c)
	cols := n + rows // the variables, then a slack per row
	tab := make([][]float64, rows+1)
	basic := make([]int, rows)
	for r := range rows {
		tab[r] = make([]float64, cols+1) // the last column is the right-hand side
		copy(tab[r], a[r])
		tab[r][n+r] = 1
		tab[r][cols] = b[r]
		basic[r] = n + r
	}
	obj := make([]float64, cols+1) // reduced costs, negated
	for k, x := range c {
		obj[k] = -x
	}
	tab[rows] = obj
	for range 50 * (rows + cols) {
		enter := -1
		for k := range cols {
			if obj[k] < -eps {
				enter = k
				break
			}
		}
		if enter < 0 {
			break
		}
		leave, best := -1, 0.0
		for r := range rows {
			p := tab[r][enter]
			if p <= pivotTol {
				continue
			}
			ratio := tab[r][cols] / p
			tie := 1e-12 * max(1, abs(ratio))
			if leave < 0 || ratio < best-tie || ratio <= best+tie && basic[r] < basic[leave] {
				leave, best = r, ratio
			}
		}
		if leave < 0 { // only round-off: the program is bounded
			break
		}
		pivot(tab, leave, enter)
		basic[leave] = enter
	}
	x := make([]float64, n)
	for r, v := range basic {
		if v < n {
			x[v] = max(tab[r][cols], 0)
		}
	}
	return x, obj[cols]
}

// pivot makes column c basic in row r of tab.
func pivot(tab [][]float64, r, c int) {
	pr := tab[r]
	inv := 1 / pr[c]
	for i := range pr {
		pr[i] *= inv
	}
	for i, row := range tab {
		if i == r || row[c] == 0 {
			continue
		}
		f := row[c]
		for j, x := range pr {
			row[j] -= f * x
		}
	}
}
