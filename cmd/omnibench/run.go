package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/internal/tlsconf"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
)

// runOptions are the flags of `omnibench run` (and of the commands that run
// the same workload: sweep, capacity, ab). Each group of flags is a type of
// its own (run_flags.go), listed under its own heading in --help.
type runOptions struct {
	profile profileFlags // hidden --cpuprofile, --memprofile (run_profile.go)
	targetFlags
	workloadFlags
	loadFlags
	clientFlags
	continuityFlags
	reportFlags
	scrapeFlags
	simulatorFlags

	// WebSocket kinds (speech-ws, realtime)
	ws wsFlags

	// TLS: --ca-file, --insecure
	tls tlsFlags

	wide bool

	// run-only outputs (SLO gates, JUnit, HTML, saved audio)
	outputs runOutputs
	// audio quality: signal checks, transcription (run_quality.go)
	quality qualityFlags
	// maxErrorRate is run's failure-rate gate: the SLO error_rate<=X.
	maxErrorRate float64

	// client-side metrics exporter (run only; see run_metrics.go)
	metrics metricsOptions

	// one shard of a test split over processes (run only; see run_shard.go)
	shard shardOptions
}

// newRunCmd is `omnibench run`. runF, when not nil, replaces the run: it
// gets the parsed options, so a test sees what the flags set without
// running anything.
func newRunCmd(runF func(*runOptions) error) *cobra.Command {
	return newRunCmdWith(&runOptions{}, runF)
}

// newRunCmdWith is the run command bound to o (kube render checks the run
// flags it passes to the pods with it).
func newRunCmdWith(o *runOptions, runF func(*runOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a streaming audio benchmark (against the embedded simulator when no --url is given)",
		Long: `run fires streaming chat or speech requests at a server, timestamps every audio
chunk, and reports TTFP, TTFT, end-to-end latency, the three real-time factors,
playback continuity and, when the server exports /metrics, the server's own
figures beside the client's.

Without --url it starts the embedded vLLM-Omni simulator on a free loopback port.`,
		Example: `  omnibench run -n 20
  omnibench run --url http://127.0.0.1:8000 --scenario tts-short -c 8 -n 200 --out run.jsonl
  omnibench run --url http://127.0.0.1:8000 --rate 5 --arrival poisson -d 60s --slo 'audio_ttfp_p95<500ms'
  omnibench run --scenario my-workload.yaml --format markdown --html report.html`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(o)
			}
			stop, err := o.profile.start()
			if err != nil {
				return err
			}
			err = o.run(cmd.Context(), cmd)
			if serr := stop(); err == nil {
				err = serr
			}
			return err
		},
	}
	o.addFlags(cmd.Flags())
	o.profile.addFlags(cmd.Flags())
	addWideFlag(cmd.Flags(), &o.wide)
	o.metrics.addFlags(cmd.Flags()) // run only: sweep, capacity and ab do not export
	o.outputs.addFlags(cmd.Flags())
	o.quality.addFlags(cmd.Flags())
	cmd.Flags().Float64Var(&o.maxErrorRate, "max-error-rate", 0.5,
		"fail (exit 3, like a missed SLO) when more than this fraction of measured requests failed; 1 = no gate")
	o.shard.addFlags(cmd.Flags())
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// addFlags adds the flag groups of run and ab.
func (o *runOptions) addFlags(f *pflag.FlagSet) {
	o.addGroups(f, o.loadFlags.register, o.reportFlags.register, o.scrapeFlags.register)
}

// addGroups adds the flag groups every command that runs the workload
// shares, with the command's own load, report and scrape flags (sweep and
// capacity have level flags and say what they write per level).
func (o *runOptions) addGroups(f *pflag.FlagSet, loadGroup, reportGroup, scrapeGroup func(*pflag.FlagSet)) {
	addGroup(f, groupTarget, o.targetFlags.register)
	addGroup(f, groupWorkload, o.workloadFlags.register)
	addGroup(f, groupLoad, loadGroup)
	addGroup(f, groupClient, o.clientFlags.register)
	addGroup(f, groupContinuity, o.continuityFlags.register)
	addGroup(f, groupReport, reportGroup)
	addGroup(f, groupScrape, scrapeGroup)
	addGroup(f, groupWebSocket, o.ws.addFlags)
	addGroup(f, groupTLS, o.tls.addFlags)
	addGroup(f, groupSimulator, o.simulatorFlags.register)
}

// plan turns the flags into a runner configuration. It reads only flags,
// the scenario and the environment, so every error names its flag or file.
func (o *runOptions) plan(f *pflag.FlagSet) (runner.Config, *scenarios.Scenario, error) {
	var cfg runner.Config
	sc, ap, apiKey, err := o.applyScenario(f)
	if err != nil {
		return cfg, nil, err
	}
	p, err := o.parseFlags(f, sc.Kind, ap.Thresholds)
	if err != nil {
		return cfg, nil, err
	}
	notes := ap.Notes
	if o.tls.opts.Insecure {
		// The runner says its notes on stderr as the run starts and keeps
		// them in the report and the JSON document.
		notes = append(notes, tlsconf.InsecureNote)
	}
	cfg = runner.Config{
		WS:        p.ws,
		Target:    o.url,
		Simulator: o.simulatorConfig(sc),
		Workload:  ap.Workload,
		Scenario:  sc.Name,
		Seed:      o.seed,
		Load:      ap.Load,
		Client: client.Options{
			APIKey:               apiKey,
			Timeout:              o.timeout,
			IdleTimeout:          o.idleTimeout,
			MaxEventBytes:        o.maxEventBytes,
			AudibleThresholdDBFS: o.audibleDB,
			Thresholds:           p.thresholds,
			ContinuityMode:       p.mode,
			Preroll:              continuity.PrerollConfig{BufferS: o.prebuffer.Seconds(), MaxWaitS: o.prebufferMaxWait.Seconds()},
			MaxConns:             o.maxConns,
			TLSConfig:            p.tls,
			HTTPTransport:        o.transport,
		},
		Summary:    summary.Options{Percentiles: ap.Percentiles, Thresholds: p.thresholds, Goodput: p.goodput, IncludeRamp: o.includeRamp},
		SelfMon:    selfmon.Thresholds{CPUShare: o.cpuLimit, Delay: o.delayLimit},
		Scrape:     o.scrape,
		MetricsURL: o.metricsURL,
		Accept:     p.accept,
		Settle:     o.settle,
		Version:    versionString(),

		ScrapeTimeout:    o.scrapeTimeout,
		ScrapeMaxBytes:   o.scrapeMaxBytes,
		ScrapeMaxSamples: o.scrapeMaxSamples,
		ScrapeInterval:   scrapeInterval(f, o.scrapeInterval, ap.Load),
		Flags:            flagsWithoutSecrets(f),
		Redact:           commandRedactor(f),
		Notes:            notes,
		Probe:            !o.noProbe,
		// A built-in scenario's model is an example: a server that serves
		// one model is asked for that one unless --model says otherwise.
		PickModel: !f.Changed("model") && (sc.Model == "" || slices.Contains(scenarios.Names(), o.scenario)),
	}
	return cfg, sc, nil
}

// applyScenario opens the scenario and applies the flags that override
// it. It returns the API key, from --api-key or the environment.
func (o *runOptions) applyScenario(f *pflag.FlagSet) (*scenarios.Scenario, scenarios.Applied, string, error) {
	sc, err := scenarios.Open(o.scenario)
	if err != nil {
		return nil, scenarios.Applied{}, "", err
	}
	if _, _, err := runner.ParseTarget(o.url); err != nil {
		return nil, scenarios.Applied{}, "", err
	}
	sc = sc.Clone()
	apiKey := o.apiKey
	if apiKey == "" {
		apiKey = os.Getenv("OMNIBENCH_API_KEY")
	}
	ov, err := o.overrides(f, apiKey != "")
	if err != nil {
		return nil, scenarios.Applied{}, "", err
	}
	ap, err := ov.Apply(sc)
	if err != nil {
		return nil, scenarios.Applied{}, "", err
	}
	if err := o.checkClientBounds(f); err != nil {
		return nil, scenarios.Applied{}, "", err
	}
	return sc, ap, apiKey, nil
}

// parsedRunFlags are the run flags whose values need parsing beyond
// pflag's.
type parsedRunFlags struct {
	thresholds []float64
	mode       continuity.Mode
	goodput    []summary.Goodput
	accept     scrape.Accept
	ws         runner.WSOptions
	tls        *tls.Config
}

// parseFlags parses the flags pflag leaves as text. thresholds are the
// scenario's (or the flag's) continuity thresholds, nil for the default.
func (o *runOptions) parseFlags(f *pflag.FlagSet, kind string, thresholds []float64) (parsedRunFlags, error) {
	p := parsedRunFlags{thresholds: thresholds}
	var err error
	if p.thresholds == nil {
		if p.thresholds, err = parseThresholds(o.thresholds); err != nil {
			return p, err
		}
	}
	if p.mode, err = continuity.ParseMode(o.mode); err != nil {
		return p, fmt.Errorf("--continuity-mode: %w", err)
	}
	if o.goodput != "" {
		if p.goodput, err = summary.ParseGoodput(o.goodput); err != nil {
			return p, fmt.Errorf("--goodput: %w", err)
		}
	}
	switch o.scrape {
	case runner.ScrapeAuto, runner.ScrapeOn, runner.ScrapeOff:
	default:
		return p, fmt.Errorf("--scrape: scrape mode %q (want auto, on or off)", o.scrape)
	}
	if p.accept, err = scrape.ParseAccept(o.accept); err != nil {
		return p, fmt.Errorf("--accept: %w", err)
	}
	if err := report.CheckFormat(o.format, report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV); err != nil {
		return p, err
	}
	if p.ws, err = o.ws.options(f, kind); err != nil {
		return p, err
	}
	if p.tls, err = o.tls.config(); err != nil {
		return p, err
	}
	return p, nil
}

// simulatorConfig is the embedded simulator's configuration, used when
// there is no --url.
func (o *runOptions) simulatorConfig(sc *scenarios.Scenario) simulator.Config {
	sim := simulator.DefaultConfig()
	sim.Addr = "127.0.0.1:0"
	sim.Capacity = o.simCapacity
	sim.StatsEnabled = o.simStats
	if sc.Model != "" {
		// The embedded simulator serves whatever model the workload asks for.
		sim.Model = sc.Model
	}
	sim.Seed = o.seed
	// The embedded simulator stamps its events: the client's receive delay
	// (send-stamp delay) is part of the load generator's saturation verdict.
	sim.Stamp = true
	return sim
}

// checkFlags is plan with run's SLO flags: every check of run's flags that
// does not depend on this machine (output paths, the shard's index), which
// kube render makes of the flags it gives every pod.
func (o *runOptions) checkFlags(f *pflag.FlagSet) (runner.Config, *scenarios.Scenario, []slo.SLO, error) {
	cfg, sc, err := o.plan(f)
	if err != nil {
		return cfg, nil, nil, err
	}
	slos, err := sc.ParseSLOs(o.outputs.slos)
	if err != nil {
		return cfg, nil, nil, err
	}
	if gate, ok, err := slo.MaxErrorRate(o.maxErrorRate); err != nil {
		return cfg, nil, nil, err
	} else if ok {
		slos = append(slos, gate)
	}
	return cfg, sc, slos, nil
}

func (o *runOptions) run(ctx context.Context, cmd *cobra.Command) error {
	cfg, sc, slos, err := o.prepare(cmd)
	if err != nil {
		return err
	}
	exp, grouping, err := o.metrics.newExporter(&cfg, sc)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	showProgress(&cfg, stderr)
	var outFile *os.File
	if o.out != "" {
		if outFile, err = os.Create(o.out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer outFile.Close()
		cfg.Out = outFile
	}
	msrv, err := o.metrics.listen(ctx, exp, stderr)
	if err != nil {
		return err
	}
	if msrv != nil {
		defer msrv.Close()
	}
	outcome, runErr := runner.Run(ctx, cfg)
	if outcome == nil {
		return runErr
	}
	if outFile != nil {
		if err := outFile.Sync(); err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
	}
	doc, verdicts, outErr := o.writeOutputs(cmd, outcome, slos)
	if outcome.Interrupted {
		fmt.Fprintln(stderr, "omnibench: interrupted; the results gathered so far were written")
	}
	if exp != nil && outcome.Health != nil {
		exp.SetHealth(*outcome.Health)
	}
	metricsErr := o.metrics.finish(ctx, exp, grouping, msrv, outcome.Interrupted, stderr)
	if ctx.Err() != nil && !outcome.Interrupted && msrv != nil && o.metrics.linger > 0 {
		if err := o.interruptedLingering(doc, stderr); err != nil {
			metricsErr = errors.Join(metricsErr, err)
		}
	}
	failed := errors.Join(outErr, metricsErr)
	fmt.Fprint(stderr, report.ErrorSetText(outcome.Summary, "omnibench: "))
	return endReport(cmd.OutOrStdout(), o.format, o.wide, runStatus(stderr, runErr, failed, outcome.Summary, verdicts),
		measuredText(outcome.Summary, verdicts))
}

// prepare checks the flags and the output paths and completes the runner
// configuration with what only run has: the shard, the SLOs recorded in
// the header and the saved audio. Its errors end the command before
// anything runs.
func (o *runOptions) prepare(cmd *cobra.Command) (runner.Config, *scenarios.Scenario, []slo.SLO, error) {
	cfg, sc, slos, err := o.checkFlags(cmd.Flags())
	if err != nil {
		return cfg, nil, nil, withExitCode(2, err)
	}
	if err := checkOutputPaths(o.outputFlags()...); err != nil {
		return cfg, nil, nil, err
	}
	if err := o.shard.apply(&cfg); err != nil {
		return cfg, nil, nil, withExitCode(2, err)
	}
	for _, s := range slos {
		cfg.SLOs = append(cfg.SLOs, s.Expr)
	}
	cfg.SaveAudioDir = o.outputs.saveAudio
	if err := o.quality.apply(&cfg); err != nil {
		return cfg, nil, nil, withExitCode(2, err)
	}
	return cfg, sc, slos, nil
}

// showProgress sends the runner's log to stderr, and its progress line
// too when stderr is a terminal.
func showProgress(cfg *runner.Config, stderr io.Writer) {
	cfg.Log = stderr
	if isTerminal(stderr) {
		cfg.Progress = stderr
		// Asked at every update: the terminal may be resized during a run.
		cfg.ProgressWidth = func() int { w, _ := report.TerminalWidth(stderr); return w }
	}
}

// writeOutputs judges the SLOs and writes the summary, the report, the
// run-only outputs and the shard's scrapes. Every output is attempted:
// one that cannot be written does not drop the others, and the error
// returned says which failed.
func (o *runOptions) writeOutputs(cmd *cobra.Command, outcome *runner.Outcome, slos []slo.SLO) (*runner.Document, []slo.Result, error) {
	stderr := cmd.ErrOrStderr()
	rep := outcome.Report()
	o.shard.nameScrapes(outcome) // the summary names the snapshot files instead of embedding them
	doc := outcome.Document()
	var verdicts []slo.Result
	if len(slos) > 0 {
		verdicts = slo.EvaluateServer(slos, outcome.Summary, outcome.Set, runner.ServerFigures(outcome.Breakdown))
		rep.SLOs = verdicts
		if raw, err := json.Marshal(verdicts); err == nil {
			doc.SLOs = raw
		}
	}
	var outErrs []error
	if o.summaryOut != "" {
		if err := writeJSONFile(o.summaryOut, doc); err != nil {
			outErrs = append(outErrs, fmt.Errorf("--summary: %w", err))
		}
	}
	if err := writeRunReport(cmd.OutOrStdout(), o.format, o.wide, rep, doc); err != nil {
		outErrs = append(outErrs, fmt.Errorf("writing the report: %w", err))
	}
	outErrs = append(outErrs, o.outputs.finishOutputs(stderr, outcome, rep, verdicts))
	if err := o.shard.writeScrapes(outcome, stderr); err != nil {
		outErrs = append(outErrs, err)
	}
	return doc, verdicts, errors.Join(outErrs...)
}

// interruptedLingering records an interruption after the run, while
// lingering on --metrics-addr: every figure stands, and the summary
// records the interruption.
func (o *runOptions) interruptedLingering(doc *runner.Document, stderr io.Writer) error {
	doc.Interrupted, doc.InterruptedDuring = true, runner.InterruptedLinger
	fmt.Fprintln(stderr, "omnibench: interrupted during --metrics-linger: stopped serving the client metrics")
	if o.summaryOut == "" {
		return nil
	}
	if err := writeJSONFile(o.summaryOut, doc); err != nil {
		return fmt.Errorf("--summary: %w", err)
	}
	return nil
}

// runStatus is the outcome of a run that reported: the run's own error,
// then an output that could not be written, then nothing measured, then
// the SLO verdicts.
func runStatus(stderr io.Writer, runErr, failed error, s *summary.Summary, verdicts []slo.Result) error {
	switch {
	case runErr != nil:
		if failed != nil {
			fmt.Fprintln(stderr, "omnibench:", failed) // the run's error decides the status
		}
		return runErr
	case failed != nil:
		if miss := sloMiss(verdicts); miss != nil {
			fmt.Fprintln(stderr, "omnibench:", miss)
		}
		return failed
	case s.Requests.ByError[results.ErrClientLimit] > 0:
		return failure(clientLimited(s))
	case s.NothingMeasured():
		return failure(errors.New(report.NothingMeasured(s)))
	}
	return sloMiss(verdicts)
}

// clientLimited is the failure of a run whose requests hit the client
// machine's own limits (results.ErrClientLimit): its figures measure the
// client, not the server, so it fails (1) rather than pass or miss its SLOs
// (0, 3), whose verdicts would be about the wrong machine.
func clientLimited(s *summary.Summary) error {
	return fmt.Errorf("%d of %d measured requests failed on the client's own limits (%s, in the errors above): the run measured the client, not the server; raise the limit or shard the load, and run again",
		s.Requests.ByError[results.ErrClientLimit], s.Requests.Total, results.ErrClientLimit)
}

func writeRunReport(w io.Writer, format string, wide bool, rep report.RunReport, doc any) error {
	if format == report.FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	return renderTables(w, format, wide, report.RunTables(rep)...)
}

// parseThresholds accepts seconds ("0.1") or Go durations ("100ms").
func parseThresholds(in []string) ([]float64, error) {
	var out []float64
	for _, s := range in {
		v, err := continuity.ParseThreshold(s)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("--threshold %q: want seconds (0.1) or a duration (100ms), greater than 0", strings.TrimSpace(s))
		}
		out = append(out, v)
	}
	return out, nil
}

// flagsWithoutSecrets records the flags the user set, for the results
// header. Secrets and header values (which may carry credentials) are
// replaced.
func flagsWithoutSecrets(f *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	f.Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "api-key", "header":
			out[fl.Name] = "[redacted]"
		case "push":
			out[fl.Name] = secret.URL(fl.Value.String())
		default:
			out[fl.Name] = fl.Value.String()
		}
	})
	return out
}

func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap() // a redacting writer around the terminal
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeJSONFile writes v as indented JSON atomically: a reader never sees a
// half-written file.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// rateFlag is --rate: a rate, or START:END for a rate ramp (load.ParseRate).
type rateFlag struct {
	start, rate float64
	text        string
}

func (r *rateFlag) String() string {
	if r.text == "" {
		return "0"
	}
	return r.text
}

func (r *rateFlag) Set(s string) error {
	start, rate, err := load.ParseRate(s)
	if err != nil {
		return err
	}
	r.start, r.rate, r.text = start, rate, s
	return nil
}

func (r *rateFlag) Type() string { return "rate" }

// defaultScrapeInterval is how often a long run scrapes /metrics during
// its load when --scrape-interval is not given; longScrapedRun is the
// duration bound from which it does. A shorter run has its first and last
// scrapes only: its timeline would be a point or two.
const (
	defaultScrapeInterval = 5 * time.Second
	longScrapedRun        = time.Minute
)

// scrapeInterval is --scrape-interval as given, or when not given the
// default for the load's duration bound.
func scrapeInterval(f *pflag.FlagSet, given time.Duration, lc load.Config) time.Duration {
	if f.Changed("scrape-interval") {
		return given
	}
	if lc.Duration > longScrapedRun {
		return defaultScrapeInterval
	}
	return 0
}
