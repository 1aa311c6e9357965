package gavel

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// prepare screens s (policy.Screen) and returns the screened snapshot, its
// jobs in ID order and the jobs left out with why. Beyond Screen, it leaves
// out what no Gavel policy can schedule: an elastic job without a GPU count
// (Gavel runs jobs on the GPUs they ask for) and one whose GPU count no type
// it can run on holds (Screen lets elastic jobs through without that check).
// Only a snapshot malformed as a whole, or a cancelled ctx, is an error.
func prepare(ctx context.Context, name string, s *policy.Snapshot) (*policy.Snapshot, []*policy.Job, map[string]string, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	all := sortedJobs(s.Jobs)
	jobs := all[:0:0]
	room := make(map[shape]int)
	census := policy.NewCensus(s.Cluster)
	for _, j := range all {
		if j.GPUs == 0 {
			out = leave(out, j.ID, fmt.Sprintf("gpus: 0; %s needs the number of GPUs the job runs on", name))
			continue
		}
		if j.Elastic == nil {
			// Screen checked that its GPU count fits.
		} else if err := census.Runnable(j); err != nil {
			out = leave(out, j.ID, policy.Reason(err))
			continue
		}
		jobs = append(jobs, shaped(j, s.Cluster, room))
	}
	return s, jobs, out, nil
}

// shaped returns j, or a copy of it without throughput on the types whose
// servers cannot hold its GPUs in whole workers: the programs count a type's
// GPUs, and must not give a job time where its workers do not fit. room
// memoizes the types' whole-worker capacity.
func shaped(j *policy.Job, c allocation.Cluster, room map[shape]int) *policy.Job {
	w := j.Worker()
	if w <= 1 {
		return j
	}
	var thr map[allocation.Accelerator]float64
	for k, x := range j.Throughput {
		sh := shape{k, w}
		n, ok := room[sh]
		if !ok {
			n = c.WorkerGPUs(k, w)
			room[sh] = n
		}
		if x > 0 && n < j.GPUs {
			if thr == nil {
				thr = maps.Clone(j.Throughput)
			}
			delete(thr, k)
		}
	}
	if thr == nil {
		return j
	}
	cp := *j
	cp.Throughput = thr
	return &cp
}

// shape is an accelerator type and a worker size.
type shape struct {
	t allocation.Accelerator
	w int
}

// leave records in out, allocating it if need be, that job id is left out
// of the round and why.
func leave(out map[string]string, id, why string) map[string]string {
	if out == nil {
		out = make(map[string]string)
	}
	out[id] = why
	return out
}

// empty returns the decision for a snapshot without jobs to schedule, with
// the jobs left out, or err.
func empty(name string, out map[string]string, err error) (*policy.Decision, error) {
	if err != nil {
		return nil, err
	}
	return &policy.Decision{Policy: name, Allocation: allocation.Allocation{}, Unscheduled: out}, nil
}

// newProgram builds the allocation program of jobs on c with throughput
// tput(job, type), and returns it with the job IDs and the throughput matrix
// (columns in c.Types() order). Its solves start from warm, if not nil.
func newProgram(c allocation.Cluster, jobs []*policy.Job, solver allocation.Solver, warm *allocation.Warm,
	tput func(*policy.Job, allocation.Accelerator) float64, pairs ...allocation.Pair) (*allocation.Program, []string, [][]float64) {
	ids, gpus, t := matrixOf(c, jobs, tput)
	prog := allocation.NewProgram(c, gpus, t, pairs...)
	prog.Solver = solver
	prog.Remember(warm, ids)
	return prog, ids, t
}

// newRows is newProgram over the classes of interchangeable jobs (classify)
// when classed and there are no pairs: one row per class, counted as many
// times as it has members, keyed by the class's key. Otherwise its rows are
// the jobs, keyed by their IDs, and cl is nil. It returns the program, the
// rows' keys, their throughput rows and the classes.
func newRows(c allocation.Cluster, jobs []*policy.Job, solver allocation.Solver, warm *allocation.Warm,
	tput func(*policy.Job, allocation.Accelerator) float64, classed bool, pairs ...allocation.Pair) (*allocation.Program, []string, [][]float64, *classes) {
	if !classed || len(pairs) > 0 {
		prog, ids, t := newProgram(c, jobs, solver, warm, tput, pairs...)
		return prog, ids, t, nil
	}
	_, gpus, t := matrixOf(c, jobs, tput)
	cl := classify(jobs, t)
	cg, ct := make([]int, len(cl.first)), make([][]float64, len(cl.first))
	for k, i := range cl.first {
		cg[k], ct[k] = gpus[i], t[i]
	}
	prog := allocation.NewClasses(c, cg, cl.count, ct)
	prog.Solver = solver
	prog.Remember(warm, cl.keys)
	return prog, cl.keys, ct, cl
}

// matrixOf returns the jobs' IDs, GPU counts and throughput matrix
// tput(job, type), columns in c.Types() order.
func matrixOf(c allocation.Cluster, jobs []*policy.Job, tput func(*policy.Job, allocation.Accelerator) float64) ([]string, []int, [][]float64) {
	types := c.Types()
	ids := make([]string, len(jobs))
	gpus := make([]int, len(jobs))
	flat := make([]float64, len(jobs)*len(types))
	t := make([][]float64, len(jobs))
	for j, job := range jobs {
		ids[j], gpus[j] = job.ID, job.GPUs
		t[j] = flat[j*len(types) : (j+1)*len(types) : (j+1)*len(types)]
		for k, a := range types {
			t[j][k] = tput(job, a)
		}
	}
	return ids, gpus, t
}

// pairs returns the space-sharing pairs among jobs (in ID order): two jobs
// pair when each lists the other in Colocated. Gavel shares GPUs only
// between jobs of one size: two jobs of unequal GPU counts that list each
// other do not pair, and a warning says so.
//
// There are O(n²) entries, so the loop is lean: partners are sorted as
// indices, the reverse entry is looked up only once per pair, and the
// throughputs of an entry map that several jobs share (as a simulation's
// facts do) are read into one slice, shared read-only by its pairs.
func pairs(c allocation.Cluster, jobs []*policy.Job) ([]allocation.Pair, []string) {
	index := make(map[string]int, len(jobs))
	entries := 0
	for j, job := range jobs {
		index[job.ID] = j
		entries += len(job.Colocated)
	}
	r := pairReader{types: c.Types(), rows: make(map[uintptr][]float64)}
	out := make([]allocation.Pair, 0, entries/2)
	var warnings []string
	type partner struct {
		b    int
		tput map[allocation.Accelerator]float64
	}
	var later []partner
	for a, ja := range jobs {
		later = later[:0]
		for id, tput := range ja.Colocated {
			if b, in := index[id]; in && b > a { // each pair once; a partner left out of the round does not pair
				later = append(later, partner{b, tput})
			}
		}
		slices.SortFunc(later, func(x, y partner) int { return x.b - y.b })
		for _, pb := range later {
			b, jb := pb.b, jobs[pb.b]
			back, ok := jb.Colocated[ja.ID]
			if !ok {
				continue // one-sided data does not pair
			}
			if ja.GPUs != jb.GPUs {
				warnings = append(warnings, fmt.Sprintf("job %q: colocated[%s]: jobs of %d and %d GPUs cannot share GPUs; they do not pair",
					ja.ID, jb.ID, ja.GPUs, jb.GPUs))
				continue
			}
			out = append(out, allocation.Pair{A: a, B: b, ThroughputA: r.row(pb.tput), ThroughputB: r.row(back)})
		}
	}
	return out, warnings
}

// pairReader reads co-located throughput maps into slices by type, once
// per map.
type pairReader struct {
	types []allocation.Accelerator
	rows  map[uintptr][]float64
}

func (r pairReader) row(m map[allocation.Accelerator]float64) []float64 {
	key := reflect.ValueOf(m).Pointer()
	if x, ok := r.rows[key]; ok && key != 0 {
		return x
	}
	x := make([]float64, len(r.types))
	for k, t := range r.types {
		x[k] = m[t]
	}
	r.rows[key] = x
	return x
}

// normalized builds the allocation program of jobs on c and each row's
// normalized throughput z_j = y_j / T^prop_j, with T^prop_j = Σ_k T_jk N_k /
// Σ_k N_k. When agnostic, T_jk is 1 on every type where the job can run and
// T^prop_j is 1, as in Gavel. With classed (and no pairs), the program's rows
// are classes of interchangeable jobs (newRows), returned with their keys;
// otherwise cl is nil and the rows are the jobs, with their IDs.
func normalized(c allocation.Cluster, jobs []*policy.Job, agnostic bool, solver allocation.Solver, warm *allocation.Warm,
	classed bool, pairs ...allocation.Pair) (*allocation.Program, []string, []allocation.Expr, *classes) {
	seen := func(j *policy.Job, t allocation.Accelerator) float64 {
		if x := j.Throughput[t]; !agnostic || x == 0 {
			return x
		}
		return 1
	}
	prog, ids, tput, cl := newRows(c, jobs, solver, warm, seen, classed, pairs...)
	capacity := prog.Capacity()
	total := sum(capacity)
	z := make([]allocation.Expr, len(tput))
	for j := range tput {
		prop := 1.0
		if !agnostic {
			prop = 0
			for k := range capacity {
				prop += tput[j][k] * capacity[k] / total
			}
		}
		// Every coefficient is at most ΣN/N_k times T_jk's scale: no
		// overflow, whatever the throughputs' magnitude. Co-located
		// throughputs are normalized by the job's isolated T^prop.
		z[j] = prog.Throughput(j).Div(prop)
	}
	return prog, ids, z, cl
}

// sortedJobs returns pointers to the jobs in ID order.
func sortedJobs(jobs []policy.Job) []*policy.Job {
	out := make([]*policy.Job, len(jobs))
	for i := range jobs {
		out[i] = &jobs[i]
	}
	slices.SortFunc(out, func(a, b *policy.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// variant names a policy by its base name and options.
func variant(base string, agnostic, ss bool) string {
	switch {
	case agnostic:
		return base + "-agnostic"
	case ss:
		return base + "-ss"
	}
	return base
}

// variantFacts returns the facts a Gavel policy reads beyond base: real
// throughputs unless agnostic, and the co-located ones with space sharing.
func variantFacts(base policy.Facts, agnostic, ss bool) policy.Facts {
	if !agnostic {
		base |= policy.FactHeterogeneity
	}
	if ss {
		base |= policy.FactColocation
	}
	return base
}

// checkVariant rejects space sharing for an agnostic policy: pairs come with
// measured throughputs, which the agnostic policies ignore.
func checkVariant(name string, agnostic, ss bool) error {
	if agnostic && ss {
		return fmt.Errorf("%w: %s: space_sharing needs the heterogeneity-aware policy", policy.ErrInvalidConfig, name)
	}
	return nil
}

// switches points at the variant switches of a policy's configuration; ss is
// nil for a policy without space sharing.
type switches struct{ agnostic, ss *bool }

// variantFactory returns the factory of a registered variant: it decodes the
// configuration into a fresh policy, then turns on what the name implies.
func variantFactory(agnostic, ss bool, fresh func() (policy.Policy, switches)) policy.Factory {
	return func(config []byte) (policy.Policy, error) {
		p, sw := fresh()
		if err := policy.DecodeConfig(config, p); err != nil {
			return nil, err
		}
		*sw.agnostic = *sw.agnostic || agnostic
		spaceSharing := false
		if sw.ss != nil {
			*sw.ss = *sw.ss || ss
			spaceSharing = *sw.ss
		}
		return p, checkVariant(p.Name(), *sw.agnostic, spaceSharing)
	}
}

// variantPairs checks the variant switches and returns the space-sharing
// pairs among jobs when ss is set, with warnings about pairs it dropped.
func variantPairs(name string, c allocation.Cluster, jobs []*policy.Job, agnostic, ss bool) ([]allocation.Pair, []string, error) {
	if err := checkVariant(name, agnostic, ss); err != nil || !ss {
		return nil, nil, err
	}
	pp, warnings := pairs(c, jobs)
	return pp, warnings, nil
}

// needSteps leaves out, recording why in out, the jobs whose length is
// unknown to a policy that needs every job's remaining steps, and returns
// the others.
func needSteps(name string, jobs []*policy.Job, out map[string]string) ([]*policy.Job, map[string]string) {
	kept := jobs[:0:0]
	for _, j := range jobs {
		if j.StepsTotal == 0 {
			out = leave(out, j.ID, fmt.Sprintf("steps_total: unknown; %s needs every job's remaining steps", name))
			continue
		}
		kept = append(kept, j)
	}
	return kept, out
}

// chainBases returns the Warm for a decision's chain of LPs (water-filling
// levels): the policy's own when on, else a fresh one, so that the LPs
// within a decision always start from their predecessor's bases while the
// decision depends on no earlier one.
func chainBases(on bool, bases **allocation.Warm) *allocation.Warm {
	if w := warmBases(on, bases); w != nil {
		return w
	}
	return new(allocation.Warm)
}

// warmBases returns the Warm a policy's programs use: nil unless on, else
// *bases, made on first use.
func warmBases(on bool, bases **allocation.Warm) *allocation.Warm {
	if !on {
		return nil
	}
	if *bases == nil {
		*bases = new(allocation.Warm)
	}
	return *bases
}
