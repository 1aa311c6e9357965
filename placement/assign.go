package placement

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dlsched/dlsched/allocation"
)

// ErrInfeasible reports an assignment problem whose every complete
// assignment uses a forbidden (+Inf) pair.
var ErrInfeasible = errors.New("placement: no assignment avoids the forbidden pairs")

// MaxCost bounds the magnitude of a finite cost given to Assign, so that no
// sum of potentials can overflow.
const MaxCost = 1e300

// Assign returns, for each row of cost (n rows of m columns), the column it
// is assigned to, such that no column is used twice and the total cost is
// least. With n ≤ m every row gets a column; with n > m only m rows do and
// the others get -1.
//
// A cost of +Inf forbids the pair. Assign returns an error wrapping
// ErrInfeasible when every complete assignment (one with min(n, m) pairs)
// uses a forbidden pair; it never returns a partial one. Ragged rows, NaN,
// −Inf and finite costs beyond ±MaxCost are errors wrapping
// allocation.ErrInvalid that name the entry. An empty matrix, or rows
// without columns, give an empty result or all -1.
//
// Assign is the Hungarian method of Kuhn and Munkres in its O(n²m) form
// (shortest augmenting paths with row and column potentials, n ≤ m; a
// matrix with more rows than columns is solved transposed). Each row is
// first shifted by its least finite cost, which changes no assignment's
// ranking but keeps potentials and reduced costs small when costs are large
// (1e12) or carry a large constant per row. Among optimal assignments the
// one returned depends only on the matrix. The input is not modified.
//
// Row order changes the time, not the optimum: rows are added one by one,
// and one that displaces many earlier rows costs up to O(nm). On
// scheduling matrices (job × (machine, position)) rows in decreasing job
// length displace few: 300 jobs × 400 pairs solve about 5× faster so.
func Assign(cost [][]float64) ([]int, error) {
	return AssignContext(context.Background(), cost)
}

// AssignContext is Assign, returning an error that wraps ctx.Err() soon
// after ctx is done: it looks at ctx every 256 rows it checks or copies,
// and every 64 rows an addition reaches.
func AssignContext(ctx context.Context, cost [][]float64) ([]int, error) {
	n := len(cost)
	out := make([]int, n)
	if n == 0 {
		return out, nil
	}
	m := len(cost[0])
	for i, row := range cost {
		if i%256 == 255 && ctx.Err() != nil {
			return nil, fmt.Errorf("placement: assign: %w", ctx.Err())
		}
		if len(row) != m {
			return nil, fmt.Errorf("%w cost matrix: row %d has %d columns, row 0 has %d", allocation.ErrInvalid, i, len(row), m)
		}
		for j, c := range row {
			if math.IsNaN(c) || math.IsInf(c, -1) || (!math.IsInf(c, 1) && math.Abs(c) > MaxCost) {
				return nil, fmt.Errorf("%w cost matrix: cost[%d][%d]: %v is not +Inf or a number in [-%g, %g]", allocation.ErrInvalid, i, j, c, MaxCost, MaxCost)
			}
		}
	}
	for i := range out {
		out[i] = -1
	}
	if m == 0 {
		return out, nil
	}
	// Solve with r ≤ c rows: the transpose when there are more rows.
	r, c, tr, what := n, m, n > m, "row"
	if tr {
		r, c, what = m, n, "column"
	}
	a := make([]float64, r*c)
	for i := range r {
		if i%256 == 255 && ctx.Err() != nil {
			return nil, fmt.Errorf("placement: assign: %w", ctx.Err())
		}
		row := a[i*c : (i+1)*c]
		for j := range row {
			if tr {
				row[j] = cost[j][i]
			} else {
				row[j] = cost[i][j]
			}
		}
		lo := math.Inf(1)
		for _, x := range row {
			lo = math.Min(lo, x)
		}
		if math.IsInf(lo, 1) {
			return nil, fmt.Errorf("%w: %s %d has no allowed pair", ErrInfeasible, what, i)
		}
		for j := range row {
			row[j] -= lo
		}
	}
	match, err := hungarian(ctx, a, r, c)
	if err != nil {
		return nil, err
	}
	for i, j := range match {
		if tr {
			out[j] = i
		} else {
			out[i] = j
		}
	}
	return out, nil
}

// hungarian solves the r×c problem a (row-major, r ≤ c, every entry ≥ 0 or
// +Inf) and returns each row's column. Rows are added one at a time. Each
// addition runs Dijkstra from the new row over reduced costs a − u − v
// (never negative) until it reaches a free column, preferring a free column
// among equally near ones, which ends the search early on the many ties of
// scheduling matrices; it then moves the potentials so that the path is
// tight and every reduced cost stays non-negative, and augments along it.
func hungarian(ctx context.Context, a []float64, r, c int) ([]int, error) {
	u := make([]float64, r)
	v := make([]float64, c)
	owner := make([]int, c) // the row on each column, -1 if free
	col := make([]int, r)   // the column of each row, -1 if none
	path := make([]int, c)  // the row before each column on its shortest path
	shortest := make([]float64, c)
	rem := make([]int, 0, c) // columns not yet reached
	var rows, cols []int     // rows and columns reached
	for j := range owner {
		owner[j] = -1
	}
	for i := range col {
		col[i] = -1
	}
	for cur := range r {
		for j := range shortest {
			shortest[j] = math.Inf(1)
		}
		rem = rem[:0]
		for j := range c {
			rem = append(rem, j)
		}
		rows, cols = rows[:0], cols[:0]
		i, dist, sink := cur, 0.0, -1
		for sink < 0 {
			if len(rows)%64 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("placement: assign: %w", err)
				}
			}
			rows = append(rows, i)
			ai := a[i*c : (i+1)*c]
			base := dist - u[i]
			near, at, free := math.Inf(1), -1, false
			for k, j := range rem {
				if d := base + ai[j] - v[j]; d < shortest[j] {
					shortest[j], path[j] = d, i
				}
				if d := shortest[j]; d < near || (d == near && !free && owner[j] < 0) {
					near, at, free = d, k, owner[j] < 0
				}
			}
			if math.IsInf(near, 1) {
				return nil, fmt.Errorf("%w: %d of %d rows can be assigned", ErrInfeasible, cur, r)
			}
			j := rem[at]
			rem[at] = rem[len(rem)-1]
			rem = rem[:len(rem)-1]
			cols = append(cols, j)
			dist = near
			if owner[j] < 0 {
				sink = j
			} else {
				i = owner[j]
			}
		}
		u[cur] += dist
		for _, i := range rows[1:] {
			u[i] += dist - shortest[col[i]]
		}
		for _, j := range cols {
			v[j] -= dist - shortest[j]
		}
		for j := sink; ; {
			i := path[j]
			owner[j] = i
			j, col[i] = col[i], j
			if i == cur {
				break
			}
		}
	}
	return col, nil
}
