// Package placement decides where jobs run: multi-dimensional bin packing of
// GPUs, CPU and memory, consolidation onto few servers, and the round-based
// mechanism of Gavel (Narayanan et al., OSDI'20) that turns time shares into
// the next round's concrete server assignment.
package placement
