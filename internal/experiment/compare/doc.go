// Package compare compares two saved omnibench runs, arm A (the baseline)
// and arm B (the candidate), in the manner of benchstat: one row per metric
// with each arm's mean and median, the relative change of B against A, the
// p-values of Welch's t-test and the Mann–Whitney U test, and a
// Holm–Bonferroni adjusted p-value across the metrics tested; and it checks
// regression gates ("ttfp got significantly worse by more than 5 %").
//
// Only successful, non-warm-up requests are compared. Within an arm values
// are taken in request order (Seq), so the lag-1 autocorrelation that stats
// uses to warn about serially correlated samples sees the run as it happened.
//
// Significance is decided once per metric by the chosen test (Welch by
// default) and then corrected with Holm over every metric tested, because a
// comparison reports seven metrics at once: a row is significant when its
// Holm-adjusted p is below alpha, which keeps the chance of any false alarm
// in the whole table at alpha. Regression gates use the same rule.
//
// The command `omnibench compare` is wiring around this package.
package compare
