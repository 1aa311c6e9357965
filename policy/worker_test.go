package policy_test

import (
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// Worker shapes: GPU counts, elastic limits and placements come in whole
// workers, and a job fits only where its workers fit on single servers.
func TestWorkerShape(t *testing.T) {
	c := allocation.Cluster{Servers: []allocation.Server{
		{ID: "a", Accelerator: "v100", GPUs: 3},
		{ID: "b", Accelerator: "v100", GPUs: 3},
	}}
	thr := map[allocation.Accelerator]float64{"v100": 1}
	for _, tc := range []struct {
		name string
		job  policy.Job
		want string // prefix of the reason; empty: valid
	}{
		{"any split", policy.Job{GPUs: 6}, ""},
		{"two workers of 2", policy.Job{GPUs: 4, GPUsPerWorker: 2}, ""},
		{"three workers of 2 on 3-GPU servers", policy.Job{GPUs: 6, GPUsPerWorker: 2}, "gpus: wants 6 GPUs at once in workers of 2"},
		{"not a multiple", policy.Job{GPUs: 3, GPUsPerWorker: 2}, "gpus: 3 is not a multiple of gpus_per_worker 2"},
		{"negative", policy.Job{GPUs: 2, GPUsPerWorker: -1}, "gpus_per_worker: -1 is negative"},
		{"placement splits a worker", policy.Job{GPUs: 4, GPUsPerWorker: 2, Placement: []allocation.Assignment{{Server: "a", GPUs: 3}, {Server: "b", GPUs: 1}}}, `placement: 3 GPUs on server "a" splits a worker`},
		{"elastic limits", policy.Job{GPUsPerWorker: 2, Elastic: &policy.Elastic{MinGPUs: 2, MaxGPUs: 5, BatchSize: 32}}, "elastic.max_gpus: 5 is not a multiple of gpus_per_worker 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.ID, tc.job.Throughput = "j", thr
			s := &policy.Snapshot{Cluster: c, Jobs: []policy.Job{tc.job}}
			kept, out, err := policy.Screen(s)
			if err != nil {
				t.Fatal(err)
			}
			got := out["j"]
			want := tc.want
			if (want == "") != (got == "") || !strings.HasPrefix(got, want) {
				t.Errorf("reason %q, want prefix %q", got, want)
			}
			if (len(kept.Jobs) == 1) != (want == "") {
				t.Errorf("kept %d jobs", len(kept.Jobs))
			}
			if verr := policy.Validate(s); (verr == nil) != (want == "") {
				t.Errorf("Validate: %v", verr)
			}
		})
	}
}
