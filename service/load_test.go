package service_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dlsched/dlsched/internal/simtest"
	"github.com/dlsched/dlsched/service"
)

// A bounded load test over loopback: clients send rounds of 24-job
// snapshots to four schedulers at once. Every request must succeed, each
// scheduler must count exactly the decisions sent to it, and the run must
// stay bounded; the throughput and the p99 latency are logged (go test
// -run TestLoad -v ./service) for the README.
func TestLoad(t *testing.T) {
	requests, clients := 2000, 8
	if testing.Short() || raceEnabled {
		requests = 200
	}
	svc, c := start(t, service.Config{Dir: t.TempDir()})
	names := []string{"fifo", "las", "tiresias", "themis"}
	for i, p := range []string{"gavel.fifo", "gavel.las", "tiresias.las", "themis"} {
		c.put(names[i], `{"policy": "`+p+`"}`)
	}
	tr := simtest.NewTrace(24)
	tr.Now = 24 * 360 * time.Second // all have arrived
	body, _ := json.Marshal(tr.Snapshot())

	lat := make([]time.Duration, requests)
	var wg sync.WaitGroup
	next := make(chan int)
	begin := time.Now()
	for range clients {
		wg.Go(func() {
			for i := range next {
				t0 := time.Now()
				code, b := c.do("POST", "/v1/allocate?scheduler="+names[i%len(names)], body)
				lat[i] = time.Since(t0)
				if code != http.StatusOK {
					t.Errorf("request %d: %d %s", i, code, b)
				}
			}
		})
	}
	for i := range requests {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(begin)

	for _, s := range svc.Schedulers() {
		if s.Decisions != int64(requests/len(names)) {
			t.Errorf("%s: %d decisions, want %d", s.Name, s.Decisions, requests/len(names))
		}
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("%d requests from %d clients to %d schedulers (24 jobs, 16 GPUs, state saved to disk each): %.0f requests/s, p50 %v, p99 %v",
		requests, clients, len(names), float64(requests)/elapsed.Seconds(), p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond))
	if p99 > 5*time.Second {
		t.Errorf("p99 %v over 5 s", p99)
	}
}
