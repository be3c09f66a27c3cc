package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/load"
)

// Audio formats a scenario can request; the client decodes only these.
const (
	FormatWAV = "wav"
	FormatPCM = "pcm"
	// FormatFLAC is measured for chat only: each audio event is a FLAC file.
	FormatFLAC = "flac"
	// FormatMP3 is measured for chat only: each audio event is an MP3 file.
	FormatMP3 = "mp3"
	// FormatOpus is measured for chat only: each audio event is an Ogg Opus
	// file.
	FormatOpus = "opus"
)

// Output modalities of a chat request.
const (
	ModalityText  = "text"
	ModalityAudio = "audio"
)

// Scenario is one workload. See the package documentation for the schema.
type Scenario struct {
	Name          string   `yaml:"name"`
	Description   string   `yaml:"description,omitempty"`
	Kind          string   `yaml:"kind"`
	Endpoint      string   `yaml:"endpoint,omitempty"`
	Model         string   `yaml:"model,omitempty"`
	Voice         string   `yaml:"voice,omitempty"`
	AudioFormat   string   `yaml:"audio_format,omitempty"`
	Modalities    []string `yaml:"modalities,omitempty"`
	PCMSampleRate int      `yaml:"pcm_sample_rate,omitempty"`
	// AudioInputStyle is how chat sends a prompt's audio (AudioStyle*).
	AudioInputStyle string            `yaml:"audio_input_style,omitempty"`
	PromptSpec      PromptSpec        `yaml:"prompts"`
	ExtraBody       map[string]any    `yaml:"extra_body,omitempty"`
	Headers         map[string]string `yaml:"headers,omitempty"`
	Load            LoadDefaults      `yaml:"load,omitempty"`
	Thresholds      []float64         `yaml:"thresholds,omitempty"`
	SLOs            []string          `yaml:"slos,omitempty"`
	Percentiles     []float64         `yaml:"percentiles,omitempty"`
}

// PromptSpec says where the prompts come from.
type PromptSpec struct {
	// Source is "builtin:<set>" or a path to a JSONL or text file.
	Source string `yaml:"source"`
}

// LoadDefaults are the scenario's load settings; zero means "not set" (the
// command's own default applies). They map onto load.Config.
type LoadDefaults struct {
	Concurrency int           `yaml:"concurrency,omitempty"`
	Rate        float64       `yaml:"rate,omitempty"`
	Arrival     string        `yaml:"arrival,omitempty"`
	Burstiness  float64       `yaml:"burstiness,omitempty"`
	Requests    int           `yaml:"requests,omitempty"`
	Duration    time.Duration `yaml:"duration,omitempty"`
	Warmup      int           `yaml:"warmup,omitempty"`
}

// Kinds lists the request kinds in documentation order.
func Kinds() []string {
	return []string{results.KindChat, results.KindSpeech, results.KindSpeechSSE, results.KindSpeechWS, results.KindRealtime, results.KindRealtimeAudio}
}

// DefaultEndpoint is the API path of a request kind ("" for an unknown kind).
func DefaultEndpoint(kind string) string {
	switch kind {
	case results.KindChat:
		return "/v1/chat/completions"
	case results.KindSpeech, results.KindSpeechSSE:
		return "/v1/audio/speech"
	case results.KindSpeechWS:
		return "/v1/audio/speech/stream"
	case results.KindRealtime:
		return "/v1/realtime" // WebSocket, with ?duplex=1
	case results.KindRealtimeAudio:
		return "/v1/realtime" // WebSocket, plain: speech in
	}
	return ""
}

// EndpointPath is the path requests go to: Endpoint when set, else the
// kind's default.
func (s *Scenario) EndpointPath() string {
	if s.Endpoint != "" {
		return s.Endpoint
	}
	return DefaultEndpoint(s.Kind)
}

// applyDefaults fills the fields whose default is independent of the caller,
// so that a loaded scenario states them explicitly.
func (s *Scenario) applyDefaults() {
	if s.AudioFormat == "" {
		s.AudioFormat = FormatWAV
	}
	if s.PromptSpec.Source == "" {
		switch s.Kind {
		case results.KindChat:
			s.PromptSpec.Source = builtinPrefix + "questions"
		case results.KindRealtimeAudio:
			s.PromptSpec.Source = builtinPrefix + "voice" // it sends speech only
		default:
			s.PromptSpec.Source = builtinPrefix + "mixed"
		}
	}
}

// Clone returns a deep copy that shares no maps or slices with s.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Modalities = slices.Clone(s.Modalities)
	c.ExtraBody = copyBody(s.ExtraBody)
	c.Headers = maps.Clone(s.Headers)
	c.Thresholds = slices.Clone(s.Thresholds)
	c.SLOs = slices.Clone(s.SLOs)
	c.Percentiles = slices.Clone(s.Percentiles)
	return &c
}

// A FieldError is one invalid field. Field is the YAML path, such as
// "load.rate", "modalities[1]" or "extra_body.stream".
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// reservedBody maps body fields the client sets itself to the scenario field
// that controls them ("" when only the kind does). extra_body may not set
// them: the request would no longer be what the scenario says.
func reservedBody() map[string]string {
	return map[string]string{
		"model": "model", "voice": "voice", "modalities": "modalities",
		"audio": "audio_format", "response_format": "audio_format",
		"messages": "prompts", "input": "prompts",
		"stream": "", "stream_format": "", "stream_options": "",
	}
}

// forbiddenHeaders are headers a scenario may not set: credentials (use
// --api-key; scenarios are printed and copied around) and framing headers
// the HTTP client owns. Keys are lower case.
func forbiddenHeaders() map[string]string {
	return map[string]string{
		"authorization":       "credentials belong on the command line (--api-key or -H), not in a scenario",
		"proxy-authorization": "credentials do not belong in a scenario",
		"host":                "set by the HTTP client",
		"content-length":      "set by the HTTP client",
		"transfer-encoding":   "set by the HTTP client",
		"connection":          "set by the HTTP client",
	}
}

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// tokenRE is an HTTP header field name (RFC 9110 token).
	tokenRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Validate reports every invalid field as a *FieldError, joined.
func (s *Scenario) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}

	if !nameRE.MatchString(s.Name) {
		bad("name", "must be letters, digits, '.', '_' or '-' (got %q)", s.Name)
	}
	if !slices.Contains(Kinds(), s.Kind) {
		bad("kind", "must be one of %s (got %q)", strings.Join(Kinds(), ", "), s.Kind)
	}
	if s.Endpoint != "" && (!strings.HasPrefix(s.Endpoint, "/") || strings.ContainsAny(s.Endpoint, " \t\r\n?#")) {
		bad("endpoint", "must be a URL path starting with / without query or spaces (got %q)", s.Endpoint)
	}
	switch s.AudioFormat {
	case FormatWAV:
	case FormatPCM:
		if s.PCMSampleRate == 0 {
			bad("pcm_sample_rate", "required with audio_format pcm, which states no rate (24000 for Qwen3-Omni and Qwen3-TTS)")
		}
	case FormatFLAC, FormatMP3, FormatOpus:
		if s.Kind != results.KindChat {
			bad("audio_format", "%s is measured for kind %s only (speech streams are wav or pcm)", s.AudioFormat, results.KindChat)
		}
	default:
		bad("audio_format", "must be %s, %s or (chat) %s, %s, %s (got %q)", FormatWAV, FormatPCM, FormatFLAC, FormatMP3, FormatOpus, s.AudioFormat)
	}
	if s.PCMSampleRate < 0 || s.PCMSampleRate > 768000 || (s.PCMSampleRate > 0 && s.PCMSampleRate < 1000) {
		bad("pcm_sample_rate", "must be between 1000 and 768000 Hz (got %d)", s.PCMSampleRate)
	}
	if len(s.Modalities) > 0 && s.Kind != results.KindChat {
		bad("modalities", "applies only to kind %s", results.KindChat)
	}
	if len(s.ExtraBody) > 0 && s.Kind == results.KindRealtimeAudio {
		// Plain /v1/realtime reads only session.update's model: fields
		// sent anyway would be ignored by the server without a word.
		bad("extra_body", "kind %s (plain /v1/realtime) takes no request options; remove extra_body", results.KindRealtimeAudio)
	}
	for i, m := range s.Modalities {
		if m != ModalityText && m != ModalityAudio {
			bad(fmt.Sprintf("modalities[%d]", i), "must be %s or %s (got %q)", ModalityText, ModalityAudio, m)
		} else if slices.Index(s.Modalities, m) < i {
			bad(fmt.Sprintf("modalities[%d]", i), "%q listed twice", m)
		}
	}
	if err := checkAudioInputStyle(s.AudioInputStyle); err != nil {
		bad("audio_input_style", "%v", err)
	}
	if err := checkPromptSource(s.PromptSpec.Source); err != nil {
		bad("prompts.source", "%v", err)
	}
	s.validateRequestFields(bad)
	s.Load.validate(bad)
	s.validateGoals(bad)
	return errors.Join(errs...)
}

// validateRequestFields checks what the scenario adds to every request:
// the extra body fields and the headers.
func (s *Scenario) validateRequestFields(bad func(field, format string, args ...any)) {
	reserved := reservedBody()
	for _, k := range slices.Sorted(maps.Keys(s.ExtraBody)) {
		field := "extra_body." + k
		if by, ok := reserved[k]; ok {
			if by == "" {
				bad(field, "set by omnibench from the scenario kind")
			} else {
				bad(field, "set by omnibench; use the scenario field %s", by)
			}
			continue
		}
		if err := checkJSONValue(s.ExtraBody[k]); err != nil {
			bad(field, "%v", err)
		} else if _, err := json.Marshal(s.ExtraBody[k]); err != nil {
			bad(field, "not representable as JSON: %v", err)
		}
	}
	forbidden := forbiddenHeaders()
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		field := "headers." + k
		switch {
		case !tokenRE.MatchString(k):
			bad(field, "not a valid HTTP header name")
		case forbidden[strings.ToLower(k)] != "":
			bad(field, "not allowed: %s", forbidden[strings.ToLower(k)])
		case strings.ContainsAny(s.Headers[k], "\r\n\x00"):
			bad(field, "value contains a line break or NUL")
		}
	}
}

// validateGoals checks what the scenario judges a run by: the continuity
// thresholds, the SLO expressions and the percentiles reported.
func (s *Scenario) validateGoals(bad func(field, format string, args ...any)) {
	for i, th := range s.Thresholds {
		if !(th > 0) || math.IsInf(th, 0) {
			bad(fmt.Sprintf("thresholds[%d]", i), "must be a positive number of seconds (got %v)", th)
		}
	}
	for i, expr := range s.SLOs {
		field := fmt.Sprintf("slos[%d]", i)
		if strings.TrimSpace(expr) == "" {
			bad(field, "empty")
			continue
		}
		// The same grammar run evaluates, so the checker refuses what run
		// would refuse.
		if _, err := slo.Parse(expr); err != nil {
			var pe *slo.ParseError
			if errors.As(err, &pe) {
				bad(field, "%q: column %d: %s", expr, pe.Column+1, pe.Msg)
			} else {
				bad(field, "%q: %v", expr, err)
			}
		}
	}
	for i, p := range s.Percentiles {
		if !(p > 0 && p <= 100) {
			bad(fmt.Sprintf("percentiles[%d]", i), "must be in (0, 100] (got %v)", p)
		}
	}
}

func (l LoadDefaults) validate(bad func(field, format string, args ...any)) {
	if l.Concurrency < 0 {
		bad("load.concurrency", "must be >= 0 (got %d)", l.Concurrency)
	}
	if !(l.Rate >= 0) || math.IsInf(l.Rate, 0) {
		bad("load.rate", "must be a finite number >= 0 (got %v)", l.Rate)
	}
	if l.Arrival != "" && !slices.Contains(load.Arrivals(), l.Arrival) {
		bad("load.arrival", "must be one of %s (got %q)", strings.Join(load.Arrivals(), ", "), l.Arrival)
	}
	if !(l.Burstiness >= 0) || math.IsInf(l.Burstiness, 0) {
		bad("load.burstiness", "must be a finite number >= 0 (got %v)", l.Burstiness)
	} else if l.Burstiness != 0 && l.Burstiness != 1 && l.Arrival != load.Gamma {
		// What load.Config.Validate refuses when run applies it.
		bad("load.burstiness", "%v needs arrival %s (arrival is %q)", l.Burstiness, load.Gamma, l.Arrival)
	}
	if expected := l.Rate * l.Duration.Seconds(); l.Rate > 0 && l.Requests == 0 && expected > load.MaxArrivals {
		bad("load.rate", "%v/s over load.duration %v needs about %.0f arrivals, more than the limit of %d; lower one or set load.requests",
			l.Rate, l.Duration, expected, load.MaxArrivals)
	}
	if l.Requests < 0 {
		bad("load.requests", "must be >= 0 (got %d)", l.Requests)
	}
	if l.Duration < 0 {
		bad("load.duration", "must be >= 0 (got %v)", l.Duration)
	}
	if l.Warmup < 0 {
		bad("load.warmup", "must be >= 0 (got %d)", l.Warmup)
	}
}

// SetKind overrides the scenario's request kind (run --kind). The endpoint
// follows the new kind, and fields that only the old kind takes are dropped
// rather than left to fail validation: `--kind speech` on the chat-voice
// scenario is a speech run, not an error about modalities. It returns one note
// per dropped field, for stderr.
func (s *Scenario) SetKind(kind string) (notes []string) {
	if kind == s.Kind {
		return nil
	}
	if s.Endpoint != "" {
		notes = append(notes, fmt.Sprintf("--kind %s: the scenario's endpoint %s is for kind %s; using %s", kind, s.Endpoint, s.Kind, DefaultEndpoint(kind)))
	}
	s.Kind, s.Endpoint = kind, ""
	if kind != results.KindChat && len(s.Modalities) > 0 {
		notes = append(notes, fmt.Sprintf("--kind %s: dropped the scenario's chat-only field modalities [%s]", kind, strings.Join(s.Modalities, ", ")))
		s.Modalities = nil
	}
	return notes
}
