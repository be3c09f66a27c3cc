package exporter

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/load"
)

// Options configures an Exporter.
type Options struct {
	// ModelName is the model_name label value: the run's model. Empty is
	// allowed, but Prometheus then treats the label as absent.
	ModelName string
	Endpoint  string // endpoint constant label: the request path
	Scenario  string // scenario constant label: the scenario name

	// Thresholds are the continuity thresholds in seconds (threshold_ms
	// label values); nil means [0.1], like the report.
	Thresholds []float64
	// ContinuityMode is the run's continuity model (the client's default is
	// continuity.Default), so the exported underrun matches the report's.
	ContinuityMode continuity.Mode
	// TextOnly says the requests do not ask for audio (chat with text
	// modalities only). Otherwise a successful response without audio counts
	// in audio_skipped_requests_total{reason="no_audio_data"}, as the server
	// counts it.
	TextOnly bool
	// IncludeRamp observes the requests of a load ramp (Record.Phase
	// "ramp") like the others; by default they count only as started and
	// in flight, as the report leaves them out of its figures.
	IncludeRamp bool
	// Shard is the shard index of a sharded run (the shard label); "" for
	// a run of the whole test, whose series have no shard label.
	Shard string
	// AudioChecks adds the signal-check families (QualityFamilies), fed
	// from results.Record.Audio.
	AudioChecks bool
}

// clientStage is the (stage, replica) of every client-side audio series: the
// client sees the pipeline's output as one stream (see the package doc).
func clientStage() omnimetrics.StageReplica { return omnimetrics.StageReplica{Stage: 0, Replica: 0} }

// Exporter records one run's client-side series. Its observe methods are the
// runner's hooks (runner.Config.OnStart, OnRecord and OnDrop) and are safe
// for concurrent use.
type Exporter struct {
	m    *omnimetrics.Metrics
	opts Options

	// mu serialises the in-flight count with its gauge update, so the gauge
	// never ends on a stale value when two requests change it at once.
	mu       sync.Mutex
	inflight int

	scheduled, started, dropped, warmup prometheus.Counter
	lag                                 prometheus.Observer
	errorsVec                           *prometheus.CounterVec
	errors                              map[string]prometheus.Counter // known classes; read-only after New
	stalls, stalled                     prometheus.Counter
	stallTime                           prometheus.Observer
	queue                               prometheus.Observer

	// The load generator's own health (OnHealth, SetHealth). The gauges
	// are NaN until the first sample: a 0 would read as an idle client
	// with no cores.
	healthLabels                         prometheus.Labels
	cpu, cores, sched, memory, saturated *prometheus.GaugeVec
	hostOther, hostPressure, hostSteal   *prometheus.GaugeVec
	delayCause                           *prometheus.GaugeVec // a state set: one series per cause, 1 for the run's
	gcPauses, gcPauseTime                prometheus.Counter
	ttfaAudible, leadingSilence          prometheus.Observer
	quality                              *qualityMetrics // with Options.AudioChecks
}

// New builds the metric core with the client prefix and the run's labels,
// registers the load-generator families on the core's registry and returns
// the Exporter. Counters and histograms of the load-generator families exist
// from the start at zero, so rates over them have data before the first
// failure or drop.
func New(opts Options) (*Exporter, error) {
	m, err := omnimetrics.New(omnimetrics.Options{
		Prefix:         omnimetrics.PrefixClient,
		ModelName:      opts.ModelName,
		StatsEnabled:   true,
		Upstream:       false,
		ConstLabels:    constLabels(opts),
		Thresholds:     opts.Thresholds,
		ContinuityMode: opts.ContinuityMode,
	})
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	e := &Exporter{m: m, opts: opts, errors: map[string]prometheus.Counter{}}
	reg := m.Registry()
	modelOnly := prometheus.Labels{omnimetrics.LabelModelName: opts.ModelName}
	var vecs [numLoadFamilies]prometheus.Collector
	for i, spec := range loadTable() {
		c, err := register(reg, spec, constLabels(opts))
		if err != nil {
			return nil, err
		}
		vecs[i] = c
	}
	counter := func(f loadFamily) prometheus.Counter { return vecs[f].(*prometheus.CounterVec).With(modelOnly) }
	histogram := func(f loadFamily) prometheus.Observer {
		return vecs[f].(*prometheus.HistogramVec).With(modelOnly)
	}
	e.scheduled, e.started, e.dropped, e.warmup = counter(famScheduled), counter(famStarted), counter(famDropped), counter(famWarmup)
	e.stalls, e.stalled = counter(famStalls), counter(famStalled)
	e.lag, e.stallTime, e.queue = histogram(famLag), histogram(famStallTime), histogram(famQueue)
	gauge := func(f loadFamily) *prometheus.GaugeVec { return vecs[f].(*prometheus.GaugeVec) }
	e.cpu, e.cores, e.sched, e.memory, e.saturated = gauge(famCPU), gauge(famCores), gauge(famSched), gauge(famMemory), gauge(famSaturated)
	e.hostOther, e.hostPressure, e.hostSteal = gauge(famHostOther), gauge(famHostPressure), gauge(famHostSteal)
	e.delayCause = gauge(famDelayCause)
	e.healthLabels = modelOnly
	for _, g := range []*prometheus.GaugeVec{e.cpu, e.cores, e.sched, e.memory, e.saturated, e.hostOther, e.hostPressure, e.hostSteal} {
		g.With(modelOnly).Set(math.NaN())
	}
	for _, c := range selfmon.Causes() {
		e.delayCause.With(e.causeLabels(c)).Set(math.NaN())
	}
	e.gcPauses, e.gcPauseTime = counter(famGCPauses), counter(famGCPauseTime)
	e.ttfaAudible, e.leadingSilence = histogram(famTTFAAudible), histogram(famLeadingSilence)
	e.errorsVec = vecs[famErrors].(*prometheus.CounterVec)
	for _, class := range results.ErrorClasses() {
		e.errors[class] = e.errorsVec.With(prometheus.Labels{omnimetrics.LabelModelName: opts.ModelName, LabelClass: class})
	}
	if opts.AudioChecks {
		if e.quality, err = newQualityMetrics(reg, opts); err != nil {
			return nil, err
		}
	}
	m.SetRunning(0)
	m.SetWaiting(0) // the client has no queue
	return e, nil
}

// constLabels are the run's identity on every family.
func constLabels(opts Options) prometheus.Labels {
	l := prometheus.Labels{LabelEndpoint: opts.Endpoint, LabelScenario: opts.Scenario}
	if opts.Shard != "" {
		l[LabelShard] = opts.Shard
	}
	return l
}

// register builds and registers the collector of one load-generator family.
func register(reg prometheus.Registerer, spec omnimetrics.FamilySpec, constLabels prometheus.Labels) (prometheus.Collector, error) {
	name := omnimetrics.PrefixClient + spec.Name
	if !model.IsValidLegacyMetricName(name) {
		return nil, fmt.Errorf("exporter: family %q is not a valid Prometheus metric name", name)
	}
	var c prometheus.Collector
	switch spec.Type {
	case omnimetrics.TypeCounter:
		c = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: spec.Help, ConstLabels: constLabels}, spec.Labels)
	case omnimetrics.TypeGauge:
		c = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: spec.Help, ConstLabels: constLabels}, spec.Labels)
	case omnimetrics.TypeHistogram:
		c = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name, Help: spec.Help, ConstLabels: constLabels, Buckets: spec.Buckets,
		}, spec.Labels)
	default:
		return nil, fmt.Errorf("exporter: family %s: unknown type %q", name, spec.Type)
	}
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("exporter: register family %s: %w", name, err)
	}
	return c, nil
}

// Metrics returns the metric core the exporter observes through.
func (e *Exporter) Metrics() *omnimetrics.Metrics { return e.m }

// Gatherer returns every family, including the core's families that have no
// series yet (HELP and TYPE only).
func (e *Exporter) Gatherer() prometheus.Gatherer { return e.m.Gatherer() }

// Handler serves the exposition (text, OpenMetrics or protobuf by the
// scraper's Accept header) at whatever path it is mounted on.
func (e *Exporter) Handler() http.Handler { return e.m.Handler() }

// OnStart records a request about to be sent (runner.Config.OnStart): one
// more in flight and, for a measured arrival, one more scheduled and started
// with its scheduling lag; for a warm-up arrival, one more warm-up request.
func (e *Exporter) OnStart(a load.Arrival) {
	e.addInflight(1)
	if a.Warmup {
		e.warmup.Inc()
		return
	}
	e.scheduled.Inc()
	e.started.Inc()
	e.lag.Observe(max(a.Lag().Seconds(), 0))
}

// OnDrop records an open-loop arrival dropped by the in-flight cap
// (runner.Config.OnDrop): it came due but was never sent.
func (e *Exporter) OnDrop(load.Arrival) {
	e.scheduled.Inc()
	e.dropped.Inc()
}

// OnRecord observes a finished request (runner.Config.OnRecord); see the
// package doc for the conventions. Every OnRecord must follow an OnStart of
// the same request, or the in-flight gauge drifts.
func (e *Exporter) OnRecord(r *results.Record) {
	e.addInflight(-1)
	if r.Warmup || (r.Phase == load.PhaseRamp && !e.opts.IncludeRamp) {
		return
	}
	e.queue.Observe(max(r.QueueS, 0))
	if !r.OK() {
		e.errorCounter(r.ErrorClass).Inc()
		e.m.RequestFailed()
		return
	}
	e.m.Tokens(r.PromptTokens, r.CompletionTokens)
	if r.HasAudio() {
		e.m.AudioFirstPacket(clientStage(), r.Latency(r.TTFPS))
	}
	if r.TTFAAudibleS > 0 {
		e.ttfaAudible.Observe(r.Latency(r.TTFAAudibleS))
	}
	if r.LeadingSilenceS != nil {
		e.leadingSilence.Observe(max(*r.LeadingSilenceS, 0))
	}
	if e.quality != nil && r.Audio != nil && r.HasAudio() {
		e.quality.observe(r.Audio)
	}
	if r.HasAudio() || !e.opts.TextOnly {
		// frames == 0 counts as skipped{no_audio_data}, the server's silent-loss counter.
		e.m.AudioAtFinalize(clientStage(), r.AudioFrames, r.SampleRate, genTime(r))
	}
	if c := r.Continuity; c != nil && len(r.ChunkArrivalsS) > 0 {
		e.m.AudioStreamingFinalize(clientStage(), r.ChunkArrivalsS, r.ChunkBytes, s16MonoRate(r))
		if p := c.StallResume; p != nil {
			e.stalls.Add(float64(max(p.Stalls, 0)))
			if p.Stalls > 0 {
				e.stalled.Inc()
			}
			e.stallTime.Observe(max(p.TotalStallS, 0))
		}
	}
	// Last, as on the server: whoever sees the success counter move also
	// sees the request's audio series.
	e.m.RequestSucceeded(r.Latency(r.E2ES), finishReason(r.FinishReason))
}

func (e *Exporter) addInflight(d int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inflight += d
	e.m.SetRunning(e.inflight)
}

func (e *Exporter) errorCounter(class string) prometheus.Counter {
	if c, ok := e.errors[class]; ok {
		return c
	}
	return e.errorsVec.With(prometheus.Labels{omnimetrics.LabelModelName: e.opts.ModelName, LabelClass: classOther})
}

// genTime is the numerator of the report's audio_rtf: the last audio chunk's
// arrival after the send for chat (the benchmark's chat RTF), the whole
// request for speech (its speech RTF). Divided by frames / sample rate in the
// core, it gives Record.RTFLastChunk or Record.RTFE2E.
func genTime(r *results.Record) float64 {
	if r.ChatPath() {
		return r.LastAudioS
	}
	return r.E2ES
}

// s16MonoRate is the sample rate at which s16 mono audio has the record's
// byte rate. The core's continuity simulation assumes s16 mono, as the server
// does; scaling the rate keeps the simulated playback speed right for other
// formats (the same result in reference mode; in default mode the one-frame
// deficit floor becomes 2 bytes, a difference below 0.1 ms).
func s16MonoRate(r *results.Record) int {
	width, channels := r.SampleWidth, r.Channels
	if width <= 0 {
		width = 2
	}
	if channels <= 0 {
		channels = 1
	}
	return r.SampleRate * width * channels / 2
}

// finishReason bounds the finished_reason label to the values OpenAI-style
// servers send; anything else becomes "other". "" stays "" (the core's
// "stop").
func finishReason(reason string) string {
	switch reason {
	case "", "stop", "length", "abort", "error", "tool_calls", "content_filter", "function_call":
		return reason
	}
	return classOther
}

// OnHealth records one self-monitoring sample of the load generator
// (runner.Config.OnHealth).
func (e *Exporter) OnHealth(s selfmon.Sample) {
	e.cpu.With(e.healthLabels).Set(s.CPUShare)
	e.cores.With(e.healthLabels).Set(float64(selfmon.Cores()))
	e.sched.With(e.healthLabels).Set(s.SchedLatencyP99.Seconds())
	e.memory.With(e.healthLabels).Set(float64(s.MemoryBytes))
	e.gcPauses.Add(float64(s.GCPauses))
	e.gcPauseTime.Add(max(s.GCPauseTime.Seconds(), 0))
	if h := s.Host; h != nil {
		e.hostOther.With(e.healthLabels).Set(h.OtherCores)
		e.hostSteal.With(e.healthLabels).Set(h.StealShare)
		if h.CPUPressure != nil {
			e.hostPressure.With(e.healthLabels).Set(*h.CPUPressure)
		}
	}
}

// SetHealth records the run's verdict (after the run): saturated when the
// client was the bottleneck, and the delay's cause as the one
// loadgen_delay_cause series at 1 (the other reasons at 0).
func (e *Exporter) SetHealth(r selfmon.Report) {
	e.cores.With(e.healthLabels).Set(float64(r.Cores))
	v := 0.0
	if r.Saturated {
		v = 1
	}
	e.saturated.With(e.healthLabels).Set(v)
	cause := cmp.Or(r.Cause, selfmon.CauseNone)
	for _, c := range selfmon.Causes() {
		v := 0.0
		if c == cause {
			v = 1
		}
		e.delayCause.With(e.causeLabels(c)).Set(v)
	}
}

// causeLabels are the labels of loadgen_delay_cause's series for c.
func (e *Exporter) causeLabels(c selfmon.Cause) prometheus.Labels {
	return prometheus.Labels{omnimetrics.LabelModelName: e.opts.ModelName, LabelReason: string(c)}
}
