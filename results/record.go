// Package results defines what omnibench records about a run: one Record per
// request, a Header describing the run, and the JSONL file that carries both.
// Every other package that produces or reads per-request figures speaks these
// types, so a saved run can be re-reported, replayed or compared later.
package results

// SchemaVersion is written into every header line and summary. Bump it when a
// field changes meaning; adding a field does not need a bump.
const SchemaVersion = 1

// Request kinds. They name the wire protocol, not the scenario.
const (
	KindChat      = "chat"       // POST /v1/chat/completions, stream: true (SSE)
	KindSpeech    = "speech"     // POST /v1/audio/speech, stream_format "audio" (raw byte stream)
	KindSpeechSSE = "speech-sse" // POST /v1/audio/speech, stream_format "sse"
)

// Error classes. A failed request has exactly one.
const (
	ErrConnect     = "connect"      // dial, TLS or write failure before any response
	ErrHTTPStatus  = "http_status"  // non-2xx status before the stream (Record.Status holds the code)
	ErrStreamError = "stream_error" // an error event inside the stream
	ErrIdleTimeout = "idle_timeout" // no byte for the idle timeout
	ErrTimeout     = "timeout"      // the whole-request deadline passed
	ErrMalformed   = "malformed"    // not audio: bad JSON, base64 or WAV, wrong Content-Type, line/event over the cap, not HTTP
	ErrTruncated   = "truncated"    // the stream ended without [DONE] / speech.audio.done, or WAV data short of its declared size
	ErrCancelled   = "cancelled"    // the run was interrupted while the request was in flight
)

// ErrorClasses lists every class in report order.
func ErrorClasses() []string {
	return []string{ErrConnect, ErrHTTPStatus, ErrStreamError, ErrIdleTimeout, ErrTimeout, ErrMalformed, ErrTruncated, ErrCancelled}
}

// Latency origins: where a record's latencies (TTFP, TTFT, end-to-end) are
// measured from. Record.Latency applies the origin; every consumer reads
// latencies through it.
const (
	// OriginIntended measures from the request's intended start: the
	// scheduling lag is added, so a late send (coordinated omission) shows up
	// as latency. An open-loop run records this origin.
	OriginIntended = "intended"
	// OriginSend measures from the actual send. A closed-loop run, where the
	// next request waits for the previous one, records this origin.
	OriginSend = "send"
)

// Record is everything measured about one request. Times ending in _s are
// seconds. Offsets inside a request (connect_s, ttfp_s, chunk arrivals, ...)
// are stored as measured from the actual send time; IntendedS and SentS are
// offsets from the start of the run, and LagS = SentS - IntendedS is the
// scheduling lag. LatencyOrigin says whether the request's latencies count
// that lag (read them with Latency, never the raw fields).
type Record struct {
	Type string `json:"type"` // always "request" in a JSONL file

	ID       string `json:"id"`
	Seq      int    `json:"seq"`
	Warmup   bool   `json:"warmup,omitempty"`
	Kind     string `json:"kind"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model,omitempty"`

	IntendedS float64 `json:"intended_s"`
	SentS     float64 `json:"sent_s"`
	LagS      float64 `json:"lag_s"`
	// LatencyOrigin is OriginIntended or OriginSend. Records written before
	// the field existed get their run's origin when read (Header.LatencyOrigin).
	LatencyOrigin string `json:"latency_origin,omitempty"`

	Status     int    `json:"status,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	Error      string `json:"error,omitempty"`

	ConnectS   float64   `json:"connect_s,omitempty"`    // connection established (0 when reused)
	FirstByteS float64   `json:"first_byte_s,omitempty"` // first response byte
	TTFPS      float64   `json:"ttfp_s,omitempty"`       // first non-empty audio chunk; 0 when none
	TTFTS      float64   `json:"ttft_s,omitempty"`       // first non-empty text token; 0 when none
	TextGapsS  []float64 `json:"text_gaps_s,omitempty"`  // gaps between consecutive text events
	LastAudioS float64   `json:"last_audio_s,omitempty"` // last non-empty audio chunk
	E2ES       float64   `json:"e2e_s"`                  // end of response (or failure)

	// Audio received, after decoding every event by its header.
	SampleRate     int     `json:"sample_rate,omitempty"`
	SampleWidth    int     `json:"sample_width,omitempty"` // bytes per sample (2 for s16le)
	Channels       int     `json:"channels,omitempty"`
	AudioBytes     int64   `json:"audio_bytes,omitempty"`
	AudioFrames    int64   `json:"audio_frames,omitempty"`
	AudioDurationS float64 `json:"audio_duration_s,omitempty"`

	// The chunk timeline: arrival offset (from send) and PCM byte count of every
	// non-empty audio chunk, in arrival order.
	ChunkArrivalsS []float64 `json:"chunk_arrivals_s,omitempty"`
	ChunkBytes     []int     `json:"chunk_bytes,omitempty"`

	// Client timestamping delay: receive time minus the simulator's send stamp,
	// one value per stamped event. Empty against servers that do not stamp.
	StampDelaysS []float64 `json:"stamp_delays_s,omitempty"`

	PromptTokens     int    `json:"prompt_tokens,omitempty"`
	CompletionTokens int    `json:"completion_tokens,omitempty"`
	FinishReason     string `json:"finish_reason,omitempty"`
	TextChars        int    `json:"text_chars,omitempty"` // characters of text received

	// Real-time factors, protocol section 8. Zero when there was no audio.
	RTFLastChunk float64  `json:"rtf_last_chunk,omitempty"` // (last audio - send) / duration
	RTFE2E       float64  `json:"rtf_e2e,omitempty"`        // e2e / duration
	RTFServer    *float64 `json:"rtf_server,omitempty"`     // server generation time / duration, when the server says

	Continuity *Continuity `json:"continuity,omitempty"`
}

// Continuity holds the player simulations of one response's chunk timeline.
type Continuity struct {
	Mode           string          `json:"mode"` // "default" or "reference"
	MaxUnderrunS   float64         `json:"max_underrun_s"`
	UnderrunEvents int             `json:"underrun_events"`
	OK             map[string]bool `json:"ok"` // threshold in integer ms ("100") -> continuous
	Preroll        *PlayerResult   `json:"preroll,omitempty"`
	StallResume    *PlayerResult   `json:"stall_resume,omitempty"`
}

// PlayerResult is what a listener experiences with one player model.
type PlayerResult struct {
	StartupDelayS float64 `json:"startup_delay_s"` // first arrival to playback start
	Stalls        int     `json:"stalls"`
	TotalStallS   float64 `json:"total_stall_s"`
	LongestStallS float64 `json:"longest_stall_s"`
}

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.ErrorClass == "" }

// Latency returns a latency of this request measured from its origin.
// sinceSendS is an offset stored from the actual send (TTFPS, TTFTS, E2ES,
// LastAudioS); for OriginIntended the scheduling lag is added. This is the one
// definition the report, compare, ab, slo, goodput and the exporter share.
func (r *Record) Latency(sinceSendS float64) float64 {
	if r.Origin() == OriginIntended {
		return sinceSendS + r.LagS
	}
	return sinceSendS
}

// Origin is the record's latency origin; a record that does not say (built in
// memory without one) measures from the send.
func (r *Record) Origin() string {
	if r.LatencyOrigin == OriginIntended {
		return OriginIntended
	}
	return OriginSend
}

// HasAudio reports whether any audio was received.
func (r *Record) HasAudio() bool { return r.AudioBytes > 0 }

// Header is the first line of a results JSONL file.
type Header struct {
	Type          string            `json:"type"` // always "header"
	SchemaVersion int               `json:"schema_version"`
	Version       string            `json:"version"`
	StartedAt     string            `json:"started_at"` // RFC 3339
	Target        string            `json:"target"`     // base URL, never with credentials
	Simulator     bool              `json:"simulator,omitempty"`
	Scenario      string            `json:"scenario,omitempty"`
	Seed          int64             `json:"seed"`
	Mode          string            `json:"mode"` // "closed" or "open"
	Concurrency   int               `json:"concurrency,omitempty"`
	Rate          float64           `json:"rate,omitempty"`
	Arrival       string            `json:"arrival,omitempty"`
	Flags         map[string]string `json:"flags,omitempty"` // as given, secrets removed

	// A shard (omnibench run --shard I/N) is part I of a test split over N
	// processes; StartAt is the agreed wall-clock start of the measured
	// phase (--start-at, RFC 3339) and StartLateS how long after it this
	// process began (the timer's wake-up error when it was early).
	// Warmup is the warm-up count of the run (per shard in a shard): the
	// measured records are numbered from it.
	Warmup     int     `json:"warmup,omitempty"`
	ShardIndex int     `json:"shard_index,omitempty"`
	ShardCount int     `json:"shard_count,omitempty"`
	StartAt    string  `json:"start_at,omitempty"`
	StartLateS float64 `json:"start_late_s,omitempty"`
	// Merged describes a file written by omnibench merge from shards.
	Merged *Merged `json:"merged,omitempty"`
}

// Merged is what omnibench merge records about the shards it joined.
type Merged struct {
	Shards []MergedShard `json:"shards"` // by index
	// StartSkewS is the spread of the shards' measured starts: the latest
	// StartLateS less the earliest.
	StartSkewS float64 `json:"start_skew_s"`
	// Warmup counts the shards' warm-up records (each shard warms its own
	// connections and numbers them from 0: the merge prefixes their ids with
	// "shardI-").
	Warmup int `json:"warmup,omitempty"`
}

// MergedShard is one shard of a merge.
type MergedShard struct {
	Index      int     `json:"index"`
	File       string  `json:"file"`
	StartedAt  string  `json:"started_at"`
	StartLateS float64 `json:"start_late_s"`
	Records    int     `json:"records"` // measured records taken
}

// LatencyOrigin is the origin a run of this header's mode measured its
// latencies from: the intended start in an open loop, the send otherwise.
// Readers give it to records that do not carry their own (files written
// before Record.LatencyOrigin existed).
func (h Header) LatencyOrigin() string {
	if h.Mode == "open" {
		return OriginIntended
	}
	return OriginSend
}
