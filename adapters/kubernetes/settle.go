package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// settle finishes what the journal says is undone: gangs the last round set
// out to bind, and evicted pods to create again once they are gone. It
// reports whether it changed anything.
func (a *Adapter) settle(ctx context.Context, v *view, r *Report) (bool, error) {
	changed := len(a.journal.Binds) > 0
	for _, id := range sortedIDs(a.journal.Binds) {
		if err := a.bindGang(ctx, v, id, a.journal.Binds[id], r); err != nil {
			return true, err
		}
	}
	a.journal.Binds = nil
	for _, k := range sortedIDs(a.journal.Recreate) {
		old := a.journal.Recreate[k]
		cur, exists := v.pods[k]
		if exists {
			if cur.UID != old.UID {
				delete(a.journal.Recreate, k) // created again already
				changed = true
			}
			continue
		}
		p := old.DeepCopy()
		p.UID = ""
		err := a.Client.Create(ctx, p)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return true, fmt.Errorf("creating evicted pod %s again: %w", k, err)
		}
		delete(a.journal.Recreate, k)
		r.Recreated = append(r.Recreated, k)
		changed = true
	}
	if !changed {
		return false, nil
	}
	return true, a.save(ctx, a.journal)
}

// repair restarts the jobs that cannot go on as they are: those with a pod
// on a node that is gone (deleted at once: no kubelet will confirm it) and
// those bound in part, which a crash between two bindings of an older
// version, or a pod added to a running job, leaves. It reports whether it
// changed anything.
func (a *Adapter) repair(ctx context.Context, v *view, r *Report) (bool, error) {
	var evict []*corev1.Pod
	why := map[string]string{}
	for _, id := range sortedIDs(v.jobs) {
		j := v.jobs[id]
		lost, bound, unbound := 0, 0, 0
		for _, p := range j.pods {
			switch {
			case p.DeletionTimestamp != nil:
			case p.Spec.NodeName == "":
				unbound++
			case v.nodes[p.Spec.NodeName] == nil:
				lost++
			default:
				bound++
			}
		}
		if lost == 0 && (bound == 0 || unbound == 0) {
			continue
		}
		reason := fmt.Sprintf("restarting job %s: %d of its pods are bound and %d not", id, bound+lost, unbound)
		if lost > 0 {
			reason = fmt.Sprintf("restarting job %s: %d of its pods were on nodes that left", id, lost)
		}
		for _, p := range j.pods {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				evict = append(evict, p)
				why[key(p)] = reason
			}
		}
	}
	if len(evict) == 0 {
		return false, nil
	}
	if err := a.evict(ctx, evict, why, r); err != nil {
		return true, err
	}
	for _, p := range evict {
		if v.nodes[p.Spec.NodeName] == nil { // no kubelet will finish it
			zero := int64(0)
			if err := a.Client.Delete(ctx, p, &client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
				return true, fmt.Errorf("deleting pod %s of a node that left: %w", key(p), err)
			}
		}
	}
	return true, nil
}

// waitOrWarn tells a job left out of the snapshot why: a Warning for a
// malformed one.
func (a *Adapter) waitOrWarn(ctx context.Context, j *job, terminating int) {
	for _, p := range j.pods {
		switch {
		case j.err != nil:
			a.tell(ctx, p, corev1.EventTypeWarning, "InvalidJob", fmt.Sprintf("job %s is not scheduled: %v", j.id, j.err))
		case j.waiting != "":
			a.tell(ctx, p, corev1.EventTypeNormal, "Waiting", j.waiting)
		case terminating > 0 && p.DeletionTimestamp == nil:
			a.tell(ctx, p, corev1.EventTypeNormal, "Waiting", fmt.Sprintf("waiting for %d pods of job %s to terminate", terminating, j.id))
		}
	}
}

// tell records an Event on a pod, unless the last one said the same.
func (a *Adapter) tell(ctx context.Context, p *corev1.Pod, typ, reason, msg string) {
	k := key(p) + "/" + string(p.UID)
	if a.said[k] == reason+msg {
		return
	}
	a.said[k] = reason + msg
	now := metav1.NewTime(a.now())
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, GenerateName: p.Name + "."},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion,
		},
		Reason: reason, Message: msg, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              corev1.EventSource{Component: a.schedulerName()},
		ReportingController: "dlsched.io/" + a.schedulerName(),
		ReportingInstance:   a.schedulerName(),
		Action:              reason,
	}
	// An event that cannot be written is not worth failing a round for.
	_ = a.Client.Create(ctx, e)
}
