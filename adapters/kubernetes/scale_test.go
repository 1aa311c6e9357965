package kubernetes_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dlsched/dlsched/adapters/kubernetes"
	"k8s.io/apimachinery/pkg/types"
)

// 200 pods on 20 nodes are driven to completion, every round within
// capacity and every gang whole. The rounds per second and the p99 round
// latency (observe, decide, bind and evict against the API server) are
// logged for the README: go test -run TestScale -v ./adapters/kubernetes.
func TestScale(t *testing.T) {
	c := newCluster(t)
	for i := range 20 {
		c.node(fmt.Sprintf("n%02d", i), 8, []string{"v100", "k80"}[i%2])
	}
	for i := range 100 { // 100 jobs of 2 pods: 1, 2 or 4 GPUs each
		tp := fmt.Sprintf(`{"v100": %d, "k80": %d}`, 2+i%3, 1+i%2)
		c.job(fmt.Sprintf("j%03d", i), 2, []int{1, 2, 4}[i%3], 1+i%5, map[string]string{"dlsched.io/throughput": tp})
	}
	a := c.adapter("tiresias.las", true)
	var lat []time.Duration
	begin := time.Now()
	for len(c.done) < 100 && len(lat) < 200 {
		t0 := time.Now()
		if _, err := a.Round(c.ctx); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		c.check()
		c.kubelet()
		c.clock = c.clock.Add(time.Minute)
	}
	elapsed := time.Since(begin)
	var busy time.Duration
	for _, d := range lat {
		busy += d
	}
	if len(c.done) != 100 {
		t.Fatalf("%d of 100 jobs finished after %d rounds", len(c.done), len(lat))
	}
	c.noViolations()
	slices.Sort(lat)
	t.Logf("200 pods, 20 nodes, 160 GPUs: %d rounds, %v in all, %v of it in the adapter's rounds (%.1f decisions/s), round latency p50 %v, p99 %v",
		len(lat), elapsed.Round(time.Millisecond), busy.Round(time.Millisecond), float64(len(lat))/busy.Seconds(),
		lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond))
}

// Of two replicas under one Lease only one leads at a time; when it stops,
// the other takes over.
func TestLeaderElection(t *testing.T) {
	c := newCluster(t)
	lease := types.NamespacedName{Namespace: c.ns, Name: "dlsched"}
	var mu sync.Mutex
	leading, most := 0, 0
	var order []string
	replica := func(ctx context.Context, id string) {
		kubernetes.Election{Config: restConfig, Lease: lease, ID: id, Duration: 2 * time.Second}.Run(ctx, func(ctx context.Context) {
			mu.Lock()
			leading++
			most = max(most, leading)
			order = append(order, id)
			mu.Unlock()
			<-ctx.Done()
			mu.Lock()
			leading--
			mu.Unlock()
		})
	}
	ctx1, stop1 := context.WithCancel(c.ctx)
	ctx2, stop2 := context.WithCancel(c.ctx)
	defer stop2()
	done1 := make(chan struct{})
	go func() { replica(ctx1, "one"); close(done1) }()
	time.Sleep(500 * time.Millisecond)
	go replica(ctx2, "two")
	time.Sleep(3 * time.Second)
	stop1() // the leader goes: it releases the lease
	<-done1
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 || !slices.Equal(order, []string{"one", "two"}) {
		t.Errorf("at most %d leading at once, leaders in order %v; want 1 and [one two]", most, order)
	}
}
