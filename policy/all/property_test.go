package all_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
)

// moves lists the policies that may deliberately move a running job whose
// GPU count is unchanged (Gandiva's migration, Pollux's reallocation): their
// moves must still show up as Migrate changes.
var moves = map[string]bool{"gandiva": true, "pollux": true, "pollux.optimus": true, "pollux.fixed": true}

// byMechanism reports the policies composed with the round mechanism
// (policy.Rounds). The mechanism moves a running job only to another
// accelerator type, when the shares send it there, or to consolidate a gang
// split over several servers; a job that runs again on its type from one
// server keeps its GPUs.
func byMechanism(p policy.Policy) bool {
	_, ok := p.(*policy.Rounds)
	return ok
}

// cases is the number of random snapshots per policy; PT_CASES overrides.
func cases(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("PT_CASES")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 8
	}
	return 40
}

// world is a random snapshot and what the test knows about it.
type world struct {
	s     *policy.Snapshot
	unfit map[string]bool // jobs that can never fit
}

// randomWorld builds a cluster of 1–2 types on servers of 1–8 GPUs, and up
// to 12 jobs of 1–4-GPU workers, some running on whole-worker placements
// that fit together, and one job that can never fit.
func randomWorld(r *rand.Rand) world {
	types := []allocation.Accelerator{"k80", "v100"}[:1+r.IntN(2)]
	s := &policy.Snapshot{Now: time.Duration(1+r.IntN(5000)) * time.Second}
	free := map[string]int{}
	cpus, mem := 32.0, 256.0
	if r.IntN(4) == 0 { // a cluster that does not report CPUs and memory
		cpus, mem = 0, 0
	}
	for i := range 2 + r.IntN(4) {
		t := types[r.IntN(len(types))]
		srv := allocation.Server{ID: fmt.Sprintf("s%d", i), Accelerator: t, GPUs: []int{1, 2, 4, 8}[r.IntN(4)], CPUs: cpus, MemoryGB: mem}
		s.Cluster.Servers = append(s.Cluster.Servers, srv)
		free[srv.ID] = srv.GPUs
	}
	w := world{s: s, unfit: map[string]bool{}}
	n := 2 + r.IntN(11)
	for i := range n {
		worker := []int{1, 1, 2, 4}[r.IntN(4)]
		j := policy.Job{
			ID:            fmt.Sprintf("j%02d", i),
			GPUs:          worker * (1 + r.IntN(2)),
			GPUsPerWorker: worker,
			Arrival:       time.Duration(r.IntN(int(s.Now/time.Second)+1)) * time.Second,
			Throughput:    map[allocation.Accelerator]float64{},
			StepsTotal:    float64(1000 + r.IntN(100000)),
		}
		if r.IntN(4) == 0 {
			j.GPUsPerWorker = 0 // any split
		}
		for _, t := range types {
			if r.IntN(3) > 0 || len(j.Throughput) == 0 {
				j.Throughput[t] = 0.5 + r.Float64()*4
			}
		}
		j.StepsDone = float64(r.IntN(int(j.StepsTotal)))
		j.AttainedGPUSeconds = float64(r.IntN(100000))
		if i == n-1 {
			j.GPUs, j.GPUsPerWorker = 64, 8 // more than any cluster here holds
			w.unfit[j.ID] = true
		} else if r.IntN(2) == 0 {
			j.Placement = place(s.Cluster, free, j)
		}
		s.Jobs = append(s.Jobs, j)
	}
	return w
}

// place puts a job's workers on servers of one type with free GPUs, or
// returns nil.
func place(c allocation.Cluster, free map[string]int, j policy.Job) []allocation.Assignment {
	for _, srv := range c.Servers {
		if j.Throughput[srv.Accelerator] == 0 {
			continue
		}
		var as []allocation.Assignment
		left := j.GPUs
		for _, s2 := range c.Servers {
			if s2.Accelerator != srv.Accelerator || left == 0 {
				continue
			}
			n := min(left, free[s2.ID]/j.Worker()*j.Worker())
			if n > 0 {
				as = append(as, allocation.Assignment{Server: s2.ID, GPUs: n})
				left -= n
			}
		}
		if left == 0 {
			for _, a := range as {
				free[a.Server] -= a.GPUs
			}
			return as
		}
		return nil
	}
	return nil
}

// Every registered policy, on its defaults, on random snapshots with worker
// shapes, partly occupied servers and running placements: it never fails
// the round; each worker lies on one server; no server holds more GPUs
// than it has; shares are in [0,1]; a decision that gives jobs time places
// them; a job that can never fit is reported
// and never placed; and a running job whose GPU count is unchanged keeps
// its servers, unless the policy is one that migrates.
func TestEveryPolicyBindable(t *testing.T) {
	for _, st := range settings() {
		t.Run(st.label, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(st.label))))
			for c := range cases(t) {
				w := randomWorld(r)
				p, err := policy.New(st.name, []byte(st.config))
				if err != nil {
					t.Fatal(err)
				}
				d, err := p.Allocate(context.Background(), w.s)
				if err != nil {
					t.Fatalf("case %d: %v", c, err)
				}
				if err := bindable(w, d, moves[st.name], byMechanism(p)); err != nil {
					t.Fatalf("case %d: %v\nsnapshot: %+v\nplacement: %v", c, err, w.s, d.Placement)
				}
			}
		})
	}
}

// setting is a policy under test: a registered one on its defaults, or a
// documented variant of one.
type setting struct{ label, name, config string }

// settings lists every registered policy, then the variants that other
// code paths select (the CLI's workload defaults).
func settings() []setting {
	var out []setting
	for _, info := range policy.Registered() {
		out = append(out, setting{info.Name, info.Name, ""})
	}
	return append(out, setting{"allox/shockwave", "allox", `{"rule":"shockwave","alpha":0.2}`})
}

// Every policy decides on an empty cluster and on one without jobs.
func TestEveryPolicyEmpty(t *testing.T) {
	for _, info := range policy.Registered() {
		for _, s := range []*policy.Snapshot{{}, {Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 2}}}}} {
			p, err := policy.New(info.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := p.Allocate(context.Background(), s)
			if err != nil || len(d.Placement) > 0 {
				t.Errorf("%s on %d servers and no job: placement %v, err %v", info.Name, len(s.Cluster.Servers), d, err)
			}
		}
	}
}

func bindable(w world, d *policy.Decision, mayMove, mechanism bool) error {
	jobs := map[string]*policy.Job{}
	for i := range w.s.Jobs {
		jobs[w.s.Jobs[i].ID] = &w.s.Jobs[i]
	}
	for id := range w.unfit {
		if _, ok := d.Unscheduled[id]; !ok {
			return fmt.Errorf("job %s can never fit but is not in Unscheduled %v", id, d.Unscheduled)
		}
		if len(d.Placement[id]) > 0 {
			return fmt.Errorf("job %s can never fit but is placed", id)
		}
	}
	busy := false
	for id, g := range d.Allocation {
		for k, x := range g.Shares {
			if !(x >= 0 && x <= 1+allocation.Tolerance) {
				return fmt.Errorf("job %s: share %v on %s", id, x, k)
			}
		}
		busy = busy || g.Busy() > 0
	}
	if busy && len(d.Placement) == 0 {
		return fmt.Errorf("the decision gives jobs time but places none: %v", d.Allocation)
	}
	if err := fits(w.s.Cluster, jobs, d); err != nil {
		return err
	}
	for _, c := range policy.Changes(w.s, d) {
		j := jobs[c.Job]
		if c.Kind == policy.Migrate && !mayMove && !(mechanism && (len(c.From) > 1 || typeOf(w.s, c.From) != typeOf(w.s, c.To))) {
			return fmt.Errorf("job %s moved from %v to %v", c.Job, c.From, c.To)
		}
		if c.Kind == policy.Resize && j.Elastic == nil && len(c.To) > 0 {
			return fmt.Errorf("rigid job %s resized from %v to %v", c.Job, c.From, c.To)
		}
	}
	return nil
}

// typeOf returns the accelerator type of a placement's first server.
func typeOf(s *policy.Snapshot, as []allocation.Assignment) allocation.Accelerator {
	srv, _ := s.Cluster.Server(as[0].Server)
	return srv.Accelerator
}

// fits checks that every job's GPUs on a server are whole workers and that
// no server holds more than it has; jobs on the very same GPUs that the
// allocation pairs count once.
func fits(c allocation.Cluster, jobs map[string]*policy.Job, d *policy.Decision) error {
	size := map[string]int{}
	for _, srv := range c.Servers {
		size[srv.ID] = srv.GPUs
	}
	used := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(d.Placement)) {
		j, ok := jobs[id]
		if !ok {
			return fmt.Errorf("placement names job %s, which is not in the snapshot", id)
		}
		if _, left := d.Unscheduled[id]; left {
			return fmt.Errorf("job %s is both placed and unscheduled", id)
		}
		if shared(id, d) {
			continue
		}
		for _, a := range d.Placement[id] {
			if _, ok := size[a.Server]; !ok {
				return fmt.Errorf("job %s on unknown server %s", id, a.Server)
			}
			if a.GPUs <= 0 || a.GPUs%j.Worker() != 0 {
				return fmt.Errorf("job %s: %d GPUs on %s splits a worker of %d", id, a.GPUs, a.Server, j.Worker())
			}
			used[a.Server] += a.GPUs
		}
	}
	for srv, n := range used {
		if n > size[srv] {
			return fmt.Errorf("server %s holds %d GPUs of %d", srv, n, size[srv])
		}
	}
	return nil
}

// shared reports whether job id is the larger ID of a pair placed on the
// same GPUs as its partner, so that the partner already counts them.
func shared(id string, d *policy.Decision) bool {
	for partner := range d.Allocation[id].Pairs {
		if partner < id && slices.Equal(d.Placement[partner], d.Placement[id]) {
			return true
		}
	}
	return false
}

// Two 8-GPU servers; a 6-GPU job runs 3+3; a new 8-GPU job comes in two
// workers of 4. No policy may place the new job 5+3: with 5 free GPUs on
// each server it runs 4+4 or not at all, and the running job, if it runs
// on, stays where it is.
func TestEveryPolicyTwoWorkersBesideRunningJob(t *testing.T) {
	thr := map[allocation.Accelerator]float64{"v100": 1}
	s := &policy.Snapshot{
		Now: time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "s1", Accelerator: "v100", GPUs: 8, CPUs: 48, MemoryGB: 512},
			{ID: "s2", Accelerator: "v100", GPUs: 8, CPUs: 48, MemoryGB: 512},
		}},
		Jobs: []policy.Job{
			{ID: "running", GPUs: 6, Throughput: thr, StepsTotal: 1e6, StepsDone: 1e3, AttainedGPUSeconds: 600,
				Placement: []allocation.Assignment{{Server: "s1", GPUs: 3}, {Server: "s2", GPUs: 3}}},
			{ID: "new", GPUs: 8, GPUsPerWorker: 4, Arrival: time.Hour, Throughput: thr, StepsTotal: 1e6},
		},
	}
	for _, info := range policy.Registered() {
		p, err := policy.New(info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Allocate(context.Background(), s)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		for _, a := range d.Placement["new"] {
			if a.GPUs%4 != 0 {
				t.Errorf("%s: the new job runs %v, splitting a worker", info.Name, d.Placement["new"])
			}
		}
		if err := bindable(world{s: s, unfit: map[string]bool{}}, d, moves[info.Name], byMechanism(p)); err != nil {
			t.Errorf("%s: %v", info.Name, err)
		}
	}
}
