package allocation

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Margin's second stage and capped's first reach the optimum the slack
// start does: the same t*, the same tie-break total, every term at the
// floor, shares within capacity. Margin holds every job here, so that it
// runs on small programs; the cases cover each of its paths: solved at
// once, jobs its prices bring in, and fixed plans that overfill a type;
// half of them from random prices in both stages, as warm starts keep
// them, rather than from the optimum's.
func TestMarginSameOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	var trace marginTrace
	capped := 0
	const cases = 300
	for i := range cases {
		cc := newCrashCase(r)
		for _, s := range Solvers() {
			fast := cc.program(s)
			fast.marginAll, fast.trace = true, &trace
			if i%2 == 1 { // far from the optimum: most fixed plans are wrong
				fast.Remember(&Warm{}, ids(len(cc.gpus)))
				for _, stage := range []string{"max-min", "tie-break"} {
					fast.keepPrices(stage, randomPrices(r, fast))
				}
			}
			terms := cc.terms(fast)
			if terms == nil {
				continue
			}
			before := trace
			got, want := sameOptimum(t, i, cc, fast, terms)
			byPrices := trace[traceSolved] - before[traceSolved]
			if got.Engine == byReach {
				capped++
				byPrices++
				checkBottlenecks(t, i, got.Bottleneck, want.Bottleneck)
			}
			checkWhole(t, i, byPrices, trace[traceWhole]-before[traceWhole])
		}
	}
	t.Logf("capped %d, margin %v (solved, LPs, infeasible, priced, most jobs)", capped, trace)
	if capped < cases/10 || trace[traceSolved] < cases/2 || trace[traceInfeasible] == 0 || trace[tracePriced] == 0 {
		t.Errorf("capped %d of %d cases; margin solved %d, was infeasible %d times, priced %d jobs in",
			capped, cases, trace[traceSolved], trace[traceInfeasible], trace[tracePriced])
	}
}

// checkWhole checks that a MaximizeMin of two stages, byPrices of which
// it settled without an engine's solve of the whole LP, built the whole LP
// once if it solved it, and not at all otherwise.
func checkWhole(t *testing.T, i, byPrices, built int) {
	t.Helper()
	if want := min(2-byPrices, 1); built != want {
		t.Errorf("case %d: built the whole LP %d times with %d of 2 stages settled by prices, want %d", i, built, byPrices, want)
	}
}

// checkBottlenecks checks a capped result's bottlenecks against the LP's:
// at least one, and each one the LP's as well (whose duals may name more
// where the optimum is degenerate).
func checkBottlenecks(t *testing.T, i int, got, want []bool) {
	t.Helper()
	if !slices.Contains(got, true) {
		t.Errorf("case %d: no bottleneck", i)
	}
	for j, b := range got {
		if b && !want[j] {
			t.Errorf("case %d: expression %d is a bottleneck, but not the LP's", i, j)
		}
	}
}

// randomPrices returns prices for p's types, at random.
func randomPrices(r *rand.Rand, p *Program) []float64 {
	out := make([]float64, len(p.types))
	for k := range out {
		out[k] = r.Float64() * 10 / p.capacity[k]
	}
	return out
}

// ids returns n job IDs.
func ids(n int) []string {
	out := make([]string, n)
	for j := range out {
		out[j] = fmt.Sprint("job-", j)
	}
	return out
}

// Stage one over jobs that water-filling froze reaches the slack start's
// optimum: the jobs held at the first level get floor rows, and the rest
// are raised again, with the tie-break too, half of them from random
// prices. Every bottleneck it names is certain: no allocation that keeps
// the others at t* lifts it further.
func TestMarginFloors(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 23))
	var trace marginTrace
	const cases = 200
	for i := range cases {
		cc := newCrashCase(r)
		for _, s := range Solvers() {
			first := cc.program(s)
			first.noCrash = true
			terms := cc.terms(first)
			if terms == nil {
				continue
			}
			res, err := first.MaximizeMin(context.Background(), terms, Expr{})
			if err != nil {
				t.Fatalf("case %d, %v: %v", i, s, err)
			}
			f := frozen{cc: cc, floor: make([]float64, len(terms))}
			for j := range terms {
				switch {
				case res.Bottleneck[j]:
					f.floor[j] = res.Objective * (1 - 1e-9)
				case r.IntN(4) == 0: // a floor that does not bind
					f.floor[j] = res.Objective / 2
				default:
					f.open = append(f.open, j)
				}
			}
			if len(f.open) == 0 {
				continue
			}
			fast, open := f.program(s)
			fast.marginAll, fast.trace = true, &trace
			if i%2 == 1 { // far from the optimum
				fast.Remember(&Warm{}, ids(len(cc.gpus)))
				fast.keepPrices("tie-break", randomPrices(r, fast))
			}
			slack, slackOpen := f.program(s)
			slack.noCrash = true
			before := trace
			got, err := fast.MaximizeMin(context.Background(), open, Sum(open...))
			if err != nil {
				t.Fatalf("case %d, %v: %v", i, s, err)
			}
			byPrices := trace[traceSolved] - before[traceSolved]
			if got.Engine == byReach {
				byPrices++
			}
			checkWhole(t, i, byPrices, trace[traceWhole]-before[traceWhole])
			want, err := slack.MaximizeMin(context.Background(), slackOpen, Sum(slackOpen...))
			if err != nil {
				t.Fatalf("case %d, %v, slack start: %v", i, s, err)
			}
			tie := Sum(open...)
			if !nearRel(got.Objective, want.Objective, 1e-7) || !nearRel(fast.Eval(tie, got), slack.Eval(tie, want), 1e-6) {
				t.Errorf("case %d, %v: t* %v and total %v, from the slack basis %v and %v",
					i, s, got.Objective, fast.Eval(tie, got), want.Objective, slack.Eval(tie, want))
			}
			checkShares(t, fast, got)
			f.checkHeld(t, i, got)
		}
	}
	t.Logf("margin %v (solved, LPs, infeasible, priced, most jobs)", trace)
	if trace[traceSolved] < cases/2 {
		t.Errorf("margin solved only %d of %d cases", trace[traceSolved], cases)
	}
}

// frozen is a crash case after a level of water-filling: floors for the
// jobs not open.
type frozen struct {
	cc    crashCase
	floor []float64 // per job not open
	open  []int
}

// program returns the case's program with its floor rows, and the open
// jobs' terms.
func (f frozen) program(s Solver) (*Program, []Expr) {
	p := f.cc.program(s)
	terms := f.cc.terms(p)
	var open []Expr
	for j, e := range terms {
		if slices.Contains(f.open, j) {
			open = append(open, e)
		} else {
			p.Constrain(e, f.floor[j], math.Inf(1))
		}
	}
	return p, open
}

// checkHeld checks that got names a bottleneck, and that no allocation
// that keeps the floors and the open jobs at t* lifts any it names above
// t*.
func (f frozen) checkHeld(t *testing.T, i int, got *Result) {
	t.Helper()
	if !slices.Contains(got.Bottleneck, true) {
		t.Errorf("case %d: no bottleneck", i)
	}
	for b, held := range got.Bottleneck {
		if !held {
			continue
		}
		p, open := f.program(Auto)
		for _, e := range open {
			p.Constrain(e, got.Objective*(1-1e-12), math.Inf(1))
		}
		// A job whose share buys little lifts it far on a little freed
		// capacity: holding the others 1e-9 below t* let the LP's own
		// bottlenecks rise 2e-5 on case 95.
		res, err := p.Maximize(context.Background(), open[b])
		if err == nil && res.Objective > got.Objective*(1+1e-6) {
			t.Errorf("case %d: job %d named a bottleneck at %v, but reaches %v", i, f.open[b], got.Objective, res.Objective)
		}
	}
}

// Where t* is tiny beside the expressions' coefficients (throughputs
// spread over six orders of magnitude), the engines' absolute tolerances
// left floors short by a relative 0.2 %, from the jobs at the margin and
// from crash's bases alike; such results are solved again (see
// satisfies). Every term must reach t* to 1e-6, as from the slack start.
func TestWideRangeFloors(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const cases = 300
	for i := range cases {
		cc := newCrashCase(r)
		for _, row := range cc.tput {
			for k := range row {
				row[k] *= []float64{1e-3, 1, 1e3}[r.IntN(3)]
			}
		}
		for _, s := range Solvers() {
			for _, all := range []bool{false, true} {
				p := cc.program(s)
				p.marginAll = all
				terms := cc.terms(p)
				if terms == nil {
					continue
				}
				got, err := p.MaximizeMin(context.Background(), terms, Sum(terms...))
				if err != nil {
					t.Fatalf("case %d, %v: %v", i, s, err)
				}
				for j, e := range terms {
					if y := p.Eval(e, got); y < got.Objective*(1-1e-6) {
						t.Errorf("case %d, %v, margin for all %v: job %d's term %v under t* = %v", i, s, all, j, y, got.Objective)
					}
				}
				checkShares(t, p, got)
			}
		}
	}
}

// On a program like BenchmarkLAS's at 2048 jobs (lasLike), with
// BenchmarkLAS's weights (one job in five weighs 2 to 4) and with equal
// ones, each stage is solved over the jobs at the margin, by LPs of at
// most 64 jobs, and no LP of the whole program: cold, and warm after one
// more job arrived, from the prices the cold solve ended at; the whole LP
// is never built. Run with -v for the counts.
func TestMarginFewJobs(t *testing.T) {
	c, gpus, tput := lasLike(2048)
	r := rand.New(rand.NewPCG(2048, 7))
	weights := make([]float64, len(gpus)+1)
	for _, weighted := range []bool{true, false} {
		for j := range weights {
			weights[j] = 1
			if weighted && r.IntN(5) == 0 {
				weights[j] = float64(2 + r.IntN(3))
			}
		}
		var w Warm
		for _, n := range []int{len(gpus), len(gpus) + 1} { // cold, then warm after an arrival
			gpus, tput := append(slices.Clone(gpus), 1), append(slices.Clone(tput), []float64{0.3, 0.7, 1.1})
			var trace marginTrace
			p := NewProgram(c, gpus[:n], tput[:n])
			p.Remember(&w, ids(n))
			p.trace = &trace
			terms := make([]Expr, n)
			for j := range terms {
				terms[j] = p.Throughput(j).Scale(1 / weights[j])
			}
			res, err := p.MaximizeMin(context.Background(), terms, Sum(terms...))
			if err != nil {
				t.Fatal(err)
			}
			stages := 2
			if res.Engine == byReach {
				stages = 1 // stage one needed no LP at all
			}
			t.Logf("weighted %v, %d jobs: engine %q, margin %v (solved, LPs, infeasible, priced, most jobs)", weighted, n, res.Engine, trace)
			if trace[traceSolved] != stages || trace[traceMost] > 64 || trace[traceWhole] != 0 {
				t.Errorf("weighted %v, %d jobs: %d of %d stages over the jobs at the margin, by LPs of up to %d jobs, %d whole LPs built",
					weighted, n, trace[traceSolved], stages, trace[traceMost], trace[traceWhole])
			}
		}
	}
}
