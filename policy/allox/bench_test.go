package allox_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/allox"
)

// BenchmarkAlloX measures one decision for 300 waiting jobs on 100 free
// GPUs (25 servers of 4) with α = 1: every GPU is matched. "v100" has one
// type; "mixed" has v100, p100 and k80 servers, jobs up to 3× faster on one
// type than another, and one job in five a gang of 2 or 4.
func BenchmarkAlloX(b *testing.B) {
	for _, mixed := range []bool{false, true} {
		r := rand.New(rand.NewPCG(13, 13))
		types := []allocation.Accelerator{"v100"}
		if mixed {
			types = []allocation.Accelerator{"k80", "p100", "v100"}
		}
		var c allocation.Cluster
		for i := range 25 {
			c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprintf("s%02d", i), Accelerator: types[i%len(types)], GPUs: 4})
		}
		s := &policy.Snapshot{Now: 10000 * time.Second, Cluster: c}
		for i := range 300 {
			t := map[allocation.Accelerator]float64{}
			for _, k := range types {
				t[k] = 1 + 2*r.Float64()
			}
			gpus := 1
			if mixed && r.IntN(5) == 0 {
				gpus = []int{2, 4}[r.IntN(2)]
			}
			s.Jobs = append(s.Jobs, newJob(fmt.Sprintf("j%03d", i), gpus, float64(r.IntN(10000)), 1000+r.Float64()*1e5, t))
		}
		name := map[bool]string{false: "v100", true: "mixed"}[mixed]
		b.Run(fmt.Sprintf("%s/jobs=300/gpus=100", name), func(b *testing.B) {
			p := &allox.AlloX{}
			for b.Loop() {
				if _, err := p.Allocate(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
