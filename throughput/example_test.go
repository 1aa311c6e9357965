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

func ExampleSensitivity() {
	// ResNet-18's throughput per GPU from Synergy's profiles, normalised
	// to the GPU-proportional share of a 24-core, 500-GB, 8-GPU server
	// (3 cores and 62.5 GB per GPU).
	res18 := throughput.Sensitivity{
		CPUs:     []float64{1, 2, 3, 4, 5, 6, 9, 12, 24},
		MemoryGB: []float64{20.83, 62.5, 125, 187.5, 250},
		Speedup: [][]float64{
			{0.1, 0.37, 0.37, 0.37, 0.37},
			{0.1, 0.72, 0.72, 0.72, 0.72},
			{0.1, 1, 1, 1, 1},
			{0.1, 1.3, 1.3, 1.3, 1.3},
			{0.1, 1.53, 1.53, 1.53, 1.53},
			{0.1, 1.75, 1.75, 1.75, 1.75},
			{0.1, 2.4, 2.4, 2.4, 2.4},
			{0.1, 2.4, 2.4, 2.4, 2.4},
			{0.1, 2.4, 2.4, 2.4, 2.4},
		},
	}
	if err := res18.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	ideal := res18.Ideal()
	fmt.Printf("ideal: %g cores, %g GB per GPU, speedup %g\n", ideal.CPUs, ideal.MemoryGB, ideal.Speedup)
	fmt.Printf("7.5 cores, 62.5 GB: %.4f\n", res18.At(7.5, 62.5))
	fmt.Printf("3 cores, 41.665 GB: %.4f\n", res18.At(3, 41.665))
	// A 4-GPU job on the server gets at most 6 cores per GPU.
	clip := res18.Clip(6, 125)
	fmt.Printf("clipped to 6 cores: %g cores, %g GB, speedup %g\n", clip.CPUs, clip.MemoryGB, clip.Speedup)
	// Output:
	// ideal: 9 cores, 62.5 GB per GPU, speedup 2.4
	// 7.5 cores, 62.5 GB: 2.0750
	// 3 cores, 41.665 GB: 0.5500
	// clipped to 6 cores: 6 cores, 62.5 GB, speedup 1.75
}

func ExampleProfile() {
	// A job profiled on one GPU with its 100-GB dataset cached: 400, 200
	// and 100 s per epoch at 1, 2 and 4 cores, which read the cache at 1,
	// 2 and 4 GB/s; storage delivers 512 MB/s (200 s for the dataset).
	p := throughput.Profile{
		GPUs:         1,
		CPUs:         []float64{1, 2, 4},
		EpochSeconds: []float64{400, 200, 100},
		CacheGBps:    []float64{1, 2, 4},
		DatasetGB:    100,
		DiskMBps:     512,
	}
	// 4 cores, 50 GB cached: 50/4 + 50·1024/512 = 112.5 s.
	fmt.Printf("4 cores, 50 GB: %g s per epoch\n", p.EpochTime(2, 50))
	s, err := p.Sensitivity([]float64{25, 50, 100}, 2, 50)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, row := range s.Speedup {
		fmt.Printf("%g cores: %.3f\n", s.CPUs[i], row)
	}
	fmt.Printf("ideal: %+v\n", s.Ideal())
	// Output:
	// 4 cores, 50 GB: 112.5 s per epoch
	// 1 cores: [0.500 0.500 0.500]
	// 2 cores: [1.000 1.000 1.000]
	// 4 cores: [1.280 1.778 2.000]
	// ideal: {CPUs:4 MemoryGB:100 Speedup:2}
}

func ExampleSweep() {
	// Epoch time max(10, 240/cores) s, as a stand-in for training runs.
	measure := func(cores int) (float64, error) { return max(10, 240/float64(cores)), nil }
	cpus, secs, err := throughput.Sweep(24, 1, measure)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cpus)
	fmt.Printf("%.1f\n", secs)
	// Output:
	// [1 2 3 4 5 11 12 24]
	// [240.0 120.0 80.0 60.0 48.0 21.8 20.0 10.0]
}
