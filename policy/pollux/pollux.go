package pollux

import (
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

func init() {
	policy.Register("pollux",
		"Pollux: co-adapts each job's GPUs and batch size by genetic search for the p-mean of goodput speedups",
		policy.Configured((*Pollux).check))
}

// Defaults from the paper's code.
const (
	DefaultInterval   = 60 * time.Second
	DefaultRestart    = 30 * time.Second
	DefaultPopulation = 100
	// MaxCells bounds jobs × nodes × population, the genome cells a
	// search holds (each individual is a dense jobs × nodes matrix, and a
	// generation keeps twice the population): 2²⁶ cells are about 1 GiB.
	// A larger round fails with an error naming it, rather than the
	// process running out of memory.
	MaxCells           = 1 << 26
	DefaultGenerations = 100
	DefaultP           = -1
)

// Pollux is the co-adaptive policy of Pollux: a genetic search over the
// jobs × nodes matrix of GPU counts for the allocation that maximizes
//
//	F = ((1/J) Σ_j (r_j·SPEEDUP_j(N_j, K_j) + 10⁻³)^p)^(1/p),
//
// where job j gets K_j GPUs over N_j nodes, SPEEDUP_j is its best goodput
// there (with the batch size and gradient accumulation that maximize it,
// efficiency.Goodput.Optimize) relative to its best goodput on its fair
// share of the cluster, and r_j discounts a running job whose allocation
// changes: r_j = max(a_j − n_j·δ, 0)/(a_j + δ) for a job of age a_j
// restarted n_j times before, with δ the restart time. p = −1, a harmonic
// mean, favours giving every job something.
//
// A job with Elastic facts may run on any number of GPUs, in whole workers
// (Job.GPUsPerWorker) on every node, between MinGPUs (at least one worker)
// and the least of MaxGPUs, twice ProfiledGPUs (when known) and
// MaxBatchSize/LocalBatchMin; a job whose Perf is not fitted yet is taken to
// scale linearly, and Grad of zero means every batch is fully efficient. A
// job without Elastic facts runs on exactly its GPUs or not at all, with
// speedup 1. A job uses only accelerator types with positive Throughput
// (any type when Throughput is empty), and one type at a time.
//
// The decision grants each running job its GPU count, its placement (GPUs
// per server) and its goodput-optimal global batch size, and asks to be
// called again after Interval. The Objective is F.
//
// Pollux keeps its final population in State and starts the next round's
// search from it (jobs and servers matched by ID), which is how the paper's
// search stays good with 100 generations per round. Persist State (plain
// JSON) to keep the warm start across restarts. Given the same snapshot,
// configuration and State, Allocate returns the same decision.
type Pollux struct {
	// IntervalSeconds is the scheduling interval; zero means 60 s.
	IntervalSeconds float64 `json:"interval_seconds,omitempty"`
	// RestartSeconds is δ, the time a restart costs a job; zero means 30 s.
	RestartSeconds float64 `json:"restart_seconds,omitempty"`
	// Population and Generations size the genetic search; zero means 100
	// each, the paper's values.
	Population  int `json:"population,omitempty"`
	Generations int `json:"generations,omitempty"`
	// P is the exponent of the p-mean, at most 1; zero means −1. Smaller is
	// fairer; 1 maximizes the sum of speedups. Use a tiny value such as
	// 1e-9 for the geometric mean.
	P float64 `json:"p,omitempty"`
	// AllowInterference turns off interference avoidance, which otherwise
	// lets at most one job spanning several nodes use each node.
	AllowInterference bool `json:"allow_interference,omitempty"`
	// Seed seeds the search; it is combined with the snapshot's time, so
	// that every round explores differently but reproducibly.
	Seed uint64 `json:"seed,omitempty"`
	// State is the warm start, updated by Allocate.
	State State `json:"state,omitzero"`
}

// State is Pollux's memory across rounds: the last search's population.
type State struct {
	// Jobs and Nodes label the rows and columns of every individual.
	Jobs  []string `json:"jobs,omitempty"`
	Nodes []string `json:"nodes,omitempty"`
	// Population holds the individuals, each a row-major jobs × nodes
	// matrix of GPU counts.
	Population [][]int `json:"population,omitempty"`
}

// Name returns "pollux".
func (*Pollux) Name() string { return "pollux" }

// Facts implements policy.Reader: it adapts elastic jobs' GPUs and batch
// sizes; without Elastic facts every job is rigid.
func (*Pollux) Facts() (uses, needs policy.Facts) {
	return policy.FactElastic | policy.FactBatch, policy.FactElastic | policy.FactBatch
}

func (p *Pollux) check() error {
	switch {
	case p.IntervalSeconds < 0:
		return fmt.Errorf("%w: pollux: interval_seconds %v is negative", policy.ErrInvalidConfig, p.IntervalSeconds)
	case p.RestartSeconds < 0:
		return fmt.Errorf("%w: pollux: restart_seconds %v is negative", policy.ErrInvalidConfig, p.RestartSeconds)
	case p.Population < 0 || p.Generations < 0:
		return fmt.Errorf("%w: pollux: population %d and generations %d must not be negative", policy.ErrInvalidConfig, p.Population, p.Generations)
	case p.P > 1 || p.P != p.P:
		return fmt.Errorf("%w: pollux: p %v must be at most 1", policy.ErrInvalidConfig, p.P)
	}
	return nil
}

func (p *Pollux) p() float64 {
	if p.P == 0 {
		return DefaultP
	}
	return p.P
}

func (p *Pollux) restart() time.Duration {
	if p.RestartSeconds == 0 {
		return DefaultRestart
	}
	return time.Duration(p.RestartSeconds * float64(time.Second))
}

func (p *Pollux) interval() time.Duration {
	if p.IntervalSeconds == 0 {
		return DefaultInterval
	}
	return time.Duration(p.IntervalSeconds * float64(time.Second))
}

// Allocate searches for the round's allocation. A cancelled ctx stops the
// search between generations with an error wrapping ctx.Err(), leaving State
// unchanged.
func (p *Pollux) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	s, out, err := begin(ctx, s, leastElastic)
	if err != nil {
		return nil, err
	}
	d := &policy.Decision{Policy: p.Name(), Allocation: allocation.Allocation{}, Unscheduled: out, Wake: s.Now + p.interval()}
	if len(s.Jobs) == 0 || s.Cluster.TotalGPUs() == 0 {
		p.State = State{}
		return d, nil
	}
	pr := newProblem(s, p)
	size := uint(cmp.Or(p.Population, DefaultPopulation))
	if cells := uint64(len(pr.jobs)) * uint64(len(pr.nodes)) * uint64(size); cells > MaxCells {
		return nil, fmt.Errorf("%w: pollux: %d jobs × %d nodes × population %d = %d genome cells, more than MaxCells (%d)",
			policy.ErrInvalidSnapshot, len(pr.jobs), len(pr.nodes), size, cells, uint64(MaxCells))
	}
	rng := rand.New(rand.NewSource(int64(p.Seed) ^ int64(s.Now)))
	seeds := append([][]int{pr.currentMatrix(), pr.spread()}, p.State.adapt(pr)...)
	fittest, pop, err := pr.evolve(ctx, seeds, int(size), cmp.Or(p.Generations, DefaultGenerations), rng)
	if err != nil {
		return nil, fmt.Errorf("pollux: %w", err)
	}
	// Check the winner again rather than trust the search's bookkeeping.
	best := fittest.a
	if err := pr.validate(best); err != nil {
		return nil, err
	}
	d.Objective = pr.fitness(best)
	pr.decide(best, d)
	p.State = pr.state(pop)
	return d, nil
}

// currentMatrix returns the allocation the jobs hold now.
func (pr *problem) currentMatrix() []int {
	n := len(pr.nodes)
	a := make([]int, len(pr.jobs)*n)
	for j, b := range pr.jobs {
		copy(a[j*n:], b.current)
	}
	return a
}

// spread returns an allocation that hands out one worker at a time to the
// jobs in priority order (their smallest count first), on a node the job
// already uses or else the node with the most free GPUs: a fair starting
// point for a cold search.
func (pr *problem) spread() []int {
	n := len(pr.nodes)
	a := make([]int, len(pr.jobs)*n)
	free := make([]int, n)
	for k, node := range pr.nodes {
		free[k] = node.GPUs
	}
	for progress := true; progress; {
		progress = false
		for j, b := range pr.jobs {
			row := a[j*n : (j+1)*n]
			total := 0
			for _, r := range row {
				total += r
			}
			if total >= b.maxReplicas || (b.fixed > 0 && total > 0) {
				continue
			}
			want := b.worker
			if total == 0 {
				want = b.minReplicas
			}
			pick := -1
			for k := range row {
				if !b.allowed[k] || free[k] < want {
					continue
				}
				if pick < 0 || (row[k] > 0 && row[pick] == 0) || (row[k] > 0) == (row[pick] > 0) && free[k] > free[pick] {
					pick = k
				}
			}
			if pick < 0 {
				continue
			}
			row[pick] += want
			free[pick] -= want
			progress = true
		}
	}
	return a
}

// decide writes the allocation a into d: GPUs, placement and batch size.
func (pr *problem) decide(a []int, d *policy.Decision) {
	n := len(pr.nodes)
	for j, b := range pr.jobs {
		row := a[j*n : (j+1)*n]
		var place []allocation.Assignment
		replicas := 0
		var typ allocation.Accelerator
		for k, r := range row {
			if r > 0 {
				place = append(place, allocation.Assignment{Server: pr.nodes[k].ID, GPUs: r})
				replicas += r
				typ = pr.nodes[k].Accelerator
			}
		}
		if replicas == 0 {
			continue
		}
		g := allocation.Grant{GPUs: replicas, GPUsPerWorker: b.perWorker, Shares: map[allocation.Accelerator]float64{typ: 1}}
		if b.speedup != nil {
			c, ok := b.speedup.Config(len(place), replicas)
			if !ok {
				continue // no batch fits these GPUs: they would idle
			}
			g.BatchSize = c.Batch(replicas)
		}
		d.Allocation[b.id] = g
		if d.Placement == nil {
			d.Placement = make(map[string][]allocation.Assignment)
		}
		d.Placement[b.id] = place
	}
}

// state records the final population for the next round's warm start.
func (pr *problem) state(pop []*genome) State {
	st := State{}
	for _, b := range pr.jobs {
		st.Jobs = append(st.Jobs, b.id)
	}
	for _, node := range pr.nodes {
		st.Nodes = append(st.Nodes, node.ID)
	}
	for _, ind := range pop {
		st.Population = append(st.Population, slices.Clone(ind.a))
	}
	return st
}

// adapt maps the stored population onto this round's jobs and nodes: rows
// of jobs that left and columns of nodes that left are dropped, new jobs and
// nodes start empty. Malformed individuals are skipped.
func (st State) adapt(pr *problem) [][]int {
	if len(st.Population) == 0 {
		return nil
	}
	n := len(pr.nodes)
	row := make(map[string]int, len(st.Jobs))
	for i, id := range st.Jobs {
		row[id] = i
	}
	col := make(map[string]int, len(st.Nodes))
	for i, id := range st.Nodes {
		col[id] = i
	}
	var out [][]int
	for _, old := range st.Population {
		if len(old) != len(st.Jobs)*len(st.Nodes) {
			continue
		}
		a := make([]int, len(pr.jobs)*n)
		for j, b := range pr.jobs {
			oj, ok := row[b.id]
			if !ok {
				continue
			}
			for k, node := range pr.nodes {
				if ok, found := col[node.ID]; found {
					a[j*n+k] = old[oj*len(st.Nodes)+ok]
				}
			}
		}
		out = append(out, a)
	}
	return out
}
