package bayes

import (
	"bufio"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestGittinsHand(t *testing.T) {
	s, err := NewService([]float64{4, 2, 3, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, delta, want, sim float64
	}{
		// a = 1.5, Δ = 1: S > 1.5 leaves {2, 3, 4}; only 2 ends within
		// 1.5+1, so P = 1/3; min(S−a, Δ) = (0.5, 1, 1), E = 2.5/3;
		// G = (1/3)/(2.5/3) = 0.4. The simulator counts 2 in full:
		// E = (2+1+1)/3, G = 0.25.
		{1.5, 1, 0.4, 0.25},
		// a = 0, Δ = 2.5: P = 2/4, E = (1+2+2.5+2.5)/4 = 2, G = 0.25 (both forms).
		{0, 2.5, 0.25, 0.25},
		// a = 3.5, Δ = 1: only 4 is left and ends within 0.5: G = 1/0.5 = 2;
		// the simulator divides by 4.
		{3.5, 1, 2, 0.25},
		// a = 1, Δ = 0.5: {2, 3, 4} left, none ends by 1.5: no priority.
		{1, 0.5, 0, 0},
		// a = 0, Δ = ∞: P = 1, E = mean = 2.5.
		{0, math.Inf(1), 0.4, 0.4},
		{4, 1, 0, 0},             // nothing exceeds 4
		{-3, 2.5, 0.25, 0.25},    // a < 0 counts as 0
		{0, 0, 0, 0},             // no quantum
		{math.NaN(), 1, 0, 0},    // no attained service
		{1, math.NaN(), 0, 0},    // no quantum
		{1e9, math.Inf(1), 0, 0}, // beyond the largest sample
		{2, 2, 1 / 1.5, 2.0 / 7}, // {3, 4}: both end by 4; E = (1+2)/2 → 2/3; sim (3+4)/2 → 2/7
	} {
		if got := s.Gittins(tc.a, tc.delta); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Gittins(%v, %v) = %v, want %v", tc.a, tc.delta, got, tc.want)
		}
		if got := s.GittinsSimulator(tc.a, tc.delta); math.Abs(got-tc.sim) > 1e-15 {
			t.Errorf("GittinsSimulator(%v, %v) = %v, want %v", tc.a, tc.delta, got, tc.sim)
		}
	}
	if s.Len() != 4 {
		t.Errorf("Len = %d", s.Len())
	}
	if g := (Service{}).Gittins(0, 1); g != 0 {
		t.Errorf("zero Service: %v", g)
	}
}

// bruteGittins is the definition, summed sample by sample.
func bruteGittins(s []float64, a, delta float64) float64 {
	var k, e float64
	for _, v := range s {
		if v <= a {
			continue
		}
		if v-a <= delta {
			k++
		}
		e += math.Min(v-a, delta)
	}
	if k == 0 {
		return 0
	}
	return k / e
}

func TestGittinsProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	samples := make([]float64, 500)
	for i := range samples {
		samples[i] = math.Floor(math.Exp(3 + 4*r.Float64())) // heavy-ish tail, with ties
	}
	s, err := NewService(samples)
	if err != nil {
		t.Fatal(err)
	}
	top := s.s[len(s.s)-1]
	for range 2000 {
		a := r.Float64() * 1.2 * top
		delta := math.Exp(8 * r.Float64())
		if r.IntN(4) == 0 {
			a = s.s[r.IntN(len(s.s))] // exactly on a sample
		}
		g := s.Gittins(a, delta)
		if g < 0 || math.IsNaN(g) {
			t.Fatalf("Gittins(%v, %v) = %v", a, delta, g)
		}
		if a >= top && g != 0 {
			t.Fatalf("Gittins(%v, %v) = %v beyond the largest sample %v", a, delta, g, top)
		}
		if want := bruteGittins(samples, a, delta); math.Abs(g-want) > 1e-12*want {
			t.Fatalf("Gittins(%v, %v) = %v, definition gives %v", a, delta, g, want)
		}
		if sim := s.GittinsSimulator(a, delta); sim > g*(1+1e-12) || sim < 0 {
			t.Fatalf("GittinsSimulator(%v, %v) = %v above the textbook %v", a, delta, sim, g)
		}
	}
}

func TestGittinsCancellation(t *testing.T) {
	// a just below huge samples: each s − a is 16 (one ulp of 1e17), and
	// a·3 = 3e17−48 rounds to 3e17−64, so plain prefix sums would give
	// 3e17 − (3e17−64) = 64 instead of 48. The sum is exact here: G = 3/48.
	s, err := NewService([]float64{1e17, 1e17, 1e17})
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Gittins(1e17-16, 100); math.Abs(g-1.0/16) > 1e-15 {
		t.Errorf("G = %v, want 1/16", g)
	}
	small, err := NewService([]float64{1e17, 1e17 + 16, 5})
	if err != nil {
		t.Fatal(err)
	}
	// a = 1e17−16: s − a = 16 and 32; Δ = 16 ends only the first:
	// G = 1/(16+16) (textbook), 1/(1e17+16) (simulator).
	if g := small.Gittins(1e17-16, 16); g != 1.0/32 {
		t.Errorf("G = %v, want 1/32", g)
	}
	if g := small.GittinsSimulator(1e17-16, 16); g != 1/(1e17+16) {
		t.Errorf("G_sim = %v, want 1/(1e17+16)", g)
	}
}

func TestNewServiceErrors(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{nil, "samples: empty"},
		{[]float64{1, math.NaN()}, "samples[1]: NaN"},
		{[]float64{math.Inf(1)}, "samples[0]: +Inf"},
		{[]float64{1, 2, -3}, "samples[2]: -3"},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, "sum overflows"},
	} {
		_, err := NewService(tc.in)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewService(%v): err = %v, want %q", tc.in, err, tc.want)
		}
	}
	in := []float64{3, 1, 2}
	if _, err := NewService(in); err != nil || in[0] != 3 {
		t.Errorf("NewService changed its input: %v, %v", in, err)
	}
}

func readYarn(t testing.TB) []float64 {
	f, err := os.Open("../../shared/data/tiresias/yarn-gput1000.csv")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("yarn-gput1000.csv not available")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var out []float64
	for line := 0; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if line == 0 || text == "" { // header "duration"
			continue
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			t.Fatalf("line %d: %v", line+1, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGittinsYarn(t *testing.T) {
	s, err := NewService(readYarn(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1001 {
		t.Errorf("Len = %d, want 1001", s.Len())
	}
	const delta = 3250
	for _, tc := range []struct{ a, want, sim float64 }{
		// textbook: 0.60639/2040.64, 0.32741/2680.12, 0.15058/3015.52;
		// the simulator's ranks are 297.16, 87.44, 36.73 (×1e-6 here).
		{0, 2.972e-4, 297.16e-6},
		{3250, 1.222e-4, 87.44e-6},
		{7200, 4.99e-5, 36.73e-6},
	} {
		if got := s.Gittins(tc.a, delta); math.Abs(got-tc.want) > 0.005*tc.want {
			t.Errorf("G(%v) = %.5g, want %.4g ± 0.5 %%", tc.a, got, tc.want)
		}
		if got := s.GittinsSimulator(tc.a, delta); math.Abs(got-tc.sim) > 0.0001*tc.sim {
			t.Errorf("G_sim(%v) = %.6g, want %.5g", tc.a, got, tc.sim)
		}
	}
}
