package main

import (
	"bytes"
	"testing"
)

// The fits, the estimates and the search are deterministic; the noisiest
// job (bert) gets the most GPUs and the largest batch, the least noisy
// (gnmt) keeps its initial batch.
func TestRun(t *testing.T) {
	const want = `bert   fitted α_c 0.120 β_c 0.0060 γ 1.26; noise scale  4640 examples
resnet fitted α_c 0.049 β_c 0.0020 γ 1.54; noise scale   591 examples
gnmt   fitted α_c 0.080 β_c 0.0040 γ 1.09; noise scale   104 examples
pollux: p-mean speedup 1.47; ask again at 2h1m0s
bert    8 GPUs, batch 1072 on node-0×4 node-1×4
gnmt    4 GPUs, batch  128 on node-3×4
resnet  4 GPUs, batch  300 on node-2×4
`
	for range 2 {
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	}
}
