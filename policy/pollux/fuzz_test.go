package pollux_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/pollux"
)

// FuzzAllocate decodes the input as a snapshot and runs every policy of the
// package on it: errors are fine, panics and invalid decisions are not.
func FuzzAllocate(f *testing.F) {
	for _, s := range []*policy.Snapshot{fourJobs(), bigSnapshot(3, 5)} {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"now":10,"cluster":{"servers":[{"id":"a","accelerator":"t4","gpus":3},{"id":"b","accelerator":"k80","gpus":1}]},` +
		`"jobs":[{"id":"x","gpus":0,"throughput":{"k80":1},"placement":[{"server":"a","gpus":3}],"elastic":{"batch_size":100,"min_gpus":2,"max_batch_size":100,"local_batch_min":200,"local_batch_max":200,"perf":{"alpha_c":1},"grad_sqr":0,"grad_var":1}},` +
		`{"id":"y","gpus":2,"throughput":{"t4":1},"arrival":10,"placement":[{"server":"a","gpus":3},{"server":"a","gpus":2}]}]}`))
	// A fitted job whose LocalBatchMin exceeds its MaxBatchSize.
	f.Add([]byte(`{"Cluster":{"servers":[{"id":"0","ACCelerAtor":"0"},{"id":"1","ACCelerAtor":"0","gpus":7}]},"joBs":[{"id":"0","elAstiC":{"BAtCh_siZe":1,"loCAl_BAtCh_min":10,"perf":{"BetA_C":1}}},{"id":"1","elAstiC":{"BAtCh_siZe":1}}]}`))
	f.Add([]byte(`{"now":0,"cluster":{"servers":[]},"jobs":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s policy.Snapshot
		if err := json.Unmarshal(b, &s); err != nil {
			return
		}
		if len(s.Jobs) > 40 || len(s.Cluster.Servers) > 40 || s.Cluster.TotalGPUs() > 512 {
			return // keep each input fast
		}
		for _, p := range []policy.Policy{&pollux.Pollux{Population: 6, Generations: 3}, &pollux.Optimus{}, &pollux.Fixed{}} {
			d, err := p.Allocate(context.Background(), &s)
			if err != nil {
				continue
			}
			_, isPollux := p.(*pollux.Pollux)
			if isPollux {
				checkDecision(t, &s, d, checks{pollux: true, avoid: true})
			}
		}
	})
}
