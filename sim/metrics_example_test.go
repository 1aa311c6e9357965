package sim_test

import (
	"fmt"
	"time"

	"github.com/dlsched/dlsched/sim"
)

// Four jobs on two GPUs, one of them still running when the simulation
// stopped. Shockwave's finish-time fairness divides each JCT by the job's
// exclusive run time scaled by max(1, N/G) = 2.
func ExampleSummarize() {
	s := time.Second
	jobs := []sim.JobRecord{
		{ID: "a", Arrival: 0, FirstRun: 0, Ran: true, Finish: 200 * s, Finished: true, Exclusive: 100 * s, ActiveJobs: 2},
		{ID: "b", Arrival: 0, FirstRun: 0, Ran: true, Finish: 300 * s, Finished: true, Exclusive: 100 * s, ActiveJobs: 3},
		{ID: "c", Arrival: 100 * s, FirstRun: 200 * s, Ran: true, Finish: 500 * s, Finished: true, Exclusive: 150 * s, ActiveJobs: 2},
		{ID: "d", Arrival: 200 * s, FirstRun: 300 * s, Ran: true, Exclusive: 400 * s, ActiveJobs: 2},
	}
	rounds := []sim.RoundRecord{
		{Start: 0, Length: 200 * s, Active: 2, Running: 2, BusyGPUs: 2, GPUs: 2},
		{Start: 200 * s, Length: 200 * s, Active: 3, Running: 2, BusyGPUs: 2, GPUs: 2},
		{Start: 400 * s, Length: 200 * s, Active: 2, Running: 1, BusyGPUs: 1, GPUs: 2},
	}
	sum, err := sim.Summarize(jobs, rounds, sim.Options{GPUs: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("measured %d: %d finished, %d unfinished\n", sum.Jobs, sum.Finished, sum.Unfinished)
	fmt.Printf("JCT avg %.0f s, median %.0f s, p99 %.0f s\n", sum.AvgJCT, sum.MedianJCT, sum.P99JCT)
	fmt.Printf("makespan ≥ %.0f s (%d unfinished)\n", sum.Makespan, sum.TraceUnfinished)
	fmt.Printf("worst ρ %.2f, unfair %.2f (ρ > %.2f)\n", sum.WorstFTF, sum.UnfairFraction, sum.UnfairThreshold)
	fmt.Printf("utilization %.2f, time to first run %.0f s\n", sum.Utilization, sum.MeanTimeToFirstRun)
	// Output:
	// measured 4: 3 finished, 1 unfinished
	// JCT avg 300 s, median 300 s, p99 400 s
	// makespan ≥ 500 s (1 unfinished)
	// worst ρ 1.50, unfair 0.67 (ρ > 1.05)
	// utilization 0.83, time to first run 50 s
}

// PerJob gives each measured job's finish-time fairness, static and under
// contention, for plots. Here the window is Gavel-style: positions [1, 3) of
// the trace in arrival order.
func ExamplePerJob() {
	s := time.Second
	jobs := []sim.JobRecord{
		{ID: "a", Arrival: 0, FirstRun: 0, Ran: true, Finish: 200 * s, Finished: true, Exclusive: 100 * s, ActiveJobs: 2},
		{ID: "b", Arrival: 0, FirstRun: 0, Ran: true, Finish: 300 * s, Finished: true, Exclusive: 100 * s, ActiveJobs: 3},
		{ID: "c", Arrival: 100 * s, FirstRun: 200 * s, Ran: true, Finish: 500 * s, Finished: true, Exclusive: 150 * s, ActiveJobs: 2},
		{ID: "d", Arrival: 200 * s, FirstRun: 300 * s, Ran: true, Exclusive: 400 * s, ActiveJobs: 2},
	}
	per, err := sim.PerJob(jobs, sim.Options{GPUs: 2, Window: sim.Window{Start: 1, End: 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range per {
		fmt.Printf("%s: JCT %.0f s, ρ %.2f, ρ contention %.2f\n", m.ID, m.JCT, m.FTF, m.FTFContention)
	}
	// Output:
	// b: JCT 300 s, ρ 1.50, ρ contention 2.00
	// c: JCT 400 s, ρ 1.33, ρ contention 2.67
}
