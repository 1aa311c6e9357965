package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/dlsched/dlsched/adapters/kubernetes"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
)

// One real kube-apiserver and etcd serve every test (envtest, with the
// binaries of scripts/k8s-assets.sh); each test has its own namespace and
// removes its nodes when it ends.
var (
	restConfig *rest.Config
	k8s        client.Client
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("DLSCHED_K8S_TEST") == "1" {
			fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(bash scripts/k8s-assets.sh)")
			os.Exit(1)
		}
		fmt.Println("skipping the API server tests: KUBEBUILDER_ASSETS is not set (scripts/k8s-assets.sh)")
		os.Exit(m.Run())
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	restConfig = cfg
	if k8s, err = client.New(cfg, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	env.Stop()
	os.Exit(code)
}

// cluster is one test's view of the API server: its namespace, and a
// kubelet played by the test.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	clock time.Time
	// work is each job's remaining work, in kubelet steps with all its
	// pods running; done holds the jobs finished.
	work map[string]int
	done []string
	// violations records every breach of capacity or of a gang seen.
	violations []string
}

func newCluster(t *testing.T) *cluster {
	if restConfig == nil {
		t.Skip("no API server: KUBEBUILDER_ASSETS is not set")
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, ctx: ctx, ns: ns.Name, clock: time.Now().Truncate(time.Second), work: map[string]int{}}
	t.Cleanup(c.cleanup)
	return c
}

func (c *cluster) cleanup() {
	var nodes corev1.NodeList
	k8s.List(c.ctx, &nodes)
	for i := range nodes.Items {
		k8s.Delete(c.ctx, &nodes.Items[i])
	}
	zero := int64(0)
	var pods corev1.PodList
	k8s.List(c.ctx, &pods, client.InNamespace(c.ns))
	for i := range pods.Items {
		k8s.Delete(c.ctx, &pods.Items[i], &client.DeleteOptions{GracePeriodSeconds: &zero})
	}
}

func (c *cluster) now() time.Time { return c.clock }

// adapter returns an adapter for the test's namespace, on the test's
// clock, keeping its journal in the ConfigMap "state" if stateful.
func (c *cluster) adapter(name string, stateful bool) *kubernetes.Adapter {
	p, err := policy.New(name, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	a := &kubernetes.Adapter{Client: k8s, Policy: p, Namespace: c.ns, Clock: c.now, Grace: time.Second}
	if stateful {
		a.State.Namespace, a.State.Name = c.ns, "state"
	}
	return a
}

func (c *cluster) node(name string, gpus int, typ string) {
	c.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kubernetes.DefaultAcceleratorLabel: typ}}}
	if err := k8s.Create(c.ctx, n); err != nil {
		c.t.Fatal(err)
	}
	res := corev1.ResourceList{
		kubernetes.GPU:     *resource.NewQuantity(int64(gpus), resource.DecimalSI),
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
	}
	n.Status.Capacity, n.Status.Allocatable = res, res
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(c.ctx, n); err != nil {
		c.t.Fatal(err)
	}
}

// job creates a job of pods pods of gpus GPUs each, with annotations, that
// needs work kubelet steps with all its pods running to finish.
func (c *cluster) job(id string, pods, gpus, work int, ann map[string]string) {
	c.t.Helper()
	c.work[id] = work
	for i := range pods {
		p := podSpec(c.ns, fmt.Sprintf("%s-%d", id, i), kubernetes.DefaultSchedulerName, gpus)
		p.Labels = map[string]string{kubernetes.DefaultJobLabel: id}
		p.Annotations = ann
		if err := k8s.Create(c.ctx, p); err != nil {
			c.t.Fatal(err)
		}
	}
}

// foreign creates a pod of another scheduler holding gpus GPUs on node,
// in another namespace than the adapter's (whose GPUs it must count all
// the same).
func (c *cluster) foreign(name, node string, gpus int) *corev1.Pod {
	c.t.Helper()
	p := podSpec("default", c.ns+"-"+name, "default-scheduler", gpus)
	p.Spec.NodeName = node
	if err := k8s.Create(c.ctx, p); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		zero := int64(0)
		k8s.Delete(c.ctx, p, &client.DeleteOptions{GracePeriodSeconds: &zero})
	})
	return p
}

func podSpec(ns, name, scheduler string, gpus int) *corev1.Pod {
	q := corev1.ResourceList{kubernetes.GPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			SchedulerName: scheduler,
			Containers:    []corev1.Container{{Name: "train", Image: "trainer", Resources: corev1.ResourceRequirements{Requests: q, Limits: q}}},
		},
	}
}

func (c *cluster) pods() []corev1.Pod {
	c.t.Helper()
	var pods corev1.PodList
	if err := k8s.List(c.ctx, &pods, client.InNamespace(c.ns)); err != nil {
		c.t.Fatal(err)
	}
	return pods.Items
}

// round runs one adapter round, checks what it left, and plays the kubelet
// for one step of dt.
func (c *cluster) round(a *kubernetes.Adapter, dt time.Duration) *kubernetes.Report {
	c.t.Helper()
	r, err := a.Round(c.ctx)
	if err != nil {
		c.t.Fatalf("round at %v: %v", c.clock, err)
	}
	c.check()
	c.kubelet()
	c.clock = c.clock.Add(dt)
	return r
}

// check records capacity and gang breaches: no node's pods hold more GPUs
// than it has, and a job's live pods are all bound or none are.
func (c *cluster) check() {
	var nodes corev1.NodeList
	if err := k8s.List(c.ctx, &nodes); err != nil {
		c.t.Fatal(err)
	}
	var all corev1.PodList // every namespace's: all hold GPUs
	if err := k8s.List(c.ctx, &all); err != nil {
		c.t.Fatal(err)
	}
	held, bound, live := map[string]int64{}, map[string]int{}, map[string]int{}
	for _, p := range all.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		g := p.Spec.Containers[0].Resources.Limits[kubernetes.GPU]
		if p.Spec.NodeName != "" {
			held[p.Spec.NodeName] += g.Value()
		}
		if job := p.Labels[kubernetes.DefaultJobLabel]; job != "" && p.Namespace == c.ns && p.DeletionTimestamp == nil {
			live[job]++
			if p.Spec.NodeName != "" {
				bound[job]++
			}
		}
	}
	for _, n := range nodes.Items {
		if g := n.Status.Allocatable[kubernetes.GPU]; held[n.Name] > g.Value() {
			c.violations = append(c.violations, fmt.Sprintf("%v: node %s holds %d GPUs of %d", c.clock, n.Name, held[n.Name], g.Value()))
		}
	}
	for job, n := range bound {
		if n != live[job] {
			c.violations = append(c.violations, fmt.Sprintf("%v: job %s has %d of %d pods bound", c.clock, job, n, live[job]))
		}
	}
}

// kubelet plays every node's kubelet for one step: a terminating pod has
// checkpointed and goes; a bound pod runs; a job whose pods all run does
// one step of work, and when it has none left its pods succeed.
func (c *cluster) kubelet() {
	c.t.Helper()
	running := map[string][]*corev1.Pod{}
	pods := c.pods()
	zero := int64(0)
	for i := range pods {
		p := &pods[i]
		switch {
		case p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded:
		case p.DeletionTimestamp != nil:
			if err := k8s.Delete(c.ctx, p, &client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
				c.t.Fatal(err)
			}
		default:
			if p.Status.Phase != corev1.PodRunning {
				c.phase(p, corev1.PodRunning)
			}
			if job := p.Labels[kubernetes.DefaultJobLabel]; job != "" {
				running[job] = append(running[job], p)
			}
		}
	}
	for job, ps := range running {
		if len(ps) != c.size(job, pods) {
			continue
		}
		if c.work[job]--; c.work[job] > 0 {
			continue
		}
		for _, p := range ps {
			c.phase(p, corev1.PodSucceeded)
		}
		c.done = append(c.done, job)
	}
}

// size counts a job's pods that are not terminating.
func (c *cluster) size(job string, pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Labels[kubernetes.DefaultJobLabel] == job && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func (c *cluster) phase(p *corev1.Pod, phase corev1.PodPhase) {
	c.t.Helper()
	p.Status.Phase = phase
	if err := k8s.Status().Update(c.ctx, p); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		c.t.Fatal(err)
	}
}

// events returns the events of the pods of a job, oldest first, as
// "Reason: message".
func (c *cluster) events(job string) []string {
	c.t.Helper()
	var list corev1.EventList
	if err := k8s.List(c.ctx, &list, client.InNamespace(c.ns)); err != nil {
		c.t.Fatal(err)
	}
	// By the adapter's clock, which moves on each round.
	slices.SortStableFunc(list.Items, func(x, y corev1.Event) int { return x.FirstTimestamp.Compare(y.FirstTimestamp.Time) })
	var out []string
	for _, e := range list.Items {
		if len(e.InvolvedObject.Name) > len(job) && e.InvolvedObject.Name[:len(job)+1] == job+"-" {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// placement returns where a job's live pods are bound, as node:count.
func (c *cluster) placement(job string) map[string]int {
	out := map[string]int{}
	for _, p := range c.pods() {
		if p.Labels[kubernetes.DefaultJobLabel] == job && p.Spec.NodeName != "" && p.DeletionTimestamp == nil &&
			p.Status.Phase != corev1.PodSucceeded {
			out[p.Spec.NodeName]++
		}
	}
	return out
}

func (c *cluster) finished(job string) bool { return slices.Contains(c.done, job) }

// drain runs rounds until n jobs have finished, at most max of them.
func (c *cluster) drain(a *kubernetes.Adapter, n, max int) {
	c.t.Helper()
	for i := 0; i < max && len(c.done) < n; i++ {
		c.round(a, time.Minute)
	}
}

func (c *cluster) noViolations() {
	c.t.Helper()
	for _, v := range c.violations {
		c.t.Error(v)
	}
}

// corev1Node names a node to delete.
type corev1Node struct{ Name string }

func (n corev1Node) obj() client.Object {
	o := &corev1.Node{}
	o.Name = n.Name
	return o
}
