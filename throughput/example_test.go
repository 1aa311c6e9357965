package throughput_test

import (
	"fmt"

	"github.com/dlsched/dlsched/throughput"
)

func ExampleFit() {
	// Step times measured on one GPU, 4 GPUs of one node and 8 GPUs over
	// two nodes, at two local batch sizes.
	samples := []throughput.Sample{
		{Nodes: 1, Replicas: 1, LocalBatch: 64, AccumTime: 0.485, OptimTime: 0.486},
		{Nodes: 1, Replicas: 1, LocalBatch: 128, AccumTime: 0.847, OptimTime: 0.849},
		{Nodes: 1, Replicas: 4, LocalBatch: 64, AccumTime: 0.484, OptimTime: 0.497},
		{Nodes: 1, Replicas: 4, LocalBatch: 128, AccumTime: 0.849, OptimTime: 0.857},
		{Nodes: 2, Replicas: 8, LocalBatch: 64, AccumTime: 0.486, OptimTime: 0.525},
		{Nodes: 2, Replicas: 8, LocalBatch: 128, AccumTime: 0.848, OptimTime: 0.877},
	}
	p, err := throughput.Fit(samples)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("compute: %.3f s + %.5f s/example\n", p.AlphaC, p.BetaC)
	fmt.Printf("16 GPUs on 4 nodes, 96 examples each: %.0f examples/s\n", p.Throughput(4, 16, 96, 0))
	// Output:
	// compute: 0.123 s + 0.00567 s/example
	// 16 GPUs on 4 nodes, 96 examples each: 2194 examples/s
}

func ExampleParams_Throughput() {
	p := throughput.Params{
		AlphaC: 0.121, BetaC: 0.00568, // compute
		AlphaN: 0.0236, BetaN: 0.00634, // across nodes
		AlphaR: 0.0118, BetaR: 0.00317, // within a node
		Gamma: 1.14,
	}
	fmt.Printf("1 GPU, m=128:          %.1f examples/s\n", p.Throughput(1, 1, 128, 0))
	fmt.Printf("8 GPUs/2 nodes, m=64:  %.1f examples/s\n", p.Throughput(2, 8, 64, 0))
	fmt.Printf("same, 3 extra steps:   %.1f examples/s\n", p.Throughput(2, 8, 64, 3))
	// Output:
	// 1 GPU, m=128:          150.9 examples/s
	// 8 GPUs/2 nodes, m=64:  975.6 examples/s
	// same, 3 extra steps:   1035.2 examples/s
}
