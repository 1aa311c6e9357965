package market

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func nearSlice(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", name, got, want)
	}
	for k := range got {
		if !near(got[k], want[k], tol) {
			t.Errorf("%s = %v, want %v", name, got, want)
			return
		}
	}
}

func TestSolveHand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     Fisher
		price []float64
		alloc [][]float64
		util  []float64
	}{
		{
			// One buyer gets the whole good and pays its budget.
			name:  "1x1",
			m:     Fisher{Budgets: []float64{3}, Utilities: [][]float64{{2}}, Supplies: []float64{4}},
			price: []float64{0.75}, alloc: [][]float64{{4}}, util: []float64{8},
		},
		{
			// Each buyer wants only its own good, so p_j = B_j.
			name:  "separate",
			m:     Fisher{Budgets: []float64{1, 3}, Utilities: [][]float64{{1, 0}, {0, 1}}},
			price: []float64{1, 3}, alloc: [][]float64{{1, 0}, {0, 1}}, util: []float64{1, 1},
		},
		{
			// At p = [1, 1] buyer 0's best good is 0 (2/1 > 1/1), buyer 1's is 1;
			// each spends 1 on its good, which clears both.
			name:  "2x2 identity",
			m:     Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{2, 1}, {1, 2}}, Supplies: []float64{1, 1}},
			price: []float64{1, 1}, alloc: [][]float64{{1, 0}, {0, 1}}, util: []float64{2, 2},
		},
		{
			// U = [[1, 1], [1, 0]], B = [2, 1]. Buyer 1 wants only good 0 and
			// spends 1 on it. If buyer 0 bought only good 1, p = [1, 2] and it
			// would prefer good 0; so it splits, s on good 0 and 2−s on good 1,
			// with equal prices (it is indifferent): 1+s = 2−s, s = 1/2,
			// p = [3/2, 3/2]. Then x_00 = (1/2)/(3/2) = 1/3, x_01 = 1,
			// x_10 = 1/(3/2) = 2/3; u = [4/3, 2/3].
			name:  "split",
			m:     Fisher{Budgets: []float64{2, 1}, Utilities: [][]float64{{1, 1}, {1, 0}}},
			price: []float64{1.5, 1.5}, alloc: [][]float64{{1.0 / 3, 1}, {2.0 / 3, 0}}, util: []float64{4.0 / 3, 2.0 / 3},
		},
		{
			// A good nobody values is discarded with price 0.
			name:  "unvalued good",
			m:     Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{1, 0, 0}, {0, 2, 0}}, Supplies: []float64{1, 2, 5}},
			price: []float64{1, 0.5, 0}, alloc: [][]float64{{1, 0, 0}, {0, 2, 0}}, util: []float64{1, 4},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := tc.m.Solve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.m.Check(e, 1e-12); err != nil {
				t.Error(err)
			}
			nearSlice(t, "prices", e.Prices, tc.price, 1e-12)
			nearSlice(t, "utilities", e.Utilities, tc.util, 1e-12)
			for i := range tc.alloc {
				nearSlice(t, "allocation row", e.Allocation[i], tc.alloc[i], 1e-12)
			}
			want := 0.0
			for i, u := range tc.util {
				want += tc.m.Budgets[i] * math.Log(u)
			}
			if !near(e.LogNSW, want, 1e-12) {
				t.Errorf("LogNSW = %v, want %v", e.LogNSW, want)
			}
		})
	}
}

// randomMarket draws a market of up to maxN buyers × maxG goods.
func randomMarket(rng *rand.Rand, maxN, maxG int) Fisher {
	return sizedMarket(rng, 1+rng.IntN(maxN), 1+rng.IntN(maxG))
}

// sizedMarket draws an n × g market with sparse utilities in [0, 10)
// (every buyer values some good), budgets in [0.1, 10) and supplies in
// [0.5, 5) or nil.
func sizedMarket(rng *rand.Rand, n, g int) Fisher {
	m := Fisher{Budgets: make([]float64, n), Utilities: make([][]float64, n)}
	density := 0.2 + 0.8*rng.Float64()
	for i := range n {
		m.Budgets[i] = 0.1 + 9.9*rng.Float64()
		row := make([]float64, g)
		for j := range row {
			if rng.Float64() < density {
				row[j] = rng.Float64() * 10
			}
		}
		row[rng.IntN(g)] = 0.01 + rng.Float64()
		m.Utilities[i] = row
	}
	if rng.IntN(3) > 0 {
		m.Supplies = make([]float64, g)
		for j := range m.Supplies {
			m.Supplies[j] = 0.5 + 4.5*rng.Float64()
		}
	}
	return m
}

func logNSW(m Fisher, x [][]float64) float64 {
	s := 0.0
	for i, row := range x {
		u := 0.0
		for j, v := range row {
			u += m.Utilities[i][j] * v
		}
		s += m.Budgets[i] * math.Log(u)
	}
	return s
}

func TestSolveRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for k := range 50 {
		maxN, maxG := 200, 20
		if k%3 == 0 {
			maxN, maxG = 8, 8
		}
		m := randomMarket(rng, maxN, maxG)
		if k%10 == 0 {
			m = sizedMarket(rng, 200, 20)
		}
		e, err := m.Solve(context.Background())
		if err != nil {
			t.Fatalf("market %d (%d×%d): %v", k, len(m.Budgets), len(m.Utilities[0]), err)
		}
		if err := m.Check(e, 1e-9); err != nil {
			t.Errorf("market %d (%d×%d): %v", k, len(m.Budgets), len(m.Utilities[0]), err)
		}
		// The Eisenberg–Gale objective beats perturbed feasible allocations:
		// move a share of each good between two buyers who both value it.
		for trial := range 5 {
			x := make([][]float64, len(e.Allocation))
			for i, row := range e.Allocation {
				x[i] = append([]float64(nil), row...)
			}
			eps := []float64{0.3, 0.1, 1e-2, 1e-3, 1e-4}[trial]
			for j := range e.Prices {
				a, b := rng.IntN(len(x)), rng.IntN(len(x))
				d := eps * x[a][j]
				x[a][j] -= d
				x[b][j] += d
			}
			if got := logNSW(m, x); got > e.LogNSW+1e-12*math.Abs(e.LogNSW)+1e-12 {
				t.Errorf("market %d: perturbed LogNSW %v > equilibrium %v", k, got, e.LogNSW)
			}
		}
	}
}

func TestSolveDeterministic(t *testing.T) {
	m := randomMarket(rand.New(rand.NewPCG(3, 4)), 100, 10)
	a, err := m.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Solve(context.Background())
	for i := range a.Allocation {
		for j := range a.Allocation[i] {
			if a.Allocation[i][j] != b.Allocation[i][j] {
				t.Fatalf("allocation differs at %d,%d", i, j)
			}
		}
	}
}

func TestSolveDegenerate(t *testing.T) {
	// Identical buyers and goods: the equality graph is complete.
	m := Fisher{Budgets: []float64{1, 1, 1}, Utilities: [][]float64{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}}
	e, err := m.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(e, 1e-12); err != nil {
		t.Error(err)
	}
	nearSlice(t, "prices", e.Prices, []float64{1, 1, 1}, 1e-12)
	// Extreme but valid scales.
	m = Fisher{Budgets: []float64{1e-3, 1e3}, Utilities: [][]float64{{1e200, 1e190}, {1e-200, 3e-200}}, Supplies: []float64{1e-5, 1e5}}
	e, err = m.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(e, 1e-9); err != nil {
		t.Error(err)
	}
}

func TestSolveFromUnique(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	ctx := context.Background()
	for k := range 10 {
		m := randomMarket(rng, 120, 15)
		n, g := len(m.Budgets), len(m.Utilities[0])
		starts := map[string][][]float64{"default": nil}
		uniform, random := make([][]float64, n), make([][]float64, n)
		for i, row := range m.Utilities {
			uniform[i], random[i] = make([]float64, g), make([]float64, g)
			cnt, sum := 0.0, 0.0
			for j, u := range row {
				if u > 0 {
					cnt++
					random[i][j] = rng.Float64() + 1e-3
					sum += random[i][j]
				}
			}
			for j, u := range row {
				if u > 0 {
					uniform[i][j] = m.Budgets[i] / cnt
					random[i][j] *= m.Budgets[i] / sum
				}
			}
		}
		starts["uniform"], starts["random"] = uniform, random
		var ref []float64
		for _, name := range []string{"default", "uniform", "random"} {
			e, err := m.SolveFrom(ctx, starts[name])
			if err != nil {
				t.Fatalf("market %d, %s start: %v", k, name, err)
			}
			if err := m.Check(e, 1e-9); err != nil {
				t.Errorf("market %d, %s start: %v", k, name, err)
			}
			if ref == nil {
				ref = e.Prices
				continue
			}
			for j := range ref {
				if math.Abs(e.Prices[j]-ref[j]) > 1e-9*math.Abs(ref[j]) {
					t.Errorf("market %d, %s start: price %d = %v, default start %v", k, name, j, e.Prices[j], ref[j])
				}
			}
		}
	}
}

func TestValidation(t *testing.T) {
	two := [][]float64{{1, 0}, {0, 1}}
	ctx := context.Background()
	for _, tc := range []struct {
		m    Fisher
		want string
	}{
		{Fisher{}, "market: budgets: no buyers"},
		{Fisher{Budgets: []float64{1}, Utilities: two}, "market: utilities: 2 rows for 1 buyers"},
		{Fisher{Budgets: []float64{1}, Utilities: [][]float64{{}}}, "market: utilities: no goods"},
		{Fisher{Budgets: []float64{1, -1}, Utilities: two}, "market: buyer 1: budget: -1 is negative"},
		{Fisher{Budgets: []float64{0, 1}, Utilities: two}, "market: buyer 0: budget: 0 is not positive"},
		{Fisher{Budgets: []float64{1, math.Inf(1)}, Utilities: two}, "market: buyer 1: budget: +Inf is not finite"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{1, 0}, {math.NaN(), 1}}}, "market: buyer 1: good 0: utility: NaN is not finite"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{1, -2}, {0, 1}}}, "market: buyer 0: good 1: utility: -2 is negative"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{1, 0}, {0, 0}}}, "market: buyer 1: utilities: values no good"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{1, 0}, {1}}}, "market: buyer 1: utilities: 1 goods, want 2"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: two, Supplies: []float64{1}}, "market: supplies: 1 goods, want 2"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: two, Supplies: []float64{1, 0}}, "market: good 1: supply: 0 is not positive"},
		{Fisher{Budgets: []float64{1, 1}, Utilities: two, Supplies: []float64{math.NaN(), 1}}, "market: good 0: supply: NaN is not finite"},
	} {
		_, err := tc.m.Solve(ctx)
		if !errors.Is(err, ErrInvalid) || err.Error() != tc.want {
			t.Errorf("Solve(%+v) = %v, want %q wrapping ErrInvalid", tc.m, err, tc.want)
		}
		if err := tc.m.Check(Equilibrium{}, 1e-9); !errors.Is(err, ErrInvalid) {
			t.Errorf("Check on %+v = %v, want ErrInvalid", tc.m, err)
		}
	}
	// Bids.
	m := Fisher{Budgets: []float64{1, 1}, Utilities: two}
	for _, tc := range []struct {
		bids [][]float64
		want string
	}{
		{[][]float64{{1, 0}}, "market: bids: 1 rows for 2 buyers"},
		{[][]float64{{1, 0}, {1}}, "market: buyer 1: bids: 1 goods, want 2"},
		{[][]float64{{1, 0}, {0, -1}}, "market: buyer 1: good 1: bid: -1 is negative"},
		{[][]float64{{math.NaN(), 0}, {0, 1}}, "market: buyer 0: good 0: bid: NaN is not finite"},
		{[][]float64{{0, 1}, {0, 1}}, "market: buyer 0: bids: no positive bid on a valued good"},
	} {
		_, err := m.SolveFrom(ctx, tc.bids)
		if !errors.Is(err, ErrInvalid) || err.Error() != tc.want {
			t.Errorf("SolveFrom(%v) = %v, want %q wrapping ErrInvalid", tc.bids, err, tc.want)
		}
	}
}

func TestCheckRejects(t *testing.T) {
	m := Fisher{Budgets: []float64{1, 1}, Utilities: [][]float64{{2, 1}, {1, 2}}}
	good := Equilibrium{
		Allocation: [][]float64{{1, 0}, {0, 1}},
		Prices:     []float64{1, 1},
		Utilities:  []float64{2, 2},
		LogNSW:     2 * math.Log(2),
	}
	if err := m.Check(good, 1e-12); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*Equilibrium)
		want string
	}{
		{func(e *Equilibrium) { e.Prices = []float64{1} }, "prices: 1 goods"},
		{func(e *Equilibrium) { e.Prices[0] = -1 }, "good 0: price"},
		{func(e *Equilibrium) { e.Allocation[1][0] = -0.5 }, "buyer 1: good 0: allocation"},
		{func(e *Equilibrium) { e.Allocation[0][0] = 0.5 }, "good 0: clearing"},
		{func(e *Equilibrium) { e.Prices = []float64{2, 2} }, "buyer 0: budget"},
		{func(e *Equilibrium) {
			e.Allocation = [][]float64{{0, 1}, {1, 0}}
			e.Utilities = []float64{1, 1}
			e.LogNSW = 0
		}, "buyer 0: good 1: bang per buck"},
		{func(e *Equilibrium) { e.Utilities[1] = 3 }, "buyer 1: utility"},
		{func(e *Equilibrium) { e.LogNSW = 0 }, "LogNSW"},
	} {
		e := Equilibrium{
			Allocation: [][]float64{{1, 0}, {0, 1}},
			Prices:     []float64{1, 1},
			Utilities:  []float64{2, 2},
			LogNSW:     2 * math.Log(2),
		}
		tc.edit(&e)
		err := m.Check(e, 1e-9)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check = %v, want an error containing %q", err, tc.want)
		}
	}
	if err := m.Check(good, -1); err == nil {
		t.Error("Check with a negative tolerance succeeded")
	}
}

func TestSolveCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := randomMarket(rand.New(rand.NewPCG(1, 1)), 50, 5)
	if _, err := m.Solve(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Solve on a canceled context = %v, want context.Canceled", err)
	}
	if _, err := m.PartialAllocation(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("PartialAllocation on a canceled context = %v, want context.Canceled", err)
	}
}

// decodeMarket builds a market of at most 5 × 5 from fuzz bytes.
func decodeMarket(data []byte) (Fisher, bool) {
	next := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	nb, ok1 := next()
	gb, ok2 := next()
	flags, ok3 := next()
	if !ok1 || !ok2 || !ok3 {
		return Fisher{}, false
	}
	n, g := 1+int(nb%5), 1+int(gb%5)
	m := Fisher{Budgets: make([]float64, n), Utilities: make([][]float64, n)}
	for i := range n {
		b, _ := next()
		m.Budgets[i] = float64(b)/16 + 1.0/64
		if flags&1 != 0 {
			m.Budgets[i] = math.Pow(2, float64(int(b%16)-8)) // spans 2^15
		}
		m.Utilities[i] = make([]float64, g)
		for j := range g {
			u, _ := next()
			if u%3 != 0 {
				m.Utilities[i][j] = float64(u) / 8
			}
			if flags&2 != 0 {
				m.Utilities[i][j] = float64(u % 4)
			}
		}
	}
	if flags&4 != 0 {
		m.Supplies = make([]float64, g)
		for j := range g {
			s, _ := next()
			m.Supplies[j] = float64(s)/32 + 1.0/128
		}
	}
	return m, true
}

func FuzzFisher(f *testing.F) {
	f.Add([]byte{1, 1, 0, 16, 16, 16, 16, 16, 16})
	f.Add([]byte{2, 2, 2, 10, 30, 1, 1, 1, 1, 0, 1, 2, 3, 4})
	f.Add([]byte{4, 4, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := decodeMarket(data)
		if !ok {
			return
		}
		e, err := m.Solve(context.Background())
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Solve(%+v): %v", m, err)
			}
			return
		}
		if err := m.Check(e, 1e-7); err != nil {
			t.Fatalf("Solve(%+v): %v", m, err)
		}
		p, err := m.PartialAllocation(context.Background())
		if err != nil {
			t.Fatalf("PartialAllocation(%+v): %v", m, err)
		}
		for i, c := range p.Fraction {
			if !(c >= 0 && c <= 1) {
				t.Fatalf("PartialAllocation(%+v): c_%d = %v", m, i, c)
			}
		}
	})
}

func BenchmarkFisher200x20(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	ms := make([]Fisher, 8)
	for k := range ms {
		ms[k] = sizedMarket(rng, 200, 20)
	}
	ctx := context.Background()
	k := 0
	for b.Loop() {
		if _, err := ms[k%len(ms)].Solve(ctx); err != nil {
			b.Fatal(err)
		}
		k++
	}
}

// TestSolveManyBuyers is the auction of issue 19: thousands of buyers over a
// few goods. Each buyer's budget is so small that the flow's rounding over
// all of them exceeded a single buyer's slack, the finishing step never
// accepted, and Solve failed after 100 000 iterations.
func TestSolveManyBuyers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := Fisher{Supplies: []float64{400, 400, 400}}
	for range 5000 {
		rho := 0.5 + 10*rng.Float64()
		m.Budgets = append(m.Budgets, 1)
		m.Utilities = append(m.Utilities, []float64{rho, rho * (2 + rng.Float64()) / 4, rho / 4})
	}
	e, err := m.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e.Gap != 0 {
		t.Errorf("gap %v, want an exact equilibrium", e.Gap)
	}
	if err := m.Check(e, 1e-10); err != nil {
		t.Error(err)
	}
}

// TestSolveApproximate: when no exact point is accepted, Solve's fallback
// is the dynamics' last point, which is feasible and spends every budget,
// with a small positive duality gap that is a true bound.
func TestSolveApproximate(t *testing.T) {
	m := Fisher{Budgets: []float64{1, 2, 3}, Utilities: [][]float64{{1, 2}, {3, 1}, {1, 1}}, Supplies: []float64{2, 1}}
	exact, err := m.Solve(context.Background())
	if err != nil || exact.Gap != 0 {
		t.Fatalf("exact: gap %v, %v", exact.Gap, err)
	}
	never := func([][]float64, []float64) bool { return false }
	e, err := m.settle(context.Background(), m.unit(), nil, never)
	if err != nil {
		t.Fatal(err)
	}
	if !(e.Gap > 0 && e.Gap < 1e-6) {
		t.Errorf("gap %v, want in (0, 1e-6)", e.Gap)
	}
	// Weak duality: the gap bounds the distance to the optimum.
	if d := exact.LogNSW - e.LogNSW; d < -1e-12 || d > e.Gap+1e-12 {
		t.Errorf("LogNSW %v is %v below the optimum %v; gap %v", e.LogNSW, d, exact.LogNSW, e.Gap)
	}
	if err := m.Check(e, 1e-6); err != nil {
		t.Error(err)
	}
	for j, p := range e.Prices {
		if !near(p, exact.Prices[j], 1e-4) {
			t.Errorf("price %d = %v, want near %v", j, p, exact.Prices[j])
		}
	}
}
