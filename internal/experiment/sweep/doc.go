// Package sweep runs one workload at a series of load levels and searches
// for the highest level at which every service-level objective still holds.
//
// A level is a number on one axis: the concurrency of a closed loop (whole
// streams) or the arrival rate of an open loop (requests per second). The
// package knows nothing of HTTP or flags: the caller hands it a RunFunc that
// performs one benchmark run at a level (the CLI wraps runner.Run), and the
// package decides which levels to run, when to stop, and how to report.
//
// # Level lists
//
// ParseLevels reads comma-separated items, each a number or a range:
//
//	1,2,4,8,16       the levels as written
//	1:20             1, 2, ..., 20 (step 1)
//	1:20:5           1, 6, 11, 16 (arithmetic step; the end is included when hit)
//	1:64:x2          1, 2, 4, ..., 64 (geometric: "x" or "*" and a factor > 1)
//	0.5:2:0.5        0.5, 1, 1.5, 2 (rates may be fractional)
//
// Items combine ("1,2,4:16:4"); the result is sorted and duplicates dropped.
// Concurrency levels must be whole numbers of at least 1 (a geometric range
// rounds each level to the nearest whole number); rates must be positive.
// A list holds at most MaxLevels levels, each at most Axis.Max
// (MaxConcurrency streams, MaxRate requests per second).
//
// # Sweeps and early stops
//
// Sweep runs the levels in increasing order, evaluates the SLOs at each, and
// stops early when a level is clearly saturated (Saturation): its error rate
// is above a limit, or its median TTFP grew by more than a factor over the
// previous level while request throughput rose by less than 10% (latency
// growing without the server doing more work, i.e. a queue that only grows).
// The result says where and why it stopped and which levels were not run.
//
// # Capacity search
//
// Capacity finds the largest level at which every SLO holds. It brackets by
// doubling from a start level until a level misses an SLO (or a maximum is
// reached), then bisects between the highest passing and the lowest failing
// level until they are no more than the resolution apart, running at most a
// given number of runs. The answer is the highest passing level; the true
// capacity lies between it and the lowest failing level. Bisection assumes
// that a level passes whenever a higher one does; a noisy run can break that,
// and the search path printed with the answer shows every verdict it used.
package sweep
