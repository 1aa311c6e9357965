package kubernetes

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// GPU is the extended resource that counts a node's and a pod's GPUs.
const GPU corev1.ResourceName = "nvidia.com/gpu"

// Annotations a job's pods carry (see the package doc).
const (
	AnnotationWeight     = "dlsched.io/weight"
	AnnotationTenant     = "dlsched.io/tenant"
	AnnotationThroughput = "dlsched.io/throughput"
	AnnotationSteps      = "dlsched.io/steps"
	AnnotationWorkers    = "dlsched.io/workers"
	AnnotationFacts      = "dlsched.io/facts"
)

// job is one training job as the cluster shows it.
type job struct {
	id        string
	pods      []*corev1.Pod // live pods (not finished), by name
	perWorker int
	spec      policy.Job
	err       error // malformed: left out, with an Event on each pod
	waiting   string
}

// bound returns the nodes of the job's bound, not terminating pods, and
// how many of its pods are terminating.
func (j *job) bound() (nodes map[string]int, terminating int) {
	nodes = map[string]int{}
	for _, p := range j.pods {
		switch {
		case p.DeletionTimestamp != nil:
			terminating++
		case p.Spec.NodeName != "":
			nodes[p.Spec.NodeName] += j.perWorker
		}
	}
	return nodes, terminating
}

// servers turns nodes into the cluster's servers. used holds the GPUs that
// the snapshot's jobs hold on each node, which is all a cordoned or unready
// node offers; held the GPUs that other pods hold, which no node offers;
// others the CPU and memory requests of pods not dlsched's.
func (a *Adapter) servers(nodes []corev1.Node, used, held map[string]int, others map[string]corev1.ResourceList) allocation.Cluster {
	var c allocation.Cluster
	for i := range nodes {
		n := &nodes[i]
		gpus := int(n.Status.Allocatable.Name(GPU, resource.DecimalSI).Value()) - held[n.Name]
		if !ready(n) {
			gpus = min(gpus, used[n.Name])
		}
		if gpus <= 0 {
			continue
		}
		typ := n.Labels[a.acceleratorLabel()]
		if typ == "" {
			typ = "gpu"
		}
		o := others[n.Name]
		cpu := n.Status.Allocatable.Cpu().AsApproximateFloat64() - o.Cpu().AsApproximateFloat64()
		mem := n.Status.Allocatable.Memory().AsApproximateFloat64() - o.Memory().AsApproximateFloat64()
		c.Servers = append(c.Servers, allocation.Server{
			ID: n.Name, Accelerator: allocation.Accelerator(typ), GPUs: gpus,
			CPUs: max(cpu, 0), MemoryGB: max(mem, 0) / 1e9,
		})
	}
	return c
}

func ready(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// requests adds up a pod's requests of one resource (limits where a
// container has no request, as the API server defaults extended resources).
func requests(p *corev1.Pod, r corev1.ResourceName) resource.Quantity {
	var q resource.Quantity
	for _, c := range p.Spec.Containers {
		if v, ok := c.Resources.Requests[r]; ok {
			q.Add(v)
		} else if v, ok := c.Resources.Limits[r]; ok {
			q.Add(v)
		}
	}
	return q
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// jobs groups dlsched's live pods into jobs, by ID, and reads their facts;
// epoch is the clock's zero and types the cluster's accelerator types.
func (a *Adapter) jobs(pods []*corev1.Pod, epoch time.Time, types []allocation.Accelerator) map[string]*job {
	out := map[string]*job{}
	for _, p := range pods {
		id := p.Namespace + "/" + p.Labels[a.jobLabel()]
		j := out[id]
		if j == nil {
			j = &job{id: id}
			out[id] = j
		}
		j.pods = append(j.pods, p)
	}
	for _, j := range out {
		slices.SortFunc(j.pods, func(x, y *corev1.Pod) int { return strings.Compare(x.Name, y.Name) })
		j.err = j.read(epoch, types)
	}
	return out
}

// read fills the job's spec from its pods.
func (j *job) read(epoch time.Time, types []allocation.Accelerator) error {
	first := j.pods[0]
	g := requests(first, GPU)
	j.perWorker = int(g.Value())
	if j.perWorker <= 0 || g.MilliValue()%1000 != 0 {
		return fmt.Errorf("pod %s requests %s %s GPUs: want a positive whole number", first.Name, g.String(), GPU)
	}
	arrival := first.CreationTimestamp.Time
	for _, p := range j.pods[1:] {
		if q := requests(p, GPU); q.Cmp(g) != 0 {
			return fmt.Errorf("pod %s requests %s GPUs and pod %s %s: a job's pods must request the same", first.Name, g.String(), p.Name, q.String())
		}
		for _, k := range []string{AnnotationWeight, AnnotationTenant, AnnotationThroughput, AnnotationSteps, AnnotationWorkers, AnnotationFacts} {
			if p.Annotations[k] != first.Annotations[k] {
				return fmt.Errorf("pods %s and %s disagree on annotation %s", first.Name, p.Name, k)
			}
		}
		if p.CreationTimestamp.Time.Before(arrival) {
			arrival = p.CreationTimestamp.Time
		}
	}
	workers := len(j.pods)
	if s, ok := first.Annotations[AnnotationWorkers]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("annotation %s: %q is not a positive integer", AnnotationWorkers, s)
		}
		if n < workers {
			return fmt.Errorf("annotation %s says %d pods, and %d exist", AnnotationWorkers, n, workers)
		}
		if n > workers {
			j.waiting = fmt.Sprintf("waiting for its pods: %d of %d exist", workers, n)
		}
	}
	spec, err := facts(first.Annotations, types)
	if err != nil {
		return err
	}
	spec.ID = j.id
	spec.GPUsPerWorker = j.perWorker
	spec.GPUs = workers * j.perWorker
	spec.Arrival = max(arrival.Sub(epoch), 0)
	j.spec = *spec
	return nil
}

// facts decodes a job's annotations into a policy.Job, strictly: the
// dlsched.io/facts object goes through policy.DecodeSnapshot, so a
// misspelt key is an error that names it.
func facts(ann map[string]string, types []allocation.Accelerator) (*policy.Job, error) {
	fields := map[string]any{}
	if s, ok := ann[AnnotationFacts]; ok {
		if err := json.Unmarshal([]byte(s), &fields); err != nil {
			return nil, fmt.Errorf("annotation %s: %v", AnnotationFacts, err)
		}
		for _, k := range []string{"id", "gpus", "gpus_per_worker", "placement", "arrival"} {
			if _, ok := fields[k]; ok {
				return nil, fmt.Errorf("annotation %s: %q comes from the pods, not from facts", AnnotationFacts, k)
			}
		}
	}
	if err := numbers(ann, fields); err != nil {
		return nil, err
	}
	if s, ok := ann[AnnotationTenant]; ok {
		fields["tenant"] = s
	}
	if _, ok := fields["throughput"]; !ok {
		tp := map[string]float64{}
		for _, t := range types {
			tp[string(t)] = 1
		}
		fields["throughput"] = tp
	}
	b, err := json.Marshal(map[string]any{"jobs": []any{fields}})
	if err != nil {
		return nil, err
	}
	s, err := policy.DecodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("annotations: %v", err)
	}
	return &s.Jobs[0], nil
}

// numbers reads the weight, steps and throughput annotations into fields.
func numbers(ann map[string]string, fields map[string]any) error {
	for k, field := range map[string]string{AnnotationWeight: "weight", AnnotationSteps: "steps_total"} {
		s, ok := ann[k]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("annotation %s: %q is not a positive number", k, s)
		}
		fields[field] = v
	}
	if s, ok := ann[AnnotationThroughput]; ok {
		var tp map[string]float64
		if err := json.Unmarshal([]byte(s), &tp); err != nil {
			return fmt.Errorf("annotation %s: %v (want {\"type\": steps per second, ...})", AnnotationThroughput, err)
		}
		fields["throughput"] = tp
	}
	return nil
}

// sortedIDs returns m's keys in order.
func sortedIDs[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
