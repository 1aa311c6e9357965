package allocation_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/dlsched/dlsched/allocation"
)

// sharedV100 is one V100 and two 1-GPU jobs of speed 1 that keep 0.75 of
// it when they share the GPU. Left out, the pair column prices out under
// either sense: the optimum needs it.
func sharedV100(s allocation.Solver, every bool) *allocation.Program {
	c := allocation.Cluster{Servers: []allocation.Server{{ID: "v", Accelerator: "v100", GPUs: 1}}}
	p := allocation.NewProgram(c, []int{1, 1}, [][]float64{{1}, {1}},
		allocation.Pair{A: 0, B: 1, ThroughputA: []float64{0.75}, ThroughputB: []float64{0.75}})
	p.Solver = s
	if every {
		allocation.EveryPair(p)
	}
	return p
}

// The reduced cost's sign follows the problem's sense and the engines'
// dual convention: the pair column enters when maximizing, minimizing and
// in both stages of a max-min program.
func TestColumnsHandExample(t *testing.T) {
	forEachSolver(t, func(t *testing.T, s allocation.Solver) {
		ctx := context.Background()
		for _, every := range []bool{false, true} {
			p := sharedV100(s, every)
			y := allocation.Sum(p.Throughput(0), p.Throughput(1))
			maxi, err := p.Maximize(ctx, y)
			if err != nil {
				t.Fatal(err)
			}
			mini, err := p.Minimize(ctx, y.Scale(-1))
			if err != nil {
				t.Fatal(err)
			}
			terms := []allocation.Expr{p.Throughput(0), p.Throughput(1)}
			mm, err := p.MaximizeMin(ctx, terms, y)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"max Σy", maxi.Objective, 1.5},
				{"min −Σy", mini.Objective, -1.5},
				{"max-min t*", mm.Objective, 0.75},
				{"max-min pair share", mm.Pairs[0][0], 1},
			} {
				if math.Abs(c.got-c.want) > 1e-7 {
					t.Errorf("every pair %v: %s = %v, want %v", every, c.name, c.got, c.want)
				}
			}
		}
	})
}

// pairCase is a random program with space-sharing pairs and max-min terms
// with weights.
type pairCase struct {
	c      allocation.Cluster
	gpus   []int
	tput   [][]float64
	pairs  []allocation.Pair
	weight []float64
}

func newPairCase(seed uint64, maxJobs int) pairCase {
	r := rand.New(rand.NewPCG(seed, 0xc01))
	names := []allocation.Accelerator{"k80", "p100", "v100"}
	nk := 1 + r.IntN(len(names))
	var pc pairCase
	for k := range nk {
		for i := range 1 + r.IntN(3) {
			pc.c.Servers = append(pc.c.Servers, allocation.Server{
				ID: fmt.Sprintf("%s-%d", names[k], i), Accelerator: names[k], GPUs: []int{1, 2, 4}[r.IntN(3)],
			})
		}
	}
	n := 2 + r.IntN(maxJobs-1)
	density := 0.2 + 0.8*r.Float64() // the share of equal-size pairs listed
	for j := range n {
		pc.gpus = append(pc.gpus, []int{1, 1, 2, 4}[r.IntN(4)])
		pc.weight = append(pc.weight, float64(1+r.IntN(3)))
		row := make([]float64, nk)
		for k := range row {
			if r.IntN(6) > 0 {
				row[k] = 0.1 + 10*r.Float64()
			}
		}
		pc.tput = append(pc.tput, row)
		for a := range j {
			if pc.gpus[a] != pc.gpus[j] || r.Float64() > density {
				continue
			}
			pr := allocation.Pair{A: a, B: j, ThroughputA: make([]float64, nk), ThroughputB: make([]float64, nk)}
			for k := range nk {
				if r.IntN(5) > 0 { // some types do not co-locate
					pr.ThroughputA[k] = (0.4 + 0.6*r.Float64()) * pc.tput[a][k]
					pr.ThroughputB[k] = (0.4 + 0.6*r.Float64()) * pc.tput[j][k]
				}
			}
			pc.pairs = append(pc.pairs, pr)
		}
	}
	return pc
}

// program builds the case's program, by column generation unless every.
func (pc pairCase) program(s allocation.Solver, every bool) *allocation.Program {
	p := allocation.NewProgram(pc.c, pc.gpus, pc.tput, pc.pairs...)
	p.Solver = s
	if every {
		allocation.EveryPair(p)
	}
	return p
}

// terms are the weighted throughputs y_j/w_j of the jobs that can run
// alone somewhere.
func (pc pairCase) terms(p *allocation.Program) []allocation.Expr {
	var out []allocation.Expr
	for j := range pc.gpus {
		for k := range p.Types() {
			if p.Allowed(j, k) {
				out = append(out, p.Throughput(j).Scale(1/pc.weight[j]))
				break
			}
		}
	}
	return out
}

// checkFeasible checks r against the case's constraints: shares in [0,1],
// each job's time alone and in pairs at most 1, each type's capacity.
func (pc pairCase) checkFeasible(p *allocation.Program, r *allocation.Result) error {
	used := make([]float64, len(p.Types()))
	busy := make([]float64, len(pc.gpus))
	for j, row := range r.X {
		for k, x := range row {
			if !(x >= 0 && x <= 1) {
				return fmt.Errorf("X[%d][%d] = %v", j, k, x)
			}
			busy[j] += x
			used[k] += float64(pc.gpus[j]) * x
		}
	}
	for c, row := range r.Pairs {
		for k, x := range row {
			if !(x >= 0 && x <= 1) {
				return fmt.Errorf("Pairs[%d][%d] = %v", c, k, x)
			}
			busy[pc.pairs[c].A] += x
			busy[pc.pairs[c].B] += x
			used[k] += float64(pc.gpus[pc.pairs[c].A]) * x
		}
	}
	for j, b := range busy {
		if b > 1+1e-12 {
			return fmt.Errorf("job %d busy %v of the time", j, b)
		}
	}
	for k, t := range p.Types() {
		if n := float64(pc.c.GPUs(t)); used[k] > n*(1+1e-12) {
			return fmt.Errorf("type %s: %v GPUs used of %v", t, used[k], n)
		}
	}
	return nil
}

func usesPair(r *allocation.Result) bool {
	for _, row := range r.Pairs {
		for _, x := range row {
			if x > 1e-6 {
				return true
			}
		}
	}
	return false
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// solvePair runs the max-min program with the Σ tie-break, and a plain
// maximization of throughput, on the case's program.
func (pc pairCase) solvePair(p *allocation.Program) (mm, mx *allocation.Result, t []allocation.Expr, err error) {
	t = pc.terms(p)
	if len(t) == 0 {
		return nil, nil, nil, nil
	}
	if mm, err = p.MaximizeMin(context.Background(), t, allocation.Sum(t...)); err != nil {
		return nil, nil, nil, err
	}
	mx, err = p.Maximize(context.Background(), allocation.Sum(t...))
	return mm, mx, t, err
}

// Column generation reaches the optimum of the whole LP: the same t*, the
// same tie-break objective, the same maximum, with a feasible allocation.
func TestColumnsEqualWholeLP(t *testing.T) {
	// The comparison is vacuous where the optimum uses no pair.
	var cases, paired atomic.Int32
	t.Cleanup(func() {
		if n, m := cases.Load(), paired.Load(); m < n/3 {
			t.Errorf("only %d of %d optima use a pair", m, n)
		}
	})
	for _, s := range allocation.Solvers() {
		maxJobs := 40
		if s == allocation.PureGo {
			maxJobs = 10 // the whole LP must pass its size guard
		}
		for seed := range uint64(60) {
			t.Run(fmt.Sprintf("%s/%d", s, seed), func(t *testing.T) {
				t.Parallel()
				pc := newPairCase(seed, maxJobs)
				whole := pc.program(s, true)
				wmm, wmx, wt, err := pc.solvePair(whole)
				if errors.Is(err, allocation.ErrTooLarge) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatalf("whole LP: %v", err)
				}
				if wmm == nil {
					t.Skip("no job can run")
				}
				cases.Add(1)
				if usesPair(wmm) || usesPair(wmx) {
					paired.Add(1)
				}
				p := pc.program(s, false)
				w := new(allocation.Warm)
				ids := make([]string, len(pc.gpus))
				for j := range ids {
					ids[j] = fmt.Sprint(j)
				}
				p.Remember(w, ids)
				for round := range 2 { // the second round starts warm
					mm, mx, tt, err := pc.solvePair(p)
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					for _, c := range []struct {
						name      string
						got, want float64
					}{
						{"t*", mm.Objective, wmm.Objective},
						{"tie-break", p.Eval(allocation.Sum(tt...), mm), whole.Eval(allocation.Sum(wt...), wmm)},
						{"max", mx.Objective, wmx.Objective},
					} {
						if !near(c.got, c.want, 1e-7) {
							t.Errorf("round %d: %s %v, whole LP %v", round, c.name, c.got, c.want)
						}
					}
					for _, r := range []*allocation.Result{mm, mx} {
						if err := pc.checkFeasible(p, r); err != nil {
							t.Errorf("round %d: %v", round, err)
						}
					}
				}
			})
		}
	}
}
