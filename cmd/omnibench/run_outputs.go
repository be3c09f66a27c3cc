package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/junit"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/report"
)

// runOutputs are the flags only `run` has: SLO gates and the extra files a
// single run can leave behind.
type runOutputs struct {
	slos      []string
	junit     string
	html      string
	saveAudio string
}

func (r *runOutputs) addFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&r.slos, "slo", nil, "service-level objective, e.g. 'audio_ttfp_p95<500ms' (repeatable; exit 3 when one is missed)")
	f.StringVar(&r.junit, "junit", "", "write the SLO verdicts as JUnit XML to this file")
	f.StringVar(&r.html, "html", "", "write a self-contained HTML report with charts to this file")
	f.StringVar(&r.saveAudio, "save-audio", "", "write each response's audio as DIR/<request id>.wav")
}

// outputFlag is one file an output flag names.
type outputFlag struct{ flag, path string }

// checkOutputPaths refuses two output flags that name one file (`--out
// x.json --summary x.json` would have the summary overwrite the results),
// before anything runs. Paths are compared cleaned and absolute, and as
// files when they exist (a symlink or hard link to the same file).
func checkOutputPaths(outs ...outputFlag) error {
	type seen struct {
		outputFlag
		abs  string
		info os.FileInfo
	}
	var prev []seen
	for _, o := range outs {
		if o.path == "" || o.path == "-" {
			continue
		}
		abs, err := filepath.Abs(o.path)
		if err != nil {
			return withExitCode(2, fmt.Errorf("%s %s: %w", o.flag, o.path, err))
		}
		info, _ := os.Stat(abs)
		for _, p := range prev {
			if p.abs == abs || (info != nil && p.info != nil && os.SameFile(info, p.info)) {
				return withExitCode(2, fmt.Errorf("%s %s and %s %s name the same file: one would overwrite the other", p.flag, p.path, o.flag, o.path))
			}
		}
		prev = append(prev, seen{o, abs, info})
	}
	return nil
}

// outputFlags are the files a run writes.
func (o *runOptions) outputFlags() []outputFlag {
	return []outputFlag{
		{"--out", o.out}, {"--summary", o.summaryOut}, {"--html", o.outputs.html},
		{"--junit", o.outputs.junit}, {"--metrics-out", o.metrics.out},
	}
}

// finishOutputs writes the JUnit and HTML files. The SLO verdicts are part
// of the report itself (rep.SLOs), in every format. A file that cannot be
// written does not stop the other: the errors are joined.
func (r *runOutputs) finishOutputs(stderr io.Writer, outcome *runner.Outcome, rep report.RunReport, verdicts []slo.Result) error {
	var errs []error
	if len(verdicts) > 0 {
		if r.junit != "" {
			if err := junit.WriteFile(r.junit, slo.JUnitSuite(verdicts)); err != nil {
				errs = append(errs, fmt.Errorf("--junit: %w", err))
			}
		}
	}
	if r.html != "" {
		h := outcome.Header
		v := runVerdict(outcome.Summary, verdicts)
		page := report.HTMLReport{Title: "omnibench run: " + h.Scenario, Header: &h, Workload: rep.Workload, Verdict: &v,
			Sections: report.RunSectionsSet(rep, outcome.Set, outcome.Worst)}
		if err := report.WriteHTMLFile(r.html, page); err != nil {
			errs = append(errs, fmt.Errorf("--html: %w", err))
		}
	}
	return errors.Join(errs...)
}
