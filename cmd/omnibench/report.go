package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/summary"
)

type reportOptions struct {
	format      string
	wide        bool
	percentiles []float64
	thresholds  []string
	goodput     string
	html        string
}

// reportDocument is the JSON form of a re-rendered run: the summary part of
// run's --summary document (no server section: the snapshots are not in the
// results file).
type reportDocument struct {
	SchemaVersion int                `json:"schema_version"`
	Run           results.Header     `json:"run"`
	Summary       *summary.Summary   `json:"summary"`
	Bench         map[string]float64 `json:"bench"`
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RUN.jsonl",
		Short: "Re-render a saved run (the --out file of run) in any format",
		Long: `report reads the results file of 'omnibench run --out' and prints the same
report as the run did (without the server-vs-client section, whose snapshots
live in the --summary file), optionally with other percentiles, thresholds or
goodput SLOs. An interrupted run's file reads like any other.`,
		Example: `  omnibench report run.jsonl
  omnibench report run.jsonl --percentiles 50,99,99.9 --threshold 50ms,100ms --format markdown
  omnibench report run.jsonl --goodput ttfp:500ms,e2e:10s --html report.html`,
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
			s := summary.Compute(recs, summary.Options{Percentiles: o.percentiles, Thresholds: thresholds, Goodput: goodput})
			s.Mode = h.Mode
			rep := report.RunReport{Header: h, Summary: s, Workload: report.WorkloadOf(recs)}
			if o.html != "" {
				page := report.HTMLReport{Title: "omnibench run: " + h.Scenario, Header: &h, Workload: rep.Workload, Sections: report.RunSections(rep, recs)}
				if err := report.WriteHTMLFile(o.html, page); err != nil {
					return fmt.Errorf("--html: %w", err)
				}
			}
			if o.format == report.FormatJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(reportDocument{SchemaVersion: results.SchemaVersion, Run: h, Summary: s, Bench: s.Bench()})
			}
			return renderTables(cmd.OutOrStdout(), o.format, o.wide, report.RunTables(rep)...)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "table", "output format: table, markdown, json or csv")
	addWideFlag(f, &o.wide)
	f.Float64SliceVar(&o.percentiles, "percentiles", nil, "percentiles to report, a comma-separated `LIST` (default 50,90,95,99)")
	f.StringSliceVar(&o.thresholds, "threshold", []string{"0.1"}, "continuity thresholds, seconds or durations (repeatable)")
	f.StringVar(&o.goodput, "goodput", "", "per-request SLOs for goodput, e.g. ttfp:500ms,e2e:10s")
	f.StringVar(&o.html, "html", "", "also write the self-contained HTML report to this file")
	return cmd
}

// notResultsFile explains a results file that did not read: when the file
// is something else omnibench writes (a run summary, a sweep document, a
// scrape), it says what it got and what it wants. Other JSON is named by its
// keys only when anyJSON (replay also reads trace files, whose own error is
// the better one).
func notResultsFile(path string, err error, anyJSON bool) error {
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
