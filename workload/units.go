package workload

import (
	"math"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
)

// Throughput is the speed of job j in run with no model beyond the facts
// it carries, the engine's default: its Throughput on the run's type, or
// its Colocated throughput with the partner when the run is a pair.
func Throughput(j *policy.Job, run placement.Run) float64 {
	if run.Partner == "" {
		return j.Throughput[run.Accelerator]
	}
	other := run.Partner
	if j.ID == run.Partner {
		other = run.Job
	}
	return j.Colocated[other][run.Accelerator]
}

func sumGPUs(as []allocation.Assignment) int {
	n := 0
	for _, a := range as {
		n += a.GPUs
	}
	return n
}

// seconds converts float seconds to a Duration, saturating at the largest.
func seconds(s float64) time.Duration {
	if s >= math.MaxInt64/1e9 {
		return math.MaxInt64
	}
	return time.Duration(math.Round(s * 1e9))
}
