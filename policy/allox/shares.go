package allox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// The rules AlloX can follow for gangs, the configuration's "rule".
const (
	// RuleQueues is dlsched's rule, the default: a g-GPU job holds g of
	// the matched GPUs' queues and starts on g free GPUs ([AlloX]).
	RuleQueues = "queues"
	// RuleShockwave is the rule of Shockwave's simulator: the job first on
	// a GPU gets the time share 1/g there, placed by Gavel's round
	// mechanism ([Shares]).
	RuleShockwave = "shockwave"
)

// newPolicy builds "allox" from its configuration: an [AlloX], or with
// "rule": "shockwave" a [Shares] composed with the round mechanism, which
// also takes the keys of policy.InRounds.
func newPolicy(config []byte) (policy.Policy, error) {
	var c struct {
		Rule string `json:"rule"`
	}
	if err := lenient(config, &c); err != nil {
		return nil, err
	}
	switch c.Rule {
	case "", RuleQueues:
		return policy.Configured((*AlloX).check)(config)
	case RuleShockwave:
		return policy.InRounds(policy.Configured((*Shares).check))(config)
	}
	return nil, fmt.Errorf("%w: allox: rule: %q is neither %q nor %q", policy.ErrInvalidConfig, c.Rule, RuleQueues, RuleShockwave)
}

// Shares is AlloX as Shockwave's simulator runs it, for comparing with the
// numbers of Shockwave's paper: a share policy that the round mechanism
// places (register it with "rule": "shockwave"; policy.Rounds composes it).
// It remembers its last shares and is policy.Stateful.
//
// A job whose shares summed to exactly 1 at the last call keeps them (a
// one-GPU job that started); its GPU leaves the free workers. Every other
// job competes again, multi-GPU jobs included. Of the m competing jobs,
// the max(⌊α·m⌋, F) that have waited longest are matched to the F free
// workers and positions at the least total cost
//
//	Σ_j  p_j·q_{j,k(w_j)} + d_j,   q_jk = (StepsTotal_j − StepsDone_j) / Throughput_jk,
//
// and the job first on a worker of type k gets X_jk = 1/g_j, g_j its GPUs:
// a g-GPU job is given one GPU's worth of time, so the mechanism runs it a
// 1/g fraction of the rounds while its share lasts. Every other job keeps
// its last shares. Objective is the matching's total cost, in seconds.
//
// Differences from Shockwave's code: a job cannot be matched to a type
// where its throughput is zero (the code uses 1e-10, so such a job could
// head a worker it cannot use); and a job of unknown length (StepsTotal
// zero), which the code does not know of, is left out of the matching and
// gets 1/g on a worker that the matching leaves free, longest-waiting
// first.
type Shares struct {
	// Alpha is the fairness knob α in (0,1]; nil means 1. Shockwave's
	// comparison used 0.2.
	Alpha *float64 `json:"alpha,omitempty"`
	// Rule is RuleShockwave; it is here so that the configuration decodes.
	Rule string `json:"rule,omitempty"`

	last map[string]map[allocation.Accelerator]float64
}

var _ policy.Stateful = (*Shares)(nil)

// Name returns "allox".
func (*Shares) Name() string { return "allox" }

// Facts implements policy.Reader, as AlloX's.
func (*Shares) Facts() (uses, needs policy.Facts) { return (*AlloX).Facts(nil) }

func (p *Shares) check() error {
	if p.Rule != "" && p.Rule != RuleShockwave {
		return fmt.Errorf("%w: allox: rule: %q; Shares follows %q", policy.ErrInvalidConfig, p.Rule, RuleShockwave)
	}
	return (&AlloX{Alpha: p.Alpha}).check()
}

// Allocate decides the shares of the snapshot's jobs.
func (p *Shares) Allocate(ctx context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, d, jobs, err := open(ctx, p.check, s)
	if err != nil {
		return nil, err
	}
	kept, rest := p.split(jobs)
	workers := freeWorkers(s.Cluster, kept, p.last, len(rest))
	cands, unknown := competing(s, rest)
	alpha := (&AlloX{Alpha: p.Alpha}).alpha()
	cands = cands[:min(len(cands), max(int(alpha*float64(len(cands))+1e-9), len(workers)))]

	next := make(map[string]map[allocation.Accelerator]float64, len(jobs))
	for _, j := range jobs {
		if x := p.last[j.ID]; len(x) > 0 {
			next[j.ID] = maps.Clone(x)
		}
	}
	left := make(map[allocation.Accelerator]int)
	for _, w := range workers {
		left[w.k]++
	}
	if len(cands) > 0 && len(workers) > 0 {
		heads, cost, err := match(ctx, cands, workers, shareQ)
		if err != nil {
			return nil, err
		}
		d.Objective = cost
		for _, h := range heads {
			give(next, h.jb.j, h.k)
			left[h.k]--
		}
	}
	fill(next, unknown, left)
	p.last = next
	d.Allocation = grants(s.Cluster, jobs, next)
	return d, nil
}

// split returns the jobs whose last shares sum to exactly 1, which keep
// them, and the others.
func (p *Shares) split(jobs []*policy.Job) (kept, rest []*policy.Job) {
	for _, j := range jobs {
		sum := 0.0
		for _, k := range slices.Sorted(maps.Keys(p.last[j.ID])) {
			sum += p.last[j.ID][k]
		}
		if sum == 1 {
			kept = append(kept, j)
		} else {
			rest = append(rest, j)
		}
	}
	return kept, rest
}

// freeWorkers lists one worker per GPU of the cluster, by type, less one
// for each kept job whose share of that type is 1, and at most limit of a
// type: a matching of limit jobs uses no more, and workers of a type are
// alike.
func freeWorkers(c allocation.Cluster, kept []*policy.Job, last map[string]map[allocation.Accelerator]float64, limit int) []worker {
	n := make(map[allocation.Accelerator]int)
	for _, srv := range c.Servers {
		n[srv.Accelerator] += srv.GPUs
	}
	for _, j := range kept {
		for k, x := range last[j.ID] {
			if x == 1 {
				n[k]--
			}
		}
	}
	var ws []worker
	for _, k := range slices.Sorted(maps.Keys(n)) {
		for range min(max(n[k], 0), limit) {
			ws = append(ws, worker{k: k})
		}
	}
	return ws
}

// competing returns the jobs of known length, longest-waiting first (ties
// by ID), with the least q over the types as their key, and those of
// unknown length in the same order.
func competing(s *policy.Snapshot, jobs []*policy.Job) (known, unknown []*job) {
	for _, j := range jobs {
		jb := &job{j: j, wait: (s.Now - j.Arrival).Seconds(), left: j.StepsTotal - j.StepsDone, first: math.Inf(1)}
		if j.StepsTotal == 0 {
			unknown = append(unknown, jb)
			continue
		}
		for k := range j.Throughput {
			jb.first = math.Min(jb.first, shareQ(jb, k))
		}
		if !math.IsInf(jb.first, 1) {
			known = append(known, jb)
		}
	}
	longest := func(a, b *job) int { return cmp.Compare(b.wait, a.wait) }
	slices.SortStableFunc(known, longest)
	slices.SortStableFunc(unknown, longest)
	return known, unknown
}

// shareQ is the processing time of Shockwave's rule: the job's remaining
// steps at its throughput on k, whatever its GPU count.
func shareQ(jb *job, k allocation.Accelerator) float64 {
	if thr := jb.j.Throughput[k]; thr > 0 {
		return jb.left / thr
	}
	return math.Inf(1)
}

// give sets j's share of type k to 1/g.
func give(next map[string]map[allocation.Accelerator]float64, j *policy.Job, k allocation.Accelerator) {
	if next[j.ID] == nil {
		next[j.ID] = make(map[allocation.Accelerator]float64)
	}
	next[j.ID][k] = 1 / float64(j.GPUs)
}

// fill gives the jobs of unknown length, in order, 1/g on a type with a
// worker left and a positive throughput.
func fill(next map[string]map[allocation.Accelerator]float64, unknown []*job, left map[allocation.Accelerator]int) {
	for _, jb := range unknown {
		for _, k := range slices.Sorted(maps.Keys(left)) {
			if left[k] > 0 && jb.j.Throughput[k] > 0 {
				give(next, jb.j, k)
				left[k]--
				break
			}
		}
	}
}

// grants turns the shares into the jobs' Grants. Kept shares and new ones
// can ask a type for more than its GPUs, Σ_j g_j·X_jk > N_k, which Gavel's
// mechanism takes and placement.Mechanism refuses: then every share of the
// type is scaled by N_k / Σ_j g_j·X_jk, which keeps the order of the jobs'
// priorities X_jk / received_jk.
func grants(c allocation.Cluster, jobs []*policy.Job, shares map[string]map[allocation.Accelerator]float64) allocation.Allocation {
	used := make(map[allocation.Accelerator]float64)
	for _, j := range jobs {
		for k, x := range shares[j.ID] {
			used[k] += float64(j.GPUs) * x
		}
	}
	scale := make(map[allocation.Accelerator]float64)
	for _, srv := range c.Servers {
		scale[srv.Accelerator] += float64(srv.GPUs)
	}
	for k, n := range scale {
		scale[k] = 1
		if used[k] > n {
			scale[k] = n / used[k]
		}
	}
	a := make(allocation.Allocation, len(shares))
	for _, j := range jobs {
		x := shares[j.ID]
		if len(x) == 0 {
			continue
		}
		g := allocation.Grant{Shares: make(map[allocation.Accelerator]float64, len(x)), GPUs: j.GPUs, GPUsPerWorker: j.GPUsPerWorker}
		for k, v := range x {
			g.Shares[k] = v * scale[k]
		}
		a[j.ID] = g
	}
	return a
}

// sharesState is what Shares remembers: its last shares, by job.
type sharesState struct {
	Last map[string]map[allocation.Accelerator]float64 `json:"last,omitempty"`
}

// SaveState returns the last shares.
func (p *Shares) SaveState() (json.RawMessage, error) {
	return policy.SaveState(sharesState{Last: p.last})
}

// RestoreState restores shares SaveState returned; a share that is not in
// [0, 1] is an error.
func (p *Shares) RestoreState(b json.RawMessage) error {
	st, err := policy.RestoreState[sharesState](b)
	if err != nil {
		return err
	}
	for id, x := range st.Last {
		for k, v := range x {
			if !(v >= 0 && v <= 1) || id == "" {
				return fmt.Errorf("%w: state: job %q: share of %s: %v is not in [0, 1]", policy.ErrInvalidConfig, id, k, v)
			}
		}
	}
	p.last = st.Last
	return nil
}

// lenient decodes the fields of v that config has, ignoring the others.
func lenient(config []byte, v any) error {
	if len(bytes.TrimSpace(config)) == 0 {
		return nil
	}
	if err := json.Unmarshal(config, v); err != nil {
		return fmt.Errorf("%w: allox: %v", policy.ErrInvalidConfig, err)
	}
	return nil
}
