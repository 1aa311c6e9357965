package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// journalKey is the ConfigMap key that holds the journal.
const journalKey = "journal.json"

// journal is what the adapter must not forget across a restart.
type journal struct {
	// Epoch is the zero of the snapshots' clock.
	Epoch time.Time `json:"epoch"`
	// Last is when the last round observed the cluster.
	Last time.Time `json:"last,omitzero"`
	// Attained is each job's GPU-seconds held so far.
	Attained map[string]float64 `json:"attained,omitempty"`
	// Policy is the policy's name and State its state after the last
	// decision.
	Policy string          `json:"policy"`
	State  json.RawMessage `json:"state,omitempty"`
	// Binds are the gangs the last round set out to bind: job ID → pod
	// name → node.
	Binds map[string]map[string]string `json:"binds,omitempty"`
	// Recreate holds the evicted pods that must be created again, unbound,
	// once gone, by namespace/name.
	Recreate map[string]*corev1.Pod `json:"recreate,omitempty"`
	// Preemptions counts each job's evictions.
	Preemptions map[string]int `json:"preemptions,omitempty"`
}

// load reads the journal from the State ConfigMap; none is a fresh one.
func (a *Adapter) load(ctx context.Context) (*journal, error) {
	j := &journal{Epoch: a.now().UTC().Truncate(time.Second), Policy: a.Policy.Name()}
	if a.State.Name == "" {
		return j, nil
	}
	var cm corev1.ConfigMap
	err := a.Client.Get(ctx, a.State, &cm)
	if apierrors.IsNotFound(err) {
		return j, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state ConfigMap %s: %w", a.State, err)
	}
	a.stateVersion = cm.ResourceVersion
	s, ok := cm.Data[journalKey]
	if !ok {
		return j, nil
	}
	if err := json.Unmarshal([]byte(s), j); err != nil {
		return nil, fmt.Errorf("state ConfigMap %s: %s: %w", a.State, journalKey, err)
	}
	if j.Policy != a.Policy.Name() {
		return nil, fmt.Errorf("state ConfigMap %s holds the state of %s, not %s: delete it, or run %s", a.State, j.Policy, a.Policy.Name(), j.Policy)
	}
	return j, nil
}

// save writes the journal, refusing to overwrite a version it has not
// read: a second adapter that acted meanwhile makes this one stop.
func (a *Adapter) save(ctx context.Context, j *journal) error {
	if a.State.Name == "" {
		return nil
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.State.Namespace, Name: a.State.Name, ResourceVersion: a.stateVersion},
		Data:       map[string]string{journalKey: string(b)},
	}
	if a.stateVersion == "" {
		err = a.Client.Create(ctx, cm)
	} else {
		err = a.Client.Update(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing state ConfigMap %s: %w", a.State, err)
	}
	a.stateVersion = cm.ResourceVersion
	return nil
}
