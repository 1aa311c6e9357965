package workload

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// The GPU counts follow Philly's shares within 1 point over 20,000 jobs.
func TestMixedGPUShares(t *testing.T) {
	jobs, _, err := Mixed{Seed: 1, Jobs: 20000, Rate: 10, Scale: 0.01}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, j := range jobs {
		count[j.GPUs]++
	}
	for _, c := range phillyGPUs {
		got := float64(count[c.gpus]) / float64(len(jobs))
		if math.Abs(got-c.share) > 0.01 {
			t.Errorf("%d GPUs: share %.4f, Philly's %.4f", c.gpus, got, c.share)
		}
	}
}

// Durations follow Philly's distribution per GPU count: over 20,000 draws
// of each class the quantiles up to the 80th land within 5 % of the
// trace's, and the mean within 10 % of its mean.
func TestMixedDurations(t *testing.T) {
	for class := range phillyDurations {
		r := newTestRand(uint64(class))
		d := make([]float64, 20000)
		for i := range d {
			d[i] = drawPhillyDuration(r, class)
		}
		slices.Sort(d)
		for k, p := range phillyQuantiles {
			if p == 0 || p > 0.8 {
				continue
			}
			got, want := d[int(p*float64(len(d)))], phillyDurations[class][k]
			if math.Abs(got/want-1) > 0.05 {
				t.Errorf("class %d: quantile %.2f = %.0f s, Philly %.0f s", class, p, got, want)
			}
		}
		var Σ float64
		for _, x := range d {
			Σ += x
		}
		if mean := Σ / float64(len(d)); math.Abs(mean/phillyMeans[class]-1) > 0.10 {
			t.Errorf("class %d: mean %.0f s, Philly %.0f s", class, mean, phillyMeans[class])
		}
	}
}

// Arrivals are Poisson at Rate: the mean gap over 20,000 jobs is within
// 3 % of 3600/Rate seconds; with Burst 0.8 the rising half of each day
// (sin > 0) holds far more arrivals than the falling half.
func TestMixedArrivals(t *testing.T) {
	jobs, _, err := Mixed{Seed: 2, Jobs: 20000, Rate: 6, Scale: 0.01}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	gap := jobs[len(jobs)-1].Arrival.Seconds() / float64(len(jobs)-1)
	if math.Abs(gap/600-1) > 0.03 {
		t.Errorf("mean gap %.1f s, want 600", gap)
	}
	jobs, _, err = Mixed{Seed: 2, Jobs: 20000, Rate: 6, Burst: 0.8, Scale: 0.01}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	var high, low int
	for _, j := range jobs {
		if math.Sin(2*math.Pi*j.Arrival.Seconds()/86400) > 0 {
			high++
		} else {
			low++
		}
	}
	// Expected ratio (1 + 0.8·2/π)/(1 − 0.8·2/π) ≈ 3.1.
	if ratio := float64(high) / float64(low); ratio < 2.6 || ratio > 3.6 {
		t.Errorf("burst: %d arrivals in the high half-day, %d in the low (ratio %.2f, want ≈ 3.1)", high, low, ratio)
	}
}

// Every job carries every fact, consistently: throughputs on the
// reference type, elastic facts whose initial batch is its GPUs × the
// truth's batch, adaptive facts whose epochs match the truth's schedule,
// a sensitivity, a tenant; the snapshot passes strict validation, and
// weights are 5 for about the Priority fraction.
func TestMixedFacts(t *testing.T) {
	jobs, phys, err := Mixed{Seed: 3, Jobs: 2000, Rate: 10, Priority: 0.2, Scale: 0.1}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	weighted := 0
	for _, j := range jobs {
		tr := phys.Jobs[j.ID]
		switch {
		case tr == nil || j.Throughput["v100"] <= 0 || j.Elastic == nil || j.Adaptive == nil || j.Sensitivity == nil || j.Tenant == "":
			t.Fatalf("job %s lacks a fact: %+v", j.ID, j)
		case j.Elastic.BatchSize != j.GPUs*tr.Batch || j.Adaptive.Epochs != tr.Epochs || j.Adaptive.Epochs < 1:
			t.Fatalf("job %s: inconsistent facts: elastic %+v, adaptive epochs %d, truth %d", j.ID, j.Elastic, j.Adaptive.Epochs, tr.Epochs)
		case tr.Model != "Recommendation" && j.Skew <= 0:
			t.Fatalf("job %s (%s): no skew", j.ID, tr.Model)
		case j.GPUs > 1 && tr.Model == "Recommendation":
			t.Fatalf("job %s: Recommendation on %d GPUs", j.ID, j.GPUs)
		}
		if j.Weight == 5 {
			weighted++
		}
	}
	if f := float64(weighted) / float64(len(jobs)); math.Abs(f-0.2) > 0.03 {
		t.Errorf("weighted fraction %.3f, want 0.2", f)
	}
	var c allocation.Cluster
	for _, typ := range []allocation.Accelerator{"v100", "p100", "k80"} {
		c.Servers = append(c.Servers, allocation.Server{ID: string(typ), Accelerator: typ, GPUs: 8, CPUs: 24, MemoryGB: 500})
	}
	if err := policy.Validate(&policy.Snapshot{Now: jobs[len(jobs)-1].Arrival, Cluster: c, Jobs: jobs}); err != nil {
		t.Errorf("snapshot invalid: %v", err)
	}
}

// The same seed gives the same jobs and truths; another seed others.
func TestMixedDeterministic(t *testing.T) {
	g := Mixed{Seed: 4, Jobs: 300, Rate: 5, Burst: 0.5, Priority: 0.1}
	a, pa, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, pb, _ := g.Generate()
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(pa, pb) {
		t.Error("same seed, different workload")
	}
	g.Seed = 5
	c, _, _ := g.Generate()
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds, same workload")
	}
}

// Bad settings are errors that name the field.
func TestMixedErrors(t *testing.T) {
	for field, g := range map[string]Mixed{
		"jobs":      {},
		"rate":      {Jobs: 1, Rate: math.NaN()},
		"burst":     {Jobs: 1, Burst: 2},
		"tenants":   {Jobs: 1, Tenants: -1},
		"priority":  {Jobs: 1, Priority: 1.5},
		"scale":     {Jobs: 1, Scale: -1},
		"reference": {Jobs: 1, Reference: "h100"},
	} {
		_, _, err := g.Generate()
		if !errors.Is(err, policy.ErrInvalidConfig) || !strings.Contains(fmt.Sprint(err), "mixed: "+field+":") {
			t.Errorf("%s: error %v", field, err)
		}
	}
}

// A system's view keeps only its facts and their physics: without
// FactAdaptive a job keeps its initial batch (no stages, no Adaptive);
// without heterogeneity it runs on the reference type alone.
func TestMixedRestricted(t *testing.T) {
	jobs, phys, err := Mixed{Seed: 6, Jobs: 200, Rate: 5, Scale: 0.1, Facts: policy.FactElastic | policy.FactBatch | policy.FactLength}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		tr := phys.Jobs[j.ID]
		if j.Adaptive != nil || tr.Stages != nil || j.Sensitivity != nil || j.Skew != 0 || j.Tenant != "" || j.Weight != 0 {
			t.Fatalf("job %s keeps a dropped fact: %+v", j.ID, j)
		}
		if j.Elastic == nil || len(j.Throughput) != 1 || j.Throughput["v100"] <= 0 || len(tr.Base) != 1 {
			t.Fatalf("job %s: elastic %v, throughput %v, base %v", j.ID, j.Elastic, j.Throughput, tr.Base)
		}
	}
	if got := policy.Present(&policy.Snapshot{Jobs: jobs}); got != policy.FactElastic|policy.FactBatch|policy.FactLength {
		t.Errorf("present facts %v, want length, elastic, batch", got)
	}
}
