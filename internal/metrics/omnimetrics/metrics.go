package omnimetrics

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/omnibench/omnibench/continuity"
)

// ErrInvalidOptions is wrapped by every error New returns for bad Options.
var ErrInvalidOptions = errors.New("omnimetrics: invalid options")

// Label values used by the observe methods.
const (
	reasonAbort       = "abort"         // finished_reason of a failed or cancelled request
	reasonStop        = "stop"          // Python's default finished_reason
	reasonNoAudioData = "no_audio_data" // skipped_requests reason when no audio was produced
)

// Options configures a Metrics.
type Options struct {
	Prefix       string // family name prefix; "" means PrefixDesign; must end in ':' or '_'
	ModelName    string // value of the model_name label
	StatsEnabled bool   // gating, docs/reference/metric-families.md, section 2
	// Upstream registers the upstream vllm:* stage/replica families
	// (docs/reference/metric-families.md, section 4.2) when StatsEnabled; they always keep the plain "vllm:" prefix.
	Upstream bool
	// Topology is the number of replicas of each stage, e.g. [1,1,1]. Upstream
	// families get children for every (stage, replica) at construction, as
	// upstream vLLM materialises them per engine.
	Topology []int
	// ConstLabels are added to every family (client side: the run identity).
	// They may not reuse a family's label names, "le", or a "__" prefix.
	ConstLabels prometheus.Labels
	// Thresholds are the continuity thresholds in seconds; nil means [0.1].
	// Each becomes a threshold_ms label value, which must be distinct.
	Thresholds []float64
	// ContinuityMode is the continuity model; servers use continuity.Reference.
	ContinuityMode continuity.Mode
	// BareStatsOff gives the original metrics design's stats-off shape:
	// every pipeline family HELP/TYPE only. By default (false) the shape of
	// current servers (docs/reference/metric-families.md, section 2.1): with stats off the five
	// model_name-only families num_requests_running, num_requests_waiting,
	// e2e_request_latency_s, prompt_tokens_total and generation_tokens_total
	// still carry one zero-valued model_name child, because the server binds
	// those children whatever log_stats is.
	BareStatsOff bool
	// PythonCreated adds the `<base>_created` series Python's prometheus_client
	// exposes beside every counter, histogram and summary series: in the text
	// format as a separate gauge family with its own HELP/TYPE right after the
	// family, in OpenMetrics as `_created` samples. The Go client prints none;
	// the simulator turns this on to look like a real server.
	PythonCreated bool
	// SpeechStreams registers the speech-stream counters
	// (SpeechStreamFamilies) that servers since September 2026 have, and
	// lets SpeechStreamCompleted and SpeechStreamAborted record; without it
	// they do nothing, as on older servers.
	SpeechStreams bool
}

// StageReplica names one replica of one pipeline stage.
type StageReplica struct{ Stage, Replica int }

// Edge names one cross-stage transfer hop.
type Edge struct{ FromStage, FromReplica, ToStage, ToReplica int }

// Metrics records the vLLM-Omni pipeline families into a private registry.
// All methods are safe for concurrent use. Children of labelled families are
// created on first observation, as the Python server binds them lazily, and
// cached per (stage, replica), edge or finished_reason, so the hot path never
// goes through the vec's label lookup and does not allocate.
type Metrics struct {
	reg      *prometheus.Registry
	enabled  bool
	created  bool // Options.PythonCreated
	model    string
	mode     continuity.Mode
	thresh   []float64 // seconds
	threshMS []string  // threshold_ms label values, parallel to thresh
	fam      [numPipelineFamilies]vec
	speech   [numSpeechStreamFamilies]vec // zero without Options.SpeechStreams
	declared []declared                   // every registered family of this package, for HELP/TYPE-only output

	// Children of the model_name-only families, resolved once at New (stats on).
	running, waiting        prometheus.Gauge
	e2e                     prometheus.Observer
	promptTokens, genTokens prometheus.Counter
	success                 sync.Map // finished_reason -> prometheus.Counter
	audio                   sync.Map // StageReplica -> *audioChildren
	edges                   sync.Map // Edge -> *edgeChildren
	upstream                *Upstream
}

// New validates opts, registers the families in a new private registry and
// returns the Metrics.
func New(opts Options) (*Metrics, error) {
	return newMetrics(opts, prometheus.NewRegistry())
}

// newMetrics is New with the registry supplied, so tests can use a pedantic one.
func newMetrics(opts Options, reg *prometheus.Registry) (*Metrics, error) {
	prefix := opts.Prefix
	if prefix == "" {
		prefix = PrefixDesign
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	thresholds := opts.Thresholds
	if thresholds == nil {
		thresholds = []float64{0.1}
	}
	threshMS, err := thresholdLabels(thresholds)
	if err != nil {
		return nil, err
	}
	if err := validateTopology(opts.Topology); err != nil {
		return nil, err
	}
	if err := validateConstLabels(opts.ConstLabels); err != nil {
		return nil, err
	}

	m := &Metrics{
		reg:      reg,
		enabled:  opts.StatsEnabled,
		created:  opts.PythonCreated,
		model:    opts.ModelName,
		mode:     opts.ContinuityMode,
		thresh:   append([]float64(nil), thresholds...),
		threshMS: threshMS,
	}
	for i, spec := range pipelineTable() {
		if m.fam[i], err = m.registerPrefixed(prefix, spec, opts.ConstLabels); err != nil {
			return nil, err
		}
	}
	if opts.SpeechStreams {
		for i, spec := range speechStreamTable() {
			if m.speech[i], err = m.registerPrefixed(prefix, spec, opts.ConstLabels); err != nil {
				return nil, err
			}
		}
	}
	if m.enabled || !opts.BareStatsOff {
		// Current servers bind these five children at start-up whatever
		// log_stats is (docs/reference/server-versions.md, section 4), so with stats off they show
		// zero values; the observe methods still do nothing.
		modelOnly := prometheus.Labels{LabelModelName: m.model}
		m.running = m.fam[famRunning].gauge.With(modelOnly)
		m.waiting = m.fam[famWaiting].gauge.With(modelOnly)
		m.e2e = m.fam[famE2E].histogram.With(modelOnly)
		m.promptTokens = m.fam[famPromptTokens].counter.With(modelOnly)
		m.genTokens = m.fam[famGenerationTokens].counter.With(modelOnly)
	}
	if !m.enabled {
		// Gating: the other families stay registered (HELP/TYPE only), no
		// children, and no upstream families at all.
		return m, nil
	}

	if opts.Upstream {
		up, decl, err := newUpstream(reg, m.model, opts.Topology, opts.ConstLabels)
		if err != nil {
			return nil, err
		}
		m.upstream = up
		m.declared = append(m.declared, decl...)
	}
	return m, nil
}

// registerPrefixed registers a family whose name takes the prefix and
// declares it for the HELP/TYPE-only exposition.
func (m *Metrics) registerPrefixed(prefix string, spec FamilySpec, constLabels prometheus.Labels) (vec, error) {
	name := prefix + spec.Name
	if !model.IsValidLegacyMetricName(name) {
		return vec{}, fmt.Errorf("%w: metric name %q (prefix %q + family %q) is not a valid Prometheus metric name",
			ErrInvalidOptions, name, prefix, spec.Name)
	}
	v, d, err := register(m.reg, name, spec, constLabels)
	if err != nil {
		return vec{}, err
	}
	m.declared = append(m.declared, d)
	return v, nil
}

func validatePrefix(prefix string) error {
	if !strings.HasSuffix(prefix, ":") && !strings.HasSuffix(prefix, "_") {
		return fmt.Errorf("%w: prefix %q must end in ':' or '_'", ErrInvalidOptions, prefix)
	}
	return nil
}

// thresholdLabels validates the continuity thresholds and returns their
// threshold_ms label values.
func thresholdLabels(thresholds []float64) ([]string, error) {
	labels := make([]string, len(thresholds))
	seen := make(map[string]int, len(thresholds))
	for i, th := range thresholds {
		if !(th > 0) || math.IsInf(th, 0) {
			return nil, fmt.Errorf("%w: thresholds[%d] = %v: want a finite number of seconds > 0", ErrInvalidOptions, i, th)
		}
		l := continuity.ThresholdLabel(th)
		if j, dup := seen[l]; dup {
			return nil, fmt.Errorf("%w: thresholds[%d] = %v and thresholds[%d] = %v share threshold_ms label %q",
				ErrInvalidOptions, j, thresholds[j], i, th, l)
		}
		seen[l] = i
		labels[i] = l
	}
	return labels, nil
}

func validateTopology(topology []int) error {
	for i, n := range topology {
		if n < 1 {
			return fmt.Errorf("%w: topology[%d] = %d: want at least 1 replica", ErrInvalidOptions, i, n)
		}
	}
	return nil
}

// validateConstLabels rejects constant labels that would make a family
// invalid. The registry would catch most of these too, but a histogram with
// an "le" constant label panics when its first child is created.
func validateConstLabels(labels prometheus.Labels) error {
	reserved := map[string]bool{"le": true, "quantile": true}
	for _, specs := range [][]FamilySpec{PipelineFamilies(), UpstreamFamilies()} {
		for _, s := range specs {
			for _, l := range s.Labels {
				reserved[l] = true
			}
		}
	}
	for name := range labels {
		switch {
		case !model.LegacyValidation.IsValidLabelName(name), strings.HasPrefix(name, "__"):
			return fmt.Errorf("%w: constant label %q is not a valid label name", ErrInvalidOptions, name)
		case reserved[name]:
			return fmt.Errorf("%w: constant label %q is reserved by the metric families", ErrInvalidOptions, name)
		}
	}
	return nil
}

// Registry returns the private registry. Gathering it directly drops families
// without children; Gatherer keeps them.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Upstream returns the upstream vllm:* recorder, or nil unless stats are on
// and Options.Upstream was set.
func (m *Metrics) Upstream() *Upstream { return m.upstream }

// SetRunning sets num_requests_running.
func (m *Metrics) SetRunning(n int) {
	if !m.enabled {
		return
	}
	m.running.Set(float64(n))
}

// SetWaiting sets num_requests_waiting.
func (m *Metrics) SetWaiting(n int) {
	if !m.enabled {
		return
	}
	m.waiting.Set(float64(n))
}

// RequestSucceeded records a request that finished at the final stage:
// requests_success_total{finished_reason} +1 and one e2e latency observation.
// An empty finishedReason means "stop", the server's default.
func (m *Metrics) RequestSucceeded(e2eS float64, finishedReason string) {
	if !m.enabled {
		return
	}
	if finishedReason == "" {
		finishedReason = reasonStop
	}
	m.successCounter(finishedReason).Inc()
	m.e2e.Observe(e2eS)
}

// RequestFailed records a request that ended without natural completion
// (error, client disconnect, cancellation): requests_success_total
// {finished_reason="abort"} +1 only. Like the server's cleanup path it does
// NOT observe e2e latency, so the e2e histogram counts successes only.
func (m *Metrics) RequestFailed() {
	if !m.enabled {
		return
	}
	m.successCounter(reasonAbort).Inc()
}

func (m *Metrics) successCounter(reason string) prometheus.Counter {
	if c, ok := m.success.Load(reason); ok {
		return c.(prometheus.Counter)
	}
	c := m.fam[famRequestsSuccess].counter.With(prometheus.Labels{
		LabelModelName: m.model, LabelFinishedReason: reason,
	})
	got, _ := m.success.LoadOrStore(reason, c)
	return got.(prometheus.Counter)
}

// Tokens adds to prompt_tokens_total and generation_tokens_total (servers:
// prompt tokens of stage 0, generation tokens summed over stages). Negative
// counts are ignored: a counter never decreases.
func (m *Metrics) Tokens(prompt, generation int) {
	if !m.enabled {
		return
	}
	if prompt > 0 {
		m.promptTokens.Add(float64(prompt))
	}
	if generation > 0 {
		m.genTokens.Add(float64(generation))
	}
}

// AudioAtFinalize records the audio of a finished request on any endpoint,
// as the server's finalize hook does: audio_frames_total += frames (when
// frames > 0); and when duration = frames / sampleRate is > 0, one
// audio_duration_s observation and one audio_rtf observation of
// genTimeS / duration. Otherwise (no frames, or no usable sample rate) it
// increments audio_skipped_requests_total{reason="no_audio_data"} instead of
// duration and RTF.
func (m *Metrics) AudioAtFinalize(sr StageReplica, frames int64, sampleRate int, genTimeS float64) {
	if !m.enabled {
		return
	}
	c := m.audioChildren(sr)
	if frames > 0 {
		c.frames.get(func() prometheus.Counter {
			return m.fam[famAudioFrames].counter.With(m.srLabels(c))
		}).Add(float64(frames))
	}
	if frames <= 0 || sampleRate <= 0 {
		c.skipped.get(func() prometheus.Counter {
			l := m.srLabels(c)
			l[LabelReason] = reasonNoAudioData
			return m.fam[famAudioSkipped].counter.With(l)
		}).Inc()
		return
	}
	duration := float64(frames) / float64(sampleRate)
	c.duration.get(func() prometheus.Observer {
		return m.fam[famAudioDuration].histogram.With(m.srLabels(c))
	}).Observe(duration)
	c.rtf.get(func() prometheus.Observer {
		return m.fam[famAudioRTF].histogram.With(m.srLabels(c))
	}).Observe(genTimeS / duration)
}

// AudioFirstPacket records audio_ttfp_s once per streaming chat request, and
// on servers with speech-stream metrics once per speech stream (the caller
// holds the once-per-request guard). A negative value, from clock
// skew, is recorded as 0 like the server does.
func (m *Metrics) AudioFirstPacket(sr StageReplica, ttfpS float64) {
	if !m.enabled {
		return
	}
	c := m.audioChildren(sr)
	c.ttfp.get(func() prometheus.Observer {
		return m.fam[famAudioTTFP].histogram.With(m.srLabels(c))
	}).Observe(max(ttfpS, 0))
}

// AudioStreamingFinalize runs the continuity simulation over a streaming chat
// response's audio chunks (arrival seconds and PCM bytes, s16 mono at
// sampleRate) with Options.ContinuityMode, observes audio_underrun_s =
// MaxUnderrunS and increments audio_continuity_ok_total{threshold_ms} for
// every threshold the response stayed within. It returns the simulation
// result. With no chunks, or with stats off, it records nothing and returns
// the zero Result (the server returns early in both cases and never runs the
// simulation).
func (m *Metrics) AudioStreamingFinalize(sr StageReplica, arrivalsS []float64, bytes []int, sampleRate int) continuity.Result {
	if !m.enabled {
		return continuity.Result{}
	}
	return m.observeContinuity(sr, continuity.Input{ArrivalsS: arrivalsS, Bytes: bytes, SampleRate: sampleRate})
}

// SpeechStreamCompleted records a speech stream that completed normally, as
// servers with speech-stream metrics finalize one (they skip this for
// aborted streams): the continuity simulation over its PCM chunks as in
// AudioStreamingFinalize, but with the stream's real channel count, and
// speech_stream_completed_total +1. Without Options.SpeechStreams or with
// stats off it records nothing.
func (m *Metrics) SpeechStreamCompleted(sr StageReplica, arrivalsS []float64, bytes []int, sampleRate, channels int) continuity.Result {
	c := m.speech[speechCompleted].counter
	if !m.enabled || c == nil {
		return continuity.Result{}
	}
	res := m.observeContinuity(sr, continuity.Input{ArrivalsS: arrivalsS, Bytes: bytes, SampleRate: sampleRate, Channels: channels})
	c.WithLabelValues(m.model).Inc()
	return res
}

// SpeechStreamAborted records a speech stream that ended before completing:
// speech_stream_aborted_total{reason} +1 (SpeechAbortClientGone,
// SpeechAbortError). Without Options.SpeechStreams or with stats off it
// records nothing.
func (m *Metrics) SpeechStreamAborted(reason string) {
	c := m.speech[speechAborted].counter
	if !m.enabled || c == nil {
		return
	}
	c.WithLabelValues(m.model, reason).Inc()
}

// observeContinuity observes audio_underrun_s and audio_continuity_ok_total
// for one stream's chunks; with no chunks it records nothing.
func (m *Metrics) observeContinuity(sr StageReplica, in continuity.Input) continuity.Result {
	if len(in.ArrivalsS) == 0 {
		return continuity.Result{}
	}
	res := continuity.Simulate(in, m.mode)
	c := m.audioChildren(sr)
	c.underrun.get(func() prometheus.Observer {
		return m.fam[famAudioUnderrun].histogram.With(m.srLabels(c))
	}).Observe(max(res.MaxUnderrunS, 0))
	for i, th := range m.thresh {
		if !res.Continuous(th) {
			continue
		}
		c.continuityOK[i].get(func() prometheus.Counter {
			l := m.srLabels(c)
			l[LabelThresholdMS] = m.threshMS[i]
			return m.fam[famAudioContinuityOK].counter.With(l)
		}).Inc()
	}
	return res
}

// TransferHop records one physical transfer between stages: one observation
// in each of transfer_size_bytes, transfer_tx_s, transfer_rx_s and
// transfer_in_flight_s.
func (m *Metrics) TransferHop(e Edge, sizeBytes int, txS, rxS, inFlightS float64) {
	if !m.enabled {
		return
	}
	c := m.edgeChildren(e)
	c.size.Observe(float64(sizeBytes))
	c.tx.Observe(txS)
	c.rx.Observe(rxS)
	c.inFlight.Observe(inFlightS)
}

// lazy holds a child that is created on first use, so a family shows a
// series only once something was recorded in it, like the Python server.
type lazy[T any] struct {
	once sync.Once
	v    T
}

func (l *lazy[T]) get(create func() T) T {
	l.once.Do(func() { l.v = create() })
	return l.v
}

// audioChildren are the audio series of one (stage, replica).
type audioChildren struct {
	stage, replica string
	ttfp           lazy[prometheus.Observer]
	duration       lazy[prometheus.Observer]
	rtf            lazy[prometheus.Observer]
	underrun       lazy[prometheus.Observer]
	frames         lazy[prometheus.Counter]
	skipped        lazy[prometheus.Counter]
	continuityOK   []lazy[prometheus.Counter] // parallel to Metrics.thresh
}

func (m *Metrics) audioChildren(sr StageReplica) *audioChildren {
	if c, ok := m.audio.Load(sr); ok {
		return c.(*audioChildren)
	}
	c := &audioChildren{
		stage:        strconv.Itoa(sr.Stage),
		replica:      strconv.Itoa(sr.Replica),
		continuityOK: make([]lazy[prometheus.Counter], len(m.thresh)),
	}
	got, _ := m.audio.LoadOrStore(sr, c)
	return got.(*audioChildren)
}

// srLabels returns a fresh label map for c's (stage, replica); callers add
// the family's extra label.
func (m *Metrics) srLabels(c *audioChildren) prometheus.Labels {
	return prometheus.Labels{LabelModelName: m.model, LabelStage: c.stage, LabelReplica: c.replica}
}

// edgeChildren are the four transfer series of one edge; TransferHop always
// observes all four, so they are created together.
type edgeChildren struct {
	size, tx, rx, inFlight prometheus.Observer
}

func (m *Metrics) edgeChildren(e Edge) *edgeChildren {
	if c, ok := m.edges.Load(e); ok {
		return c.(*edgeChildren)
	}
	l := prometheus.Labels{
		LabelModelName:   m.model,
		LabelFromStage:   strconv.Itoa(e.FromStage),
		LabelFromReplica: strconv.Itoa(e.FromReplica),
		LabelToStage:     strconv.Itoa(e.ToStage),
		LabelToReplica:   strconv.Itoa(e.ToReplica),
	}
	c := &edgeChildren{
		size:     m.fam[famTransferSize].histogram.With(l),
		tx:       m.fam[famTransferTx].histogram.With(l),
		rx:       m.fam[famTransferRx].histogram.With(l),
		inFlight: m.fam[famTransferInFlight].histogram.With(l),
	}
	got, _ := m.edges.LoadOrStore(e, c)
	return got.(*edgeChildren)
}
