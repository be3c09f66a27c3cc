package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/metrics/exporter"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/scenarios"
)

// pushTimeout bounds the push at the end of a run.
const pushTimeout = 30 * time.Second

// metricsOptions are the exporter flags of `omnibench run`.
type metricsOptions struct {
	addr       string
	linger     time.Duration
	out        string
	push       string
	pushJob    string
	pushLabels []string
}

func (o *metricsOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.addr, "metrics-addr", "", "serve the client-side metrics (omnibench:*) at http://ADDR/metrics during the run, e.g. 127.0.0.1:9464")
	f.DurationVar(&o.linger, "metrics-linger", 15*time.Second, "with --metrics-addr: keep serving this long after the run so the last scrape sees the final values (Ctrl-C ends it early)")
	f.StringVar(&o.out, "metrics-out", "", "write the final client-side metrics to this file (Prometheus text format, atomically; for node_exporter's textfile collector)")
	f.StringVar(&o.push, "push", "", "push the final client-side metrics to this Pushgateway URL (e.g. http://127.0.0.1:9091); a failure exits 1 after the results are written")
	f.StringVar(&o.pushJob, "push-job", exporter.DefaultPushJob, "with --push: the job name of the pushed group")
	f.StringArrayVar(&o.pushLabels, "push-label", nil, "with --push: grouping label name=value (repeatable)")
}

// enabled reports whether any exporter output was asked for.
func (o *metricsOptions) enabled() bool { return o.addr != "" || o.out != "" || o.push != "" }

// newExporter builds the exporter for the run planned in cfg from sc and
// hooks it into cfg; nil when no exporter flag was given. It checks the push
// labels and that --metrics-out can be written before the run, so a typo
// does not cost a whole run (exit 2).
func (o *metricsOptions) newExporter(cfg *runner.Config, sc *scenarios.Scenario) (*exporter.Exporter, map[string]string, error) {
	if !o.enabled() {
		return nil, nil, nil
	}
	grouping, err := exporter.ParsePushLabels(o.pushLabels)
	if err != nil {
		return nil, nil, withExitCode(2, fmt.Errorf("--push-label: %w", err))
	}
	if o.out != "" {
		if err := checkWritable(o.out); err != nil {
			return nil, nil, withExitCode(2, fmt.Errorf("--metrics-out: %w", err))
		}
	}
	model := sc.Model
	if model == "" && cfg.Target == "" {
		model = cfg.Simulator.Model // the embedded simulator serves this one
	}
	exp, err := exporter.New(exporter.Options{
		ModelName:      model,
		Endpoint:       sc.EndpointPath(),
		Scenario:       sc.Name,
		Thresholds:     cfg.Summary.Thresholds,
		ContinuityMode: cfg.Client.ContinuityMode,
		TextOnly:       sc.Kind == results.KindChat && len(sc.Modalities) > 0 && !slices.Contains(sc.Modalities, "audio"),
		IncludeRamp:    cfg.Summary.IncludeRamp,
		Shard:          shardLabel(cfg.Load.Shard),
		AudioChecks:    cfg.Client.AudioChecks,
	})
	if err != nil {
		return nil, nil, err
	}
	cfg.OnStart, cfg.OnRecord, cfg.OnDrop = exp.OnStart, exp.OnRecord, exp.OnDrop
	cfg.OnHealth = exp.OnHealth
	return exp, grouping, nil
}

// listen starts the metrics server when --metrics-addr is set (nil otherwise).
func (o *metricsOptions) listen(ctx context.Context, exp *exporter.Exporter, log io.Writer) (*exporter.Server, error) {
	if o.addr == "" {
		return nil, nil
	}
	srv, err := exporter.Listen(ctx, o.addr, exp.Handler())
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	fmt.Fprintf(log, "omnibench: serving client metrics at %s\n", srv.URL())
	return srv, nil
}

// checkWritable reports whether a file can be written at path the way
// exporter.WriteFile writes it: a temporary file in the same directory,
// renamed over path.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".omnibench-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// outputErrors are the failures of the outputs written after the results:
// returned once (the caller prints it), on one line, saying that the
// results themselves were written.
type outputErrors []error

func (e outputErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ") + " (the results were written)"
}

func (e outputErrors) Unwrap() []error { return e }

// finish writes --metrics-out, pushes to --push and lingers on
// --metrics-addr, in that order, after the results and the report are out.
// Each output is attempted even when an earlier one failed; the errors are
// returned together, once. An interrupted run still writes and pushes what
// it gathered, but does not linger.
func (o *metricsOptions) finish(ctx context.Context, exp *exporter.Exporter, grouping map[string]string,
	srv *exporter.Server, interrupted bool, log io.Writer) error {
	if exp == nil {
		return nil
	}
	var errs []error
	if o.out != "" {
		if err := exp.WriteFile(o.out); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-out: %w", err))
		}
	}
	if o.push != "" {
		// Detached from an interrupt: the results are already written and a
		// partial run is still worth pushing, within a bound.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
		err := exp.Push(pctx, exporter.PushConfig{URL: o.push, Job: o.pushJob, Grouping: grouping})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("--push: %w", err))
		}
	}
	if srv != nil && !interrupted && o.linger > 0 {
		fmt.Fprintf(log, "omnibench: serving the final metrics at %s for %v (Ctrl-C to stop)\n", srv.URL(), o.linger)
		if err := srv.Linger(ctx, o.linger); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("--metrics-addr: %w", err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return outputErrors(errs)
}
