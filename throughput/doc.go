// Package throughput models how fast a training job runs: heterogeneous
// throughput tables (job × accelerator type, alone and co-located), and the
// iteration-time model of Pollux (Qiao et al., OSDI'21),
// T_iter = s·T_accum + (T_accum^γ + T_net^γ)^(1/γ), with its fitting.
package throughput
