package tiresias

import (
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/policy"
)

// yarnPercentiles is Tiresias-G's default prior: the distribution of job
// GPU-time (GPU-seconds, GPUs × duration) that Tiresias' simulator learns
// its Gittins index from, yarn-gput1000.csv of github.com/SymbioticLab/
// Tiresias (commit 959f9b0, Apache-2.0), 1,001 jobs "from YARN", summarized
// as 100 equally likely values: value k is the quantile at probability
// (k + ½)/100, linearly interpolated between the sorted samples (at
// position p·(n−1)) and rounded to the second. The summary keeps the
// distribution's body, where the queues' thresholds lie (the index at 0,
// 3250 and 7200 GPU-seconds is within 3 % of the full sample's), but not
// its far tail: the sample's largest job is 53 million GPU-seconds, the
// summary's 4.3 million, and its mean 92 thousand against 151 thousand.
// TestDefaultSamples checks the table against the file when it is present.
var yarnPercentiles = [100]float64{
	130, 146, 165, 183, 201, 222, 254, 285, 314, 337,
	385, 442, 488, 521, 545, 559, 574, 595, 623, 654,
	690, 728, 766, 810, 846, 874, 897, 929, 973, 1024,
	1075, 1130, 1185, 1239, 1299, 1366, 1427, 1467, 1500, 1537,
	1584, 1647, 1741, 1822, 1876, 1940, 1994, 2046, 2100, 2173,
	2291, 2374, 2450, 2509, 2557, 2599, 2650, 2710, 2780, 2924,
	3199, 3419, 3583, 3833, 4017, 4179, 4501, 4953, 5217, 5448,
	5666, 5854, 6055, 6477, 7692, 8577, 9098, 9911, 10807, 11950,
	13317, 14649, 17608, 21626, 26530, 32004, 41300, 49068, 57612, 67981,
	86242, 114025, 143327, 190280, 273248, 387104, 592368, 901096, 1650544, 4307904,
}

// DefaultSamples returns Tiresias-G's default prior distribution of job
// GPU-time: 100 equally likely values, the percentiles of the job GPU-time
// (GPU-seconds) of Tiresias' published yarn-gput1000.csv, from 130 to 4.3
// million GPU-seconds, with a median of about 2,200 and 61 % of the jobs
// below the simulator's first threshold, 3250. As a prior it counts as 100
// jobs, so the cluster's own finished jobs soon outweigh it.
func DefaultSamples() []float64 { return slices.Clone(yarnPercentiles[:]) }

// maxSamples returns how many finished jobs' totals are kept; 0 learns
// nothing.
func (p *Gittins) maxSamples() int {
	switch {
	case p.MaxSamples < 0:
		return 0
	case p.MaxSamples == 0:
		return DefaultMaxSamples
	}
	return p.MaxSamples
}

// finished returns the totals of State.Finished that count: finite and
// non-negative, at most the most recent maxSamples. It returns the State's
// own slice when all of it counts.
func (p *Gittins) finished() []float64 {
	f := p.State.Finished
	if slices.ContainsFunc(f, func(x float64) bool { return !validTotal(x) }) {
		f = slices.DeleteFunc(slices.Clone(f), func(x float64) bool { return !validTotal(x) })
	}
	if n := p.maxSamples(); len(f) > n {
		f = slices.Clone(f[len(f)-n:]) // not keeping the old array alive
	}
	return f
}

func validTotal(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

// learn returns the finished jobs' totals after this decision: those of the
// State and, in ID order, the total of every job of the State that s no
// longer holds, within the bound. It changes nothing: Allocate keeps the
// result only if it decides.
func (p *Gittins) learn(s *policy.Snapshot) []float64 {
	f := p.finished()
	if p.maxSamples() == 0 || len(p.State.Jobs) == 0 {
		return f
	}
	present := make(map[string]bool, len(s.Jobs))
	for i := range s.Jobs {
		present[s.Jobs[i].ID] = true
	}
	dt := max(s.Now.Seconds()-p.State.Seen, 0)
	var done []float64
	for _, id := range slices.Sorted(maps.Keys(p.State.Jobs)) {
		if present[id] {
			continue
		}
		js := p.State.Jobs[id]
		if total := js.Service + float64(max(js.Running, 0))*dt; validTotal(total) {
			done = append(done, total)
		}
	}
	if len(done) == 0 {
		return f
	}
	all := append(slices.Clone(f), done...)
	if n := p.maxSamples(); len(all) > n {
		all = slices.Clone(all[len(all)-n:])
	}
	return all
}
