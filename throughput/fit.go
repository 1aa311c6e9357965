package throughput

import "errors"

// Sample is one measurement of a job's step times on a placement.
type Sample struct {
	// Nodes and Replicas describe the placement: Replicas GPUs over Nodes
	// nodes.
	Nodes    int `json:"nodes"`
	Replicas int `json:"replicas"`
	// LocalBatch is the per-GPU batch of one micro-step, m.
	LocalBatch float64 `json:"local_batch"`
	// AccumTime is the measured time of a micro-step without
	// synchronisation, and OptimTime that of a synchronising step, in
	// seconds.
	AccumTime float64 `json:"accum_time"`
	OptimTime float64 `json:"optim_time"`
}

// Fit returns the parameters that best explain samples.
func Fit(samples []Sample) (Params, error) {
	return Params{}, errors.New("throughput: Fit: not implemented")
}
