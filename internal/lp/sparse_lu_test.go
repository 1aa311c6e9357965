package lp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLUUpdates factorizes random sparse matrices shaped like bases (unit
// columns, sparse columns, a dense one), replaces columns one at a time as
// the simplex does (Forrest–Tomlin), and checks after each replacement
// that ftran and btran solve the current matrix: the residuals of B·z = b
// and Bᵀ·y = c stay at round-off. A replacement that would make B
// singular is skipped, as the simplex never makes one.
func TestLUUpdates(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	checked, refactored := 0, 0
	defer func() {
		if checked < 2000 || refactored == 0 {
			t.Errorf("only %d updates checked, %d refactorizations", checked, refactored)
		}
	}()
	for trial := range 40 {
		m := 2 + r.IntN(40)
		cols := make([][]float64, m) // dense columns of B
		for k := range cols {
			cols[k] = randomColumn(r, m, k)
		}
		var f luFactor
		get := func(k int) ([]int, []float64) { return sparseOf(cols[k]) }
		if bad, _ := f.factorize(m, get); len(bad) > 0 {
			continue // singular draw
		}
		checkSolves(t, trial, 0, &f, cols, r)
		for u := 1; u <= 150; u++ {
			pos := r.IntN(m)
			nu := randomColumn(r, m, r.IntN(m))
			rhs := append([]float64(nil), nu...)
			idx, _ := sparseOf(nu)
			z := make([]float64, m)
			f.ftran(rhs, idx, z, true)
			if math.Abs(z[pos]) < 1e-3 {
				continue // B would become (nearly) singular
			}
			cols[pos] = nu
			checked++
			if !f.update(pos) {
				refactored++
				if bad, _ := f.factorize(m, get); len(bad) > 0 {
					t.Fatalf("trial %d: refactorization after update %d is singular", trial, u)
				}
			}
			checkSolves(t, trial, u, &f, cols, r)
		}
	}
}

// randomColumn returns a unit column (a slack) half the time, else a few
// random entries; column 0 of a draw is often dense (the t of max-min).
func randomColumn(r *rand.Rand, m, k int) []float64 {
	c := make([]float64, m)
	switch {
	case k == 0 && r.IntN(2) == 0:
		for i := range c {
			c[i] = r.NormFloat64()
		}
	case r.IntN(2) == 0:
		c[k%m] = -1
	default:
		for range 1 + r.IntN(3) {
			c[r.IntN(m)] = r.NormFloat64()
		}
		c[k%m] += 2
	}
	return c
}

func sparseOf(c []float64) ([]int, []float64) {
	var idx []int
	var val []float64
	for i, v := range c {
		if v != 0 {
			idx, val = append(idx, i), append(val, v)
		}
	}
	return idx, val
}

// checkSolves compares ftran and btran with the dense matrix cols.
func checkSolves(t *testing.T, trial, update int, f *luFactor, cols [][]float64, r *rand.Rand) {
	t.Helper()
	m := len(cols)
	b, c := make([]float64, m), make([]float64, m)
	for i := range b {
		b[i], c[i] = r.NormFloat64(), r.NormFloat64()
	}
	z, y := make([]float64, m), make([]float64, m)
	f.ftran(append([]float64(nil), b...), nil, z, false)
	f.btran(append([]float64(nil), c...), nil, y)
	checkHyper(t, f, r.IntN(m), r.NormFloat64())
	var res, scale float64
	for i := range m { // (B·z − b)_i
		v := -b[i]
		for k := range m {
			v += cols[k][i] * z[k]
		}
		res, scale = max(res, math.Abs(v)), max(scale, math.Abs(b[i]))
	}
	for k := range m { // (Bᵀ·y − c)_k
		v := -c[k]
		for i := range m {
			v += cols[k][i] * y[i]
		}
		res, scale = max(res, math.Abs(v)), max(scale, math.Abs(c[k]))
	}
	var zmax float64
	for k := range m {
		zmax = max(zmax, math.Abs(z[k]), math.Abs(y[k]))
	}
	if res > 1e-9*max(1, scale, zmax) {
		t.Errorf("trial %d (m=%d), after %d updates: residual %g", trial, m, update, res)
	}
}

// checkHyper compares the hypersparse solves for v·e_i with the dense
// ones: the same numbers, bit for bit, and ftran leaves its rhs zero.
func checkHyper(t *testing.T, f *luFactor, i int, v float64) {
	t.Helper()
	m := f.m
	want, got := make([]float64, m), make([]float64, m)
	rhs := make([]float64, m)
	rhs[i] = v
	f.ftran(slices.Clone(rhs), nil, want, false)
	f.ftran(rhs, []int{i}, got, false)
	if !slices.Equal(want, got) || slices.ContainsFunc(rhs, func(x float64) bool { return x != 0 }) {
		t.Fatalf("m=%d: ftran of %g·e_%d: hypersparse %v, dense %v, rhs left %v", m, v, i, got, want, rhs)
	}
	clear(want)
	clear(got)
	rhs[i] = v
	f.btran(slices.Clone(rhs), nil, want)
	f.btran(rhs, []int{i}, got)
	if !slices.Equal(want, got) {
		t.Fatalf("m=%d: btran of %g·e_%d: hypersparse %v, dense %v", m, v, i, got, want)
	}
}
