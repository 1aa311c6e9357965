package synergy_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/synergy"
	"github.com/dlsched/dlsched/throughput"
)

// The helpers of this file are prefixed pt so as not to collide with those
// of the other test files of the package.

const ptType allocation.Accelerator = "v100"

var ptOrders = []synergy.Order{synergy.FIFO, synergy.SRTF, synergy.LAS, synergy.FTF}

type ptAllocator interface {
	Allocate(context.Context, *policy.Snapshot) (*policy.Decision, error)
}

// ptSolver is the LP engine the tests give Opt: CLP when compiled in.
func ptSolver() allocation.Solver {
	if slices.Contains(allocation.Solvers(), allocation.CLP) {
		return allocation.CLP
	}
	return allocation.PureGo
}

// ptShare returns the proportional share per GPU the policies use, the
// smallest ratio over the servers, and the largest server.
func ptShare(c allocation.Cluster) (cpus, mem float64, maxGPUs int, maxCPUs, maxMem float64) {
	cpus, mem = math.Inf(1), math.Inf(1)
	for _, s := range c.Servers {
		if s.GPUs == 0 {
			continue
		}
		g := float64(s.GPUs)
		cpus, mem = min(cpus, s.CPUs/g), min(mem, s.MemoryGB/g)
		maxGPUs, maxCPUs, maxMem = max(maxGPUs, s.GPUs), max(maxCPUs, s.CPUs), max(maxMem, s.MemoryGB)
	}
	return
}

// ptCluster returns 1–6 servers of 8 GPUs and 500 GB with 24 cores, or
// sometimes 32 or 48, sometimes mixed.
func ptCluster(rng *rand.Rand) allocation.Cluster {
	var c allocation.Cluster
	n := 1 + rng.IntN(6)
	cores := 24.0
	if rng.IntN(3) == 0 {
		cores = []float64{32, 48}[rng.IntN(2)]
	}
	mixed := rng.IntN(4) == 0
	for i := range n {
		sv := server(fmt.Sprintf("s%02d", i))
		sv.CPUs = cores
		if mixed {
			sv.CPUs = []float64{24, 32, 48}[rng.IntN(3)]
		}
		c.Servers = append(c.Servers, sv)
	}
	return c
}

// ptMonotone returns a random profile on Synergy's grid, strictly
// increasing in both dimensions up to the cell (ci, mi) and flat beyond, so
// that its ideal is exactly that cell.
func ptMonotone(rng *rand.Rand, ci, mi int) *throughput.Sensitivity {
	axis := func(n, sat int) []float64 {
		a := make([]float64, n)
		v := 0.1 + rng.Float64()
		for i := range a {
			if i > 0 && i <= sat {
				v += 0.02 + rng.Float64()*0.5
			}
			a[i] = v
		}
		return a
	}
	a, b := axis(len(gridCPUs), ci), axis(len(gridMemory), mi)
	s := &throughput.Sensitivity{CPUs: gridCPUs, MemoryGB: gridMemory}
	for i := range gridCPUs {
		row := make([]float64, len(gridMemory))
		for m := range row {
			row[m] = a[i] * b[m]
		}
		s.Speedup = append(s.Speedup, row)
	}
	return s
}

// ptProfile returns res18, gnmt, alexnet or a random monotone profile whose
// ideal is at or above the proportional cell (shareCPUs, 62.5 GB) in both
// dimensions or at or below it in both.
func ptProfile(rng *rand.Rand, shareCPUs float64) *throughput.Sensitivity {
	si := slices.Index(gridCPUs, shareCPUs)
	if si < 0 {
		panic(fmt.Sprint("share off the grid: ", shareCPUs))
	}
	const sm = 1 // 62.5 GB
	switch rng.IntN(5) {
	case 0:
		return res18()
	case 1:
		return gnmt()
	case 2:
		return alexnet()
	case 3: // at or above
		return ptMonotone(rng, si+rng.IntN(len(gridCPUs)-si), sm+rng.IntN(len(gridMemory)-sm))
	default: // at or below
		return ptMonotone(rng, rng.IntN(si+1), rng.IntN(sm+1))
	}
}

// ptRealistic reports whether s is one of Synergy's profiles.
func ptRealistic(s *throughput.Sensitivity) bool {
	for _, p := range []func() *throughput.Sensitivity{res18, gnmt, alexnet} {
		q := p()
		if slices.Equal(s.CPUs, q.CPUs) && slices.Equal(s.MemoryGB, q.MemoryGB) &&
			slices.EqualFunc(s.Speedup, q.Speedup, slices.Equal) {
			return true
		}
	}
	return false
}

// ptSnapshot returns a random round: a cluster and up to a few jobs more
// than it has GPUs, in a random arrival order.
func ptSnapshot(rng *rand.Rand) *policy.Snapshot {
	s := &policy.Snapshot{Cluster: ptCluster(rng)}
	share, _, _, _, _ := ptShare(s.Cluster)
	n := 1 + rng.IntN(8*len(s.Cluster.Servers)/2+6)
	perm := rng.Perm(n)
	for i := range n {
		g := []int{1, 1, 1, 2, 4, 8}[rng.IntN(6)]
		j := newJob(fmt.Sprintf("j%03d", i), g, float64(perm[i])*60, ptProfile(rng, share))
		j.Throughput = map[allocation.Accelerator]float64{ptType: 0.5 + 2*rng.Float64()}
		j.StepsTotal = float64(1000 + rng.IntN(100000))
		j.StepsDone = math.Floor(rng.Float64() * j.StepsTotal)
		j.AttainedGPUSeconds = float64(rng.IntN(10) * 300 * g)
		s.Jobs = append(s.Jobs, j)
	}
	s.Now = time.Duration(n)*time.Minute + time.Hour
	return s
}

// ptDescribe prints a snapshot compactly, for failure reports.
func ptDescribe(s *policy.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "now=%v servers:", s.Now)
	for _, sv := range s.Cluster.Servers {
		fmt.Fprintf(&b, " %s(%d GPU,%v cores,%v GB)", sv.ID, sv.GPUs, sv.CPUs, sv.MemoryGB)
	}
	for _, j := range s.Jobs {
		id := j.Sensitivity.Ideal()
		fmt.Fprintf(&b, "\n  %s: %d GPU arrival=%v steps=%v/%v thr=%.3f attained=%v ideal=(%v,%v)→%.3f",
			j.ID, j.GPUs, j.Arrival, j.StepsDone, j.StepsTotal, j.Throughput[ptType], j.AttainedGPUSeconds, id.CPUs, id.MemoryGB, id.Speedup)
	}
	return b.String()
}

// ptIdeal is the job's ideal demand per GPU as the policies see it: clipped
// to the largest server, or the proportional share for a job larger than a
// server.
func ptIdeal(c allocation.Cluster, j *policy.Job) throughput.Point {
	sc, sm, maxG, maxC, maxM := ptShare(c)
	if j.GPUs > maxG {
		return throughput.Point{CPUs: sc, MemoryGB: sm, Speedup: j.Sensitivity.At(sc, sm)}
	}
	g := float64(j.GPUs)
	return j.Sensitivity.Clip(maxC/g, maxM/g)
}

// ptExpected is an independent model of the jobs a round admits to GPUs:
// the order's key, ties by arrival then ID, and
// each job admitted if its GPUs are still free; under LAS this is the
// chosen set.
func ptExpected(s *policy.Snapshot, o synergy.Order) map[string]bool {
	type keyed struct {
		j   *policy.Job
		key float64
	}
	var ks []keyed
	for i := range s.Jobs {
		j := &s.Jobs[i]
		best := j.Throughput[ptType]
		remaining := max(j.StepsTotal-j.StepsDone, 0) / best
		var key float64
		switch o {
		case synergy.SRTF:
			key = remaining
		case synergy.LAS:
			key = j.AttainedGPUSeconds
		case synergy.FTF:
			key = -(((s.Now - j.Arrival).Seconds() + remaining) / (j.StepsTotal / best))
		}
		ks = append(ks, keyed{j, key})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.j.ID, b.j.ID) })
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if a.key != b.key {
			return cmpF(a.key, b.key)
		}
		return cmpF(float64(a.j.Arrival), float64(b.j.Arrival))
	})
	free := 0
	for _, sv := range s.Cluster.Servers {
		free += sv.GPUs
	}
	set := map[string]bool{}
	for _, k := range ks {
		if k.j.GPUs <= free {
			free -= k.j.GPUs
			set[k.j.ID] = true
		}
	}
	return set
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func ptSet(d *policy.Decision) map[string]bool {
	set := map[string]bool{}
	for id := range d.Allocation {
		set[id] = true
	}
	return set
}

func ptSetString(m map[string]bool) string {
	return fmt.Sprint(slices.Sorted(maps.Keys(m)))
}

// ptCheckPlaced checks a decision with a placement: every granted job is
// placed on exactly its GPUs with one share of its type, no server gives out
// more GPUs, CPU cores or memory than it has (a job's CPU and memory on a
// server being its grant's times the fraction of its GPUs there), the
// Objective is the sum of the grants' relative throughputs and Wake is one
// lease ahead.
func ptCheckPlaced(s *policy.Snapshot, d *policy.Decision) error {
	if d == nil || d.Placement == nil {
		return errors.New("no placement")
	}
	if len(d.Placement) != len(d.Allocation) {
		return fmt.Errorf("%d placements for %d grants", len(d.Placement), len(d.Allocation))
	}
	jobs := map[string]*policy.Job{}
	for i := range s.Jobs {
		jobs[s.Jobs[i].ID] = &s.Jobs[i]
	}
	servers := map[string]allocation.Server{}
	for _, sv := range s.Cluster.Servers {
		servers[sv.ID] = sv
	}
	type use struct {
		gpus      int
		cpus, mem float64
	}
	used := map[string]*use{}
	var obj float64
	for _, id := range slices.Sorted(maps.Keys(d.Allocation)) {
		g := d.Allocation[id]
		j := jobs[id]
		switch {
		case j == nil:
			return fmt.Errorf("grant for unknown job %q", id)
		case g.GPUs != j.GPUs:
			return fmt.Errorf("job %s: granted %d GPUs, needs %d", id, g.GPUs, j.GPUs)
		case len(g.Shares) != 1 || g.Shares[ptType] != 1:
			return fmt.Errorf("job %s: shares %v, want {%s: 1}", id, g.Shares, ptType)
		case !(g.CPUs > 0 && g.MemoryGB > 0):
			return fmt.Errorf("job %s: granted %v cores, %v GB", id, g.CPUs, g.MemoryGB)
		}
		as, ok := d.Placement[id]
		if !ok {
			return fmt.Errorf("job %s granted but not placed", id)
		}
		n := 0
		seen := map[string]bool{}
		for _, a := range as {
			if a.GPUs < 1 || seen[a.Server] {
				return fmt.Errorf("job %s: bad placement %v", id, as)
			}
			seen[a.Server] = true
			n += a.GPUs
			u := used[a.Server]
			if u == nil {
				u = &use{}
				used[a.Server] = u
			}
			f := float64(a.GPUs) / float64(g.GPUs)
			u.gpus += a.GPUs
			u.cpus += g.CPUs * f
			u.mem += g.MemoryGB * f
		}
		if n != j.GPUs {
			return fmt.Errorf("job %s: placed on %d GPUs %v, needs %d", id, n, as, j.GPUs)
		}
		gg := float64(g.GPUs)
		obj += j.Sensitivity.At(g.CPUs/gg, g.MemoryGB/gg)
	}
	for _, id := range slices.Sorted(maps.Keys(used)) {
		u, sv := used[id], servers[id]
		switch {
		case sv.ID == "":
			return fmt.Errorf("placement on unknown server %q", id)
		case u.gpus > sv.GPUs:
			return fmt.Errorf("server %s: %d GPUs given, has %d", id, u.gpus, sv.GPUs)
		case u.cpus > sv.CPUs*(1+1e-9):
			return fmt.Errorf("server %s: %v cores given, has %v", id, u.cpus, sv.CPUs)
		case u.mem > sv.MemoryGB*(1+1e-9):
			return fmt.Errorf("server %s: %v GB given, has %v", id, u.mem, sv.MemoryGB)
		}
	}
	if math.Abs(obj-d.Objective) > 1e-9*max(1, obj) {
		return fmt.Errorf("objective %v, the grants' throughputs sum to %v", d.Objective, obj)
	}
	if d.Wake != s.Now+synergy.DefaultLease {
		return fmt.Errorf("wake %v, want now + %v", d.Wake, synergy.DefaultLease)
	}
	return nil
}

func ptShuffled(s *policy.Snapshot, rng *rand.Rand) *policy.Snapshot {
	c := *s
	c.Jobs = slices.Clone(s.Jobs)
	rng.Shuffle(len(c.Jobs), func(i, k int) { c.Jobs[i], c.Jobs[k] = c.Jobs[k], c.Jobs[i] })
	return &c
}

// TestFairnessProperty is the spec's check 6 over random clusters, job
// mixes and arrival orders, for every order and both placements.
func TestFairnessProperty(t *testing.T) {
	cases := 128
	if n := os.Getenv("PT_CASES"); n != "" {
		cases, _ = strconv.Atoi(n)
	}
	if testing.Short() || raceEnabled {
		cases = 10
	}
	ctx := context.Background()
	// How often the interesting paths were taken, to see the cases have
	// teeth: rounds where some job waits for GPUs, tune grants at an ideal
	// above the share, at the share below an ideal above it, and rounds
	// where greedy runs other jobs than proportional.
	var contended, upgraded, downgraded, greedyDiffers int
	defer func() {
		t.Logf("%d cases: %d contended rounds, tune grants %d ideals above the share and %d shares below the ideal; greedy differs from proportional in %d rounds",
			cases, contended, upgraded, downgraded, greedyDiffers)
	}()
	for c := range cases {
		rng := rand.New(rand.NewPCG(uint64(c), 0x5e4e6))
		s := ptSnapshot(rng)
		shuffled := ptShuffled(s, rng)
		sc, sm, _, _, _ := ptShare(s.Cluster)
		var totalCPUs, totalMem float64
		for _, sv := range s.Cluster.Servers {
			totalCPUs += sv.CPUs
			totalMem += sv.MemoryGB
		}
		jobs := map[string]*policy.Job{}
		for i := range s.Jobs {
			jobs[s.Jobs[i].ID] = &s.Jobs[i]
		}
		t.Run(fmt.Sprint("case", c), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Log(ptDescribe(s))
				}
			}()
			for _, o := range ptOrders {
				for _, cons := range []bool{false, true} {
					cfg := synergy.Config{Order: o, Consolidate: cons}
					tag := fmt.Sprintf("%s consolidate=%v", o, cons)
					run := func(name string, p ptAllocator) *policy.Decision {
						d, err := p.Allocate(ctx, s)
						if err != nil {
							t.Fatalf("%s %s: %v", name, tag, err)
						}
						d2, err := p.Allocate(ctx, shuffled)
						if err != nil {
							t.Fatalf("%s %s, shuffled: %v", name, tag, err)
						}
						// (e) determinism: the order of the jobs does not matter.
						if diff := cmp.Diff(d, d2); diff != "" {
							t.Errorf("%s %s: jobs shuffled changes the decision (-in order +shuffled):\n%s", name, tag, diff)
						}
						if err := d.Allocation.Validate(s.Cluster); err != nil {
							t.Errorf("%s %s: %v", name, tag, err)
						}
						return d
					}
					prop := run("proportional", &synergy.Proportional{Config: cfg})
					greedy := run("greedy", &synergy.Greedy{Config: cfg})
					tune := run("tune", &synergy.Tune{Config: cfg})

					// (c) capacity and consistency.
					for _, x := range []struct {
						name string
						d    *policy.Decision
					}{{"proportional", prop}, {"greedy", greedy}, {"tune", tune}} {
						if err := ptCheckPlaced(s, x.d); err != nil {
							t.Errorf("%s %s: %v", x.name, tag, err)
						}
					}

					// (a) the same jobs as proportional, which admits by GPUs alone.
					if got, want := ptSet(prop), ptExpected(s, o); !maps.Equal(got, want) {
						t.Errorf("proportional %s admits %s, want %s", tag, ptSetString(got), ptSetString(want))
					}
					if got, want := ptSet(tune), ptExpected(s, o); !maps.Equal(got, want) {
						t.Errorf("tune %s admits %s, want %s (its GPU order admits them all); warnings %q", tag, ptSetString(got), ptSetString(want), tune.Warnings)
					}
					if !maps.Equal(ptSet(tune), ptSet(prop)) {
						t.Errorf("tune %s admits %s, proportional %s", tag, ptSetString(ptSet(tune)), ptSetString(ptSet(prop)))
					}
					if len(prop.Allocation) < len(s.Jobs) {
						contended++
					}
					if !maps.Equal(ptSet(greedy), ptSet(prop)) {
						greedyDiffers++
					}
					if len(tune.Warnings) > 0 {
						t.Errorf("tune %s: warnings %q", tag, tune.Warnings)
					}

					// (b) nobody below proportional; grants are exactly the share,
					// the ideal, or (tune) one of the two.
					for _, id := range slices.Sorted(maps.Keys(prop.Allocation)) {
						g, gg := prop.Allocation[id], float64(prop.Allocation[id].GPUs)
						if math.Abs(g.CPUs/gg-sc) > 1e-9 || math.Abs(g.MemoryGB/gg-sm) > 1e-9 {
							t.Errorf("proportional %s: job %s has (%v, %v) per GPU, want (%v, %v)", tag, id, g.CPUs/gg, g.MemoryGB/gg, sc, sm)
						}
					}
					for _, id := range slices.Sorted(maps.Keys(greedy.Allocation)) {
						g, gg := greedy.Allocation[id], float64(greedy.Allocation[id].GPUs)
						ideal := ptIdeal(s.Cluster, jobs[id])
						if math.Abs(g.CPUs/gg-ideal.CPUs) > 1e-9 || math.Abs(g.MemoryGB/gg-ideal.MemoryGB) > 1e-9 {
							t.Errorf("greedy %s: job %s has (%v, %v) per GPU, want its ideal (%v, %v)", tag, id, g.CPUs/gg, g.MemoryGB/gg, ideal.CPUs, ideal.MemoryGB)
						}
					}
					for _, id := range slices.Sorted(maps.Keys(tune.Allocation)) {
						j := jobs[id]
						g, gg := tune.Allocation[id], float64(tune.Allocation[id].GPUs)
						c, m := g.CPUs/gg, g.MemoryGB/gg
						floor := j.Sensitivity.At(sc, sm)
						if got := j.Sensitivity.At(c, m); got < floor-1e-9 {
							t.Errorf("tune %s: job %s at (%v, %v) per GPU runs at %v, below its proportional %v", tag, id, c, m, got, floor)
						}
						ideal := ptIdeal(s.Cluster, j)
						atShare := math.Abs(c-sc) <= 1e-9 && math.Abs(m-sm) <= 1e-9
						atIdeal := math.Abs(c-ideal.CPUs) <= 1e-9 && math.Abs(m-ideal.MemoryGB) <= 1e-9
						above := ideal.CPUs > sc+1e-9 || ideal.MemoryGB > sm+1e-9
						switch {
						case above && atIdeal:
							upgraded++
						case above && atShare:
							downgraded++
						}
						if !atShare && !atIdeal {
							t.Errorf("tune %s: job %s at (%v, %v) per GPU, neither its share (%v, %v) nor its ideal (%v, %v)", tag, id, c, m, sc, sm, ideal.CPUs, ideal.MemoryGB)
						}
					}

					if cons {
						continue // Opt does not place, so consolidation does not matter
					}
					// (d) opt.
					op := &synergy.Opt{Config: cfg, Solver: ptSolver()}
					od := run("opt", op)
					if od.Placement != nil {
						t.Errorf("opt %s: placement %v, want none", tag, od.Placement)
					}
					if got, want := ptSet(od), ptSet(tune); !maps.Equal(got, want) {
						t.Errorf("opt %s admits %s, tune %s", tag, ptSetString(got), ptSetString(want))
					}
					var cpus, mem float64
					for _, id := range slices.Sorted(maps.Keys(od.Allocation)) {
						j, g := jobs[id], od.Allocation[id]
						if g.GPUs != j.GPUs || len(g.Shares) != 1 || g.Shares[ptType] != 1 {
							t.Errorf("opt %s: job %s granted %+v", tag, id, g)
						}
						cpus += g.CPUs
						mem += g.MemoryGB
						gg := float64(g.GPUs)
						floor := j.Sensitivity.At(sc, sm)
						// The grant is the mean of the configurations the LP mixes.
						// Synergy's profiles give less than the share at every cell
						// below it in either dimension, so the cells mixed are at or
						// above the share in both and so is their mean; a random
						// profile may mix cells below the share in different
						// dimensions, whose mean At can then fall below the floor
						// though each cell and the LP's credit are above it.
						if got := j.Sensitivity.At(g.CPUs/gg, g.MemoryGB/gg); ptRealistic(j.Sensitivity) && got < floor-1e-6 {
							t.Errorf("opt %s: job %s at (%v, %v) per GPU runs at %v, below its proportional %v", tag, id, g.CPUs/gg, g.MemoryGB/gg, got, floor)
						}
					}
					if cpus > totalCPUs*(1+1e-9)+1e-6 || mem > totalMem*(1+1e-9)+1e-6 {
						t.Errorf("opt %s grants %v cores and %v GB of %v and %v", tag, cpus, mem, totalCPUs, totalMem)
					}
					b, err := op.Bound(ctx, s)
					if err != nil {
						t.Fatalf("opt %s: bound: %v", tag, err)
					}
					if b.Objective != od.Objective {
						t.Errorf("opt %s: decision objective %v, bound %v", tag, od.Objective, b.Objective)
					}
					if b.Objective < tune.Objective-1e-6 {
						t.Errorf("opt %s: bound %v below tune's %v", tag, b.Objective, tune.Objective)
					}
					if b.Objective < prop.Objective-1e-6 {
						t.Errorf("opt %s: bound %v below proportional's %v", tag, b.Objective, prop.Objective)
					}
					for id, pt := range b.Points {
						if floor := jobs[id].Sensitivity.At(sc, sm); pt.Speedup < floor-1e-6 {
							t.Errorf("opt %s: bound credits job %s with %v, below its proportional %v", tag, id, pt.Speedup, floor)
						}
					}
				}
			}
		})
	}
}

// TestGreedyUnfair pins that Greedy has no fairness guarantee (spec check
// 4): on eight ResNet-18 jobs on one server it runs two at their ideal and
// leaves six GPUs idle, where Proportional and Tune run all eight.
func TestGreedyUnfair(t *testing.T) {
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1)}
	for i := range 8 {
		s.Jobs = append(s.Jobs, newJob(fmt.Sprint(i+1), 1, float64(i), res18()))
	}
	prop := allocate(t, "synergy.proportional", "", s)
	greedy := allocate(t, "synergy.greedy", "", s)
	tune := allocate(t, "synergy.tune", "", s)
	if len(prop.Allocation) != 8 || len(tune.Allocation) != 8 {
		t.Fatalf("proportional runs %d jobs, tune %d; want 8", len(prop.Allocation), len(tune.Allocation))
	}
	if got := ptSetString(ptSet(greedy)); got != "[1 2]" {
		t.Errorf("greedy runs %s, want [1 2]", got)
	}
	if maps.Equal(ptSet(greedy), ptSet(prop)) {
		t.Error("greedy admits the same jobs as proportional; the spec's example shows it does not")
	}
	// Jobs 3–8 get nothing: throughput 0 < their proportional 1.
	for i := 3; i <= 8; i++ {
		if _, ok := greedy.Allocation[fmt.Sprint(i)]; ok {
			t.Errorf("greedy runs job %d", i)
		}
	}
	if err := ptCheckPlaced(s, greedy); err != nil {
		t.Error(err)
	}
}

// TestLASKey is the spec's check 7: the LAS key is attained GPU-seconds,
// not rounds. A 4-GPU job after two 300-s rounds has 2400, a 1-GPU job
// after three has 900 and goes first; with only 4 GPUs, the 1-GPU job
// running leaves no room for the 4-GPU one.
func TestLASKey(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: ptType, GPUs: 4, CPUs: 12, MemoryGB: 250}}}
	big := newJob("a", 4, 0, res18()) // arrives first and sorts first by ID
	big.AttainedGPUSeconds = 2 * 300 * 4
	small := newJob("b", 1, 10, res18())
	small.AttainedGPUSeconds = 3 * 300 * 1
	s := &policy.Snapshot{Now: time.Hour, Cluster: c, Jobs: []policy.Job{big, small}}
	for _, name := range allocators {
		d := allocate(t, name, `{"order": "las"}`, s)
		if got := ptSetString(ptSet(d)); got != "[b]" {
			t.Errorf("%s las: runs %s, want [b] (900 GPU-seconds before 2400)", name, got)
		}
		// FIFO, for contrast, runs the 4-GPU job.
		d = allocate(t, name, `{"order": "fifo"}`, s)
		if got := ptSetString(ptSet(d)); got != "[a]" {
			t.Errorf("%s fifo: runs %s, want [a]", name, got)
		}
	}
}

// TestLASMostGPUsFirst: LAS allocates the jobs it chose with the most GPUs
// first. A 1-GPU ResNet-18 job with less service and a 4-GPU AlexNet job
// share one server: allocated in LAS order, greedy gives the ResNet its 9
// cores and the AlexNet's 24 no longer fit; allocated largest first, the
// AlexNet takes all 24 cores and the ResNet waits.
func TestLASMostGPUsFirst(t *testing.T) {
	r := newJob("r", 1, 0, res18())
	a := newJob("a", 4, 10, alexnet())
	a.AttainedGPUSeconds = 4 * 300
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{r, a}}

	d := allocate(t, "synergy.greedy", `{"order": "las"}`, s)
	if got := ptSetString(ptSet(d)); got != "[a]" {
		t.Errorf("greedy las: runs %s, want [a]: %v", got, d.Allocation)
	}
	if g := d.Allocation["a"]; g.CPUs != 24 || g.MemoryGB != 500 {
		t.Errorf("greedy las: alexnet has %v cores, %v GB; want 24, 500", g.CPUs, g.MemoryGB)
	}
	d = allocate(t, "synergy.greedy", `{"order": "fifo"}`, s)
	if got := ptSetString(ptSet(d)); got != "[r]" {
		t.Errorf("greedy fifo: runs %s, want [r]", got)
	}
	// Tune: the AlexNet goes first at its ideal, then gives back its
	// excess for the ResNet's share.
	d = allocate(t, "synergy.tune", `{"order": "las"}`, s)
	if g := d.Allocation["a"]; g.CPUs != 12 || g.MemoryGB != 250 {
		t.Errorf("tune las: alexnet has %v cores, %v GB; want 12, 250", g.CPUs, g.MemoryGB)
	}
	if g := d.Allocation["r"]; g.CPUs != 3 || g.MemoryGB != 62.5 {
		t.Errorf("tune las: resnet has %v cores, %v GB; want 3, 62.5", g.CPUs, g.MemoryGB)
	}
	d = allocate(t, "synergy.tune", `{"order": "fifo"}`, s)
	if g := d.Allocation["r"]; g.CPUs != 9 {
		t.Errorf("tune fifo: resnet has %v cores, want 9", g.CPUs)
	}
}

// TestFTFWorstFirst: FTF runs the job with the largest ρ first. This pins
// a deliberate difference from Synergy's code, which sorts ρ ascending and
// would run the job with the smallest ρ.
func TestFTFWorstFirst(t *testing.T) {
	// Early arrives first and sorts first by ID, and is nearly done:
	// ρ = (1000 + 1000) / 10000 = 0.2. Late has waited 900 s for a
	// 1000-s job: ρ = (900 + 1000) / 1000 = 1.9. Both need the whole
	// server.
	early := newJob("a", 8, 0, res18())
	early.StepsTotal, early.StepsDone = 10000, 9000
	late := newJob("b", 8, 100, res18())
	late.StepsTotal = 1000
	s := &policy.Snapshot{Now: 1000 * time.Second, Cluster: cluster(1), Jobs: []policy.Job{early, late}}
	for _, name := range allocators {
		d := allocate(t, name, `{"order": "ftf"}`, s)
		if got := ptSetString(ptSet(d)); got != "[b]" {
			t.Errorf("%s ftf: runs %s, want [b], the worst-off job (ρ 1.9 against 0.2)", name, got)
		}
	}
}

// TestSRTFSpeedup: SRTF orders by remaining time at the proportional share
// for every allocator, not divided by the ideal speedup as in Synergy's
// code, which would let Tune run other jobs than Proportional.
func TestSRTFSpeedup(t *testing.T) {
	// Two 5-GPU jobs on an 8-GPU server: only one runs. The GNMT job has
	// 1000 s left; the ResNet-18 job 1400 s at its proportional share. Its
	// ideal clipped to 24/5 cores per GPU gives speedup 1.484, and
	// 1400 / 1.484 ≈ 943 s, so Synergy's code, which divides by the
	// speedup for greedy and tune, would run it there and GNMT under
	// proportional. Here every allocator ranks at the proportional share,
	// so all run GNMT and Tune keeps Proportional's set.
	g := newJob("a", 5, 0, gnmt())
	g.StepsTotal = 1000
	r := newJob("b", 5, 10, res18())
	r.StepsTotal = 1400
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{g, r}}
	want := map[string]string{"synergy.proportional": "[a]", "synergy.greedy": "[a]", "synergy.tune": "[a]", "synergy.opt": "[a]"}
	for _, name := range allocators {
		d := allocate(t, name, `{"order": "srtf"}`, s)
		if got := ptSetString(ptSet(d)); got != want[name] {
			t.Errorf("%s srtf: runs %s, want %s", name, got, want[name])
		}
	}
	// Shorter first when speedups agree.
	r.Sensitivity = gnmt()
	s.Jobs[1] = r
	for _, name := range allocators {
		d := allocate(t, name, `{"order": "srtf"}`, s)
		if got := ptSetString(ptSet(d)); got != "[a]" {
			t.Errorf("%s srtf, both insensitive: runs %s, want [a]", name, got)
		}
	}
}

// TestMultiGPUIdeal: an ideal beyond a whole server is clipped to it; a job
// larger than a server is pinned to its proportional share.
func TestMultiGPUIdeal(t *testing.T) {
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{newJob("a", 4, 0, alexnet())}}
	d := allocate(t, "synergy.greedy", "", s)
	if g := d.Allocation["a"]; g.CPUs != 24 || g.MemoryGB != 500 {
		t.Errorf("4-GPU alexnet: %v cores, %v GB; want 24 (6 per GPU), 500 (125 per GPU)", g.CPUs, g.MemoryGB)
	}
	if want := alexnet().At(6, 125); math.Abs(d.Objective-want) > 1e-9 {
		t.Errorf("4-GPU alexnet: objective %v, want %v", d.Objective, want)
	}

	s = &policy.Snapshot{Now: time.Hour, Cluster: cluster(2), Jobs: []policy.Job{newJob("a", 16, 0, alexnet())}}
	for _, name := range []string{"synergy.greedy", "synergy.tune"} {
		d = allocate(t, name, "", s)
		if g := d.Allocation["a"]; g.GPUs != 16 || g.CPUs != 48 || g.MemoryGB != 1000 {
			t.Errorf("%s: 16-GPU alexnet: %+v, want 48 cores (3 per GPU), 1000 GB", name, g)
		}
		if math.Abs(d.Objective-1) > 1e-9 {
			t.Errorf("%s: 16-GPU alexnet: objective %v, want 1", name, d.Objective)
		}
		if err := ptCheckPlaced(s, d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestConsolidate: with consolidation a job goes to the server it leaves
// with the fewest free GPUs; without, to the first server by ID.
func TestConsolidate(t *testing.T) {
	small := allocation.Server{ID: "s01", Accelerator: ptType, GPUs: 4, CPUs: 12, MemoryGB: 250}
	s := &policy.Snapshot{Now: time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{server("s00"), small}},
		Jobs:    []policy.Job{newJob("a", 2, 0, gnmt())}} // fits either server at its ideal
	for _, name := range []string{"synergy.proportional", "synergy.greedy", "synergy.tune"} {
		for cfg, want := range map[string]string{`{"consolidate": true}`: "s01", `{"consolidate": false}`: "s00"} {
			d := allocate(t, name, cfg, s)
			if got := d.Placement["a"]; len(got) != 1 || got[0].Server != want || got[0].GPUs != 2 {
				t.Errorf("%s %s: placed on %v, want 2 GPUs on %s", name, cfg, got, want)
			}
		}
	}
}

// TestErrorsNamed: cancellation is reported as such, bad jobs are left out
// with their reason, and a job of unknown length is ordered last.
func TestErrorsNamed(t *testing.T) {
	s := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{newJob("a", 1, 0, res18())}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range allocators {
		p, err := policy.New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Allocate(ctx, s); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled context: %v, want context.Canceled", name, err)
		}
		zero := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{newJob("a", 1, 0, res18()), newJob("z", 0, 0, res18())}}
		d, err := p.Allocate(context.Background(), zero)
		if err != nil || !strings.HasPrefix(d.Unscheduled["z"], "gpus") || len(d.Unscheduled) != 1 || d.Allocation["a"].GPUs != 1 {
			t.Errorf("%s: 0 GPUs: %+v, %v; want z left out for gpus, a scheduled", name, d, err)
		}
		if _, err := policy.Strict(p).Allocate(context.Background(), zero); !errors.Is(err, policy.ErrInvalidSnapshot) ||
			!strings.Contains(err.Error(), `job "z"`) || !strings.Contains(err.Error(), "gpus") {
			t.Errorf("%s: Strict, 0 GPUs: %v", name, err)
		}
	}
	for _, name := range allocators {
		p, err := policy.New(name, []byte(`{"order": "srtf"}`))
		if err != nil {
			t.Fatal(err)
		}
		// The job of unknown length arrived first but comes last: with
		// 8 GPUs, the 8-GPU job of known length runs.
		j := newJob("unknown", 1, 0, res18())
		j.StepsTotal = 0
		unknown := &policy.Snapshot{Now: time.Hour, Cluster: cluster(1), Jobs: []policy.Job{newJob("a", 8, 10, res18()), j}}
		d, err := p.Allocate(context.Background(), unknown)
		if err != nil || len(d.Unscheduled) != 0 || d.Allocation["a"].GPUs != 8 || d.Allocation["unknown"].GPUs != 0 {
			t.Errorf("%s srtf: steps_total 0: %+v, %v; want a to run, unknown to wait", name, d, err)
		}
	}
}

// ptDecode turns a fuzzer's bytes into a snapshot and a configuration: the
// first byte picks the servers and their cores, the second the order and
// placement, and every following pair a job.
func ptDecode(data []byte) (*policy.Snapshot, synergy.Config) {
	s := &policy.Snapshot{Now: time.Hour}
	var cfg synergy.Config
	if len(data) < 2 {
		return s, cfg
	}
	n := 1 + int(data[0]%4)
	for i := range n {
		sv := server(fmt.Sprintf("s%02d", i))
		sv.CPUs = []float64{24, 32, 48, 24}[(int(data[0])>>2+i)%4]
		s.Cluster.Servers = append(s.Cluster.Servers, sv)
	}
	cfg.Order = ptOrders[data[1]%4]
	cfg.Consolidate = data[1]&4 != 0
	profiles := []func() *throughput.Sensitivity{res18, gnmt, alexnet, res18}
	data = data[2:]
	for i := 0; i+1 < len(data) && i < 64; i += 2 {
		a, b := data[i], data[i+1]
		j := newJob(fmt.Sprintf("j%02d", i/2), []int{1, 2, 4, 8}[a%4], float64(b%32), profiles[(a>>2)%4]())
		j.AttainedGPUSeconds = float64(int(a>>4) * 300)
		j.StepsDone = float64(int(b>>5) * 100)
		s.Jobs = append(s.Jobs, j)
	}
	return s, cfg
}

// FuzzTune: Tune never panics and, when it allocates, respects every
// server's capacity and gives no job less than its proportional share.
func FuzzTune(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{3, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x7, 0x5, 0x13, 0x40, 0x22, 0x81, 0x0a, 0xff, 0x1b, 0x02, 0x08, 0x0c})
	f.Add([]byte{1, 2, 8, 9, 10, 11, 12, 13, 14, 15, 3, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, cfg := ptDecode(data)
		d, err := (&synergy.Tune{Config: cfg}).Allocate(context.Background(), s)
		if err != nil {
			return
		}
		if err := ptCheckPlaced(s, d); err != nil {
			t.Fatalf("%+v: %v\n%s", cfg, err, ptDescribe(s))
		}
		if len(s.Cluster.Servers) == 0 {
			return
		}
		sc, sm, _, _, _ := ptShare(s.Cluster)
		for _, j := range s.Jobs {
			if g, ok := d.Allocation[j.ID]; ok {
				gg := float64(g.GPUs)
				if got, floor := j.Sensitivity.At(g.CPUs/gg, g.MemoryGB/gg), j.Sensitivity.At(sc, sm); got < floor-1e-9 {
					t.Fatalf("%+v: job %s at %v, below its proportional %v\n%s", cfg, j.ID, got, floor, ptDescribe(s))
				}
			}
		}
	})
}

// TestOptBoundOffGridServer: Opt's bound is at least Tune's objective on
// the same snapshot, also when a server's cores per GPU of the job fall
// between the profile's grid points. A 4-GPU ResNet-18 job on an 8-GPU,
// 32-core server: Tune gives it its ideal (9 cores per GPU) clipped to the
// server, 8 cores per GPU, at At(8, 62.5) ≈ 2.183; Opt's configurations
// are only the grid cells that fit (at most 6 cores per GPU, 1.75), so its
// "bound" is below what Tune achieves.
func TestOptBoundOffGridServer(t *testing.T) {
	sv := server("s00")
	sv.CPUs = 32
	s := &policy.Snapshot{Now: time.Hour, Cluster: allocation.Cluster{Servers: []allocation.Server{sv}},
		Jobs: []policy.Job{newJob("a", 4, 0, res18())}}
	tune := allocate(t, "synergy.tune", "", s)
	if g := tune.Allocation["a"]; g.CPUs != 32 || g.MemoryGB != 250 {
		t.Fatalf("tune: %+v, want 32 cores, 250 GB", g)
	}
	b, err := (&synergy.Opt{Solver: ptSolver()}).Bound(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if b.Objective < tune.Objective-1e-6 {
		t.Errorf("opt bound %v below tune's objective %v (tune's grant: 8 cores, 62.5 GB per GPU)", b.Objective, tune.Objective)
	}
}
