package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/junit"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
)

type reportOptions struct {
	format      string
	wide        bool
	percentiles []float64
	thresholds  []string
	goodput     string
	html        string
	includeRamp bool
	slos        []string
	junit       string
}

// reportDocument is the JSON form of a re-rendered run: the summary part of
// run's --summary document (no server section: the snapshots are not in the
// results file).
type reportDocument struct {
	SchemaVersion int                `json:"schema_version"`
	Run           results.Header     `json:"run"`
	Summary       *summary.Summary   `json:"summary"`
	Bench         map[string]float64 `json:"bench"`
	SLOs          []slo.Result       `json:"slos,omitempty"` // the --slo verdicts, as run's summary has them
	// Breakdown and ServerTimeline are rebuilt from the file's scrape
	// lines, as run's summary has them; absent without such lines.
	Breakdown      *breakdown.Breakdown `json:"breakdown,omitempty"`
	ServerTimeline []breakdown.Point    `json:"server_timeline,omitempty"`
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RUN.jsonl",
		Short: "Re-render a saved run (the --out file of run) in any format",
		Long: `report reads the results file of 'omnibench run --out' and prints the same
report as the run did (without the server-vs-client section, whose snapshots
live in the --summary file), optionally with other percentiles, thresholds or
goodput SLOs. An interrupted run's file reads like any other.

The SLOs the run judged (its scenario's, --slo and --max-error-rate) are
recorded in the file and judged again, so the report shows, ends with and
exits what the run did: 0 PASS, 1 nothing measured, 3 an SLO missed.
--slo EXPR (repeatable) judges these objectives instead, exactly as
'run --slo' does: the verdicts are part of the report in every format,
--junit FILE writes them as JUnit XML, and a missed SLO exits 3.`,
		Example: `  omnibench report run.jsonl
  omnibench report run.jsonl --percentiles 50,99,99.9 --threshold 50ms,100ms --format markdown
  omnibench report run.jsonl --goodput ttfp:500ms,e2e:10s --html report.html
  omnibench report merged.jsonl --slo 'audio_ttfp_p95<500ms' --junit slo.xml`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(o.format, report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV); err != nil {
				return withExitCode(2, err)
			}
			thresholds, err := parseThresholds(o.thresholds)
			if err != nil {
				return withExitCode(2, err)
			}
			if err := summary.CheckPercentiles("--percentiles", o.percentiles); err != nil {
				return withExitCode(2, err)
			}
			var goodput []summary.Goodput
			if o.goodput != "" {
				if goodput, err = summary.ParseGoodput(o.goodput); err != nil {
					return withExitCode(2, fmt.Errorf("--goodput: %w", err))
				}
			}
			h, recs, err := results.ReadFile(args[0])
			if err != nil {
				return withExitCode(2, notResultsFile(args[0], err, true))
			}
			slos, err := reportSLOs(o.slos, h)
			if err != nil {
				return withExitCode(2, err)
			}
			if o.junit != "" && len(slos) == 0 {
				return withExitCode(2, fmt.Errorf("--junit needs at least one --slo (the run recorded none)"))
			}
			if err := checkOutputPaths(outputFlag{"--html", o.html}, outputFlag{"--junit", o.junit}); err != nil {
				return err
			}
			s := summary.Compute(recs, summary.Options{Percentiles: o.percentiles, Thresholds: thresholds, Goodput: goodput, IncludeRamp: o.includeRamp})
			s.Mode = h.Mode
			rep := report.RunReport{Header: h, Summary: s, Workload: report.WorkloadOf(recs)}
			set := summary.SetOf(recs)
			bd, timeline := runner.BreakdownOfScrapes(h.Scrapes, set)
			if bd != nil {
				rep.Breakdown = runner.BreakdownView(bd, timeline, runner.MeasuredFrom(h.Scrapes))
			}
			if len(slos) > 0 {
				rep.SLOs = slo.EvaluateServer(slos, s, set, runner.ServerFigures(bd))
			}
			if err := writeReport(cmd, o, h, recs, rep, reportDocument{Breakdown: bd, ServerTimeline: timeline}); err != nil {
				return err
			}
			// The same verdict, line and status as the run that wrote the
			// file: a run that measured nothing is a failure, whatever its
			// SLOs say.
			return endReport(cmd.OutOrStdout(), o.format, o.wide, runStatus(cmd.ErrOrStderr(), nil, nil, s, rep.SLOs), measuredText(s, rep.SLOs))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "table", "output format: table, markdown, json or csv")
	addWideFlag(f, &o.wide)
	f.Float64SliceVar(&o.percentiles, "percentiles", nil, "percentiles to report, a comma-separated `LIST` (default 50,90,95,99)")
	f.StringSliceVar(&o.thresholds, "threshold", []string{"0.1"}, "continuity thresholds, seconds or durations (repeatable)")
	f.StringVar(&o.goodput, "goodput", "", "per-request SLOs for goodput, e.g. ttfp:500ms,e2e:10s")
	f.StringVar(&o.html, "html", "", "also write the self-contained HTML report to this file")
	f.BoolVar(&o.includeRamp, "include-ramp", false, "count the requests of a load ramp (--ramp-up, --stages, a rate range) in the figures")
	f.StringArrayVar(&o.slos, "slo", nil, "service-level objective, e.g. 'audio_ttfp_p95<500ms' (repeatable; exit 3 when one is missed)")
	f.StringVar(&o.junit, "junit", "", "write the SLO verdicts as JUnit XML to this file")
	return cmd
}

// writeReport writes the report in o's format, its HTML and JUnit files.
// doc carries the parts of the JSON document the report's tables do not.
func writeReport(cmd *cobra.Command, o *reportOptions, h results.Header, recs []results.Record, rep report.RunReport, doc reportDocument) error {
	s := rep.Summary
	if o.junit != "" {
		if err := junit.WriteFile(o.junit, slo.JUnitSuite(rep.SLOs)); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if o.html != "" {
		v := runVerdict(s, rep.SLOs)
		page := report.HTMLReport{Title: "omnibench run: " + h.Scenario, Header: &h, Workload: rep.Workload, Verdict: &v, Sections: report.RunSections(rep, recs)}
		if err := report.WriteHTMLFile(o.html, page); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if o.format == report.FormatJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		doc.SchemaVersion, doc.Run, doc.Summary, doc.Bench, doc.SLOs = results.SchemaVersion, h, s, s.Bench(), rep.SLOs
		return enc.Encode(doc)
	}
	return renderTables(cmd.OutOrStdout(), o.format, o.wide, report.RunTables(rep)...)
}

// reportSLOs are the objectives a re-render judges: those given with
// --slo, else those the run recorded in its header, so that a re-render
// shows and exits what the run did.
func reportSLOs(given []string, h results.Header) ([]slo.SLO, error) {
	if len(given) > 0 {
		return slo.ParseAll(given)
	}
	slos, err := slo.ParseAll(h.SLOs)
	if err != nil {
		return nil, fmt.Errorf("the SLOs the run recorded: %w", err)
	}
	return slos, nil
}

// notResultsFile explains a results file that did not read: when the file
// is something else omnibench writes (a run summary, a sweep document, a
// scrape), it says what it got and what it wants. Other JSON is named by its
// keys only when anyJSON (replay also reads trace files, whose own error is
// the better one).
func notResultsFile(path string, err error, anyJSON bool) error {
	if le := (*results.LineError)(nil); errors.As(err, &le) && le.Line > 1 {
		return err // a results file with a bad line: the line says what is wrong
	}
	f, oerr := os.Open(path)
	if oerr != nil {
		return err
	}
	defer f.Close()
	what := results.Identify(f)
	if what == "" || (!anyJSON && strings.HasPrefix(what, "a JSON document")) {
		return err
	}
	return fmt.Errorf("%s is %s, not a results file: give the JSON lines file that 'omnibench run --out FILE' writes "+
		"(a header line, then one line per request)", path, what)
}
