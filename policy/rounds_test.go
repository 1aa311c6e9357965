package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/placement"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

// equalShares gives every job of the snapshot the same share of its type's
// GPU time: N_k / Σ GPUs, at most 1. It counts its calls.
type equalShares struct {
	calls int
	wake  time.Duration
}

func (*equalShares) Name() string { return "test.equal" }

func (e *equalShares) Allocate(_ context.Context, s *policy.Snapshot) (*policy.Decision, error) {
	s, out, err := policy.Screen(s)
	if err != nil {
		return nil, err
	}
	e.calls++
	demand := 0
	for _, j := range s.Jobs {
		demand += j.GPUs
	}
	a := allocation.Allocation{}
	for _, j := range s.Jobs {
		n := float64(s.Cluster.GPUs("v100"))
		a[j.ID] = allocation.Grant{GPUs: j.GPUs, Shares: map[allocation.Accelerator]float64{"v100": min(1, n/float64(demand))}}
	}
	d := &policy.Decision{Policy: e.Name(), Allocation: a, Unscheduled: out}
	if e.wake > 0 {
		d.Wake = s.Now + e.wake
	}
	return d, nil
}

// roundsSnapshot is two 4-GPU servers and jobs of the given GPUs, "j0",
// "j1", …, none running.
func roundsSnapshot(now time.Duration, gpus ...int) *policy.Snapshot {
	s := &policy.Snapshot{Now: now, Cluster: allocation.Cluster{Servers: []allocation.Server{
		{ID: "s1", Accelerator: "v100", GPUs: 4}, {ID: "s2", Accelerator: "v100", GPUs: 4},
	}}}
	for i, g := range gpus {
		s.Jobs = append(s.Jobs, policy.Job{ID: fmt.Sprintf("j%d", i), GPUs: g, Throughput: map[allocation.Accelerator]float64{"v100": 1}})
	}
	return s
}

// advance makes the snapshot of the next call: time moves on and every job
// runs where the decision put it.
func advance(s *policy.Snapshot, d *policy.Decision, dt time.Duration) *policy.Snapshot {
	next := *s
	next.Now += dt
	next.Jobs = make([]policy.Job, len(s.Jobs))
	copy(next.Jobs, s.Jobs)
	for i := range next.Jobs {
		next.Jobs[i].Placement = d.Placement[next.Jobs[i].ID]
	}
	return &next
}

func TestRoundsPlacesAndWakes(t *testing.T) {
	r := &policy.Rounds{Shares: &equalShares{}}
	s := roundsSnapshot(0, 4, 4, 4, 4) // twice the cluster: half the jobs run each round
	var ran = map[string]int{}
	for round := range 4 {
		d, err := r.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if d.Wake != s.Now+placement.DefaultRound {
			t.Errorf("round %d: wake %v, want %v", round, d.Wake, s.Now+placement.DefaultRound)
		}
		if len(d.Placement) != 2 {
			t.Fatalf("round %d: placement %v, want two jobs on the two servers", round, d.Placement)
		}
		for id := range d.Placement {
			ran[id]++
		}
		s = advance(s, d, placement.DefaultRound)
	}
	if diff := cmp.Diff(map[string]int{"j0": 2, "j1": 2, "j2": 2, "j3": 2}, ran); diff != "" {
		t.Errorf("rounds per job over 4 rounds at share 1/2 (-want +got):\n%s", diff)
	}
}

// A round that would end past time.Duration's range does not wake: its
// end would wrap around to a time long past.
func TestRoundsWakeNearTheEndOfTime(t *testing.T) {
	r := &policy.Rounds{Shares: &equalShares{}}
	d, err := r.Allocate(context.Background(), roundsSnapshot(math.MaxInt64-time.Second, 4))
	if err != nil {
		t.Fatal(err)
	}
	if d.Wake != 0 || len(d.Placement) != 1 {
		t.Errorf("wake %v, placement %v; want no wake and the job placed", d.Wake, d.Placement)
	}
}

func TestRoundsRestartedMovesNothing(t *testing.T) {
	// A scheduler restarted with an empty state: j0 runs on s2 and j1 on
	// s1, the opposite of where a fresh placement would put them.
	s := roundsSnapshot(time.Hour, 4, 4)
	s.Jobs[0].Placement = []allocation.Assignment{{Server: "s2", GPUs: 4}}
	s.Jobs[1].Placement = []allocation.Assignment{{Server: "s1", GPUs: 4}}
	d, err := (&policy.Rounds{Shares: &equalShares{}}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range policy.Changes(s, d) {
		if c.Kind != policy.Keep {
			t.Errorf("change %+v, want every job kept", c)
		}
	}
}

func TestRoundsRecompute(t *testing.T) {
	shares := &equalShares{}
	r := &policy.Rounds{Shares: shares, Recompute: 1000 * time.Second}
	call := func(s *policy.Snapshot) *policy.Decision {
		t.Helper()
		d, err := r.Allocate(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := call(roundsSnapshot(0, 4))
	d = call(advance(roundsSnapshot(0, 4), d, 360*time.Second))
	if shares.calls != 1 {
		t.Errorf("same jobs: %d share decisions, want 1", shares.calls)
	}
	// A job arrives at 720 s: within Recompute of the first decision, so
	// the shares are kept and the new job does not run yet.
	s := roundsSnapshot(720*time.Second, 4, 4)
	if d = call(s); shares.calls != 1 || len(d.Placement["j1"]) > 0 {
		t.Errorf("throttled: %d share decisions, j1 at %v; want 1 and not running", shares.calls, d.Placement["j1"])
	}
	s.Now = 1080 * time.Second
	if d = call(s); shares.calls != 2 || len(d.Placement["j1"]) == 0 {
		t.Errorf("after Recompute: %d share decisions, j1 at %v; want 2 and running", shares.calls, d.Placement["j1"])
	}
	// The share policy's own wake-up is honoured.
	shares.wake = 100 * time.Second
	s.Now = 3000 * time.Second
	s.Jobs = s.Jobs[:1]
	if d = call(s); d.Wake != s.Now+100*time.Second {
		t.Errorf("wake %v, want the share policy's %v", d.Wake, s.Now+100*time.Second)
	}
	s.Now += 100 * time.Second
	if call(s); shares.calls != 4 {
		t.Errorf("at the share policy's wake: %d share decisions, want 4", shares.calls)
	}
}

// A round cut short by an arrival is credited only for the time it ran: the
// job that ran 60 s of a 360 s round is not taken to have had its share.
func TestRoundsShortensEarlyCalls(t *testing.T) {
	r := &policy.Rounds{Shares: &equalShares{}}
	s := roundsSnapshot(0, 8, 8)
	d, err := r.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if d, err = r.Allocate(context.Background(), advance(s, d, time.Minute)); err != nil {
		t.Fatal(err)
	}
	state, _ := r.SaveState()
	var after policy.RoundsState
	if err := json.Unmarshal(state, &after); err != nil {
		t.Fatal(err)
	}
	// Both accounts were eligible for 60 s, not 360, before this round.
	for _, a := range after.Ledger.Accounts {
		if want := 60 + 360.0; a.Eligible != want {
			t.Errorf("account %s: eligible %v s, want %v", a.Job, a.Eligible, want)
		}
	}
}

func TestRoundsSaveRestore(t *testing.T) {
	fresh := func() *policy.Rounds { return &policy.Rounds{Shares: &equalShares{}} }
	// run drives a policy through 8 rounds on 12 GPUs of demand for 8,
	// replacing it before round 4 by what restart returns.
	run := func(restart func(*policy.Rounds) *policy.Rounds) []*policy.Decision {
		p := fresh()
		s := roundsSnapshot(0, 4, 2, 2, 4)
		var ds []*policy.Decision
		for round := range 8 {
			if round == 4 {
				p = restart(p)
			}
			d, err := p.Allocate(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
			s = advance(s, d, placement.DefaultRound)
		}
		return ds
	}
	want := run(func(p *policy.Rounds) *policy.Rounds { return p })
	got := run(func(p *policy.Rounds) *policy.Rounds {
		state, err := p.SaveState()
		if err != nil {
			t.Fatal(err)
		}
		q := fresh()
		if err := q.RestoreState(state); err != nil {
			t.Fatal(err)
		}
		return q
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored run differs (-never stopped +restored):\n%s", diff)
	}
	// The state matters: a restart from scratch decides otherwise.
	lost := run(func(*policy.Rounds) *policy.Rounds { return fresh() })
	if cmp.Equal(want, lost) {
		t.Error("a restart without the state decides as the uninterrupted run; the test cannot tell a restore from none")
	}
	if err := fresh().RestoreState(json.RawMessage(`{"ledger": 3}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("garbage state: %v, want ErrInvalidConfig", err)
	}
}

func TestRoundsUnscheduled(t *testing.T) {
	s := roundsSnapshot(0, 4, 16) // j1 can never fit
	d, err := (&policy.Rounds{Shares: &equalShares{}}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Unscheduled["j1"]; !ok || len(d.Placement["j0"]) == 0 {
		t.Errorf("unscheduled %v, placement %v: want j1 left out and j0 running", d.Unscheduled, d.Placement)
	}
	if _, err := (&policy.Rounds{}).Allocate(context.Background(), s); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("no share policy: %v, want ErrInvalidConfig", err)
	}
}

// A change of cluster with the same jobs decides the shares again: a job
// left out for want of room is scheduled once a server grows, and shares
// stay as they were while the cluster does (Recompute holds them).
func TestRoundsClusterChange(t *testing.T) {
	shares := &equalShares{}
	r := &policy.Rounds{Shares: shares, Recompute: time.Hour}
	s := roundsSnapshot(0, 8)
	s.Cluster.Servers[1].GPUs = 3 // 4 + 3: no room for 8
	d, err := r.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Unscheduled["j0"]; !ok {
		t.Fatalf("8 GPUs on 4 + 3: unscheduled %v, want j0", d.Unscheduled)
	}
	s = advance(s, d, time.Minute)
	if d, err = r.Allocate(context.Background(), s); err != nil || shares.calls != 1 {
		t.Fatalf("same cluster: %v, %d share decisions, want 1", err, shares.calls)
	}
	s = advance(s, d, time.Minute)
	s.Cluster.Servers = slices.Clone(s.Cluster.Servers)
	s.Cluster.Servers[1].GPUs = 4
	if d, err = r.Allocate(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if shares.calls != 2 || len(d.Placement["j0"]) != 2 {
		t.Errorf("after the server grew: %d share decisions, placement %v; want 2 and j0 on both servers", shares.calls, d.Placement)
	}
}

// A job's speed in a run: its throughput on the run's type alone, its
// co-located throughput with the partner in a pair (whichever side it is),
// and zero where it has none.
func TestThroughputIn(t *testing.T) {
	j := &policy.Job{ID: "a", Throughput: map[allocation.Accelerator]float64{"v100": 4},
		Colocated: map[string]map[allocation.Accelerator]float64{"b": {"v100": 3}}}
	for _, c := range []struct {
		run  placement.Run
		want float64
	}{
		{placement.Run{Job: "a", Accelerator: "v100"}, 4},
		{placement.Run{Job: "a", Partner: "b", Accelerator: "v100"}, 3},
		{placement.Run{Job: "b", Partner: "a", Accelerator: "v100"}, 3},
		{placement.Run{Job: "a", Accelerator: "k80"}, 0},
		{placement.Run{Job: "a", Partner: "c", Accelerator: "v100"}, 0},
	} {
		if got := j.ThroughputIn(c.run); got != c.want {
			t.Errorf("%+v: %v, want %v", c.run, got, c.want)
		}
	}
}

// TestRoundsStopsInvalidRunning checks that the placement of a job that
// Screen leaves out seeds no ledger: j1 claims to run on no server with no
// GPUs (FuzzAllocate's find), and j2 has done more steps than it has. The round goes on
// without them, and j0 gets the cluster; seeding j1 fails the round.
func TestRoundsStopsInvalidRunning(t *testing.T) {
	s := roundsSnapshot(0, 8, 4, 4)
	s.Jobs[1].Placement = []allocation.Assignment{{}}
	s.Jobs[2].StepsTotal, s.Jobs[2].StepsDone = 10, 20
	s.Jobs[2].Placement = []allocation.Assignment{{Server: "s1", GPUs: 4}}
	d, err := (&policy.Rounds{Shares: &equalShares{}}).Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	_, out1 := d.Unscheduled["j1"]
	_, out2 := d.Unscheduled["j2"]
	if !out1 || !out2 || len(d.Placement["j1"])+len(d.Placement["j2"]) > 0 || len(d.Placement["j0"]) != 2 {
		t.Errorf("unscheduled %v, placement %v: want j1 and j2 left out and stopped, j0 on both servers", d.Unscheduled, d.Placement)
	}
}
