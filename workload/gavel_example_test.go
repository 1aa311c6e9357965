package workload_test

import (
	"fmt"
	"github.com/dlsched/dlsched/workload"
)

// A continuous multi-GPU workload in the manner of Gavel's experiments:
// Poisson arrivals at 6 jobs an hour, scale factors 1–8, priorities and
// deadlines.
func ExampleGenerator() {
	jobs, err := workload.Generator{
		Seed:       1,
		Jobs:       5,
		Rate:       6,
		MultiGPU:   true,
		Priorities: true,
		SLOs:       true,
	}.Generate()
	if err != nil {
		panic(err)
	}
	for _, j := range jobs {
		fmt.Printf("%s gpus=%d weight=%g arrival=%5.0fs deadline=%7.0fs steps=%9.0f v100=%.4g p100=%.4g k80=%.4g\n",
			j.ID, j.GPUs, j.Weight, j.Arrival.Seconds(), j.Deadline.Seconds(), j.StepsTotal,
			j.Throughput["v100"], j.Throughput["p100"], j.Throughput["k80"])
	}
	// Output:
	// job-00000 gpus=1 weight=1 arrival=  861s deadline= 127970s steps=   306206 v100=24.09 p100=22.3 k80=7.052
	// job-00001 gpus=1 weight=1 arrival= 1169s deadline=   3517s steps=    15237 v100=7.787 p100=4.888 k80=1.237
	// job-00002 gpus=1 weight=5 arrival= 1423s deadline=   5006s steps=   326037 v100=109.2 p100=90.78 k80=25.49
	// job-00003 gpus=2 weight=1 arrival= 1799s deadline= 124451s steps=  1227742 v100=100.1 p100=60.91 k80=8.758
	// job-00004 gpus=1 weight=5 arrival= 2172s deadline=   5385s steps=    64509 v100=24.09 p100=22.3 k80=7.052
}

// The built-in profile: Gavel's measured steps per second.
func ExampleProfile_Throughput() {
	p := workload.DefaultProfile()
	for _, gpus := range []int{1, 2, 4, 8} {
		fmt.Printf("ResNet-50 (batch size 128) on %d: v100 %.4g, k80 %.4g\n", gpus,
			p.Throughput("ResNet-50 (batch size 128)", "v100", gpus),
			p.Throughput("ResNet-50 (batch size 128)", "k80", gpus))
	}
	fmt.Println(len(workload.Templates()), "templates on", p.Accelerators())
	// Output:
	// ResNet-50 (batch size 128) on 1: v100 2.497, k80 0.3472
	// ResNet-50 (batch size 128) on 2: v100 4.223, k80 0
	// ResNet-50 (batch size 128) on 4: v100 7.029, k80 0
	// ResNet-50 (batch size 128) on 8: v100 10.29, k80 0
	// 26 templates on [k80 p100 v100]
}
