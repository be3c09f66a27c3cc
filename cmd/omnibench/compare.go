package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// compareOptions holds the flags of `omnibench compare`.
type compareOptions struct {
	alpha       float64
	format      string
	test        string
	percentiles []float64
	gates       []string
	html        string
	// allowSaturated lets the gates judge a run of a saturated load
	// generator; includeRamp compares ramp-phase requests too.
	allowSaturated, includeRamp bool
}

func newCompareCmd() *cobra.Command {
	o := compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare A.jsonl B.jsonl",
		Short: "Compare two saved runs (B against A) with significance tests and regression gates",
		Long: `compare reads two results files written by "omnibench run", keeps the
successful non-warm-up requests, and prints one row per metric (ttfp, ttft,
e2e, rtf_last_chunk, rtf_e2e, underrun, audio_duration; the unit is in the
metric's label): each run's sample count and mean, the change of B relative
to A (100*(mean B - mean A)/mean A), the Welch t-test and Mann-Whitney U
p-values, the Holm-adjusted p-value of the deciding test (--test) over all
metrics tested, and the minimum detectable effect; then the percentiles of
both runs. The change shows "~" when it is not significant at --alpha after
the Holm correction. The notes under the table say how each Mann-Whitney p
was computed (exact; exact with ties; or, beyond 50 values, or 25 with
ties, the normal approximation with tie and continuity corrections), both
runs' failed requests with Fisher's exact test, and the warnings (too few
samples, serially correlated samples, runs with different set-ups).
When both results files have scrape lines (run --scrape), a last table
compares where the server spent each run's time, replica by replica: the
mean e2e of both and the differences of the queue, prefill, decode and
e2e means ("breakdown" in JSON).
--format csv writes one tidy row per metric (plain numbers, notes on
stderr); --format json has every statistic.

--fail-on-regression METRIC:PCT fails when METRIC got significantly larger
(worse) by more than PCT percent; a gated metric that cannot be tested fails
too. With any --fail-on-regression, B must also not fail more often than A
beyond chance: Fisher's exact test (two-sided) of the failed and successful
measured requests of both runs at --alpha (no tolerance; the failure_rate
gate). Every output states both runs' failures and the Fisher p.

A run measured by a saturated load generator (the results file's client
line, written at the end of every run) is marked in the notes; with
--fail-on-regression its verdict is refused (exit 1, NO VERDICT and the
reason, the gates not judged) unless --allow-saturated, since its latencies
include the client's own delay.
Requests of a load ramp (--ramp-up, --stages, a rate range) are left out,
as in the run's figures, unless --include-ramp.

A text or Markdown report ends with its verdict line: PASS, FAIL (a gate
failed) or NO VERDICT (refused, with the reason).

Exit status: 0 no regression, 3 a regression gate failed (also when every
measured request of B failed), 1 a run whose measured requests all failed
(without gates) or a refused verdict (a saturated run under gates), 2
unusable input (bad flags, unreadable results files, files without
measured requests).`,
		Example: `  omnibench compare base.jsonl candidate.jsonl
  omnibench compare base.jsonl candidate.jsonl --fail-on-regression ttfp:5 --fail-on-regression e2e:10
  omnibench compare base.jsonl candidate.jsonl --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(2)(cmd, args); err != nil {
				return withExitCode(2, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, o, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.alpha, "alpha", 0.05, "significance level, after Holm correction across the metrics")
	f.StringVar(&o.format, "format", report.FormatTable, "output format: table, markdown, json or csv")
	f.StringVar(&o.test, "test", stats.TestWelch.String(), "test that decides significance: welch (means) or utest (Mann-Whitney)")
	f.Float64SliceVar(&o.percentiles, "percentiles", stats.DefaultPercentiles(), "percentiles shown for each run")
	f.StringVar(&o.html, "html", "", "also write a self-contained HTML report (tables and both runs' distributions) to this file")
	f.StringArrayVar(&o.gates, "fail-on-regression", nil, "METRIC:PCT: exit 3 when METRIC got significantly worse by more than PCT % (repeatable; metrics: "+strings.Join(compare.MetricNames(), ", ")+")")
	f.BoolVar(&o.allowSaturated, "allow-saturated", false, "let --fail-on-regression judge a run measured by a saturated load generator (default: refuse, exit 1)")
	f.BoolVar(&o.includeRamp, "include-ramp", false, "compare the requests of a load ramp (--ramp-up, --stages, a rate range) too")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(compare.Formats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("test", cobra.FixedCompletions([]string{"welch", "utest"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runCompare(cmd *cobra.Command, o compareOptions, pathA, pathB string) error {
	if err := report.CheckFormat(o.format, compare.Formats()...); err != nil {
		return withExitCode(2, err)
	}
	test, err := stats.ParseTest(o.test)
	if err != nil {
		return withExitCode(2, fmt.Errorf("--test: %w", err))
	}
	if err := summary.CheckPercentiles("--percentiles", o.percentiles); err != nil {
		return withExitCode(2, err)
	}
	opts := compare.Options{Alpha: o.alpha, Test: test, Percentiles: o.percentiles, AllowSaturated: o.allowSaturated, IncludeRamp: o.includeRamp}
	if opts.Percentiles == nil {
		opts.Percentiles = []float64{} // --percentiles= given empty: no percentile table
	}
	for _, g := range o.gates {
		gate, err := compare.ParseGate(g)
		if err != nil {
			return withExitCode(2, fmt.Errorf("--fail-on-regression: %w", err))
		}
		opts.Gates = append(opts.Gates, gate)
	}
	a, err := compare.Load(pathA)
	if err != nil {
		return withExitCode(2, err)
	}
	b, err := compare.Load(pathB)
	if err != nil {
		return withExitCode(2, err)
	}
	res, err := compare.Compare(a, b, opts)
	if errors.Is(err, compare.ErrNothingMeasured) {
		return failure(err)
	}
	if err != nil {
		return unusable(err)
	}
	status := compareStatus(res)
	verdict := verdictOf(status, comparePassText(res))
	if err := res.Write(cmd.OutOrStdout(), o.format); err != nil {
		return err
	}
	if o.html != "" {
		page := res.HTML(a, b)
		page.Verdict = &verdict
		if err := report.WriteHTMLFile(o.html, page); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if o.format == report.FormatCSV {
		// CSV has no room for notes; warnings and gate verdicts are logs then.
		for _, n := range res.Notes() {
			fmt.Fprintln(cmd.ErrOrStderr(), n)
		}
	}
	return endReport(cmd.OutOrStdout(), o.format, false, status, verdict.Reason)
}

// compareStatus is the outcome of a comparison: a failed gate is a missed
// gate (exit 3), a refused gate verdict (a saturated load generator) is a
// refusal (exit 1), as in ab.
func compareStatus(res *compare.Result) error {
	err := res.Err()
	var re *compare.RegressionError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return missed(err)
	case errors.Is(err, compare.ErrSaturated):
		return refused(err)
	}
	return failure(err)
}

// comparePassText says what a comparison that passed found.
func comparePassText(res *compare.Result) string {
	if len(res.Gates) == 0 {
		return fmt.Sprintf("B compared with A over %d metrics; no regression gates given", res.Tested())
	}
	return fmt.Sprintf("no regression: %d gates held", len(res.Gates))
}
