package baseline_test

import (
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/baseline"
)

// A running job that SRTF preempts waits rather than restart elsewhere. On
// servers of 4, 2, 1 and 1 GPUs, r runs on s0:2 with the most work left. n1
// (4 GPUs in one worker) and n2 (4 GPUs in workers of 2) come first by
// remaining time and take every GPU by count, so r is not chosen; n1 takes
// s0, and n2 finds no room for its workers. The 1+1 GPUs left would hold r,
// but r stops: its GPUs are n1's.
func TestSRTFPreemptedWaits(t *testing.T) {
	n1, n2 := job("n1", 4, 0, 10), job("n2", 4, 0, 20)
	n1.GPUsPerWorker, n2.GPUsPerWorker = 4, 2
	r := job("r", 2, 0, 100, on("s0", 2))
	s := &policy.Snapshot{Now: time.Hour, Cluster: servers(4, 2, 1, 1), Jobs: []policy.Job{n1, n2, r}}
	for _, p := range []policy.Policy{&baseline.SRTF{}, &baseline.SRSF{}} {
		d := allocate(t, p, s.Cluster, s.Jobs...)
		got := map[string]policy.Kind{}
		for _, c := range policy.Changes(s, d) {
			got[c.Job] = c.Kind
		}
		if len(got) != 2 || got["n1"] != policy.Start || got["r"] != policy.Stop {
			t.Errorf("%s: changes %v, want n1 start, r stop", p.Name(), got)
		}
	}
}
