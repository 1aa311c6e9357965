// Package pollux schedules elastic training jobs as Pollux (Qiao et al.,
// OSDI'21) does: it co-adapts every job's GPU count and batch size to
// maximize a fair mean of the jobs' goodput speedups, by genetic search over
// the jobs × nodes allocation matrix.
//
// Importing the package registers "pollux" (Pollux), "pollux.optimus"
// (Optimus, a greedy baseline that adds GPUs one at a time to the job that
// gains most, at a fixed batch size) and "pollux.fixed" (every job at its
// own fixed GPU count and batch size, placed in priority order).
package pollux
