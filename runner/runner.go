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
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/omnibench/omnibench/client"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/secret"
	"github.com/omnibench/omnibench/selfmon"
	"github.com/omnibench/omnibench/simulator"
	"github.com/omnibench/omnibench/stats"
	"github.com/omnibench/omnibench/summary"
	"github.com/omnibench/omnibench/tlsconf"
	"github.com/omnibench/omnibench/wav"
	"github.com/omnibench/omnibench/wsclient"
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

	// Out receives the results JSONL as the run goes (nil: none).
	Out io.Writer
	// Log receives notices (stderr).
	Log io.Writer
	// Progress, when set, receives a live status line twice a second.
	Progress io.Writer

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

	// SelfMon holds the thresholds at which the load generator counts as
	// saturated (see selfmon.Report.Judge).
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
	Worst   *report.WorstPicker
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
	if cfg.Workload == nil {
		return nil, errors.New("runner: no workload")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	cfg.Redact = cfg.Redact.With(secret.FromURL(cfg.Target)...).With(secret.FromURL(cfg.MetricsURL)...)
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
		return nil, fmt.Errorf("runner: scrape mode %q (want auto, on or off)", cfg.Scrape)
	}

	target, targetNote, err := ParseTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	out := &Outcome{}
	for _, n := range append(slices.Clone(cfg.Notes), targetNote) {
		out.note(cfg.Log, n)
	}
	simulated := target == ""
	if simulated {
		// The simulator outlives an interrupt until the last record is
		// written: it is closed explicitly below.
		sim, err := simulator.Start(context.WithoutCancel(ctx), cfg.Simulator)
		if err != nil {
			return nil, fmt.Errorf("starting the embedded simulator: %w", err)
		}
		defer sim.Close()
		target = sim.URL
		fmt.Fprintf(cfg.Log, "omnibench: no --url given: started the embedded simulator at %s\n", sim.URL)
	}

	metricsURL := cfg.MetricsURL
	if metricsURL == "" {
		metricsURL = target + "/metrics"
	}
	out.MetricsURL = redactURL(metricsURL)
	if note := shardScrapeNote(cfg); note != "" {
		out.ScrapeNote = note
		cfg.Scrape = ScrapeOff
	}
	if cfg.Scrape != ScrapeOff {
		snap, err := cfg.ScrapeOptions().Fetch(ctx, metricsURL)
		switch {
		case err == nil:
			out.Before = snap
		case cfg.Scrape == ScrapeOn:
			// Printed through the command's redacting stderr.
			return nil, fmt.Errorf("scraping before the run: %w%s", err, scrapeHint(err))
		default:
			out.ScrapeNote = cfg.Redact.String(fmt.Sprintf("not comparing with server metrics: %v%s", err, scrapeHint(err)))
			fmt.Fprintf(cfg.Log, "omnibench: %s\n", out.ScrapeNote)
		}
	}

	if cfg.SaveAudioDir != "" {
		if err := os.MkdirAll(cfg.SaveAudioDir, 0o755); err != nil {
			return nil, fmt.Errorf("--save-audio: %w", err)
		}
	}

	copts := cfg.Client
	copts.BaseURL = target
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
		out.ClientNotes = append(out.ClientNotes, note)
		fmt.Fprintf(cfg.Log, "omnibench: %s\n", note)
	}
	files := 0
	if conns := copts.MaxConns; conns > 0 {
		files = conns + 64 // connections, plus the process's own files and listeners
		if simulated {
			files += conns // the embedded simulator holds the server end of each
		}
	}
	if _, err := client.EnsureFiles(files); err != nil {
		return nil, err
	}
	cl, err := client.New(copts)
	if err != nil {
		return nil, err
	}
	// Every request has returned when Run does: close the keep-alive
	// connections rather than leave them to the transport's idle timeout
	// (sweep and ab call Run many times in one process).
	defer cl.Close()

	out.Header = results.Header{
		SchemaVersion: results.SchemaVersion,
		Version:       cfg.Version,
		StartedAt:     time.Now().UTC().Format(time.RFC3339Nano),
		Target:        redactURL(target),
		Simulator:     simulated,
		Scenario:      cfg.Scenario,
		Seed:          cfg.Seed,
		Mode:          cfg.Load.Mode(),
		Concurrency:   cfg.Load.Concurrency,
		Rate:          cfg.Load.Rate,
		Arrival:       cfg.Load.Arrival,
		Flags:         redactFlags(cfg.Redact, cfg.Flags),
		SLOs:          cfg.SLOs,
	}
	shardHeader(&out.Header, cfg)
	var w *headerGate
	if cfg.Out != nil {
		w = newHeaderGate(results.NewWriter(cfg.Out), !cfg.Load.StartAt.IsZero())
		if err := w.WriteHeader(out.Header); err != nil {
			return nil, err
		}
	}

	col := &collector{set: summary.NewSet()}
	var writeErr error
	var writeOnce sync.Once
	// consume takes a finished record to every consumer, on the record
	// queue's goroutine (see recordQueue).
	var undecodedOnce sync.Once
	// Taken now: the load's start writes the header while records flow.
	origin := out.Header.LatencyOrigin()
	consume := func(rec *results.Record, audio *bytes.Buffer) {
		// Every kind's record (HTTP and WebSocket) says its latency origin.
		rec.LatencyOrigin = origin
		col.add(rec)
		if audio != nil && rec.HasAudio() && audio.Len() == 0 {
			// Measured from file headers, never decoded (Ogg Opus, MPEG 2.5
			// MP3, FLAC the decoder refuses): a WAV would be empty.
			undecodedOnce.Do(func() {
				fmt.Fprintf(cfg.Log, "omnibench: --save-audio: response %s (and any other whose audio was measured from its file headers without being decoded: Ogg Opus, MPEG 2.5 MP3) has no decoded PCM; no WAV written for it\n", rec.ID)
			})
		} else if audio != nil && rec.HasAudio() {
			if err := saveAudio(cfg.SaveAudioDir, rec, audio.Bytes()); err != nil {
				writeOnce.Do(func() { writeErr = err })
			}
		}
		if w != nil {
			if err := w.Write(rec); err != nil {
				writeOnce.Do(func() { writeErr = err })
			}
		}
		if cfg.OnRecord != nil {
			cfg.OnRecord(rec)
		}
	}
	var records *recordQueue // started with the load, below
	// deliver hands a job's finished record over; the job must not touch
	// it afterwards.
	deliver := func(rec *results.Record, audio *bytes.Buffer) {
		col.finished()
		records.put(rec, audio)
	}
	var ws *wsclient.Client
	if isWSKind(cfg.Workload.Scenario().Kind) {
		if ws, err = wsclient.New(wsclient.Options{
			BaseURL: target, APIKey: copts.APIKey, Timeout: copts.Timeout, IdleTimeout: copts.IdleTimeout,
			MaxMessageBytes: cfg.WS.MaxMessageBytes, TLSConfig: copts.TLSConfig,
		}, cl); err != nil {
			return nil, err
		}
	}
	job := func(jctx context.Context, a load.Arrival) {
		if ws != nil {
			sess := wsSession(cfg.Workload, cfg.Seed, cfg.WS, a)
			runWSSession(jctx, ws, sess, cfg.WS.turns(), a, cfg.SaveAudioDir != "", func() {
				col.started()
				if cfg.OnStart != nil {
					cfg.OnStart(a)
				}
			}, deliver)
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
		col.started()
		if cfg.OnStart != nil {
			cfg.OnStart(a)
		}
		req := clientRequest(spec)
		var audio *bytes.Buffer
		if cfg.SaveAudioDir != "" {
			audio = new(bytes.Buffer)
			req.AudioOut = audio
		}
		cl.Do(jctx, req, &rec)
		deliver(&rec, audio)
	}

	lcfg := cfg.Load
	if cfg.OnDrop != nil {
		lcfg.OnDrop = cfg.OnDrop
	}
	lcfg.OnBegin = func(late time.Duration) {
		out.Header.StartLateS = late.Seconds()
		if w != nil {
			if err := w.open(out.Header); err != nil {
				writeOnce.Do(func() { writeErr = err })
			}
		}
	}
	var stopProgress func()
	if cfg.Progress != nil {
		stopProgress = startProgress(cfg.Progress, col, lcfg)
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
	announceStart(cfg)
	mon := selfmon.Start(selfmon.Options{Streams: col.inFlight, OnSample: cfg.OnHealth})
	records = startRecordQueue(recordQueueCap, consume)
	lstats, runErr := load.Run(ctx, lcfg, job)
	records.close() // load.Run returns once every job has: no record can follow
	health := mon.Stop()
	out.Health = &health
	stopNotice()
	cl.WaitDrains(ctx) // the server has sent every response through before the second scrape
	if stopProgress != nil {
		stopProgress()
	}
	out.Load = lstats
	if w != nil { // interrupted before the measured phase began
		if err := w.open(out.Header); err != nil {
			writeOnce.Do(func() { writeErr = err })
		}
	}
	if lcfg.StoppedByCount(lstats) {
		out.note(cfg.Log, fmt.Sprintf("the count bound (%d requests) stopped the run after %s, before the duration bound %s",
			lcfg.Requests, lstats.Window.Round(time.Millisecond), lcfg.Duration))
	}
	out.Interrupted = lstats.Interrupted || ctx.Err() != nil
	if out.Interrupted {
		out.InterruptedDuring = InterruptedLoad
	}
	out.Set, out.Worst = col.set, &col.worst

	if out.Before != nil && !out.Interrupted {
		if cfg.Settle >= time.Second {
			fmt.Fprintf(cfg.Log, "omnibench: waiting %s (--settle) before the second scrape; Ctrl-C skips it\n", cfg.Settle)
		}
		after, err := cfg.ScrapeOptions().FetchSettled(ctx, metricsURL, cfg.Settle)
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

	out.checkServerStats(cfg.Log)
	out.Summary = summary.ComputeSet(out.Set, cfg.Summary)
	out.Summary.SetDropped(lstats.Dropped)
	if !simulated && !out.Interrupted {
		out.note(cfg.Log, modelHintFor(ctx, tlsconf.Client(cfg.Client.TLSConfig), target, cfg.Client.APIKey, col.refusedModel))
	}
	out.note(cfg.Log, certificateHint(out.Summary.Errors))
	out.Summary.Mode = lcfg.Mode()
	out.Health.Judge(cfg.SelfMon, stampDelayP99(out.Set))
	if w := out.Health.Warning(); w != "" {
		fmt.Fprintf(cfg.Log, "omnibench: warning: %s\n", w)
	}
	// The verdict is known only now: it is the results file's last line,
	// which compare reads (a run killed before here leaves none).
	if w != nil {
		ch := results.ClientHealth{Saturated: out.Health.Saturated, ClientDelayMS: out.Health.ClientDelayMS, Reasons: out.Health.Reasons}
		if err := w.w.WriteClient(ch); err != nil {
			writeOnce.Do(func() { writeErr = err })
		}
	}

	switch {
	case runErr != nil && !errors.Is(runErr, context.Canceled):
		return out, runErr
	case writeErr != nil:
		return out, fmt.Errorf("writing results: %w", writeErr)
	case out.Interrupted:
		return out, context.Canceled
	}
	return out, nil
}

// saveAudio writes one response's PCM as a WAV file.
func saveAudio(dir string, rec *results.Record, pcm []byte) error {
	f := wav.Format{SampleRate: rec.SampleRate, Channels: rec.Channels, BitsPerSample: 8 * rec.SampleWidth}
	path := filepath.Join(dir, rec.ID+".wav")
	if err := os.WriteFile(path, wav.Encode(f, pcm), 0o644); err != nil {
		return fmt.Errorf("--save-audio: %w", err)
	}
	return nil
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

// collector gathers the finished requests of concurrent jobs: their figures
// (a summary.Set), the worst response's record and the first model the
// server refused, never the records themselves.
type collector struct {
	mu           sync.Mutex
	set          *summary.Set
	worst        report.WorstPicker
	refusedModel string // see modelRefused
	inflight     int
	failed       int
	done         int
	ttfpMS       []float64 // recent TTFP values for the progress line
}

func (c *collector) started() {
	c.mu.Lock()
	c.inflight++
	c.mu.Unlock()
}

// finished counts a request as no longer in flight, as soon as its job
// hands the record over (before add has it).
func (c *collector) finished() {
	c.mu.Lock()
	c.inflight--
	c.mu.Unlock()
}

func (c *collector) add(r *results.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set.Add(r)
	c.worst.Offer(r)
	if m, ok := modelRefused(r); ok && c.refusedModel == "" {
		c.refusedModel = m
	}
	if r.Warmup {
		return
	}
	c.done++
	if !r.OK() {
		c.failed++
	} else if r.HasAudio() {
		if len(c.ttfpMS) == progressWindow {
			copy(c.ttfpMS, c.ttfpMS[1:])
			c.ttfpMS = c.ttfpMS[:progressWindow-1]
		}
		c.ttfpMS = append(c.ttfpMS, r.Latency(r.TTFPS)*1000) // as the report will show it
	}
}

// inFlight is the number of requests started and not finished.
func (c *collector) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inflight
}

// stampDelayP99 is the p99 send-stamp delay in ms over the measured
// records' events; nil when the server does not stamp.
func stampDelayP99(set *summary.Set) *float64 {
	var ms []float64
	set.StampDelaysS(func(d float64) { ms = append(ms, d*1000) })
	if len(ms) == 0 {
		return nil
	}
	v := stats.PercentileSelect(ms, 99)
	return &v
}
