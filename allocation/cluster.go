package allocation

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Accelerator names a type of accelerator, e.g. "v100". Names are compared
// exactly; by convention they are lower case.
type Accelerator string

// Server is one machine of the cluster. All its GPUs are of one type.
type Server struct {
	ID          string      `json:"id"`
	Accelerator Accelerator `json:"accelerator"`
	GPUs        int         `json:"gpus"`
	// CPUs is the number of CPU cores; zero means unknown.
	CPUs float64 `json:"cpus,omitempty"`
	// MemoryGB is the DRAM in GB; zero means unknown.
	MemoryGB float64 `json:"memory_gb,omitempty"`
}

// Cluster is the set of servers a policy allocates. The zero value is an
// empty cluster.
type Cluster struct {
	Servers []Server `json:"servers"`
}

// MaxServerGPUs bounds a server's GPU count, so that no sum of GPUs can
// overflow.
const MaxServerGPUs = 1 << 20

// ErrInvalid reports a malformed cluster or allocation.
var ErrInvalid = errors.New("invalid")

// ErrOverCapacity reports an allocation that uses more of a resource than the
// cluster has.
var ErrOverCapacity = errors.New("over capacity")

// Validate reports whether every server has a unique non-empty ID, a named
// accelerator and finite non-negative resources.
func (c Cluster) Validate() error {
	seen := make(map[string]bool, len(c.Servers))
	for i, s := range c.Servers {
		switch {
		case s.ID == "":
			return fmt.Errorf("%w cluster: server %d: id: empty", ErrInvalid, i)
		case seen[s.ID]:
			return fmt.Errorf("%w cluster: server %q: id: duplicate", ErrInvalid, s.ID)
		case s.Accelerator == "":
			return fmt.Errorf("%w cluster: server %q: accelerator: empty", ErrInvalid, s.ID)
		case s.GPUs < 0 || s.GPUs > MaxServerGPUs:
			return fmt.Errorf("%w cluster: server %q: gpus: %d is outside [0, %d]", ErrInvalid, s.ID, s.GPUs, MaxServerGPUs)
		case !finiteNonNeg(s.CPUs):
			return fmt.Errorf("%w cluster: server %q: cpus: %v is not a finite non-negative number", ErrInvalid, s.ID, s.CPUs)
		case !finiteNonNeg(s.MemoryGB):
			return fmt.Errorf("%w cluster: server %q: memory_gb: %v is not a finite non-negative number", ErrInvalid, s.ID, s.MemoryGB)
		}
		seen[s.ID] = true
	}
	return nil
}

// Types returns the accelerator types present in the cluster, sorted by name.
// A type whose servers have no GPUs is still listed.
func (c Cluster) Types() []Accelerator {
	var ts []Accelerator // nil for no servers
	for _, s := range c.Servers {
		// Servers of a type usually come together: sort only each run's first.
		switch n := len(ts); {
		case n == 0:
			ts = append(make([]Accelerator, 0, 4), s.Accelerator)
		case ts[n-1] != s.Accelerator:
			ts = append(ts, s.Accelerator)
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// GPUs returns the number of GPUs of type a.
func (c Cluster) GPUs(a Accelerator) int {
	n := 0
	for _, s := range c.Servers {
		if s.Accelerator == a {
			n += s.GPUs
		}
	}
	return n
}

// WorkerGPUs returns how many GPUs of type a workers of w GPUs each can
// use, every worker on one server: Σ over the type's servers of ⌊GPUs/w⌋·w.
// For w ≤ 1 it is GPUs(a).
func (c Cluster) WorkerGPUs(a Accelerator, w int) int {
	n := 0
	for _, s := range c.Servers {
		if s.Accelerator == a {
			n += s.GPUs / max(w, 1) * max(w, 1)
		}
	}
	return n
}

// TotalGPUs returns the number of GPUs of all types.
func (c Cluster) TotalGPUs() int {
	n := 0
	for _, s := range c.Servers {
		n += s.GPUs
	}
	return n
}

// CPUs returns the total number of CPU cores.
func (c Cluster) CPUs() float64 {
	var n float64
	for _, s := range c.Servers {
		n += s.CPUs
	}
	return n
}

// MemoryGB returns the total memory in GB.
func (c Cluster) MemoryGB() float64 {
	var n float64
	for _, s := range c.Servers {
		n += s.MemoryGB
	}
	return n
}

// Server returns the server with the given ID.
func (c Cluster) Server(id string) (Server, bool) {
	for _, s := range c.Servers {
		if s.ID == id {
			return s, true
		}
	}
	return Server{}, false
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

// Assignment is part of a concrete placement: GPUs of one server given to a job.
type Assignment struct {
	Server string `json:"server"`
	GPUs   int    `json:"gpus"`
}
