package workload

import (
	"math"
	"time"

	"github.com/dlsched/dlsched/allocation"
)

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
