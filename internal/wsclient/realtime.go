package wsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
)

// benchDefaultRate is the rate the vLLM-Omni benchmark assumes when no
// delta states sample_rate_hz (chat-fallback sessions never do).
const benchDefaultRate = 24000

// The realtime audio events in their two spellings: the OpenAI GA names of
// current servers and the names of release 0.28.0 and older. The client
// takes either wherever it reads one, and each realtime turn's record says
// which spelling the server used (results.WSTurn.Events).
const (
	evAudioDelta            = "response.output_audio.delta"
	evAudioDone             = "response.output_audio.done"
	evTranscriptDelta       = "response.output_audio_transcript.delta"
	evTranscriptDone        = "response.output_audio_transcript.done"
	evLegacyAudioDelta      = "response.audio.delta"
	evLegacyAudioDone       = "response.audio.done"
	evLegacyTranscriptDelta = "response.audio_transcript.delta"
	evLegacyTranscriptDone  = "response.audio_transcript.done"
)

// The text events the client reads: the response's text in both
// spellings, and plain realtime's transcription of the spoken input.
const (
	evTextDelta          = "response.output_text.delta"
	evLegacyTextDelta    = "response.text.delta"
	evTranscriptionDelta = "transcription.delta"
)

// eventSpelling is the spelling of a realtime audio event's type
// (results.EventsGA or results.EventsLegacy), "" for any other event.
func eventSpelling(typ string) string {
	switch typ {
	case evAudioDelta, evAudioDone, evTranscriptDelta, evTranscriptDone:
		return results.EventsGA
	case evLegacyAudioDelta, evLegacyAudioDone, evLegacyTranscriptDelta, evLegacyTranscriptDone:
		return results.EventsLegacy
	}
	return ""
}

// realtimeMsg is a Realtime server event (9.4.2, 9.4.4, 9.4.5) as
// encoding/json decodes it: the reading of the events readRealtimeEvent
// leaves to it (realtime_event.go).
type realtimeMsg struct {
	Type       string `json:"type"`
	ResponseID string `json:"response_id"`
	Response   *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"response"`
	Delta        *string `json:"delta"`
	Audio        *string `json:"audio"` // the plain endpoint's field; accepted as the benchmark does
	SampleRateHz *int    `json:"sample_rate_hz"`
	Metadata     *struct {
		AudioDurationMS *float64 `json:"audio_duration_ms"`
	} `json:"metadata"`
	Error json.RawMessage `json:"error"`
	Code  *string         `json:"code"`
	Event json.RawMessage `json:"event"`
}

// responseID is the event's response id: top-level, else response.id.
func (m *realtimeMsg) responseID() string {
	if m.ResponseID != "" {
		return m.ResponseID
	}
	if m.Response != nil {
		return m.Response.ID
	}
	return ""
}

// errorText renders an error event's message and code: the Realtime
// object {type, code, message}, or a flat string with a top-level code.
func errorText(red *secret.Redactor, raw json.RawMessage, code *string) string {
	var obj struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	var str string
	switch {
	case json.Unmarshal(raw, &str) == nil:
		if code != nil && *code != "" {
			return client.ServerText(red, fmt.Sprintf("%s (code %s)", str, *code))
		}
		return client.ServerText(red, str)
	case json.Unmarshal(raw, &obj) == nil && (obj.Message != "" || obj.Code != ""):
		return client.ServerText(red, fmt.Sprintf("%s (code %s)", obj.Message, obj.Code))
	}
	return "(no message)"
}

// forwardedError is the error inside a forwarded internal event
// (duplex.response.message carries a mid-stream chat error), or "".
func forwardedError(red *secret.Redactor, ev json.RawMessage) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(ev, &v) != nil || len(v.Error) == 0 || string(v.Error) == "null" {
		return ""
	}
	return errorText(red, v.Error, nil)
}

// realtimeSession carries what spans turns: the benchmark's sample rate is
// the last sample_rate_hz seen on any delta of the session.
type realtimeSession struct {
	benchRate int
	// pcm is the buffer audio deltas are decoded into, reused from delta
	// to delta: a delta's samples are consumed before the next is read.
	pcm []byte
	// wavHead is where the header of a WAV delta measured from its length
	// is decoded (realtimeTurn.measure).
	wavHead []byte
	// native is a session on /v1/duplex, in the duplex session's own
	// schema (docs/reference/websocket.md, section 5) rather than the
	// OpenAI-Realtime one: session.create opens it, a turn is
	// input.text.append and input.commit, and a response is committed when
	// it ends (no playback.ack). Its events are read by the same code: its
	// audio deltas carry field "audio", which the Realtime reading accepts.
	native bool
}

// decodeBase64 decodes b64 into the session's buffer, as every request
// kind decodes audio (client.DecodeBase64). The result is valid until the
// next call. A buffer grown past maxScratch for a rare large delta (a
// whole WAV file) is not kept.
func (ss *realtimeSession) decodeBase64(b64 []byte) ([]byte, error) {
	data, err := client.DecodeBase64(&ss.pcm, b64)
	if cap(ss.pcm) > maxScratch {
		ss.pcm = nil
	}
	return data, err
}

// realtimeTurn is the state of one turn while its events arrive.
type realtimeTurn struct {
	c      *Client
	sess   Session
	ss     *realtimeSession
	rec    *results.Record
	t0     time.Time
	events int
	rid    string
	// audioEvents counts the turn's audio deltas, with samples or not.
	audioEvents int

	format    wav.Format
	onset     client.Onset // audible onset of the current turn's record
	fmtKnown  bool
	lastTextS float64
	sink      io.Writer
	textOut   io.Writer // the response's text, when the caller keeps it

	benchFirst, benchLast time.Time
	benchText             time.Time
	benchBytes            int64
	benchMaxDurMS         float64
	benchHasDur           bool
}

func (c *Client) runRealtime(ctx context.Context, sess Session, t Turn) {
	if sess.Endpoint == "" {
		sess.Endpoint = RealtimePath + "?duplex=1"
	}
	path, _, _ := strings.Cut(sess.Endpoint, "?")
	ss := &realtimeSession{benchRate: benchDefaultRate, native: path == DuplexPath}
	c.runTurns(ctx, sess, t, turnProtocol{
		open: func(cn *conn) *failure { return c.openRealtime(ctx, cn, sess, ss.native) },
		turn: func(cn *conn, i int, rec *results.Record, sink io.Writer) *failure {
			rt := &realtimeTurn{c: c, sess: sess, ss: ss, rec: rec, sink: sink, textOut: t.textOut(i)}
			return rt.run(ctx, cn, i, sess.Texts[i])
		},
		close: func(cn *conn) *websocket.CloseError { return c.closeSession(ctx, cn) },
	})
}

// turnProtocol is what differs between the kinds whose session is a row of
// turns over one connection (realtime, realtime-audio): how the session
// opens, how one turn runs and how the connection ends.
type turnProtocol struct {
	open  func(cn *conn) *failure
	turn  func(cn *conn, i int, rec *results.Record, sink io.Writer) *failure
	close func(cn *conn) *websocket.CloseError
}

// runTurns runs a session of len(sess.Texts) turns: it dials, opens the
// session (a failure there is turn 0's), runs the turns in order until one
// fails fatally, ends the connection (the close frame goes on the last
// record) and fails the turns never sent.
func (c *Client) runTurns(ctx context.Context, sess Session, t Turn, p turnProtocol) {
	begin := func(i int) *results.Record {
		rec := t.Begin(i)
		rec.Kind, rec.Endpoint, rec.Model = sess.Kind, sess.Endpoint, sess.Model
		rec.WS = &results.WSTurn{Session: sess.Seq, Index: i}
		return rec
	}
	cn, dialTook, f := c.dial(ctx, sess, sess.Endpoint)
	if f != nil {
		rec := begin(0)
		rec.ConnectS = dialTook.Seconds()
		rec.ErrorClass, rec.Error = f.class, f.err.Error()
		t.End(0, rec)
		notSent(ctx, sess, t, 1, f, sess.Seq)
		return
	}
	f = p.open(cn)
	var last *results.Record
	i := 0
	for ; f == nil && i < len(sess.Texts); i++ {
		rec := begin(i)
		if i == 0 {
			rec.ConnectS = dialTook.Seconds()
		}
		f = p.turn(cn, i, rec, t.audioOut(i))
		if f != nil {
			rec.ErrorClass, rec.Error = f.class, f.err.Error()
			if !f.fatal {
				f = nil
			}
		}
		if f != nil || i == len(sess.Texts)-1 {
			last = rec
			continue
		}
		t.End(i, rec)
	}
	ce := p.close(cn)
	if last != nil {
		cn.setClose(last, ce)
		t.End(i-1, last)
	}
	if f != nil {
		if last == nil {
			rec := begin(0)
			rec.ErrorClass, rec.Error = f.class, f.err.Error()
			cn.setClose(rec, ce)
			t.End(0, rec)
			i = 1
		}
		notSent(ctx, sess, t, i, f, sess.Seq)
	}
}

// openRealtime sends session.update (9.8 step 2), or session.create on a
// native session, and waits for session.created.
func (c *Client) openRealtime(ctx context.Context, cn *conn, sess Session, native bool) *failure {
	// The scenario's extra body goes where the benchmark puts its speech
	// extras: into extra_body, which chat-fallback sessions pass on to each
	// response's chat request.
	extra := map[string]any{"minicpmo45_native_duplex": false}
	maps.Copy(extra, sess.Extra)
	s := map[string]any{
		"modalities":             []string{"audio", "text"},
		"input_audio_format":     "pcm16",
		"output_audio_format":    "pcm16",
		"turn_detection":         nil,
		"overlap_policy":         "listen_only",
		"playback_commit_policy": "ack_only",
		"extra_body":             extra,
	}
	if sess.Model != "" {
		s["model"] = sess.Model
	}
	if sess.Voice != "" {
		s["voice"] = sess.Voice
	}
	typ := "session.update"
	if native {
		// The native session takes the same fields; its playback policy
		// stays the default, which commits each response when it ends.
		typ = "session.create"
		delete(s, "playback_commit_policy")
	}
	msg, err := json.Marshal(map[string]any{"type": typ, "session": s})
	if err != nil {
		return fatal(results.ErrConnect, "request not sent: encoding %s: %v", typ, err)
	}
	if f := cn.send(ctx, msg); f != nil {
		return f
	}
	return awaitSessionCreated(ctx, cn)
}

// awaitSessionCreated reads events until session.created, which both
// realtime endpoints send when a session opens; an error event before it is
// the server's refusal.
func awaitSessionCreated(ctx context.Context, cn *conn) *failure {
	for n := 0; ; n++ {
		m, f := cn.next(ctx, time.Time{}, n)
		if f != nil {
			return f
		}
		var ev realtimeEvent
		err := parseRealtimeEvent(m.data, &ev)
		switch {
		case m.typ != websocket.MessageText:
			return fatal(results.ErrMalformed, "event %d: a binary frame; Realtime events are JSON text", n+1)
		case err != nil:
			return fatal(results.ErrMalformed, "event %d: %v", n+1, err)
		case ev.typ == "error":
			return fatal(results.ErrStreamError, "opening the session: server error: %s", errorText(cn.red, ev.errorRaw, ev.code))
		case ev.typ == "session.created":
			return nil
		}
	}
}

// closeSession sends session.close and waits (bounded) for the server to
// answer with session.closed and close the connection.
func (c *Client) closeSession(ctx context.Context, cn *conn) *websocket.CloseError {
	if cn.readErr == nil && cn.closed == nil {
		_ = cn.send(ctx, []byte(`{"type":"session.close"}`)) // a failure shows as no close frame
	}
	return cn.finish(ctx)
}

// run sends one turn and reads it to its response.done.
func (rt *realtimeTurn) run(ctx context.Context, cn *conn, i int, text string) *failure {
	msgs, err := rt.turnMessages(i, text)
	if err != nil {
		rt.t0 = time.Now()
		return fatal(results.ErrConnect, "request not sent: %v", err)
	}
	var deadline time.Time
	rt.t0 = time.Now() // the benchmark's t0: immediately before conversation.item.create
	if rt.c.opts.Timeout > 0 {
		deadline = rt.t0.Add(rt.c.opts.Timeout)
	}
	defer rt.finish()
	for _, msg := range msgs {
		if f := cn.send(ctx, msg); f != nil {
			return f
		}
	}
	for {
		m, f := cn.next(ctx, deadline, rt.events)
		if f != nil {
			return f
		}
		rt.events++
		if rt.rec.FirstByteS == 0 && !m.at.Before(rt.t0) {
			// The first message of this turn; one received before t0
			// (session.updated, the previous turn's acknowledgement)
			// belongs to no turn.
			rt.rec.FirstByteS = m.at.Sub(rt.t0).Seconds()
		}
		done, f := rt.event(m)
		if done || f != nil {
			if done {
				rt.rec.E2ES = m.at.Sub(rt.t0).Seconds()
				if af := rt.ack(ctx, cn); af != nil && f == nil {
					f = af
				}
			}
			return f
		}
	}
}

// turnMessages are the messages of turn i: the user text as a conversation
// item and response.create, or on a native session input.text.append and
// input.commit (which starts the response).
func (rt *realtimeTurn) turnMessages(i int, text string) ([][]byte, error) {
	if rt.ss.native {
		b, err := json.Marshal(map[string]string{"type": "input.text.append", "text": text})
		return [][]byte{b, []byte(`{"type":"input.commit"}`)}, err
	}
	item, err := json.Marshal(map[string]any{"type": "conversation.item.create", "item": map[string]any{
		"id": fmt.Sprintf("item_u%d", i), "type": "message", "role": "user",
		"content": []map[string]string{{"type": "input_text", "text": text}}}})
	return [][]byte{item, []byte(`{"type":"response.create"}`)}, err
}

// ack sends playback.ack for the turn's response, as the benchmark does:
// the session's ack_only policy keeps a response active until it is acked.
// A native session commits a response when it ends: nothing to send.
func (rt *realtimeTurn) ack(ctx context.Context, cn *conn) *failure {
	if rt.rid == "" || rt.ss.native {
		return nil
	}
	ms := int64(float64(rt.benchBytes) * 1000 / float64(rt.ss.benchRate*2))
	b, _ := json.Marshal(map[string]any{"type": "playback.ack", "response_id": rt.rid, "item_id": "item_" + rt.rid,
		"played_ms": ms, "committed_ms": ms}) // plain values always encode
	return cn.send(ctx, b)
}

// event handles one server event; done is true at the turn's response.done.
func (rt *realtimeTurn) event(m message) (done bool, f *failure) {
	if m.typ != websocket.MessageText {
		return false, fatal(results.ErrMalformed, "event %d: a binary frame; Realtime events are JSON text", rt.events)
	}
	var ev realtimeEvent
	if err := parseRealtimeEvent(m.data, &ev); err != nil {
		return false, fatal(results.ErrMalformed, "event %d: %v", rt.events, err)
	}
	rid := ev.responseID
	if rt.rid == "" && len(rid) > 0 && (ev.typ == "response.created" || strings.HasPrefix(ev.typ, "response.")) {
		rt.rid = string(rid)
	}
	ours := len(rid) == 0 || string(rid) == rt.rid
	if ours && !rt.ss.native { // the spellings are the Realtime schema's
		rt.noteSpelling(ev.typ)
	}
	off := m.at.Sub(rt.t0).Seconds()
	switch ev.typ {
	case "error":
		// Any error fails the session, as it fails the benchmark's.
		return false, fatal(results.ErrStreamError, "event %d: server error: %s", rt.events, errorText(rt.c.redactor(rt.sess), ev.errorRaw, ev.code))
	case evAudioDelta, evLegacyAudioDelta:
		if !ours {
			return false, nil
		}
		rt.audioEvents++
		return false, rt.audio(&ev, m.at, off)
	case evTranscriptDelta, evLegacyTranscriptDelta, evTextDelta, evLegacyTextDelta:
		if ours && len(ev.delta) > 0 {
			rt.text(ev.delta, m.at, off)
		}
	case "response.done":
		if !ours {
			return false, nil
		}
		status := ev.status
		if status != "" && status != "completed" {
			return true, fail(results.ErrStreamError, "event %d: response.done with status %q", rt.events, status)
		}
		if !rt.rec.HasAudio() { // session.update asks for audio and text
			return true, noAudio(rt.audioEvents, rt.rec.TextChars > 0)
		}
		return true, nil
	case "session.closed":
		return false, fatal(results.ErrTruncated, "event %d: the server closed the session before response.done", rt.events)
	default:
		if strings.HasPrefix(ev.typ, "duplex.") {
			red := rt.c.redactor(rt.sess)
			if msg := forwardedError(red, ev.event); msg != "" {
				return false, fatal(results.ErrStreamError, "event %d: %s: server error: %s", rt.events, client.ServerText(red, ev.typ), msg)
			}
		}
	}
	return false, nil
}

// noteSpelling records the spelling of the turn's first audio event.
func (rt *realtimeTurn) noteSpelling(typ string) {
	if sp := eventSpelling(typ); sp != "" && rt.rec.WS != nil && rt.rec.WS.Events == "" {
		rt.rec.WS.Events = sp
	}
}

// audio handles one audio delta (either spelling): the benchmark's figures
// count every decoded byte; omnibench's count the PCM after any WAV header.
// Its samples are decoded while the record's onset or signal checks need
// them (or a sink keeps them), and measured from the payload's length
// afterwards, as the HTTP kinds do (client.PlainBase64Len); both paths
// record the same.
func (rt *realtimeTurn) audio(ev *realtimeEvent, at time.Time, off float64) *failure {
	b64 := ev.audioB64()
	if len(b64) == 0 {
		return nil
	}
	if ev.rate > 0 {
		rt.ss.benchRate = ev.rate
	}
	if m, ok := rt.measure(ev, b64); ok {
		rt.benchAudio(ev, at, m.size)
		if !m.wav && m.pcm%2 != 0 {
			return fatal(results.ErrMalformed, "event %d: %s: %d bytes is not whole pcm16 samples", rt.events, ev.typ, m.pcm)
		}
		if m.pcm == 0 {
			return nil
		}
		if f := rt.checkFormat(m.format); f != nil {
			return f
		}
		client.AddChunk(rt.rec, off, m.pcm)
		return nil
	}
	data, err := rt.ss.decodeBase64(b64)
	if err != nil {
		return fatal(results.ErrMalformed, "event %d: %s: bad base64: %v", rt.events, ev.typ, err)
	}
	rt.benchAudio(ev, at, len(data))
	pcm := data
	f := rt.pcmFormat(ev)
	if len(data) >= 4 && string(data[:4]) == "RIFF" {
		// The chat-fallback caveat (9.4.5): each delta is a whole WAV file
		// although format says pcm16.
		if f, pcm, err = wav.Decode(data); err != nil {
			return fatal(results.ErrMalformed, "event %d: %s: a WAV file that does not parse: %v", rt.events, ev.typ, err)
		}
	} else if len(pcm)%2 != 0 {
		return fatal(results.ErrMalformed, "event %d: %s: %d bytes is not whole pcm16 samples", rt.events, ev.typ, len(pcm))
	}
	if len(pcm) == 0 {
		return nil
	}
	if fl := rt.checkFormat(f); fl != nil {
		return fl
	}
	rt.c.addChunk(&rt.onset, rt.format, rt.rec, rt.sink, off, pcm)
	return nil
}

// measuredDelta is an audio delta measured from its length: size bytes
// once decoded, of which pcm are samples in format (all of them, unless
// the delta is a WAV file).
type measuredDelta struct {
	size, pcm int
	format    wav.Format
	wav       bool
}

// measure measures a delta that need not be decoded: the turn's format is
// known from an earlier chunk, nothing reads the samples any more (the
// onset is found and the checks are off, no sink), and the payload is
// base64 in its plain form (client.PlainBase64Len: what decoding would
// give that length). A delta that is a WAV file (its base64 starts "UklGR", as that
// of "RIFF" does: the chat fallback's deltas) is measured from its header,
// decoded alone, as the HTTP kinds measure chat events
// (client.WAVBase64PCMLen). Anything else takes the decoding path, which
// words the errors.
func (rt *realtimeTurn) measure(ev *realtimeEvent, b64 []byte) (measuredDelta, bool) {
	if !rt.fmtKnown || rt.sink != nil || rt.onset.WantsPCM() {
		return measuredDelta{}, false
	}
	size, ok := client.PlainBase64Len(b64)
	if !ok {
		return measuredDelta{}, false
	}
	if !bytes.HasPrefix(b64, []byte("UklGR")) {
		return measuredDelta{size: size, pcm: size, format: rt.pcmFormat(ev)}, true
	}
	h, pcm, ok := client.WAVBase64PCMLen(&rt.ss.wavHead, b64, size)
	if !ok {
		return measuredDelta{}, false
	}
	return measuredDelta{size: size, pcm: pcm, format: h.Format, wav: true}, true
}

// benchAudio notes an audio delta of n decoded bytes for the vLLM-Omni
// benchmark's figures.
func (rt *realtimeTurn) benchAudio(ev *realtimeEvent, at time.Time, n int) {
	if n == 0 {
		return
	}
	if rt.benchFirst.IsZero() {
		rt.benchFirst = at
	}
	rt.benchLast = at
	rt.benchBytes += int64(n)
	if ev.hasDur {
		rt.benchHasDur = true
		rt.benchMaxDurMS = max(rt.benchMaxDurMS, ev.durMS)
	}
}

// pcmFormat is the format of a headerless pcm16 delta: mono at the
// event's rate, else the session's, else the benchmark's default.
func (rt *realtimeTurn) pcmFormat(ev *realtimeEvent) wav.Format {
	rate := rt.sess.PCMSampleRate
	if ev.rate > 0 {
		rate = ev.rate
	}
	if rate <= 0 {
		rate = benchDefaultRate
	}
	return wav.Format{SampleRate: rate, Channels: 1, BitsPerSample: 16}
}

// checkFormat takes the turn's format from its first chunk with samples
// and fails a later chunk in another format.
func (rt *realtimeTurn) checkFormat(f wav.Format) *failure {
	if !rt.fmtKnown {
		if f.SampleRate <= 0 || f.BytesPerFrame() <= 0 {
			return fatal(results.ErrMalformed, "event %d: unusable audio format (%d Hz, %d channels, %d bits)", rt.events, f.SampleRate, f.Channels, f.BitsPerSample)
		}
		rt.format, rt.fmtKnown = f, true
		return nil
	}
	if f != rt.format {
		return fatal(results.ErrMalformed, "event %d: audio format changed from %d Hz/%d ch/%d bit to %d Hz/%d ch/%d bit", rt.events,
			rt.format.SampleRate, rt.format.Channels, rt.format.BitsPerSample, f.SampleRate, f.Channels, f.BitsPerSample)
	}
	return nil
}

// text records a non-empty text delta.
func (rt *realtimeTurn) text(delta []byte, at time.Time, off float64) {
	rec := rt.rec
	if rt.benchText.IsZero() {
		rt.benchText = at
		rec.TTFTS = off
	} else {
		rec.TextGapsS = append(rec.TextGapsS, off-rt.lastTextS)
	}
	rt.lastTextS = off
	rec.TextChars += utf8.RuneCount(delta)
	if rt.textOut != nil {
		// The writer is the caller's in-memory copy: like the audio sink's,
		// its error must not fail the measurement.
		_, _ = rt.textOut.Write(delta)
	}
}

// finish fills the derived fields and the benchmark's figures.
func (rt *realtimeTurn) finish() {
	rec := rt.rec
	if rec.E2ES == 0 {
		rec.E2ES = time.Since(rt.t0).Seconds()
	}
	if rt.fmtKnown {
		if rec.AudioBytes > 0 {
			rt.onset.Finish(rec)
		}
		rt.c.fin.FinishAudio(rec, rt.format)
	}
	if rt.benchFirst.IsZero() || rec.Kind != results.KindRealtime {
		return // the benchmark's figures exist for its duplex backends only
	}
	b := &results.WSBench{
		TTFPS:       rt.benchFirst.Sub(rt.t0).Seconds(),
		GenerationS: rt.benchLast.Sub(rt.t0).Seconds(),
	}
	if !rt.benchText.IsZero() {
		v := rt.benchText.Sub(rt.t0).Seconds()
		b.TTFTS = &v
	}
	b.AudioDurationS = BenchAudioDuration(rt.benchBytes, rt.ss.benchRate, rt.benchHasDur, rt.benchMaxDurMS)
	b.RTF = BenchRTF(b.GenerationS, b.AudioDurationS)
	rec.WS.Bench = b
}

// BenchAudioDuration is the benchmark's turn duration in seconds: the
// largest metadata.audio_duration_ms when a delta carried one (native
// sessions, cumulative), else decoded bytes / (rate * 2).
func BenchAudioDuration(bytes int64, rate int, hasMeta bool, maxMetaMS float64) float64 {
	if hasMeta {
		return maxMetaMS / 1000
	}
	if rate <= 0 {
		rate = benchDefaultRate
	}
	return float64(bytes) / float64(rate*2)
}

// BenchRTF is compute_audio_rtf: generation / duration, rounded to 6
// digits, nil when the duration is 0.
func BenchRTF(generationS, durationS float64) *float64 {
	if durationS <= 0 {
		return nil
	}
	v := math.Round(generationS/durationS*1e6) / 1e6
	return &v
}
