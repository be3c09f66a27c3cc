// Package runner performs one benchmark run: it starts the embedded simulator
// when no target is given, snapshots the server's /metrics, drives the
// workload through the load generator and the streaming client, streams every
// record to the results file as it completes, snapshots /metrics again and
// folds everything into an Outcome that the report and the checks read.
//
// It is the one place where the mechanisms meet; the run, sweep, capacity and
// ab commands all go through Run.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/internal/tlsconf"
	"github.com/omnibench/omnibench/internal/wsclient"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
)

// Scrape modes.
const (
	ScrapeAuto = "auto" // scrape when the target serves /metrics; say so when it does not
	ScrapeOn   = "on"   // scrape, and fail the run when /metrics cannot be read
	ScrapeOff  = "off"
)

// Config describes one run.
type Config struct {
	// Target is the server's base URL. Empty starts the embedded simulator
	// with Simulator on a free loopback port.
	Target    string
	Simulator simulator.Config
	// ServerInProcess says that the server at Target runs inside this
	// process (a simulator the caller started): the load generator's
	// verdict then counts it as embedded, sharing the client's cores.
	ServerInProcess bool

	Workload *scenarios.Workload
	Scenario string // name shown in the header
	Seed     int64
	Load     load.Config
	Client   client.Options // BaseURL is set by Run
	Summary  summary.Options

	Scrape     string        // ScrapeAuto (default), ScrapeOn or ScrapeOff
	MetricsURL string        // default Target + "/metrics"
	Accept     scrape.Accept // content type to ask /metrics for
	Settle     time.Duration // wait after the last response before the second scrape
	// ScrapeTimeout bounds each scrape (0: scrape.DefaultTimeout); a scrape
	// that hangs becomes a note (an error with ScrapeOn), never a hang.
	ScrapeTimeout time.Duration
	// ScrapeMaxBytes and ScrapeMaxSamples cap one exposition (0: the scrape
	// package's defaults); a larger one becomes a note like a failed scrape.
	ScrapeMaxBytes   int64
	ScrapeMaxSamples int
	// ScrapeInterval, when positive, also scrapes /metrics that often
	// during the load, on a goroutine of its own, for the breakdown's
	// timeline (Outcome.Timeline); a scrape that fails is a gap in it.
	ScrapeInterval time.Duration

	// Out receives the results JSONL as the run goes (nil: none).
	Out io.Writer
	// Log receives notices (stderr).
	Log io.Writer
	// Progress, when set, receives a live status line twice a second; it
	// is a terminal, and Log lines written meanwhile start on a row of
	// their own.
	Progress io.Writer
	// ProgressWidth, when set, returns the terminal's width in columns:
	// the status line is cut to fit it (a wrapped line cannot be rewritten
	// in place). nil: 80 columns.
	ProgressWidth func() int

	Version string
	Flags   map[string]string // as given; Redact and secret.URL are applied again
	// SLOs are the expressions of the objectives the caller judges the run
	// by; the results header records them (results.Header.SLOs).
	SLOs []string

	// Redact holds every credential the user gave (package secret). Run
	// applies it to the results stream, the header, notes and the log, and
	// hands it to the client for servers' error bodies.
	Redact *secret.Redactor

	// OnRecord is called for every finished request (the exporter observes
	// through it), one record at a time and in the order the requests
	// finished, from the run's bookkeeping goroutine (see recordQueue).
	// Run returns after the last call. A slow OnRecord holds the other
	// bookkeeping, not the load, until recordQueueCap records wait.
	OnRecord func(*results.Record)
	// OnDrop is called for every open-loop arrival dropped by --max-inflight.
	OnDrop func(load.Arrival)
	// OnStart is called for every arrival right before its request is sent,
	// from the request's goroutine (the exporter counts started and
	// in-flight requests through it). It must be safe for concurrent use.
	OnStart func(load.Arrival)

	// Notes are decisions the caller made on the user's behalf (a kind
	// override that dropped scenario fields, ...): Run writes each to Log
	// and keeps it in Outcome.Notes for the report.
	Notes []string

	// SelfMon holds the thresholds at which the load generator's delay
	// counts (see selfmon.Report.Judge).
	SelfMon selfmon.Thresholds
	// OnHealth, when set, receives every self-monitoring sample of the
	// load generator during the run (the exporter's gauges), from the
	// monitor's goroutine.
	OnHealth func(selfmon.Sample)
	// WS configures the WebSocket kinds (sessions per arrival).
	WS WSOptions

	// SaveAudioDir, when set, receives each response's audio as a playable
	// WAV file named after the request id (req-000042.wav).
	SaveAudioDir string

	// ASR, when its URL is set, transcribes each measured response's audio
	// and scores it (Outcome.Summary.Quality.ASR, the results file's asr
	// lines).
	ASR ASRConfig

	// Probe sends one unmeasured request before anything else against a
	// server given by Target, and stops the run with its error when it
	// fails as every request would (see probe.go).
	Probe bool
	// PickModel, with Probe, lets the run ask for the one model GET
	// /v1/models lists when the workload's model was not the user's
	// choice (see pickServedModel).
	PickModel bool
}

// Outcome is everything a run produced.
type Outcome struct {
	Header results.Header
	// Set holds the finished requests in compact form, in completion
	// order: the figures, not the records (those went to Config.Out as
	// they completed), so that memory stays bounded per request.
	Set *summary.Set
	// Worst picked the worst response's full record (for the HTML's
	// timeline) as the requests finished.
	Worst   *summary.WorstPicker
	Load    load.Stats
	Summary *summary.Summary

	MetricsURL string
	Before     *scrape.Snapshot
	After      *scrape.Snapshot
	Delta      *scrape.Delta
	ScrapeNote string // why there was no scrape, when there was none
	// BeforeFile and AfterFile name the files the caller saves Before and
	// After to (run --save-scrapes); the summary points at them instead of
	// embedding the bodies.
	BeforeFile, AfterFile string
	// Breakdown is where the time went by the server's own metrics, stage
	// by stage, replica by replica and hop by hop, beside the client's
	// figures; with Computable false, its Reasons say why it cannot be
	// told. Timeline is the gauges and rates between the scrapes.
	Breakdown *breakdown.Breakdown
	Timeline  []breakdown.Point
	// MeasuredFrom is when the measured phase began (zero if it never
	// did): the zero of the report's charts over time.
	MeasuredFrom time.Time

	// Health is the load generator's own health over the load phase, with
	// its saturation verdict.
	Health *selfmon.Report
	// ClientNotes explain what limited the client (a connection bound
	// below the load's peak).
	ClientNotes []string

	Interrupted bool
	// StatsOff is set when the server's /metrics shows its stats are off:
	// the server-vs-client comparison is left out (a note says why).
	StatsOff bool
	// Notes are what the run found worth saying beside its figures (a
	// count bound that stopped it before --duration, hints about the
	// target); the runner also writes each to Config.Log.
	Notes []string
	// InterruptedDuring says which phase an interrupt hit (InterruptedLoad,
	// InterruptedSettle; the run command adds InterruptedLinger).
	InterruptedDuring string
}

// Phases an interrupt can hit (Outcome.InterruptedDuring).
const (
	InterruptedLoad   = "load"           // requests were still being sent or answered
	InterruptedSettle = "settle"         // every request was done; the second scrape was not taken
	InterruptedLinger = "metrics-linger" // every output was written; the exporter stopped serving early
)

// Run performs the run. It returns an Outcome whenever any request was
// attempted, also together with an error (for example when interrupted), so
// that callers can always write what was gathered.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	r, err := prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer r.release()
	lstats, runErr := r.drive(ctx)
	return r.finish(ctx, lstats, runErr)
}

// run is one Run under way: what prepare set up for drive and finish.
type run struct {
	cfg        Config
	out        *Outcome
	target     string
	simulated  bool
	metricsURL string
	// probeWait is how long the first scrape waits for the server to count
	// the probe request, when one was sent.
	probeWait time.Duration
	status    *progressLine // the live status line, when there is a terminal

	sim     *simulator.Running // the embedded simulator, when there is no target
	cl      *client.Client
	ws      *wsclient.Client // for the WebSocket kinds
	col     *collector
	sinks   []sink
	refused *refusedModelSink
	asr     *asrSink     // the transcriptions, with --asr-url
	records *recordQueue // started with the load
	// sinkErr is the first error a sink returned (the results file, saved
	// audio).
	sinkErr firstError
	results *resultsSink // the results file's sink, when there is one
	bd      breakdownState
}

// prepare checks cfg, finds or starts the target, takes the first scrape,
// makes the client and writes the results header.
func prepare(ctx context.Context, cfg Config) (_ *run, err error) {
	cfg, status, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	target, targetNote, err := ParseTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, out: &Outcome{}, target: target, col: &collector{}, status: status}
	defer func() {
		if err != nil {
			r.release()
		}
	}()
	for _, n := range append(slices.Clone(cfg.Notes), targetNote) {
		r.out.note(cfg.Log, n)
	}
	r.simulated = target == ""
	if r.simulated {
		// The simulator outlives an interrupt until the last record is
		// written: release closes it.
		if r.sim, err = simulator.StartEmbedded(ctx, cfg.Simulator); err != nil {
			return nil, err
		}
		r.target = r.sim.URL
		fmt.Fprintf(cfg.Log, "omnibench: no --url given: started the embedded simulator at %s\n", r.sim.URL)
	} else {
		// The probe and the model pick may change the workload's model.
		sent, err := prepareTarget(ctx, &r.cfg, r.out, r.target)
		if err != nil {
			return nil, err
		}
		if sent {
			r.probeWait = min(cfg.Settle, maxProbeSettle)
		}
		cfg = r.cfg
	}
	if err := r.firstScrape(ctx); err != nil {
		return nil, err
	}
	if cfg.SaveAudioDir != "" {
		if err := os.MkdirAll(cfg.SaveAudioDir, 0o755); err != nil {
			return nil, fmt.Errorf("--save-audio: %w", err)
		}
	}
	copts, err := r.newClient()
	if err != nil {
		return nil, err
	}
	r.out.Header = r.header()
	if r.sinks, err = r.newSinks(); err != nil {
		return nil, err
	}
	r.firstBreakdownScrape()
	if isWSKind(cfg.Workload.Scenario().Kind) {
		if r.ws, err = newWSClient(&cfg, copts, r.cl); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// normalized is cfg with its defaults filled in and every output wrapped
// in the redactor of the credentials it holds, and the status line when
// there is a terminal for it (Log's lines then go above it).
func (cfg Config) normalized() (Config, *progressLine, error) {
	if cfg.Workload == nil {
		return cfg, nil, errors.New("runner: no workload")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	cfg.Redact = cfg.Redact.With(secret.FromURL(cfg.Target)...).With(secret.FromURL(cfg.MetricsURL)...).With(secret.FromURL(cfg.ASR.URL)...)
	var status *progressLine
	if cfg.Progress != nil {
		status = &progressLine{w: cfg.Progress, width: cfg.ProgressWidth}
		cfg.Log = status.above(cfg.Log)
	}
	cfg.Log = cfg.Redact.Writer(cfg.Log)
	if cfg.Out != nil {
		cfg.Out = cfg.Redact.Writer(cfg.Out)
	}
	if cfg.Scrape == "" {
		cfg.Scrape = ScrapeAuto
	}
	switch cfg.Scrape {
	case ScrapeAuto, ScrapeOn, ScrapeOff:
	default:
		return cfg, nil, fmt.Errorf("runner: scrape mode %q (want auto, on or off)", cfg.Scrape)
	}
	return cfg, status, nil
}

// release closes the client's connections and the embedded simulator.
// Every request has returned by then: closing the keep-alive connections
// rather than leaving them to the transport's idle timeout matters to sweep
// and ab, which call Run many times in one process.
func (r *run) release() {
	if r.asr != nil {
		r.asr.stop() // after drain, this returns at once
	}
	if r.cl != nil {
		r.cl.Close()
	}
	if r.sim != nil {
		_ = r.sim.Close() // a serving error after the run changes nothing measured
	}
}

// firstScrape snapshots /metrics before the load (Outcome.Before), or says
// why there is none.
func (r *run) firstScrape(ctx context.Context) error {
	cfg, out := &r.cfg, r.out
	r.metricsURL = cfg.MetricsURL
	if r.metricsURL == "" {
		r.metricsURL = r.target + "/metrics"
	}
	out.MetricsURL = secret.URL(r.metricsURL)
	if note := shardScrapeNote(*cfg); note != "" {
		out.ScrapeNote = note
		cfg.Scrape = ScrapeOff
	}
	if cfg.Scrape != ScrapeOff {
		snap, err := cfg.ScrapeOptions().FetchSettled(ctx, r.metricsURL, r.probeWait)
		switch {
		case err == nil:
			out.Before = snap
		case cfg.Scrape == ScrapeOn:
			// Printed through the command's redacting stderr.
			return fmt.Errorf("scraping before the run: %w%s", err, scrapeHint(err))
		default:
			out.ScrapeNote = cfg.Redact.String(fmt.Sprintf("not comparing with server metrics: %v%s", err, scrapeHint(err)))
			fmt.Fprintf(cfg.Log, "omnibench: %s\n", out.ScrapeNote)
		}
	}
	return nil
}

// newClient makes the HTTP client with connections for the load's peak
// (r.cl) and returns its options.
func (r *run) newClient() (client.Options, error) {
	cfg := &r.cfg
	copts := cfg.Client
	copts.BaseURL = r.target
	copts.Redact = cfg.Redact
	// Connections follow the load: as many as it can have in flight (0,
	// unbounded, for an open loop without --max-inflight). A smaller bound
	// set on purpose is said, and its wait is every request's queue_s.
	peak := cfg.Load.PeakConcurrency()
	switch {
	case copts.MaxConns == 0:
		copts.MaxConns = peak
	case peak == 0 || copts.MaxConns < peak:
		peakText := "the unbounded open loop"
		if peak > 0 {
			peakText = fmt.Sprintf("the load's peak of %d in flight", peak)
		}
		note := fmt.Sprintf("--max-conns %d < %s: requests wait for a connection (client_queue_ms)", copts.MaxConns, peakText)
		r.out.ClientNotes = append(r.out.ClientNotes, note)
		fmt.Fprintf(cfg.Log, "omnibench: %s\n", note)
	}
	files := 0
	if conns := copts.MaxConns; conns > 0 {
		files = conns + 64 // connections, plus the process's own files and listeners
		if r.simulated {
			files += conns // the embedded simulator holds the server end of each
		}
	}
	if _, err := client.EnsureFiles(files); err != nil {
		return copts, err
	}
	cl, err := client.New(copts)
	if err != nil {
		return copts, err
	}
	r.cl = cl
	return copts, nil
}

// header is the results file's first line as known before the load.
func (r *run) header() results.Header {
	cfg := &r.cfg
	h := results.Header{
		SchemaVersion: results.SchemaVersion,
		Version:       cfg.Version,
		StartedAt:     time.Now().UTC().Format(time.RFC3339Nano),
		Target:        secret.URL(r.target),
		Simulator:     r.simulated,
		Scenario:      cfg.Scenario,
		Seed:          cfg.Seed,
		Mode:          cfg.Load.Mode(),
		Concurrency:   cfg.Load.Concurrency,
		Rate:          cfg.Load.Rate,
		Arrival:       cfg.Load.Arrival,
		Flags:         redactFlags(cfg.Redact, cfg.Flags),
		SLOs:          cfg.SLOs,
	}
	shardHeader(&h, *cfg)
	return h
}

// drive runs the load: every request's job, the record queue that takes
// each finished record to the sinks, the progress line and the load
// generator's self-monitoring. It returns once every record is consumed.
func (r *run) drive(ctx context.Context) (load.Stats, error) {
	cfg, out, col := &r.cfg, r.out, r.col
	lcfg := r.loadConfig()
	var stopProgress func()
	if r.status != nil {
		stopProgress = startProgress(r.status, col, &lcfg)
	}
	// Say at once what an interrupt does (a second one is handled by load,
	// see load.WithAbort).
	stopNotice := context.AfterFunc(ctx, func() {
		if n := col.inFlight(); n > 0 && lcfg.Grace > 0 {
			fmt.Fprintf(cfg.Log, "omnibench: interrupted: finishing %d in-flight requests for up to %s; Ctrl-C again to stop now\n", n, lcfg.Grace)
		} else {
			fmt.Fprintf(cfg.Log, "omnibench: interrupted: cancelling %d in-flight requests\n", n)
		}
	})
	announceStart(*cfg)
	mon := selfmon.Start(selfmon.Options{Streams: col.inFlight, OnSample: cfg.OnHealth})
	r.records = startRecordQueue(recordQueueCap, r.consumer())
	stopScrapes := r.startIntervalScrapes(ctx)
	lstats, runErr := load.Run(ctx, lcfg, r.job)
	stopScrapes()
	r.records.close() // load.Run returns once every job has: no record can follow
	health := mon.Stop()
	out.Health = &health
	stopNotice()
	r.cl.WaitDrains(ctx) // the server has sent every response through before the second scrape
	if stopProgress != nil {
		stopProgress()
	}
	out.Load = lstats
	r.begin() // interrupted before the measured phase began: they go ahead all the same
	if lcfg.StoppedByCount(lstats) {
		out.note(cfg.Log, fmt.Sprintf("the count bound (%d requests) stopped the run after %s, before the duration bound %s",
			lcfg.Requests, lstats.Window.Round(time.Millisecond), lcfg.Duration))
	}
	out.Interrupted = lstats.Interrupted || ctx.Err() != nil
	if out.Interrupted {
		out.InterruptedDuring = InterruptedLoad
	}
	return lstats, runErr
}

// loadConfig is the load's configuration with the run's hooks: dropped
// arrivals to Config.OnDrop, the measured phase's start to the sinks that
// wait for it.
func (r *run) loadConfig() load.Config {
	lcfg := r.cfg.Load
	if r.cfg.OnDrop != nil {
		lcfg.OnDrop = r.cfg.OnDrop
	}
	lcfg.OnBegin = func(late time.Duration) {
		r.out.MeasuredFrom = time.Now()
		r.bd.began(r.out.MeasuredFrom)
		r.out.Header.StartLateS = late.Seconds()
		r.begin()
	}
	return lcfg
}

// begin tells the sinks that wait for it that the measured phase began,
// with the header as it is now; a sink takes only the first call.
func (r *run) begin() {
	for _, s := range r.sinks {
		if b, ok := s.(beginner); ok {
			r.sinkErr.keep(b.begin(r.out.Header))
		}
	}
}

// consumer takes a finished record to every sink, on the record queue's
// goroutine (see recordQueue).
func (r *run) consumer() func(*results.Record, *bytes.Buffer) {
	// Taken now: the load's start writes the header while records flow.
	origin := r.out.Header.LatencyOrigin()
	return func(rec *results.Record, audio *bytes.Buffer) {
		// Every kind's record (HTTP and WebSocket) says its latency origin.
		rec.LatencyOrigin = origin
		redactRecord(r.cfg.Redact, rec)
		for _, s := range r.sinks {
			if err := s.add(rec, audio); err != nil {
				r.sinkErr.keep(err)
			}
		}
	}
}

// deliver hands a job's finished record over; the job must not touch it
// afterwards.
func (r *run) deliver(rec *results.Record, audio *bytes.Buffer) {
	r.col.finished()
	r.records.put(rec, audio)
}

// job sends the request (or WebSocket session) of one arrival.
func (r *run) job(jctx context.Context, a load.Arrival) {
	cfg := &r.cfg
	if r.ws != nil {
		sess := wsSession(cfg.Workload, cfg.Seed, cfg.WS, a)
		keep := wsKeep{audio: cfg.SaveAudioDir != "" || r.asr != nil, text: r.asr != nil}
		runWSSession(jctx, r.ws, sess, cfg.WS.turns(), a, keep, func() {
			r.col.started()
			if cfg.OnStart != nil {
				cfg.OnStart(a)
			}
		}, func(i int, rec *results.Record, audio *bytes.Buffer, said string) {
			if r.asr != nil {
				r.asr.refs.put(rec.ID, wsReference(sess, i, said))
			}
			r.deliver(rec, audio)
		})
		return
	}
	spec := cfg.Workload.Request(a.Seq, cfg.Seed)
	rec := results.Record{
		ID:        fmt.Sprintf("req-%06d", a.Seq),
		Seq:       a.Seq,
		Warmup:    a.Warmup,
		Phase:     a.Phase,
		IntendedS: a.Intended.Seconds(),
	}
	rec.SentS = time.Since(a.Start).Seconds()
	rec.LagS = rec.SentS - rec.IntendedS
	r.col.started()
	if cfg.OnStart != nil {
		cfg.OnStart(a)
	}
	req := clientRequest(spec)
	var audio *bytes.Buffer
	if cfg.SaveAudioDir != "" || r.asr != nil {
		audio = new(bytes.Buffer)
		req.AudioOut = audio
	}
	var text *cappedText
	if r.asr != nil && spec.Kind == results.KindChat {
		text = new(cappedText)
		req.TextOut = text
	}
	r.cl.Do(jctx, req, &rec)
	if r.asr != nil {
		r.asr.refs.put(rec.ID, asrReference(spec, text))
	}
	r.deliver(&rec, audio)
}

// finish takes the second scrape, computes the summary and the verdicts,
// closes the sinks and says how the run ended.
func (r *run) finish(ctx context.Context, lstats load.Stats, runErr error) (*Outcome, error) {
	cfg, out := &r.cfg, r.out
	if out.Before != nil && !out.Interrupted {
		r.secondScrape(ctx)
	}
	r.computeBreakdown()

	out.checkServerStats(cfg.Log)
	if r.asr != nil {
		r.asr.drain(ctx, cfg.Log, out)
	}
	out.Summary = summary.ComputeSet(out.Set, cfg.Summary)
	out.Summary.SetDropped(lstats.Dropped)
	if !r.simulated && !out.Interrupted {
		out.note(cfg.Log, modelHintFor(ctx, tlsconf.Client(cfg.Client.TLSConfig), r.target, cfg.Client.APIKey, r.refused.model))
	}
	out.note(cfg.Log, certificateHint(out.Summary.Errors))
	out.Summary.Mode = cfg.Load.Mode()
	out.Health.Judge(cfg.SelfMon, selfmon.Circumstances{StampP99MS: stampDelayP99(out.Set),
		Server: serverPlace(r.target, r.simulated || cfg.ServerInProcess), Streams: cfg.Load.PeakConcurrency()})
	if w := out.Health.Warning(); w != "" {
		fmt.Fprintf(cfg.Log, "omnibench: warning: %s\n", w)
	}
	for _, s := range r.sinks {
		r.sinkErr.keep(s.close(out))
	}

	switch {
	case runErr != nil && !errors.Is(runErr, context.Canceled):
		return out, runErr
	case r.sinkErr.get() != nil:
		return out, fmt.Errorf("writing results: %w", r.sinkErr.get())
	case out.Interrupted:
		return out, context.Canceled
	}
	return out, nil
}

// secondScrape snapshots /metrics after the --settle wait and diffs it
// with the first (Outcome.After, Delta), or says why there is none.
func (r *run) secondScrape(ctx context.Context) {
	cfg, out := &r.cfg, r.out
	if cfg.Settle >= time.Second {
		fmt.Fprintf(cfg.Log, "omnibench: waiting %s (--settle) before the second scrape; Ctrl-C skips it\n", cfg.Settle)
	}
	after, err := cfg.ScrapeOptions().FetchSettled(ctx, r.metricsURL, cfg.Settle)
	switch {
	case ctx.Err() != nil:
		// Interrupted during the settle wait: the requests are all
		// measured, the server's side is not.
		out.Interrupted, out.InterruptedDuring = true, InterruptedSettle
		out.ScrapeNote = "interrupted during the --settle wait: no second scrape, no server-side comparison"
		fmt.Fprintf(cfg.Log, "omnibench: %s\n", out.ScrapeNote)
	case err != nil:
		out.ScrapeNote = cfg.Redact.String(fmt.Sprintf("second scrape failed: %v%s", err, scrapeHint(err)))
		fmt.Fprintf(cfg.Log, "omnibench: %s\n", out.ScrapeNote)
	default:
		out.After = after
		if d, err := diffSnapshots(out.Before, after); err != nil {
			out.ScrapeNote = err.Error()
		} else {
			out.Delta = d
		}
	}
}

func diffSnapshots(before, after *scrape.Snapshot) (*scrape.Delta, error) {
	bf, err := before.Families()
	if err != nil {
		return nil, fmt.Errorf("parsing the first /metrics snapshot: %w", err)
	}
	af, err := after.Families()
	if err != nil {
		return nil, fmt.Errorf("parsing the second /metrics snapshot: %w", err)
	}
	return scrape.Diff(bf, af), nil
}

func clientRequest(s scenarios.RequestSpec) client.Request {
	return client.Request{
		Kind:          s.Kind,
		Endpoint:      s.Endpoint,
		Model:         s.Model,
		Voice:         s.Voice,
		Prompt:        s.Prompt,
		AudioFormat:   s.AudioFormat,
		Modalities:    s.Modalities,
		ExtraBody:     s.ExtraBody,
		Headers:       s.Headers,
		PCMSampleRate: s.PCMSampleRate,

		InputAudio:      s.InputAudio,
		AudioInputStyle: s.AudioInputStyle,
		RefAudio:        s.RefAudio,
		RefText:         s.RefText,
	}
}

// clientHealth is the verdict as the results file's last line keeps it.
func clientHealth(h *selfmon.Report) results.ClientHealth {
	return results.ClientHealth{Saturated: h.Saturated, Cause: string(h.Cause), Warning: h.Warning(),
		ClientDelayMS: h.ClientDelayMS, Reasons: h.Reasons}
}

// stampDelayP99 is the p99 send-stamp delay in ms over the measured
// records' events; nil when the server does not stamp.
func stampDelayP99(set *summary.Set) *float64 {
	v, ok := set.StampDelayPercentileMS(99)
	if !ok {
		return nil
	}
	return &v
}
