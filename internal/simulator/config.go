package simulator

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// Defaults of Config and Timing. The timing defaults keep a default run quick
// (a 30-character prompt streams in well under a second) while looking like a
// real deployment: chunks of 0.32 s of audio, TTFA 150 ms, RTF 0.3.
const (
	DefaultAddr       = "127.0.0.1:8000"
	DefaultModel      = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
	DefaultSampleRate = 24000
	DefaultVoice      = "Chelsie"

	// defaultStallFault is how long the stall fault holds a stream: longer
	// than any sensible client idle timeout.
	defaultStallFault = 30 * time.Second
	// defaultVoiceMuteFor is the voice-mute fault's span: longer than the
	// one-second internal gap that flags a response's audio, and than any
	// pause espeak-ng makes (about 0.45 s at a sentence end).
	defaultVoiceMuteFor = 1500 * time.Millisecond
	// defaultOversizedBytes is the base64 size of the oversized audio event.
	defaultOversizedBytes = 300 * 1024
	// maxStages bounds the topology so labels stay a handful of series.
	maxStages = 16
	// maxReplicas bounds replicas per stage for the same reason.
	maxReplicas = 256
)

// Config configures a simulated server. The zero value of a field means its
// default where documented; New validates the rest.
type Config struct {
	Addr         string   // listen address for Start; default DefaultAddr ("127.0.0.1:0" picks a free port)
	Model        string   // served model name; default DefaultModel
	SampleRate   int      // Hz of the generated audio; default 24000
	Topology     []int    // replicas per stage, stage 0 first; default [1 1 1] (thinker, talker, code2wav)
	StatsEnabled bool     // metric gating (docs/reference/metric-families.md, section 2; --log-stats); off records nothing
	Prefix       string   // pipeline family prefix: omnimetrics.PrefixDesign (default) or PrefixCurrent
	Seed         int64    // seeds every request's generator
	Timing       Timing   // the zero Timing means DefaultTiming()
	Faults       Faults   // all rates zero: no faults
	Slow         Slowness // a stage, replica or edge made slower (slow.go); zero: none
	Capacity     int      // concurrent streams served at full speed; 0 = unlimited
	Stamp        bool     // write ": sent=<unix ns>" before every SSE data event (off: real servers send no comments)
	WS           WSConfig // timeouts and limits of the WebSocket endpoints; zero fields mean upstream's
	// StatsCost is the extra service time of recording one request's stats,
	// spent after its last event and only when StatsEnabled. The capacity
	// model slows it down as it does generation, so it lengthens every
	// request and, at saturation, lowers the requests served per second:
	// an A/B run of stats on and off then has a real cost to find. 0, the
	// default, costs nothing.
	StatsCost time.Duration
	// DuplexOnly serves as a model with a duplex plugin is served: the
	// duplex session (WS /v1/realtime?duplex=1 and WS /v1/duplex),
	// /v1/models, /health and /metrics; every other turn-based route
	// answers that it is not available (duplex.go).
	DuplexOnly bool
	// DuplexChat, with DuplexOnly, keeps POST /v1/chat/completions, as
	// when the duplex plugin supports chat.
	DuplexChat bool
	// NoSpeechStreamMetrics simulates a server from before September 2026:
	// speech streams feed only the request-end families. By default (false),
	// as on current servers, raw, SSE and WebSocket speech streams also
	// record audio_ttfp_s, audio_underrun_s and audio_continuity_ok_total,
	// and count in the speech-stream counters (omnimetrics.SpeechStreamFamilies).
	NoSpeechStreamMetrics bool
	// VoiceEngine is the voice of the responses' audio: VoiceTones (the
	// default, also "") or VoiceEspeak.
	VoiceEngine string

	// onSend, when set (this package's tests and benchmarks), is told each
	// streamed event's scheduled time (wall clock) and how late it left.
	onSend func(due time.Time, late time.Duration)
	// voiceEngine, when set (this package's tests), replaces espeak-ng
	// behind VoiceEspeak.
	voiceEngine VoiceEngine
}

// Timing is the generation timing model (see the package documentation for
// the formulas). Durations are wall-clock time, except ChunkAudio,
// AudioPerChar, MinAudio and MaxAudio, which are lengths of audio.
type Timing struct {
	TTFT         time.Duration // first text word after arrival
	WordInterval time.Duration // between text words
	TTFA         time.Duration // first audio chunk after arrival
	ChunkAudio   time.Duration // audio per chunk; 0 means the default
	RTF          float64       // vocoder generation time per second of audio
	Jitter       float64       // relative uniform jitter, in [0, 1)
	StallProb    float64       // probability of a stall before each audio chunk
	Stall        time.Duration // length of such a stall
	AudioPerChar time.Duration // audio per character of text; 0 means the default
	MinAudio     time.Duration // lower bound of a response's audio
	MaxAudio     time.Duration // upper bound of a response's audio; 0 means the default
	// LeadingSilence is digital silence at the start of every response's
	// audio (servers often begin so); the voice fills the rest. It moves the
	// audible onset (ttfa_audible), not TTFP.
	LeadingSilence time.Duration
	AudioPrefill   time.Duration // prefill time per second of input audio (voice prompts, ref_audio)
}

// Faults are per-request fault probabilities in [0, 1].
type Faults struct {
	HTTP500    float64       // answer 500 before the stream starts
	Disconnect float64       // drop the connection mid-stream
	ErrorEvent float64       // send an error event mid-stream (then [DONE] on chat)
	Stall      float64       // stop sending mid-stream for StallFor, or until the client leaves
	StallFor   time.Duration // length of the stall fault; 0 means 30 s
	EmptyAudio float64       // produce no audio (recorded as skipped{no_audio_data})
	// EmptyAudioEvent makes a streaming chat response's first audio output
	// one with no samples (upstream #5237): an audio event with content ""
	// sent with the first text word (or right before the first audio chunk
	// without text). The server's TTFP counts it, as does the vLLM-Omni
	// benchmark's; omnibench's TTFP waits for the first non-empty audio.
	EmptyAudioEvent float64
	MalformedBase64 float64 // corrupt the base64 of one audio event
	Oversized       float64 // make one audio event about OversizedBytes of base64
	OversizedBytes  int     // base64 size of the oversized event; 0 means 300 KiB
	// Damage to the spoken voice (VoiceEngine espeak-ng only), drawn from
	// a generator of their own so that the other draws stay those of the
	// tone voice:
	VoiceMute    float64       // silence VoiceMuteFor of the speech around its middle
	VoiceMuteFor time.Duration // length of the muted span; 0 means 1.5 s
	VoiceClip    float64       // drive the speech 18 dB past full scale (clipping)
	VoiceCutEnd  float64       // stop the speech at 60% of its length, mid-utterance
	VoiceSwap    float64       // speak the previous different text the server spoke instead
}

// DefaultTiming is the timing of a default `omnibench serve`.
func DefaultTiming() Timing {
	return Timing{
		TTFT:         40 * time.Millisecond,
		WordInterval: 15 * time.Millisecond,
		TTFA:         150 * time.Millisecond,
		ChunkAudio:   320 * time.Millisecond,
		RTF:          0.3,
		Jitter:       0.1,
		StallProb:    0,
		Stall:        500 * time.Millisecond,
		AudioPerChar: 60 * time.Millisecond,
		MinAudio:     500 * time.Millisecond,
		MaxAudio:     30 * time.Second,
		AudioPrefill: 20 * time.Millisecond,
	}
}

// DefaultConfig is the configuration of a default `omnibench serve`.
func DefaultConfig() Config {
	return Config{
		Addr:       DefaultAddr,
		Model:      DefaultModel,
		SampleRate: DefaultSampleRate,
		Topology:   []int{1, 1, 1},
		Prefix:     omnimetrics.PrefixDesign,
		Timing:     DefaultTiming(),
		Capacity:   0,
	}
}

// KneeStreams is the number of concurrent streams above which playback
// continuity breaks under the capacity model (Capacity / RTF); +Inf when
// the capacity is unlimited or RTF is 0.
func (c Config) KneeStreams() float64 {
	if c.Capacity <= 0 || c.Timing.RTF <= 0 {
		return math.Inf(1)
	}
	return float64(c.Capacity) / c.Timing.RTF
}

// withDefaults fills the documented zero-value defaults and validates the
// result. Errors name the field (as its serve flag) and the bad value.
func (c Config) withDefaults() (Config, error) {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	if len(c.Topology) == 0 {
		c.Topology = []int{1, 1, 1}
	} else {
		c.Topology = append([]int(nil), c.Topology...) // never alias the caller's slice
	}
	c.Slow = c.Slow.clone()
	if c.Prefix == "" {
		c.Prefix = omnimetrics.PrefixDesign
	}
	if c.Timing == (Timing{}) {
		c.Timing = DefaultTiming()
	}
	def := DefaultTiming()
	if c.Timing.ChunkAudio == 0 {
		c.Timing.ChunkAudio = def.ChunkAudio
	}
	if c.Timing.AudioPerChar == 0 {
		c.Timing.AudioPerChar = def.AudioPerChar
	}
	if c.Timing.MaxAudio == 0 {
		c.Timing.MaxAudio = def.MaxAudio
	}
	if c.Faults.StallFor == 0 {
		c.Faults.StallFor = defaultStallFault
	}
	if c.Faults.OversizedBytes == 0 {
		c.Faults.OversizedBytes = defaultOversizedBytes
	}
	if c.Faults.VoiceMuteFor == 0 {
		c.Faults.VoiceMuteFor = defaultVoiceMuteFor
	}
	if c.VoiceEngine == "" {
		c.VoiceEngine = VoiceTones
	}
	c.WS = c.WS.withDefaults()
	return c, c.validate()
}

func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.SampleRate < 1000 || c.SampleRate > 384000 {
		bad("--sample-rate: %d Hz is outside 1000..384000", c.SampleRate)
	}
	if len(c.Topology) > maxStages {
		bad("--replicas: %d stages, at most %d", len(c.Topology), maxStages)
	}
	for i, n := range c.Topology {
		if n < 1 || n > maxReplicas {
			bad("--replicas: stage %d has %d replicas, want 1..%d", i, n, maxReplicas)
		}
	}
	if c.Prefix != omnimetrics.PrefixDesign && c.Prefix != omnimetrics.PrefixCurrent {
		bad("--metrics-prefix: %q is neither %q nor %q", c.Prefix, omnimetrics.PrefixDesign, omnimetrics.PrefixCurrent)
	}
	if c.Capacity < 0 {
		bad("--capacity: %d is negative", c.Capacity)
	}
	if c.StatsCost < 0 {
		bad("--stats-cost: %v is negative", c.StatsCost)
	}
	t := c.Timing
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--ttft", t.TTFT}, {"--word-interval", t.WordInterval}, {"--ttfa", t.TTFA},
		{"--chunk-audio", t.ChunkAudio}, {"--stall", t.Stall}, {"--audio-per-char", t.AudioPerChar},
		{"--min-audio", t.MinAudio}, {"--max-audio", t.MaxAudio}, {"--fault-stall-for", c.Faults.StallFor},
		{"--audio-prefill", t.AudioPrefill},
	} {
		if d.v < 0 {
			bad("%s: %v is negative", d.flag, d.v)
		}
	}
	if err := c.WS.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.DuplexChat && !c.DuplexOnly {
		bad("--duplex-chat: only with --duplex-only (every other server serves chat)")
	}
	if t.ChunkAudio > 0 && t.ChunkAudio.Seconds()*float64(c.SampleRate) < 1 {
		bad("--chunk-audio: %v is shorter than one sample at %d Hz", t.ChunkAudio, c.SampleRate)
	}
	if t.MinAudio > t.MaxAudio {
		bad("--min-audio: %v exceeds --max-audio %v", t.MinAudio, t.MaxAudio)
	}
	if t.LeadingSilence < 0 || t.LeadingSilence > time.Hour {
		bad("--leading-silence: %v is outside 0..1h", t.LeadingSilence)
	}
	if t.MaxAudio > time.Hour {
		bad("--max-audio: %v exceeds one hour", t.MaxAudio)
	}
	if math.IsNaN(t.RTF) || t.RTF < 0 || t.RTF > 1000 {
		bad("--rtf: %v is outside 0..1000", t.RTF)
	}
	if math.IsNaN(t.Jitter) || t.Jitter < 0 || t.Jitter >= 1 {
		bad("--jitter: %v is outside [0, 1)", t.Jitter)
	}
	f := c.Faults
	for _, r := range []struct {
		flag string
		v    float64
	}{
		{"--stall-prob", t.StallProb}, {"--fault-500", f.HTTP500}, {"--fault-disconnect", f.Disconnect},
		{"--fault-error-event", f.ErrorEvent}, {"--fault-stall", f.Stall}, {"--fault-empty-audio", f.EmptyAudio},
		{"--fault-empty-audio-event", f.EmptyAudioEvent},
		{"--fault-bad-base64", f.MalformedBase64}, {"--fault-oversized", f.Oversized},
	} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			bad("%s: probability %v is outside [0, 1]", r.flag, r.v)
		}
	}
	if err := c.validateVoice(); err != nil {
		errs = append(errs, err)
	}
	if len(c.Topology) <= maxStages {
		if err := c.Slow.validate(c.Topology); err != nil {
			errs = append(errs, err)
		}
	}
	if f.OversizedBytes < 1024 || f.OversizedBytes > 64<<20 {
		bad("--fault-oversized-bytes: %d is outside 1024..%d", f.OversizedBytes, 64<<20)
	}
	return errors.Join(errs...)
}

// validate checks the WebSocket endpoints' timeouts, frame limit and event
// names.
func (w WSConfig) validate() error {
	var errs []error
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"WS.SpeechConfigTimeout", w.SpeechConfigTimeout}, {"WS.SpeechIdleTimeout", w.SpeechIdleTimeout},
		{"WS.RealtimeFirstTimeout", w.RealtimeFirstTimeout}, {"WS.RealtimeIdleTimeout", w.RealtimeIdleTimeout},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s: %v is negative", d.field, d.v))
		}
	}
	if w.MaxFrameBytes < 0 {
		errs = append(errs, fmt.Errorf("WS.MaxFrameBytes: %d is negative", w.MaxFrameBytes))
	}
	if e := w.RealtimeEvents; e != RealtimeEventsGA && e != RealtimeEventsLegacy {
		errs = append(errs, fmt.Errorf("--realtime-events: %q is neither %q nor %q", e, RealtimeEventsGA, RealtimeEventsLegacy))
	}
	return errors.Join(errs...)
}

// validateVoice checks the voice engine and its faults.
func (c Config) validateVoice() error {
	f := c.Faults
	if c.VoiceEngine != VoiceTones && c.VoiceEngine != VoiceEspeak {
		return fmt.Errorf("--voice-engine: %q is neither %q nor %q", c.VoiceEngine, VoiceTones, VoiceEspeak)
	}
	for _, r := range []struct {
		field string
		v     float64
	}{{"--fault-voice-mute", f.VoiceMute}, {"--fault-voice-clip", f.VoiceClip}, {"--fault-voice-cut-end", f.VoiceCutEnd}, {"--fault-voice-swap", f.VoiceSwap}} {
		if math.IsNaN(r.v) || r.v < 0 || r.v > 1 {
			return fmt.Errorf("%s: probability %v is outside [0, 1]", r.field, r.v)
		}
		if r.v > 0 && c.VoiceEngine != VoiceEspeak {
			return fmt.Errorf("%s: damages the spoken voice; needs --voice-engine %s", r.field, VoiceEspeak)
		}
	}
	if f.VoiceMuteFor < 0 || f.VoiceMuteFor > time.Hour {
		return fmt.Errorf("--fault-voice-mute-for: %v is outside 0..1h", f.VoiceMuteFor)
	}
	return nil
}

// ParseReplicas parses a replica list such as "1,2,2" (replicas of stage 0,
// 1, 2, ...) as used by --replicas.
func ParseReplicas(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("replica list is empty; want e.g. 1,2,2")
	}
	parts := strings.Split(s, ",")
	out := make([]int, 0, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("replica list %q: stage %d: %q is not an integer", s, i, p)
		}
		if n < 1 {
			return nil, fmt.Errorf("replica list %q: stage %d: %d replicas, want at least 1", s, i, n)
		}
		out = append(out, n)
	}
	return out, nil
}
