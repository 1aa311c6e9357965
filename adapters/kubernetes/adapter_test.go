package kubernetes_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A job of two 4-GPU pods waits while 8 GPUs are free only as 5 + 3, and
// binds as 4 + 4, all at once, when a whole 4 frees up.
func TestGangAllOrNothing(t *testing.T) {
	c := newCluster(t)
	c.node("a", 8, "v100")
	c.node("b", 8, "v100")
	c.foreign("other-a", "a", 3)
	other := c.foreign("other-b", "b", 5)
	c.job("gang", 2, 4, 3, nil)
	a := c.adapter("gavel.fifo", false)
	for range 3 {
		c.round(a, time.Minute)
		if p := c.placement("gang"); len(p) > 0 {
			t.Fatalf("bound on 5 + 3 free GPUs: %v", p)
		}
	}
	if ev := c.events("gang"); len(ev) == 0 || !strings.HasPrefix(ev[len(ev)-1], "Waiting: ") {
		t.Errorf("events %q, want a Waiting event", ev)
	}
	zero := int64(0)
	if err := k8s.Delete(c.ctx, other, &client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	r := c.round(a, time.Minute)
	if len(r.Bound) != 2 {
		t.Fatalf("bound %v, want both pods", r.Bound)
	}
	for node, pods := range c.placement("gang") {
		if pods != 1 && pods != 2 {
			t.Errorf("%d pods on %s", pods, node)
		}
	}
	if c.drain(a, 1, 20); !c.finished("gang") {
		t.Errorf("gang did not finish: %v", c.done)
	}
	c.noViolations()
}

// Tiresias' LAS preempts a job that has attained more service than a
// newcomer, through eviction, and resumes it later by binding it again.
func TestPreemptAndResume(t *testing.T) {
	c := newCluster(t)
	c.node("a", 4, "v100")
	c.job("old", 1, 4, 4, nil)
	a := c.adapter("tiresias.las", true)
	for range 2 {
		c.round(a, 1000*time.Second) // 4 GPUs × 2000 s: past the first queue's 3250 GPU-s
	}
	c.job("new", 1, 4, 2, nil)
	var evicted, resumed bool
	for i := 0; i < 20 && !(c.finished("old") && c.finished("new")); i++ {
		r := c.round(a, 1000*time.Second)
		for _, p := range r.Evicted {
			evicted = evicted || strings.HasSuffix(p, "/old-0")
		}
		for _, p := range r.Bound {
			resumed = resumed || (evicted && strings.HasSuffix(p, "/old-0"))
		}
	}
	if !evicted || !resumed || !c.finished("old") || !c.finished("new") {
		t.Fatalf("evicted %v, resumed %v, finished %v", evicted, resumed, c.done)
	}
	want := []string{"Scheduled", "Preempted", "Waiting", "Scheduled"}
	var got []string
	for _, e := range c.events("old") {
		got = append(got, e[:strings.Index(e, ":")])
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("old's events (-want +got):\n%s\n%q", d, c.events("old"))
	}
	c.noViolations()
}

// A pod whose annotations do not parse gets a Warning Event naming the
// annotation, and its job waits; the other job is scheduled.
func TestMalformedAnnotations(t *testing.T) {
	c := newCluster(t)
	c.node("a", 4, "v100")
	c.job("bad", 1, 1, 1, map[string]string{"dlsched.io/throughput": "{v100: 3"})
	c.job("typo", 1, 1, 1, map[string]string{"dlsched.io/facts": `{"wieght": 2}`})
	c.job("good", 1, 2, 1, map[string]string{"dlsched.io/weight": "2"})
	a := c.adapter("gavel.las", false)
	r := c.round(a, time.Minute)
	if r.Invalid != 2 || len(r.Bound) != 1 || !strings.HasSuffix(r.Bound[0], "/good-0") {
		t.Fatalf("invalid %d, bound %v; want 2 and good alone", r.Invalid, r.Bound)
	}
	for job, says := range map[string]string{"bad": "annotation dlsched.io/throughput", "typo": "wieght"} {
		ev := c.events(job)
		if len(ev) != 1 || !strings.HasPrefix(ev[0], "InvalidJob: ") || !strings.Contains(ev[0], says) {
			t.Errorf("%s's events %q, want one InvalidJob naming %q", job, ev, says)
		}
	}
	c.round(a, time.Minute)
	if ev := c.events("bad"); len(ev) != 1 {
		t.Errorf("the warning is repeated: %q", ev)
	}
	c.noViolations()
}
