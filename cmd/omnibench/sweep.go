package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/experiment/sweep"
	"github.com/omnibench/omnibench/internal/junit"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
)

// defaultSweepLevels are the concurrency levels of a sweep given neither
// -c nor --rate.
const defaultSweepLevels = "1,2,4,8"

// levelOptions are the flags sweep and capacity share on top of the run
// flags (minus -c and --rate, which the level flags replace).
type levelOptions struct {
	run   runOptions
	slos  []string
	junit string
	html  string
}

// sweepOptions are the flags of `omnibench sweep`.
type sweepOptions struct {
	levelOptions
	concurrency      string
	rate             string
	maxErrorRate     float64
	saturationFactor float64
	noEarlyStop      bool
	failOnSLO        bool
}

// capacityOptions are the flags of `omnibench capacity`.
type capacityOptions struct {
	levelOptions
	by         string
	start      float64
	max        float64
	resolution float64
	maxRuns    int
}

// newSweepCmd is `omnibench sweep`. runF, when not nil, replaces the
// sweep: it gets the parsed options, so a test sees what the flags set
// without running anything.
func newSweepCmd(runF func(*sweepOptions) error) *cobra.Command {
	o := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run the same scenario at a list or range of concurrencies or rates, one table row per level",
		Long: `sweep runs the scenario once per load level, in increasing order, and prints
one row per level: completed requests, errors, TTFP p50 and p95, end-to-end
p95, the share of continuously playable responses, RTF (last chunk, p50),
request and audio throughput, and the SLO verdict when --slo is given.

Levels: -c/--concurrency (closed loop, concurrent streams) or --rate (open
loop, requests per second), each a list or range:

  1,2,4,8,16      those levels
  1:20            1 to 20, step 1
  1:20:5          1, 6, 11, 16
  1:64:x2         1, 2, 4, ..., 64 (geometric)
  0.5:4:0.5       fractional rates

Without either, -c ` + defaultSweepLevels + `. Every other flag of "omnibench run" applies to
every level (-n and -d bound each level's run). Without --url one embedded
simulator serves the whole sweep.

The sweep stops early, and says so, when a level is clearly saturated: its
error rate is above --max-error-rate, or its median TTFP grew more than
--saturation-factor times over the previous level while request throughput
rose by less than 10%. --no-early-stop runs every level.

A text or Markdown report ends with its verdict line: PASS when every level
met every SLO, FAIL naming the levels that missed one.

Exit status: 0 every level met every SLO (or none was given), 1 an error,
2 unusable input, 3 some level missed an SLO (as in run: a sweep finds
where the SLOs stop holding, and the status says whether they did), 130
interrupted (the levels measured so far are reported).`,
		Example: `  omnibench sweep -c 1,2,4,8,16
  omnibench sweep --rate 1:20:2 --arrival poisson -d 30s --slo 'audio_ttfp_p95<500ms'
  omnibench sweep -c 1:64:x2 --url http://127.0.0.1:8000 --html sweep.html --format markdown`,
		Args: sweepNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(o)
			}
			return o.runSweep(cmd.Context(), cmd)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.concurrency, "concurrency", "c", "", "closed-loop levels: concurrent streams, a list or range (1,2,4,8 or 1:16:x2); default "+defaultSweepLevels)
	f.StringVar(&o.rate, "rate", "", "open-loop levels: arrivals per second, a list or range (1,2,5 or 1:20:2)")
	f.Float64Var(&o.maxErrorRate, "max-error-rate", sweep.DefaultSaturation().MaxErrorRate, "stop after a level whose error rate exceeds this fraction")
	f.Float64Var(&o.saturationFactor, "saturation-factor", sweep.DefaultSaturation().TTFPGrowth, "stop after a level whose TTFP p50 grew more than this factor over the previous level without 10% more throughput (0 = never)")
	f.BoolVar(&o.noEarlyStop, "no-early-stop", false, "run every level, even past saturation")
	// --fail-on-slo is what sweep does now; the flag stays so that the
	// scripts that pass it keep working.
	f.BoolVar(&o.failOnSLO, "fail-on-slo", false, "exit 3 when any level missed an SLO (the default now)")
	_ = f.MarkDeprecated("fail-on-slo", "a level that misses an SLO exits 3 without it")
	o.addFlags(f)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

func newCapacityCmd() *cobra.Command {
	o := &capacityOptions{}
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Find the largest concurrency or rate at which every SLO holds",
		Long: `capacity searches for the highest load level at which every SLO (the
scenario's slos and --slo) holds. It runs --start, then doubles the level until
a run misses an SLO or --max passes (bracketing), then bisects between the
highest passing and the lowest failing level until they are at most
--resolution apart, making at most --max-runs runs in all.

It prints the search path (every run: level, verdict, and the SLO that
decided it) and the answer with its margin, e.g.

  capacity: 12 concurrent streams (13 fails: continuity_ok_rate = 0.91, ...); resolution 1; 8 runs

--by concurrency searches closed-loop concurrent streams (whole numbers,
resolution 1 by default); --by rate searches open-loop arrivals per second
(resolution 0.5 by default). -n and -d bound each run. The search assumes
that a level passes whenever a higher one does; a noisy SLO near its limit
can break that, so give each run enough requests.

A text or Markdown report ends with the answer as its verdict line: PASS,
FAIL (even the start level missed an SLO) or NO VERDICT (the capacity is
unknown, and why).

Exit status: 0 a capacity was found (also a lower bound: when --max passed
or --max-runs ran out, which the answer says), 1 an error or an unknown
capacity (the search stopped at a miss that may be the saturated load
generator's, or no level ran), 2 unusable input (including no SLO at all),
3 even --start missed an SLO (no capacity), 130 interrupted.`,
		Example: `  omnibench capacity --slo 'continuity_ok_rate>=0.99' --slo 'audio_ttfp_p95<500ms' -d 20s
  omnibench capacity --by rate --start 2 --resolution 0.25 --slo 'e2e_p95<5s' --url http://127.0.0.1:8000`,
		Args: sweepNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.runCapacity(cmd.Context(), cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.by, "by", string(sweep.Concurrency), "what to search: concurrency (closed loop) or rate (open loop)")
	f.Float64Var(&o.start, "start", 1, "first level run")
	f.Float64Var(&o.max, "max", 0, "highest level run (default 1024 streams or 1000 req/s)")
	f.Float64Var(&o.resolution, "resolution", 0, "stop when the passing and failing levels are this close (default 1 stream or 0.5 req/s)")
	f.IntVar(&o.maxRuns, "max-runs", sweep.DefaultMaxRuns, "at most this many runs")
	o.addFlags(f)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// sweepNoArgs is cobra.NoArgs with the unusable-input exit status.
func sweepNoArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return withExitCode(2, err)
	}
	return nil
}

// addFlags adds the shared flags and the run flags, but the run's -c and
// --rate, which the level flags replace.
func (o *levelOptions) addFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.slos, "slo", nil, "service-level objective checked at every level, e.g. 'audio_ttfp_p95<500ms' (repeatable; checked together with the scenario's slos)")
	f.StringVar(&o.junit, "junit", "", "write the SLO verdicts as JUnit XML to this file")
	f.StringVar(&o.html, "html", "", "write a self-contained HTML report with a chart of every figure against the level")
	addWideFlag(f, &o.run.wide)
	o.run.addGroups(f, o.run.loadFlags.registerShape,
		func(f *pflag.FlagSet) {
			o.run.reportFlags.registerWith(f,
				"write each level's requests as JSON lines to this file with the level added to its name (out.jsonl -> out-c4.jsonl)",
				"write the JSON document (as --format json prints it) to this file")
		},
		func(f *pflag.FlagSet) {
			// The level tables show client figures only; scraping each
			// level would add --settle to every run for nothing shown.
			o.run.scrapeFlags.registerWith(f, runner.ScrapeOff,
				"scrape the server's /metrics before and after each level (recorded in --out files): auto, on or off")
		})
}

// levelRun is everything a command needs to run levels: the planned run,
// the SLOs, the target, and the headers of the runs made.
type levelRun struct {
	o       *levelOptions
	cmd     *cobra.Command
	base    runner.Config
	sc      *scenarios.Scenario
	slos    []slo.SLO
	axis    sweep.Axis
	sim     *simulator.Running
	headers []results.Header
}

// prepare plans the run and parses the SLOs. Its errors are unusable
// input (exit 2).
func (o *levelOptions) prepare(cmd *cobra.Command, axis sweep.Axis) (*levelRun, error) {
	f := cmd.Flags()
	if f.Changed("stages") && f.Changed("concurrency") {
		return nil, withExitCode(2, errors.New("--stages sets the workers over time: drop -c/--concurrency"))
	}
	cfg, sc, err := o.run.plan(f)
	if err != nil {
		return nil, withExitCode(2, err)
	}
	lr := &levelRun{o: o, cmd: cmd, base: cfg, sc: sc, axis: axis}
	// As in run: the scenario's SLOs and those of --slo are checked together.
	if lr.slos, err = sc.ParseSLOs(o.slos); err != nil {
		return nil, withExitCode(2, err)
	}
	if err := checkOutputPaths(outputFlag{"--junit", o.junit}, outputFlag{"--html", o.html},
		outputFlag{"--summary", o.run.summaryOut}, outputFlag{"--out", o.run.out}); err != nil {
		return nil, err
	}
	// Output files are written after the last level: a missing directory
	// is better refused now than after an hour of runs.
	for _, out := range []struct{ flag, path string }{
		{"--junit", o.junit}, {"--html", o.html}, {"--summary", o.run.summaryOut}, {"--out", o.run.out},
	} {
		if out.path == "" {
			continue
		}
		if _, err := os.Stat(filepath.Dir(out.path)); err != nil {
			return nil, withExitCode(2, fmt.Errorf("%s %s: %w", out.flag, out.path, err))
		}
	}
	return lr, nil
}

// start starts the embedded simulator once for all levels when no --url
// was given, so levels do not restart the server between runs.
func (lr *levelRun) start(ctx context.Context) error {
	lr.base.Log = lr.cmd.ErrOrStderr()
	if isTerminal(lr.cmd.ErrOrStderr()) {
		lr.base.Progress = lr.cmd.ErrOrStderr()
	}
	if lr.base.Target != "" {
		return nil
	}
	sim, err := simulator.StartEmbedded(ctx, lr.base.Simulator)
	if err != nil {
		return err
	}
	lr.sim = sim
	lr.base.Target, lr.base.ServerInProcess = sim.URL, true
	fmt.Fprintf(lr.cmd.ErrOrStderr(), "omnibench: no --url given: started the embedded simulator at %s\n", sim.URL)
	return nil
}

func (lr *levelRun) close() {
	if lr.sim != nil {
		_ = lr.sim.Close()
	}
}

// levelLoad is the run's load at one level.
func levelLoad(lc load.Config, axis sweep.Axis, level float64) load.Config {
	if axis == sweep.Rate {
		lc.Rate = level
		if lc.Arrival == "" {
			lc.Arrival = load.Poisson
		}
		return lc
	}
	lc.Concurrency = int(level)
	lc.Rate = 0
	return lc
}

// levelPath inserts the level into a file name: out.jsonl -> out-c4.jsonl,
// out-rate2.5.jsonl.
func levelPath(path string, axis sweep.Axis, level float64) string {
	tag := "c" + axis.Format(level)
	if axis == sweep.Rate {
		tag = "rate" + axis.Format(level)
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + tag + ext
}

// run is the sweep.RunFunc: one runner.Run at level.
func (lr *levelRun) run(ctx context.Context, level float64) (sweep.Measurement, error) {
	cfg := lr.base
	cfg.Load = levelLoad(cfg.Load, lr.axis, level)
	if err := cfg.Load.Validate(); err != nil {
		return sweep.Measurement{}, err
	}
	var outFile *os.File
	if lr.o.run.out != "" {
		path := levelPath(lr.o.run.out, lr.axis, level)
		f, err := os.Create(path)
		if err != nil {
			return sweep.Measurement{}, fmt.Errorf("--out: %w", err)
		}
		defer f.Close()
		outFile, cfg.Out = f, f
	}
	outcome, err := runner.Run(ctx, cfg)
	if outcome == nil {
		return sweep.Measurement{}, err
	}
	if outFile != nil {
		if serr := outFile.Sync(); serr != nil && err == nil {
			err = fmt.Errorf("--out %s: %w", outFile.Name(), serr)
		}
	}
	if lr.sim != nil {
		outcome.Header.Simulator = true
	}
	lr.headers = append(lr.headers, outcome.Header)
	m := sweep.Measurement{Summary: outcome.Summary, Set: outcome.Set}
	if outcome.Breakdown != nil {
		m.Attribution = &outcome.Breakdown.Attribution
	}
	m.SetHealth(outcome.Health)
	return m, err
}

// write prints the report and writes the --summary, --junit and --html
// files; the page shows verdict as its badge.
func (lr *levelRun) write(doc sweep.Document, tables []report.Table, suites []junit.Suite, html []report.HTMLSection, title string, verdict report.Verdict) error {
	w := lr.cmd.OutOrStdout()
	format := lr.o.run.format
	if format == report.FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	} else {
		if err := renderTables(w, format, lr.o.run.wide, tables...); err != nil {
			return err
		}
		if format == report.FormatCSV {
			// CSV has no room for notes: the answer and the early stop go
			// to stderr then.
			for _, t := range tables {
				for _, n := range t.Notes {
					fmt.Fprintln(lr.cmd.ErrOrStderr(), n)
				}
			}
		}
	}
	var errs []error
	if lr.o.run.summaryOut != "" {
		if err := writeJSONFile(lr.o.run.summaryOut, doc); err != nil {
			errs = append(errs, fmt.Errorf("--summary: %w", err))
		}
	}
	if lr.o.junit != "" {
		if err := junit.WriteFile(lr.o.junit, suites...); err != nil {
			errs = append(errs, fmt.Errorf("--junit: %w", err))
		}
	}
	if lr.o.html != "" {
		// The page describes the whole sweep: what the levels share once,
		// what differs (the level) as the list of levels.
		r := report.HTMLReport{Title: title, Sections: html, Verdict: &verdict}
		for _, h := range lr.headers {
			r.Runs = append(r.Runs, report.NamedHeader{Header: h})
		}
		if err := report.WriteHTMLFile(lr.o.html, r); err != nil {
			errs = append(errs, fmt.Errorf("--html: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (o *sweepOptions) runSweep(ctx context.Context, cmd *cobra.Command) error {
	f := cmd.Flags()
	axis, spec := sweep.Concurrency, o.concurrency
	switch {
	case f.Changed("concurrency") && f.Changed("rate"):
		return withExitCode(2, errors.New("give -c/--concurrency or --rate, not both"))
	case f.Changed("rate"):
		axis, spec = sweep.Rate, o.rate
	case !f.Changed("concurrency"):
		spec = defaultSweepLevels
	}
	levels, err := sweep.ParseLevels(axis, spec)
	if err != nil {
		flag := "-c/--concurrency"
		if axis == sweep.Rate {
			flag = "--rate"
		}
		return withExitCode(2, fmt.Errorf("%s: %w", flag, err))
	}
	if o.maxErrorRate < 0 {
		return withExitCode(2, fmt.Errorf("--max-error-rate %v: want a fraction of at least 0 (1 = never stop on errors)", o.maxErrorRate))
	}
	if o.saturationFactor < 0 || (o.saturationFactor > 0 && o.saturationFactor <= 1) {
		return withExitCode(2, fmt.Errorf("--saturation-factor %v: want a factor above 1, or 0 to disable", o.saturationFactor))
	}
	lr, err := o.prepare(cmd, axis)
	if err != nil {
		return err
	}
	// Every level's load must be valid before the first one runs.
	for _, lv := range levels {
		if err := levelLoad(lr.base.Load, axis, lv).Validate(); err != nil {
			return withExitCode(2, fmt.Errorf("%s %s: %w", axis, axis.Format(lv), err))
		}
	}
	if err := lr.start(ctx); err != nil {
		return err
	}
	defer lr.close()

	stderr := cmd.ErrOrStderr()
	opts := sweep.Options{Axis: axis, Levels: levels, SLOs: lr.slos}
	if !o.noEarlyStop {
		opts.Saturation = &sweep.Saturation{MaxErrorRate: o.maxErrorRate, TTFPGrowth: o.saturationFactor}
	}
	n := 0
	run := func(ctx context.Context, level float64) (sweep.Measurement, error) {
		n++
		fmt.Fprintf(stderr, "omnibench sweep: level %d of %d: %s %s\n", n, len(levels), axis, axis.Format(level))
		return lr.run(ctx, level)
	}
	opts.OnPoint = func(p sweep.Point) { fmt.Fprintf(stderr, "  %s\n", sweepPointLine(p)) }

	res, runErr := sweep.Sweep(ctx, opts, run)
	if res == nil {
		return runErr
	}
	if note := res.StopNote(); note != "" {
		fmt.Fprintf(stderr, "omnibench sweep: %s\n", note)
	}
	html := report.SweepSections(res.HTMLLevels(), sweep.SLOLines(lr.slos))
	if res.Stop != nil {
		html[0].Notes = append(html[0].Notes, res.StopNote())
	}
	title := fmt.Sprintf("omnibench sweep: %s over %s", lr.sc.Name, axis)
	status := sweepStatus(res)
	if runErr != nil {
		status = runErr
	}
	verdict := verdictOf(status, sweepPassText(res))
	if err := lr.write(res.Document(), res.Tables(), res.JUnitSuites(), html, title, verdict); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil && ctx.Err() != nil {
		fmt.Fprintln(stderr, "omnibench: interrupted; the levels measured so far were reported")
	}
	return endReport(cmd.OutOrStdout(), o.run.format, o.run.wide, status, verdict.Reason)
}

// sweepStatus is the outcome of a sweep: exit 3 when any level missed an
// SLO, as a run that missed one. Finding where the SLOs stop holding is
// what a sweep is for, and its table shows it; the status lets a script
// see it too (every level held, or not).
func sweepStatus(res *sweep.Result) error {
	var levels []string
	for _, p := range res.Points {
		if !p.Pass() {
			levels = append(levels, res.Axis.Format(p.Level))
		}
	}
	if len(levels) == 0 {
		return nil
	}
	return missed(fmt.Errorf("%d of %d levels missed an SLO (%s %s)", len(levels), len(res.Points), res.Axis, strings.Join(levels, ", ")))
}

// sweepPassText says what a sweep that passed measured.
func sweepPassText(res *sweep.Result) string {
	if len(res.SLOs) == 0 {
		return fmt.Sprintf("%d levels measured, no SLOs given", len(res.Points))
	}
	return fmt.Sprintf("%d levels measured, every SLO held at each", len(res.Points))
}

func (o *capacityOptions) runCapacity(ctx context.Context, cmd *cobra.Command) error {
	axis, err := sweep.ParseAxis(o.by)
	if err != nil {
		return withExitCode(2, fmt.Errorf("--by: %w", err))
	}
	lr, err := o.prepare(cmd, axis)
	if err != nil {
		return err
	}
	if len(lr.slos) == 0 {
		return withExitCode(2, fmt.Errorf("capacity needs at least one --slo (scenario %s has no slos)", lr.sc.Name))
	}
	if o.maxRuns < 1 {
		return withExitCode(2, fmt.Errorf("--max-runs %d: want at least 1", o.maxRuns))
	}
	opts, err := sweep.SearchOptions{Axis: axis, SLOs: lr.slos, Start: o.start, Max: o.max, Resolution: o.resolution, MaxRuns: o.maxRuns}.WithDefaults()
	if err != nil {
		return withExitCode(2, err)
	}
	stderr := cmd.ErrOrStderr()
	if err := lr.start(ctx); err != nil {
		return err
	}
	defer lr.close()

	n := 0
	run := func(ctx context.Context, level float64) (sweep.Measurement, error) {
		n++
		fmt.Fprintf(stderr, "omnibench capacity: run %d of at most %d: %s %s\n", n, opts.MaxRuns, axis, axis.Format(level))
		return lr.run(ctx, level)
	}
	opts.OnStep = func(st sweep.Step) { fmt.Fprintf(stderr, "  %s\n", sweepPointLine(st.Point)) }
	s, runErr := sweep.Capacity(ctx, opts, run)
	if s == nil {
		return runErr
	}
	fmt.Fprintf(stderr, "omnibench %s\n", s.Answer())

	search := s.Tables()
	html := append([]report.HTMLSection{{Title: "Capacity search", Notes: append([]string{s.Answer()}, s.Margins()...), Tables: search}},
		report.SweepSections(s.HTMLLevels(), sweep.SLOLines(lr.slos))...)
	title := fmt.Sprintf("omnibench capacity: %s over %s", lr.sc.Name, axis)
	status := capacityStatus(s)
	if runErr != nil {
		status = runErr
	}
	verdict := verdictOf(status, s.Answer())
	if err := lr.write(s.Document(), search, s.JUnitSuites(), html, title, verdict); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil && ctx.Err() != nil {
		fmt.Fprintln(stderr, "omnibench: interrupted; the search so far was reported")
	}
	return endReport(cmd.OutOrStdout(), o.run.format, o.run.wide, status, verdict.Reason)
}

// capacityStatus is the outcome of a capacity search: 0 when it found the
// knee or a bound (resolved, every SLO held at the maximum, the run budget
// spent with a passing level), 3 when even the start level missed an SLO,
// and a refusal (1) when the answer is unknown: the search stopped at a
// miss that may be the saturated load generator's, or no level ran.
func capacityStatus(s *sweep.Search) error {
	switch {
	case s.End == sweep.EndStartFails:
		return missed(errors.New(s.Answer()))
	case s.End == sweep.EndClientSaturated, s.End == sweep.EndMaxRuns && !s.Found:
		return refused(errors.New(s.Answer()))
	}
	return nil
}

// sweepPointLine is the progress line after a level.
func sweepPointLine(p sweep.Point) string {
	f := p.Figures
	parts := []string{fmt.Sprintf("%d/%d completed", f.Completed, f.Requests)}
	if f.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", f.Failed))
	}
	if v := f.TTFPP95MS; !math.IsNaN(v) {
		parts = append(parts, fmt.Sprintf("TTFP p95 %.0f ms", v))
	}
	if v := f.ContinuityOKRate; !math.IsNaN(v) {
		parts = append(parts, fmt.Sprintf("continuous %.1f%%", v*100))
	}
	if len(p.SLOs) > 0 {
		if p.Pass() {
			parts = append(parts, "SLOs pass")
		} else {
			var names []string
			for _, r := range p.Failed() {
				names = append(names, r.SLO.Figure)
			}
			parts = append(parts, "SLO missed: "+strings.Join(slices.Compact(names), ", "))
		}
	}
	return strings.Join(parts, ", ")
}
