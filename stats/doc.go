// Package stats holds the statistics omnibench reports and compares runs
// with: sample summaries (numpy-style percentiles; SummarizeStream for a
// series read in passes rather than held, with the same percentiles to the
// bit), Welch's t-test,
// the Mann–Whitney U test, Fisher's exact test of two failure rates, effect
// sizes, the minimum detectable effect, lag-1 autocorrelation with an
// effective sample size, and Holm–Bonferroni correction. Student's t
// distribution is its own (tSurvival, tQuantile): gonum's loses digits at
// large degrees of freedom, and Welch's p, CI and MDE agree with scipy to
// 1e-12.
//
// Results carry their caveats, in the manner of golang.org/x/perf/benchmath:
// a Summary or Comparison holds Warnings ("too few samples", "all samples
// equal", "effective sample size ...") that reports print beside the numbers,
// so a statistic never silently means less than it says.
//
// Conventions used throughout:
//   - Differences are "B relative to A": DeltaPct = 100*(mean(B)-mean(A))/|mean(A)|,
//     and effect sizes are positive when B is larger. Welch's t and its
//     confidence interval follow scipy's ttest_ind and describe mean(A)-mean(B).
//   - Standard deviations are sample ones (divisor n-1).
//   - Percentiles interpolate linearly between order statistics (Hyndman–Fan
//     type 7, numpy's default), so they match the vLLM-Omni benchmark client.
package stats
