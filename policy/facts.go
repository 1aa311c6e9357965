package policy

import (
	"math/bits"
	"strings"
)

// Facts is a set of the optional facts a snapshot can carry about its jobs
// and cluster, beyond the ones every policy reads (ID, GPUs, worker shape,
// arrival, attained service, placement). A policy says which of them it
// reads through Reader, so that a comparison can say, for each policy,
// which facts of the workload it ignores and which it needs but lacks.
type Facts uint16

// The facts, one bit each.
const (
	// FactHeterogeneity: Job.Throughput differs across accelerator types.
	FactHeterogeneity Facts = 1 << iota
	// FactLength: Job.StepsTotal, the job's length.
	FactLength
	// FactWeight: Job.Weight other than 1.
	FactWeight
	// FactTenant: Job.Tenant.
	FactTenant
	// FactDeadline: Job.Deadline.
	FactDeadline
	// FactColocation: Job.Colocated, throughputs when sharing GPUs.
	FactColocation
	// FactSkew: Job.Skew, the model's tensor-size skew.
	FactSkew
	// FactElastic: Job.Elastic, the facts of a job whose GPUs and batch
	// size the scheduler may change.
	FactElastic
	// FactAdaptive: Job.Adaptive, a job that changes its own batch size.
	FactAdaptive
	// FactResources: Job.Sensitivity and servers' CPUs and memory.
	FactResources
	// FactBatch: an elastic job whose batch size the scheduler may raise
	// (Elastic.MaxBatchSize above BatchSize), with the gradient statistics
	// that say how efficiently.
	FactBatch
)

var factNames = [...]string{
	"heterogeneity", "length", "weight", "tenant", "deadline",
	"colocation", "skew", "elastic", "adaptive", "resources", "batch",
}

// String lists the facts by name, separated by commas, in bit order.
func (f Facts) String() string {
	var names []string
	for f != 0 {
		i := bits.TrailingZeros16(uint16(f))
		f &^= 1 << i
		if i < len(factNames) {
			names = append(names, factNames[i])
		}
	}
	return strings.Join(names, ", ")
}

// Reader is implemented by policies that say which facts they read: uses
// is every fact that can change their decision, needs the subset without
// which they fall back to a documented default (and so no longer behave as
// their system). A policy that does not implement Reader reads none.
type Reader interface {
	Facts() (uses, needs Facts)
}

// FactsOf returns what p reads, or none if p is not a Reader.
func FactsOf(p Policy) (uses, needs Facts) {
	if r, ok := p.(Reader); ok {
		uses, needs = r.Facts()
	}
	return uses, needs
}

// Present returns the facts the snapshot carries: a fact is present when
// at least one job (or, for resources, a server and a job) carries it.
func Present(s *Snapshot) Facts {
	var f Facts
	cpu := false
	for _, srv := range s.Cluster.Servers {
		cpu = cpu || srv.CPUs > 0 || srv.MemoryGB > 0
	}
	for i := range s.Jobs {
		f |= jobFacts(&s.Jobs[i])
	}
	if !cpu {
		f &^= FactResources
	}
	return f
}

func jobFacts(j *Job) Facts {
	var f Facts
	var first float64
	for _, x := range j.Throughput {
		if first == 0 {
			first = x
		} else if x != first {
			f |= FactHeterogeneity
		}
	}
	set := func(ok bool, fact Facts) {
		if ok {
			f |= fact
		}
	}
	set(j.StepsTotal > 0, FactLength)
	set(j.Weight > 0 && j.Weight != 1, FactWeight)
	set(j.Tenant != "", FactTenant)
	set(j.Deadline > 0, FactDeadline)
	set(len(j.Colocated) > 0, FactColocation)
	set(j.Skew > 0, FactSkew)
	set(j.Elastic != nil, FactElastic)
	set(j.Elastic != nil && j.Elastic.MaxBatchSize > j.Elastic.BatchSize, FactBatch)
	set(j.Adaptive != nil, FactAdaptive)
	set(j.Sensitivity != nil, FactResources)
	return f
}

// Notes says how a policy's reading of facts meets a workload's: the facts
// it needs that the workload lacks, and the facts the workload carries that
// it ignores. Both are empty when they match.
func Notes(p Policy, present Facts) (lacks, ignores Facts) {
	uses, needs := FactsOf(p)
	return needs &^ present, present &^ uses
}
