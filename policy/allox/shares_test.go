package allox_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/allox"
)

func shares(t *testing.T, p *allox.Shares, s *policy.Snapshot) (map[string]float64, float64) {
	t.Helper()
	d, err := p.Allocate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Allocation.Validate(s.Cluster); err != nil {
		t.Fatalf("allocation %v: %v", d.Allocation, err)
	}
	out := map[string]float64{}
	for id, g := range d.Allocation {
		out[id] = g.Shares["v100"]
	}
	return out, d.Objective
}

// Two GPUs. First a (1 GPU, 100 s of work) and b (2 GPUs, 300 s) each head
// a worker: a gets 1, b gets 1/2. Then a keeps its 1 and its GPU; b, whose
// share is not 1, competes with c for the one worker left and heads it
// again, since c's 1000 s put c last. Hand-solved from the costs p·q + d.
func TestSharesHandSolved(t *testing.T) {
	one := thr{"v100": 1}
	s := &policy.Snapshot{Now: sec(100), Cluster: cluster(server("s", "v100", 2)),
		Jobs: []policy.Job{newJob("a", 1, 0, 100, one), newJob("b", 2, 10, 300, one)}}
	p := &allox.Shares{}
	got, obj := shares(t, p, s)
	if diff := cmp.Diff(map[string]float64{"a": 1, "b": 0.5}, got); diff != "" {
		t.Errorf("first call (-want +got):\n%s", diff)
	}
	if obj != 100+100+300+90 {
		t.Errorf("objective %v, want 590 (q 100 and 300 at position 1, waits 100 and 90)", obj)
	}

	s.Now = sec(200)
	s.Jobs[0].StepsDone, s.Jobs[1].StepsDone = 50, 100
	s.Jobs = append(s.Jobs, newJob("c", 1, 150, 1000, one))
	got, obj = shares(t, p, s)
	if diff := cmp.Diff(map[string]float64{"a": 1, "b": 0.5}, got); diff != "" {
		t.Errorf("second call (-want +got):\n%s", diff)
	}
	// One worker: c at position 1 (1000), b at 2 (2·200), waits 190 and 50.
	if obj != 1000+400+190+50 {
		t.Errorf("objective %v, want 1640", obj)
	}
}

// When b keeps its last 1/2 and c heads the free worker, the shares ask
// for 3 GPUs of 2: all are scaled by 2/3, in the same ratios, and the next
// call still counts a's share as 1, not 2/3.
func TestSharesScaledToCapacity(t *testing.T) {
	one := thr{"v100": 1}
	s := &policy.Snapshot{Now: sec(100), Cluster: cluster(server("s", "v100", 2)),
		Jobs: []policy.Job{newJob("a", 1, 0, 100, one), newJob("b", 2, 10, 300, one)}}
	p := &allox.Shares{}
	shares(t, p, s)
	s.Now = sec(200)
	s.Jobs = append(s.Jobs, newJob("c", 1, 150, 100, one))
	got, _ := shares(t, p, s)
	want := map[string]float64{"a": 2.0 / 3, "b": 1.0 / 3, "c": 2.0 / 3}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	s.Now = sec(300)
	if got, _ := shares(t, p, s); got["a"] != got["c"] || got["a"] < 0.6 {
		t.Errorf("third call %v: a and c keep equal shares of 1 (scaled)", got)
	}
}

// α = 0.5 with three waiting jobs and one worker: only max(⌊1.5⌋, 1) = 1,
// the longest-waiting, is matched, although another is shorter.
func TestSharesAlpha(t *testing.T) {
	one := thr{"v100": 1}
	half := 0.5
	s := &policy.Snapshot{Now: sec(100), Cluster: cluster(server("s", "v100", 1)),
		Jobs: []policy.Job{newJob("old", 1, 0, 1000, one), newJob("short", 1, 50, 10, one), newJob("mid", 1, 60, 20, one)}}
	got, _ := shares(t, &allox.Shares{Alpha: &half}, s)
	if diff := cmp.Diff(map[string]float64{"old": 1}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got, _ = shares(t, &allox.Shares{}, s)
	if diff := cmp.Diff(map[string]float64{"short": 1}, got); diff != "" {
		t.Errorf("α = 1 (-want +got):\n%s", diff)
	}
}

// A policy restored from the state saved after any call decides the next
// call as the one never stopped; a fresh one does not.
func TestSharesRestore(t *testing.T) {
	one := thr{"v100": 1}
	s := &policy.Snapshot{Now: sec(100), Cluster: cluster(server("s", "v100", 2)),
		Jobs: []policy.Job{newJob("a", 1, 0, 100, one), newJob("b", 2, 10, 300, one)}}
	p := &allox.Shares{}
	shares(t, p, s)
	b, err := p.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	q := &allox.Shares{}
	if err := q.RestoreState(b); err != nil {
		t.Fatal(err)
	}
	s.Now = sec(200)
	s.Jobs = append(s.Jobs, newJob("c", 1, 150, 100, one))
	want, _ := shares(t, p, s)
	got, _ := shares(t, q, s)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored (-never stopped +restored):\n%s", diff)
	}
	fresh, _ := shares(t, &allox.Shares{}, s)
	if cmp.Equal(want, fresh) {
		t.Errorf("a fresh policy decides %v too: the test cannot tell restore from none", fresh)
	}
	for _, bad := range []string{`{"last":{"a":{"v100":2}}}`, `{"last":{"":{"v100":1}}}`, `{"lats":{}}`} {
		if err := q.RestoreState([]byte(bad)); !errors.Is(err, policy.ErrInvalidConfig) {
			t.Errorf("restore %s: %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// "allox" builds AlloX for the default rule and Shares, in rounds, for
// Shockwave's; a rule of neither, or a rounds key without rounds, is an
// error naming it.
func TestRuleConfig(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   string // the type built, or an error's text
	}{
		{``, "*allox.AlloX"},
		{`{"rule":"queues","alpha":0.5}`, "*allox.AlloX"},
		{`{"rule":"shockwave","alpha":0.2,"round_seconds":120}`, "*policy.Rounds"},
		{`{"rule":"fifo"}`, `rule: "fifo"`},
		{`{"round_seconds":120}`, "round_seconds"},
		{`{"rule":"shockwave","alpha":2}`, "alpha"},
	} {
		p, err := policy.New("allox", []byte(tc.config))
		got := ""
		switch {
		case err != nil:
			got = err.Error()
			if !errors.Is(err, policy.ErrInvalidConfig) {
				t.Errorf("%s: %v, want ErrInvalidConfig", tc.config, err)
			}
		default:
			got = typeName(p)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.config, got, tc.want)
		}
	}
}

func typeName(p policy.Policy) string {
	switch p.(type) {
	case *allox.AlloX:
		return "*allox.AlloX"
	case *policy.Rounds:
		return "*policy.Rounds"
	}
	return "other"
}

// Memory follows the jobs, not the GPUs a server declares: three jobs on a
// server of 2^20 GPUs took 290 MB when every free GPU was a worker of the
// matching; both rules now allocate under 1 MB for them.
func TestMemoryFollowsJobs(t *testing.T) {
	one := thr{"v100": 1}
	s := &policy.Snapshot{Now: sec(100), Cluster: cluster(server("s", "v100", 1<<20)),
		Jobs: []policy.Job{newJob("a", 1, 0, 100, one), newJob("b", 2, 10, 300, one), newJob("c", 4, 20, 50, one)}}
	for _, p := range []policy.Policy{&allox.AlloX{}, &allox.Shares{}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, err := p.Allocate(context.Background(), s)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%T allocated %d bytes for 3 jobs", p, n)
		}
		if len(d.Allocation) != 3 {
			t.Errorf("%T: %d jobs granted, want all 3 (the server holds them)", p, len(d.Allocation))
		}
	}
}
