package all_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
)

// FuzzAllocate feeds every policy arbitrary snapshots, decoded as a user's
// would be. A policy either refuses the snapshot (ErrInvalidSnapshot, or
// ErrInvalidConfig when its configuration does not fit the cluster, such
// as a type without a price) or
// decides within capacity, in whole workers, with a decision that marshals
// to JSON; nothing panics and no round of the fuzzer's small inputs takes 10 s.
func FuzzAllocate(f *testing.F) {
	sets := settings()
	r := rand.New(rand.NewPCG(9, 9))
	for k := range 6 {
		b, err := json.Marshal(randomWorld(r).s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(k*5), b)
	}
	f.Add(uint8(3), []byte(`{"cluster":{"servers":[{"id":"s","accelerator":"v100","gpus":4}]},"jobs":[{"id":"a","gpus":2,"steps_total":1e15,"throughput":{"v100":1e-12}}]}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s, err := policy.DecodeSnapshot(data)
		if err != nil {
			return
		}
		st := sets[int(which)%len(sets)]
		p, err := policy.New(st.name, []byte(st.config))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		d, err := p.Allocate(ctx, s)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("%s: took %v on %d jobs", st.label, took, len(s.Jobs))
		}
		if err != nil {
			if !errors.Is(err, policy.ErrInvalidSnapshot) && !errors.Is(err, policy.ErrInvalidConfig) {
				t.Fatalf("%s: %v", st.label, err)
			}
			return
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("%s: decision: %v", st.label, err)
		}
		if err := d.Allocation.Validate(s.Cluster); err != nil {
			t.Fatalf("%s: %v", st.label, err)
		}
		if err := fits(s.Cluster, jobsOf(s), d); err != nil {
			t.Fatalf("%s: %v", st.label, err)
		}
	})
}

func jobsOf(s *policy.Snapshot) map[string]*policy.Job {
	m := make(map[string]*policy.Job, len(s.Jobs))
	for i := range s.Jobs {
		m[s.Jobs[i].ID] = &s.Jobs[i]
	}
	return m
}
