package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// Generator describes a synthetic workload in the manner of Gavel's job
// generator (OSDI'20, utils.generate_job): jobs drawn from a throughput
// profile's templates with Philly-like durations and Poisson arrivals. The
// zero value generates no jobs; with only Jobs set it yields a static,
// single-GPU trace of equal-priority jobs without deadlines, all arriving at
// time zero, from DefaultProfile.
//
// Each job gets:
//   - a scale factor s: 1, 2, 4 or 8 GPUs with probability 70, 10, 15 and
//     5 % if MultiGPU, else 1;
//   - a duration, the seconds it would take alone on s GPUs of the reference
//     type "v100": with probability 0.8 60·10^U(1.5, 3) s (about 32 minutes
//     to 17 hours), else 60·10^U(3, 4) s (17 to 167 hours);
//   - a template drawn uniformly from those that can run on s GPUs
//     (distributed ones if s > 1, and with a positive throughput at s on
//     some type), which is the same as Gavel's re-drawing until it fits;
//   - StepsTotal = duration × throughput of the template on s "v100" GPUs;
//     should the profile lack that figure, the template's fastest type at s
//     stands in as the reference;
//   - Throughput: the profile's figure at s for every accelerator type the
//     profile measures, zero where the template cannot run on that type;
//   - Weight 5 with probability 0.2 if Priorities, else 1;
//   - Deadline = arrival + f·duration with f drawn uniformly from
//     {1.2, 2, 10} if SLOs, else none.
//
// Jobs are returned in arrival order, with IDs "job-00000", "job-00001", ….
// Every attribute is drawn from its own random stream derived from Seed, so
// that, for example, turning Priorities on leaves arrivals, sizes and
// durations unchanged.
type Generator struct {
	// Seed selects the workload; the same Generator always yields the same
	// jobs.
	Seed uint64
	// Jobs is the number of jobs to generate; it must not be negative.
	Jobs int
	// Rate is the mean arrival rate in jobs per hour of a Poisson process
	// starting at time zero: inter-arrival times are −ln(1−U)·3600/Rate
	// seconds and the first job arrives one such interval after zero. Zero
	// means every job arrives at time zero (a static trace, as in Gavel's
	// makespan experiments).
	Rate float64
	// MultiGPU draws scale factors 1, 2, 4 and 8 with probability 70, 10,
	// 15 and 5 % (Gavel's --generate-multi-gpu-jobs); otherwise every job
	// uses one GPU.
	MultiGPU bool
	// Priorities gives 20 % of the jobs weight 5 and the rest weight 1
	// (Gavel's --generate-multi-priority-jobs); otherwise all weigh 1.
	Priorities bool
	// SLOs gives every job a deadline of arrival + f·duration, f drawn
	// uniformly from {1.2, 2, 10}; otherwise jobs have no deadline.
	SLOs bool
	// Profile supplies the templates and their throughputs; the zero value
	// means DefaultProfile.
	Profile Profile
}

// referenceAccelerator is the type on which generated durations are
// measured, as in Gavel.
const referenceAccelerator allocation.Accelerator = "v100"

// Seed-derived random streams, one per drawn attribute.
const (
	streamScale uint64 = iota + 0x9e3779b97f4a7c15
	streamDuration
	streamTemplate
	streamWeight
	streamSLO
	streamArrival
)

// maxGeneratedSeconds keeps arrivals and deadlines well inside time.Duration.
const maxGeneratedSeconds = 1e9

// Generate draws the workload. It fails if Jobs or Rate is out of range, the
// profile is invalid, or no template of the profile can run at a drawn
// scale factor.
func (g Generator) Generate() ([]policy.Job, error) {
	jobs, _, err := g.GenerateTemplates()
	return jobs, err
}

// GenerateTemplates draws the workload as Generate does, and returns with
// it the template each job trains, by index: what a model of co-location
// (Colocation) needs to know which jobs share GPUs well.
func (g Generator) GenerateTemplates() ([]policy.Job, []string, error) {
	switch {
	case g.Jobs < 0:
		return nil, nil, fmt.Errorf("sim: generator: jobs: %d is negative", g.Jobs)
	case math.IsNaN(g.Rate) || math.IsInf(g.Rate, 0) || g.Rate < 0:
		return nil, nil, fmt.Errorf("sim: generator: rate: %v is not a finite non-negative number", g.Rate)
	}
	p := g.Profile
	if p.IsZero() {
		p = DefaultProfile()
	}
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("sim: generator: %w", err)
	}
	if g.Jobs == 0 {
		return []policy.Job{}, []string{}, nil
	}
	accs := p.Accelerators()
	candidates := map[int][]int{} // scale factor -> indices into p.Templates
	candidatesFor := func(s int) ([]int, error) {
		if c, ok := candidates[s]; ok {
			return c, nil
		}
		var c []int
		for i, t := range p.Templates {
			if (s == 1 || t.Distributed) && referenceThroughput(p, accs, t.Name, s) > 0 {
				c = append(c, i)
			}
		}
		if len(c) == 0 {
			return nil, fmt.Errorf("sim: generator: %w on %d GPU(s)", errNoRunnableTemplate, s)
		}
		candidates[s] = c
		return c, nil
	}

	stream := func(k uint64) *rand.Rand { return rand.New(rand.NewPCG(g.Seed, k)) }
	rScale, rDuration, rTemplate := stream(streamScale), stream(streamDuration), stream(streamTemplate)
	rWeight, rSLO, rArrival := stream(streamWeight), stream(streamSLO), stream(streamArrival)

	jobs, templates := make([]policy.Job, g.Jobs), make([]string, g.Jobs)
	arrival := 0.0
	for i := range jobs {
		s := drawScale(rScale)
		if !g.MultiGPU {
			s = 1
		}
		duration := drawDuration(rDuration)
		c, err := candidatesFor(s)
		if err != nil {
			return nil, nil, err
		}
		t := p.Templates[c[rTemplate.IntN(len(c))]]
		if g.Rate > 0 {
			arrival += interArrival(rArrival, 3600/g.Rate)
			if arrival > maxGeneratedSeconds {
				return nil, nil, fmt.Errorf("sim: generator: rate: %v jobs/hour puts job %d's arrival beyond %g s", g.Rate, i, float64(maxGeneratedSeconds))
			}
		}
		tp := make(map[allocation.Accelerator]float64, len(accs))
		for _, a := range accs {
			tp[a] = p.Throughput(t.Name, a, s)
		}
		j := policy.Job{
			ID:         fmt.Sprintf("job-%05d", i),
			Weight:     1,
			GPUs:       s,
			Arrival:    workloadSeconds(arrival),
			Throughput: tp,
			StepsTotal: duration * referenceThroughput(p, accs, t.Name, s),
		}
		if g.Priorities && rWeight.Float64() < 0.2 {
			j.Weight = 5
		}
		if g.SLOs {
			f := sloFactors[rSLO.IntN(len(sloFactors))]
			j.Deadline = workloadSeconds(arrival + f*duration)
		}
		jobs[i], templates[i] = j, t.Name
	}
	return jobs, templates, nil
}

var errNoRunnableTemplate = errors.New("no template of the profile can run")

// sloFactors are the deadline slacks Gavel draws from.
var sloFactors = [...]float64{1.2, 2, 10}

// referenceThroughput returns the throughput on which a template's duration
// is measured: on s "v100" GPUs, or if that is zero on s GPUs of its fastest
// type.
func referenceThroughput(p Profile, accs []allocation.Accelerator, template string, s int) float64 {
	if v := p.Throughput(template, referenceAccelerator, s); v > 0 {
		return v
	}
	best := 0.0
	for _, a := range accs {
		best = max(best, p.Throughput(template, a, s))
	}
	return best
}

// drawScale draws a scale factor as Gavel does: 1, 2, 4 or 8 with
// probability 0.7, 0.1, 0.15 and 0.05.
func drawScale(r *rand.Rand) int {
	switch u := r.Float64(); {
	case u < 0.7:
		return 1
	case u <= 0.8:
		return 2
	case u <= 0.95:
		return 4
	default:
		return 8
	}
}

// drawDuration draws a job duration in seconds: with probability 0.8
// 60·10^U(1.5, 3), else 60·10^U(3, 4).
func drawDuration(r *rand.Rand) float64 {
	lo, hi := 3.0, 4.0
	if r.Float64() < 0.8 {
		lo, hi = 1.5, 3
	}
	return 60 * math.Pow(10, lo+(hi-lo)*r.Float64())
}

// interArrival draws an exponential inter-arrival time with mean seconds:
// −ln(1−U)·mean.
func interArrival(r *rand.Rand, mean float64) float64 {
	return -math.Log(1-r.Float64()) * mean
}

// workloadSeconds converts seconds to a Duration, rounding to the nanosecond.
func workloadSeconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
