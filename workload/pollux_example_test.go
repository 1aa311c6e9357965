package workload_test

import (
	"fmt"
	"github.com/dlsched/dlsched/workload"
	"strings"
)

// ExampleReadPolluxWorkload reads a small Pollux workload against the
// built-in synthetic applications, once elastic (for Pollux) and once with
// the tuned configurations (for the fixed baselines).
func ExampleReadPolluxWorkload() {
	const csv = `name,time,application,num_replicas,batch_size
cifar10-0,107,cifar10,6,2048
ncf-1,135,ncf,1,32768
bert-2,300,bert,2,48
`
	apps := workload.SyntheticApps()
	for _, tuned := range []bool{false, true} {
		jobs, _, err := workload.ReadPolluxWorkload(strings.NewReader(csv), apps, workload.WorkloadOptions{Tuned: tuned})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("tuned:", tuned)
		for _, j := range jobs {
			e := j.Elastic
			fmt.Printf("%-9s at %4.0fs: %6.0f steps, %5.2f steps/s on %s, GPUs %d (%d..%d), batch %d..%d\n",
				j.ID, j.Arrival.Seconds(), j.StepsTotal, j.Throughput[workload.PolluxGPU], workload.PolluxGPU,
				j.GPUs, e.MinGPUs, e.MaxGPUs, e.BatchSize, e.MaxBatchSize)
		}
	}
	_, _, err := workload.ReadPolluxWorkload(strings.NewReader("name,time,application,num_replicas,batch_size\nx,1,gpt,1,8\n"),
		apps, workload.WorkloadOptions{Name: "w.csv"})
	fmt.Println(err)
	// Output:
	// tuned: false
	// cifar10-0 at  107s:  39100 steps,  9.24 steps/s on t4, GPUs 0 (0..0), batch 128..4096
	// ncf-1     at  135s: 194180 steps, 134.95 steps/s on t4, GPUs 0 (0..1), batch 32768..32768
	// bert-2    at  300s:  14774 steps,  1.09 steps/s on t4, GPUs 0 (0..0), batch 12..384
	// tuned: true
	// cifar10-0 at  107s:  39100 steps,  9.24 steps/s on t4, GPUs 6 (0..0), batch 2048..2048
	// ncf-1     at  135s: 194180 steps, 134.95 steps/s on t4, GPUs 1 (0..0), batch 32768..32768
	// bert-2    at  300s:  14774 steps,  1.09 steps/s on t4, GPUs 2 (0..0), batch 48..48
	// w.csv:2: job "x": application: unknown application "gpt"
}
