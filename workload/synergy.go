package workload

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// SynergyRound is the round (lease) length of Synergy's simulator (OSDI'22),
// 300 s: every lease ends each round and the policy re-divides GPUs, CPU
// and memory from scratch. Set it as Simulation.Round to reproduce
// Synergy's experiments.
const SynergyRound = 300 * time.Second

// Synergy's task classes, in the order SynergyGenerator.Split lists them
// and in which the generator breaks ties.
const (
	SynergyImage    = "image"
	SynergyLanguage = "language"
	SynergySpeech   = "speech"
)

// SynergyModel is one model of Synergy's default zoo: its task class, its
// speed at the GPU-proportional share and how its throughput depends on the
// CPU cores and memory it gets per GPU.
type SynergyModel struct {
	// Class is the task class: SynergyImage, SynergyLanguage or
	// SynergySpeech. The generator draws models by class.
	Class string
	// IterSeconds is the time of one iteration at the GPU-proportional share
	// (3 cores and 62.5 GB per GPU on Synergy's 8-GPU, 24-core, 500-GB
	// servers). Synergy takes it to be the same for any GPU count.
	IterSeconds float64
	// Sensitivity is the throughput relative to the proportional share,
	// whose cell (3, 62.5) is 1.
	Sensitivity throughput.Sensitivity
}

// synergyCPUs and synergyMemoryGB are the axes of Synergy's profiles, per
// GPU (simulator/jobs/job.py cpu_val, mem_val).
var (
	synergyCPUs     = []float64{1, 2, 3, 4, 5, 6, 9, 12, 24}
	synergyMemoryGB = []float64{20.83, 62.5, 125, 187.5, 250}
)

// synergyZoo is Synergy's default model zoo (simulator/models/*.py, the
// "_1" matrices of the 24-core servers), in class order and, within a
// class, in the order the generator assigns models round-robin.
var synergyZoo = [...]struct {
	name, class string
	iter        float64
	speedup     [][]float64
}{
	{"alexnet", "image", 0.6, [][]float64{
		{0.1, 0.3, 0.3, 0.3, 0.3},
		{0.1, 0.66, 0.66, 0.66, 0.66},
		{0.1, 1, 1, 1, 1},
		{0.1, 1.25, 1.25, 1.25, 1.25},
		{0.1, 1.53, 1.53, 1.53, 1.53},
		{0.1, 1.75, 1.75, 1.75, 1.75},
		{0.1, 2, 2, 2, 2},
		{0.1, 2, 2.94, 2.94, 2.94},
		{0.1, 2, 2.94, 2.94, 2.94},
	}},
	{"res18", "image", 0.64, [][]float64{
		{0.1, 0.37, 0.37, 0.37, 0.37},
		{0.1, 0.72, 0.72, 0.72, 0.72},
		{0.1, 1, 1, 1, 1},
		{0.1, 1.3, 1.3, 1.3, 1.3},
		{0.1, 1.53, 1.53, 1.53, 1.53},
		{0.1, 1.75, 1.75, 1.75, 1.75},
		{0.1, 2.4, 2.4, 2.4, 2.4},
		{0.1, 2.4, 2.4, 2.4, 2.4},
		{0.1, 2.4, 2.4, 2.4, 2.4},
	}},
	{"res50", "image", 0.78, [][]float64{
		{0.1, 0.4, 0.4, 0.4, 0.4},
		{0.1, 0.74, 0.74, 0.74, 0.74},
		{0.1, 1, 1, 1, 1},
		{0.1, 1.15, 1.15, 1.15, 1.15},
		{0.1, 1.15, 1.15, 1.15, 1.15},
		{0.1, 1.15, 1.15, 1.15, 1.15},
		{0.1, 1.15, 1.15, 1.15, 1.15},
		{0.1, 1.15, 1.15, 1.15, 1.15},
		{0.1, 1.15, 1.15, 1.15, 1.15},
	}},
	{"mobilenet", "image", 0.71, [][]float64{
		{0.1, 0.37, 0.37, 0.37, 0.37},
		{0.1, 0.72, 0.72, 0.72, 0.72},
		{0.1, 1, 1, 1, 1},
		{0.1, 1.3, 1.3, 1.3, 1.3},
		{0.1, 1.49, 1.49, 1.49, 1.49},
		{0.1, 1.55, 1.55, 1.55, 1.55},
		{0.1, 1.55, 1.55, 1.55, 1.55},
		{0.1, 1.55, 1.55, 1.55, 1.55},
		{0.1, 1.55, 1.55, 1.55, 1.55},
	}},
	{"shufflenet", "image", 0.615, [][]float64{
		{0.1, 0.3, 0.3, 0.3, 0.3},
		{0.1, 0.66, 0.66, 0.66, 0.66},
		{0.1, 1, 1, 1, 1},
		{0.1, 1.25, 1.25, 1.25, 1.25},
		{0.1, 1.53, 1.53, 1.53, 1.53},
		{0.1, 1.75, 1.75, 1.75, 1.75},
		{0.1, 2, 2, 2, 2},
		{0.1, 2, 2.89, 2.89, 2.89},
		{0.1, 2, 2.89, 2.89, 2.89},
	}},
	{"gnmt", "language", 0.12, [][]float64{
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
	}},
	{"transformer", "language", 0.67, [][]float64{
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
	}},
	{"lstm", "language", 0.011, [][]float64{
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
		{1, 1, 1, 1, 1},
	}},
	{"m5", "speech", 0.6, [][]float64{
		{0.1, 0.3, 0.3, 0.3, 0.3},
		{0.1, 0.66, 0.66, 0.66, 0.66},
		{0.1, 1, 1, 1, 1},
		{0.1, 1.2, 1.2, 1.2, 1.2},
		{0.1, 1.4, 1.4, 1.4, 1.4},
		{0.1, 1.5, 2, 2.5, 2.5},
		{0.1, 1.5, 2, 2.5, 2.5},
		{0.1, 1.5, 2, 2.5, 2.5},
		{0.1, 1.5, 2, 2.5, 2.5},
	}},
	{"deepspeech", "speech", 0.757, [][]float64{
		{0.1, 0.3, 0.3, 0.3, 0.3},
		{0.1, 0.66, 0.66, 0.66, 0.66},
		{0.1, 1, 1, 1, 1},
		{0.1, 1, 1, 1, 1},
		{0.1, 1, 1, 1, 1},
		{0.1, 1, 1, 1, 1},
		{0.1, 1, 1, 1, 1},
		{0.1, 1, 1, 1, 1},
		{0.1, 1, 1, 1, 1},
	}},
}

// SynergyModels returns the ten models of Synergy's default zoo by name:
// alexnet, res18, res50, mobilenet, shufflenet (image), gnmt, transformer,
// lstm (language), m5 and deepspeech (speech), with their 9 × 5 profiles
// over 1, 2, 3, 4, 5, 6, 9, 12 and 24 cores and 20.83, 62.5, 125, 187.5
// and 250 GB per GPU. The map and its slices are new on every call, so
// callers may change them.
func SynergyModels() map[string]SynergyModel {
	m := make(map[string]SynergyModel, len(synergyZoo))
	for _, z := range synergyZoo {
		rows := make([][]float64, len(z.speedup))
		for i, r := range z.speedup {
			rows[i] = slices.Clone(r)
		}
		m[z.name] = SynergyModel{Class: z.class, IterSeconds: z.iter, Sensitivity: throughput.Sensitivity{
			CPUs: slices.Clone(synergyCPUs), MemoryGB: slices.Clone(synergyMemoryGB), Speedup: rows,
		}}
	}
	return m
}

// SynergyZoo returns the default zoo's model names per class, in the
// classes' order (image, language, speech) and, within a class, in the
// order SynergyGenerator assigns them round-robin.
func SynergyZoo() [3][]string {
	var z [3][]string
	for _, e := range synergyZoo {
		c := slices.Index(synergyClasses[:], e.class)
		z[c] = append(z[c], e.name)
	}
	return z
}

var synergyClasses = [3]string{SynergyImage, SynergyLanguage, SynergySpeech}

// cloneSensitivity returns a deep copy of s, so that jobs do not share a
// model's slices.
func cloneSensitivity(s throughput.Sensitivity) *throughput.Sensitivity {
	rows := make([][]float64, len(s.Speedup))
	for i, r := range s.Speedup {
		rows[i] = slices.Clone(r)
	}
	return &throughput.Sensitivity{CPUs: slices.Clone(s.CPUs), MemoryGB: slices.Clone(s.MemoryGB), Speedup: rows}
}

// validate checks that m can be simulated: a positive, finite iteration time
// and a valid profile.
func (m SynergyModel) validate() error {
	if !(m.IterSeconds > 0 && m.IterSeconds <= math.MaxFloat64) {
		return fmt.Errorf("iter_seconds: %v is not a finite positive number", m.IterSeconds)
	}
	if err := m.Sensitivity.Validate(); err != nil {
		return fmt.Errorf("sensitivity: %w", err)
	}
	return nil
}

// Resources is Synergy's speed model: a job runs faster or slower with the
// CPU cores and memory its grant gives it per GPU, as its Sensitivity says.
// Set Simulation.Speed to its Speed method, with Cluster the simulation's
// cluster, to simulate policies that allocate CPU and memory.
type Resources struct {
	// Cluster supplies the servers' CPUs and memory, from which an
	// ungranted dimension takes its GPU-proportional share.
	Cluster allocation.Cluster
}

// Speed returns the steps per second job j makes in run under grant g.
//
// A job without a Sensitivity, or running as a co-located pair, gets what
// the simulation gives when Speed is nil: its Throughput on the run's type,
// or its Colocated throughput with the partner. Otherwise it makes that
// Throughput × Sensitivity.At(c, m), with c = g.CPUs and m = g.MemoryGB
// divided by the GPUs the run holds. A dimension the grant leaves at zero
// takes the job's GPU-proportional share instead: each server's CPUs (or
// memory) per GPU, weighted by the GPUs the job holds there, as Synergy's
// baseline hands them out. If some server of the run does not track such a
// dimension (zero), the job runs at the reference, factor 1: an untracked
// cluster then simulates as if CPU and memory were not modelled. An invalid
// Sensitivity gives NaN, which the simulation reports as an error.
//
// Progress is continuous: at 0.64 s per iteration a job makes 468.75
// iterations in a 300 s round, where Synergy's simulator credits
// floor(300/0.64) = 468.
func (r Resources) Speed(j *policy.Job, g allocation.Grant, run placement.Run) float64 {
	return j.ThroughputIn(run) * r.Factor(j, g, run)
}

// Factor returns the speed factor of job j's CPU cores and memory in run
// under grant g, as Speed describes: 1 for a job without a Sensitivity, a
// co-located pair, or a server that does not track a dimension the grant
// leaves at zero; NaN for an invalid Sensitivity.
func (r Resources) Factor(j *policy.Job, g allocation.Grant, run placement.Run) float64 {
	if j.Sensitivity == nil || run.Partner != "" {
		return 1
	}
	if err := j.Sensitivity.Validate(); err != nil {
		return math.NaN()
	}
	gpus := float64(sumGPUs(run.Assignments))
	if !(gpus > 0) {
		return 1
	}
	cpus, mem := g.CPUs/gpus, g.MemoryGB/gpus
	if g.CPUs == 0 || g.MemoryGB == 0 {
		pc, pm, ok := r.proportional(g, run, gpus)
		if !ok {
			return 1 // untracked: the reference share
		}
		if g.CPUs == 0 {
			cpus = pc
		}
		if g.MemoryGB == 0 {
			mem = pm
		}
	}
	return j.Sensitivity.At(cpus, mem)
}

// proportional returns the run's GPU-proportional CPU cores and memory per
// GPU, GPU-weighted over its servers, or false if a server does not track
// a dimension the grant leaves at zero.
func (r Resources) proportional(g allocation.Grant, run placement.Run, gpus float64) (cpus, mem float64, ok bool) {
	for _, a := range run.Assignments {
		srv, found := r.Cluster.Server(a.Server)
		if !found || srv.GPUs == 0 {
			return 0, 0, false
		}
		if (g.CPUs == 0 && srv.CPUs == 0) || (g.MemoryGB == 0 && srv.MemoryGB == 0) {
			return 0, 0, false
		}
		w := float64(a.GPUs) / gpus
		cpus += w * srv.CPUs / float64(srv.GPUs)
		mem += w * srv.MemoryGB / float64(srv.GPUs)
	}
	return cpus, mem, true
}

// SynergyTraceOptions configures ReadSynergyTrace. The zero value reads
// Synergy's own traces: the default zoo, arrivals in seconds, type "v100".
type SynergyTraceOptions struct {
	// Models maps a trace's model names to their profiles; nil means
	// SynergyModels().
	Models map[string]SynergyModel
	// ArrivalUnit is the unit of arrival_time; zero means time.Second.
	// Synergy's toy test_trace gives hours.
	ArrivalUnit time.Duration
	// Accelerator is the type the jobs' Throughput is given for; empty
	// means "v100", Synergy's GPU.
	Accelerator allocation.Accelerator
}

// ReadSynergyTrace reads a trace in the format Synergy's simulator records
// and replays: CSV without a header, five columns
//
//	job_id, model_name, arrival_time, total_iterations, gpu_demand
//
// e.g. "3,res18,287,26088,1". Each row becomes a job, in file order, with ID
// job_id (unique, non-empty), Arrival arrival_time × ArrivalUnit, GPUs
// gpu_demand (at least 1), StepsTotal total_iterations (positive),
// Throughput {Accelerator: 1/IterSeconds} (iterations per second of the
// whole job at the GPU-proportional share; Synergy's iteration time does
// not depend on the GPU count) and Sensitivity a copy of the model's.
// Errors wrap ErrTrace as a *TraceError naming the line, job and column.
func ReadSynergyTrace(r io.Reader, name string, opt SynergyTraceOptions) ([]policy.Job, error) {
	models := opt.Models
	if models == nil {
		models = SynergyModels()
	}
	unit := opt.ArrivalUnit
	if unit == 0 {
		unit = time.Second
	}
	if unit < 0 {
		return nil, fmt.Errorf("sim: synergy trace %s: arrival unit %v is negative", name, unit)
	}
	acc := opt.Accelerator
	if acc == "" {
		acc = referenceAccelerator
	}
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	checked := map[string]error{}
	jobs := []policy.Job{}
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return jobs, nil
		}
		if _, parse := errors.AsType[*csv.ParseError](err); parse {
			return nil, traceCSVErr(name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("sim: synergy trace %s: %w", name, err)
		}
		n, _ := cr.FieldPos(0)
		id := strings.TrimSpace(rec[0])
		bad := func(field, format string, args ...any) error {
			return traceErr(name, n, id, field, format, args...)
		}
		if len(rec) != 5 {
			return nil, bad("", "%d columns, want 5 (job_id, model_name, arrival_time, total_iterations, gpu_demand)", len(rec))
		}
		if id == "" {
			return nil, bad("job_id", "empty")
		}
		if prev, dup := seen[id]; dup {
			return nil, bad("job_id", "duplicate of line %d", prev)
		}
		seen[id] = n
		model := strings.TrimSpace(rec[1])
		m, ok := models[model]
		if !ok {
			return nil, bad("model_name", "unknown model %q", model)
		}
		err, done := checked[model]
		if !done {
			err = m.validate()
			checked[model] = err
		}
		if err != nil {
			return nil, bad("model_name", "model %q: %v", model, err)
		}
		arr, err := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
		if err != nil {
			return nil, bad("arrival_time", "%q is not a number", rec[2])
		}
		at, err := traceSeconds(arr * unit.Seconds())
		if err != nil {
			return nil, bad("arrival_time", "%v", err)
		}
		iters, err := strconv.ParseFloat(strings.TrimSpace(rec[3]), 64)
		if err != nil || !(iters > 0 && iters <= math.MaxFloat64) {
			return nil, bad("total_iterations", "%q is not a finite positive number", rec[3])
		}
		gpus, err := strconv.Atoi(strings.TrimSpace(rec[4]))
		if err != nil || gpus < 1 || gpus > allocation.MaxServerGPUs {
			return nil, bad("gpu_demand", "%q is not an integer in [1, %d]", rec[4], allocation.MaxServerGPUs)
		}
		jobs = append(jobs, policy.Job{
			ID:          id,
			GPUs:        gpus,
			Arrival:     at,
			Throughput:  map[allocation.Accelerator]float64{acc: 1 / m.IterSeconds},
			StepsTotal:  iters,
			Sensitivity: cloneSensitivity(m.Sensitivity),
		})
	}
}

// SynergyGenerator describes a synthetic workload in the manner of
// Synergy's "Philly-derived" generator (jobs/workload.py with
// exponential=True), Gavel-style lengths and Poisson arrivals over the
// default model zoo. Each job gets:
//   - a model: the job goes to the class whose target share (Split) most
//     exceeds its share of the jobs so far, ties to the first in image,
//     language, speech order, and takes the class's next model round-robin
//     (SynergyZoo's order, then other models of the class by name);
//   - a duration at the GPU-proportional share: with probability 0.8
//     60·10^U(1.5, 3) s, else 60·10^U(3, 4) s, and StepsTotal = duration /
//     IterSeconds rounded to a whole iteration (at least 1);
//   - GPUs: 1, or with MultiGPU 1, 2, 4 or 8 with probability 70, 10, 15
//     and 5 % (Synergy's synthetic mode);
//   - an arrival ceil(−ln(1−U)·3600/Rate) whole seconds after the previous
//     job's; the first job arrives one such gap after time zero, as
//     Generator's do (Synergy's recorded dynamic trace starts at 8 s);
//   - Weight 1, Throughput {Accelerator: 1/IterSeconds} and Sensitivity a
//     copy of the model's, as ReadSynergyTrace gives.
//
// The mean duration is 0.8·(10^3 − 10^1.5)/(1.5·ln 10) + 0.2·(10^4 −
// 10^3)/ln 10 ≈ 224.30 + 781.73 = 1006.03 minutes; 20 % of jobs exceed
// 1000 minutes. Jobs are returned in arrival order with IDs "job-00000",
// "job-00001", …; each attribute has its own random stream derived from
// Seed, so MultiGPU leaves lengths and arrivals unchanged. The class
// assignment is deterministic: after 1000 jobs at (20, 70, 10) exactly
// 200, 700 and 100.
type SynergyGenerator struct {
	// Seed selects the workload; the same generator always yields the same
	// jobs.
	Seed uint64
	// Jobs is the number of jobs; it must not be negative.
	Jobs int
	// Rate is the Poisson arrival rate in jobs per hour; it must be positive
	// (Synergy's default is 9).
	Rate float64
	// Split is the target percentage of image, language and speech jobs;
	// only the ratios matter. The zero value means (20, 70, 10), Synergy's
	// default for most figures.
	Split [3]float64
	// MultiGPU draws GPU demands 1, 2, 4, 8 with probability 70, 10, 15, 5 %
	// instead of always 1.
	MultiGPU bool
	// Models are the models to draw from, grouped by their Class; nil means
	// SynergyModels(). Models of other classes are never drawn.
	Models map[string]SynergyModel
	// Accelerator is the type the jobs' Throughput is given for; empty
	// means "v100".
	Accelerator allocation.Accelerator
}

// Seed-derived random streams of SynergyGenerator.
const (
	streamSynergyDuration uint64 = iota + 0x5be0cd19137e2179
	streamSynergyArrival
	streamSynergyScale
)

// Generate draws the workload. It fails if Jobs, Rate or Split is out of
// range, a model is invalid, or a class with a positive target has no
// model.
func (g SynergyGenerator) Generate() ([]policy.Job, error) {
	jobs, _, err := g.generate()
	return jobs, err
}

// generate draws the workload and also returns each job's model name.
func (g SynergyGenerator) generate() ([]policy.Job, []string, error) {
	split := g.Split
	if split == ([3]float64{}) {
		split = [3]float64{20, 70, 10}
	}
	var total float64
	for c, x := range split {
		if !(x >= 0 && x <= math.MaxFloat64) {
			return nil, nil, fmt.Errorf("sim: synergy generator: split: %s: %v is not a finite non-negative number", synergyClasses[c], x)
		}
		total += x
	}
	switch {
	case g.Jobs < 0:
		return nil, nil, fmt.Errorf("sim: synergy generator: jobs: %d is negative", g.Jobs)
	case !(g.Rate > 0 && g.Rate <= math.MaxFloat64):
		return nil, nil, fmt.Errorf("sim: synergy generator: rate: %v is not a finite positive number of jobs per hour", g.Rate)
	case !(total > 0 && total <= math.MaxFloat64):
		return nil, nil, fmt.Errorf("sim: synergy generator: split: %v must have a positive, finite sum", split)
	}
	models := g.Models
	if models == nil {
		models = SynergyModels()
	}
	acc := cmp.Or(g.Accelerator, referenceAccelerator)
	// Each class's models: the zoo's order first, then the others by name.
	var members [3][]string
	zoo := SynergyZoo()
	for c := range members {
		for _, name := range zoo[c] {
			if m, ok := models[name]; ok && m.Class == synergyClasses[c] {
				members[c] = append(members[c], name)
			}
		}
	}
	var extra []string
	for name, m := range models {
		c := slices.Index(synergyClasses[:], m.Class)
		if c >= 0 && !slices.Contains(members[c], name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		c := slices.Index(synergyClasses[:], models[name].Class)
		members[c] = append(members[c], name)
	}
	for c, names := range members {
		if split[c] > 0 && len(names) == 0 {
			return nil, nil, fmt.Errorf("sim: synergy generator: models: no model of class %s, whose split is %v", synergyClasses[c], split[c])
		}
		for _, name := range names {
			if err := models[name].validate(); err != nil {
				return nil, nil, fmt.Errorf("sim: synergy generator: models: %q: %w", name, err)
			}
		}
	}

	stream := func(k uint64) *rand.Rand { return rand.New(rand.NewPCG(g.Seed, k)) }
	rDuration, rArrival, rScale := stream(streamSynergyDuration), stream(streamSynergyArrival), stream(streamSynergyScale)
	jobs := make([]policy.Job, g.Jobs)
	names := make([]string, g.Jobs)
	var count, next [3]int
	arrival := 0.0
	for i := range jobs {
		c := synergyClass(split, total, count, i)
		name := members[c][next[c]%len(members[c])]
		count[c]++
		next[c]++
		m := models[name]
		s := 1
		if u := drawScale(rScale); g.MultiGPU {
			s = u
		}
		duration := drawDuration(rDuration)
		arrival += math.Ceil(interArrival(rArrival, 3600/g.Rate))
		if arrival > maxGeneratedSeconds {
			return nil, nil, fmt.Errorf("sim: synergy generator: rate: %v jobs/hour puts job %d's arrival beyond %g s", g.Rate, i, float64(maxGeneratedSeconds))
		}
		jobs[i] = policy.Job{
			ID:          fmt.Sprintf("job-%05d", i),
			Weight:      1,
			GPUs:        s,
			Arrival:     workloadSeconds(arrival),
			Throughput:  map[allocation.Accelerator]float64{acc: 1 / m.IterSeconds},
			StepsTotal:  max(1, math.Round(duration/m.IterSeconds)),
			Sensitivity: cloneSensitivity(m.Sensitivity),
		}
		names[i] = name
	}
	return jobs, names, nil
}

// synergyClass returns the class of the next job after n, count of them per
// class: the one whose target share split[c]/total most exceeds its share
// count[c]/n, ties to the first. Comparing split[c]·n − count[c]·total, the
// deficit scaled by n·total, keeps whole-percent splits exact.
func synergyClass(split [3]float64, total float64, count [3]int, n int) int {
	best, bestD := 0, math.Inf(-1)
	for c := range split {
		d := split[c] // no jobs yet: every share is zero
		if n > 0 {
			d = split[c]*float64(n) - float64(count[c])*total
		}
		if d > bestD {
			best, bestD = c, d
		}
	}
	return best
}
