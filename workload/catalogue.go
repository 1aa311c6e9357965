package workload

import (
	"slices"

	"github.com/dlsched/dlsched/throughput"
)

// Model is one entry of the model catalogue behind the mixed workload:
// every fact the systems read about a model, joined from their published
// zoos under one name. See the package doc, "The mixed workload", for
// where each fact comes from.
type Model struct {
	// Name is Gavel's model name, which also keys Shockwave's regimes.
	Name string
	// Batches are the per-GPU batch sizes a job may start with: Gavel's
	// templates of the model within Shockwave's largest batch size.
	Batches []int
	// Distributed reports whether the model may run on more than one GPU.
	Distributed bool
	// Pollux names the Pollux application whose fitted iteration-time
	// model (Perf) and gradient noise scale stand in for the model's.
	Pollux string
	// Perf is that application's iteration-time model, fitted to its
	// measured step times.
	Perf throughput.Params
	// NoiseStart and NoiseEnd are the gradient noise scale at the start
	// and the end of training, per example of the initial batch: φ grows
	// geometrically from NoiseStart·M0 to NoiseEnd·M0 over training.
	NoiseStart, NoiseEnd float64
	// MaxBatchRatio bounds the global batch an elastic policy may choose:
	// MaxBatchRatio·M0, the application's largest batch over its initial.
	MaxBatchRatio int
	// Synergy names the model of Synergy's zoo whose CPU and memory
	// sensitivity the model carries.
	Synergy string
	// Spread is the speed, relative to a consolidated run, of a run whose
	// workers span servers.
	Spread float64
	// Skew is the tensor-size skew Tiresias consolidates by.
	Skew float64
}

// catalogue is the mixed workload's models. Perf and the noise scales were
// fitted (LoadApps) to Pollux's traces of each application; Spread is the
// median, over Gavel's measured batch sizes, scale factors 2, 4 and 8 and
// types V100, P100 and K80, of the "*_unconsolidated" throughput over the
// consolidated one; Skew is Tiresias' measured ResNet-50 skew for the
// ResNets and 1 − Spread for the models Tiresias did not measure.
var catalogue = []Model{
	{Name: "ResNet-18", Batches: []int{16, 32, 64, 128, 256}, Distributed: true,
		Pollux: "cifar10", Perf: throughput.Params{AlphaC: 0.01742, BetaC: 0.0007008, AlphaN: 0.1221, BetaN: 0.002642, AlphaR: 0.03285, BetaR: 0.0008749, Gamma: 2.073},
		NoiseStart: 0.5663, NoiseEnd: 302.0, MaxBatchRatio: 32, Synergy: "res18", Spread: 0.728, Skew: 0.112},
	{Name: "ResNet-50", Batches: []int{16, 32, 64, 128}, Distributed: true,
		Pollux: "imagenet", Perf: throughput.Params{AlphaC: 0.06411, BetaC: 0.004481, AlphaN: 0.2996, BetaN: 0.006638, AlphaR: 0.07688, BetaR: 0.000519, Gamma: 2.473},
		NoiseStart: 4.641, NoiseEnd: 72.15, MaxBatchRatio: 64, Synergy: "res50", Spread: 1, Skew: 0.112},
	{Name: "Transformer", Batches: []int{16, 32, 64, 128}, Distributed: true,
		Pollux: "bert", Perf: throughput.Params{AlphaC: 0.1719, BetaC: 0.05861, AlphaN: 1.386, BetaN: 0.009431, AlphaR: 0.2842, BetaR: 0.009622, Gamma: 1.902},
		NoiseStart: 35.25, NoiseEnd: 93.67, MaxBatchRatio: 32, Synergy: "transformer", Spread: 0.75, Skew: 0.25},
	{Name: "LM", Batches: []int{5, 10, 20, 40, 80}, Distributed: true,
		Pollux: "deepspeech2", Perf: throughput.Params{AlphaC: 0.3111, BetaC: 0.02384, AlphaN: 0.4871, BetaN: 0.009819, AlphaR: 0.08399, BetaR: 0.001364, Gamma: 1.413},
		NoiseStart: 0.5115, NoiseEnd: 10530, MaxBatchRatio: 32, Synergy: "lstm", Spread: 0.518, Skew: 0.482},
	{Name: "Recommendation", Batches: []int{512, 1024, 2048, 4096, 8192},
		Pollux: "ncf", Perf: throughput.Params{AlphaC: 0.006957, BetaC: 6.342e-07, AlphaN: 0.0146, BetaN: 0.0005408, AlphaR: 0.003881, BetaR: 0.0004254, Gamma: 1},
		NoiseStart: 72.54, NoiseEnd: 2.310e5, MaxBatchRatio: 128, Synergy: "gnmt", Spread: 1, Skew: 0},
}

// colocation[a][b] is the speed of model a, relative to running alone,
// when it shares its GPUs with model b: the median, over batch sizes and
// types, of Gavel's measured single-GPU packed throughputs over isolated
// ones where the pair fits (norm_a of its packing table). Rows and columns
// are in catalogue order.
var colocation = [5][5]float64{
	{0.57, 0.50, 0.57, 0.72, 0.82},
	{0.58, 0.50, 0.57, 0.68, 0.75},
	{0.52, 0.43, 0.56, 0.66, 0.71},
	{0.46, 0.39, 0.48, 0.53, 0.72},
	{0.61, 0.44, 0.62, 0.68, 0.50},
}

// Catalogue returns the mixed workload's models, a fresh copy.
func Catalogue() []Model {
	c := slices.Clone(catalogue)
	for i := range c {
		c[i].Batches = slices.Clone(c[i].Batches)
	}
	return c
}

// modelIndex returns the catalogue index of the named model, or -1.
func modelIndex(name string) int {
	return slices.IndexFunc(catalogue, func(m Model) bool { return m.Name == name })
}

// phillyGPUs is the GPU-count distribution of the Philly trace as Gavel
// derived it (33,192 jobs): the count and its share of jobs.
var phillyGPUs = [...]struct {
	gpus  int
	share float64
}{{1, 0.7623}, {2, 0.0200}, {4, 0.0927}, {8, 0.1249}}

// phillyQuantiles are the probabilities at which phillyDurations are the
// quantiles of job duration: dense in the tail, which holds most of the
// GPU time.
var phillyQuantiles = [...]float64{0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1}

// phillyDurations are, per GPU count of phillyGPUs, the quantiles of the
// jobs' durations in seconds in the same trace (the last is the longest).
// Drawn log-linearly between them, they keep each class's mean within 4 %
// of phillyMeans.
var phillyDurations = [...][len(phillyQuantiles)]float64{
	{3600, 3982, 4334, 5413, 6112, 8558, 10710, 14508, 22304, 44237, 140113, 382849, 1001571, 1845602, 2567887, 4749178, 5196151},
	{3657, 5838, 12805, 26610, 44298, 70712, 101659, 172829, 260099, 399986, 584349, 821796, 1451550, 1817981, 2137523, 5150146, 5150146},
	{3609, 5292, 7799, 14570, 24571, 45155, 71606, 93899, 145265, 203119, 398478, 816685, 1543257, 2050530, 2211973, 4718906, 5186933},
	{3605, 5121, 7442, 13908, 20456, 38085, 64585, 106494, 175750, 266268, 537494, 865718, 1551783, 2214025, 3098095, 4472936, 5187472},
}

// phillyMeans are the classes' mean durations in seconds in the trace.
var phillyMeans = [...]float64{90354, 250011, 182258, 214254}
