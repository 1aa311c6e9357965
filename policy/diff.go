package policy

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
)

// Kind is what a binder does to one job between two rounds.
type Kind string

// The kinds of Change, in the order a binder carries them out: GPUs are
// given up before they are taken.
const (
	// Stop: the job ran and does not run next round; checkpoint it, then
	// evict its workers.
	Stop Kind = "stop"
	// Migrate: the job keeps its GPU count on other servers; checkpoint,
	// evict, start it again where To says.
	Migrate Kind = "migrate"
	// Resize: the job runs on a different number of GPUs (an elastic job
	// grows or shrinks, a new scale factor); checkpoint and restart it on
	// To.
	Resize Kind = "resize"
	// Start: the job did not run and runs next round, on To.
	Start Kind = "start"
	// Keep: the job runs on exactly the GPUs it holds; nothing to do.
	Keep Kind = "keep"
)

var kindOrder = map[Kind]int{Stop: 0, Migrate: 1, Resize: 2, Start: 3, Keep: 4}

// Change is one job's transition from where it runs (From) to where the next
// round puts it (To). Both list GPUs per server, sorted by server ID, one
// entry per server.
type Change struct {
	Job  string                  `json:"job"`
	Kind Kind                    `json:"kind"`
	From []allocation.Assignment `json:"from,omitempty"`
	To   []allocation.Assignment `json:"to,omitempty"`
}

// Diff returns the changes that take a cluster from the placement prev to
// next, both by job ID: one Change per job that runs in either, ordered by
// Kind (Stop, Migrate, Resize, Start, Keep) and then by job ID. A job keeps
// its placement when it holds the same number of GPUs on every server,
// whatever the order of the assignments. Entries of zero or fewer GPUs are
// ignored, and several entries for one server are added up (saturating at
// math.MaxInt).
func Diff(prev, next map[string][]allocation.Assignment) []Change {
	ids := make(map[string]bool, len(prev)+len(next))
	for id, as := range prev {
		if gpus(as) > 0 {
			ids[id] = true
		}
	}
	for id, as := range next {
		if gpus(as) > 0 {
			ids[id] = true
		}
	}
	changes := make([]Change, 0, len(ids))
	for id := range ids {
		from, to := normalize(prev[id]), normalize(next[id])
		c := Change{Job: id, From: from, To: to}
		switch {
		case len(from) == 0:
			c.Kind = Start
		case len(to) == 0:
			c.Kind = Stop
		case slices.Equal(from, to):
			c.Kind = Keep
		case gpus(from) == gpus(to):
			c.Kind = Migrate
		default:
			c.Kind = Resize
		}
		changes = append(changes, c)
	}
	slices.SortFunc(changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]), cmp.Compare(a.Job, b.Job))
	})
	return changes
}

// Changes returns Diff from where the snapshot's jobs run now (Job.Placement)
// to the decision's placement: what a binder carries out to enact d. Jobs
// that run now and are absent from d.Placement, unscheduled ones among them,
// are stopped.
func Changes(s *Snapshot, d *Decision) []Change {
	prev := make(map[string][]allocation.Assignment)
	for i := range s.Jobs {
		if len(s.Jobs[i].Placement) > 0 {
			prev[s.Jobs[i].ID] = s.Jobs[i].Placement
		}
	}
	return Diff(prev, d.Placement)
}

func gpus(as []allocation.Assignment) int {
	n := 0
	for _, a := range as {
		if a.GPUs > 0 {
			n = saturated(n, a.GPUs)
		}
	}
	return n
}

// saturated returns a+b for non-negative a and b, at most math.MaxInt:
// counts from outside never wrap around.
func saturated(a, b int) int {
	return min(math.MaxInt-b, a) + b
}

// normalize merges a placement to one entry per server, sorted by server,
// dropping entries of no GPUs.
func normalize(as []allocation.Assignment) []allocation.Assignment {
	per := make(map[string]int, len(as))
	for _, a := range as {
		if a.GPUs > 0 {
			per[a.Server] = saturated(per[a.Server], a.GPUs)
		}
	}
	if len(per) == 0 {
		return nil
	}
	out := make([]allocation.Assignment, 0, len(per))
	for _, srv := range slices.Sorted(maps.Keys(per)) {
		out = append(out, allocation.Assignment{Server: srv, GPUs: per[srv]})
	}
	return out
}
