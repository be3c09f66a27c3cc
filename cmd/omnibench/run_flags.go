package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/audio/onset"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/sse"
)

// The headings of the flag groups in --help, in the order they are shown.
const (
	groupTarget     = "Target"
	groupWorkload   = "Workload"
	groupLoad       = "Load"
	groupClient     = "Client"
	groupContinuity = "Continuity"
	groupReport     = "Report"
	groupScrape     = "Scrape"
	groupWebSocket  = "WebSocket"
	groupTLS        = "TLS"
	groupSimulator  = "Embedded simulator"
)

// targetFlags say which server is measured and how to reach it.
type targetFlags struct {
	url     string
	apiKey  string
	noProbe bool
}

func (t *targetFlags) register(f *pflag.FlagSet) {
	f.StringVar(&t.url, "url", "", "server base URL (e.g. http://127.0.0.1:8000); empty starts the embedded simulator")
	f.StringVar(&t.apiKey, "api-key", "", "API key sent as a bearer token (default $OMNIBENCH_API_KEY); never written anywhere")
	f.BoolVar(&t.noProbe, "no-probe", false, "with --url: skip the probe request sent before the run (it stops the run when the server refuses the connection, the credentials, the route or the model)")
}

// workloadFlags pick the scenario and override its fields.
type workloadFlags struct {
	scenario                                            string
	kind, model, voice, audioFormat, prompts, extraBody string
	audioInputStyle                                     string
	modalities                                          []string
	headers                                             []string
	pcmRate                                             int
}

func (w *workloadFlags) register(f *pflag.FlagSet) {
	f.StringVar(&w.scenario, "scenario", "chat-voice", "built-in scenario `NAME` or a scenario YAML FILE (list them with: omnibench scenarios)")
	f.StringVar(&w.kind, "kind", "", "request kind: chat, speech (raw byte stream), speech-sse, speech-ws, realtime or realtime-audio (WebSocket sessions; overrides the scenario)")
	f.StringVar(&w.model, "model", "", "model name (overrides the scenario)")
	f.StringVar(&w.voice, "voice", "", "voice (overrides the scenario)")
	f.StringVar(&w.audioFormat, "audio-format", "", "audio format: wav, pcm or (chat) flac, mp3, opus (overrides the scenario)")
	f.StringSliceVar(&w.modalities, "modalities", nil, "chat output modalities, e.g. text,audio (overrides the scenario)")
	f.StringVar(&w.prompts, "prompts", "", "prompt source: builtin:SET, a JSONL file ({\"prompt\": ..., \"audio\": FILE} per line), a text file (one per line) or a directory of audio files")
	f.StringVar(&w.audioInputStyle, "audio-input-style", "", "how chat sends a prompt's audio: input_audio (default) or audio_url (a data: URL) (overrides the scenario)")
	f.StringVar(&w.extraBody, "extra-body", "", "JSON object merged into every request body")
	f.StringArrayVarP(&w.headers, "header", "H", nil, "extra request header \"Name: value\" (repeatable)")
	f.IntVar(&w.pcmRate, "pcm-sample-rate", 0, fmt.Sprintf("sample rate of raw PCM audio in Hz (default %d with --audio-format pcm, else the scenario's)", scenarios.DefaultPCMSampleRate))
}

// loadFlags shape the load: how many requests, how fast, for how long.
type loadFlags struct {
	concurrency int
	rate        rateFlag
	rampUp      time.Duration
	stages      string
	includeRamp bool
	maxConns    int
	arrival     string
	burstiness  float64
	requests    int
	duration    time.Duration
	warmup      int
	maxInflight int
	seed        int64
	grace       time.Duration
}

func (l *loadFlags) register(f *pflag.FlagSet) {
	f.IntVarP(&l.concurrency, "concurrency", "c", 0, "closed loop: concurrent workers (default from the scenario, else 4)")
	f.Var(&l.rate, "rate", "open loop: arrivals per second (0 = closed loop), or START:END for a linear rate ramp over --ramp-up (e.g. 1:20)")
	l.registerShape(f)
}

// registerShape adds the load flags but -c and --rate, which sweep and
// capacity replace with their level flags.
func (l *loadFlags) registerShape(f *pflag.FlagSet) {
	f.DurationVar(&l.rampUp, "ramp-up", 0, "closed loop: start the workers evenly over this time; open loop: ramp the rate from START to END (--rate START:END) over it")
	f.StringVar(&l.stages, "stages", "", "closed loop: worker targets over time as DURATION:TARGET,... (k6 stages, e.g. 30s:100,2m:100,30s:0); the run ends with the last stage")
	f.BoolVar(&l.includeRamp, "include-ramp", false, "keep the requests started during a ramp (--ramp-up, --stages) in the figures")
	f.IntVar(&l.maxConns, "max-conns", 0, "cap on client connections (0 = follow the load: concurrency, --max-inflight or the peak stage); requests over it wait, reported as client_queue_ms")
	f.StringVar(&l.arrival, "arrival", "", "open-loop arrivals: constant, poisson or gamma (default poisson)")
	f.Float64Var(&l.burstiness, "burstiness", 0, "gamma shape of open-loop gaps (1 = Poisson, <1 burstier)")
	f.IntVarP(&l.requests, "requests", "n", 0, "measured requests; 0 = no count bound (default from the scenario, else 20; none with -d alone)")
	f.DurationVarP(&l.duration, "duration", "d", 0, "schedule requests for this long; alone it runs the whole duration, with -n whichever comes first")
	f.IntVar(&l.warmup, "warmup", -1, "warm-up requests sent first and excluded from the figures (default from the scenario, else 0)")
	f.IntVar(&l.maxInflight, "max-inflight", 0, "open loop: cap on requests in flight; arrivals beyond it are counted as dropped (0 = no cap)")
	f.Int64Var(&l.seed, "seed", 1, "seed of the arrival schedule and the prompt order")
	f.DurationVar(&l.grace, "grace", 5*time.Second, "on Ctrl-C, how long in-flight requests may finish before they are cancelled")
}

// clientFlags tune the HTTP client and watch the load generator itself.
type clientFlags struct {
	transport            string // --http-transport
	delayLimit           time.Duration
	cpuLimit             float64
	timeout, idleTimeout time.Duration
	maxEventBytes        int
	audibleDB            float64
}

func (c *clientFlags) register(f *pflag.FlagSet) {
	f.StringVar(&c.transport, "http-transport", client.TransportOwn, "HTTP/1.1 transport of the HTTP kinds: own (omnibench's, lighter on CPU at many streams) or std (Go's net/http); both measure the same")
	f.DurationVar(&c.delayLimit, "client-delay-threshold", selfmon.DefaultDelay, "the load generator's delay is warned about, with its cause (its own CPU, a busy host, the server on its cores), when its scheduling latency or send-stamp delay p99 exceeds this")
	f.Float64Var(&c.cpuLimit, "client-cpu-threshold", selfmon.DefaultCPUShare, "the load generator counts as saturated (the client is the bottleneck: ab and capacity refuse) when its CPU exceeds this share of its usable cores")
	f.DurationVar(&c.timeout, "timeout", 5*time.Minute, "whole-request timeout")
	f.DurationVar(&c.idleTimeout, "idle-timeout", 30*time.Second, "fail a request when no byte arrives for this long")
	f.IntVar(&c.maxEventBytes, "max-event-bytes", sse.DefaultMaxEventBytes, "cap on one SSE line and one event's data, bytes; a larger one fails the request as malformed")
	f.Float64Var(&c.audibleDB, "audible-threshold", onset.DefaultThresholdDBFS,
		"audio counts as audible (ttfa_audible) when its 10 ms RMS level is above this, dBFS")
}

// continuityFlags set up the playback simulation.
type continuityFlags struct {
	thresholds       []string
	mode             string
	prebuffer        time.Duration
	prebufferMaxWait time.Duration
}

func (c *continuityFlags) register(f *pflag.FlagSet) {
	f.StringSliceVar(&c.thresholds, "threshold", []string{"0.1"}, "continuity thresholds, seconds or durations (repeatable)")
	f.StringVar(&c.mode, "continuity-mode", "default", "continuity simulation: default or reference (bit-compatible with the server)")
	f.DurationVar(&c.prebuffer, "prebuffer", 200*time.Millisecond, "pre-roll player: audio buffered before playback starts")
	f.DurationVar(&c.prebufferMaxWait, "prebuffer-max-wait", 0, "pre-roll player: start anyway after this long (0 = wait for the buffer)")
}

// reportFlags say what is reported and where it is written.
type reportFlags struct {
	percentiles []float64
	goodput     string
	format      string
	out         string
	summaryOut  string
}

func (r *reportFlags) register(f *pflag.FlagSet) {
	r.registerWith(f, "write one JSON line per request (plus a header line) to this file as the run goes",
		"write the run summary (versioned JSON schema) to this file")
}

// registerWith adds the report flags, with the command's own words for
// what --out and --summary write.
func (r *reportFlags) registerWith(f *pflag.FlagSet, outUsage, summaryUsage string) {
	f.Float64SliceVar(&r.percentiles, "percentiles", nil, "percentiles to report, a comma-separated `LIST` (default 50,90,95,99)")
	f.StringVar(&r.goodput, "goodput", "", "per-request SLOs for goodput, e.g. ttfp:500ms,e2e:10s,rtf:1")
	f.StringVar(&r.format, "format", "table", "report format: table, markdown, json or csv")
	f.StringVar(&r.out, "out", "", outUsage)
	f.StringVar(&r.summaryOut, "summary", "", summaryUsage)
}

// scrapeFlags control the scrapes of the server's /metrics around the run.
type scrapeFlags struct {
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
}

func (s *scrapeFlags) register(f *pflag.FlagSet) {
	s.registerWith(f, runner.ScrapeAuto, "scrape the server's /metrics before and after: auto, on or off")
}

// registerWith adds the scrape flags, with the command's own default and
// words for --scrape.
func (s *scrapeFlags) registerWith(f *pflag.FlagSet, mode, usage string) {
	f.StringVar(&s.scrape, "scrape", mode, usage)
	f.StringVar(&s.metricsURL, "metrics-url", "", "metrics URL (default URL/metrics)")
	f.DurationVar(&s.settle, "settle", 500*time.Millisecond, "wait after the last response before the second scrape")
	f.StringVar(&s.accept, "accept", "auto", "exposition format to ask for: auto, proto, openmetrics or text")
	f.DurationVar(&s.scrapeTimeout, "scrape-timeout", scrape.DefaultTimeout, "give up on one /metrics scrape after this long (it becomes a note)")
	f.Int64Var(&s.scrapeMaxBytes, "scrape-max-bytes", scrape.MaxBodyBytes, "largest /metrics body read, in bytes")
	f.IntVar(&s.scrapeMaxSamples, "scrape-max-samples", scrape.DefaultMaxSamples, "most /metrics samples (lines with a value) decoded")
	f.DurationVar(&s.scrapeInterval, "scrape-interval", 0, "also scrape /metrics this often during the run, for the breakdown's timeline "+
		"(default 5s when --duration is over a minute, else off; 0 = off)")
}

// simulatorFlags configure the embedded simulator started without --url.
type simulatorFlags struct {
	simCapacity int
	simStats    bool
}

func (s *simulatorFlags) register(f *pflag.FlagSet) {
	f.IntVar(&s.simCapacity, "sim-capacity", 0, "embedded simulator: streams served at full speed (0 = unlimited)")
	f.BoolVar(&s.simStats, "sim-log-stats", true, "embedded simulator: record server-side metrics (--log-stats)")
}
