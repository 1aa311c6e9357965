package throughput

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// gavelFiles are the places Gavel's simulation_throughputs.json is looked
// for; the tests that need it skip without it.
var gavelFiles = []string{
	"/work/shared/data/gavel/simulation_throughputs.json",
	"/work/shared/data/gandiva/gavel_simulation_throughputs.json",
}

// gavelPairs reads Gavel's normalized co-location matrices of the 26
// one-GPU job types, per worker type, in the order of the sorted names:
// Pair[i][j] = tput(i beside j)/tput(i alone), as throughput_estimator.py
// computes it.
func gavelPairs(t testing.TB) (names []string, pairs map[string][][]float64) {
	var raw map[string]map[string]map[string]json.RawMessage
	var err error
	for _, f := range gavelFiles {
		var b []byte
		if b, err = os.ReadFile(f); err == nil {
			err = json.Unmarshal(b, &raw)
			break
		}
	}
	if os.IsNotExist(err) {
		t.Skip("Gavel's simulation_throughputs.json is absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	one := func(key string) (string, bool) {
		s, ok := strings.CutPrefix(key, "('")
		s, ok2 := strings.CutSuffix(s, "', 1)")
		return s, ok && ok2
	}
	for key := range raw["v100"] {
		if name, ok := one(key); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	pairs = make(map[string][][]float64)
	for worker, jobs := range raw {
		if strings.Contains(worker, "_") { // the *_unconsolidated variants
			continue
		}
		pairs[worker] = gavelMatrix(t, jobs, names)
	}
	return names, pairs
}

func gavelMatrix(t testing.TB, jobs map[string]map[string]json.RawMessage, names []string) [][]float64 {
	key := func(name string) string { return "('" + name + "', 1)" }
	m := make([][]float64, len(names))
	for i, a := range names {
		var alone float64
		if err := json.Unmarshal(jobs[key(a)]["null"], &alone); err != nil {
			t.Fatalf("%s alone: %v", a, err)
		}
		m[i] = make([]float64, len(names))
		for j, b := range names {
			var pair [2]float64
			if err := json.Unmarshal(jobs[key(a)][key(b)], &pair); err != nil {
				t.Fatalf("%s beside %s: %v", a, b, err)
			}
			m[i][j] = pair[0] / alone
		}
	}
	return m
}

// looStats are mean absolute errors over a leave-one-out run.
type looStats struct {
	beside, partner, row  float64 // the estimator: Beside, Partner, Row
	colMean, rowMean      float64 // baselines for Beside
	partnerMean           float64 // baseline for Partner
	bestRef               float64 // the best reference in hindsight
	matches, observations int
	n                     int
}

// leaveOneOut removes each job type in turn from m, profiles it against
// each remaining type with probability p (Gavel's _profile_jobs; at least
// one), estimates it, and averages the absolute errors over all entries.
func leaveOneOut(t testing.TB, m [][]float64, p float64, trials int, c Completion) looStats {
	var s looStats
	n := len(m)
	for trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		for h := range n {
			var others []int
			for i := range n {
				if i != h {
					others = append(others, i)
				}
			}
			ref := Reference{Pair: make([][]float64, len(others)), Completion: c}
			truth, back := make([]float64, len(others)), make([]float64, len(others))
			for a, i := range others {
				ref.Pair[a] = make([]float64, len(others))
				for b, j := range others {
					ref.Pair[a][b] = m[i][j]
				}
				truth[a], back[a] = m[h][i], m[i][h]
			}
			obs := map[int]float64{}
			for len(obs) == 0 {
				for j := range others {
					if rng.Float64() <= p {
						obs[j] = truth[j]
					}
				}
			}
			e, err := ref.Estimate(obs)
			if err != nil {
				t.Fatal(err)
			}
			s.add(ref.Pair, truth, back, obs, e)
		}
	}
	k := float64(s.n)
	for _, v := range []*float64{&s.beside, &s.partner, &s.row, &s.colMean, &s.rowMean, &s.partnerMean, &s.bestRef} {
		*v /= k
	}
	return s
}

func (s *looStats) add(ref [][]float64, truth, back []float64, obs map[int]float64, e Estimate) {
	n := len(ref)
	var obsMean float64
	for _, v := range obs {
		obsMean += v / float64(len(obs))
	}
	best := math.Inf(1)
	for i := range ref {
		var d float64
		for j := range n {
			d += math.Abs(ref[i][j]-truth[j]) / float64(n)
		}
		best = min(best, d)
	}
	for j := range n {
		var col, row float64
		for i := range n {
			col += ref[i][j] / float64(n)
			row += ref[j][i] / float64(n)
		}
		s.beside += math.Abs(e.Beside(j)-truth[j]) / float64(n)
		s.partner += math.Abs(e.Partner(j)-back[j]) / float64(n)
		s.row += math.Abs(e.Row[j]-truth[j]) / float64(n)
		s.colMean += math.Abs(col-truth[j]) / float64(n)
		s.rowMean += math.Abs(obsMean-truth[j]) / float64(n)
		s.partnerMean += math.Abs(row-back[j]) / float64(n)
	}
	s.bestRef += best
	s.observations += len(obs)
	s.n++
}

// TestEstimateGavelLeaveOneOut profiles each of Gavel's 26 one-GPU job
// types against the other 25, as references, each with probability 0.4,
// and compares the estimates with the truth and with baselines. The bounds
// are the measured errors (4 trials, seeded) plus about 25 %.
func TestEstimateGavelLeaveOneOut(t *testing.T) {
	_, pairs := gavelPairs(t)
	for _, b := range []struct {
		w                    string
		beside, partner, row float64
	}{
		{"v100", 0.16, 0.175, 0.11},   // measured 0.128, 0.139, 0.087
		{"p100", 0.105, 0.125, 0.045}, // measured 0.084, 0.099, 0.035
		{"k80", 0.11, 0.14, 0.05},     // measured 0.087, 0.110, 0.040
	} {
		w := b.w
		s := leaveOneOut(t, pairs[w], 0.4, 4, Completion{})
		t.Logf("%s: MAE Beside %.4f (column mean %.4f, observed mean %.4f, best reference %.4f), "+
			"Partner %.4f (row mean %.4f), Row %.4f; %.1f of 25 profiled",
			w, s.beside, s.colMean, s.rowMean, s.bestRef, s.partner, s.partnerMean, s.row,
			float64(s.observations)/float64(s.n))
		if s.beside > b.beside || s.partner > b.partner || s.row > b.row {
			t.Errorf("%s: MAE Beside %.4f, Partner %.4f, Row %.4f, want ≤ %.3f, %.3f, %.3f",
				w, s.beside, s.partner, s.row, b.beside, b.partner, b.row)
		}
		// The matched reference beats the column mean, the tightest on
		// p100 (about 10 %).
		if s.beside > s.colMean || s.partner > s.partnerMean {
			t.Errorf("%s: worse than the means: Beside %.4f > %.4f or Partner %.4f > %.4f",
				w, s.beside, s.colMean, s.partner, s.partnerMean)
		}
		g := leaveOneOut(t, pairs[w], 0.4, 4, Completion{Tol: 1e-3})
		t.Logf("%s with Gavel's Tol 1e-3: MAE Beside %.4f, Partner %.4f, Row %.4f", w, g.beside, g.partner, g.row)
	}
}

// TestEstimateLowRank hides half of one row of random rank-2 matrices,
// entries in [0, 1]: the completion recovers it (worst error measured over
// these seeds: 0.02).
func TestEstimateLowRank(t *testing.T) {
	const n, rank = 12, 2
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		u, v := make([][rank]float64, n+1), make([][rank]float64, n)
		for i := range u {
			u[i] = [rank]float64{rng.Float64(), rng.Float64()}
		}
		for j := range v {
			v[j] = [rank]float64{rng.Float64(), rng.Float64()}
		}
		m := make([][]float64, n+1)
		for i := range m {
			m[i] = make([]float64, n)
			for j := range m[i] {
				m[i][j] = (u[i][0]*v[j][0] + u[i][1]*v[j][1]) / 2
			}
		}
		obs := map[int]float64{}
		for _, j := range rng.Perm(n)[:n/2] {
			obs[j] = m[n][j]
		}
		e, err := Reference{Pair: m[:n]}.Estimate(obs)
		if err != nil {
			t.Fatal(err)
		}
		for j, x := range e.Row {
			if d := math.Abs(x - m[n][j]); d > 0.05 {
				t.Errorf("seed %d: Row[%d] = %.4f, want %.4f ± 0.05", seed, j, x, m[n][j])
			}
		}
	}
}

// hand is a reference whose rows point in clearly different directions.
var hand = [][]float64{
	{1, 1, 1, 1},
	{0.2, 0.9, 0.3, 0.8},
	{0.9, 0.1, 0.7, 0.2},
	{0.5, 0.5, 0, 0},
}

func TestEstimateHandSolved(t *testing.T) {
	// The job equals reference 2 on references 0, 1 and 3. Whatever is
	// completed for reference 2 in [0, 1], reference 2 is nearest: the
	// closest call is 0, where d = 1 − 0.86/(√0.86·√1.35) = 0.202 against
	// 1 − 0.5/(√0.86·√0.5) = 0.238 for reference 3 and 0.353, 0.631 for
	// references 0 and 1.
	obs := map[int]float64{0: 0.9, 1: 0.1, 3: 0.2}
	for x := 0.0; x <= 1; x += 0.05 {
		if i, _ := nearest(hand, []float64{0.9, 0.1, x, 0.2}); i != 2 {
			t.Fatalf("test premise: Row[2] = %g is nearest to reference %d", x, i)
		}
	}
	e, err := Reference{Pair: hand}.Estimate(obs)
	if err != nil {
		t.Fatal(err)
	}
	if e.Match != 2 {
		t.Errorf("Match = %d, want 2", e.Match)
	}
	for j, v := range obs {
		if e.Row[j] != v {
			t.Errorf("Row[%d] = %g, want the observed %g", j, e.Row[j], v)
		}
	}
	if x := e.Row[2]; !(x >= 0 && x <= 1) {
		t.Errorf("Row[2] = %g, want in [0, 1]", x)
	}
	if want := cosine(hand[2], e.Row); e.Distance != want {
		t.Errorf("Distance = %g, want %g", e.Distance, want)
	}
	for j := range hand {
		if e.Beside(j) != hand[2][j] || e.Partner(j) != hand[j][2] {
			t.Errorf("Beside(%d), Partner(%d) = %g, %g, want %g, %g",
				j, j, e.Beside(j), e.Partner(j), hand[2][j], hand[j][2])
		}
	}
}

func TestCosine(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 0}, []float64{0, 1}, 1},
		{[]float64{1, 1}, []float64{1, 0}, 1 - 1/math.Sqrt2},
		{[]float64{3, 4}, []float64{6, 8}, 0},
		{[]float64{0.9, 0.1, 0, 0.2}, []float64{0.5, 0.5, 0, 0}, 1 - 0.5/(math.Sqrt(0.86)*math.Sqrt(0.5))},
		{[]float64{0.9, 0.1, 0, 0.2}, []float64{0.9, 0.1, 0.7, 0.2}, 1 - 0.86/math.Sqrt(0.86*1.35)},
		{[]float64{0, 0}, []float64{0, 0}, 0},
		{[]float64{0, 0}, []float64{1, 0}, 1},
		{[]float64{1e300, 1e300}, []float64{1e300, 0}, 1 - 1/math.Sqrt2},
	} {
		if got := cosine(c.a, c.b); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("cosine(%v, %v) = %g, want %g", c.a, c.b, got, c.want)
		}
	}
}

// TestEstimateExact observes every entry of a reference's row: no
// completion, and the match is that reference at distance 0, even beside
// a proportional row (1 = ½·0) and a duplicate (3 = 2, lowest index wins).
func TestEstimateExact(t *testing.T) {
	pair := [][]float64{
		{0.8, 0.6, 0.4, 1},
		{0.4, 0.3, 0.2, 0.5},
		{0.7, 0, 0.9, 0.35},
		{0.7, 0, 0.9, 0.35},
	}
	want := []int{0, 1, 2, 2}
	check := func(pair [][]float64, i, want int) {
		obs := map[int]float64{}
		for j, v := range pair[i] {
			obs[j] = v
		}
		e, err := Reference{Pair: pair}.Estimate(obs)
		if err != nil {
			t.Fatal(err)
		}
		if e.Match != want || e.Distance != 0 || !slices.Equal(e.Row, pair[i]) {
			t.Errorf("row %d: Match %d, Distance %g, Row %v; want %d, 0, the row", i, e.Match, e.Distance, e.Row, want)
		}
	}
	for i := range pair {
		check(pair, i, want[i])
	}
	_, pairs := gavelPairs(t)
	for w, m := range pairs {
		for i := range m {
			// Gavel's data has duplicate rows: the first one matches.
			first := slices.IndexFunc(m, func(r []float64) bool { return slices.Equal(r, m[i]) })
			t.Run(w, func(t *testing.T) { check(m, i, first) })
		}
	}
}

// TestEstimateZeroRow: a job that can run beside none of the profiled
// references matches a reference that runs beside none, or else the one
// with the smallest row (Gavel picks at random).
func TestEstimateZeroRow(t *testing.T) {
	obs := map[int]float64{0: 0, 2: 0}
	e, err := Reference{Pair: hand}.Estimate(obs)
	if err != nil {
		t.Fatal(err)
	}
	if e.Match != 3 || e.Distance != 1 || slices.Max(e.Row) != 0 {
		t.Errorf("Match %d, Distance %g, Row %v; want 3, 1, zeros", e.Match, e.Distance, e.Row)
	}
	zero := slices.Clone(hand)
	zero[1] = []float64{0, 0, 0, 0}
	if e, _ := (Reference{Pair: zero}).Estimate(obs); e.Match != 1 || e.Distance != 0 {
		t.Errorf("with a zero reference: Match %d, Distance %g; want 1, 0", e.Match, e.Distance)
	}
}

// TestEstimateClip: on the rank-1 reference a_i·b_j below, a job with
// a = 1.8 profiled beside references 0 to 2 is completed (shrunk by the
// penalty) to about 1.1 beside reference 5, which, as in Gavel, is
// clipped to 1.
func TestEstimateClip(t *testing.T) {
	a := []float64{1, 0.9, 0.8, 0.7, 0.6, 0.5}
	b := []float64{0.3, 0.4, 0.5, 0.6, 0.8, 1}
	pair := make([][]float64, len(a))
	for i := range pair {
		pair[i] = make([]float64, len(b))
		for j := range pair[i] {
			pair[i][j] = a[i] * b[j]
		}
	}
	obs := map[int]float64{0: 1.8 * b[0], 1: 1.8 * b[1], 2: 1.8 * b[2]}
	e, err := Reference{Pair: pair}.Estimate(obs)
	if err != nil {
		t.Fatal(err)
	}
	if e.Row[5] != 1 {
		t.Errorf("Row = %v, want 1 beside reference 5", e.Row)
	}
}

func TestEstimateDeterministic(t *testing.T) {
	r := Reference{Pair: hand, Completion: Completion{Seed: 3}}
	a, err := r.Estimate(map[int]float64{1: 0.85, 3: 0.75})
	if err != nil {
		t.Fatal(err)
	}
	// A map built in another order.
	b, _ := r.Estimate(map[int]float64{3: 0.75, 1: 0.85})
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Estimate differs between calls:\n%+v\n%+v", a, b)
	}
	if a.Match != 1 {
		t.Errorf("Match = %d, want 1", a.Match)
	}
}

func TestEstimateInvalid(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := map[int]float64{0: 0.5}
	for _, c := range []struct {
		r    Reference
		obs  map[int]float64
		want string
	}{
		{Reference{}, ok, "empty Pair"},
		{Reference{Pair: [][]float64{{1, 1}, {1}}}, ok, "Pair[1] has 1 entries, want 2"},
		{Reference{Pair: [][]float64{{1, 1}, {1}}}, ok, "Pair[1] has 1 entries, want 2"},
		{Reference{Pair: [][]float64{{}}}, ok, "empty Pair[0]"},
		{Reference{Pair: [][]float64{{1, nan}, {1, 1}}}, ok, "Pair[0][1] = NaN"},
		{Reference{Pair: [][]float64{{1, 1}, {-1, 1}}}, ok, "Pair[1][0] = -1"},
		{Reference{Pair: [][]float64{{1, 1}, {1, inf}}}, ok, "Pair[1][1] = +Inf"},
		{Reference{Pair: hand, Names: []string{"a"}}, ok, "1 Names for 4 references"},
		{Reference{Pair: hand, Completion: Completion{Rank: -1}}, ok, "Rank = -1"},
		{Reference{Pair: hand, Completion: Completion{Rank: 1 << 20}}, ok, "Rank = 1048576"},
		{Reference{Pair: hand, Completion: Completion{Iterations: -2}}, ok, "Iterations = -2"},
		{Reference{Pair: hand, Completion: Completion{Mu: nan}}, ok, "Mu = NaN"},
		{Reference{Pair: hand, Completion: Completion{Tol: -1}}, ok, "Tol = -1"},
		{Reference{Pair: hand}, nil, "no observations"},
		{Reference{Pair: hand}, map[int]float64{}, "no observations"},
		{Reference{Pair: hand}, map[int]float64{0: 1, 4: 1}, "index 4 out of range [0, 4)"},
		{Reference{Pair: hand}, map[int]float64{-1: 1, 9: 1}, "index -1 out of range"},
		{Reference{Pair: hand}, map[int]float64{3: nan, 1: -0.5}, "observed[1] = -0.5"},
		{Reference{Pair: hand}, map[int]float64{2: inf}, "observed[2] = +Inf"},
	} {
		_, err := c.r.Estimate(c.obs)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "throughput: ") {
			t.Errorf("%+v, %v: error %v, want one containing %q", c.r, c.obs, err, c.want)
		}
	}
}

func TestEstimateZeroValue(t *testing.T) {
	var e Estimate
	if !math.IsNaN(e.Beside(0)) || !math.IsNaN(e.Partner(0)) {
		t.Error("zero Estimate: Beside or Partner not NaN")
	}
	e, _ = Reference{Pair: hand}.Estimate(map[int]float64{0: 1})
	for _, j := range []int{-1, 4} {
		if !math.IsNaN(e.Beside(j)) || !math.IsNaN(e.Partner(j)) {
			t.Errorf("Beside(%d) or Partner(%d) not NaN", j, j)
		}
	}
}

func TestEMA(t *testing.T) {
	// α = 0.5, no prior: the first measurement is taken as is.
	var e EMA
	for i, c := range []struct{ m, want float64 }{
		{10, 10},
		{20, 15},     // 0.5·20 + 0.5·10
		{0, 7.5},     // a failed round
		{nan(), 7.5}, // ignored
		{-1, 7.5},    // ignored
		{2.5, 5},     // 0.5·2.5 + 0.5·7.5
		{5, 5},
	} {
		if got := e.Observe(c.m); got != c.want || e.Value != c.want {
			t.Errorf("step %d: Observe(%g) = %g, Value %g, want %g", i, c.m, got, e.Value, c.want)
		}
	}
	if e.N != 5 {
		t.Errorf("N = %d, want 5", e.N)
	}
	// A prior (Gavel's DEFAULT_THROUGHPUT) is blended with the first
	// measurement, as in Gavel.
	p := EMA{Value: 1}
	if got := p.Observe(10); got != 5.5 {
		t.Errorf("prior 1, Observe(10) = %g, want 5.5", got)
	}
	q := EMA{Alpha: 0.25, Value: 8}
	if got := q.Observe(4); got != 7 {
		t.Errorf("α = 0.25: Observe(4) = %g, want 7", got)
	}
	r := EMA{Alpha: 2, Value: 8}
	if got := r.Observe(4); got != 6 {
		t.Errorf("α = 2 (invalid, 0.5): Observe(4) = %g, want 6", got)
	}
}

func nan() float64 { return math.NaN() }

func TestFailures(t *testing.T) {
	var f Failures
	for round := range 2 {
		for i := 1; i <= 5; i++ {
			if drop := f.Fail(); drop != (i == 5) {
				t.Errorf("round %d, failure %d: drop = %v", round, i, drop)
			}
		}
		if !f.Fail() {
			t.Errorf("round %d: a 6th failure does not drop", round)
		}
		f.Succeed()
		if f.N != 0 {
			t.Errorf("N = %d after a success, want 0", f.N)
		}
	}
	for i := 0; i < 4; i++ {
		f.Fail()
	}
	f.Succeed()
	if f.Fail() {
		t.Error("drop after a reset")
	}
	g := Failures{Limit: 2}
	if g.Fail() || !g.Fail() {
		t.Error("Limit 2: want a drop at exactly the 2nd failure")
	}
}

// FuzzEstimate decodes a small matrix and profile, with some invalid and
// extreme values: Estimate never panics, errors carry the package prefix,
// and a result is finite and in range.
func FuzzEstimate(f *testing.F) {
	f.Add([]byte{3, 0x0f, 10, 20, 30, 40, 50, 60, 70, 80, 90, 5, 6, 7})
	f.Add([]byte{1, 0x01, 0})
	f.Add([]byte{4, 0xff, 255, 254, 253, 252, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{2, 0x80, 250, 250, 250, 250, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n, bits, data := int(data[0]%7), data[1], data[2:]
		next := func() float64 {
			if len(data) == 0 {
				return 0.5
			}
			b := data[0]
			data = data[1:]
			return fuzzValue(b)
		}
		pair := make([][]float64, n)
		for i := range pair {
			pair[i] = make([]float64, n)
			for j := range pair[i] {
				pair[i][j] = next()
			}
		}
		obs := map[int]float64{}
		for j := range 8 {
			if bits>>j&1 != 0 {
				obs[j-1] = next() // -1 .. 6, some out of range
			}
		}
		r := Reference{Pair: pair, Completion: Completion{Seed: uint64(len(data))}}
		e, err := r.Estimate(obs)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "throughput: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			return
		}
		if len(e.Row) != n || e.Match < 0 || e.Match >= n || !(e.Distance >= 0 && e.Distance <= 2) {
			t.Fatalf("Estimate = %+v", e)
		}
		for j, x := range e.Row {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Errorf("Row[%d] = %g", j, x)
			}
			if b, p := e.Beside(j), e.Partner(j); b != pair[e.Match][j] || p != pair[j][e.Match] {
				t.Errorf("Beside(%d), Partner(%d) = %g, %g", j, j, b, p)
			}
		}
	})
}

// fuzzValue maps a byte to a throughput, mostly in [0, 1.2], sometimes
// invalid or extreme.
func fuzzValue(b byte) float64 {
	switch b {
	case 255:
		return math.NaN()
	case 254:
		return math.Inf(1)
	case 253:
		return -0.5
	case 252:
		return 1e300
	case 251:
		return 1e-300
	case 250:
		return 0
	}
	return float64(b) / 200
}

func BenchmarkEstimate(b *testing.B) {
	_, pairs := gavelPairs(b)
	m := pairs["v100"]
	ref := Reference{Pair: make([][]float64, 25)}
	for i := range ref.Pair {
		ref.Pair[i] = m[i][:25]
	}
	obs := map[int]float64{}
	for j := 0; j < 25; j += 3 {
		obs[j] = m[25][j]
	}
	for b.Loop() {
		if _, err := ref.Estimate(obs); err != nil {
			b.Fatal(err)
		}
	}
}

// A wide matrix, two blocks of columns as Gavel's one per accelerator
// type: the job observed only in the second block matches the reference
// whose second block it equals, and Beside indexes both blocks.
func TestEstimateWide(t *testing.T) {
	r := Reference{Pair: [][]float64{
		{0.9, 0.2, 0.8, 0.1},
		{0.3, 0.7, 0.2, 0.9},
	}}
	e, err := r.Estimate(map[int]float64{2: 0.2, 3: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if e.Match != 1 || e.Beside(0) != 0.3 || e.Beside(3) != 0.9 || len(e.Row) != 4 {
		t.Errorf("match %d, beside %v %v, row %v; want reference 1, 0.3, 0.9, four entries", e.Match, e.Beside(0), e.Beside(3), e.Row)
	}
}
