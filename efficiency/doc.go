// Package efficiency models what a training example is worth: the gradient
// noise scale, the statistical efficiency of a batch size, and goodput =
// throughput × efficiency with its batch-size optimizer, as in Pollux (Qiao
// et al., OSDI'21).
package efficiency
