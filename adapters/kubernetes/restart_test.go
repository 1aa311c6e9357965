package kubernetes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crashing is a client that dies (panics) at its n-th pod binding, as a
// process killed between two API calls would stop.
type crashing struct {
	client.Client
	n *int
}

func (c crashing) SubResource(name string) client.SubResourceClient {
	return crashingSub{c.Client.SubResource(name), name, c.n}
}

type crashingSub struct {
	client.SubResourceClient
	name string
	n    *int
}

type crash struct{}

func (c crashingSub) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if c.name == "binding" {
		if *c.n == 0 {
			panic(crash{})
		}
		*c.n--
	}
	return c.SubResourceClient.Create(ctx, obj, sub, opts...)
}

// An adapter killed in the middle of binding a round's gangs, at any
// binding, and started again from its ConfigMap, finishes binding what it
// had set out to (moving and losing nothing), and drives every job to
// completion with no gang ever split and no node over capacity.
func TestRestartMidRound(t *testing.T) {
	for _, at := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("crash at binding %d", at), func(t *testing.T) {
			c := newCluster(t)
			c.node("a", 8, "v100")
			c.node("b", 8, "v100")
			for i := range 6 {
				c.job(fmt.Sprintf("j%d", i), 1+i%2, 4, 2+i%3, nil)
			}
			a := c.adapter("gavel.las", true)
			c.round(a, time.Minute) // the first gangs run
			c.job("late-0", 2, 4, 2, nil)
			c.job("late-1", 2, 2, 2, nil)

			n := at
			crashed := *a
			crashed.Client = crashing{k8s, &n}
			func() {
				defer func() {
					if r := recover(); r != nil && r != (crash{}) {
						panic(r)
					}
				}()
				for range 20 {
					crashed.Round(c.ctx) // panics at the binding; before it, rounds go on
					c.kubelet()
					c.clock = c.clock.Add(time.Minute)
				}
				t.Fatal("never crashed")
			}()
			c.kubelet() // the pods bound before the crash start

			before := bindings(c)
			b := c.adapter("gavel.las", true) // a fresh process
			r := c.round(b, time.Minute)
			if len(r.Evicted) > 0 {
				t.Errorf("the restarted adapter evicted %v", r.Evicted)
			}
			for job, nodes := range before {
				after := c.placement(job)
				for node, pods := range nodes {
					if after[node] < pods && !c.finished(job) {
						t.Errorf("job %s moved from %v to %v by the restart", job, nodes, after)
					}
				}
			}
			c.drain(b, 8, 40)
			if len(c.done) != 8 {
				t.Errorf("finished %v, want all 8 jobs", c.done)
			}
			c.noViolations()
		})
	}
}

// bindings returns where every job's pods are bound.
func bindings(c *cluster) map[string]map[string]int {
	out := map[string]map[string]int{}
	for job := range c.work {
		out[job] = c.placement(job)
	}
	return out
}

// Nodes join and leave: a job waits for room until a node joins; a job on
// a node that leaves is restarted elsewhere; all finish.
func TestNodesJoinAndLeave(t *testing.T) {
	c := newCluster(t)
	c.node("a", 4, "v100")
	c.job("first", 1, 4, 6, nil)
	c.job("second", 1, 4, 2, nil)
	a := c.adapter("gavel.fifo", true)
	c.round(a, time.Minute)
	if p := c.placement("second"); len(p) > 0 {
		t.Fatalf("second bound with no room: %v", p)
	}
	c.node("b", 4, "v100")
	c.round(a, time.Minute)
	if p := c.placement("second"); p["b"] != 1 {
		t.Fatalf("second not on the new node b: %v", p)
	}
	var gone corev1Node
	gone.Name = "a"
	if err := k8s.Delete(c.ctx, gone.obj()); err != nil {
		t.Fatal(err)
	}
	r := c.round(a, time.Minute)
	if len(r.Evicted) != 1 || !strings.HasSuffix(r.Evicted[0], "/first-0") {
		t.Errorf("evicted %v, want first-0 (its node left)", r.Evicted)
	}
	c.drain(a, 2, 20)
	if !c.finished("first") || !c.finished("second") {
		t.Errorf("finished %v, want both", c.done)
	}
	if p := c.placement("first"); len(p) > 0 {
		t.Errorf("first still bound after finishing: %v", p)
	}
	c.noViolations()
}

// A cordoned node keeps the jobs that run on it and takes no new one.
func TestCordon(t *testing.T) {
	c := newCluster(t)
	c.node("a", 8, "v100")
	c.job("running", 1, 4, 5, nil)
	a := c.adapter("gavel.fifo", false)
	c.round(a, time.Minute)
	var n corev1.Node
	if err := k8s.Get(c.ctx, types.NamespacedName{Name: "a"}, &n); err != nil {
		t.Fatal(err)
	}
	n.Spec.Unschedulable = true
	if err := k8s.Update(c.ctx, &n); err != nil {
		t.Fatal(err)
	}
	c.job("new", 1, 4, 1, nil)
	for range 3 {
		r := c.round(a, time.Minute)
		if len(r.Evicted) > 0 || len(r.Bound) > 0 {
			t.Fatalf("on a cordoned node: evicted %v, bound %v; want neither", r.Evicted, r.Bound)
		}
	}
	if p := c.placement("running"); p["a"] != 1 {
		t.Errorf("running moved off the cordoned node: %v", p)
	}
	c.noViolations()
}
