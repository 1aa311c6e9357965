package throughput

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// handProfile: 100 GB read from storage at 512 MB/s takes 200 s; with all
// of it cached an epoch takes 400, 200 and 100 s at 1, 2 and 4 cores per
// GPU, which read the cache at 1, 2 and 4 GB/s.
func handProfile() Profile {
	return Profile{
		CPUs:         []float64{1, 2, 4},
		EpochSeconds: []float64{400, 200, 100},
		CacheGBps:    []float64{1, 2, 4},
		DatasetGB:    100,
		DiskMBps:     512,
	}
}

func TestProfileEpochTime(t *testing.T) {
	p := handProfile()
	two := handProfile()
	two.GPUs = 2
	empty := handProfile()
	empty.DatasetGB = 0
	tests := []struct {
		name  string
		p     Profile
		i     int
		memGB float64
		want  float64
	}{
		// All cached: I/O 100/1 = 100 s < 400 s of compute.
		{"CPU-bound", p, 0, 100, 400},
		// 25 GB cached: 25/1 + 75·1024/512 = 175 s < 400 s.
		{"CPU-bound, partly cached", p, 0, 25, 400},
		// 10 GB cached at 4 cores: 10/4 + 90·2 = 182.5 s > 100 s.
		{"disk-bound", p, 2, 10, 182.5},
		// 50 GB cached at 4 cores: 50/4 + 50·2 = 112.5 s > 100 s.
		{"partially cached", p, 2, 50, 112.5},
		// 75 GB: 75/4 + 25·2 = 68.75 s < 100 s: caching 75 % suffices.
		{"enough cached", p, 2, 75, 100},
		// More memory than data: all of it cached, 100/2 = 50 s < 200 s.
		{"more memory than data", p, 1, 1000, 200},
		// No cache: 100·2 = 200 s > 100 s; negative memory counts as none.
		{"no cache", p, 2, 0, 200},
		{"negative memory", p, 2, -3, 200},
		// Two GPUs with 25 GB each cache 50 GB: as 50 GB above.
		{"two GPUs", two, 2, 25, 112.5},
		// Nothing to read: the cached epoch time.
		{"no data", empty, 1, 0, 200},
	}
	for _, tt := range tests {
		if got := tt.p.EpochTime(tt.i, tt.memGB); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: EpochTime(%d, %v) = %v, want %v", tt.name, tt.i, tt.memGB, got, tt.want)
		}
	}
}

func TestProfileSensitivity(t *testing.T) {
	p := handProfile()
	mem := []float64{25, 50, 100}
	// Epoch times (EpochTime above): 1 core 400, 400, 400; 2 cores
	// 200, 200, 200; 4 cores 156.25 (25/4 + 75·2), 112.5, 100.
	tests := []struct {
		name              string
		refCPUs, refMemGB float64
		want              [][]float64
	}{
		// Reference on the grid, 1/200: speedup = 200/epoch.
		{"grid reference", 2, 50, [][]float64{
			{0.5, 0.5, 0.5},
			{1, 1, 1},
			{1.28, 200 / 112.5, 2},
		}},
		// Reference between the 2- and 4-core rows at 50 GB:
		// (1/200 + 1/112.5)/2 = 1/144, so speedup = 144/epoch.
		{"interpolated reference", 3, 50, [][]float64{
			{0.36, 0.36, 0.36},
			{0.72, 0.72, 0.72},
			{0.9216, 1.28, 1.44},
		}},
	}
	for _, tt := range tests {
		s, err := p.Sensitivity(mem, tt.refCPUs, tt.refMemGB)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: result invalid: %v", tt.name, err)
		}
		if !slices.Equal(s.CPUs, p.CPUs) || !slices.Equal(s.MemoryGB, mem) {
			t.Errorf("%s: axes %v × %v, want %v × %v", tt.name, s.CPUs, s.MemoryGB, p.CPUs, mem)
		}
		for i := range tt.want {
			for m := range tt.want[i] {
				if got := s.Speedup[i][m]; math.Abs(got-tt.want[i][m]) > 1e-12 {
					t.Errorf("%s: speedup[%d][%d] = %v, want %v", tt.name, i, m, got, tt.want[i][m])
				}
			}
		}
		if got := s.At(tt.refCPUs, tt.refMemGB); math.Abs(got-1) > 1e-12 {
			t.Errorf("%s: At(reference) = %v, want 1", tt.name, got)
		}
	}
	// The result owns its axes.
	s, _ := p.Sensitivity(mem, 2, 50)
	s.CPUs[0], s.MemoryGB[0] = 99, 99
	if p.CPUs[0] != 1 || mem[0] != 25 {
		t.Errorf("Sensitivity shares its axes with its inputs")
	}
	if got, want := s.Ideal(), (Point{CPUs: 4, MemoryGB: 100, Speedup: 2}); got != want {
		t.Errorf("Ideal() = %+v, want %+v", got, want)
	}
}

func TestProfileErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	mem := []float64{25, 50, 100}
	tests := []struct {
		name   string
		edit   func(*Profile)
		mem    []float64
		ref    [2]float64
		prefix string
	}{
		{"negative GPUs", func(p *Profile) { p.GPUs = -1 }, mem, [2]float64{2, 50}, "gpus: "},
		{"no CPUs", func(p *Profile) { p.CPUs = nil }, mem, [2]float64{2, 50}, "cpus: empty"},
		{"zero CPUs", func(p *Profile) { p.CPUs[0] = 0 }, mem, [2]float64{2, 50}, "cpus: values must be"},
		{"NaN CPUs", func(p *Profile) { p.CPUs[2] = nan }, mem, [2]float64{2, 50}, "cpus: values must be"},
		{"descending CPUs", func(p *Profile) { p.CPUs[1] = 8 }, mem, [2]float64{2, 50}, "cpus: values must be"},
		{"short epoch times", func(p *Profile) { p.EpochSeconds = p.EpochSeconds[:2] }, mem, [2]float64{2, 50}, "epoch_seconds: 2 values for 3 CPU values"},
		{"zero epoch time", func(p *Profile) { p.EpochSeconds[1] = 0 }, mem, [2]float64{2, 50}, "epoch_seconds[1]: "},
		{"Inf epoch time", func(p *Profile) { p.EpochSeconds[0] = inf }, mem, [2]float64{2, 50}, "epoch_seconds[0]: "},
		{"long cache rates", func(p *Profile) { p.CacheGBps = append(p.CacheGBps, 8) }, mem, [2]float64{2, 50}, "cache_gbps: 4 values for 3 CPU values"},
		{"NaN cache rate", func(p *Profile) { p.CacheGBps[2] = nan }, mem, [2]float64{2, 50}, "cache_gbps[2]: "},
		{"negative cache rate", func(p *Profile) { p.CacheGBps[0] = -1 }, mem, [2]float64{2, 50}, "cache_gbps[0]: "},
		{"negative dataset", func(p *Profile) { p.DatasetGB = -1 }, mem, [2]float64{2, 50}, "dataset_gb: "},
		{"Inf dataset", func(p *Profile) { p.DatasetGB = inf }, mem, [2]float64{2, 50}, "dataset_gb: "},
		{"zero disk", func(p *Profile) { p.DiskMBps = 0 }, mem, [2]float64{2, 50}, "disk_mbps: "},
		{"NaN disk", func(p *Profile) { p.DiskMBps = nan }, mem, [2]float64{2, 50}, "disk_mbps: "},
		{"no memory", func(p *Profile) {}, nil, [2]float64{2, 50}, "memory_gb: empty"},
		{"zero memory", func(p *Profile) {}, []float64{0, 50}, [2]float64{2, 50}, "memory_gb: values must be"},
		{"unsorted memory", func(p *Profile) {}, []float64{50, 25}, [2]float64{2, 50}, "memory_gb: values must be"},
		{"NaN reference", func(p *Profile) {}, mem, [2]float64{nan, 50}, "reference: "},
		{"Inf reference", func(p *Profile) {}, mem, [2]float64{2, inf}, "reference: "},
		// Epoch times overflow to +Inf, throughputs to 0.
		{"zero reference throughput", func(p *Profile) { p.DatasetGB, p.DiskMBps = 1e308, 1e-300 }, mem, [2]float64{2, 50}, "reference: throughput 0"},
	}
	for _, tt := range tests {
		p := handProfile()
		tt.edit(&p)
		_, err := p.Sensitivity(tt.mem, tt.ref[0], tt.ref[1])
		if err == nil {
			t.Errorf("%s: Sensitivity = nil error, want one starting %q", tt.name, tt.prefix)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.prefix) {
			t.Errorf("%s: Sensitivity error %q, want it to start %q", tt.name, err, tt.prefix)
		}
	}
	if err := handProfile().Validate(); err != nil {
		t.Errorf("handProfile: %v", err)
	}
}

func TestSweep(t *testing.T) {
	// time = max(10, 240/cores), 24 cores, 1 GPU:
	//   24 → 10 s      first point: halve
	//   12 → 20 s      +100 % of 10: one fewer
	//   11 → 21.82 s   +9.1 % of 20: halve (11/2 = 5)
	//    5 → 48 s      +120 %: one fewer
	//    4 → 60 s      +25 %
	//    3 → 80 s      +33 %
	//    2 → 120 s     +50 %
	//    1 → 240 s     +100 %: 0 cores, stop.
	var calls []int
	measure := func(c int) (float64, error) {
		calls = append(calls, c)
		return max(10, 240/float64(c)), nil
	}
	cpus, secs, err := Sweep(24, 1, measure)
	if err != nil {
		t.Fatal(err)
	}
	wantCPUs := []int{1, 2, 3, 4, 5, 11, 12, 24}
	wantSecs := []float64{240, 120, 80, 60, 48, 240.0 / 11, 20, 10}
	if !slices.Equal(cpus, wantCPUs) || !slices.Equal(secs, wantSecs) {
		t.Errorf("Sweep = %v, %v; want %v, %v", cpus, secs, wantCPUs, wantSecs)
	}
	if want := []int{24, 12, 11, 5, 4, 3, 2, 1}; !slices.Equal(calls, want) {
		t.Errorf("measured %v, want %v in that order", calls, want)
	}

	// A flat profile on 4 GPUs halves all the way: 24, 12, 6, 3, 1.
	flat := func(int) (float64, error) { return 10, nil }
	if cpus, _, err := Sweep(24, 4, flat); err != nil || !slices.Equal(cpus, []int{1, 3, 6, 12, 24}) {
		t.Errorf("flat Sweep = %v, %v; want [1 3 6 12 24]", cpus, err)
	}

	// Exactly 10 % slower counts as within 10 %: 8 → 100, 4 → 110
	// (halve), 2 → 130 (+18 %: one fewer), 1 → 131 (halve to 0).
	edge := map[int]float64{8: 100, 4: 110, 2: 130, 1: 131}
	cpus, secs, err = Sweep(8, 1, func(c int) (float64, error) { return edge[c], nil })
	if err != nil || !slices.Equal(cpus, []int{1, 2, 4, 8}) || !slices.Equal(secs, []float64{131, 130, 110, 100}) {
		t.Errorf("10 %% edge: Sweep = %v, %v, %v; want [1 2 4 8] [131 130 110 100]", cpus, secs, err)
	}

	// One core: one point.
	if cpus, secs, err := Sweep(1, 1, flat); err != nil || !slices.Equal(cpus, []int{1}) || !slices.Equal(secs, []float64{10}) {
		t.Errorf("Sweep(1, 1) = %v, %v, %v; want [1] [10]", cpus, secs, err)
	}
	// Fewer cores than GPUs after the first step: 3 → 1 (halved), then
	// 1 − 8 < 1: stop.
	if cpus, _, err := Sweep(3, 8, func(c int) (float64, error) { return float64(100 / c), nil }); err != nil || !slices.Equal(cpus, []int{1, 3}) {
		t.Errorf("Sweep(3, 8) = %v, %v; want [1 3]", cpus, err)
	}
}

func TestSweepErrors(t *testing.T) {
	flat := func(int) (float64, error) { return 10, nil }
	for _, tt := range []struct {
		name      string
		max, gpus int
		measure   func(int) (float64, error)
		prefix    string
	}{
		{"no cores", 0, 1, flat, "max_cpus: "},
		{"no GPUs", 8, 0, flat, "gpus: "},
		{"negative GPUs", 8, -2, flat, "gpus: "},
		{"nil measure", 8, 1, nil, "measure: nil"},
		{"NaN time", 8, 1, func(c int) (float64, error) {
			if c < 8 {
				return math.NaN(), nil
			}
			return 1, nil
		}, "measure(4 cores): epoch time NaN"},
		{"zero time", 8, 1, func(int) (float64, error) { return 0, nil }, "measure(8 cores): epoch time 0"},
	} {
		cpus, secs, err := Sweep(tt.max, tt.gpus, tt.measure)
		if err == nil || !strings.HasPrefix(err.Error(), tt.prefix) {
			t.Errorf("%s: error %v, want one starting %q", tt.name, err, tt.prefix)
		}
		if cpus != nil || secs != nil {
			t.Errorf("%s: results %v, %v with an error", tt.name, cpus, secs)
		}
	}

	// A measurement error stops the sweep and is wrapped.
	boom := errors.New("out of memory")
	var calls []int
	_, _, err := Sweep(16, 2, func(c int) (float64, error) {
		calls = append(calls, c)
		if c == 4 {
			return 0, boom
		}
		return 160 / float64(c), nil
	})
	// 16 → 10 s (halve), 8 → 20 s (+100 %: 8−2 = 6), 6 → 26.7 s
	// (+33 %: 4), 4 fails.
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "measure(4 cores): ") {
		t.Errorf("error %v, want %q wrapped with the core count", err, boom)
	}
	if want := []int{16, 8, 6, 4}; !slices.Equal(calls, want) {
		t.Errorf("measured %v, want %v and then stop", calls, want)
	}
}
