// Package results defines what omnibench records about a run: one Record per
// request, a Header describing the run, and the JSONL file that carries both.
// Every other package that produces or reads per-request figures speaks these
// types, so a saved run can be re-reported, replayed or compared later.
package results

import (
	"fmt"
	"strings"
)

// SchemaVersion is written into every header line and summary. Bump it when a
// field changes meaning; adding a field does not need a bump.
const SchemaVersion = 1

// Request kinds. They name the wire protocol, not the scenario.
const (
	KindChat      = "chat"       // POST /v1/chat/completions, stream: true (SSE)
	KindSpeech    = "speech"     // POST /v1/audio/speech, stream_format "audio" (raw byte stream)
	KindSpeechSSE = "speech-sse" // POST /v1/audio/speech, stream_format "sse"
	KindSpeechWS  = "speech-ws"  // WS /v1/audio/speech/stream: one record per utterance of a session
	KindRealtime  = "realtime"   // WS /v1/realtime?duplex=1 (OpenAI Realtime): one record per turn of a session
	// KindRealtimeAudio is plain WS /v1/realtime: speech in (16 kHz PCM16
	// appends), speech out; one record per commit cycle of a session.
	KindRealtimeAudio = "realtime-audio"
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
	// ErrNoAudio is a response that asked for audio (speech, chat with
	// "audio" in its modalities) and ended normally with no audio sample:
	// text only, or only audio events without samples. The server finished
	// it (Delivered), but it did not do the request's job.
	ErrNoAudio = "no_audio"
	// ErrClientLimit is the client machine's own limit, not the server's
	// failure: out of file descriptors (EMFILE, ENFILE) or local ports
	// (EADDRNOTAVAIL). It counts as a failed request, named as the
	// client's, and makes the run's figures the client's, not the server's.
	ErrClientLimit = "client_limit"
)

// ErrorClasses lists every class in report order.
func ErrorClasses() []string {
	return []string{ErrConnect, ErrHTTPStatus, ErrStreamError, ErrIdleTimeout, ErrTimeout, ErrMalformed, ErrTruncated, ErrNoAudio, ErrCancelled, ErrClientLimit}
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

	ID     string `json:"id"`
	Seq    int    `json:"seq"`
	Warmup bool   `json:"warmup,omitempty"`
	// Phase is "ramp" for a request started while the load was ramping
	// (--ramp-up, --stages, a rate range); such requests are left out of
	// the figures unless --include-ramp. "" is the steady phase.
	Phase    string `json:"phase,omitempty"`
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

	// QueueS is the client queue time: how long the request waited for a
	// connection (the client's connection bound reached), not counting the
	// setup of a connection it dialled itself. It is inside
	// every latency below, which run from the send time.
	QueueS     float64   `json:"queue_s,omitempty"`
	ConnectS   float64   `json:"connect_s,omitempty"`    // connection established (0 when reused)
	FirstByteS float64   `json:"first_byte_s,omitempty"` // first response byte
	TTFPS      float64   `json:"ttfp_s,omitempty"`       // first non-empty audio chunk; 0 when none
	TTFTS      float64   `json:"ttft_s,omitempty"`       // first non-empty text token; 0 when none
	TextGapsS  []float64 `json:"text_gaps_s,omitempty"`  // gaps between consecutive text events
	LastAudioS float64   `json:"last_audio_s,omitempty"` // last non-empty audio chunk
	E2ES       float64   `json:"e2e_s"`                  // end of response (or failure)

	// Audible onset (package onset): TTFAAudibleS is the arrival of the chunk
	// holding the first sample of the first window above the audible
	// threshold, 0 when the audio never became audible; LeadingSilenceS is
	// the audio before that sample, the whole audio when never audible, and
	// absent without (s16) audio.
	TTFAAudibleS    float64  `json:"ttfa_audible_s,omitempty"`
	LeadingSilenceS *float64 `json:"leading_silence_s,omitempty"`
	// FirstAudioEventS is the vLLM-Omni benchmark's chat TTFP
	// (docs/reference/benchmark.md, section 1): the first modality "audio"
	// event, even one with empty content. TTFPS counts the first non-empty audio only.
	FirstAudioEventS float64 `json:"first_audio_event_s,omitempty"`

	// Audio received, after decoding every event by its header.
	SampleRate     int     `json:"sample_rate,omitempty"`
	SampleWidth    int     `json:"sample_width,omitempty"` // bytes per sample (2 for s16le)
	Channels       int     `json:"channels,omitempty"`
	AudioBytes     int64   `json:"audio_bytes,omitempty"`
	AudioFrames    int64   `json:"audio_frames,omitempty"`
	AudioDurationS float64 `json:"audio_duration_s,omitempty"`

	// Audio sent: the spoken question (chat) and the voice-cloning
	// reference (speech), in seconds and file bytes (before base64). The
	// RTFs and AudioDurationS are about the audio received, never this.
	InputAudioS     float64 `json:"input_audio_s,omitempty"`
	InputAudioBytes int64   `json:"input_audio_bytes,omitempty"`

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
	// ServerTokens are the X-VLLM-OMNI-*-TOKENS response headers, when sent.
	ServerTokens *ServerTokens `json:"server_tokens,omitempty"`
	TextChars    int           `json:"text_chars,omitempty"` // characters of text received

	// Real-time factors, docs/reference/benchmark.md, section 1. Zero when
	// there was no audio.
	RTFLastChunk float64  `json:"rtf_last_chunk,omitempty"` // (last audio - send) / duration
	RTFE2E       float64  `json:"rtf_e2e,omitempty"`        // e2e / duration
	RTFServer    *float64 `json:"rtf_server,omitempty"`     // server generation time / duration, when the server says

	Continuity *Continuity `json:"continuity,omitempty"`

	// Audio is the signal check of the decoded audio (--audio-checks), ASR
	// its transcription score (--asr-url). The results file carries ASR on
	// a line of its own (TypeASR), written when the transcription is done;
	// Read puts it back here.
	Audio *AudioCheck `json:"audio,omitempty"`
	ASR   *ASRScore   `json:"asr,omitempty"`

	// WS is set on the records of the WebSocket kinds (speech-ws, realtime).
	WS *WSTurn `json:"ws,omitempty"`
}

// WSTurn is what one utterance (speech-ws) or turn (realtime) of a
// WebSocket session adds to its Record. The Record's offsets are measured
// from the message that asks for the audio: input.done (speech-ws) or
// conversation.item.create (realtime, as the vLLM-Omni benchmark does).
type WSTurn struct {
	Session int `json:"session"` // the session's arrival sequence number (one connection)
	Index   int `json:"index"`   // utterance or turn in the session, from 0

	// speech-ws: the server's utterance_index (it also counts empty
	// flushes), the time from the first input.text to input.done (the text
	// pacing of --text-rate) and TTFP counted from the first input.text.
	ServerIndex    *int    `json:"server_index,omitempty"`
	TextLeadS      float64 `json:"text_lead_s,omitempty"`
	TTFPFirstTextS float64 `json:"ttfp_first_text_s,omitempty"`
	// ServerTotalBytes is audio.done.total_bytes (speech-ws); the record
	// fails when it differs from the bytes received.
	ServerTotalBytes *int64 `json:"server_total_bytes,omitempty"`
	Words            int    `json:"words,omitempty"` // word timestamps received (audio.chunk mode)

	// realtime-audio: the time from the first input_audio_buffer.append to
	// the final commit (the real-time pacing of the spoken input), TTFP
	// counted from the first append, and the output audio bytes that
	// arrived before the final commit (their offsets are counted as 0: the
	// listener hears them at the end of speech at the earliest).
	SpeechLeadS      float64 `json:"speech_lead_s,omitempty"`
	TTFPFirstAppendS float64 `json:"ttfp_first_append_s,omitempty"`
	EarlyAudioBytes  int64   `json:"early_audio_bytes,omitempty"`

	// Bench holds the turn's figures as the vLLM-Omni benchmark's realtime
	// backends define them (realtime only).
	Bench *WSBench `json:"bench,omitempty"`

	// Events is the spelling of the audio events the server sent in this
	// realtime turn: EventsGA (response.output_audio.*) or EventsLegacy
	// (response.audio.*); empty when none arrived, and on the other kinds.
	// Servers of both ages run, and a result says which one it measured.
	Events string `json:"events,omitempty"`

	// CloseCode and CloseReason are the WebSocket close frame, on the
	// record during which the connection ended (0: no close frame seen).
	CloseCode   int    `json:"close_code,omitempty"`
	CloseReason string `json:"close_reason,omitempty"`
}

// Spellings of the realtime audio events (WSTurn.Events). Servers since
// September 2026 send the OpenAI GA names (response.output_audio.delta,
// response.output_audio_transcript.delta and their .done events); release
// 0.28.0 and older send response.audio.delta and so on.
const (
	EventsGA     = "ga"
	EventsLegacy = "legacy"
)

// WSBench is one realtime turn measured as `vllm bench serve --omni`'s
// openai-realtime backends measure it: the clock starts immediately before
// conversation.item.create is sent; TTFP ends at the first
// response.audio.delta with a non-empty delta (even one that decodes to a
// WAV header only); the duration counts every decoded byte (WAV headers
// included) at the last sample_rate_hz seen (default 24000); RTF is
// (last non-empty audio delta - t0) / duration.
type WSBench struct {
	TTFPS          float64  `json:"ttfp_s"`
	TTFTS          *float64 `json:"ttft_s,omitempty"` // first non-empty text delta; absent without text
	AudioDurationS float64  `json:"audio_duration_s"`
	GenerationS    float64  `json:"audio_generation_s"` // last non-empty audio delta - t0
	RTF            *float64 `json:"rtf,omitempty"`      // absent when the duration is 0
}

// ServerTokens are the token counts a speech response states in its
// X-VLLM-OMNI-*-TOKENS headers (docs/reference/http-streams.md, section 3.5);
// nil fields were absent.
type ServerTokens struct {
	Input      *int `json:"input,omitempty"`
	Output     *int `json:"output,omitempty"`
	Total      *int `json:"total,omitempty"`
	InputText  *int `json:"input_text,omitempty"`
	InputAudio *int `json:"input_audio,omitempty"`
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

// ChatPath reports whether the server serves the record's request on its
// streaming chat path: chat, and realtime, whose chat-fallback responses are
// streaming chat completions upstream. There the server records TTFP and
// continuity, and the vLLM-Omni benchmark's audio RTF ends at the last audio
// chunk (RTFLastChunk) instead of the end of the request (RTFE2E).
func (r *Record) ChatPath() bool { return r.Kind == KindChat || r.Kind == KindRealtime }

// SpeechStreamKind reports whether requests of kind are speech streams (raw,
// SSE or WebSocket /v1/audio/speech): servers since September 2026 record
// TTFP and continuity for them as for the chat path, older ones do not.
func SpeechStreamKind(kind string) bool {
	return kind == KindSpeech || kind == KindSpeechSSE || kind == KindSpeechWS
}

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.ErrorClass == "" }

// Delivered reports whether the response ended normally at its end marker,
// as the server sees a finished request: every successful request, and
// those that failed only for carrying no audio (ErrNoAudio). Figures set
// beside the server's counters count these.
func (r *Record) Delivered() bool { return DeliveredClass(r.ErrorClass) }

// DeliveredClass is Record.Delivered for a record of error class c ("" for
// a success).
func DeliveredClass(c string) bool { return c == "" || c == ErrNoAudio }

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
	// SLOs are the objectives the run judged (its scenario's, --slo and
	// --max-error-rate's), as expressions: a re-render judges them again.
	SLOs []string `json:"slos,omitempty"`

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
	// Client is the load generator's saturation verdict over the run. The
	// runner learns it only when the load ends, so it writes it as the
	// file's last line (a "client" line, see Writer.WriteClient) and the
	// reader puts it here; merge writes it in the header. nil means not
	// known: a run killed before it ended, or a file older than the line.
	Client *ClientHealth `json:"client,omitempty"`
	// Scrapes are the file's scrape lines (Writer.WriteScrape), in the
	// order written, which the reader puts here: the first and last
	// scrapes and those taken during the run (run --scrape-interval).
	// Empty for a file without them (older, or a run without a scrape).
	Scrapes []Scrape `json:"-"`
}

// ClientHealth is the load generator's verdict of a run (the run
// document's client.saturated, cause, client_delay_ms and reasons, and the
// warning the run printed).
type ClientHealth struct {
	// Saturated means the client itself was the bottleneck (its own CPU):
	// verdicts on the run's latencies are refused.
	Saturated bool `json:"saturated"`
	// Cause is what delayed the load generator (selfmon.Cause: none,
	// client_cpu, host_busy, shared_with_server, steal, scheduling) and
	// Warning the run's warning naming it with its figures and advice.
	// Both are empty in files written before they were recorded.
	Cause   string `json:"cause,omitempty"`
	Warning string `json:"warning,omitempty"`
	// ClientDelayMS is the largest client-side delay measured: how much of
	// a latency may be delay that is not the server's.
	ClientDelayMS float64  `json:"client_delay_ms"`
	Reasons       []string `json:"reasons,omitempty"`
}

// Text says in one phrase whether the client was delayed and why, for the
// notes of the commands that read saved runs.
func (c *ClientHealth) Text() string {
	switch {
	case c == nil:
		return "load generator saturation unknown (the file has no client line: an older or killed run)"
	case c.Warning != "":
		return c.Warning
	case !c.Saturated:
		return "load generator not saturated"
	}
	return fmt.Sprintf("the load generator was saturated (%s): latencies include up to %.1f ms of client delay",
		strings.Join(c.Reasons, "; "), c.ClientDelayMS)
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
