package allocation

import (
	"slices"
	"sync"

	"github.com/dlsched/dlsched/internal/lp"
)

// Warm carries where a program's solves ended to the next program over
// mostly the same jobs, so that a policy that re-solves every round starts
// each LP from the last optimal basis instead of from scratch. Variables and
// rows are matched by what they mean: X_jk by job ID and type, a pair's
// shares by both IDs and type, a job's time and max-min rows by its ID, a
// type's capacity row by the type, other rows by their order. Whatever does
// not match starts as a cold solve would (a variable at zero, a row's slack
// in the basis). For the max-min programs the package solves by their
// prices (see the package documentation), it keeps each stage's last
// capacity prices by type instead, and the next solve starts from them.
//
// A warm start changes where the engine starts, not the optimum it must
// reach: results agree with a cold solve's within the engine's tolerance
// (CLP's is 1e-7), and where the optimum is not unique they may be another
// optimal vertex. So a policy that warm-starts is deterministic for a given
// sequence of snapshots, but a fresh policy (after a restart) starts cold
// and may differ in the last digits. CLP and the pure-Go engine (internal/lp's
// Sparse) both use a start.
//
// The zero value is ready to use, and a Warm is safe for concurrent use;
// two programs solving at once through one Warm still each get a valid
// start.
type Warm struct {
	mu     sync.Mutex
	stages map[string]*record
	// prices are, by stage, the capacity prices at which MaximizeMin's
	// stage last ended over the jobs at the margin (see margin), by type.
	prices map[string]map[Accelerator]float64
}

// lastPrices returns stage's last prices for the program's types, or nil
// where there are none or some type has none.
func (p *Program) lastPrices(stage string) []float64 {
	if p.warm == nil {
		return nil
	}
	p.warm.mu.Lock()
	defer p.warm.mu.Unlock()
	lambda := make([]float64, len(p.types))
	for k, a := range p.types {
		x, ok := p.warm.prices[stage][a]
		if !ok {
			return nil
		}
		lambda[k] = x
	}
	return lambda
}

// keepPrices remembers lambda as stage's last prices; nil forgets them.
func (p *Program) keepPrices(stage string, lambda []float64) {
	if p.warm == nil {
		return
	}
	p.warm.mu.Lock()
	defer p.warm.mu.Unlock()
	if p.warm.prices == nil {
		p.warm.prices = make(map[string]map[Accelerator]float64)
	}
	delete(p.warm.prices, stage)
	if lambda != nil {
		m := make(map[Accelerator]float64, len(lambda))
		for k, x := range lambda {
			m[p.types[k]] = x
		}
		p.warm.prices[stage] = m
	}
}

// record is where one stage's last solve ended. What belongs to a job (its
// X_jk, its time row, its own max-min row) is kept by job, a pair's shares
// by its first job; the rest (capacity rows, added rows and variables) by
// slot.
type record struct {
	types []Accelerator
	job   map[string]int   // job ID → its index in x, time and expr
	x     []lp.BasisStatus // job-major, len(types) per job; none where absent
	time  []lp.BasisStatus
	expr  []lp.BasisStatus
	// pairs lists, by the index of a pair's job A, the shares of its pairs
	// that are not at zero (a few, of hundreds of thousands of columns).
	pairs [][]pairStatus
	other map[slot]lp.BasisStatus
}

// pairStatus is a pair share's status: the pair's job B and the type, by
// their indices in the record.
type pairStatus struct {
	b, k int
	st   lp.BasisStatus
}

// pair returns the status of the share of type k of the pair of jobs a
// and b (record indices, either order), or none.
func (r *record) pair(a, b, k int) lp.BasisStatus {
	for _, e := range [2][2]int{{a, b}, {b, a}} {
		for _, s := range r.pairs[e[0]] { // most jobs have none
			if s.b == e[1] && s.k == k {
				return s.st
			}
		}
	}
	return none
}

// none marks a status a record does not hold.
const none lp.BasisStatus = 0xff

// slot names a variable or row that belongs to no one job or pair.
type slot struct {
	kind byte // see the kind constants
	acc  Accelerator
	n    int // order, for rows and variables a program or solve adds
}

// Kinds of slot, and of what a variable or row of a program is.
const (
	slotX        = 'x' // X_jk
	slotPair     = 'p' // P_ck
	slotExtra    = 'v' // a variable a solve adds (t): n
	slotTime     = 't' // Σ_k X_jk ≤ 1
	slotCapacity = 'c' // a type's capacity: acc
	slotRow      = 'r' // a Constrain row: n
	slotExpr     = 'e' // a max-min row: n, unless it is one job's
)

// place is what a variable or row of a solve is: one job's (kind x, time
// or expr, with job j and type k), a pair's share (kind pair, pair j, type
// k), or a slot.
type place struct {
	kind byte
	j, k int
	s    slot
}

// Remember makes the program's solves start from w and leave their optimal
// bases in it; ids are the jobs' keys, one per job in program order. A nil
// w turns warm starts off. Remember panics if len(ids) differs from
// NumJobs, a programming error.
func (p *Program) Remember(w *Warm, ids []string) {
	if w != nil && len(ids) != len(p.gpus) {
		panic("allocation: Remember: one ID per job needed")
	}
	p.warm, p.ids = w, ids
}

// layout is what each variable and row of one solve's problem is.
type layout struct{ vars, rows []place }

// layout returns the layout of a solve's problem of nv variables (the
// program's, then those the solve adds) over the program's rows plus the
// rows extra; nil when the program is not warm.
// Both stages of MaximizeMin share one.
func (p *Program) layout(nv int, extra []place) *layout {
	if p.warm == nil {
		return nil
	}
	vars, rows := p.places(nv, extra)
	return &layout{vars, rows}
}

// start returns the basis remembered for stage, if any, for a problem
// laid out as l.
func (p *Program) start(stage string, l *layout) *lp.Basis {
	if l == nil {
		return nil
	}
	p.warm.mu.Lock()
	r := p.warm.stages[stage]
	p.warm.mu.Unlock()
	if r == nil {
		return nil
	}
	prev := make([]int, len(p.ids)) // each job's index in r, or -1
	for j, id := range p.ids {
		if i, ok := r.job[id]; ok {
			prev[j] = i
		} else {
			prev[j] = -1
		}
	}
	types := make([]int, len(p.types)) // each type's index in r, or -1
	for k, t := range p.types {
		types[k] = slices.Index(r.types, t)
	}
	look := func(pl place, cold lp.BasisStatus) lp.BasisStatus {
		st := none
		if pl.kind == 0 {
			if v, ok := r.other[pl.s]; ok {
				st = v
			}
		} else if pl.kind == slotPair {
			pr := p.pairs[pl.j]
			if a, b, k := prev[pr.A], prev[pr.B], types[pl.k]; a >= 0 && b >= 0 && k >= 0 {
				st = r.pair(a, b, k)
			}
		} else if i := prev[pl.j]; i >= 0 {
			switch pl.kind {
			case slotX:
				if k := types[pl.k]; k >= 0 {
					st = r.x[i*len(r.types)+k]
				}
			case slotTime:
				st = r.time[i]
			case slotExpr:
				st = r.expr[i]
			}
		}
		if st == none {
			return cold
		}
		return st
	}
	b := &lp.Basis{Vars: make([]lp.BasisStatus, len(l.vars)), Rows: make([]lp.BasisStatus, len(l.rows))}
	for i, pl := range l.vars {
		b.Vars[i] = look(pl, lp.AtLower)
	}
	for i, pl := range l.rows {
		b.Rows[i] = look(pl, lp.Basic)
	}
	return b
}

// keep remembers the basis a solve of stage, laid out as l, ended with.
func (p *Program) keep(stage string, l *layout, b *lp.Basis) {
	if l == nil || b == nil {
		return
	}
	n, nk := len(p.ids), len(p.types)
	r := &record{types: p.types, job: make(map[string]int, n), other: make(map[slot]lp.BasisStatus), pairs: make([][]pairStatus, n),
		x: make([]lp.BasisStatus, n*nk), time: make([]lp.BasisStatus, n), expr: make([]lp.BasisStatus, n)}
	for _, s := range [][]lp.BasisStatus{r.x, r.time, r.expr} {
		for i := range s {
			s[i] = none
		}
	}
	for j, id := range p.ids {
		r.job[id] = j
	}
	put := func(pl place, st lp.BasisStatus) {
		switch pl.kind {
		case 0:
			r.other[pl.s] = st
		case slotPair:
			// A share at zero is what start assumes of one not recorded:
			// most of them stay out.
			if st != lp.AtLower {
				pr := p.pairs[pl.j]
				r.pairs[pr.A] = append(r.pairs[pr.A], pairStatus{b: pr.B, k: pl.k, st: st})
			}
		case slotX:
			r.x[pl.j*nk+pl.k] = st
		case slotTime:
			r.time[pl.j] = st
		case slotExpr:
			r.expr[pl.j] = st
		}
	}
	for i, pl := range l.vars {
		put(pl, b.Vars[i])
	}
	for i, pl := range l.rows {
		put(pl, b.Rows[i])
	}
	p.warm.mu.Lock()
	defer p.warm.mu.Unlock()
	if p.warm.stages == nil {
		p.warm.stages = make(map[string]*record)
	}
	p.warm.stages[stage] = r
}

// places says what each of a solve's nv variables and its rows are: the
// program's own, then the variables the solve added, then the rows it
// added (rows).
func (p *Program) places(nv int, rows []place) (vars, all []place) {
	vars = make([]place, nv)
	base := p.prob.NumVars()
	for i := base; i < len(vars); i++ {
		vars[i] = place{s: slot{kind: slotExtra, n: i - base}}
	}
	for j, row := range p.x {
		for k, v := range row {
			if v >= 0 {
				vars[v] = place{kind: slotX, j: j, k: k}
			}
		}
	}
	for c, row := range p.px {
		for k, v := range row {
			if v >= 0 {
				vars[v] = place{kind: slotPair, j: c, k: k}
			}
		}
	}
	all = make([]place, 0, len(p.rows)+len(rows))
	for _, r := range p.rows {
		if r.kind == 0 && r.s.kind == slotCapacity {
			r.s.acc = p.types[r.s.n]
			r.s.n = 0
		}
		all = append(all, r)
	}
	return vars, append(all, rows...)
}

// exprPlaces says what the max-min rows of exprs are: a job's where an
// expression is one job's (its terms are that job's X_jk alone), else by
// order.
func (p *Program) exprPlaces(exprs []Expr) []place {
	if p.warm == nil {
		return nil
	}
	owner := p.owners()
	out := make([]place, len(exprs))
	for i, e := range exprs {
		out[i] = place{s: slot{kind: slotExpr, n: i}}
		job := -1
		for _, t := range e.terms {
			o := owner[t.Var]
			if o.pair >= 0 || (job >= 0 && o.row != job) {
				job = -2
				break
			}
			job = o.row
		}
		if job >= 0 {
			out[i] = place{kind: slotExpr, j: job}
		}
	}
	return out
}
