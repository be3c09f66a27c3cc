package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
)

// verdictOf is the verdict of a command that wrote its report: err is what
// the command returns (nil, a missed SLO or gate, a refusal, a failure) and
// pass what it found when it passed. The line and the exit status come from
// the same error, so they cannot disagree.
func verdictOf(err error, pass string) report.Verdict {
	var ee *exitError
	switch {
	case err == nil:
		return report.Verdict{Outcome: report.Pass, Reason: pass}
	case errors.As(err, &ee) && ee.noVerdict:
		return report.Verdict{Outcome: report.NoVerdict, Reason: ee.reason}
	case errors.Is(err, context.Canceled):
		return report.Verdict{Outcome: report.NoVerdict, Reason: "interrupted: the figures cover what finished"}
	}
	return report.Verdict{Outcome: report.Fail, Reason: err.Error()}
}

// endReport ends a text or Markdown report on w with its verdict line (see
// verdictOf) and returns err: the line is the last thing the report says,
// after a blank line (which also ends a Markdown note it would otherwise
// continue), fitted to the tables' width (unless wide) and coloured on a
// terminal.
// JSON and CSV carry no line, as they are for programs, which read the
// exit status.
func endReport(w io.Writer, format string, wide bool, err error, pass string) error {
	opts := report.Options{Width: report.WidthFor(w, wide), Colour: report.ColourFor(w)}
	switch format {
	case report.FormatTable, "":
	case report.FormatMarkdown:
		opts.Width = -1 // for programs: never wrapped
	default:
		return err
	}
	_, werr := io.WriteString(w, "\n")
	if werr == nil {
		werr = report.WriteVerdict(w, verdictOf(err, pass), opts)
	}
	if werr != nil {
		return errors.Join(err, fmt.Errorf("writing the verdict: %w", werr))
	}
	return err
}

// sloMiss is the error of a run that missed at least one SLO: exit 3,
// naming each missed objective with what was observed.
func sloMiss(vs []slo.Result) error {
	var misses []string
	for _, v := range vs {
		if !v.Pass {
			misses = append(misses, v.SLO.Expr+": "+v.Message)
		}
	}
	switch len(misses) {
	case 0:
		return nil
	case 1:
		return missed(fmt.Errorf("SLO %s", misses[0]))
	}
	return missed(fmt.Errorf("%d of %d SLOs missed: %s", len(misses), len(vs), strings.Join(misses, "; ")))
}

// measuredText says what a run measured and which SLOs it met, for the
// verdict line of a run that passed.
func measuredText(s *summary.Summary, vs []slo.Result) string {
	text := fmt.Sprintf("%d requests measured", s.Requests.Total)
	if s.Requests.Failed > 0 {
		text += fmt.Sprintf(" (%d failed)", s.Requests.Failed)
	}
	switch len(vs) {
	case 0:
		return text + ", no SLOs given"
	case 1:
		return text + ", 1 SLO met"
	}
	return text + fmt.Sprintf(", %d SLOs met", len(vs))
}

// runVerdict is the verdict of a run's figures (nothing measured, a missed
// SLO, or a pass), for the HTML page written before the run returns.
func runVerdict(s *summary.Summary, vs []slo.Result) report.Verdict {
	return verdictOf(runStatus(io.Discard, nil, nil, s, vs), measuredText(s, vs))
}
