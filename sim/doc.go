// Package sim is a trace-driven, round-based cluster simulator for choosing
// a policy before deploying it: workload generators, trace readers, and
// metrics such as job completion time, makespan and finish-time fairness,
// following the simulators of Gavel (OSDI'20) and Shockwave (NSDI'23).
package sim
