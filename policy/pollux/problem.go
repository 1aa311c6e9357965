package pollux

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/policy"
)

// job is what the search knows about one job, in priority order.
type job struct {
	id string
	// fixed is the GPU count of a job without Elastic facts, which runs at
	// exactly that count or not at all; zero for elastic jobs.
	fixed int
	// minReplicas and maxReplicas bound the job's GPU count when it runs;
	// both are multiples of worker.
	minReplicas, maxReplicas int
	// worker is the GPUs of one worker (Job.Worker): the job holds a
	// multiple of it on every node. perWorker is Job.GPUsPerWorker, for
	// the Grant.
	worker, perWorker int
	// speedup is nil for a job whose throughput model is not fitted yet: it
	// is then assumed to scale linearly.
	speedup *efficiency.Speedup
	// table memoizes the job's terms of the fitness.
	table table
	// linearBase normalises the linear speedup like the fitted one.
	linearBase float64
	// allowed marks the nodes whose accelerator the job can use.
	allowed []bool
	// current is the job's row of the current allocation.
	current []int
	running bool
	// restart is the factor a change of allocation multiplies the job's
	// speedup by: max(age − restarts·δ, 0)/(age + δ).
	restart float64
}

// problem is one round's search space: jobs × nodes.
type problem struct {
	jobs  []job
	nodes []allocation.Server
	// typ numbers each node's accelerator type, and types counts them.
	typ   []int
	types int
	p     float64
	avoid bool
	// gpus is each node's GPU count; mats holds the genomes' matrices.
	gpus []int
	mats matrices
	// Scratch vectors of mutate and repair, which run on the search's one
	// goroutine: a generation allocates none.
	free, open, owner, perm, count []int
	// spans and sums count each row's nodes and GPUs during repair; nz
	// lists the rows' nonzero cells, row j's ending at nzEnd[j].
	spans, sums, nz, nzEnd []int
}

// newProblem orders the jobs by priority (least attained service, then
// arrival, then ID) and the nodes by ID, and derives every bound.
func newProblem(s *policy.Snapshot, cfg *Pollux) *problem {
	pr := &problem{p: cfg.p(), avoid: !cfg.AllowInterference}
	pr.nodes = slices.SortedFunc(slices.Values(s.Cluster.Servers), func(a, b allocation.Server) int {
		return cmp.Compare(a.ID, b.ID)
	})
	col := make(map[string]int, len(pr.nodes))
	typeNum := make(map[allocation.Accelerator]int)
	for i, n := range pr.nodes {
		col[n.ID] = i
		t, ok := typeNum[n.Accelerator]
		if !ok {
			t = len(typeNum)
			typeNum[n.Accelerator] = t
		}
		pr.typ = append(pr.typ, t)
	}
	pr.types = len(typeNum)
	pr.scratch(len(s.Jobs))
	order := slices.Clone(s.Jobs)
	slices.SortFunc(order, func(a, b policy.Job) int {
		return cmp.Or(cmp.Compare(a.AttainedGPUSeconds, b.AttainedGPUSeconds),
			cmp.Compare(a.Arrival, b.Arrival), cmp.Compare(a.ID, b.ID))
	})
	total := s.Cluster.TotalGPUs()
	maxNode := 0
	for _, n := range pr.nodes {
		maxNode = max(maxNode, n.GPUs)
	}
	delta := cfg.restart().Seconds()
	for i := range order {
		j := &order[i]
		b := job{id: j.ID, allowed: make([]bool, len(pr.nodes)), current: make([]int, len(pr.nodes)),
			worker: j.Worker(), perWorker: j.GPUsPerWorker}
		for k, n := range pr.nodes {
			// A node smaller than a worker can host none of it.
			b.allowed[k] = n.GPUs >= b.worker && (len(j.Throughput) == 0 || j.Throughput[n.Accelerator] > 0)
		}
		for _, a := range j.Placement {
			b.current[col[a.Server]] += a.GPUs
			b.running = true
		}
		restarts := 0
		if e := j.Elastic; e != nil {
			restarts = e.Restarts
			b.minReplicas = max(e.MinGPUs, b.worker) // MinGPUs is whole workers
			// Offer at most twice what the job was measured on, and no more
			// GPUs than its largest batch can feed with LocalBatchMin each.
			b.maxReplicas = total
			if e.ProfiledGPUs > 0 {
				b.maxReplicas = 2 * min(e.ProfiledGPUs, total) // no overflow
			}
			if e.MaxGPUs > 0 {
				b.maxReplicas = min(b.maxReplicas, e.MaxGPUs)
			}
			maxBatch := max(e.MaxBatchSize, e.BatchSize)
			b.maxReplicas = min(b.maxReplicas, maxBatch/max(e.LocalBatchMin, 1))
			b.maxReplicas -= b.maxReplicas % b.worker // it grows by whole workers
			b.maxReplicas = max(b.maxReplicas, b.minReplicas)
			// The fair share the speedup is measured against, as in the
			// paper's simulator, capped at what the job may use.
			fair := min(max(ceilDiv(total, len(s.Jobs)), 1), b.maxReplicas)
			fairNodes := max(ceilDiv(fair, max(maxNode, 1)), 1)
			if fitted(e) {
				g := efficiency.Goodput{Perf: e.Perf, Grad: efficiency.Grad{Sqr: e.GradSqr, Var: e.GradVar}, BatchSize: e.BatchSize}
				b.speedup = efficiency.NewSpeedup(g, limits(e), fairNodes, fair)
			} else {
				b.linearBase = float64(fair)
			}
		} else {
			b.fixed = j.GPUs
			b.minReplicas, b.maxReplicas = j.GPUs, j.GPUs
		}
		age := (s.Now - j.Arrival).Seconds()
		b.restart = math.Max(age-float64(restarts)*delta, 0) / (age + delta)
		b.table = newTable(b.maxReplicas)
		pr.jobs = append(pr.jobs, b)
	}
	return pr
}

// scratch sizes the scratch vectors for jobs jobs on pr's nodes.
func (pr *problem) scratch(jobs int) {
	n := len(pr.nodes)
	pr.gpus = make([]int, n)
	for k, node := range pr.nodes {
		pr.gpus[k] = node.GPUs
	}
	for _, v := range []*[]int{&pr.free, &pr.open, &pr.owner, &pr.perm} {
		*v = make([]int, n)
	}
	pr.count = make([]int, pr.types)
	pr.spans, pr.sums, pr.nzEnd = make([]int, jobs), make([]int, jobs), make([]int, jobs)
	pr.nz = make([]int, 0, jobs*n)
	pr.mats = matrices{cells: jobs * n, nodes: n}
}

// fitted reports whether the job's throughput model has been fitted.
func fitted(e *policy.Elastic) bool {
	return e.Perf.AlphaC > 0 || e.Perf.BetaC > 0
}

// limits returns the batch-size limits of an elastic job; Pollux always
// lets jobs accumulate gradients.
func limits(e *policy.Elastic) efficiency.Limits {
	return efficiency.Limits{
		MaxBatch: max(e.MaxBatchSize, e.BatchSize),
		LocalMin: e.LocalBatchMin, LocalMax: e.LocalBatchMax,
		Accumulation: true,
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// speedup returns job j's speedup with replicas GPUs over nodes nodes.
func (pr *problem) speedup(j int, nodes, replicas int) float64 {
	b := &pr.jobs[j]
	switch {
	case replicas == 0:
		return 0
	case b.fixed > 0:
		if replicas == b.fixed {
			return 1
		}
		return 0
	case b.speedup == nil:
		return float64(replicas) / b.linearBase
	}
	return b.speedup.At(nodes, replicas)
}

// floor keeps every term of the p-mean finite.
const floor = 1e-3

// term returns job j's addend of the p-mean with replicas GPUs over nodes
// nodes, restarted or not: (s_j + 10⁻³)^p, or its log for p = 0.
func (pr *problem) term(j, nodes, replicas int, restarted bool) float64 {
	s := pr.speedup(j, nodes, replicas)
	if restarted {
		s *= pr.jobs[j].restart
	}
	if pr.p == 0 {
		return math.Log(s + floor)
	}
	return math.Pow(s+floor, pr.p)
}

// tableReplicas bounds the GPU counts a table holds; larger ones, rare,
// are computed each time (the Speedup still memoizes the goodput).
const tableReplicas = 1 << 8

// nodeClass classes a placement the only way the goodput model tells nodes
// apart (throughput.Params.NetworkTime): invalid (no node, or more nodes
// than GPUs), one node, or several.
func nodeClass(nodes, replicas int) int {
	switch {
	case nodes < 1 || nodes > replicas:
		return 0
	case nodes == 1:
		return 1
	}
	return 2
}

// table memoizes a job's terms by GPU count, node class and restart, which is
// all they depend on: the fitness asks for them millions of times a round,
// and a lookup is far cheaper than a power and the goodput model, whose
// search over batch sizes it also saves for every node count beyond two.
// NaN marks a term not computed yet.
type table []float64

// Cells per GPU count: three node classes, restarted or not.
const tableRow = 6

func newTable(maxReplicas int) table {
	t := make(table, (min(maxReplicas, tableReplicas)+1)*tableRow)
	for i := range t {
		t[i] = math.NaN()
	}
	return t
}

// cachedTerm returns pr.term, computing each at most once.
func (pr *problem) cachedTerm(j, nodes, replicas int, restarted bool) float64 {
	t := pr.jobs[j].table
	i := replicas*tableRow + 2*nodeClass(nodes, replicas)
	if restarted {
		i++
	}
	if replicas < 0 || i >= len(t) {
		return pr.term(j, nodes, replicas, restarted)
	}
	v := t[i]
	if v != v {
		v = pr.term(j, nodes, replicas, restarted)
		t[i] = v
	}
	return v
}

// fitness returns the p-mean of the jobs' speedups under the allocation a
// (rows of jobs, columns of nodes), each discounted by its restart factor if
// its row differs from its current one:
//
//	F = ((1/J) Σ_j (s_j + 10⁻³)^p)^(1/p).
func (pr *problem) fitness(a []int) float64 {
	n := len(pr.nodes)
	total := 0.0
	for j := range pr.jobs {
		row := a[j*n : (j+1)*n]
		nodes, replicas := 0, 0
		for _, r := range row {
			if r > 0 {
				nodes++
				replicas += r
			}
		}
		total += pr.cachedTerm(j, nodes, replicas, pr.restarted(j, row))
	}
	return pr.mean(total)
}

// repairedFitness is fitness, for an allocation a that repair has just
// left, from the nodes and GPUs per row it counted.
func (pr *problem) repairedFitness(a []int) float64 {
	n := len(pr.nodes)
	total := 0.0
	for j := range pr.jobs {
		total += pr.cachedTerm(j, pr.spans[j], pr.sums[j], pr.restarted(j, a[j*n:(j+1)*n]))
	}
	return pr.mean(total)
}

// restarted reports whether job j restarts to take the row.
func (pr *problem) restarted(j int, row []int) bool {
	return pr.jobs[j].running && !slices.Equal(row, pr.jobs[j].current)
}

// mean returns the p-mean of the jobs' speedups from the sum of their terms.
func (pr *problem) mean(total float64) float64 {
	mean := total / float64(len(pr.jobs))
	switch pr.p {
	case 0:
		return math.Exp(mean)
	case -1: // the default: math.Pow's result, at a tenth of its cost
		return 1 / mean
	}
	return math.Pow(mean, 1/pr.p)
}

// validate checks the allocation a against every constraint repair enforces;
// it guards the decision against a bug in the search.
func (pr *problem) validate(a []int) error {
	n := len(pr.nodes)
	used := make([]int, n)
	distributed := make([]int, n)
	for j, b := range pr.jobs {
		row := a[j*n : (j+1)*n]
		nodes, replicas := 0, 0
		for k, r := range row {
			if r < 0 || (r > 0 && !b.allowed[k]) || r%b.worker != 0 {
				return fmt.Errorf("pollux: job %q: %d GPUs on node %q (workers of %d)", b.id, r, pr.nodes[k].ID, b.worker)
			}
			if r > 0 {
				nodes++
				replicas += r
				used[k] += r
			}
		}
		if replicas > 0 && (replicas < b.minReplicas || replicas > b.maxReplicas) {
			return fmt.Errorf("pollux: job %q: %d GPUs outside [%d, %d]", b.id, replicas, b.minReplicas, b.maxReplicas)
		}
		if pr.avoid && nodes > 1 {
			for k, r := range row {
				if r > 0 {
					distributed[k]++
				}
			}
		}
	}
	for k, node := range pr.nodes {
		if used[k] > node.GPUs {
			return fmt.Errorf("pollux: node %q: %d GPUs given, %d exist", node.ID, used[k], node.GPUs)
		}
		if distributed[k] > 1 {
			return fmt.Errorf("pollux: node %q hosts %d distributed jobs", node.ID, distributed[k])
		}
	}
	return nil
}
