package throughput

import "math"

// tiny stands for "zero" inside the model, as in the paper's code: it keeps
// every logarithm finite and the fit's gradient defined.
const tiny = 1e-8

// Params are the parameters of the iteration-time model, in seconds.
//
// A micro-step of m examples on one GPU computes for
//
//	T_accum(m) = α_c + β_c·m,
//
// and a synchronising step on K GPUs spread over N nodes communicates for
//
//	T_net(N, K) = α_n + β_n·max(K−2, 0)   if N > 1 (across nodes),
//	            = α_r + β_r·max(K−2, 0)   if N = 1 and K > 1 (within a node),
//	            = 0                        if K = 1,
//
// overlapping the two with exponent γ ≥ 1 (γ = 1: no overlap; γ → ∞: the
// slower of the two):
//
//	T_optim = (T_accum^γ + T_net^γ)^(1/γ).
//
// A step with s extra accumulation micro-steps takes
// T_iter = s·T_accum + T_optim and processes K·m·(s+1) examples.
//
// A Gamma of zero counts as 1.
type Params struct {
	AlphaC float64 `json:"alpha_c"`
	BetaC  float64 `json:"beta_c"`
	AlphaN float64 `json:"alpha_n"`
	BetaN  float64 `json:"beta_n"`
	AlphaR float64 `json:"alpha_r"`
	BetaR  float64 `json:"beta_r"`
	Gamma  float64 `json:"gamma"`
}

// AccumTime returns T_accum(m), the time of one micro-step of m examples.
func (p Params) AccumTime(m float64) float64 {
	return p.AlphaC + p.BetaC*m
}

// NetworkTime returns T_net(N, K), the synchronisation time of K GPUs on N
// nodes. As in the paper's code, the zero cases are tiny positive times,
// so that the model stays smooth in log space.
func (p Params) NetworkTime(nodes, replicas int) float64 {
	alpha, beta := tiny, tiny
	switch {
	case nodes > 1:
		alpha, beta = p.AlphaN, p.BetaN
	case replicas > 1:
		alpha, beta = p.AlphaR, p.BetaR
	}
	return alpha + beta*math.Max(float64(replicas-2), tiny)
}

// OptimTime returns T_optim, the time of the synchronising step with m
// examples per GPU.
func (p Params) OptimTime(nodes, replicas int, m float64) float64 {
	g := p.gamma()
	a, n := p.AccumTime(m), p.NetworkTime(nodes, replicas)
	// Factor out the larger term so that a large γ cannot overflow.
	hi := math.Max(a, n)
	if hi <= 0 {
		return 0
	}
	return hi * math.Pow(math.Pow(a/hi, g)+math.Pow(n/hi, g), 1/g)
}

// IterTime returns T_iter = s·T_accum + T_optim for a step with accum extra
// micro-steps of m examples on each of replicas GPUs over nodes nodes.
func (p Params) IterTime(nodes, replicas int, m float64, accum int) float64 {
	return float64(accum)*p.AccumTime(m) + p.OptimTime(nodes, replicas, m)
}

// Throughput returns the examples per second, K·m·(s+1)/T_iter, or zero
// when the placement is empty or the predicted time is not positive.
func (p Params) Throughput(nodes, replicas int, m float64, accum int) float64 {
	if nodes <= 0 || replicas <= 0 || m <= 0 || accum < 0 {
		return 0
	}
	t := p.IterTime(nodes, replicas, m, accum)
	if !(t > 0) {
		return 0
	}
	return float64(replicas) * m * float64(accum+1) / t
}

func (p Params) gamma() float64 {
	if p.Gamma == 0 {
		return 1
	}
	return p.Gamma
}
