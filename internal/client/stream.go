package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/sse"
)

// failure is a classified request failure: class is one of results.Err*.
type failure struct {
	class string
	err   error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// fail builds a failure of class with a formatted message (%w allowed).
func fail(class, format string, args ...any) error {
	return &failure{class: class, err: fmt.Errorf(format, args...)}
}

// classOf returns the class of a failure, or "" for nil.
func classOf(err error) string {
	if err == nil {
		return ""
	}
	var f *failure
	if errors.As(err, &f) {
		return f.class
	}
	return results.ErrConnect // not reached: the client only returns failures
}

// Sizes of the per-request buffers and bounds.
const (
	rawReadSize     = 32 << 10  // read buffer of the raw speech byte stream
	maxWAVHeader    = 4 << 10   // a raw WAV stream's header must parse within this many bytes
	maxPooledBuffer = 1 << 20   // larger buffers are not kept for the next request
	chunkCap        = 64        // initial capacity of the per-chunk slices (80 ms chunks: 5 s of audio)
	textGapCap      = 8         // initial capacity of the text gaps: a voice response has few text events
	maxErrorBody    = 4 << 10   // bytes of a non-2xx body read for its message
	maxDrain        = 256 << 10 // bytes read after the end so the connection can be reused
	drainTimeout    = 2 * time.Second
	maxMessage      = 200 // bytes of a server's error message kept in Record.Error
)

// stream is the state of one request while its response is read. It is
// pooled by the Client, so the buffers survive from request to request.
type stream struct {
	rec    *results.Record
	kind   string
	format string     // requested audio format: "wav" or "pcm"
	pcm    wav.Format // format of headerless PCM
	t0     time.Time  // send time; every offset is from here

	audioOut io.Writer // receives the PCM of every chunk when the request asks
	textOut  io.Writer // receives the text of every text event when the request asks

	maxEvent int // cap on an SSE line and event (Options.MaxEventBytes)

	parent context.Context // the caller's context: cancelled means the run was interrupted
	ctx    context.Context // the request's context, cancelled with a cause by the client

	contentType string
	events      int // events (or raw reads) seen
	audioEvents int // audio events (chat) or deltas (speech SSE) seen, those without samples included

	fmtKnown  bool       // f holds the response's audio format
	f         wav.Format // from the first audio chunk
	sawText   bool
	lastTextS float64
	wavHeader bool   // raw/SSE speech: the stream's WAV header was parsed
	wavSize   int64  // data size the WAV header declared; -1 when it does not say (streaming)
	wavRemain int64  // declared data bytes still to come (wavSize >= 0)
	hdr       []byte // raw speech: header bytes gathered until it parses

	b64 []byte // the decoded WAV header of a payload measured without decoding (measureAudio)
	// decodeBufs is the Client's pool of buffers for decoded payloads.
	decodeBufs *sync.Pool
	sseBufs    *sse.BufferPool // the Client's, lent to sr
	scratch    []byte          // unescaped JSON strings
	readBuf    []byte          // raw speech read buffer
	sr         *sse.Reader     // event-stream reader, reused across requests
	onset      Onset           // audible onset (audible.go); its detector is reused across requests
	flacPCM    []byte          // decoded PCM of a FLAC or MP3 event
	// Audible onset settings (Options).
	audibleDB     float64
	audibleWindow time.Duration
	audioChecks   bool // Options.AudioChecks
	chunk         chatChunk
	template      chunkTemplate // the last audio event's bytes around its audio string
	sev           speechEvent
	body          body

	// The credentials to mask in server text quoted in Record.Error: the
	// owner's redactor with the request's headers, built on first use
	// (only a failing request needs it).
	owner   *Client
	headers map[string]string
	red     *secret.Redactor
}

// redactor is the request's redactor (Client.RedactorFor).
func (s *stream) redactor() *secret.Redactor {
	if s.red == nil {
		s.red = s.owner.RedactorFor(s.headers)
	}
	return s.red
}

// reset prepares a pooled stream for a new request, keeping its buffers.
func (s *stream) reset(rec *results.Record, kind, format string, pcmRate int, audioOut io.Writer, maxEvent int) {
	*s = stream{
		rec: rec, kind: kind, format: format,
		audioOut: audioOut, maxEvent: maxEvent,
		pcm:     wav.Format{SampleRate: pcmRate, Channels: 1, BitsPerSample: 16},
		wavSize: -1,
		parent:  context.Background(), ctx: context.Background(),
		hdr: s.hdr[:0], b64: s.b64, decodeBufs: s.decodeBufs, sseBufs: s.sseBufs, scratch: s.scratch, readBuf: s.readBuf, sr: s.sr, onset: Onset{det: s.onset.det, pool: s.onset.pool, checks: s.onset.checks}, flacPCM: s.flacPCM[:0],
		template: chunkTemplate{prefix: s.template.prefix[:0], suffix: s.template.suffix[:0]},
		owner:    s.owner,
	}
}

// release drops references to request data before the stream is pooled.
func (s *stream) release() {
	s.rec, s.parent, s.ctx, s.body, s.audioOut, s.textOut = nil, nil, nil, body{}, nil, nil
	s.headers, s.red = nil, nil
	if s.sr != nil {
		s.sr.Reset(nil) // drop the finished response body
	}
	s.chunk, s.sev = chatChunk{}, speechEvent{}
	for _, b := range []*[]byte{&s.hdr, &s.b64, &s.scratch, &s.flacPCM} {
		if cap(*b) > maxPooledBuffer {
			*b = nil
		}
	}
}

// since is the offset of t from the send time in seconds.
func (s *stream) since(t time.Time) float64 { return t.Sub(s.t0).Seconds() }

// consume reads the response body to its end marker and records what
// arrives; it returns nil on a complete response, else a *failure.
func (s *stream) consume(r io.Reader) error {
	if s.kind == results.KindSpeech {
		return s.readRaw(r)
	}
	if s.sr == nil {
		s.sr = s.newSSEReader(r)
	} else {
		s.sr.Reset(r) // the pooled reader keeps its buffer, grown to the events it met
	}
	s.sr.SetMaxEventBytes(s.maxEvent)
	return s.readSSE(s.sr)
}

// newSSEReader returns an event-stream reader that borrows its buffer from
// the Client's pool, or has its own when the stream has no Client (tests).
func (s *stream) newSSEReader(r io.Reader) *sse.Reader {
	if s.sseBufs == nil {
		return sse.NewReader(r)
	}
	return s.sseBufs.NewReader(r)
}

// readSSE handles events until the end of the response.
func (s *stream) readSSE(r *sse.Reader) error {
	for {
		ev, err := r.Next()
		now := time.Now()
		if err != nil {
			return s.readFailure(err)
		}
		var done bool
		if s.kind == results.KindChat {
			done, err = s.chatEvent(ev, now)
		} else {
			done, err = s.speechEvent(ev, now)
		}
		if err != nil {
			// An event cut off by a clean end of the body is a
			// truncated response rather than a malformed one.
			if classOf(err) == results.ErrMalformed && s.body.eof {
				if _, nerr := r.Next(); nerr != nil {
					return fail(results.ErrTruncated, "stream ended inside event %d without %s: %w", s.events, s.endMarker(), err)
				}
			}
			return err
		}
		if done {
			return nil
		}
	}
}

// endMarker names what a complete response ends with.
func (s *stream) endMarker() string {
	switch s.kind {
	case results.KindChat:
		return "[DONE]"
	case results.KindSpeechSSE:
		return speechDone
	}
	return "the end of the body"
}

// readFailure classifies an error from reading the body.
func (s *stream) readFailure(err error) error {
	if f := s.ctxFailure(); f != nil {
		return f
	}
	if err == io.EOF {
		return fail(results.ErrTruncated, "stream ended after %d events without %s", s.events, s.endMarker())
	}
	var limit *sse.LimitError
	if errors.As(err, &limit) {
		return fail(results.ErrMalformed, "%w; raise the cap with --max-event-bytes", err)
	}
	if !connectionFailure(err) {
		// The body's framing itself is bad (a chunk size that is not a
		// hex number, a chunk without its line end): the server sent
		// something that is not HTTP, which is not a cut response.
		return fail(results.ErrMalformed, "the response body's framing is invalid after %d events: %w", s.events, err)
	}
	return fail(results.ErrTruncated, "reading the response after %d events: %w", s.events, err)
}

// connectionFailure reports whether a body read failed because the
// connection broke or ended inside the body (a network error, an early
// end), as opposed to a failure of the body's framing, which both
// transports report with net/http's chunked reader's plain errors.
func connectionFailure(err error) bool {
	var ne net.Error
	var errno syscall.Errno
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) || errors.As(err, &errno) || errors.Is(err, net.ErrClosed)
}

// ctxFailure returns the failure that explains a cancelled request context,
// or nil while the context is live.
func (s *stream) ctxFailure() error {
	if s.parent.Err() != nil {
		return fail(results.ErrCancelled, "run interrupted after %d events: %w", s.events, context.Cause(s.parent))
	}
	if s.ctx.Err() == nil {
		return nil
	}
	switch c := context.Cause(s.ctx); {
	case errors.Is(c, causeIdle):
		return fail(results.ErrIdleTimeout, "no data received for the idle timeout, after %d events", s.events)
	case errors.Is(c, causeTimeout):
		return fail(results.ErrTimeout, "request deadline passed after %d events", s.events)
	default:
		return fail(results.ErrCancelled, "request cancelled after %d events: %w", s.events, c)
	}
}

// isDone reports whether an event payload is the chat terminator.
func isDone(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "[DONE]"
}

// chatEvent handles one event of a streaming chat response
// (docs/reference/http-streams.md, section 2); done is true at [DONE].
func (s *stream) chatEvent(ev sse.Event, now time.Time) (done bool, err error) {
	s.events++
	if ev.Comment != nil {
		s.stamp(ev.Comment, now)
	}
	data := ev.Data
	if isDone(data) {
		return true, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return false, nil // an event without a payload carries nothing
	}
	c := &s.chunk
	if err := s.template.decode(data, c); err != nil {
		return false, fail(results.ErrMalformed, "event %d: %w", s.events, err)
	}
	if c.HasError {
		return false, fail(results.ErrStreamError, "event %d: server error: %s", s.events, s.serverMessage(c.ErrorMessage))
	}
	rec := s.rec
	if c.HasUsage {
		if c.NoChoices {
			// The final include_usage chunk carries the totals.
			if c.HasPrompt {
				rec.PromptTokens = int(c.PromptTokens)
			}
			if c.HasCompletion {
				rec.CompletionTokens = int(c.CompletionTokens)
			}
		} else if rec.PromptTokens == 0 && c.HasPrompt && c.PromptTokens > 0 {
			// Audio chunks carry the prompt size; keep it in case the
			// usage chunk never comes.
			rec.PromptTokens = int(c.PromptTokens)
		}
	}
	if !c.FinishReason.empty() && !c.FinishReason.equal(rec.FinishReason) {
		rec.FinishReason = c.FinishReason.String()
	}
	// Route by modality: in an "audio" chunk delta.content is base64 audio;
	// otherwise it is text. delta.audio.data is always audio.
	if c.Modality.equal("audio") || !c.AudioData.empty() {
		s.audioEvents++
	}
	if c.Modality.equal("audio") {
		if rec.FirstAudioEventS == 0 {
			// The benchmark's TTFP counts this event even when its
			// content is "" (an audio output with no samples, #5237).
			rec.FirstAudioEventS = s.since(now)
		}
		if !c.Content.empty() {
			return false, s.audioText(c.Content, "choices[0].delta.content", now)
		}
	} else if !c.Content.empty() && (!c.Modality.set || c.Modality.equal("text")) {
		s.text(c.Content, now)
	}
	if !c.AudioData.empty() {
		return false, s.audioText(c.AudioData, "choices[0].delta.audio.data", now)
	}
	return false, nil
}

// speechKind resolves an event's type from the SSE "event:" line or, when
// that is absent, the JSON "type" field.
func speechKind(evType string, typ jsonText) string {
	if evType == "" || evType == "message" {
		for _, k := range [...]string{speechDelta, speechDone, speechError} {
			if typ.equal(k) {
				return k
			}
		}
		return ""
	}
	return evType
}

// speechEvent handles one event of a speech SSE response
// (docs/reference/http-streams.md, section 3.4); done is true at
// speech.audio.done.
func (s *stream) speechEvent(ev sse.Event, now time.Time) (done bool, err error) {
	s.events++
	if ev.Comment != nil {
		s.stamp(ev.Comment, now)
	}
	e := &s.sev
	if len(bytes.TrimSpace(ev.Data)) == 0 {
		*e = speechEvent{}
	} else if err := decodeSpeechEvent(ev.Data, e); err != nil {
		return false, fail(results.ErrMalformed, "event %d: %w", s.events, err)
	}
	kind := speechKind(ev.Type, e.Type)
	if kind == speechError || e.HasError {
		return false, fail(results.ErrStreamError, "event %d: server error: %s", s.events, s.serverMessage(e.ErrorMessage))
	}
	switch kind {
	case speechDone:
		if err := s.wavComplete(speechDone); err != nil {
			return false, err
		}
		if e.HasInput {
			s.rec.PromptTokens = int(e.InputTokens)
		}
		if e.HasOutput {
			s.rec.CompletionTokens = int(e.OutputTokens)
		}
		return true, nil
	case speechDelta:
		s.audioEvents++
		if !e.Audio.empty() {
			return false, s.audioText(e.Audio, "audio", now)
		}
	}
	return false, nil // unknown event types are ignored
}

// noAudio is the failure of a response that asked for audio and ended
// normally without one sample. Its message says what came instead, in words
// that repeat from request to request, so that the error set groups them.
func (s *stream) noAudio() error {
	instead := InsteadOfAudio(s.audioEvents, s.rec.TextChars > 0)
	switch {
	case s.kind == results.KindSpeech && s.wavHeader:
		instead = "a WAV header without samples"
	case s.kind == results.KindSpeech:
		instead = "an empty body"
	}
	return fail(results.ErrNoAudio, "%s", instead)
}

// InsteadOfAudio is the message of a results.ErrNoAudio failure of a
// response made of events: what came instead of audio, given the number of
// audio events (all without samples) and whether text came. The words
// repeat from request to request so that the error set groups them; the
// WebSocket kinds (package wsclient) use them too.
func InsteadOfAudio(audioEvents int, text bool) string {
	switch {
	case audioEvents == 0 && text:
		return "text only"
	case audioEvents == 0:
		return "no audio event"
	}
	instead := fmt.Sprintf("%d audio event%s without samples", audioEvents, pluralS(audioEvents))
	if text {
		instead += ", and text"
	}
	return instead
}

// pluralS is the "s" of a plural count.
func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// serverMessage renders a server's error message for Record.Error.
func (s *stream) serverMessage(t jsonText) string {
	if t.empty() {
		return "(no message)"
	}
	return clip(s.redactor(), t.String())
}

// stamp records the delay of a simulator send stamp ": sent=<unix ns>".
func (s *stream) stamp(c []byte, now time.Time) {
	const prefix = "sent="
	if len(c) <= len(prefix) || len(c) > len(prefix)+19 || string(c[:len(prefix)]) != prefix {
		return
	}
	var ns int64
	for _, d := range c[len(prefix):] {
		if d < '0' || d > '9' {
			return
		}
		ns = ns*10 + int64(d-'0')
	}
	rec := s.rec
	if rec.StampDelaysS == nil {
		rec.StampDelaysS = make([]float64, 0, chunkCap)
	}
	rec.StampDelaysS = append(rec.StampDelaysS, float64(now.UnixNano()-ns)/1e9)
}

// text records a text event.
func (s *stream) text(t jsonText, now time.Time) {
	var chars int
	chars, s.scratch = t.runeCount(s.scratch)
	if chars == 0 {
		return
	}
	if s.textOut != nil {
		s.scratch = t.appendUnquoted(s.scratch[:0])
		_, _ = s.textOut.Write(s.scratch)
	}
	rec := s.rec
	off := s.since(now)
	if !s.sawText {
		rec.TTFTS = off
		s.sawText = true
	} else {
		if rec.TextGapsS == nil {
			rec.TextGapsS = make([]float64, 0, textGapCap)
		}
		rec.TextGapsS = append(rec.TextGapsS, off-s.lastTextS)
	}
	s.lastTextS = off
	rec.TextChars += chars
}

// audioText decodes one base64 audio payload and records its PCM.
func (s *stream) audioText(t jsonText, field string, now time.Time) error {
	src, plain := t.raw, t.plain
	if t.esc {
		// Only "\/" (and line breaks of wrapped base64) occur in practice.
		s.scratch = t.appendUnquoted(s.scratch[:0])
		src, plain = s.scratch, -1
	}
	if s.fmtKnown && s.audioOut == nil && !s.onset.wantsPCM() {
		if measured, err := s.measureAudio(src, plain, now); measured {
			return err
		}
	}
	buf := s.decodeBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxPooledBuffer {
			s.decodeBufs.Put(buf)
		}
	}()
	data, err := DecodeBase64(buf, src)
	if err != nil {
		return fail(results.ErrMalformed, "event %d: %s: bad base64: %w", s.events, field, err)
	}
	pcm := data
	switch {
	case s.format == "wav" && s.kind == results.KindChat:
		// Every chat event is a complete WAV file.
		f, p, err := wav.Decode(data)
		if err != nil {
			return fail(results.ErrMalformed, "event %d: %s: bad WAV: %w", s.events, field, err)
		}
		if err := s.setFormat(f); err != nil {
			return err
		}
		pcm = p
	case s.format == "flac" && s.kind == results.KindChat:
		// Every chat event is a complete FLAC file: frames from its
		// STREAMINFO; PCM (s16) decoded from its frames, for the onset and
		// --save-audio, where the decoder can (flac.Decodable).
		return s.flacEvent(data, field, now)
	case s.format == "mp3" && s.kind == results.KindChat:
		// Every chat event is a complete MP3 file: frames from its frame
		// headers and Xing/LAME tag, PCM from go-mp3 (mp3.Decodable).
		return s.mp3Event(data, field, now)
	case s.format == "opus" && s.kind == results.KindChat:
		// Every chat event is a complete Ogg Opus file: frames from its
		// granule positions; never decoded (opus).
		return s.opusEvent(data, field, now)
	case s.format == "wav" && isRIFF(data):
		// Speech SSE: the first delta is the header (the bare streaming
		// header, or a whole file), later deltas continue its data or
		// start another file.
		if s.wavRemain > 0 {
			return fail(results.ErrTruncated, "event %d: %s: a new WAV header while the previous file still lacked %d of the %d data bytes it declared", s.events, field, s.wavRemain, s.wavSize)
		}
		h, err := wav.ParseHeader(data)
		if err != nil {
			return fail(results.ErrMalformed, "event %d: %s: bad WAV: %w", s.events, field, err)
		}
		if err := s.startWAV(h); err != nil {
			return err
		}
		pcm = s.wavData(data[h.DataOffset:])
	case s.format == "wav" && !s.wavHeader:
		// Taking it as header-less PCM would guess the sample rate.
		return fail(results.ErrMalformed, "event %d: %s: wav was asked for but the audio has no RIFF header (starts with %q); ask for pcm to measure header-less audio", s.events, field, data[:min(len(data), 4)])
	case s.format == "wav":
		pcm = s.wavData(data)
	case !s.fmtKnown:
		if err := s.setFormat(s.pcm); err != nil {
			return err
		}
	}
	s.addChunk(now, pcm)
	return nil
}

// measureAudio records a base64 payload from its length, decoding at most
// its WAV header, when nothing needs its samples: the format is known, the
// audible onset is found (or cannot be), and no --save-audio sink is set.
// The whole payload is still checked to be base64. It reports false, having
// recorded nothing, when the payload needs the full path of audioText: base64
// that is not plain (line breaks, invalid characters: the full path words
// the error), a WAV header it cannot read from its first bytes, a new WAV
// file on a speech stream, or a format measured from its frames (FLAC, MP3,
// Opus). What it records is what the full path would: the tests compare the
// two on every payload shape.
func (s *stream) measureAudio(src []byte, plain int, now time.Time) (bool, error) {
	size, ok := plainBase64Len(src, plain)
	if !ok {
		return false, nil
	}
	chat := s.kind == results.KindChat
	switch {
	case s.format == "wav" && chat:
		h, n, ok := WAVBase64PCMLen(&s.b64, src, size)
		if !ok {
			return false, nil
		}
		if err := s.setFormat(h.Format); err != nil {
			return true, err
		}
		s.addChunkBytes(now, n, nil)
	case chat && (s.format == "flac" || s.format == "mp3" || s.format == "opus"):
		return false, nil
	case s.format == "wav":
		// Speech: a delta continues the WAV data unless it starts a new
		// file, which the full path checks and parses.
		if !s.wavHeader || len(src) < 8 {
			return false, nil
		}
		head, err := decodePlainHead(&s.b64, src[:8])
		if err != nil || isRIFF(head) {
			return false, nil
		}
		s.addChunkBytes(now, s.wavDataLen(size), nil)
	default:
		s.addChunkBytes(now, size, nil) // headerless PCM; its format is known
	}
	return true, nil
}

func isRIFF(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "RIFF" }

// startWAV takes the format and the declared data size from the WAV header
// of a speech response. Streaming headers (sizes 0xFFFFFFFF, or zero
// placeholders) declare nothing: their data runs to the end.
func (s *stream) startWAV(h wav.Header) error {
	if err := s.setFormat(h.Format); err != nil {
		return err
	}
	s.wavHeader = true
	s.wavSize, s.wavRemain = -1, 0
	if !h.Streaming && !h.Placeholder {
		s.wavSize, s.wavRemain = h.DataSize, h.DataSize
	}
	return nil
}

// wavData cuts p to the data the WAV header declared: bytes beyond it (a
// trailing LIST or other chunk) are not audio.
func (s *stream) wavData(p []byte) []byte { return p[:s.wavDataLen(len(p))] }

// wavDataLen is wavData for n bytes: how many of them are audio.
func (s *stream) wavDataLen(n int) int {
	if s.wavSize < 0 {
		return n
	}
	n = int(min(int64(n), s.wavRemain))
	s.wavRemain -= int64(n)
	return n
}

// wavComplete fails when the response ends before the WAV data its header
// declared has come; end names where it ended (the end marker or the end of
// the body).
func (s *stream) wavComplete(end string) error {
	if s.wavRemain <= 0 {
		return nil
	}
	return fail(results.ErrTruncated, "the WAV header declares %d data bytes but %s came after %d", s.wavSize, end, s.wavSize-s.wavRemain)
}

// setFormat records the response's audio format from its first audio
// chunk and insists that later chunks agree.
func (s *stream) setFormat(f wav.Format) error {
	if !s.fmtKnown {
		if f.SampleRate <= 0 || f.Channels <= 0 || f.BitsPerSample <= 0 || f.BitsPerSample%8 != 0 {
			return fail(results.ErrMalformed, "event %d: unusable audio format (%d Hz, %d channels, %d bits)", s.events, f.SampleRate, f.Channels, f.BitsPerSample)
		}
		s.f, s.fmtKnown = f, true
		s.rec.SampleRate, s.rec.SampleWidth, s.rec.Channels = f.SampleRate, f.BitsPerSample/8, f.Channels
		s.onset.start(s.rec, f, s.audibleDB, s.audibleWindow, s.audioChecks)
		return nil
	}
	if f != s.f {
		return fail(results.ErrMalformed, "event %d: audio format changed from %d Hz/%d ch/%d bit to %d Hz/%d ch/%d bit",
			s.events, s.f.SampleRate, s.f.Channels, s.f.BitsPerSample, f.SampleRate, f.Channels, f.BitsPerSample)
	}
	return nil
}

// addChunk records one audio chunk that arrived at now. Empty chunks
// (header-only events) are not chunks.
func (s *stream) addChunk(now time.Time, pcm []byte) { s.addChunkBytes(now, len(pcm), pcm) }

// addChunkBytes records a chunk of n PCM bytes; pcm is nil when the audio
// was measured from a header but not decoded (FLAC, see flacEvent), and then
// neither the audio sink nor the onset detector sees it.
func (s *stream) addChunkBytes(now time.Time, n int, pcm []byte) {
	if n == 0 {
		return
	}
	if s.audioOut != nil && pcm != nil {
		// The sink is the caller's (--save-audio); a failing sink must not
		// fail the measurement, so its error is dropped here and surfaces
		// where the caller writes the file.
		_, _ = s.audioOut.Write(pcm)
	}
	AddChunk(s.rec, s.since(now), n)
	s.onset.chunk(pcm)
}

// readRaw reads a raw speech byte stream (stream_format "audio"): each read
// is one chunk. With wav the stream starts with a header, which is parsed
// for the format and not counted as audio.
func (s *stream) readRaw(r io.Reader) error {
	if cap(s.readBuf) < rawReadSize {
		s.readBuf = make([]byte, rawReadSize)
	}
	buf := s.readBuf[:rawReadSize]
	for {
		n, err := r.Read(buf)
		if n > 0 {
			now := time.Now()
			s.events++
			p := buf[:n]
			if s.format == "wav" && !s.wavHeader {
				var herr error
				if p, herr = s.rawHeader(p, false); herr != nil {
					return herr
				}
			} else if s.format == "wav" {
				p = s.wavData(p)
			} else if !s.fmtKnown {
				if ferr := s.setFormat(s.pcm); ferr != nil {
					return ferr
				}
			}
			s.addChunk(now, p)
		}
		if err == io.EOF {
			if s.format == "wav" && !s.wavHeader && len(s.hdr) > 0 {
				if _, herr := s.rawHeader(nil, true); herr != nil {
					return herr
				}
			}
			return s.wavComplete("the end of the body")
		}
		if err != nil {
			return s.readFailure(err)
		}
	}
}

// rawHeader gathers the WAV header at the start of a raw stream. It
// returns the PCM that follows the header in p (nil while the header is
// still incomplete).
func (s *stream) rawHeader(p []byte, atEOF bool) ([]byte, error) {
	buf := p
	if len(s.hdr) > 0 || atEOF {
		s.hdr = append(s.hdr, p...)
		buf = s.hdr
	}
	if len(buf) >= 4 && !isRIFF(buf) {
		return nil, fail(results.ErrMalformed, "response body: byte 0: a wav stream must start with a RIFF header, got %q", buf[:4])
	}
	h, err := wav.ParseHeader(buf)
	if err != nil {
		if atEOF || len(buf) >= maxWAVHeader {
			return nil, fail(results.ErrMalformed, "response body: bad WAV header: %w", err)
		}
		if len(s.hdr) == 0 {
			s.hdr = append(s.hdr, p...)
		}
		return nil, nil
	}
	if err := s.startWAV(h); err != nil {
		return nil, err
	}
	return s.wavData(buf[h.DataOffset:]), nil
}
