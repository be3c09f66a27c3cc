package main

import (
	"context"
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

	"github.com/omnibench/omnibench/client"
	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/onset"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/runner"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/secret"
	"github.com/omnibench/omnibench/selfmon"
	"github.com/omnibench/omnibench/simulator"
	"github.com/omnibench/omnibench/slo"
	"github.com/omnibench/omnibench/sse"
	"github.com/omnibench/omnibench/summary"
	"github.com/omnibench/omnibench/tlsconf"
)

// runOptions are the flags of `omnibench run` (and of the commands that run
// the same workload: sweep, capacity, ab).
type runOptions struct {
	url      string
	scenario string

	// scenario overrides
	kind, model, voice, audioFormat, prompts, extraBody string
	audioInputStyle                                     string
	modalities                                          []string
	headers                                             []string
	pcmRate                                             int
	apiKey                                              string

	// load
	concurrency int
	rate        rateFlag
	rampUp      time.Duration
	stages      string
	includeRamp bool
	maxConns    int
	transport   string // --http-transport
	delayLimit  time.Duration
	cpuLimit    float64
	arrival     string
	burstiness  float64
	requests    int
	duration    time.Duration
	warmup      int
	maxInflight int
	seed        int64
	grace       time.Duration
	noProbe     bool

	// client
	timeout, idleTimeout time.Duration
	maxEventBytes        int
	audibleDB            float64
	thresholds           []string
	mode                 string
	prebuffer            time.Duration
	prebufferMaxWait     time.Duration

	// report
	percentiles []float64
	goodput     string
	format      string
	wide        bool
	out         string
	summaryOut  string

	// scrape
	scrape     string
	metricsURL string
	settle     time.Duration
	accept     string
	// scrape bounds (docs/reliability.md)
	scrapeTimeout    time.Duration
	scrapeMaxBytes   int64
	scrapeMaxSamples int
	// --scrape-interval: scrapes during the load for the breakdown
	scrapeInterval time.Duration

	// WebSocket kinds (speech-ws, realtime)
	ws wsFlags

	// TLS: --ca-file, --insecure
	tls tlsFlags

	// embedded simulator
	simCapacity int
	simStats    bool

	// run-only outputs (SLO gates, JUnit, HTML, saved audio)
	outputs runOutputs
	// maxErrorRate is run's failure-rate gate: the SLO error_rate<=X.
	maxErrorRate float64

	// client-side metrics exporter (run only; see run_metrics.go)
	metrics metricsOptions

	// one shard of a test split over processes (run only; see run_shard.go)
	shard shardOptions
}

func newRunCmd() *cobra.Command { return newRunCmdWith(&runOptions{}) }

// newRunCmdWith is the run command bound to o (kube render checks the run
// flags it passes to the pods with it).
func newRunCmdWith(o *runOptions) *cobra.Command {
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
			return o.run(cmd.Context(), cmd)
		},
	}
	o.addFlags(cmd.Flags())
	addWideFlag(cmd.Flags(), &o.wide)
	o.metrics.addFlags(cmd.Flags()) // run only: sweep, capacity and ab do not export
	o.outputs.addFlags(cmd.Flags())
	cmd.Flags().Float64Var(&o.maxErrorRate, "max-error-rate", 0.5,
		"fail (exit 3, like a missed SLO) when more than this fraction of measured requests failed; 1 = no gate")
	o.shard.addFlags(cmd.Flags())
	return cmd
}

func (o *runOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.url, "url", "", "server base URL (e.g. http://127.0.0.1:8000); empty starts the embedded simulator")
	f.StringVar(&o.scenario, "scenario", "chat-voice", "built-in scenario `NAME` or a scenario YAML FILE (list them with: omnibench scenarios)")

	f.StringVar(&o.kind, "kind", "", "request kind: chat, speech (raw byte stream), speech-sse, speech-ws, realtime or realtime-audio (WebSocket sessions; overrides the scenario)")
	f.StringVar(&o.model, "model", "", "model name (overrides the scenario)")
	f.StringVar(&o.voice, "voice", "", "voice (overrides the scenario)")
	f.StringVar(&o.audioFormat, "audio-format", "", "audio format: wav, pcm or (chat) flac, mp3, opus (overrides the scenario)")
	f.StringSliceVar(&o.modalities, "modalities", nil, "chat output modalities, e.g. text,audio (overrides the scenario)")
	f.StringVar(&o.prompts, "prompts", "", "prompt source: builtin:SET, a JSONL file ({\"prompt\": ..., \"audio\": FILE} per line), a text file (one per line) or a directory of audio files")
	f.StringVar(&o.audioInputStyle, "audio-input-style", "", "how chat sends a prompt's audio: input_audio (default) or audio_url (a data: URL) (overrides the scenario)")
	f.StringVar(&o.extraBody, "extra-body", "", "JSON object merged into every request body")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "extra request header \"Name: value\" (repeatable)")
	f.IntVar(&o.pcmRate, "pcm-sample-rate", 0, fmt.Sprintf("sample rate of raw PCM audio in Hz (default %d with --audio-format pcm, else the scenario's)", defaultPCMSampleRate))
	f.StringVar(&o.apiKey, "api-key", "", "API key sent as a bearer token (default $OMNIBENCH_API_KEY); never written anywhere")

	f.IntVarP(&o.concurrency, "concurrency", "c", 0, "closed loop: concurrent workers (default from the scenario, else 4)")
	f.Var(&o.rate, "rate", "open loop: arrivals per second (0 = closed loop), or START:END for a linear rate ramp over --ramp-up (e.g. 1:20)")
	f.DurationVar(&o.rampUp, "ramp-up", 0, "closed loop: start the workers evenly over this time; open loop: ramp the rate from START to END (--rate START:END) over it")
	f.StringVar(&o.stages, "stages", "", "closed loop: worker targets over time as DURATION:TARGET,... (k6 stages, e.g. 30s:100,2m:100,30s:0); the run ends with the last stage")
	f.BoolVar(&o.includeRamp, "include-ramp", false, "keep the requests started during a ramp (--ramp-up, --stages) in the figures")
	f.IntVar(&o.maxConns, "max-conns", 0, "cap on client connections (0 = follow the load: concurrency, --max-inflight or the peak stage); requests over it wait, reported as client_queue_ms")
	f.StringVar(&o.transport, "http-transport", client.TransportOwn, "HTTP/1.1 transport of the HTTP kinds: own (omnibench's, lighter on CPU at many streams) or std (Go's net/http); both measure the same")
	f.DurationVar(&o.delayLimit, "client-delay-threshold", selfmon.DefaultDelay, "the load generator's delay is warned about, with its cause (its own CPU, a busy host, the server on its cores), when its scheduling latency or send-stamp delay p99 exceeds this")
	f.Float64Var(&o.cpuLimit, "client-cpu-threshold", selfmon.DefaultCPUShare, "the load generator counts as saturated (the client is the bottleneck: ab and capacity refuse) when its CPU exceeds this share of its usable cores")
	f.StringVar(&o.arrival, "arrival", "", "open-loop arrivals: constant, poisson or gamma (default poisson)")
	f.Float64Var(&o.burstiness, "burstiness", 0, "gamma shape of open-loop gaps (1 = Poisson, <1 burstier)")
	f.IntVarP(&o.requests, "requests", "n", 0, "measured requests; 0 = no count bound (default from the scenario, else 20; none with -d alone)")
	f.DurationVarP(&o.duration, "duration", "d", 0, "schedule requests for this long; alone it runs the whole duration, with -n whichever comes first")
	f.IntVar(&o.warmup, "warmup", -1, "warm-up requests sent first and excluded from the figures (default from the scenario, else 0)")
	f.IntVar(&o.maxInflight, "max-inflight", 0, "open loop: cap on requests in flight; arrivals beyond it are counted as dropped (0 = no cap)")
	f.Int64Var(&o.seed, "seed", 1, "seed of the arrival schedule and the prompt order")
	f.DurationVar(&o.grace, "grace", 5*time.Second, "on Ctrl-C, how long in-flight requests may finish before they are cancelled")
	f.BoolVar(&o.noProbe, "no-probe", false, "with --url: skip the probe request sent before the run (it stops the run when the server refuses the connection, the credentials, the route or the model)")

	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "whole-request timeout")
	f.DurationVar(&o.idleTimeout, "idle-timeout", 30*time.Second, "fail a request when no byte arrives for this long")
	f.IntVar(&o.maxEventBytes, "max-event-bytes", sse.DefaultMaxEventBytes, "cap on one SSE line and one event's data, bytes; a larger one fails the request as malformed")
	f.Float64Var(&o.audibleDB, "audible-threshold", onset.DefaultThresholdDBFS,
		"audio counts as audible (ttfa_audible) when its 10 ms RMS level is above this, dBFS")
	f.StringSliceVar(&o.thresholds, "threshold", []string{"0.1"}, "continuity thresholds, seconds or durations (repeatable)")
	f.StringVar(&o.mode, "continuity-mode", "default", "continuity simulation: default or reference (bit-compatible with the server)")
	f.DurationVar(&o.prebuffer, "prebuffer", 200*time.Millisecond, "pre-roll player: audio buffered before playback starts")
	f.DurationVar(&o.prebufferMaxWait, "prebuffer-max-wait", 0, "pre-roll player: start anyway after this long (0 = wait for the buffer)")

	f.Float64SliceVar(&o.percentiles, "percentiles", nil, "percentiles to report, a comma-separated `LIST` (default 50,90,95,99)")
	f.StringVar(&o.goodput, "goodput", "", "per-request SLOs for goodput, e.g. ttfp:500ms,e2e:10s,rtf:1")
	f.StringVar(&o.format, "format", "table", "report format: table, markdown, json or csv")
	f.StringVar(&o.out, "out", "", "write one JSON line per request (plus a header line) to this file as the run goes")
	f.StringVar(&o.summaryOut, "summary", "", "write the run summary (versioned JSON schema) to this file")

	f.StringVar(&o.scrape, "scrape", "auto", "scrape the server's /metrics before and after: auto, on or off")
	f.StringVar(&o.metricsURL, "metrics-url", "", "metrics URL (default URL/metrics)")
	f.DurationVar(&o.settle, "settle", 500*time.Millisecond, "wait after the last response before the second scrape")
	f.StringVar(&o.accept, "accept", "auto", "exposition format to ask for: auto, proto, openmetrics or text")
	f.DurationVar(&o.scrapeTimeout, "scrape-timeout", scrape.DefaultTimeout, "give up on one /metrics scrape after this long (it becomes a note)")
	f.Int64Var(&o.scrapeMaxBytes, "scrape-max-bytes", scrape.MaxBodyBytes, "largest /metrics body read, in bytes")
	f.IntVar(&o.scrapeMaxSamples, "scrape-max-samples", scrape.DefaultMaxSamples, "most /metrics samples (lines with a value) decoded")
	f.DurationVar(&o.scrapeInterval, "scrape-interval", 0, "also scrape /metrics this often during the run, for the breakdown's timeline "+
		"(default 5s when --duration is over a minute, else off; 0 = off)")

	o.ws.addFlags(f)
	o.tls.addFlags(f)

	f.IntVar(&o.simCapacity, "sim-capacity", 0, "embedded simulator: streams served at full speed (0 = unlimited)")
	f.BoolVar(&o.simStats, "sim-log-stats", true, "embedded simulator: record server-side metrics (--log-stats)")
}

// plan turns the flags into a runner configuration. It reads only flags,
// the scenario and the environment, so every error names its flag or file.
func (o *runOptions) plan(f *pflag.FlagSet) (runner.Config, *scenarios.Scenario, error) {
	var cfg runner.Config
	sc, err := scenarios.Open(o.scenario)
	if err != nil {
		return cfg, nil, err
	}
	if _, _, err := runner.ParseTarget(o.url); err != nil {
		return cfg, nil, err
	}
	sc = sc.Clone()
	var notes []string
	if f.Changed("kind") {
		notes = sc.SetKind(o.kind)
	}
	if f.Changed("model") {
		sc.Model = o.model
	}
	if f.Changed("voice") {
		sc.Voice = o.voice
	}
	if f.Changed("audio-format") {
		sc.AudioFormat = o.audioFormat
	}
	if f.Changed("modalities") {
		sc.Modalities = o.modalities
	}
	if f.Changed("prompts") {
		sc.PromptSpec.Source = o.prompts
	}
	if f.Changed("audio-input-style") {
		sc.AudioInputStyle = o.audioInputStyle
	}
	if f.Changed("pcm-sample-rate") {
		sc.PCMSampleRate = o.pcmRate
	} else if f.Changed("audio-format") && sc.AudioFormat == scenarios.FormatPCM && sc.PCMSampleRate == 0 {
		sc.PCMSampleRate = defaultPCMSampleRate // raw PCM states no rate: the flag's documented default
	}
	if o.extraBody != "" {
		var extra map[string]any
		if err := json.Unmarshal([]byte(o.extraBody), &extra); err != nil {
			return cfg, nil, fmt.Errorf("--extra-body: not a JSON object: %w", err)
		}
		if sc.ExtraBody == nil {
			sc.ExtraBody = map[string]any{}
		}
		for k, v := range extra {
			sc.ExtraBody[k] = v
		}
	}
	apiKey := o.apiKey
	if apiKey == "" {
		apiKey = os.Getenv("OMNIBENCH_API_KEY")
	}
	creds, err := o.applyHeaders(sc, apiKey != "")
	if err != nil {
		return cfg, nil, err
	}
	wl, err := sc.Workload()
	if err != nil {
		return cfg, nil, nameFlags(err, f)
	}
	if len(creds) > 0 {
		wl = wl.WithHeaders(creds)
	}

	for _, c := range []struct {
		name string
		bad  bool
		want string
	}{
		{"concurrency", o.concurrency < 1, "at least 1"},
		{"requests", o.requests < 0, "0 or more (0 = no count bound)"},
		{"warmup", o.warmup < 0, "0 or more"},
		{"duration", o.duration < 0, "0 or more"},
		{"max-inflight", o.maxInflight < 0, "0 or more (0 = no cap)"},
		{"max-conns", o.maxConns < 0, "0 or more (0 = follow the load)"},
		{"ramp-up", o.rampUp < 0, "0 or more"},
		{"client-delay-threshold", o.delayLimit <= 0, "greater than 0"},
		{"client-cpu-threshold", !(o.cpuLimit > 0 && o.cpuLimit <= 1), "a share in (0, 1]"},
		{"timeout", o.timeout < 0, "0 or more"},
		{"idle-timeout", o.idleTimeout < 0, "0 or more"},
		{"scrape-timeout", o.scrapeTimeout <= 0, "greater than 0"},
		{"scrape-max-bytes", o.scrapeMaxBytes <= 0, "greater than 0"},
		{"scrape-max-samples", o.scrapeMaxSamples <= 0, "greater than 0"},
		{"scrape-interval", o.scrapeInterval < 0, "0 or more (0 = off)"},
		{"max-event-bytes", o.maxEventBytes < 1, "at least 1"},
		{"audible-threshold", !(o.audibleDB >= onset.MinThresholdDBFS && o.audibleDB < 0), "in [-90, 0) dBFS"},
	} {
		// sweep and capacity bind their own --concurrency (a level list);
		// only a flag bound to these options is checked here.
		if fl := f.Lookup(c.name); fl != nil && f.Changed(c.name) && fl.Value.Type() != "string" && c.bad {
			return cfg, nil, fmt.Errorf("--%s %s: must be %s", c.name, fl.Value.String(), c.want)
		}
	}

	if o.transport != client.TransportOwn && o.transport != client.TransportStd {
		return cfg, nil, fmt.Errorf("--http-transport %q: must be %s or %s", o.transport, client.TransportOwn, client.TransportStd)
	}

	lc := load.Config{
		Concurrency: pick(o.concurrency, sc.Load.Concurrency, 4),
		Rate:        o.rate.rate,
		RateStart:   o.rate.start,
		RampUp:      o.rampUp,
		Arrival:     o.arrival,
		Burstiness:  o.burstiness,
		Requests:    o.requests,
		Duration:    o.duration,
		Warmup:      o.warmup,
		MaxInflight: o.maxInflight,
		Seed:        o.seed,
		Grace:       o.grace,
	}
	if !f.Changed("rate") {
		lc.Rate = sc.Load.Rate
	}
	if lc.Arrival == "" {
		lc.Arrival = sc.Load.Arrival
	}
	if lc.Burstiness == 0 {
		lc.Burstiness = sc.Load.Burstiness
	}
	// The bounds: a flag (or a caller's preset default, as ab's) replaces
	// the scenario's bound of the same kind; -d alone runs for the whole
	// duration (the scenario's request count does not cut it short), and
	// -n 0 is no count bound.
	if lc.Duration == 0 && !f.Changed("duration") {
		lc.Duration = sc.Load.Duration
	}
	if o.stages != "" {
		if lc.Stages, err = load.ParseStages(o.stages); err != nil {
			return cfg, nil, fmt.Errorf("--stages: %w", err)
		}
		if f.Changed("concurrency") {
			return cfg, nil, fmt.Errorf("--stages sets the workers over time: drop -c/--concurrency")
		}
		var total time.Duration
		lc.Concurrency = 0
		for _, st := range lc.Stages {
			total += st.Duration
			lc.Concurrency = max(lc.Concurrency, st.Target) // the header's concurrency: the peak
		}
		if lc.Duration == 0 {
			lc.Duration = total // the stages bound the run (so -n is not defaulted)
		}
	}
	// Stages run for their whole length, like -d alone.
	if lc.Requests == 0 && o.stages == "" && !f.Changed("requests") && !f.Changed("duration") {
		lc.Requests = sc.Load.Requests
	}
	if lc.Warmup < 0 {
		lc.Warmup = sc.Load.Warmup
	}
	if lc.Requests == 0 && lc.Duration == 0 {
		if f.Changed("requests") {
			return cfg, nil, fmt.Errorf("--requests 0 is no count bound: give --duration to bound the run")
		}
		lc.Requests = 20
	}
	if lc.Rate > 0 && lc.Arrival == "" {
		lc.Arrival = load.Poisson
	}
	if err := lc.Validate(); err != nil {
		return cfg, nil, err
	}

	thresholds, err := parseThresholds(o.thresholds)
	if err != nil {
		return cfg, nil, err
	}
	if !f.Changed("threshold") && len(sc.Thresholds) > 0 {
		thresholds = sc.Thresholds
	}
	mode, err := continuity.ParseMode(o.mode)
	if err != nil {
		return cfg, nil, fmt.Errorf("--continuity-mode: %w", err)
	}
	if err := summary.CheckPercentiles("--percentiles", o.percentiles); err != nil {
		return cfg, nil, err
	}
	percentiles := o.percentiles
	if len(percentiles) == 0 {
		percentiles = sc.Percentiles
	}
	var goodput []summary.Goodput
	if o.goodput != "" {
		if goodput, err = summary.ParseGoodput(o.goodput); err != nil {
			return cfg, nil, fmt.Errorf("--goodput: %w", err)
		}
	}
	switch o.scrape {
	case runner.ScrapeAuto, runner.ScrapeOn, runner.ScrapeOff:
	default:
		return cfg, nil, fmt.Errorf("--scrape: scrape mode %q (want auto, on or off)", o.scrape)
	}
	accept, err := scrape.ParseAccept(o.accept)
	if err != nil {
		return cfg, nil, fmt.Errorf("--accept: %w", err)
	}
	if err := report.CheckFormat(o.format, report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV); err != nil {
		return cfg, nil, err
	}
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

	wsOpts, err := o.ws.options(f, sc.Kind)
	if err != nil {
		return cfg, nil, err
	}
	tlsConf, err := o.tls.config()
	if err != nil {
		return cfg, nil, err
	}
	if o.tls.opts.Insecure {
		// The runner says its notes on stderr as the run starts and keeps
		// them in the report and the JSON document.
		notes = append(notes, tlsconf.InsecureNote)
	}

	cfg = runner.Config{
		WS:        wsOpts,
		Target:    o.url,
		Simulator: sim,
		Workload:  wl,
		Scenario:  sc.Name,
		Seed:      o.seed,
		Load:      lc,
		Client: client.Options{
			APIKey:               apiKey,
			Timeout:              o.timeout,
			IdleTimeout:          o.idleTimeout,
			MaxEventBytes:        o.maxEventBytes,
			AudibleThresholdDBFS: o.audibleDB,
			Thresholds:           thresholds,
			ContinuityMode:       mode,
			Preroll:              continuity.PrerollConfig{BufferS: o.prebuffer.Seconds(), MaxWaitS: o.prebufferMaxWait.Seconds()},
			MaxConns:             o.maxConns,
			TLSConfig:            tlsConf,
			HTTPTransport:        o.transport,
		},
		Summary:    summary.Options{Percentiles: percentiles, Thresholds: thresholds, Goodput: goodput, IncludeRamp: o.includeRamp},
		SelfMon:    selfmon.Thresholds{CPUShare: o.cpuLimit, Delay: o.delayLimit},
		Scrape:     o.scrape,
		MetricsURL: o.metricsURL,
		Accept:     accept,
		Settle:     o.settle,
		Version:    versionString(),

		ScrapeTimeout:    o.scrapeTimeout,
		ScrapeMaxBytes:   o.scrapeMaxBytes,
		ScrapeMaxSamples: o.scrapeMaxSamples,
		ScrapeInterval:   scrapeInterval(f, o.scrapeInterval, lc),
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

// defaultPCMSampleRate is the rate of raw PCM when neither --pcm-sample-rate
// nor the scenario gives one: Qwen3-Omni's and Qwen3-TTS's 24 kHz.
const defaultPCMSampleRate = 24000

// nameFlags rewrites the scenario's field errors about a field a flag set
// so that they name the flag (--pcm-sample-rate, not pcm_sample_rate): the
// user typed the flag, and may have no scenario file to look at.
func nameFlags(err error, f *pflag.FlagSet) error {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var fe *scenarios.FieldError
		if errors.As(e, &fe) {
			if flag := flagOfField(fe.Field); flag != "" && f.Changed(flag) {
				e = fmt.Errorf("--%s: %s", flag, fe.Msg)
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// flagOfField is the run flag that sets a scenario field ("" for none).
func flagOfField(field string) string {
	switch field {
	case "kind", "model", "voice", "modalities":
		return field
	case "audio_format", "audio_input_style", "pcm_sample_rate":
		return strings.ReplaceAll(field, "_", "-")
	case "prompts.source":
		return "prompts"
	}
	if strings.HasPrefix(field, "extra_body") {
		return "extra-body"
	}
	return ""
}

// applyHeaders adds the -H headers to the scenario, except Authorization,
// which it returns: a scenario may not hold credentials (it is printed and
// copied around), the command line may (its values are redacted from every
// output, like --api-key). An Authorization header beside an API key would
// be two credentials for one request, and is refused.
func (o *runOptions) applyHeaders(sc *scenarios.Scenario, haveAPIKey bool) (creds map[string]string, err error) {
	for _, raw := range o.headers {
		h, err := parseHeader(raw)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(h.name, "Authorization") {
			if haveAPIKey {
				return nil, errors.New("--header Authorization and --api-key (or $OMNIBENCH_API_KEY) both set the request's credentials: give one")
			}
			creds = map[string]string{"Authorization": h.value}
			continue
		}
		if sc.Headers == nil {
			sc.Headers = map[string]string{}
		}
		sc.Headers[h.name] = h.value
	}
	return creds, nil
}

// checkFlags is plan with run's SLO flags: every check of run's flags that
// does not depend on this machine (output paths, the shard's index), which
// kube render makes of the flags it gives every pod.
func (o *runOptions) checkFlags(f *pflag.FlagSet) (runner.Config, *scenarios.Scenario, []slo.SLO, error) {
	cfg, sc, err := o.plan(f)
	if err != nil {
		return cfg, nil, nil, err
	}
	slos, err := parseSLOs(sc, o.outputs.slos)
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
	cfg, sc, slos, err := o.checkFlags(cmd.Flags())
	if err != nil {
		return withExitCode(2, err)
	}
	if err := checkOutputPaths(o.outputFlags()...); err != nil {
		return err
	}
	if err := o.shard.apply(&cfg); err != nil {
		return withExitCode(2, err)
	}
	for _, s := range slos {
		cfg.SLOs = append(cfg.SLOs, s.Expr)
	}
	cfg.SaveAudioDir = o.outputs.saveAudio
	exp, grouping, err := o.metrics.newExporter(&cfg, sc)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	cfg.Log = stderr
	if isTerminal(stderr) {
		cfg.Progress = stderr
		// Asked at every update: the terminal may be resized during a run.
		cfg.ProgressWidth = func() int { w, _ := report.TerminalWidth(stderr); return w }
	}
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
	// Every output is attempted: one that cannot be written does not drop
	// the others, and the exit status says which failed.
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
	outErr := errors.Join(outErrs...)
	if outcome.Interrupted {
		fmt.Fprintln(stderr, "omnibench: interrupted; the results gathered so far were written")
	}
	if exp != nil && outcome.Health != nil {
		exp.SetHealth(*outcome.Health)
	}
	metricsErr := o.metrics.finish(ctx, exp, grouping, msrv, outcome.Interrupted, stderr)
	if ctx.Err() != nil && !outcome.Interrupted && msrv != nil && o.metrics.linger > 0 {
		// Interrupted after the run, while lingering on --metrics-addr:
		// every figure stands, and the summary records the interruption.
		doc.Interrupted, doc.InterruptedDuring = true, runner.InterruptedLinger
		fmt.Fprintln(stderr, "omnibench: interrupted during --metrics-linger: stopped serving the client metrics")
		if o.summaryOut != "" {
			if err := writeJSONFile(o.summaryOut, doc); err != nil {
				metricsErr = errors.Join(metricsErr, fmt.Errorf("--summary: %w", err))
			}
		}
	}
	failed := errors.Join(outErr, metricsErr)
	fmt.Fprint(stderr, report.ErrorSetText(outcome.Summary, "omnibench: "))
	return endReport(cmd.OutOrStdout(), o.format, o.wide, runStatus(stderr, runErr, failed, outcome.Summary, verdicts),
		measuredText(outcome.Summary, verdicts))
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

func pick(vals ...int) int {
	for _, v := range vals {
		if v > 0 {
			return v
		}
	}
	return 0
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
