package workload

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/baseline"
	"github.com/dlsched/dlsched/policy/gandiva"
	"github.com/dlsched/dlsched/sim"
)

// Gandiva's headlines (Xiao et al., OSDI'18) on the mixed workload's 1-GPU
// jobs (Philly's durations at a tenth, v100 only, no elastic facts, so no
// grow-shrink), 200 of them arriving at 30 an hour of the mixed stream
// (≈ 23 1-GPU jobs an hour, 3.6× what 16 GPUs serve), on 4 servers of 4
// V100s, event-driven, suspend/resume free (Gandiva suspends at the memory
// trough of a mini-batch), seeds 0–4.
//
// Utilization is isolated-equivalent work per GPU-second: each job's wall
// time worked times its co-location factor (its speed beside its partner
// over its speed alone on the same GPUs; 1 alone) times its GPUs, summed
// over the rounds that start with the jobs present requesting more GPUs
// than the cluster has, over those rounds' GPU-seconds (each run's own
// contention period). sim's Summary.Utilization counts busy GPUs, so a
// packed GPU counts once and packing cannot show there. The gain is
// gandiva's utilization over gandiva {"no_packing": true}'s, minus 1.
//
// Introspection reads Job.Colocated, which the mixed workload does not
// carry; introspect supplies the truth for the pairs on trial. Two
// co-location physics are measured:
//
//   - the mixed workload's own: a factor per model pair, the median of
//     Gavel's packed/isolated throughputs over batch sizes and types. Its
//     norm_sums are 1.00–1.43, 1.17 for a random pair, so introspection
//     never reverts a pair and packing every GPU of a fully busy cluster
//     with random pairs would gain 17 %. Measured: +7.7 % (+1.9 to +13.1 %
//     per seed); the test asserts a mean gain of +2 to +15 %: packing
//     helps, but this physics keeps it below the paper's band.
//   - Gavel's v100 measurements per batch size (../shared/data/gandiva),
//     a job's factor beside each partner template: norm_sums 0–2, 26 % of
//     pairs below 1 (reverted by introspection), the others 1.50 on
//     average. Measured: +26.1 % (+17.1 to +36.1 % per seed), the paper's
//     +26 % (180 GPUs, a real workload); the test asserts +15 to +40 %,
//     about three standard errors of the 5-seed mean either side.
//
// Early feedback is the time from a job's arrival until it has done 60 s of
// isolated-equivalent work (a few hundred mini-batches), from the work
// recorded per round: a round's work ends at the round's end or the job's
// finish, time lost to a restart coming first. Measured, FIFO
// (baseline.fifo, no time-slicing) over gandiva: 123× in the mean (70–196×
// per seed) and 93× in the median (41–153×); over gandiva without packing,
// 96× in the mean (57–153×). Gandiva's jobs get a slice within a rotation
// of their set (87 s on average, FIFO's 11,000 s). The test asserts at
// least 10× (the paper's "order of magnitude" for hyper-parameter
// searches) for each, averaged over seeds.
func TestGandivaHeadline(t *testing.T) {
	if raceEnabled {
		t.Skip("simulates 5 seeds × 4 policies")
	}
	gandivaHeadline(t, gandivaSetup{servers: 4, jobs: 200, rate: 30}, 5)
}

// The same on the paper's 180 GPUs, with as many jobs per GPU and arrivals
// per GPU-hour (+20.8 % with Gavel's pairs, +5.9 % with the mixed
// workload's, 104× to early feedback; seed 0). It takes minutes: run it
// with DLSCHED_FULL_SCALE=1.
func TestGandivaHeadlineLarge(t *testing.T) {
	if testing.Short() || raceEnabled || os.Getenv("DLSCHED_FULL_SCALE") != "1" {
		t.Skip("full scale, 180 GPUs and 2250 jobs: set DLSCHED_FULL_SCALE=1")
	}
	gandivaHeadline(t, gandivaSetup{servers: 45, jobs: 2250, rate: 337.5}, 1)
}

func gandivaHeadline(t *testing.T, g gandivaSetup, seeds int) {
	measuredPairs := v100Pairs(t)
	var gain, gainV100, fbMean, fbMedian, fbAlone []float64
	for seed := range uint64(seeds) {
		pk := g.run(t, seed, "gandiva", "", nil)
		al := g.run(t, seed, "gandiva", `{"no_packing":true}`, nil)
		ff := g.run(t, seed, "baseline.fifo", "", nil)
		u, ua := pk.utilization(), al.utilization()
		gain = append(gain, u/ua-1)
		fp, fa, ff60 := pk.feedback(60), al.feedback(60), ff.feedback(60)
		fbMean, fbMedian = append(fbMean, mean(ff60)/mean(fp)), append(fbMedian, median(ff60)/median(fp))
		fbAlone = append(fbAlone, mean(ff60)/mean(fa))
		uv := 0.0
		if measuredPairs != nil {
			uv = g.run(t, seed, "gandiva", "", measuredPairs).utilization()
			gainV100 = append(gainV100, uv/ua-1)
		}
		t.Logf("seed %d: utilization alone %.3f, packed %.3f (%+.1f %%), v100 pairs %.3f (%+.1f %%); "+
			"to 60 s of work (mean, median): gandiva %.0f, %.0f s, no packing %.0f, %.0f s, FIFO %.0f, %.0f s",
			seed, ua, u, 100*(u/ua-1), uv, 100*(uv/ua-1), mean(fp), median(fp), mean(fa), median(fa), mean(ff60), median(ff60))
	}
	check := func(what string, v []float64, lo, hi float64) {
		m := mean(v)
		t.Logf("%s: mean %.3f, range %.3f–%.3f", what, m, slices.Min(v), slices.Max(v))
		if m < lo || m > hi {
			t.Errorf("%s: mean %.3f over seeds, want %.3f–%.3f", what, m, lo, hi)
		}
	}
	check("gain from packing, mixed physics", gain, 0.02, 0.15)
	if measuredPairs != nil {
		check("gain from packing, Gavel's v100 pairs", gainV100, 0.15, 0.40)
	}
	check("FIFO / gandiva, mean time to 60 s of work", fbMean, 10, 1e9)
	check("FIFO / gandiva, median time to 60 s of work", fbMedian, 10, 1e9)
	check("FIFO / gandiva without packing, mean time to 60 s of work", fbAlone, 10, 1e9)
}

// gandivaSetup is the cluster and workload of the Gandiva headline tests:
// 4-GPU V100 servers and the mixed workload's 1-GPU jobs.
type gandivaSetup struct {
	servers, jobs int
	rate          float64 // jobs per hour of the mixed stream, of which ~76 % are 1-GPU jobs
}

// run simulates the setup's workload of seed under policy name (config for
// gandiva, which gets introspection), with co-location factors from pairs
// (packed/isolated by template) if given, recording every job's work.
func (g gandivaSetup) run(t *testing.T, seed uint64, name, config string, pairs map[string]map[string]float64) *measured {
	t.Helper()
	jobs, phys, err := Mixed{Seed: seed, Jobs: 2 * g.jobs, Rate: g.rate, Scale: 0.1, Facts: policy.FactLength}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	jobs = slices.DeleteFunc(jobs, func(j policy.Job) bool { return j.GPUs != 1 })[:g.jobs]
	for _, j := range jobs {
		if tr := phys.Jobs[j.ID]; pairs != nil {
			tr.Model = fmt.Sprintf("%s (batch size %d)", tr.Model, tr.Batch)
			if tr.Colocation = pairs[tr.Model]; tr.Colocation == nil {
				t.Fatalf("no v100 pairs of %s", tr.Model)
			}
		}
	}
	var cfg []byte
	if config != "" {
		cfg = []byte(config)
	}
	pol, err := policy.New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := pol.(*gandiva.Gandiva); ok {
		pol = introspect{p, phys}
	}
	var c allocation.Cluster
	for i := range g.servers {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("v100-%02d", i), Accelerator: "v100", GPUs: 4})
	}
	m := &measured{work: []float64{0}, jobs: map[string][]slice{}}
	s := &sim.Simulation{Cluster: c, Policy: pol, Events: true, Speed: phys.Speed, Exclusive: phys.Exclusive,
		Observe: m.observe(phys), Progress: func(int, int) { m.work = append(m.work, 0) }} // after every round
	start := time.Now()
	if m.res, err = s.Run(context.Background(), jobs); err != nil {
		t.Fatalf("%s seed %d: %v", name, seed, err)
	}
	if m.work = m.work[:len(m.work)-1]; len(m.work) != len(m.res.Rounds) {
		t.Fatalf("%d rounds of work for %d rounds", len(m.work), len(m.res.Rounds))
	}
	t.Logf("%s %s seed %d: %d rounds in %v", name, config, seed, len(m.res.Rounds), time.Since(start).Round(time.Millisecond))
	return m
}

// introspect gives Gandiva its introspection measurement: before each call,
// both jobs of every pair on trial report their true speed beside each
// other as Job.Colocated (their Throughput times their co-location factor),
// which Gandiva reads once the pair has run a quantum. Without it every
// pair of the mixed workload measures norm_sum 0 and is reverted.
type introspect struct {
	*gandiva.Gandiva
	phys *Physics
}

func (p introspect) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	at := make(map[string]int, len(s.Jobs))
	for i, j := range s.Jobs {
		at[j.ID] = i
	}
	jobs := slices.Clone(s.Jobs)
	for _, pr := range p.State.Pairs {
		a, okA := at[pr.Jobs[0]]
		b, okB := at[pr.Jobs[1]]
		if pr.Status != gandiva.Trial || !okA || !okB {
			continue
		}
		for _, ab := range [][2]int{{a, b}, {b, a}} {
			x, y := &jobs[ab[0]], jobs[ab[1]].ID
			f := p.phys.Jobs[x.ID].Colocation[p.phys.Jobs[y].Model]
			tp := make(map[allocation.Accelerator]float64, len(x.Throughput))
			for typ, v := range x.Throughput {
				tp[typ] = v * f
			}
			x.Colocated = map[string]map[allocation.Accelerator]float64{y: tp}
		}
	}
	return p.Gandiva.Allocate(ctx, &policy.Snapshot{Now: s.Now, Cluster: s.Cluster, Jobs: jobs})
}

// measured is one simulation with the work done in each round.
type measured struct {
	res  *sim.Result
	work []float64          // isolated-equivalent GPU-seconds done in each round
	jobs map[string][]slice // each job's work, in round order
}

// observe records a job's work in the round under way, then lets phys
// update what the job reports.
func (m *measured) observe(phys *Physics) func(*policy.Job, allocation.Grant, placement.Run, time.Duration) {
	return func(j *policy.Job, g allocation.Grant, run placement.Run, worked time.Duration) {
		f, other := 1.0, run.Partner
		if other == j.ID {
			other = run.Job
		}
		if other != "" {
			f = phys.Jobs[j.ID].Colocation[phys.Jobs[other].Model]
		}
		k := len(m.work) - 1
		m.work[k] += worked.Seconds() * f * float64(sumGPUs(run.Assignments))
		m.jobs[j.ID] = append(m.jobs[j.ID], slice{k, worked.Seconds(), f})
		phys.Observe(j, g, run, worked)
	}
}

// slice is a job's work in one round: wall seconds worked at factor times
// its speed alone.
type slice struct {
	round        int
	secs, factor float64
}

// utilization returns the isolated-equivalent GPU-seconds done per
// GPU-second over the rounds that start with the jobs present requesting
// more GPUs than the cluster has.
func (m *measured) utilization() float64 {
	type event struct {
		at   time.Duration
		gpus int
	}
	var evs []event
	for _, j := range m.res.Jobs {
		evs = append(evs, event{j.Arrival, j.GPUs})
		if j.Finished {
			evs = append(evs, event{j.Finish, -j.GPUs})
		}
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	var work, avail float64
	demand, i := 0, 0
	for k, r := range m.res.Rounds {
		for ; i < len(evs) && evs[i].at <= r.Start; i++ {
			demand += evs[i].gpus
		}
		if demand > r.GPUs {
			work += m.work[k]
			avail += float64(r.GPUs) * r.Length.Seconds()
		}
	}
	return work / avail
}

// feedback returns the seconds from each job's arrival until it has done n
// seconds of work as it would alone: a round's work ends at the round's
// end, or the job's finish, the time lost to a restart coming first.
func (m *measured) feedback(n float64) []float64 {
	var out []float64
	for _, rec := range m.res.Jobs {
		done := 0.0
		for _, s := range m.jobs[rec.ID] {
			r := m.res.Rounds[s.round]
			end := r.Start + r.Length
			if rec.Finished {
				end = min(end, rec.Finish)
			}
			if done += s.secs * s.factor; done >= n {
				out = append(out, (end-rec.Arrival).Seconds()-(done-n)/s.factor)
				break
			}
		}
	}
	return out
}

// v100Pairs returns Gavel's packed over isolated throughput of each 1-GPU
// template beside each other on a V100 (norm_a), or nil without the data.
func v100Pairs(t *testing.T) map[string]map[string]float64 {
	f, err := os.Open("../../shared/data/gandiva/gavel_packing_pairs_normalized.csv")
	if err != nil {
		t.Logf("no Gavel pair measurements: %v", err)
		return nil
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, r := range rows[1:] { // worker_type,job_a,scale_a,job_b,scale_b,…,norm_a (9),…
		if v, err := strconv.ParseFloat(r[9], 64); err == nil && r[0] == "v100" && r[2] == "1" && r[4] == "1" {
			if out[r[1]] == nil {
				out[r[1]] = map[string]float64{}
			}
			out[r[1]][r[3]] = v
		}
	}
	return out
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}
