package throughput

import (
	"fmt"
	"math"
	"slices"
)

// Profile is the outcome of Synergy's optimistic profiling of one job: epoch
// times measured along the CPU axis with the whole dataset cached, plus what
// it takes to predict the memory axis (the rate at which cached data is
// read, the dataset's size and the storage bandwidth). See the package
// documentation, section "CPU and memory sensitivity".
type Profile struct {
	// GPUs is the number of GPUs the job was profiled on; zero means 1.
	GPUs int `json:"gpus,omitempty"`
	// CPUs are the cores per GPU profiled, strictly ascending.
	CPUs []float64 `json:"cpus"`
	// EpochSeconds[i] is the epoch time with CPUs[i] cores per GPU and
	// the whole dataset cached.
	EpochSeconds []float64 `json:"epoch_seconds"`
	// CacheGBps[i] is the rate, in GB/s, at which the job reads cached
	// data with CPUs[i] cores per GPU.
	CacheGBps []float64 `json:"cache_gbps"`
	// DatasetGB is the size of the dataset read in one epoch.
	DatasetGB float64 `json:"dataset_gb"`
	// DiskMBps is the storage bandwidth, in MB/s (1 GB = 1024 MB).
	DiskMBps float64 `json:"disk_mbps"`
}

// gpus returns the number of GPUs, zero meaning 1.
func (p Profile) gpus() int {
	if p.GPUs == 0 {
		return 1
	}
	return p.GPUs
}

// EpochTime returns the predicted epoch time, in seconds, with CPUs[i]
// cores and memGB GB of cache per GPU: the slower of the fully cached
// epoch and the time to read the cached part of the dataset from memory
// and the rest from storage,
//
//	cache = min(DatasetGB, GPUs·memGB)
//	epoch = max(EpochSeconds[i], cache/CacheGBps[i] + (DatasetGB − cache)·1024/DiskMBps)
//
// A negative memGB counts as none. i must index CPUs; p should be valid
// (see [Profile.Validate]), or the result may be infinite or NaN.
func (p Profile) EpochTime(i int, memGB float64) float64 {
	cache := max(0, min(p.DatasetGB, float64(p.gpus())*memGB))
	io := cache/p.CacheGBps[i] + (p.DatasetGB-cache)*1024/p.DiskMBps
	return max(p.EpochSeconds[i], io)
}

// Validate reports the first malformed field of p, by its JSON name: a
// negative GPU count, an empty, non-positive, non-finite or unsorted CPU
// axis, epoch times or cache rates that do not match it in length or are
// not finite and positive, a negative or non-finite dataset size, or a
// storage bandwidth that is not finite and positive.
func (p Profile) Validate() error {
	if p.GPUs < 0 {
		return fmt.Errorf("gpus: %d is negative", p.GPUs)
	}
	if len(p.CPUs) == 0 {
		return fmt.Errorf("cpus: empty")
	}
	for i, c := range p.CPUs {
		if !finitePositive(c) || (i > 0 && c <= p.CPUs[i-1]) {
			return fmt.Errorf("cpus: values must be finite, positive and strictly ascending: %v", p.CPUs)
		}
	}
	for _, f := range []struct {
		name string
		v    []float64
	}{{"epoch_seconds", p.EpochSeconds}, {"cache_gbps", p.CacheGBps}} {
		if len(f.v) != len(p.CPUs) {
			return fmt.Errorf("%s: %d values for %d CPU values", f.name, len(f.v), len(p.CPUs))
		}
		for i, x := range f.v {
			if !finitePositive(x) {
				return fmt.Errorf("%s[%d]: %v is not a finite positive number", f.name, i, x)
			}
		}
	}
	if !(p.DatasetGB >= 0 && p.DatasetGB <= math.MaxFloat64) {
		return fmt.Errorf("dataset_gb: %v is not a finite non-negative number", p.DatasetGB)
	}
	if !finitePositive(p.DiskMBps) {
		return fmt.Errorf("disk_mbps: %v is not a finite positive number", p.DiskMBps)
	}
	return nil
}

func finitePositive(x float64) bool { return x > 0 && x <= math.MaxFloat64 }

// Sensitivity returns the job's CPU × memory sensitivity: on the grid of
// the profiled CPU values and memoryGB (GB per GPU, strictly ascending and
// positive), the throughput 1/[Profile.EpochTime] divided by the grid's
// interpolated throughput at refCPUs cores and refMemGB GB per GPU, so
// that At(refCPUs, refMemGB) is 1 up to rounding. Synergy's reference is
// the GPU-proportional share of a server.
//
// It reports a malformed profile (see [Profile.Validate]) or memory axis,
// a non-finite reference, or a reference at which the throughput is zero
// (or rounds to it) as an error naming the field or argument.
func (p Profile) Sensitivity(memoryGB []float64, refCPUs, refMemGB float64) (Sensitivity, error) {
	if err := p.Validate(); err != nil {
		return Sensitivity{}, err
	}
	s := Sensitivity{
		CPUs:     slices.Clone(p.CPUs),
		MemoryGB: slices.Clone(memoryGB),
		Speedup:  make([][]float64, len(p.CPUs)),
	}
	for i := range p.CPUs {
		row := make([]float64, len(memoryGB))
		for m, mem := range memoryGB {
			row[m] = 1 / p.EpochTime(i, mem)
		}
		s.Speedup[i] = row
	}
	if err := s.Validate(); err != nil {
		return Sensitivity{}, err
	}
	if math.IsNaN(refCPUs) || math.IsInf(refCPUs, 0) || math.IsNaN(refMemGB) || math.IsInf(refMemGB, 0) {
		return Sensitivity{}, fmt.Errorf("reference: (%v cores, %v GB) is not finite", refCPUs, refMemGB)
	}
	ref := s.At(refCPUs, refMemGB)
	if !finitePositive(ref) {
		return Sensitivity{}, fmt.Errorf("reference: throughput %v at (%v cores, %v GB) is not positive", ref, refCPUs, refMemGB)
	}
	for _, row := range s.Speedup {
		for m := range row {
			row[m] /= ref
		}
	}
	return s, nil
}

// Sweep runs the CPU sweep of Synergy's profiler for a job on gpus GPUs:
// it measures the epoch time at maxCPUs cores (the job's total, not per
// GPU) and then at fewer and fewer cores. After a point whose time is
// within 10 % of the previous point's (|t − t_prev| ≤ 0.1·t_prev) the
// cores are halved (integer division), otherwise one core per GPU is
// given up (cores − gpus); the sweep stops when fewer than one core
// remains. The first point has no previous one and is followed by a
// halving. (The pseudo-code in Synergy's profiler README takes the small
// step there instead.) Since the cores strictly decrease, every count is
// measured once.
//
// Sweep returns the measured core counts in ascending order with their
// epoch times. An error from measure, or a time that is not finite and
// positive, stops the sweep and is returned wrapped with the core count;
// maxCPUs or gpus below 1 or a nil measure are errors too.
func Sweep(maxCPUs, gpus int, measure func(cpus int) (float64, error)) (cpus []int, seconds []float64, err error) {
	switch {
	case maxCPUs < 1:
		return nil, nil, fmt.Errorf("max_cpus: %d is less than 1", maxCPUs)
	case gpus < 1:
		return nil, nil, fmt.Errorf("gpus: %d is less than 1", gpus)
	case measure == nil:
		return nil, nil, fmt.Errorf("measure: nil")
	}
	prev := math.NaN()
	for c := maxCPUs; c >= 1; {
		t, err := measure(c)
		if err != nil {
			return nil, nil, fmt.Errorf("measure(%d cores): %w", c, err)
		}
		if !finitePositive(t) {
			return nil, nil, fmt.Errorf("measure(%d cores): epoch time %v is not a finite positive number", c, t)
		}
		cpus = append(cpus, c)
		seconds = append(seconds, t)
		if math.IsNaN(prev) || math.Abs(t-prev) <= 0.1*prev {
			c /= 2
		} else {
			c -= gpus
		}
		prev = t
	}
	slices.Reverse(cpus)
	slices.Reverse(seconds)
	return cpus, seconds, nil
}
