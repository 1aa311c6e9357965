package efficiency

// Speedup is a job's speedup function: the best goodput on a placement
// relative to the best goodput on a base placement,
//
//	SPEEDUP(N, K) = Optimize(N, K).Goodput / Optimize(N₀, K₀).Goodput,
//
// with SPEEDUP(0, 0) = 0. The paper's scheduler uses the base (1, 1); its
// simulator uses the job's fair share of the cluster, which only rescales
// every speedup of a job. Results are memoised, so a Speedup is not safe for
// concurrent use.
type Speedup struct {
	goodput Goodput
	limits  Limits
	base    float64
	memo    map[[2]int]float64
}

// NewSpeedup returns the speedup function of g under l relative to the
// placement (baseNodes, baseReplicas). If the base placement allows no
// configuration, the best goodput on one GPU is the base instead, and if
// that is not allowed either, every speedup is zero.
func NewSpeedup(g Goodput, l Limits, baseNodes, baseReplicas int) *Speedup {
	s := &Speedup{goodput: g, limits: l, memo: make(map[[2]int]float64)}
	c, ok := g.Optimize(baseNodes, baseReplicas, l)
	if !ok || c.Goodput <= 0 {
		c, ok = g.Optimize(1, 1, l)
	}
	if ok && c.Goodput > 0 {
		s.base = c.Goodput
	}
	return s
}

// At returns SPEEDUP(nodes, replicas); it is zero for an empty or invalid
// placement (not 0 < nodes ≤ replicas) and for one that allows no
// configuration.
func (s *Speedup) At(nodes, replicas int) float64 {
	if nodes <= 0 || replicas < nodes || s.base == 0 {
		return 0
	}
	key := [2]int{nodes, replicas}
	if v, ok := s.memo[key]; ok {
		return v
	}
	v := 0.0
	if c, ok := s.goodput.Optimize(nodes, replicas, s.limits); ok {
		v = c.Goodput / s.base
	}
	s.memo[key] = v
	return v
}

// Config returns the goodput-optimal configuration for the placement, as
// Optimize does.
func (s *Speedup) Config(nodes, replicas int) (Config, bool) {
	return s.goodput.Optimize(nodes, replicas, s.limits)
}
