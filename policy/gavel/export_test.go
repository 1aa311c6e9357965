package gavel

import "github.com/dlsched/dlsched/policy"

// Terms lets the external tests recompute max-min terms independently of the LP.
var Terms = terms

// Warm reports a policy's Warm switch, through the Rounds that wraps it;
// false for a policy without one.
func Warm(p policy.Policy) bool {
	if r, ok := p.(*policy.Rounds); ok {
		p = r.Shares
	}
	switch q := p.(type) {
	case *MaxMinFairness:
		return q.Warm
	case *FinishTimeFairness:
		return q.Warm
	case *Makespan:
		return q.Warm
	case *MaxThroughput:
		return q.Warm
	case *MinCost:
		return q.Warm
	case *WaterFilling:
		return q.Warm
	case *Hierarchical:
		return q.Warm
	}
	return false
}
