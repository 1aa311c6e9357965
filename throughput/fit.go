package throughput

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// Sample is one measurement of a job's step times on a placement.
type Sample struct {
	// Nodes and Replicas describe the placement: Replicas GPUs over Nodes
	// nodes.
	Nodes    int `json:"nodes"`
	Replicas int `json:"replicas"`
	// LocalBatch is the per-GPU batch of one micro-step, m.
	LocalBatch float64 `json:"local_batch"`
	// AccumTime is the measured time of a micro-step without
	// synchronisation, and OptimTime that of a synchronising step, in
	// seconds.
	AccumTime float64 `json:"accum_time"`
	OptimTime float64 `json:"optim_time"`
}

// Bounds of the fitted parameters, as in the paper's code.
const (
	// MinParam is the lower bound of the six α/β parameters (they have no
	// upper bound).
	MinParam = tiny
	// MinGamma and MaxGamma bound the overlap exponent γ.
	MinGamma = 1.0
	MaxGamma = 10.0
)

// Regularisation weights of the loss.
const (
	gammaWeight = 1e-3 // weight of (γ−1)²
	retroWeight = 1e-2 // weight of (β_n/α_n)² + (β_r/α_r)²
)

// Indices of the parameter vector, in the order of the paper's PerfParams.
const (
	iAlphaC = iota
	iBetaC
	iAlphaN
	iBetaN
	iAlphaR
	iBetaR
	iGamma
	nParams
)

// initial are the paper's starting values.
var initial = [nParams]float64{0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001}

func toVec(p Params) [nParams]float64 {
	return [nParams]float64{p.AlphaC, p.BetaC, p.AlphaN, p.BetaN, p.AlphaR, p.BetaR, p.Gamma}
}

func fromVec(v [nParams]float64) Params {
	return Params{
		AlphaC: v[iAlphaC], BetaC: v[iBetaC],
		AlphaN: v[iAlphaN], BetaN: v[iBetaN],
		AlphaR: v[iAlphaR], BetaR: v[iBetaR],
		Gamma: v[iGamma],
	}
}

// Loss is the fit's objective, as in the paper's code:
//
//	RMSE(log T_accum(m_i), log AccumTime_i)
//	  + RMSE(log T_optim(N_i, K_i, m_i), log OptimTime_i)
//	  + 1e-3·(γ−1)² + 1e-2·((β_n/α_n)² + (β_r/α_r)²).
//
// The two RMSEs are added as they are, not squared. With no samples only
// the regularisation terms remain. A Gamma of zero counts as 1, as in
// [Params]. Loss does not validate samples: a non-positive time gives NaN.
func Loss(p Params, samples []Sample) float64 {
	var s1, s2 float64
	for _, s := range samples {
		d1 := math.Log(p.AccumTime(s.LocalBatch)) - math.Log(s.AccumTime)
		d2 := math.Log(p.OptimTime(s.Nodes, s.Replicas, s.LocalBatch)) - math.Log(s.OptimTime)
		s1 += d1 * d1
		s2 += d2 * d2
	}
	var loss float64
	if n := float64(len(samples)); n > 0 {
		loss = math.Sqrt(s1/n) + math.Sqrt(s2/n)
	}
	g := p.gamma()
	loss += gammaWeight * (g - 1) * (g - 1)
	rn, rr := p.BetaN/p.AlphaN, p.BetaR/p.AlphaR
	return loss + retroWeight*(rn*rn+rr*rr)
}

// Fit returns the parameters that best explain samples: it minimises
// [Loss] with L-BFGS from three starting points, the α/β bounded below by
// [MinParam] and γ to [[MinGamma], [MaxGamma]], after pinning the parameters that samples
// cannot identify, and then applies the paper's prior that inter-node
// synchronisation is at least 10 % slower than intra-node synchronisation
// when no sample spans several nodes. The package documentation details
// the rules. Fit is deterministic and safe for concurrent use.
//
// Fit returns an error, naming the first offending sample and field, when
// samples is empty or a sample has Nodes < 1, Replicas < Nodes, a
// LocalBatch that is not positive and finite, or a time that is not
// positive and finite.
func Fit(samples []Sample) (Params, error) {
	if err := validate(samples); err != nil {
		return Params{}, err
	}
	obj := newObjective(samples)

	start, pinned, multiNode := pinning(samples)
	for i := range nParams {
		if !pinned[i] {
			obj.free = append(obj.free, i)
		}
	}
	obj.fixed = start

	best, bestLoss := start, obj.value(start, nil)
	for _, x0 := range starts(start, pinned, samples) {
		p, loss := obj.minimize(x0)
		if loss < bestLoss || math.IsNaN(bestLoss) {
			best, bestLoss = p, loss
		}
	}

	if !multiNode { // post-fit prior
		best[iAlphaN] = math.Max(best[iAlphaN], 1.1*best[iAlphaR])
		best[iBetaN] = math.Max(best[iBetaN], 1.1*best[iBetaR])
	}
	return fromVec(best), nil
}

// pinning applies the paper's four rules: it returns the starting point
// (the paper's initial values with the pinned entries replaced), which
// entries are pinned, and whether some sample spans several nodes.
func pinning(samples []Sample) (start [nParams]float64, pinned [nParams]bool, multiNode bool) {
	start = initial
	batches := map[float64]bool{}
	var multiLocal, beyondTwo bool
	var accumSum float64
	for _, s := range samples {
		batches[s.LocalBatch] = true
		multiNode = multiNode || s.Nodes > 1
		multiLocal = multiLocal || (s.Nodes == 1 && s.Replicas > 1)
		beyondTwo = beyondTwo || s.Replicas > 2
		accumSum += s.AccumTime
	}
	pin := func(i int, v float64) {
		pinned[i] = true
		start[i] = v
	}
	if len(batches) == 1 { // rule 1: α_c takes half the compute time
		pin(iAlphaC, accumSum/float64(len(samples))/2)
	}
	if !multiNode { // rule 2: no inter-node sample
		pin(iAlphaN, tiny)
		pin(iBetaN, tiny)
	}
	if !multiLocal { // rule 3: no intra-node sample
		pin(iAlphaR, tiny)
		pin(iBetaR, tiny)
	}
	if !beyondTwo { // rule 4: no retrogression observable
		pin(iBetaN, tiny)
		pin(iBetaR, tiny)
	}
	return start, pinned, multiNode
}

func validate(samples []Sample) error {
	if len(samples) == 0 {
		return fmt.Errorf("throughput: Fit: no samples")
	}
	positive := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	for i, s := range samples {
		switch {
		case s.Nodes < 1:
			return fmt.Errorf("throughput: Fit: sample %d: Nodes = %d, want ≥ 1", i, s.Nodes)
		case s.Replicas < s.Nodes:
			return fmt.Errorf("throughput: Fit: sample %d: Replicas = %d, want ≥ Nodes = %d", i, s.Replicas, s.Nodes)
		case !positive(s.LocalBatch):
			return fmt.Errorf("throughput: Fit: sample %d: LocalBatch = %v, want positive and finite", i, s.LocalBatch)
		case !positive(s.AccumTime):
			return fmt.Errorf("throughput: Fit: sample %d: AccumTime = %v, want positive and finite", i, s.AccumTime)
		case !positive(s.OptimTime):
			return fmt.Errorf("throughput: Fit: sample %d: OptimTime = %v, want positive and finite", i, s.OptimTime)
		}
	}
	return nil
}

// starts returns the starting points of the L-BFGS runs: the paper's, the
// paper's with a larger γ (γ = 1.001 sits where the sigmoid that bounds it
// is flat), and one scaled to the measured times. Pinned entries keep
// their pinned values.
func starts(paper [nParams]float64, pinned [nParams]bool, samples []Sample) [][nParams]float64 {
	var sumA, sumM float64
	for _, s := range samples {
		sumA += s.AccumTime
		sumM += s.LocalBatch
	}
	n := float64(len(samples))
	a, m := sumA/n, sumM/n
	scaled := [nParams]float64{a / 2, a / 2 / m, a / 2, a / 20, a / 4, a / 40, 1.5}
	wide := paper
	wide[iGamma] = 2
	out := [][nParams]float64{paper, wide, scaled}
	for k := range out {
		for i := range nParams {
			if pinned[i] {
				out[k][i] = paper[i]
			}
			if i != iGamma && !(out[k][i] > tiny) || math.IsInf(out[k][i], 0) {
				out[k][i] = paper[i] // keep the reparametrisation finite
			}
		}
	}
	return out
}

// group gathers the samples of one placement and local batch: the sum of
// squared log errors over its samples is c·(pred − mean)² + ss.
type group struct {
	nodes, replicas int
	m               float64
	c               float64 // number of samples
	meanA, meanO    float64 // mean log measured times
}

// objective evaluates Loss and its gradient on grouped samples.
type objective struct {
	groups   []group
	n        float64 // number of samples
	ssA, ssO float64 // within-group sums of squared log deviations
	fixed    [nParams]float64
	free     []int // indices of the optimised parameters
}

func newObjective(samples []Sample) *objective {
	type key struct {
		nodes, replicas int
		m               float64
	}
	index := map[key]int{}
	o := &objective{n: float64(len(samples))}
	member := make([]int, len(samples))
	for i, s := range samples {
		k := key{s.Nodes, s.Replicas, s.LocalBatch}
		j, ok := index[k]
		if !ok {
			j = len(o.groups)
			index[k] = j
			o.groups = append(o.groups, group{nodes: s.Nodes, replicas: s.Replicas, m: s.LocalBatch})
		}
		member[i] = j
		g := &o.groups[j]
		g.c++
		g.meanA += math.Log(s.AccumTime)
		g.meanO += math.Log(s.OptimTime)
	}
	for j := range o.groups {
		o.groups[j].meanA /= o.groups[j].c
		o.groups[j].meanO /= o.groups[j].c
	}
	for i, s := range samples {
		g := &o.groups[member[i]]
		da, do := math.Log(s.AccumTime)-g.meanA, math.Log(s.OptimTime)-g.meanO
		o.ssA += da * da
		o.ssO += do * do
	}
	return o
}

// value returns the loss at p and, if grad is not nil, stores its gradient
// with respect to p in grad.
func (o *objective) value(p [nParams]float64, grad *[nParams]float64) float64 {
	g := p[iGamma]
	s1, s2 := o.ssA, o.ssO
	var d1, d2 [nParams]float64 // gradients of s1 and s2
	for _, gr := range o.groups {
		a := p[iAlphaC] + p[iBetaC]*gr.m
		la := math.Log(a)
		r1 := la - gr.meanA
		s1 += gr.c * r1 * r1

		ia, ib := -1, -1
		alpha, beta := tiny, tiny
		switch {
		case gr.nodes > 1:
			ia, ib = iAlphaN, iBetaN
		case gr.replicas > 1:
			ia, ib = iAlphaR, iBetaR
		}
		if ia >= 0 {
			alpha, beta = p[ia], p[ib]
		}
		x := math.Max(float64(gr.replicas-2), tiny)
		net := alpha + beta*x
		ln := math.Log(net)

		// log T_optim = log(e^{γ·log a} + e^{γ·log net})/γ, stably.
		ga, gn := g*la, g*ln
		hi := math.Max(ga, gn)
		ea, en := math.Exp(ga-hi), math.Exp(gn-hi)
		lse := hi + math.Log(ea+en)
		lo := lse / g
		r2 := lo - gr.meanO
		s2 += gr.c * r2 * r2
		if grad == nil {
			continue
		}
		wa, wn := ea/(ea+en), en/(ea+en)
		c1, c2 := 2*gr.c*r1, 2*gr.c*r2
		d1[iAlphaC] += c1 / a
		d1[iBetaC] += c1 * gr.m / a
		dloA := wa / a
		d2[iAlphaC] += c2 * dloA
		d2[iBetaC] += c2 * dloA * gr.m
		if ia >= 0 {
			dloN := wn / net
			d2[ia] += c2 * dloN
			d2[ib] += c2 * dloN * x
		}
		d2[iGamma] += c2 * (-lo + wa*la + wn*ln) / g
	}
	e1, e2 := math.Sqrt(s1/o.n), math.Sqrt(s2/o.n)
	rn, rr := p[iBetaN]/p[iAlphaN], p[iBetaR]/p[iAlphaR]
	loss := e1 + e2 + gammaWeight*(g-1)*(g-1) + retroWeight*(rn*rn+rr*rr)
	if grad == nil {
		return loss
	}
	// d√(s/n) = ds/(2n√(s/n)); at an exact fit take the zero subgradient.
	var k1, k2 float64
	if e1 > 0 {
		k1 = 1 / (2 * o.n * e1)
	}
	if e2 > 0 {
		k2 = 1 / (2 * o.n * e2)
	}
	for i := range nParams {
		grad[i] = k1*d1[i] + k2*d2[i]
	}
	grad[iGamma] += 2 * gammaWeight * (g - 1)
	grad[iAlphaN] -= 2 * retroWeight * rn * rn / p[iAlphaN]
	grad[iBetaN] += 2 * retroWeight * rn / p[iAlphaN]
	grad[iAlphaR] -= 2 * retroWeight * rr * rr / p[iAlphaR]
	grad[iBetaR] += 2 * retroWeight * rr / p[iAlphaR]
	return loss
}

// The free parameters are optimised unconstrained through
// p = tiny + exp(u) for the α/β and γ = 1 + 9·sigmoid(v).

func (o *objective) params(x []float64) [nParams]float64 {
	p := o.fixed
	for k, i := range o.free {
		if i == iGamma {
			p[i] = MinGamma + (MaxGamma-MinGamma)*sigmoid(x[k])
		} else {
			p[i] = tiny + math.Exp(x[k])
		}
	}
	return p
}

func (o *objective) unconstrained(p [nParams]float64) []float64 {
	x := make([]float64, len(o.free))
	for k, i := range o.free {
		if i == iGamma {
			t := (p[i] - MinGamma) / (MaxGamma - MinGamma)
			t = math.Min(math.Max(t, 1e-9), 1-1e-9)
			x[k] = math.Log(t / (1 - t))
		} else {
			x[k] = math.Log(p[i] - tiny)
		}
	}
	return x
}

func sigmoid(v float64) float64 {
	if v >= 0 {
		return 1 / (1 + math.Exp(-v))
	}
	e := math.Exp(v)
	return e / (1 + e)
}

// evalX returns the loss at the unconstrained point x and, if grad is not
// nil, its gradient with respect to x.
func (o *objective) evalX(x, grad []float64) float64 {
	p := o.params(x)
	if grad == nil {
		return o.value(p, nil)
	}
	var gp [nParams]float64
	f := o.value(p, &gp)
	for k, i := range o.free {
		if i == iGamma {
			s := sigmoid(x[k])
			grad[k] = gp[i] * (MaxGamma - MinGamma) * s * (1 - s)
		} else {
			grad[k] = gp[i] * math.Exp(x[k])
		}
	}
	return f
}

// minimize runs gonum's L-BFGS from p0 and returns the best parameters it
// found and their loss (NaN if the start is not finite).
func (o *objective) minimize(p0 [nParams]float64) ([nParams]float64, float64) {
	if len(o.free) == 0 {
		return p0, o.value(p0, nil)
	}
	prob := optimize.Problem{
		Func: func(x []float64) float64 { return o.evalX(x, nil) },
		Grad: func(grad, x []float64) { o.evalX(x, grad) },
	}
	x := o.unconstrained(p0)
	// A line search that fails near the optimum still leaves the best point
	// found in the result, so its error is not fatal.
	res, err := optimize.Minimize(prob, x, &optimize.Settings{MajorIterations: 1000, GradientThreshold: 1e-10}, &optimize.LBFGS{})
	if res != nil && (err == nil || res.F <= o.evalX(x, nil)) {
		x = res.X
	}
	p := o.params(x)
	for _, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return p0, math.NaN()
		}
	}
	return p, o.value(p, nil)
}
