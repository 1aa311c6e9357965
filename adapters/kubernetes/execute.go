package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// enact carries out a decision: evictions first, then the gangs whose GPUs
// are free now, each written to the journal before it is acted on.
func (a *Adapter) enact(ctx context.Context, v *view, d *policy.Decision, r *Report) error {
	free := a.free(v)
	binds := map[string]map[string]string{}
	var evict []*corev1.Pod
	why := map[string]string{}
	for _, c := range policy.Changes(v.snap, d) {
		j := v.jobs[c.Job]
		switch c.Kind {
		case policy.Stop, policy.Migrate, policy.Resize:
			for _, p := range j.pods {
				evict = append(evict, p)
				why[key(p)] = fmt.Sprintf("%s decided to %s job %s", a.Policy.Name(), c.Kind, j.id)
			}
		case policy.Start:
			if plan, ok := assign(j, c.To, free); ok {
				binds[c.Job] = plan
			} else {
				r.Deferred = append(r.Deferred, c.Job)
			}
		}
	}
	if err := a.evict(ctx, evict, why, r); err != nil {
		return err
	}
	a.journal.Binds = binds
	if err := a.save(ctx, a.journal); err != nil {
		return err
	}
	for _, id := range sortedIDs(binds) {
		if err := a.bindGang(ctx, v, id, binds[id], r); err != nil {
			return err
		}
	}
	a.journal.Binds = nil
	a.tellWaiting(ctx, v, d, r)
	return a.save(ctx, a.journal)
}

// free returns each node's GPUs that no pod holds, terminating or not.
func (a *Adapter) free(v *view) map[string]int {
	free := map[string]int{}
	for name, n := range v.nodes {
		free[name] = int(n.Status.Allocatable.Name(GPU, "").Value())
	}
	for _, p := range v.pods {
		if p.Spec.NodeName != "" && !finished(p) {
			g := requests(p, GPU)
			free[p.Spec.NodeName] -= int(g.Value())
		}
	}
	return free
}

// assign maps a job's pods, in name order, to the servers of to (whole
// workers each), if every one of those GPUs is free; it takes them from
// free.
func assign(j *job, to []allocation.Assignment, free map[string]int) (map[string]string, bool) {
	plan := map[string]string{}
	i := 0
	for _, as := range to {
		if free[as.Server] < as.GPUs || as.GPUs%j.perWorker != 0 {
			return nil, false
		}
		for range as.GPUs / j.perWorker {
			if i == len(j.pods) {
				return nil, false
			}
			plan[key(j.pods[i])] = as.Server
			i++
		}
	}
	if i != len(j.pods) {
		return nil, false
	}
	for _, as := range to {
		free[as.Server] -= as.GPUs
	}
	return plan, true
}

// bindGang binds a job's pods as plan says. If one cannot be bound (it was
// deleted, or bound elsewhere meanwhile), the gang is rolled back: the pods
// already bound are evicted, to be created again, and the job waits for a
// later round.
func (a *Adapter) bindGang(ctx context.Context, v *view, id string, plan map[string]string, r *Report) error {
	var done []*corev1.Pod
	var failure error
	for _, k := range sortedIDs(plan) {
		p, node := v.pods[k], plan[k]
		if p == nil || p.DeletionTimestamp != nil || (p.Spec.NodeName != "" && p.Spec.NodeName != node) {
			failure = fmt.Errorf("pod %s is gone or bound elsewhere", k)
			break
		}
		if p.Spec.NodeName == node {
			done = append(done, p)
			continue
		}
		err := a.Client.SubResource("binding").Create(ctx, p, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		})
		if err != nil {
			failure = fmt.Errorf("binding pod %s to %s: %w", k, node, err)
			break
		}
		p.Spec.NodeName = node
		done = append(done, p)
		r.Bound = append(r.Bound, k)
	}
	if failure == nil {
		for _, p := range done {
			a.tell(ctx, p, corev1.EventTypeNormal, "Scheduled", fmt.Sprintf("%s bound job %s: pod to node %s (%s)", a.Policy.Name(), id, p.Spec.NodeName, spread(plan)))
		}
		return nil
	}
	why := map[string]string{}
	for _, p := range done {
		why[key(p)] = fmt.Sprintf("rolled back job %s's gang: %v", id, failure)
	}
	return a.evict(ctx, done, why, r)
}

// spread describes a gang's plan: pods per node.
func spread(plan map[string]string) string {
	per := map[string]int{}
	for _, n := range plan {
		per[n]++
	}
	var s []string
	for _, n := range sortedIDs(per) {
		s = append(s, fmt.Sprintf("%s: %d pods", n, per[n]))
	}
	return strings.Join(s, ", ")
}

// evict evicts pods with time to checkpoint, after writing down in the
// journal those that no controller will create again.
func (a *Adapter) evict(ctx context.Context, pods []*corev1.Pod, why map[string]string, r *Report) error {
	if len(pods) == 0 {
		return nil
	}
	for _, p := range pods {
		if metav1.GetControllerOf(p) == nil {
			a.journal.Recreate[key(p)] = pristine(p)
		}
		a.journal.Preemptions[p.Namespace+"/"+p.Labels[a.jobLabel()]]++
	}
	if err := a.save(ctx, a.journal); err != nil {
		return err
	}
	grace := a.grace()
	for _, p := range pods {
		err := a.Client.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: &grace},
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("evicting pod %s: %w", key(p), err)
		}
		r.Evicted = append(r.Evicted, key(p))
		a.tell(ctx, p, corev1.EventTypeNormal, "Preempted", why[key(p)]+"; evicted with "+fmt.Sprint(grace)+" s to checkpoint")
	}
	return nil
}

// pristine is the pod as it is created again: same name, labels,
// annotations and spec, unbound.
func pristine(p *corev1.Pod) *corev1.Pod {
	q := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, Annotations: p.Annotations, UID: p.UID,
	}}
	q.Spec = *p.Spec.DeepCopy()
	q.Spec.NodeName = ""
	return q
}

// tellWaiting gives each job that does not run, and is not already told
// why, an Event with the decision's reason.
func (a *Adapter) tellWaiting(ctx context.Context, v *view, d *policy.Decision, r *Report) {
	for _, id := range sortedIDs(v.jobs) {
		j := v.jobs[id]
		if _, runs := d.Placement[id]; runs || j.err != nil || j.waiting != "" {
			continue
		}
		msg := d.Unscheduled[id]
		if msg == "" {
			msg = "not placed this round"
		}
		if slices.Contains(r.Deferred, id) {
			msg = "placed, waiting for GPUs that evicted pods still hold"
		}
		for _, p := range j.pods {
			if p.Spec.NodeName == "" {
				a.tell(ctx, p, corev1.EventTypeNormal, "Waiting", a.Policy.Name()+": "+msg)
			}
		}
	}
}
