package main

import (
	"bytes"
	"testing"
)

// The spec's check 5: proportional 8.0, greedy 8.8 (two ResNets at 9
// cores, two waiting), tune 9.4 (the first GNMT job takes back the first
// ResNet's extra cores), opt 10.12 (every ResNet at 5 cores).
func TestRun(t *testing.T) {
	const want = `one server: 8 GPUs, 24 cores, 500 GB; proportional share 3 cores and 62.5 GB per GPU

job                 proportional              greedy                    tune                      opt
1-res18              3.0 cores  62.5 GB 1.00×   9.0 cores  62.5 GB 2.40×   3.0 cores  62.5 GB 1.00×   5.0 cores  62.5 GB 1.53×
2-res18              3.0 cores  62.5 GB 1.00×   9.0 cores  62.5 GB 2.40×   9.0 cores  62.5 GB 2.40×   5.0 cores  62.5 GB 1.53×
3-res18              3.0 cores  62.5 GB 1.00×  waits                      3.0 cores  62.5 GB 1.00×   5.0 cores  62.5 GB 1.53×
4-res18              3.0 cores  62.5 GB 1.00×  waits                      3.0 cores  62.5 GB 1.00×   5.0 cores  62.5 GB 1.53×
5-gnmt               3.0 cores  62.5 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×
6-gnmt               3.0 cores  62.5 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×
7-gnmt               3.0 cores  62.5 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×
8-gnmt               3.0 cores  62.5 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×   1.0 cores  20.8 GB 1.00×
server throughput   8.00                      8.80                      9.40                      10.12
`
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
