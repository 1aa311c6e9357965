package bayes

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The worked example of the Shockwave model: job 0 of the 120-job trace, a
// 23-epoch LM job under GNS with regimes bs = 10, 20, 40.
var (
	exampleSeconds  = []float64{62.87473190072079, 43.84382645076212, 31.86233034465319}
	exampleRuns     = [][2]int{{10, 11}, {20, 10}, {40, 1}, {10, 1}} // [batch size, epochs]
	exampleRegimes  = []int{10, 20, 40}
	exampleEpochs   = 23
	exampleExpected = map[int]float64{0: 1016, 4: 817, 8: 604, 12: 397, 16: 235, 20: 93, 22: 33}
)

// exampleJob returns the job after p completed epochs, counting the batch
// sizes of epochs 0..last (inclusive).
func exampleJob(p, last int) Job {
	var bs []int
	for _, run := range exampleRuns {
		for range run[1] {
			bs = append(bs, run[0])
		}
	}
	obs := make([]int, len(exampleRegimes))
	for e := 0; e <= last && e < len(bs); e++ {
		for b, r := range exampleRegimes {
			if bs[e] == r {
				obs[b]++
			}
		}
	}
	return Job{Epochs: exampleEpochs, Done: p, Observed: obs, EpochSeconds: exampleSeconds}
}

func TestRemainingWorkedExample(t *testing.T) {
	for p, want := range exampleExpected {
		got, err := exampleJob(p, p).Remaining() // epochs 0..p: p done + the running one
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1 {
			t.Errorf("p = %d: R̂ = %.3f, want %v ± 1", p, got, want)
		}
	}
}

func TestRemainingCompletedOnly(t *testing.T) {
	// Counting only the p completed epochs (0..p−1) is a different model and
	// misses the table:
	//
	// p = 0, n = (0,0,0): r_b = 23/3 = R_b, Σ R_b + 1 = 24 = Ê,
	//   R̂ = 23/3·(62.8747+43.8438+31.8623)·23/24 = 1062.45·23/24 ≈ 1018.18 (table 1016).
	// p = 4, n = (4,0,0): Σα' = 27, r = (805/81, 529/81, 529/81),
	//   R = (481/81, 529/81, 529/81), Σ R_b + 1 = 20 = Ê,
	//   R̂ = (5.9383·62.8747 + 6.5309·75.7062)·19/20 ≈ 824.40 (table 817).
	for _, tc := range []struct {
		p    int
		want float64
	}{{0, 1018.1845850035556}, {4, 824.4041708588929}} {
		got, err := exampleJob(tc.p, tc.p-1).Remaining()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("p = %d, completed epochs only: R̂ = %.10g, want %.10g", tc.p, got, tc.want)
		}
		if math.Abs(got-exampleExpected[tc.p]) <= 1 {
			t.Errorf("p = %d, completed epochs only: R̂ = %.3f matches the table, but should not", tc.p, got)
		}
	}
}

func TestRemainingClamp(t *testing.T) {
	// Σ_b R_b ≥ Σ_b (r_b − n_b) = E − Σ n_b ≥ E − p − 1, so with valid counts
	// Σ R_b + 1 < E − p only through rounding, at the equality reached when
	// no count is capped by ⌊r_b⌋. At p = 6 of the worked example,
	// n = (7,0,0), Σα' = 30, r = (23·(23/3+7)/30, 23·(23/3)/30 ×2) =
	// (11.244…, 5.877…, 5.877…), none capped, so Σ R_b + 1 = 23 − 7 + 1 = 17 =
	// E − p exactly; in float64 it comes out as 16.999999999999996, whose
	// floor 16 would inflate R̂ by 17/16. The bound Ê ≥ E − p restores 17.
	j := exampleJob(6, 6)
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	rem, sum1, eHat := j.remaining()
	if !(sum1 < 17) {
		t.Fatalf("Σ R_b + 1 = %.17g, want just below 17 to exercise the bound", sum1)
	}
	if eHat != 17 {
		t.Errorf("Ê = %v, want 17", eHat)
	}
	// R̂ = (R_0·d̄_0 + R_1·(d̄_1+d̄_2)) · 17/17 with R_0 = 23·(44/3)/30 − 7 = 1012/90 − 7,
	// R_1 = R_2 = 529/90.
	want := (1012.0/90-7)*exampleSeconds[0] + 529.0/90*(exampleSeconds[1]+exampleSeconds[2])
	if math.Abs(rem-want) > 1e-9 {
		t.Errorf("R̂ = %.10g, want %.10g", rem, want)
	}
}

func TestRemainingDone(t *testing.T) {
	j := Job{Epochs: 23, Done: 23, Observed: []int{12, 10, 1}, EpochSeconds: exampleSeconds}
	got, err := j.Remaining()
	if err != nil || got != 0 {
		t.Errorf("finished job: R̂ = %v, %v; want 0, nil", got, err)
	}
}

func TestPosterior(t *testing.T) {
	j := exampleJob(4, 4)
	a := j.Posterior().Alpha
	want := []float64{23.0/3 + 5, 23.0 / 3, 23.0 / 3}
	for b := range want {
		if math.Abs(a[b]-want[b]) > 1e-12 {
			t.Errorf("α' = %v, want %v", a, want)
		}
	}
}

func TestEpochMean(t *testing.T) {
	// p = 12: epochs 0..12 are 11 × bs10 and 2 × bs20.
	j := exampleJob(12, 12)
	want := (11*exampleSeconds[0] + 2*exampleSeconds[1]) / 13
	if got := j.EpochMean(); math.Abs(got-want) > 1e-12 {
		t.Errorf("EpochMean = %v, want %v", got, want)
	}
	j.Observed = []int{0, 0, 0}
	want = (exampleSeconds[0] + exampleSeconds[1] + exampleSeconds[2]) / 3
	if got := j.EpochMean(); math.Abs(got-want) > 1e-12 {
		t.Errorf("EpochMean with nothing observed = %v, want the plain mean %v", got, want)
	}
	j.EpochSeconds = nil
	if got := j.EpochMean(); !math.IsNaN(got) {
		t.Errorf("EpochMean of an invalid job = %v, want NaN", got)
	}
}

func TestValidate(t *testing.T) {
	good := Job{Epochs: 10, Done: 3, Observed: []int{2, 2}, EpochSeconds: []float64{1, 2}}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid job: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Job)
		want string
	}{
		{"epochs", func(j *Job) { j.Epochs = 0 }, "epochs: 0"},
		{"done negative", func(j *Job) { j.Done = -1 }, "done: -1 is negative"},
		{"done too large", func(j *Job) { j.Done = 11 }, "done: 11 exceeds epochs 10"},
		{"no regimes", func(j *Job) { j.Observed, j.EpochSeconds = nil, nil }, "observed: no regimes"},
		{"lengths", func(j *Job) { j.EpochSeconds = []float64{1} }, "observed has 2 regimes, epoch_seconds has 1"},
		{"negative count", func(j *Job) { j.Observed = []int{5, -1} }, "observed[1]: -1 is negative"},
		{"too many seen", func(j *Job) { j.Observed = []int{3, 2} }, "observed: sum exceeds 4"},
		{"more than epochs", func(j *Job) { j.Done, j.Observed = 10, []int{10, 1} }, "observed: sum exceeds 10"},
		{"NaN", func(j *Job) { j.EpochSeconds = []float64{1, math.NaN()} }, "epoch_seconds[1]: NaN is not a finite positive number"},
		{"Inf", func(j *Job) { j.EpochSeconds = []float64{math.Inf(1), 1} }, "epoch_seconds[0]: +Inf is not"},
		{"zero", func(j *Job) { j.EpochSeconds = []float64{1, 0} }, "epoch_seconds[1]: 0 is not"},
	} {
		j := good
		j.Observed = append([]int(nil), good.Observed...)
		tc.edit(&j)
		err := j.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one wrapping ErrInvalid containing %q", tc.name, err, tc.want)
		}
		if _, err2 := j.Remaining(); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: Remaining err = %v, want %v", tc.name, err2, err)
		}
	}
}

func FuzzRemaining(f *testing.F) {
	f.Add(23, 4, 5, 0, 0, 62.87, 43.84, 31.86)
	f.Add(1, 0, 1, 0, 0, 1.0, 1.0, 1.0)
	f.Add(1000000, 999999, 300000, 300000, 400000, 1e-300, 1e300, 5.0)
	// Found by fuzzing: Σ R_b·d̄_b overflowed to +Inf although R̂ ≈ 2.6e304.
	f.Add(1000035, 999946, 299887, 300000, 400000, 2.040816326530612e-303, 3e302, 5.0)
	f.Fuzz(func(t *testing.T, e, p, n0, n1, n2 int, d0, d1, d2 float64) {
		j := Job{Epochs: e, Done: p, Observed: []int{n0, n1, n2}, EpochSeconds: []float64{d0, d1, d2}}
		got, err := j.Remaining()
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if math.IsNaN(got) || got < 0 {
			t.Fatalf("%+v: R̂ = %v", j, got)
		}
		// R̂ never exceeds the slowest regime's price for all E − p epochs:
		// the estimate is Σ R_b·d̄_b·(E−p)/Ê with Σ R_b < Ê.
		slow := max(d0, d1, d2) * float64(e-p)
		if got > slow*(1+1e-12) {
			t.Fatalf("%+v: R̂ = %v above (E−p)·max d̄ = %v", j, got, slow)
		}
		if m := j.EpochMean(); math.IsNaN(m) || m <= 0 {
			t.Fatalf("%+v: EpochMean = %v", j, m)
		}
	})
}
