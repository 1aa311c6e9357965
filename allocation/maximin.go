package allocation

// maximin returns a mixture μ (μ ≥ 0, Σ_k μ_k = 1) that maximizes
// min_m v[m]·μ, and that value, for a small matrix v ≥ 0 with at least one
// row of len(v[0]) columns: the value of the matrix game in which the
// minimizer picks a row. It is the linear program
//
//	maximize z   subject to   z − v[m]·μ ≤ 0 for every m,   Σ_k μ_k ≤ 1,   z, μ ≥ 0,
//
// solved by a dense primal simplex from the slack basis, which is feasible.
// Bland's rule (the lowest index enters, and leaves among ties) keeps the
// pivots, degenerate from the first, from cycling, and no entry under 1e-9
// is a pivot: with 1e-12 allowed, a 34-row game lost 3e-4 of its value to
// round-off. Crash's cutting planes give it a few dozen rows over a
// handful of types, so each solve takes microseconds; the general engines
// took hundreds.
func maximin(v [][]float64) ([]float64, float64) {
	const eps, pivotTol = 1e-12, 1e-9
	rows, nk := len(v)+1, len(v[0])
	cols := 1 + nk + rows // z, μ, a slack per row
	tab := make([][]float64, rows+1)
	for i := range tab {
		tab[i] = make([]float64, cols+1) // the last column is the right-hand side
	}
	basic := make([]int, rows)
	for m, vm := range v {
		tab[m][0] = 1
		for k, x := range vm {
			tab[m][1+k] = -x
		}
		tab[m][1+nk+m] = 1
		basic[m] = 1 + nk + m
	}
	last := rows - 1
	for k := range nk {
		tab[last][1+k] = 1
	}
	tab[last][1+nk+last] = 1
	tab[last][cols] = 1
	basic[last] = 1 + nk + last
	obj := tab[rows]
	obj[0] = -1 // reduced costs of maximize z, negated
	for range 50 * (rows + cols) {
		enter := -1
		for c := range cols {
			if obj[c] < -eps {
				enter = c
				break
			}
		}
		if enter < 0 {
			break
		}
		leave, best := -1, 0.0
		for r := range rows {
			a := tab[r][enter]
			if a <= pivotTol {
				continue
			}
			ratio := tab[r][cols] / a
			tie := 1e-12 * max(1, abs(ratio))
			if leave < 0 || ratio < best-tie || ratio <= best+tie && basic[r] < basic[leave] {
				leave, best = r, ratio
			}
		}
		if leave < 0 { // only round-off: Σμ ≤ 1 bounds μ, and z ≤ v·μ
			break
		}
		pivot(tab, leave, enter)
		basic[leave] = enter
	}
	mu := make([]float64, nk)
	for r, b := range basic {
		if b >= 1 && b <= nk {
			mu[b-1] = max(tab[r][cols], 0)
		}
	}
	return mu, obj[cols]
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
