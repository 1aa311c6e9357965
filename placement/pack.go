package placement

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dlsched/dlsched/allocation"
)

// Demand is what one item needs at once: whole GPUs, CPU cores and memory.
// The zero value needs nothing and fits on any server.
type Demand struct {
	GPUs     int     `json:"gpus"`
	CPUs     float64 `json:"cpus,omitempty"`
	MemoryGB float64 `json:"memory_gb,omitempty"`
}

// Item is one thing to pack, usually a job.
type Item struct {
	// ID names the item; it must be non-empty and unique among the items of
	// one call.
	ID     string `json:"id"`
	Demand Demand `json:"demand"`
	// Accelerator restricts the item to servers of that type; empty means
	// any type. A type the cluster lacks leaves the item unplaced.
	Accelerator allocation.Accelerator `json:"accelerator,omitempty"`
	// Worker is the size of one of the item's workers: its GPUs come in
	// Demand.GPUs/Worker workers, each on one server, so a split puts a
	// multiple of Worker on every server. Demand.GPUs must be a multiple of
	// it. Zero means 1.
	Worker int `json:"worker,omitempty"`
}

// worker returns the item's worker size, at least 1.
func (it Item) worker() int { return max(it.Worker, 1) }

// Options tune the packing functions. The zero value never splits an item.
type Options struct {
	// Split lets an item that fits on no single server be spread over
	// several servers of one accelerator type (a gang), in whole workers
	// (Item.Worker), using as few servers as possible. Zero (false) keeps
	// every item on one server.
	Split bool
}

// Packing is the result of a packing function.
type Packing struct {
	// Placed maps the ID of every item that fit to its assignments, sorted
	// by server ID. An item that was not split has exactly one assignment;
	// an item with no GPUs has one assignment of zero GPUs.
	Placed map[string][]allocation.Assignment
	// Unplaced lists the IDs of the items that did not fit, sorted.
	Unplaced []string
	// Free is the capacity left after packing, so that calls can be
	// chained.
	Free Free
}

// Free is the remaining capacity of each server of a cluster. Its methods
// never modify it: Take returns a new value. The zero value is a cluster with
// no servers, on which nothing fits.
type Free struct {
	servers []space                  // sorted by ID
	accs    []allocation.Accelerator // the servers' types, sorted
	ref     ref
}

// Space is the remaining capacity of one server. CPUs or MemoryGB is +Inf
// when the server does not track that dimension (its capacity in the
// Cluster is zero).
type Space struct {
	Server      string                 `json:"server"`
	Accelerator allocation.Accelerator `json:"accelerator"`
	Remaining   Demand                 `json:"remaining"`
}

// space is a server's remaining capacity; untracked dimensions are +Inf.
type space struct {
	id   string
	acc  allocation.Accelerator
	gpus int
	cpus float64
	mem  float64
	full Demand // the server's capacity, for Put
}

// ref is the size of the largest server in each dimension, the scale on
// which demands and leftovers are compared. Zero means no server has the
// dimension (or tracks it).
type ref struct {
	gpus      int
	cpus, mem float64
}

// NewFree returns the full capacity of c. A server whose CPUs or MemoryGB is
// zero does not track that dimension: any demand fits there. It returns an
// error wrapping allocation.ErrInvalid if c is malformed.
func NewFree(c allocation.Cluster) (Free, error) {
	if err := c.Validate(); err != nil {
		return Free{}, err
	}
	f := Free{servers: make([]space, 0, len(c.Servers))}
	for _, s := range c.Servers {
		sp := space{id: s.ID, acc: s.Accelerator, gpus: s.GPUs, cpus: math.Inf(1), mem: math.Inf(1)}
		if s.CPUs > 0 {
			sp.cpus = s.CPUs
		}
		if s.MemoryGB > 0 {
			sp.mem = s.MemoryGB
		}
		sp.full = Demand{GPUs: sp.gpus, CPUs: sp.cpus, MemoryGB: sp.mem}
		f.servers = append(f.servers, sp)
		f.ref.gpus = max(f.ref.gpus, s.GPUs)
		f.ref.cpus = max(f.ref.cpus, s.CPUs)
		f.ref.mem = max(f.ref.mem, s.MemoryGB)
	}
	slices.SortFunc(f.servers, func(a, b space) int { return strings.Compare(a.id, b.id) })
	f.accs = c.Types()
	return f, nil
}

// Servers returns the remaining capacity of every server, sorted by ID.
func (f Free) Servers() []Space {
	out := make([]Space, len(f.servers))
	for i, s := range f.servers {
		out[i] = s.public()
	}
	return out
}

// Remaining returns the remaining capacity of the server with the given ID
// (untracked dimensions are +Inf) and whether the server exists.
func (f Free) Remaining(server string) (Demand, bool) {
	i, ok := f.index(server)
	if !ok {
		return Demand{}, false
	}
	return f.servers[i].public().Remaining, true
}

// Take returns f with d removed from the server's capacity, e.g. for a job
// that keeps running where it is. f itself is unchanged. It returns an error
// wrapping allocation.ErrInvalid for an unknown server or a malformed demand,
// and one wrapping allocation.ErrOverCapacity if d does not fit.
func (f Free) Take(server string, d Demand) (Free, error) {
	if err := d.validate(fmt.Sprintf("take on server %q", server)); err != nil {
		return f, err
	}
	i, ok := f.index(server)
	if !ok {
		return f, fmt.Errorf("%w placement: take: server %q: unknown", allocation.ErrInvalid, server)
	}
	if !f.servers[i].fits(d) {
		return f, fmt.Errorf("%w: server %q: %+v does not fit in %+v",
			allocation.ErrOverCapacity, server, d, f.servers[i].public().Remaining)
	}
	g := f.clone()
	g.servers[i].take(d)
	return g, nil
}

// Put returns f with d given back to the server, the inverse of Take, e.g.
// for a job that gives up part of what it holds. f itself is unchanged. It
// returns an error wrapping allocation.ErrInvalid for an unknown server, a
// malformed demand, or one that would leave the server more than its
// capacity (beyond a relative rounding error of 1e-9, which is dropped).
func (f Free) Put(server string, d Demand) (Free, error) {
	if err := d.validate(fmt.Sprintf("put on server %q", server)); err != nil {
		return f, err
	}
	i, ok := f.index(server)
	if !ok {
		return f, fmt.Errorf("%w placement: put: server %q: unknown", allocation.ErrInvalid, server)
	}
	s := f.servers[i]
	over := func(left, add, full float64) bool { return left+add > full*(1+1e-9) }
	if s.gpus+d.GPUs > s.full.GPUs || over(s.cpus, d.CPUs, s.full.CPUs) || over(s.mem, d.MemoryGB, s.full.MemoryGB) {
		return f, fmt.Errorf("%w placement: put: server %q: %+v more than it holds, %+v free of %+v",
			allocation.ErrInvalid, server, d, s.public().Remaining, s.full)
	}
	g := f.clone()
	g.servers[i].take(Demand{GPUs: -d.GPUs, CPUs: -d.CPUs, MemoryGB: -d.MemoryGB})
	g.servers[i].cpus = min(g.servers[i].cpus, s.full.CPUs)
	g.servers[i].mem = min(g.servers[i].mem, s.full.MemoryGB)
	return g, nil
}

func (f Free) index(server string) (int, bool) {
	return slices.BinarySearchFunc(f.servers, server, func(s space, id string) int {
		return strings.Compare(s.id, id)
	})
}

func (f Free) clone() Free {
	return Free{servers: slices.Clone(f.servers), accs: f.accs, ref: f.ref}
}

func (s space) public() Space {
	return Space{Server: s.id, Accelerator: s.acc, Remaining: Demand{GPUs: s.gpus, CPUs: s.cpus, MemoryGB: s.mem}}
}

// fits reports whether d fits in s, comparing GPUs first: most servers of
// a busy cluster fail there.
func (s space) fits(d Demand) bool {
	return d.GPUs <= s.gpus && d.CPUs <= s.cpus && d.MemoryGB <= s.mem
}

func (s *space) take(d Demand) {
	s.gpus -= d.GPUs
	s.cpus -= d.CPUs
	s.mem -= d.MemoryGB
}

func (s space) allows(it Item) bool {
	return it.Accelerator == "" || it.Accelerator == s.acc
}

// share returns d's dominant share: its largest demand relative to the
// largest server, over the dimensions some server has.
func (r ref) share(d Demand) float64 {
	var x float64
	if r.gpus > 0 {
		x = max(x, float64(d.GPUs)/float64(r.gpus))
	}
	if r.cpus > 0 {
		x = max(x, d.CPUs/r.cpus)
	}
	if r.mem > 0 {
		x = max(x, d.MemoryGB/r.mem)
	}
	return x
}

// slack returns the normalized sum of the CPU and memory a server has left
// after taking d; an untracked dimension counts as a whole largest server.
func (r ref) slack(s space, d Demand) float64 {
	term := func(left, scale float64) float64 {
		switch {
		case math.IsInf(left, 1):
			return 1
		case scale > 0:
			return left / scale
		}
		return 0
	}
	return term(s.cpus-d.CPUs, r.cpus) + term(s.mem-d.MemoryGB, r.mem)
}

// tighter reports whether taking d leaves server a a tighter fit than server
// b: fewer GPUs left, then less normalized CPU and memory, then a smaller ID.
func (r ref) tighter(a space, da Demand, b space, db Demand) bool {
	if ga, gb := a.gpus-da.GPUs, b.gpus-db.GPUs; ga != gb {
		return ga < gb
	}
	if sa, sb := r.slack(a, da), r.slack(b, db); sa != sb {
		return sa < sb
	}
	return a.id < b.id
}

func (d Demand) validate(what string) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w placement: %s: %s: %s", allocation.ErrInvalid, what, field, fmt.Sprintf(format, args...))
	}
	switch {
	case d.GPUs < 0:
		return bad("gpus", "%d is negative", d.GPUs)
	case !(d.CPUs >= 0 && d.CPUs <= math.MaxFloat64):
		return bad("cpus", "%v is not a finite non-negative number", d.CPUs)
	case !(d.MemoryGB >= 0 && d.MemoryGB <= math.MaxFloat64):
		return bad("memory_gb", "%v is not a finite non-negative number", d.MemoryGB)
	}
	return nil
}

func validateItems(items []Item) error {
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		switch {
		case it.ID == "":
			return fmt.Errorf("%w placement: item %d: id: empty", allocation.ErrInvalid, i)
		case seen[it.ID]:
			return fmt.Errorf("%w placement: item %q: id: duplicate", allocation.ErrInvalid, it.ID)
		}
		seen[it.ID] = true
		if err := it.Demand.validate(fmt.Sprintf("item %q", it.ID)); err != nil {
			return err
		}
		switch {
		case it.Worker < 0:
			return fmt.Errorf("%w placement: item %q: worker: %d is negative", allocation.ErrInvalid, it.ID, it.Worker)
		case it.Demand.GPUs%it.worker() != 0:
			return fmt.Errorf("%w placement: item %q: gpus: %d is not a multiple of worker %d", allocation.ErrInvalid, it.ID, it.Demand.GPUs, it.Worker)
		}
	}
	return nil
}

// FirstFitDecreasing packs items onto free in decreasing order of dominant
// share (ties by ID), putting each on the first server, in ID order, of an
// allowed type that has room in every dimension. An item that fits on no
// single server is split as described on Options.Split, or reported
// unplaced. free is not modified. It returns an error wrapping
// allocation.ErrInvalid, naming the item and field, for an empty or
// duplicate ID, a negative or non-finite demand, a negative Worker or GPUs
// that are not a multiple of it.
func FirstFitDecreasing(free Free, items []Item, opt Options) (Packing, error) {
	return pack(free, items, opt, func(f *Free, it Item) int {
		d := it.Demand
		for i := range f.servers {
			if s := &f.servers[i]; s.gpus >= d.GPUs && s.fits(d) && s.allows(it) {
				return i
			}
		}
		return -1
	})
}

// BestFit packs items onto free in decreasing order of dominant share (ties
// by ID), putting each on the server of an allowed type, with room in every
// dimension, that it leaves with the fewest free GPUs; ties go to the server
// left with the least normalized CPU plus memory, then to the smaller server
// ID. Splitting, errors and free are as for FirstFitDecreasing.
func BestFit(free Free, items []Item, opt Options) (Packing, error) {
	return pack(free, items, opt, func(f *Free, it Item) int {
		best, d := -1, it.Demand
		for i := range f.servers {
			s := &f.servers[i]
			if s.gpus < d.GPUs || !s.fits(d) || !s.allows(it) {
				continue
			}
			if best < 0 || f.ref.tighter(*s, d, f.servers[best], d) {
				best = i
			}
		}
		return best
	})
}

// pack validates and orders the items, then places each one on the server
// choose picks (-1: none), splitting it when allowed and needed.
func pack(free Free, items []Item, opt Options, choose func(*Free, Item) int) (Packing, error) {
	if err := validateItems(items); err != nil {
		return Packing{}, err
	}
	f := free.clone()
	type keyed struct {
		share float64
		item  Item
	}
	order := make([]keyed, len(items))
	for i, it := range items {
		order[i] = keyed{f.ref.share(it.Demand), it}
	}
	slices.SortFunc(order, func(a, b keyed) int {
		if c := cmp.Compare(b.share, a.share); c != 0 {
			return c
		}
		return strings.Compare(a.item.ID, b.item.ID)
	})
	p := Packing{Placed: make(map[string][]allocation.Assignment, len(items))}
	for _, k := range order {
		it := k.item
		if i := choose(&f, it); i >= 0 {
			f.servers[i].take(it.Demand)
			p.Placed[it.ID] = []allocation.Assignment{{Server: f.servers[i].id, GPUs: it.Demand.GPUs}}
			continue
		}
		if opt.Split {
			if as := f.split(it); as != nil {
				p.Placed[it.ID] = as
				continue
			}
		}
		p.Unplaced = append(p.Unplaced, it.ID)
	}
	slices.Sort(p.Unplaced)
	p.Free = f
	return p, nil
}

// part returns the share of d that g of its GPUs carry: CPU and memory are
// divided in proportion to GPUs.
func part(d Demand, g int) Demand {
	if g == d.GPUs {
		return d
	}
	scale := func(x float64) float64 {
		// Multiplying first keeps whole numbers exact; dividing first
		// avoids overflow.
		if y := x * float64(g); y <= math.MaxFloat64 {
			return y / float64(d.GPUs)
		}
		return x * (float64(g) / float64(d.GPUs))
	}
	return Demand{GPUs: g, CPUs: scale(d.CPUs), MemoryGB: scale(d.MemoryGB)}
}

// room returns the most GPUs of d in whole workers of w that fit on s, with
// their proportional CPU and memory, at most d.GPUs (a multiple of w).
func room(s space, d Demand, w int) int {
	g := min(s.gpus, d.GPUs)
	limit := func(left, need float64) {
		if x := left / need * float64(d.GPUs); need > 0 && x < float64(g) {
			g = min(g, int(x))
		}
	}
	limit(s.cpus, d.CPUs)
	limit(s.mem, d.MemoryGB)
	// CPU and memory scale with the GPUs, so whatever fits, less does too:
	// step down from the bound in whole workers.
	g -= g % w
	for g > 0 && !s.fits(part(d, g)) {
		g -= w
	}
	return max(g, 0)
}

// split spreads it in whole workers over as few servers of one accelerator
// type as possible, mutating f, and returns the assignments sorted by server
// ID, or nil if it does not fit (f is then unchanged). The type needing the
// fewest servers wins, ties by type name. Within it, the servers with the
// most room for the item are filled whole (ties by ID) and the remainder
// goes to the tightest fit among the rest, as for BestFit. Every room is a
// multiple of the worker size, and so is the remainder.
func (f *Free) split(it Item) []allocation.Assignment {
	d, w := it.Demand, it.worker()
	if d.GPUs < 2*w { // one worker cannot be split
		return nil
	}
	type cand struct {
		i, room int
	}
	var best []cand // the chosen servers; the last one takes the remainder
	for _, acc := range f.types(it) {
		total := 0 // free GPUs of the type: a cheap bound on the room
		for _, s := range f.servers {
			if s.acc == acc {
				total += s.gpus
			}
		}
		if total < d.GPUs {
			continue
		}
		var cs []cand
		for i, s := range f.servers {
			if s.acc == acc {
				if r := room(s, d, w); r > 0 {
					cs = append(cs, cand{i, r})
				}
			}
		}
		slices.SortFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(b.room, a.room); c != 0 {
				return c
			}
			return strings.Compare(f.servers[a.i].id, f.servers[b.i].id)
		})
		n, sum := 0, 0
		for n < len(cs) && sum < d.GPUs {
			sum += cs[n].room
			n++
		}
		if sum < d.GPUs || (best != nil && n >= len(best)) {
			continue
		}
		whole := 0
		for _, c := range cs[:n-1] {
			whole += c.room
		}
		rest := d.GPUs - whole
		last := -1
		for j := n - 1; j < len(cs); j++ {
			c := cs[j]
			if c.room < rest {
				continue
			}
			if last < 0 || f.ref.tighter(f.servers[c.i], part(d, rest), f.servers[cs[last].i], part(d, rest)) {
				last = j
			}
		}
		best = append(slices.Clone(cs[:n-1]), cand{cs[last].i, rest})
	}
	if best == nil {
		return nil
	}
	as := make([]allocation.Assignment, len(best))
	for j, c := range best {
		f.servers[c.i].take(part(d, c.room))
		as[j] = allocation.Assignment{Server: f.servers[c.i].id, GPUs: c.room}
	}
	slices.SortFunc(as, func(a, b allocation.Assignment) int { return strings.Compare(a.Server, b.Server) })
	return as
}

// types returns the accelerator types it may run on, sorted.
func (f *Free) types(it Item) []allocation.Accelerator {
	if it.Accelerator != "" {
		return []allocation.Accelerator{it.Accelerator}
	}
	return f.accs
}
