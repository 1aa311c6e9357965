package throughput

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Synergy's per-GPU axes (shared/data/synergy/model_profiles.json, "_axes").
var (
	synergyCPUs   = []float64{1, 2, 3, 4, 5, 6, 9, 12, 24}
	synergyMemory = []float64{20.83, 62.5, 125, 187.5, 250}
)

// synergyModel returns the "<name>_1" matrix of model_profiles.json
// (profile_sets.models), transcribed by hand: rows are CPUs per GPU,
// columns memory per GPU, normalised to (3 CPUs, 62.5 GB) = 1.
func synergyModel(name string) Sensitivity {
	var rows [][]float64
	switch name {
	case "res18":
		rows = [][]float64{
			{0.1, 0.37, 0.37, 0.37, 0.37},
			{0.1, 0.72, 0.72, 0.72, 0.72},
			{0.1, 1, 1, 1, 1},
			{0.1, 1.3, 1.3, 1.3, 1.3},
			{0.1, 1.53, 1.53, 1.53, 1.53},
			{0.1, 1.75, 1.75, 1.75, 1.75},
			{0.1, 2.4, 2.4, 2.4, 2.4},
			{0.1, 2.4, 2.4, 2.4, 2.4},
			{0.1, 2.4, 2.4, 2.4, 2.4},
		}
	case "alexnet":
		rows = [][]float64{
			{0.1, 0.3, 0.3, 0.3, 0.3},
			{0.1, 0.66, 0.66, 0.66, 0.66},
			{0.1, 1, 1, 1, 1},
			{0.1, 1.25, 1.25, 1.25, 1.25},
			{0.1, 1.53, 1.53, 1.53, 1.53},
			{0.1, 1.75, 1.75, 1.75, 1.75},
			{0.1, 2, 2, 2, 2},
			{0.1, 2, 2.94, 2.94, 2.94},
			{0.1, 2, 2.94, 2.94, 2.94},
		}
	case "gnmt":
		for range synergyCPUs {
			rows = append(rows, []float64{1, 1, 1, 1, 1})
		}
	case "m5":
		rows = [][]float64{
			{0.1, 0.3, 0.3, 0.3, 0.3},
			{0.1, 0.66, 0.66, 0.66, 0.66},
			{0.1, 1, 1, 1, 1},
			{0.1, 1.2, 1.2, 1.2, 1.2},
			{0.1, 1.4, 1.4, 1.4, 1.4},
			{0.1, 1.5, 2, 2.5, 2.5},
			{0.1, 1.5, 2, 2.5, 2.5},
			{0.1, 1.5, 2, 2.5, 2.5},
			{0.1, 1.5, 2, 2.5, 2.5},
		}
	default:
		panic("unknown model " + name)
	}
	return Sensitivity{CPUs: synergyCPUs, MemoryGB: synergyMemory, Speedup: rows}
}

var synergyModels = []string{"res18", "alexnet", "gnmt", "m5"}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSensitivityIdealSynergy(t *testing.T) {
	// The ideal demands and speedups of the spec's table (§1.3), which
	// are also the "cpus", "mem" and "speedup" entries of the data file
	// (gnmt's "mem" there is the code's int(62.5/3) = 20, i.e. the
	// 20.83-GB column).
	want := map[string]Point{
		"res18":   {CPUs: 9, MemoryGB: 62.5, Speedup: 2.4},
		"alexnet": {CPUs: 12, MemoryGB: 125, Speedup: 2.94},
		"gnmt":    {CPUs: 1, MemoryGB: 20.83, Speedup: 1},
		"m5":      {CPUs: 6, MemoryGB: 187.5, Speedup: 2.5},
	}
	for _, name := range synergyModels {
		s := synergyModel(name)
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: Validate: %v", name, err)
		}
		if got := s.Ideal(); got != want[name] {
			t.Errorf("%s: Ideal() = %+v, want %+v", name, got, want[name])
		}
		if got := s.At(3, 62.5); got != 1 {
			t.Errorf("%s: At(3, 62.5) = %v, want 1 (the proportional cell)", name, got)
		}
	}
}

func TestSensitivityIdealTies(t *testing.T) {
	// The maximum is reached in several cells: the fewest CPUs win over
	// less memory.
	s := Sensitivity{
		CPUs:     []float64{1, 2, 4},
		MemoryGB: []float64{10, 20},
		Speedup:  [][]float64{{0, 1}, {2, 3}, {3, 3}},
	}
	if got, want := s.Ideal(), (Point{CPUs: 2, MemoryGB: 20, Speedup: 3}); got != want {
		t.Errorf("Ideal() = %+v, want %+v", got, want)
	}
	// A single cell.
	one := Sensitivity{CPUs: []float64{3}, MemoryGB: []float64{62.5}, Speedup: [][]float64{{1}}}
	if got, want := one.Ideal(), (Point{CPUs: 3, MemoryGB: 62.5, Speedup: 1}); got != want {
		t.Errorf("Ideal() of a single cell = %+v, want %+v", got, want)
	}
}

func TestSensitivityAtGridPoints(t *testing.T) {
	for _, name := range synergyModels {
		s := synergyModel(name)
		for i, c := range s.CPUs {
			for m, mem := range s.MemoryGB {
				if got, want := s.At(c, mem), s.Speedup[i][m]; got != want {
					t.Errorf("%s: At(%v, %v) = %v, want the grid's %v", name, c, mem, got, want)
				}
			}
		}
	}
}

func TestSensitivityAtHandComputed(t *testing.T) {
	res18, alexnet, m5 := synergyModel("res18"), synergyModel("alexnet"), synergyModel("m5")
	tests := []struct {
		name      string
		s         Sensitivity
		cpus, mem float64
		want, tol float64
	}{
		// Halfway between the 6- and 9-CPU rows: (1.75+2.4)/2.
		{"res18 CPU midpoint", res18, 7.5, 62.5, 2.075, 1e-12},
		// Two thirds of the way from 6 to 9 CPUs: 1.75 + (2.4−1.75)·2/3.
		{"res18 CPU two thirds", res18, 8, 250, 1.75 + 0.65*2/3, 1e-12},
		// Halfway between 20.83 and 62.5 GB: (0.1+1)/2.
		{"res18 memory midpoint", res18, 3, 41.665, 0.55, 1e-12},
		// A rounding error below a grid point keeps (almost) its value:
		// 1 − 0.9·1e-7/41.67 ≈ 1 − 2.2e-9.
		{"res18 just below 62.5 GB", res18, 3, 62.4999999, 1, 1e-8},
		// Both coordinates inside a cell whose corners differ, (9..12) ×
		// (62.5..125) with corners 2, 2 / 2, 2.94: rows 9 → 2 and
		// 12 → (2+2.94)/2 = 2.47, then (2+2.47)/2.
		{"alexnet cell centre", alexnet, 10.5, 93.75, 2.235, 1e-12},
		// m5, cell (5..6) × (125..187.5), corners 1.4, 1.4 / 2, 2.5:
		// centre: (1.4 + 2.25)/2; a quarter in along each axis:
		// row 5 → 1.4, row 6 → 2 + 0.25·0.5 = 2.125, 1.4 + 0.25·0.725.
		{"m5 cell centre", m5, 5.5, 156.25, 1.825, 1e-12},
		{"m5 cell quarter", m5, 5.25, 140.625, 1.58125, 1e-12},
		// Clamped outside the grid: the nearest edge or corner.
		{"below both", res18, 0.5, 10, 0.1, 0},
		{"below CPUs", res18, 0.5, 62.5, 0.37, 0},
		{"above both", res18, 100, 1000, 2.4, 0},
		{"above CPUs, below memory", res18, 48, 10, 0.1, 0},
		{"above CPUs, inside memory", res18, 30, 41.665, 1.25, 1e-12},
		{"-Inf CPUs, +Inf memory", res18, math.Inf(-1), math.Inf(1), 0.37, 0},
		{"+Inf CPUs", alexnet, math.Inf(1), 125, 2.94, 0},
		{"zero and negative", alexnet, 0, -5, 0.1, 0},
		// NaN is clamped to the axis's first point (documented in
		// bracket); it must not panic.
		{"NaN CPUs", res18, math.NaN(), 62.5, 0.37, 0},
		{"NaN memory", res18, 3, math.NaN(), 0.1, 0},
		{"NaN both", m5, math.NaN(), math.NaN(), 0.1, 0},
	}
	for _, tt := range tests {
		if got := tt.s.At(tt.cpus, tt.mem); !near(got, tt.want, tt.tol) {
			t.Errorf("%s: At(%v, %v) = %v, want %v ± %g", tt.name, tt.cpus, tt.mem, got, tt.want, tt.tol)
		}
	}
}

func TestSensitivityClip(t *testing.T) {
	res18, alexnet, m5 := synergyModel("res18"), synergyModel("alexnet"), synergyModel("m5")
	tests := []struct {
		name      string
		s         Sensitivity
		cpus, mem float64
		want      Point
	}{
		// The ideal fits: unchanged, at the limits too.
		{"res18 fits", res18, 24, 250, Point{9, 62.5, 2.4}},
		{"res18 exactly", res18, 9, 62.5, Point{9, 62.5, 2.4}},
		{"gnmt fits", synergyModel("gnmt"), 1, 20.83, Point{1, 20.83, 1}},
		// A 4-GPU alexnet job on a 24-core server gets at most 6 cores
		// per GPU: the 6-CPU row at the ideal's 125 GB, 1.75. Synergy's
		// code (jobs/workload.py::add_synergy_profile) instead
		// interpolates between the proportional cell (3 CPUs, speedup 1)
		// and the ideal (12 CPUs, 2.94) along the CPU axis, ignoring the
		// rows in between: 1 + 1.94·(6−3)/(12−3) ≈ 1.647 (pinned below).
		{"alexnet 6 CPUs", alexnet, 6, 250, Point{6, 125, 1.75}},
		// Between the 6- and 9-CPU rows: 1.75 + (2−1.75)·(8−6)/(9−6).
		{"alexnet 8 CPUs", alexnet, 8, 250, Point{8, 125, 1.75 + 0.25*2/3}},
		// Limited memory: m5's ideal is (6, 187.5, 2.5).
		{"m5 125 GB", m5, 24, 125, Point{6, 125, 2}},
		{"m5 150 GB", m5, 24, 150, Point{6, 150, 2 + 0.5*(150-125)/62.5}},
		{"m5 both", m5, 5.5, 156.25, Point{5.5, 156.25, 1.825}},
	}
	for _, tt := range tests {
		got := tt.s.Clip(tt.cpus, tt.mem)
		if got.CPUs != tt.want.CPUs || got.MemoryGB != tt.want.MemoryGB || !near(got.Speedup, tt.want.Speedup, 1e-12) {
			t.Errorf("%s: Clip(%v, %v) = %+v, want %+v", tt.name, tt.cpus, tt.mem, got, tt.want)
		}
	}

	// Synergy's code's value for the 6-CPU alexnet case, for reference:
	// not what Clip returns.
	ideal := alexnet.Ideal()
	synergy := 1 + (ideal.Speedup-1)*(6-3)/(ideal.CPUs-3)
	if !near(synergy, 1.6466666666666667, 1e-12) {
		t.Errorf("Synergy's linear clip = %v, want 1 + 1.94·3/9 ≈ 1.6467", synergy)
	}
	if got := alexnet.Clip(6, 250).Speedup; near(got, synergy, 1e-3) {
		t.Errorf("Clip(6, 250).Speedup = %v: the profiled 6-CPU row (1.75) should be read, not Synergy's %v", got, synergy)
	}
}

func TestSensitivityValidate(t *testing.T) {
	for _, name := range synergyModels {
		if err := synergyModel(name).Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	good := func() Sensitivity {
		return Sensitivity{
			CPUs:     []float64{1, 2},
			MemoryGB: []float64{10, 20, 30},
			Speedup:  [][]float64{{0, 1, 2}, {1, 2, 3}},
		}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("good: %v", err)
	}
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		edit   func(*Sensitivity)
		prefix string
	}{
		{"zero value", func(s *Sensitivity) { *s = Sensitivity{} }, "cpus: empty"},
		{"no cpus", func(s *Sensitivity) { s.CPUs = nil }, "cpus: empty"},
		{"zero cpus", func(s *Sensitivity) { s.CPUs[0] = 0 }, "cpus: values must be"},
		{"negative cpus", func(s *Sensitivity) { s.CPUs[0] = -1 }, "cpus: values must be"},
		{"NaN cpus", func(s *Sensitivity) { s.CPUs[1] = nan }, "cpus: values must be"},
		{"Inf cpus", func(s *Sensitivity) { s.CPUs[1] = inf }, "cpus: values must be"},
		{"descending cpus", func(s *Sensitivity) { s.CPUs[0], s.CPUs[1] = 2, 1 }, "cpus: values must be"},
		{"repeated cpus", func(s *Sensitivity) { s.CPUs[1] = 1 }, "cpus: values must be"},
		{"no memory", func(s *Sensitivity) { s.MemoryGB = []float64{} }, "memory_gb: empty"},
		{"zero memory", func(s *Sensitivity) { s.MemoryGB[0] = 0 }, "memory_gb: values must be"},
		{"NaN memory", func(s *Sensitivity) { s.MemoryGB[2] = nan }, "memory_gb: values must be"},
		{"unsorted memory", func(s *Sensitivity) { s.MemoryGB[2] = 15 }, "memory_gb: values must be"},
		{"missing row", func(s *Sensitivity) { s.Speedup = s.Speedup[:1] }, "speedup: 1 rows for 2 CPU values"},
		{"extra row", func(s *Sensitivity) { s.Speedup = append(s.Speedup, []float64{1, 1, 1}) }, "speedup: 3 rows for 2 CPU values"},
		{"short row", func(s *Sensitivity) { s.Speedup[1] = s.Speedup[1][:2] }, "speedup[1]: 2 values for 3 memory values"},
		{"long row", func(s *Sensitivity) { s.Speedup[0] = append(s.Speedup[0], 4) }, "speedup[0]: 4 values for 3 memory values"},
		{"negative speedup", func(s *Sensitivity) { s.Speedup[1][2] = -1 }, "speedup[1][2]: "},
		{"NaN speedup", func(s *Sensitivity) { s.Speedup[0][1] = nan }, "speedup[0][1]: "},
		{"Inf speedup", func(s *Sensitivity) { s.Speedup[1][0] = inf }, "speedup[1][0]: "},
	}
	for _, tt := range tests {
		s := good()
		tt.edit(&s)
		err := s.Validate()
		if err == nil {
			t.Errorf("%s: Validate() = nil, want an error starting %q", tt.name, tt.prefix)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.prefix) {
			t.Errorf("%s: Validate() = %q, want it to start %q", tt.name, err, tt.prefix)
		}
	}
}

// randomMonotone returns a valid grid, non-decreasing along both axes,
// with 1–6 points per axis; some steps are flat.
func randomMonotone(rng *rand.Rand) Sensitivity {
	axis := func() []float64 {
		v := make([]float64, 1+rng.IntN(6))
		x := 0.0
		for i := range v {
			x += 0.1 + 10*rng.Float64()
			v[i] = x
		}
		return v
	}
	s := Sensitivity{CPUs: axis(), MemoryGB: axis()}
	s.Speedup = make([][]float64, len(s.CPUs))
	for i := range s.Speedup {
		s.Speedup[i] = make([]float64, len(s.MemoryGB))
		for m := range s.Speedup[i] {
			v := 0.0
			if i > 0 {
				v = s.Speedup[i-1][m]
			}
			if m > 0 {
				v = max(v, s.Speedup[i][m-1])
			}
			if rng.IntN(3) > 0 {
				v += rng.ExpFloat64()
			}
			s.Speedup[i][m] = v
		}
	}
	return s
}

// randomCoordinate returns a point on, inside or around axis.
func randomCoordinate(rng *rand.Rand, axis []float64) float64 {
	lo, hi := axis[0], axis[len(axis)-1]
	switch rng.IntN(4) {
	case 0:
		return axis[rng.IntN(len(axis))]
	case 1:
		return lo - 5*rng.Float64()
	case 2:
		return hi + 5*rng.Float64()
	}
	return lo + (hi-lo)*rng.Float64()
}

func TestSensitivityAtProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for g := range 300 {
		s := randomMonotone(rng)
		if err := s.Validate(); err != nil {
			t.Fatalf("grid %d: %v", g, err)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, row := range s.Speedup {
			for _, x := range row {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		// Bilinear interpolation rounds; allow a few ulps of the grid's
		// largest value.
		tol := 1e-14 * max(1, hi)
		for range 50 {
			c1, c2 := randomCoordinate(rng, s.CPUs), randomCoordinate(rng, s.CPUs)
			m1, m2 := randomCoordinate(rng, s.MemoryGB), randomCoordinate(rng, s.MemoryGB)
			if c1 > c2 {
				c1, c2 = c2, c1
			}
			if m1 > m2 {
				m1, m2 = m2, m1
			}
			a, b, c := s.At(c1, m1), s.At(c2, m1), s.At(c1, m2)
			for _, v := range []float64{a, b, c} {
				if !(v >= lo-tol && v <= hi+tol) {
					t.Fatalf("grid %d %+v: At = %v outside [%v, %v]", g, s, v, lo, hi)
				}
			}
			if b < a-tol {
				t.Fatalf("grid %d %+v: At(%v, %v) = %v > At(%v, %v) = %v", g, s, c1, m1, a, c2, m1, b)
			}
			if c < a-tol {
				t.Fatalf("grid %d %+v: At(%v, %v) = %v > At(%v, %v) = %v", g, s, c1, m1, a, c1, m2, c)
			}
		}
	}
}

// fuzzGrid builds a grid from data: up to 4 points per axis with
// ascending positive coordinates of any magnitude and values from 0 to
// about 2^1016 (subnormals included). It reports false when data is too
// short or the grid is not valid.
func fuzzGrid(data []byte) (Sensitivity, bool) {
	next := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	shape, ok := next()
	if !ok {
		return Sensitivity{}, false
	}
	nc, nm := 1+int(shape%4), 1+int(shape/4%4)
	axis := func(n int) ([]float64, bool) {
		v := make([]float64, n)
		x := 0.0
		for i := range v {
			a, ok1 := next()
			b, ok2 := next()
			if !ok1 || !ok2 {
				return nil, false
			}
			x += math.Ldexp(1+float64(a)/16, int(b%128)-64)
			v[i] = x
		}
		return v, true
	}
	s := Sensitivity{}
	if s.CPUs, ok = axis(nc); !ok {
		return s, false
	}
	if s.MemoryGB, ok = axis(nm); !ok {
		return s, false
	}
	s.Speedup = make([][]float64, nc)
	for i := range s.Speedup {
		s.Speedup[i] = make([]float64, nm)
		for m := range s.Speedup[i] {
			a, ok1 := next()
			b, ok2 := next()
			if !ok1 || !ok2 {
				return s, false
			}
			s.Speedup[i][m] = math.Ldexp(float64(a)/255, int(b)*8-1024)
		}
	}
	return s, s.Validate() == nil
}

func FuzzSensitivityAt(f *testing.F) {
	f.Add([]byte{0, 16, 64, 1, 200}, 1.0, 1.0)
	f.Add([]byte{5, 0, 64, 16, 64, 0, 64, 16, 64, 255, 255, 0, 0, 128, 128, 1, 1}, 1.5, 1e-20)
	f.Add([]byte{15, 1, 60, 2, 61, 3, 62, 4, 63, 1, 60, 2, 61, 3, 62, 4, 63,
		0, 0, 255, 255, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}, -3.0, 1e300)
	f.Fuzz(func(t *testing.T, data []byte, cpus, mem float64) {
		s, ok := fuzzGrid(data)
		if !ok {
			return
		}
		// NaN and infinite coordinates are clamped too; check them all.
		if v := s.At(cpus, mem); math.IsNaN(v) || v < 0 {
			t.Errorf("%+v: At(%v, %v) = %v", s, cpus, mem, v)
		}
		p := s.Clip(cpus, mem)
		if math.IsNaN(p.Speedup) || p.Speedup < 0 {
			t.Errorf("%+v: Clip(%v, %v) = %+v", s, cpus, mem, p)
		}
	})
}
