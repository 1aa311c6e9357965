package market_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/market"
)

func TestVolatileLogSlopes(t *testing.T) {
	// Shockwave's segments: about 61.0, 3.47, 2.03, 1.44 and 1.12 per unit
	// of progress.
	v := market.Volatile{}
	want := []float64{61.0, 3.47, 2.03, 1.44, 1.12}
	for k, w := range want {
		a, b := 0.2*float64(k), 0.2*float64(k+1)
		if got := (v.Log(b) - v.Log(a)) / 0.2; math.Abs(got-w) > 0.05 {
			t.Errorf("slope of segment %d = %.3f, want %.2f", k, got, w)
		}
	}
	if got, want := v.Log(0), math.Log(1e-6); got != want {
		t.Errorf("Log(0) = %v, want log 1e-6 = %v", got, want)
	}
	if got := v.Log(1); got != 0 {
		t.Errorf("Log(1) = %v, want 0", got)
	}
	if got, want := v.Log(0.5), (math.Log(0.4)+math.Log(0.6))/2; math.Abs(got-want) > 1e-15 {
		t.Errorf("Log(0.5) = %v, want the chord's midpoint %v", got, want)
	}
	if v.Log(2) != 0 || v.Log(-1) != math.Log(1e-6) {
		t.Error("Log does not clamp progress to [0,1]")
	}
}

func TestBuyerLeft(t *testing.T) {
	// R̂ = 1000 s, half done, 10 % per round: the work ends after 5 rounds,
	// and the forecast says 1000 s are left, of which 5·120 = 600 are done.
	b := market.Buyer{Progress: 0.5, Gain: 0.1, Remaining: 1000}
	for n, want := range []float64{1000, 880, 760, 640, 520, 400, 400, 400} {
		if got := b.Left(n, 120); math.Abs(got-want) > 1e-9 {
			t.Errorf("Left(%d) = %v, want %v", n, got, want)
		}
	}
	if got := (market.Buyer{Remaining: 50}).Left(3, 120); got != 50 {
		t.Errorf("a buyer that makes no progress leaves %v, want 50", got)
	}
}

// bruteForce enumerates every schedule x[i][t] ∈ {0,1} within each round's
// capacity, Shockwave's program as written, and returns the best objective.
func bruteForce(v market.Volatile, buyers []market.Buyer) (float64, bool) {
	J, T := len(buyers), v.Rounds
	best, found := math.Inf(-1), false
	counts := make([]int, J)
	var rec func(t int, used []int)
	// enumerate per round the subset of buyers that run
	rec = func(t int, _ []int) {
		if t == T {
			for i, b := range buyers {
				if counts[i] < b.Min {
					return
				}
			}
			found = true
			sum, worst := 0.0, 0.0
			for i, b := range buyers {
				sum += b.Budget * v.Log(b.Progress+b.Gain*float64(counts[i])) / float64(J*T)
				worst = math.Max(worst, b.Left(counts[i], 120))
			}
			best = math.Max(best, sum-v.Makespan*worst)
			return
		}
		for mask := 0; mask < 1<<J; mask++ {
			w := 0
			for i := range J {
				if mask&(1<<i) != 0 {
					w += buyers[i].Width
				}
			}
			if w > v.Capacity {
				continue
			}
			for i := range J {
				if mask&(1<<i) != 0 {
					counts[i]++
				}
			}
			rec(t+1, nil)
			for i := range J {
				if mask&(1<<i) != 0 {
					counts[i]--
				}
			}
		}
	}
	rec(0, nil)
	return best, found
}

func randomMarket(r *rand.Rand, gangs bool) (market.Volatile, []market.Buyer) {
	v := market.Volatile{
		Rounds:   1 + r.IntN(4),
		Capacity: 1 + r.IntN(3),
		Makespan: []float64{0, 1e-3, 1e-2, 1}[r.IntN(4)],
	}
	J := 1 + r.IntN(4)
	buyers := make([]market.Buyer, J)
	for i := range buyers {
		b := market.Buyer{
			Budget:    []float64{1, 1, 0.5 + 3*r.Float64(), math.Pow(1+r.Float64(), 12)}[r.IntN(4)],
			Width:     1,
			Progress:  []float64{0, r.Float64(), 0.19, 1}[r.IntN(4)],
			Gain:      []float64{0, 0.05, 0.3 * r.Float64(), 0.5}[r.IntN(4)],
			Remaining: 2000 * r.Float64(),
		}
		if gangs {
			b.Width = 1 + r.IntN(v.Capacity)
		}
		if r.IntN(4) == 0 {
			b.Min = r.IntN(v.Rounds + 1)
		}
		buyers[i] = b
	}
	return v, buyers
}

// checkPlan verifies the invariants of any plan: every round within
// capacity, each buyer in exactly its count of distinct rounds, counts
// within [Min, T].
func checkPlan(t *testing.T, v market.Volatile, buyers []market.Buyer, p market.Plan) {
	t.Helper()
	seen := make([]int, len(buyers))
	for r, run := range p.Schedule {
		w := 0
		for k, i := range run {
			if k > 0 && run[k-1] >= i {
				t.Fatalf("round %d lists %v, not ascending and distinct", r, run)
			}
			w += buyers[i].Width
			seen[i]++
		}
		if w > v.Capacity {
			t.Fatalf("round %d holds %d GPUs of %d", r, w, v.Capacity)
		}
	}
	for i, b := range buyers {
		if seen[i] != p.Counts[i] || p.Counts[i] < b.Min || p.Counts[i] > v.Rounds {
			t.Fatalf("buyer %d: scheduled %d rounds, count %d, min %d, window %d", i, seen[i], p.Counts[i], b.Min, v.Rounds)
		}
	}
	if p.Objective > p.Bound+1e-12 {
		t.Fatalf("objective %v above its bound %v", p.Objective, p.Bound)
	}
}

// TestVolatileOptimalUnitWidths proves the search exact for single-GPU
// buyers: on random small markets its objective equals the best over every
// binary schedule.
func TestVolatileOptimalUnitWidths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	infeasible := 0
	for trial := range 3000 {
		v, buyers := randomMarket(r, false)
		want, ok := bruteForce(v, buyers)
		p, err := v.Solve(context.Background(), buyers)
		if !ok {
			infeasible++
			if !errors.Is(err, market.ErrInfeasible) {
				t.Fatalf("trial %d: no schedule meets the bounds, but Solve returned %v", trial, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v (%+v, %+v)", trial, err, v, buyers)
		}
		checkPlan(t, v, buyers, p)
		if math.Abs(p.Objective-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("trial %d: objective %v, optimum %v\nmarket %+v\nbuyers %+v\nplan %+v", trial, p.Objective, want, v, buyers, p)
		}
		if p.Bound != p.Objective {
			t.Fatalf("trial %d: unit widths, but bound %v ≠ objective %v", trial, p.Bound, p.Objective)
		}
	}
	if infeasible == 0 {
		t.Error("no infeasible instance drawn; the test does not exercise ErrInfeasible")
	}
}

// TestVolatileGangBound checks gang markets against the same enumeration:
// the plan is feasible, never better than the optimum, and its bound never
// below it. It also reports how close the greedy gets.
func TestVolatileGangBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var worstGap float64
	optimal, n := 0, 0
	for trial := range 3000 {
		v, buyers := randomMarket(r, true)
		want, ok := bruteForce(v, buyers)
		p, err := v.Solve(context.Background(), buyers)
		if err != nil {
			if !errors.Is(err, market.ErrInfeasible) {
				t.Fatalf("trial %d: %v", trial, err)
			}
			continue // packing gangs may fail where a schedule exists
		}
		if !ok {
			t.Fatalf("trial %d: Solve found a plan where none exists", trial)
		}
		checkPlan(t, v, buyers, p)
		tol := 1e-12 * math.Max(1, math.Abs(want))
		if p.Objective > want+tol || p.Bound < want-tol {
			t.Fatalf("trial %d: objective %v, optimum %v, bound %v", trial, p.Objective, want, p.Bound)
		}
		n++
		if want-p.Objective <= tol {
			optimal++
		}
		worstGap = math.Max(worstGap, want-p.Objective)
	}
	t.Logf("gangs: optimal in %d of %d feasible markets; largest gap %.3g", optimal, n, worstGap)
}

func TestVolatileHandSolved(t *testing.T) {
	// Two single-GPU buyers, one GPU, two rounds, no makespan term. A new
	// job (progress 0) gains far more from a round than one at 60 %, so
	// each round goes to it: log̃(0.2) − log̃(0) = 12.2 against
	// log̃(0.8) − log̃(0.6) = 0.29.
	v := market.Volatile{Rounds: 2, Capacity: 1}
	buyers := []market.Buyer{
		{Budget: 1, Width: 1, Progress: 0.6, Gain: 0.2, Remaining: 480},
		{Budget: 1, Width: 1, Progress: 0, Gain: 0.1, Remaining: 1200},
	}
	p, err := v.Solve(context.Background(), buyers)
	if err != nil {
		t.Fatal(err)
	}
	if p.Counts[0] != 0 || p.Counts[1] != 2 {
		t.Fatalf("counts %v, want [0 2]", p.Counts)
	}
	// A strong makespan term prefers the buyer that leaves most work:
	// buyer 1 still (1200 − 240 = 960 > 480).
	v.Makespan = 1
	if p, _ = v.Solve(context.Background(), buyers); p.Counts[1] != 2 {
		t.Fatalf("counts %v, want [0 2]", p.Counts)
	}
	// With a lower bound of one round, buyer 0 gets one.
	buyers[0].Min = 1
	if p, _ = v.Solve(context.Background(), buyers); p.Counts[0] != 1 || p.Counts[1] != 1 {
		t.Fatalf("counts %v, want [1 1]", p.Counts)
	}
	// The higher budget runs first.
	buyers[0].Budget = 5
	p, _ = v.Solve(context.Background(), buyers)
	if len(p.Schedule[0]) != 1 || p.Schedule[0][0] != 0 {
		t.Fatalf("schedule %v; the buyer with the larger budget should run in round 0", p.Schedule)
	}
	// Two rounds cannot meet a bound of three.
	buyers[0].Min = 3
	if _, err := v.Solve(context.Background(), buyers); !errors.Is(err, market.ErrInfeasible) {
		t.Fatalf("err = %v, want ErrInfeasible", err)
	}
}

func TestVolatileDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	v := market.Volatile{Rounds: 20, Capacity: 32, Makespan: 1e-3}
	buyers := make([]market.Buyer, 120)
	for i := range buyers {
		buyers[i] = market.Buyer{Budget: 1, Width: []int{1, 1, 1, 2, 4, 8}[r.IntN(6)], Progress: r.Float64(), Gain: 0.05 * r.Float64(), Remaining: 1e4 * r.Float64()}
	}
	a, err := v.Solve(context.Background(), buyers)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, v, buyers, a)
	for range 3 {
		b, _ := v.Solve(context.Background(), buyers)
		if b.Objective != a.Objective || !equalSchedules(a.Schedule, b.Schedule) {
			t.Fatal("same market, different plans")
		}
	}
}

func equalSchedules(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for t := range a {
		if len(a[t]) != len(b[t]) {
			return false
		}
		for k := range a[t] {
			if a[t][k] != b[t][k] {
				return false
			}
		}
	}
	return true
}

func TestVolatileInvalid(t *testing.T) {
	ok := market.Buyer{Budget: 1, Width: 1, Gain: 0.1, Remaining: 10}
	cases := []struct {
		name string
		v    market.Volatile
		b    market.Buyer
		want string
	}{
		{"rounds", market.Volatile{Capacity: 1}, ok, "rounds: 0"},
		{"capacity", market.Volatile{Rounds: 1}, ok, "capacity: 0"},
		{"breakpoints", market.Volatile{Rounds: 1, Capacity: 1, Breakpoints: []float64{0, 0.5}}, ok, "breakpoints"},
		{"budget", market.Volatile{Rounds: 1, Capacity: 1}, market.Buyer{Width: 1}, "buyer 0: budget: 0"},
		{"width", market.Volatile{Rounds: 1, Capacity: 1}, market.Buyer{Budget: 1}, "buyer 0: width: 0"},
		{"progress", market.Volatile{Rounds: 1, Capacity: 1}, market.Buyer{Budget: 1, Width: 1, Progress: math.NaN()}, "buyer 0: progress: NaN"},
		{"remaining", market.Volatile{Rounds: 1, Capacity: 1}, market.Buyer{Budget: 1, Width: 1, Remaining: -1}, "buyer 0: remaining: -1"},
	}
	for _, tc := range cases {
		_, err := tc.v.Solve(context.Background(), []market.Buyer{tc.b})
		if !errors.Is(err, market.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (market.Volatile{Rounds: 1, Capacity: 1}).Solve(ctx, []market.Buyer{ok}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func BenchmarkVolatile(b *testing.B) {
	for _, n := range []int{120, 900} {
		r := rand.New(rand.NewPCG(7, 8))
		v := market.Volatile{Rounds: 20, Capacity: n * 32 / 120, Makespan: 1e-3}
		buyers := make([]market.Buyer, n)
		for i := range buyers {
			buyers[i] = market.Buyer{Budget: 1, Width: []int{1, 1, 1, 1, 1, 1, 2, 2, 2, 4}[r.IntN(10)], Progress: r.Float64(), Gain: 0.05 * r.Float64(), Remaining: 1e4 * r.Float64()}
		}
		b.Run(map[int]string{120: "jobs=120", 900: "jobs=900"}[n], func(b *testing.B) {
			for b.Loop() {
				if _, err := v.Solve(context.Background(), buyers); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
