// Package simulator is a vLLM-Omni-compatible streaming speech server for
// demos, tests and A/B runs: `omnibench serve` and the embedded target of
// every omnibench run without --url.
//
// It speaks the wire protocol of the real server
// (docs/reference/http-streams.md, sections 2 and 3): streaming and non-streaming POST /v1/chat/completions
// with text and audio events, POST /v1/audio/speech as a whole file, a raw
// byte stream and SSE, the WebSocket endpoints WS /v1/audio/speech/stream
// (ws_speech.go) and WS /v1/realtime?duplex=1 (realtime.go, a chat-fallback
// OpenAI-Realtime session, also at its alias WS /v1/duplex) with the
// timeouts and limits of WSConfig, GET /v1/models, GET /health and
// GET /metrics; Config.DuplexOnly narrows this to what a duplex model's
// server serves (duplex.go). Its
// /metrics is fed by the shared metric core (omnimetrics) at the places where
// the real server records each value (docs/reference/metric-families.md,
// section 3.4), with requests bound to
// replicas of a stage topology (thinker 0, talker 1, code2wav 2 by default).
// Speech streams feed the audio families and the speech-stream counters as
// on servers since September 2026 (speech_metrics.go), unless
// Config.NoSpeechStreamMetrics asks for an older server.
//
// # Timing model
//
// Every request draws its randomness from its own generator, seeded from
// Config.Seed, a hash of the endpoint and prompt, and how many earlier
// requests had the same endpoint and prompt. Concurrent scheduling therefore
// never changes which timing a request gets. With T = Config.Timing, f the
// sample rate, j_x a uniform draw in [-1, 1] and J = T.Jitter:
//
//	audio duration   D = clamp(runes(text) * T.AudioPerChar, T.MinAudio, T.MaxAudio) / speed
//	total frames     F = round(D * f)
//	chunk i frames   c_i = max(1, round(T.ChunkAudio * f * (1 + J*j_i)))   (last chunk truncated to F)
//	slowdown         s = max(1, active / Capacity)   (s = 1 when Capacity = 0)
//	input prefill    P = seconds of input audio * T.AudioPrefill
//	first audio      t_0 = (T.TTFA * (1 + J*j_a) + P) * s
//	next audio       t_i = t_{i-1} + (c_i / f) * T.RTF * (1 + J*j'_i) * s + stall_i
//	first text word  w_0 = (T.TTFT * (1 + J*j_t) + P) * s
//	next text word   w_k = w_{k-1} + T.WordInterval * (1 + J*j_k) * s
//
// where stall_i is T.Stall with probability T.StallProb and s is read when
// the wait for event i starts (active = requests being generated, this one
// included). The RTF recorded by the server is the code2wav generation time
// sum_i((c_i / f) * T.RTF * (1 + J*j'_i) * s + stall_i) divided by D: exactly
// T.RTF with no jitter, no stalls and no overload. Input audio is the chat
// request's input_audio and audio_url parts and the speech request's
// ref_audio, decoded (inputaudio.go); each second of it also adds 12.5
// prompt tokens.
//
// # Stages, hops and slowness
//
// The per-stage series (vllm:* with stage and replica) and the transfer
// series record one request's critical path, so that they add up to the
// server's e2e: t_0 is split into the thinker's first word (min(w_0, t_0)),
// the talkers' part, the hops that deliver the first chunk (at their
// modelled sizes and speeds, taken out of the talkers' part) and code2wav
// vocoding chunk 0; every later chunk's wait is code2wav vocoding it and the
// hop of its codec tokens. A stage's e2e is its parts (prefill: its part of
// t_0; decode: the rest), and the thinker's also covers its last words when
// they come after the last chunk (all of a text-only response, which reaches
// no other stage). The pipeline e2e exceeds the sum of the parts only by
// what the schedule does not see (late timers, writing the response).
// Config.Slow multiplies a stage's or one replica's parts by a factor and
// adds time in flight to one edge's hops, on the client's clock as much as
// in the series.
//
// # Capacity knee
//
// A player that starts at the first chunk consumes audio at 1 s per second
// while chunks arrive every (c/f) * RTF * s seconds per c/f seconds of audio.
// Playback stays continuous while RTF * s <= 1. Above Capacity the slowdown is
// active/Capacity, so continuity breaks when RTF * active / Capacity > 1, i.e.
// at more than Capacity / RTF concurrent streams (the knee: 333 streams for
// Capacity 100 and RTF 0.3). Beyond the knee the underrun after n chunks of
// c/f seconds grows as (n-1) * (c/f) * (RTF*active/Capacity - 1).
//
// # Cost
//
// One goroutine per request (its handler) waits on one reusable timer per
// event; audio is rendered per chunk from single-cycle wavetables into a
// buffer sized once per request and base64-encoded with AppendEncode into
// another; each SSE event (stamp, data) leaves in one write to the
// connection (see cork.go). BenchmarkConcurrentStreams runs 1000
// concurrent streams over loopback.
//
// # Faults
//
// Each fault has a probability per request (Faults), drawn from the request's
// own generator before any timing draw, so enabling one fault does not move
// the timing of others. Mid-stream faults strike before audio chunk n/2 of n
// (before text word k/2 when the response has no audio).
package simulator
