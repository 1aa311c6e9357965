package gavel

import (
	"encoding/binary"
	"maps"
	"math"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// classes partitions a program's jobs into classes of interchangeable jobs:
// the same GPUs, weight and throughput row as the program sees them. A
// policy whose program is symmetric in such jobs (max-min fairness and
// water-filling without space sharing, max-throughput and min-cost without
// deadline constraints) solves over one row per class
// (allocation.NewClasses), whose size is then the number of classes, not of
// jobs: Gavel's generator draws thousands of jobs from about a hundred and
// fifty (template, scale factor, priority) combinations.
type classes struct {
	jobs  []*policy.Job // every job, in the order given
	of    []int         // of[i] is the class of jobs[i]
	first []int         // first[c] is the index of class c's first member
	count []int         // count[c] is class c's number of members
	keys  []string      // keys[c] identifies class c across decisions (warm starts)
}

// classify groups jobs by GPUs, effective weight and their row of tput (one
// entry per type), numbering classes in the order of their first member.
func classify(jobs []*policy.Job, tput [][]float64) *classes {
	cl := &classes{jobs: jobs, of: make([]int, len(jobs))}
	index := make(map[string]int)
	var buf []byte
	for i, j := range jobs {
		buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(j.GPUs))
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(j.EffectiveWeight()))
		for _, x := range tput[i] {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
		c, ok := index[string(buf)]
		if !ok {
			c = len(cl.first)
			key := string(buf)
			index[key] = c
			cl.first = append(cl.first, i)
			cl.count = append(cl.count, 0)
			cl.keys = append(cl.keys, key)
		}
		cl.of[i] = c
		cl.count[c]++
	}
	return cl
}

// reps returns each class's first member.
func (cl *classes) reps() []*policy.Job {
	out := make([]*policy.Job, len(cl.first))
	for c, i := range cl.first {
		out[c] = cl.jobs[i]
	}
	return out
}

// expand turns an Allocation keyed by class keys, which it consumes, into
// one keyed by job IDs: every member of a class gets its class's shares, the
// first member the class's own map and the others copies. A nil cl (rows
// that are the jobs) returns a as it is.
func (cl *classes) expand(a allocation.Allocation) allocation.Allocation {
	if cl == nil {
		return a
	}
	out := make(allocation.Allocation, len(cl.jobs))
	for i, j := range cl.jobs {
		c := cl.of[i]
		g := a[cl.keys[c]]
		if cl.first[c] != i {
			g.Shares = maps.Clone(g.Shares)
		}
		out[j.ID] = g
	}
	return out
}
