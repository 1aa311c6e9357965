package placement_test

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
)

var inf = math.Inf(1)

// brute returns the least total cost of a complete assignment of cost (one
// with min(n, m) pairs, none forbidden), the sum of the magnitudes of its
// entries (the scale of its rounding error), and whether one exists.
func brute(cost [][]float64) (best, scale float64, ok bool) {
	n := len(cost)
	m := 0
	if n > 0 {
		m = len(cost[0])
	}
	// Assign the shorter side one by one to unused members of the longer.
	at := func(short, long int) float64 { return cost[short][long] }
	ns, nl := n, m
	if n > m {
		at = func(short, long int) float64 { return cost[long][short] }
		ns, nl = m, n
	}
	used := make([]bool, nl)
	best = inf
	var rec func(s int, sum, abs float64)
	rec = func(s int, sum, abs float64) {
		if s == ns {
			if sum < best {
				best, scale, ok = sum, abs, true
			}
			return
		}
		for l := range nl {
			if c := at(s, l); !used[l] && !math.IsInf(c, 1) {
				used[l] = true
				rec(s+1, sum+c, abs+math.Abs(c))
				used[l] = false
			}
		}
	}
	rec(0, 0, 0)
	return best, scale, ok
}

// checkAssign fails t unless got is a valid, optimal assignment of cost, or
// err rightly reports that none avoids the forbidden pairs.
func checkAssign(t testing.TB, cost [][]float64, got []int, err error) {
	t.Helper()
	want, scale, feasible := brute(cost)
	if !feasible {
		if !errors.Is(err, placement.ErrInfeasible) {
			t.Fatalf("Assign(%v) = %v, %v; want ErrInfeasible", cost, got, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Assign(%v): %v; want total %v", cost, err, want)
	}
	n := len(cost)
	if len(got) != n {
		t.Fatalf("Assign(%v) = %v: %d entries for %d rows", cost, got, len(got), n)
	}
	m := 0
	if n > 0 {
		m = len(cost[0])
	}
	seen := make(map[int]bool)
	total := 0.0
	for i, j := range got {
		if j == -1 {
			continue
		}
		if j < 0 || j >= m || seen[j] {
			t.Fatalf("Assign(%v) = %v: row %d gets column %d, out of range or taken", cost, got, i, j)
		}
		seen[j] = true
		total += cost[i][j]
	}
	if len(seen) != min(n, m) {
		t.Fatalf("Assign(%v) = %v: %d pairs, want %d", cost, got, len(seen), min(n, m))
	}
	if math.IsInf(total, 1) || math.Abs(total-want) > 1e-9*max(1, scale) {
		t.Fatalf("Assign(%v) = %v, total %v; optimum %v", cost, got, total, want)
	}
}

func TestAssignHand(t *testing.T) {
	// Row 1 wants column 1 (0) but row 0 wants it more than column 0: 4 − 1
	// against 2 − 0. Optimum 1 + 2 + 2 = 5.
	cost := [][]float64{
		{4, 1, 3},
		{2, 0, 5},
		{3, 2, 2},
	}
	got, err := placement.Assign(cost)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]int{1, 0, 2}, got); diff != "" {
		t.Fatalf("Assign (-want +got):\n%s", diff)
	}
	// The transpose has the transposed answer.
	got, err = placement.Assign([][]float64{{4, 2, 3}, {1, 0, 2}, {3, 5, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]int{1, 0, 2}, got); diff != "" {
		t.Fatalf("Assign of the transpose (-want +got):\n%s", diff)
	}
}

func TestAssignRectangular(t *testing.T) {
	for _, tc := range []struct {
		name string
		cost [][]float64
		want []int
	}{
		// Two rows, three columns: column 1 stays free.
		{"wide", [][]float64{{1, 9, 2}, {1, 8, 9}}, []int{2, 0}},
		// Three rows, two columns: the row that loses least waits.
		{"tall", [][]float64{{1, 5}, {2, 3}, {9, 1}}, []int{0, -1, 1}},
		// Forbidden pairs steer the assignment.
		{"forbidden", [][]float64{{inf, 1}, {1, 0}}, []int{1, 0}},
		{"no columns", [][]float64{{}, {}}, []int{-1, -1}},
		{"empty", nil, []int{}},
	} {
		got, err := placement.Assign(tc.cost)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := gocmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: Assign (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestAssignInfeasible(t *testing.T) {
	for _, cost := range [][][]float64{
		{{inf, inf}, {1, 2}},           // a row with no allowed pair
		{{1, inf}, {2, inf}, {3, inf}}, // a column that no row may use
		{{1, inf, inf}, {2, inf, inf}}, // two rows, one usable column
		{{inf, 1, inf}, {inf, 2, inf}, {3, inf, 4}},
	} {
		if got, err := placement.Assign(cost); !errors.Is(err, placement.ErrInfeasible) {
			t.Errorf("Assign(%v) = %v, %v; want ErrInfeasible", cost, got, err)
		}
	}
}

func TestAssignInvalid(t *testing.T) {
	for _, tc := range []struct {
		cost [][]float64
		want string
	}{
		{[][]float64{{1, 2}, {3}}, "row 1 has 1 columns"},
		{[][]float64{{1, 2}, {3, math.NaN()}}, "cost[1][1]: NaN"},
		{[][]float64{{math.Inf(-1)}}, "cost[0][0]: -Inf"},
		{[][]float64{{0, -1e301}}, "cost[0][1]: -1e+301"},
	} {
		got, err := placement.Assign(tc.cost)
		if !errors.Is(err, allocation.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Assign(%v) = %v, %v; want ErrInvalid naming %q", tc.cost, got, err, tc.want)
		}
	}
}

// TestAssignInput checks that Assign leaves its input alone.
func TestAssignInput(t *testing.T) {
	cost := [][]float64{{5, 1e12, 3}, {4, 2, inf}}
	keep := [][]float64{{5, 1e12, 3}, {4, 2, inf}}
	if _, err := placement.Assign(cost); err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(keep, cost); diff != "" {
		t.Fatalf("Assign modified its input (-before +after):\n%s", diff)
	}
}

// randomCost draws an n×m matrix of one of several kinds: small integers
// (many ties), negative and positive floats, large costs with small
// differences, mixed magnitudes, and any of these with forbidden pairs.
func randomCost(r *rand.Rand, n, m int) [][]float64 {
	kind := r.IntN(5)
	forbid := r.IntN(3) == 0
	base := 1e12 * float64(r.IntN(5))
	cost := make([][]float64, n)
	for i := range cost {
		cost[i] = make([]float64, m)
		for j := range cost[i] {
			var x float64
			switch kind {
			case 0:
				x = float64(r.IntN(4))
			case 1:
				x = float64(r.IntN(21) - 10)
			case 2:
				x = r.NormFloat64() * 100
			case 3:
				x = base + r.Float64()*1000
			case 4:
				x = math.Pow(10, float64(r.IntN(25)-12)) * (r.Float64() - 0.3)
			}
			if forbid && r.IntN(4) == 0 {
				x = inf
			}
			cost[i][j] = x
		}
	}
	return cost
}

func TestAssignBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := 5000
	if testing.Short() {
		cases = 500
	}
	for range cases {
		n, m := 1+r.IntN(7), 1+r.IntN(7)
		cost := randomCost(r, n, m)
		got, err := placement.Assign(cost)
		checkAssign(t, cost, got, err)
	}
}

// TestAssignLarge checks optimality beyond brute force, on square matrices
// whose costs carry large per-row and per-column constants: they add the
// same to every assignment, so the optimum of the small parts must be found
// through them.
func TestAssignLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 60
	small := make([][]float64, n)
	big := make([][]float64, n)
	rows, cols := make([]float64, n), make([]float64, n)
	for i := range n {
		rows[i], cols[i] = 1e12*float64(r.IntN(10)), 1e10*float64(r.IntN(100))
	}
	for i := range n {
		small[i], big[i] = make([]float64, n), make([]float64, n)
		for j := range n {
			small[i][j] = float64(r.IntN(1000))
			big[i][j] = rows[i] + cols[j] + small[i][j]
		}
	}
	total := func(a []int) float64 {
		s := 0.0
		for i, j := range a {
			s += small[i][j]
		}
		return s
	}
	want, err := placement.Assign(small)
	if err != nil {
		t.Fatal(err)
	}
	got, err := placement.Assign(big)
	if err != nil {
		t.Fatal(err)
	}
	if total(got) != total(want) {
		t.Fatalf("with constants the small parts total %v; without, %v", total(got), total(want))
	}
	// A permutation matrix of costs 0 in a sea of 1 has total 0.
	perm := r.Perm(n)
	for i := range n {
		for j := range n {
			small[i][j] = 1
		}
		small[i][perm[i]] = 0
	}
	got, err = placement.Assign(small)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(perm, got); diff != "" {
		t.Fatalf("hidden permutation (-want +got):\n%s", diff)
	}
}

// FuzzAssign decodes a tiny matrix from bytes: the first two give its
// shape (up to 4×4), each further byte an entry: 255 is +Inf, 254 a large
// cost, the rest small integers.
func FuzzAssign(f *testing.F) {
	f.Add([]byte{3, 3, 4, 1, 3, 2, 0, 5, 3, 2, 2})
	f.Add([]byte{2, 3, 255, 1, 0, 7, 255, 254})
	f.Add([]byte{4, 1, 9, 8, 7, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		n, m := int(b[0]%5), int(b[1]%5)
		b = b[2:]
		cost := make([][]float64, n)
		for i := range cost {
			cost[i] = make([]float64, m)
			for j := range cost[i] {
				x := byte(0)
				if k := i*m + j; k < len(b) {
					x = b[k]
				}
				switch x {
				case 255:
					cost[i][j] = inf
				case 254:
					cost[i][j] = 1e12 + float64(i*m+j)
				default:
					cost[i][j] = float64(int(x) - 127)
				}
			}
		}
		got, err := placement.Assign(cost)
		checkAssign(t, cost, got, err)
	})
}

// allox builds AlloX's matrix: jobs × (worker, position), the cost of job j
// at position p (from last) on worker w being p·q_jw plus its waiting time,
// on workers of three speeds. With longest first, rows come in decreasing
// processing time, the order in which policy/allox adds them.
func allox(jobs, workers, positions int, longestFirst bool) [][]float64 {
	r := rand.New(rand.NewPCG(5, 5))
	qs := make([]float64, jobs)
	for j := range qs {
		qs[j] = 100 + r.Float64()*1e4
	}
	if longestFirst {
		slices.SortFunc(qs, func(a, b float64) int { return cmp.Compare(b, a) })
	}
	cost := make([][]float64, jobs)
	for j, q := range qs {
		wait := r.Float64() * 1e4
		cost[j] = make([]float64, workers*positions)
		for w := range workers {
			speed := []float64{1, 2, 4}[w%3]
			for p := range positions {
				cost[j][w*positions+p] = float64(p+1)*q/speed + wait
			}
		}
	}
	return cost
}

// BenchmarkAssign solves a square 300×300 matrix of random costs, and
// AlloX's matrices for 300 waiting jobs on 100 GPUs: with all 300
// positions per GPU, as Gavel builds it, and with the 4 that policy/allox
// starts from (300/100 + 1; it adds more only when a GPU fills them). Rows
// come longest job first, as policy/allox orders them, or in random order:
// the optimum is the same, but a new row then often displaces many others
// and augmenting paths grow long (the full matrix in random order takes
// about 4 s, so it is left out).
func BenchmarkAssign(b *testing.B) {
	for _, tc := range []struct {
		name string
		cost [][]float64
	}{
		{"300x300", randomSquare(300)},
		{"300x(100*300)/longest-first", allox(300, 100, 300, true)},
		{"300x(100*4)/longest-first", allox(300, 100, 4, true)},
		{"300x(100*4)/random-order", allox(300, 100, 4, false)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := placement.Assign(tc.cost); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func randomSquare(n int) [][]float64 {
	r := rand.New(rand.NewPCG(6, 6))
	cost := make([][]float64, n)
	for i := range cost {
		cost[i] = make([]float64, n)
		for j := range cost[i] {
			cost[i][j] = r.Float64() * 1000
		}
	}
	return cost
}
