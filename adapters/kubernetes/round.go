package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// view is the cluster as one round sees it.
type view struct {
	nodes map[string]*corev1.Node
	pods  map[string]*corev1.Pod // every pod, by namespace/name
	ours  []*corev1.Pod          // dlsched's live pods
	jobs  map[string]*job
	snap  *policy.Snapshot
}

// Round runs one round: it finishes what the journal says the last round
// left undone, observes the cluster, decides, writes down what it is about
// to do and does it.
func (a *Adapter) Round(ctx context.Context) (*Report, error) {
	if err := a.start(ctx); err != nil {
		return nil, err
	}
	r := &Report{}
	v, err := a.observe(ctx)
	if err != nil {
		return r, err
	}
	// Each step that changes the cluster is followed by a fresh look.
	for _, step := range []func(context.Context, *view, *Report) (bool, error){a.settle, a.repair} {
		changed, err := step(ctx, v, r)
		if err != nil {
			return r, err
		}
		if changed {
			if v, err = a.observe(ctx); err != nil {
				return r, err
			}
		}
	}
	a.snapshot(ctx, v, r)
	d, err := a.Policy.Allocate(ctx, v.snap)
	if err != nil {
		return r, fmt.Errorf("%s: %w", a.Policy.Name(), err)
	}
	r.Decision = d
	if err := a.remember(); err != nil {
		return r, err
	}
	a.forget(v)
	return r, a.enact(ctx, v, d, r)
}

// observe lists nodes and pods and groups dlsched's pods into jobs.
func (a *Adapter) observe(ctx context.Context) (*view, error) {
	var nodes corev1.NodeList
	if err := a.Client.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	// Every namespace's pods: those of other namespaces hold GPUs too.
	var pods corev1.PodList
	if err := a.Client.List(ctx, &pods); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	v := &view{nodes: map[string]*corev1.Node{}, pods: map[string]*corev1.Pod{}}
	for i := range nodes.Items {
		v.nodes[nodes.Items[i].Name] = &nodes.Items[i]
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		v.pods[key(p)] = p
		if a.ours(p) && !finished(p) {
			v.ours = append(v.ours, p)
		}
	}
	v.jobs = a.jobs(v.ours, a.journal.Epoch, a.types(v))
	return v, nil
}

func key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// ours reports whether the adapter schedules p.
func (a *Adapter) ours(p *corev1.Pod) bool {
	return p.Spec.SchedulerName == a.schedulerName() && p.Labels[a.jobLabel()] != "" &&
		(a.Namespace == "" || p.Namespace == a.Namespace)
}

// snapshot builds the round's snapshot: servers offer the GPUs that no
// other pod holds, jobs carry where they run and the service they have
// attained, which it adds up since the last round.
func (a *Adapter) snapshot(ctx context.Context, v *view, r *Report) {
	now := a.now()
	a.attain(v, now)
	held := map[string]int{} // GPUs not the snapshot's to give
	used := map[string]int{}
	others := map[string]corev1.ResourceList{}
	var jobs []policy.Job
	for _, id := range sortedIDs(v.jobs) {
		j := v.jobs[id]
		nodes, terminating := j.bound()
		if j.err != nil || j.waiting != "" || terminating > 0 {
			for n, g := range nodes {
				held[n] += g
			}
			a.waitOrWarn(ctx, j, terminating)
			r.Invalid += btoi(j.err != nil)
			continue
		}
		j.spec.AttainedGPUSeconds = a.journal.Attained[id]
		j.spec.Arrival = min(j.spec.Arrival, max(now.Sub(a.journal.Epoch), 0)) // the API server's clock may run ahead
		for _, n := range sortedIDs(nodes) {
			j.spec.Placement = append(j.spec.Placement, allocation.Assignment{Server: n, GPUs: nodes[n]})
			used[n] += nodes[n]
		}
		jobs = append(jobs, j.spec)
	}
	a.foreign(v, held, others)
	cluster := a.servers(nodeList(v), used, held, others)
	v.snap = &policy.Snapshot{Now: max(now.Sub(a.journal.Epoch), 0), Cluster: cluster, Jobs: jobs}
	r.Snapshot, r.Jobs = v.snap, len(jobs)
}

// foreign adds what pods other than dlsched's jobs hold on each node: GPUs
// to held, CPU and memory requests to others.
func (a *Adapter) foreign(v *view, held map[string]int, others map[string]corev1.ResourceList) {
	for _, p := range v.pods {
		if p.Spec.NodeName == "" || finished(p) || a.ours(p) {
			continue
		}
		g := requests(p, GPU)
		held[p.Spec.NodeName] += int(g.Value())
		rl := others[p.Spec.NodeName]
		if rl == nil {
			rl = corev1.ResourceList{}
			others[p.Spec.NodeName] = rl
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			q := rl[res]
			q.Add(requests(p, res))
			rl[res] = q
		}
	}
}

// attain adds each running job's GPU-seconds since the last round.
func (a *Adapter) attain(v *view, now time.Time) {
	if last := a.journal.Last; !last.IsZero() && now.After(last) {
		dt := now.Sub(last).Seconds()
		for id, j := range v.jobs {
			nodes, _ := j.bound()
			for _, g := range nodes {
				a.journal.Attained[id] += float64(g) * dt
			}
		}
	}
	for id := range a.journal.Attained {
		if _, ok := v.jobs[id]; !ok {
			delete(a.journal.Attained, id) // finished or gone
		}
	}
	a.journal.Last = now
}

// types lists the accelerator types of the cluster's GPU nodes.
func (a *Adapter) types(v *view) []allocation.Accelerator {
	var ts []allocation.Accelerator
	for _, n := range v.nodes {
		if n.Status.Allocatable.Name(GPU, resource.DecimalSI).Value() <= 0 {
			continue
		}
		t := allocation.Accelerator(or(n.Labels[a.acceleratorLabel()], "gpu"))
		if !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return ts
}

func nodeList(v *view) []corev1.Node {
	var ns []corev1.Node
	for _, name := range sortedIDs(v.nodes) {
		ns = append(ns, *v.nodes[name])
	}
	return ns
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// forget drops what was said about pods that no longer exist.
func (a *Adapter) forget(v *view) {
	for k := range a.said {
		if p, ok := v.pods[k[:strings.LastIndexByte(k, '/')]]; !ok || k != key(p)+"/"+string(p.UID) {
			delete(a.said, k)
		}
	}
}
