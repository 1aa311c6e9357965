package workload

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// Mixed generates the mixed workload: jobs drawn from the model catalogue,
// each carrying every fact of every system (per-type throughput, elastic
// goodput, batch-size regimes, CPU and memory sensitivity, tensor skew),
// with Philly's GPU counts and durations and Poisson arrivals. See the
// package doc, "The mixed workload". The zero value needs Jobs.
type Mixed struct {
	Seed uint64
	// Jobs is the number of jobs.
	Jobs int
	// Rate is the mean arrival rate in jobs per hour; zero means all jobs
	// arrive at time zero.
	Rate float64
	// Burst is the relative amplitude of a diurnal cycle of the arrival
	// rate, rate·(1 + Burst·sin(2πt/24 h)), in [0, 1]; zero means none.
	Burst float64
	// Tenants is the number of tenants jobs are spread over uniformly,
	// named t0, t1, …; zero means 4.
	Tenants int
	// Priority is the fraction of jobs with weight 5 (the rest weigh 1).
	Priority float64
	// Scale multiplies every duration drawn; zero means 1. Philly's jobs
	// run for hours to weeks; a smaller scale keeps their shape and makes
	// a comparison quick.
	Scale float64
	// Reference is the type on which drawn durations hold; empty means
	// "v100".
	Reference allocation.Accelerator
	// Facts, if not zero, keeps only these facts in the jobs, and only the
	// physics behind them: a system's own view of the workload. Without
	// FactAdaptive jobs keep their initial batch; without FactElastic,
	// FactResources, FactSkew, FactWeight or FactTenant the job carries no
	// such fact; without FactHeterogeneity it runs on the reference type
	// only. Length stays (the simulator needs it), and so do locality and
	// co-location, which are physics; the co-located throughputs reach a
	// policy through Physics.Inform, which a simulation plugs in for views
	// that keep FactColocation.
	Facts policy.Facts
}

// Generate returns the jobs in arrival order and their true physics.
func (g Mixed) Generate() ([]policy.Job, *Physics, error) {
	if err := g.check(); err != nil {
		return nil, nil, err
	}
	r := rand.New(rand.NewPCG(g.Seed, 0x6d69786564))
	prof := DefaultProfile()
	syn := SynergyModels()
	jobs := make([]policy.Job, g.Jobs)
	phys := &Physics{Jobs: make(map[string]*Truth, g.Jobs)}
	var now float64
	for i := range jobs {
		now = g.nextArrival(r, now)
		j, t, err := g.draw(r, i, prof, syn)
		if err != nil {
			return nil, nil, err
		}
		j.Arrival = workloadSeconds(now)
		if g.Facts != 0 {
			restrict(&j, t, g.Facts, cmp.Or(g.Reference, "v100"))
		}
		jobs[i] = j
		phys.Jobs[j.ID] = t
	}
	return jobs, phys, nil
}

// check validates the generator's settings.
func (g Mixed) check() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%w: mixed: %s: %v; want %s", policy.ErrInvalidConfig, field, v, want)
	}
	switch {
	case g.Jobs <= 0 || g.Jobs > 1_000_000:
		return bad("jobs", g.Jobs, "1 to 1,000,000")
	case !(g.Rate >= 0 && g.Rate <= 1e6):
		return bad("rate", g.Rate, "0 to 10⁶ jobs per hour")
	case !(g.Burst >= 0 && g.Burst <= 1):
		return bad("burst", g.Burst, "0 to 1")
	case g.Tenants < 0 || g.Tenants > 10_000:
		return bad("tenants", g.Tenants, "0 to 10,000")
	case !(g.Priority >= 0 && g.Priority <= 1):
		return bad("priority", g.Priority, "a fraction in [0, 1]")
	case !(g.Scale >= 0 && g.Scale <= 1e3):
		return bad("scale", g.Scale, "0 to 1000")
	}
	if ref := cmp.Or(g.Reference, "v100"); !isProfiled(ref) {
		return bad("reference", ref, "v100, p100 or k80")
	}
	return nil
}

func isProfiled(t allocation.Accelerator) bool { return t == "v100" || t == "p100" || t == "k80" }

// nextArrival draws the next arrival after now, in seconds: a Poisson
// process of Rate per hour, thinned to the diurnal cycle when Burst is set.
func (g Mixed) nextArrival(r *rand.Rand, now float64) float64 {
	if g.Rate == 0 {
		return 0
	}
	peak := g.Rate * (1 + g.Burst) / 3600
	for {
		now += -math.Log(1-r.Float64()) / peak
		cycle := 1 + g.Burst*math.Sin(2*math.Pi*now/86400)
		if r.Float64()*(1+g.Burst) <= cycle {
			return now
		}
	}
}

// errNoTemplate reports a GPU count no catalogue template runs at.
var errNoTemplate = errors.New("mixed: no template of the catalogue runs at")

// draw returns job i and its truth.
func (g Mixed) draw(r *rand.Rand, i int, prof Profile, syn map[string]SynergyModel) (policy.Job, *Truth, error) {
	gpus, class := drawPhillyGPUs(r)
	ref := cmp.Or(g.Reference, "v100")
	m, batch, ok := g.drawTemplate(r, gpus, prof, ref)
	if !ok {
		return policy.Job{}, nil, fmt.Errorf("%w: %d GPUs on %s", errNoTemplate, gpus, ref)
	}
	template := fmt.Sprintf("%s (batch size %d)", m.Name, batch)
	t := &Truth{Model: m.Name, GPUs: gpus, Batch: batch, Perf: m.Perf, LocalMax: adaptModels[m.Name].maxBS,
		NoiseStart: m.NoiseStart * float64(gpus*batch), NoiseEnd: m.NoiseEnd * float64(gpus*batch),
		Spread: m.Spread, Base: make(map[allocation.Accelerator]float64, 3), Colocation: colocationOf(m.Name)}
	for _, typ := range []allocation.Accelerator{"v100", "p100", "k80"} {
		if x := prof.Throughput(template, typ, gpus); x > 0 {
			t.Base[typ] = x * float64(gpus*batch) // steps/s → examples/s
		}
	}
	secs := drawPhillyDuration(r, class) * cmp.Or(g.Scale, 1)
	samples := float64(adaptModels[m.Name].samples)
	epochs := min(max(1, int(math.Round(secs*t.Base[ref]/samples))), adaptMaxEpochs)
	mode := []Mode{GNS, Accordion}[r.IntN(2)]
	stages, err := Stages(m.Name, mode, batch, gpus, epochs)
	if err != nil {
		return policy.Job{}, nil, err
	}
	t.Epochs, t.Stages = epochs, stages
	j := policy.Job{
		ID: fmt.Sprintf("job-%05d", i), Tenant: fmt.Sprintf("t%d", r.IntN(cmp.Or(g.Tenants, 4))),
		GPUs: gpus, Throughput: maps.Clone(t.Base), StepsTotal: float64(epochs) * samples, Skew: m.Skew,
	}
	if r.Float64() < g.Priority {
		j.Weight = 5
	}
	j.Elastic = elasticFacts(m, t)
	if j.Adaptive, err = adaptiveFacts(m, t, mode, samples, t.Base[ref]); err != nil {
		return policy.Job{}, nil, err
	}
	sens := syn[m.Synergy].Sensitivity
	j.Sensitivity = cloneSensitivity(sens)
	return j, t, nil
}

// drawTemplate draws a catalogue model uniformly among those that may run
// on gpus GPUs, then one of its batch sizes uniformly among those Gavel
// measured on the reference type at that count.
func (g Mixed) drawTemplate(r *rand.Rand, gpus int, prof Profile, ref allocation.Accelerator) (Model, int, bool) {
	for range 1000 {
		m := catalogue[r.IntN(len(catalogue))]
		if gpus > 1 && !m.Distributed {
			continue
		}
		b := m.Batches[r.IntN(len(m.Batches))]
		if prof.Throughput(fmt.Sprintf("%s (batch size %d)", m.Name, b), ref, gpus) > 0 {
			return m, b, true
		}
	}
	return Model{}, 0, false
}

// drawPhillyGPUs draws a GPU count from Philly's distribution and returns
// it with its class, the index into phillyDurations.
func drawPhillyGPUs(r *rand.Rand) (gpus, class int) {
	u := r.Float64()
	for i, c := range phillyGPUs {
		if u < c.share || i == len(phillyGPUs)-1 {
			return c.gpus, i
		}
		u -= c.share
	}
	return 1, 0
}

// drawPhillyDuration draws a duration in seconds from class's quantiles,
// interpolating log-linearly between them.
func drawPhillyDuration(r *rand.Rand, class int) float64 {
	u := r.Float64()
	q := phillyDurations[class]
	for k := 1; k < len(phillyQuantiles); k++ {
		if u <= phillyQuantiles[k] {
			f := (u - phillyQuantiles[k-1]) / (phillyQuantiles[k] - phillyQuantiles[k-1])
			return q[k-1] * math.Pow(q[k]/q[k-1], f)
		}
	}
	return q[len(q)-1]
}

// colocationOf returns model's speed factor beside each catalogue model.
func colocationOf(model string) map[string]float64 {
	i := modelIndex(model)
	out := make(map[string]float64, len(catalogue))
	for k, m := range catalogue {
		out[m.Name] = colocation[i][k]
	}
	return out
}

// elasticFacts are what an elastic job reports at submission: its bounds,
// its fitted iteration-time model and its gradient statistics at the
// start, as profiled on its requested GPUs.
func elasticFacts(m Model, t *Truth) *policy.Elastic {
	m0 := t.m0()
	return &policy.Elastic{
		MinGPUs: 1, MaxGPUs: max(8, 2*t.GPUs),
		BatchSize: m0, MaxBatchSize: m.MaxBatchRatio * m0,
		LocalBatchMax: t.LocalMax,
		Perf:          t.Perf,
		GradSqr:       1, GradVar: t.NoiseStart / float64(m0),
		ProfiledGPUs: t.GPUs,
	}
}

// adaptiveFacts are what an adaptive job reports at submission: its
// regimes (the batch sizes its rule may give it) and an epoch's time in
// each on its requested GPUs of the reference type, at the noise scale of
// the start.
func adaptiveFacts(m Model, t *Truth, mode Mode, epoch, base float64) (*policy.Adaptive, error) {
	regimes, err := Regimes(m.Name, mode, t.Batch, t.GPUs)
	if err != nil {
		return nil, err
	}
	a := &policy.Adaptive{Regimes: regimes, Epochs: t.Epochs, History: make([]int, len(regimes)), BatchSize: t.perGPU(0)}
	for _, b := range regimes {
		a.EpochSeconds = append(a.EpochSeconds, epoch/(base*t.scaling(t.GPUs, t.GPUs*b, t.GPUs*b, t.NoiseStart)))
	}
	return a, nil
}

// restrict strips job j and its truth t down to the facts in keep.
func restrict(j *policy.Job, t *Truth, keep policy.Facts, ref allocation.Accelerator) {
	drop := func(f policy.Facts) bool { return keep&f == 0 }
	if drop(policy.FactAdaptive) {
		j.Adaptive, t.Stages = nil, nil
	}
	if drop(policy.FactElastic) {
		j.Elastic = nil
	} else if drop(policy.FactBatch) {
		j.Elastic.MaxBatchSize = j.Elastic.BatchSize
	}
	if drop(policy.FactResources) {
		j.Sensitivity = nil
	}
	if drop(policy.FactSkew) {
		j.Skew = 0
	}
	if drop(policy.FactWeight) {
		j.Weight = 0
	}
	if drop(policy.FactTenant) {
		j.Tenant = ""
	}
	if drop(policy.FactHeterogeneity) {
		t.Base = map[allocation.Accelerator]float64{ref: t.Base[ref]}
		j.Throughput = maps.Clone(t.Base)
	}
}
