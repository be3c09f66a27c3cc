package wsclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
)

// speechMsg is one text message of WS /v1/audio/speech/stream (9.2.4).
// Pointers tell absent fields from zero ones.
type speechMsg struct {
	Type           string          `json:"type"`
	UtteranceIndex *int            `json:"utterance_index"`
	SentenceText   string          `json:"sentence_text"`
	Format         string          `json:"format"`
	SampleRate     *int            `json:"sample_rate"`
	ChunkID        *int            `json:"chunk_id"`
	AudioB64       *string         `json:"audio_b64"`
	Timestamps     json.RawMessage `json:"timestamps"`
	TotalBytes     *int64          `json:"total_bytes"`
	Error          *bool           `json:"error"`
	TotalSentences *int            `json:"total_sentences"`
	Message        *string         `json:"message"`
}

// parseSpeechMsg decodes a server text message and checks the fields the
// client relies on; errors name the message type and the field.
func parseSpeechMsg(data []byte) (*speechMsg, error) {
	var m speechMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	need := func(ok bool, field string) error {
		if !ok {
			return fmt.Errorf("%s: %s missing", m.Type, field)
		}
		return nil
	}
	var err error
	switch m.Type {
	case "audio.start", "session.done":
		err = need(m.UtteranceIndex != nil, "utterance_index")
	case "audio.chunk":
		if err = need(m.AudioB64 != nil, "audio_b64"); err == nil {
			err = need(m.SampleRate != nil && *m.SampleRate > 0, "a positive sample_rate")
		}
	case "audio.done":
		if err = need(m.TotalBytes != nil && *m.TotalBytes >= 0, "a non-negative total_bytes"); err == nil {
			err = need(m.Error != nil, "error")
		}
	case "error":
	case "":
		err = fmt.Errorf("message without a type")
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// speechTurn is the state of one utterance while its messages arrive.
type speechTurn struct {
	c        *Client
	sess     Session
	rec      *results.Record
	t0       time.Time
	events   int
	started  bool  // audio.start seen
	wire     int64 // audio bytes received as audio.done counts them
	format   wav.Format
	onset    client.Onset // audible onset of the current utterance's record
	fmtKnown bool
	srvErr   *failure // the first error message or audio.done error
	sink     io.Writer
	pcm      []byte // audio.chunk's samples, decoded into it chunk after chunk
	sawText  bool
	// audioEvents counts the messages that carry audio: binary frames and
	// audio.chunk messages other than the closing one of word timestamps.
	audioEvents int
}

func (c *Client) runSpeech(ctx context.Context, sess Session, t Turn) {
	if sess.Endpoint == "" {
		sess.Endpoint = SpeechStreamPath
	}
	if sess.SpeechAudio == "" {
		sess.SpeechAudio = SpeechStream
	}
	cn, dialTook, f := c.dial(ctx, sess, sess.Endpoint)
	if f != nil {
		rec := c.beginSpeech(t, sess, 0)
		rec.ConnectS = dialTook.Seconds()
		rec.ErrorClass, rec.Error = f.class, f.err.Error()
		t.End(0, rec)
		notSent(ctx, sess, t, 1, f, sess.Seq)
		return
	}
	cfg, err := speechConfig(sess)
	if err == nil {
		f = cn.send(ctx, cfg)
	} else {
		f = fatal(results.ErrConnect, "request not sent: %v", err)
	}
	var last *results.Record
	i := 0
	for ; f == nil && i < len(sess.Texts); i++ {
		rec := c.beginSpeech(t, sess, i)
		if i == 0 {
			rec.ConnectS = dialTook.Seconds()
		}
		st := &speechTurn{c: c, sess: sess, rec: rec, sink: t.audioOut(i)}
		f = st.run(ctx, cn, sess.Texts[i])
		if f != nil {
			rec.ErrorClass, rec.Error = f.class, f.err.Error()
			if !f.fatal {
				f = nil
			}
		}
		if f != nil || i == len(sess.Texts)-1 {
			last = rec // handed out after the close, which it records
			continue
		}
		t.End(i, rec)
	}
	if cn.readErr == nil && cn.closed == nil {
		_ = cn.send(ctx, []byte(`{"type":"session.close"}`)) // a failure shows as no close frame
	}
	ce := cn.finish(ctx)
	if last != nil {
		cn.setClose(last, ce)
		t.End(i-1, last)
	}
	if f != nil {
		if last == nil {
			// session.config itself failed: utterance 0 carries it.
			rec := c.beginSpeech(t, sess, 0)
			rec.ErrorClass, rec.Error = f.class, f.err.Error()
			cn.setClose(rec, ce)
			t.End(0, rec)
			i = 1
		}
		notSent(ctx, sess, t, i, f, sess.Seq)
	}
}

func (c *Client) beginSpeech(t Turn, sess Session, i int) *results.Record {
	rec := t.Begin(i)
	rec.Kind, rec.Endpoint, rec.Model = results.KindSpeechWS, sess.Endpoint, sess.Model
	rec.WS = &results.WSTurn{Session: sess.Seq, Index: i}
	if i == 0 && sess.RefAudio != nil { // sent once, in session.config
		rec.InputAudioS, rec.InputAudioBytes = sess.RefAudio.DurationS, int64(sess.RefAudio.Bytes)
	}
	return rec
}

// speechConfig builds the session.config message.
func speechConfig(sess Session) ([]byte, error) {
	m := map[string]any{"type": "session.config"}
	if sess.Model != "" {
		m["model"] = sess.Model
	}
	if sess.Voice != "" {
		m["voice"] = sess.Voice
	}
	switch sess.SpeechAudio {
	case SpeechStream:
		m["response_format"], m["stream_audio"] = "pcm", true
	case SpeechTimestamps:
		m["response_format"], m["stream_audio"], m["word_timestamps"] = "pcm", true, true
	case SpeechFile:
		f := sess.AudioFormat
		if f == "" {
			f = "wav"
		}
		if f != "wav" && f != "pcm" {
			return nil, fmt.Errorf("speech-ws file format %q cannot be measured; use wav or pcm", f)
		}
		m["response_format"] = f
	default:
		return nil, fmt.Errorf("speech-ws audio mode %q (want %s)", sess.SpeechAudio, strings.Join(SpeechModes(), ", "))
	}
	for _, k := range []string{"type", "response_format", "stream_audio", "word_timestamps"} {
		if _, ok := sess.Extra[k]; ok {
			return nil, fmt.Errorf("extra session field %q is set by omnibench from the kind and audio mode", k)
		}
	}
	if sess.RefAudio != nil {
		m["ref_audio"] = sess.RefAudio.DataURL()
		if sess.RefText != "" {
			m["ref_text"] = sess.RefText
		}
		m["task_type"] = "Base"
	}
	maps.Copy(m, sess.Extra)
	return json.Marshal(m)
}

// words splits text into the input.text pieces of --text-rate: each word
// with the white space after it, so that the joined pieces are the text.
func words(text string) []string {
	var out []string
	start := 0
	inWord := false
	for i, r := range text {
		space := r == ' ' || r == '\t' || r == '\n' || r == '\r'
		if !space && !inWord && i > start {
			out = append(out, text[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func textMessage(s string) []byte {
	b, _ := json.Marshal(map[string]string{"type": "input.text", "text": s}) // a string always encodes
	return b
}

// run sends one utterance and reads it to its session.done.
func (st *speechTurn) run(ctx context.Context, cn *conn, text string) *failure {
	rec := st.rec
	pieces := []string{text}
	if st.sess.TextRate > 0 {
		pieces = words(text)
	}
	first := time.Now()
	var deadline time.Time
	if st.c.opts.Timeout > 0 {
		deadline = first.Add(st.c.opts.Timeout)
	}
	for k, p := range pieces {
		if k > 0 {
			// Pacing the text can outlast a server's ping timeout: a
			// reader goroutine keeps a read pending to answer pings.
			cn.startReader()
			due := first.Add(time.Duration(float64(k) / st.sess.TextRate * float64(time.Second)))
			if f := sleepUntil(ctx, due, deadline); f != nil {
				st.t0 = time.Now()
				return f
			}
		}
		if f := cn.send(ctx, textMessage(p)); f != nil {
			st.t0 = time.Now()
			return f
		}
	}
	st.t0 = time.Now()
	rec.WS.TextLeadS = st.t0.Sub(first).Seconds()
	defer st.finish()
	if f := cn.send(ctx, []byte(`{"type":"input.done"}`)); f != nil {
		return f
	}
	for {
		m, f := cn.next(ctx, deadline, st.events)
		if f != nil {
			if st.srvErr != nil && f.class == results.ErrTruncated {
				// A fatal server error, then the close: the error says why.
				st.srvErr.fatal = true
				st.srvErr.err = fmt.Errorf("%w; then %v", st.srvErr.err, f.err)
				return st.srvErr
			}
			return f
		}
		st.events++
		if st.rec.FirstByteS == 0 && !m.at.Before(st.t0) {
			// The first message of this turn; one received before t0
			// (session.updated, the previous turn's acknowledgement)
			// belongs to no turn.
			st.rec.FirstByteS = m.at.Sub(st.t0).Seconds()
		}
		done, f := st.message(m)
		if f != nil {
			return f
		}
		if done {
			rec.E2ES = m.at.Sub(st.t0).Seconds() // session.done's arrival
			if st.srvErr != nil {
				return st.srvErr
			}
			if f := st.checkTotal(); f != nil {
				return f
			}
			// Every utterance asks for audio but an empty flush: the
			// server trims the text, and answers nothing to say with
			// session.done alone (total_sentences 0).
			if !rec.HasAudio() && strings.TrimSpace(text) != "" {
				return noAudio(st.audioEvents, false)
			}
			return nil
		}
	}
}

// sleepUntil waits for due, bounded by the turn's deadline and ctx.
func sleepUntil(ctx context.Context, due, deadline time.Time) *failure {
	if !deadline.IsZero() && due.After(deadline) {
		return fatal(results.ErrTimeout, "the utterance's deadline passed while pacing its text")
	}
	t := time.NewTimer(time.Until(due))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fatal(results.ErrCancelled, "run interrupted while pacing the text")
	}
}

// message handles one server message; done is true at session.done.
func (st *speechTurn) message(m message) (done bool, f *failure) {
	rec := st.rec
	off := m.at.Sub(st.t0).Seconds()
	if m.typ == websocket.MessageBinary {
		return false, st.binary(m.data, off)
	}
	msg, err := parseSpeechMsg(m.data)
	if err != nil {
		return false, fatal(results.ErrMalformed, "message %d: %v", st.events, err)
	}
	switch msg.Type {
	case "audio.start":
		st.started = true
		idx := *msg.UtteranceIndex
		rec.WS.ServerIndex = &idx
		if st.sess.SpeechAudio == SpeechStream {
			rate := st.sess.PCMSampleRate
			if rate <= 0 && msg.SampleRate != nil && *msg.SampleRate > 0 {
				rate = *msg.SampleRate // nominal: the server hard-codes 24000
			}
			if rate <= 0 {
				rate = 24000
			}
			st.setFormat(wav.Format{SampleRate: rate, Channels: 1, BitsPerSample: 16})
		}
	case "audio.chunk":
		if !st.started {
			return false, fatal(results.ErrMalformed, "message %d: audio.chunk before audio.start", st.events)
		}
		pcm, err := client.DecodeBase64(&st.pcm, []byte(*msg.AudioB64))
		if err != nil {
			return false, fatal(results.ErrMalformed, "message %d: audio.chunk %s: bad base64: %v", st.events, chunkName(msg), err)
		}
		if len(pcm)%2 != 0 {
			return false, fatal(results.ErrMalformed, "message %d: audio.chunk %s: %d bytes is not whole s16le samples", st.events, chunkName(msg), len(pcm))
		}
		if len(pcm) > 0 {
			if f := st.setFormat(wav.Format{SampleRate: *msg.SampleRate, Channels: 1, BitsPerSample: 16}); f != nil {
				return false, f
			}
		}
		st.wire += int64(len(pcm))
		st.c.addChunk(&st.onset, st.format, rec, st.sink, off, pcm)
		closing := len(pcm) == 0 && len(msg.Timestamps) > 0 && string(msg.Timestamps) != "null"
		if !closing {
			st.audioEvents++
		}
		if closing {
			var ws []struct {
				Word string `json:"word"`
			}
			if err := json.Unmarshal(msg.Timestamps, &ws); err != nil {
				return false, fatal(results.ErrMalformed, "message %d: audio.chunk %s: timestamps: %v", st.events, chunkName(msg), err)
			}
			rec.WS.Words = len(ws)
		}
	case "audio.done":
		tb := *msg.TotalBytes
		rec.WS.ServerTotalBytes = &tb
		if *msg.Error && st.srvErr == nil {
			st.srvErr = fail(results.ErrStreamError, "audio.done reports a generation error (error: true)")
		}
	case "session.done":
		return true, nil
	case "error":
		text := "(no message)"
		if msg.Message != nil {
			text = client.ServerText(st.c.redactor(st.sess), *msg.Message)
		}
		if st.srvErr == nil {
			st.srvErr = fail(results.ErrStreamError, "server error: %s", text)
		}
	}
	return false, nil // unknown types are ignored
}

func chunkName(m *speechMsg) string {
	if m.ChunkID == nil {
		return "(no chunk_id)"
	}
	return fmt.Sprintf("chunk_id %d", *m.ChunkID)
}

// binary handles one binary audio frame.
func (st *speechTurn) binary(p []byte, off float64) *failure {
	if !st.started {
		return fatal(results.ErrMalformed, "message %d: a binary frame before audio.start", st.events)
	}
	st.audioEvents++
	st.wire += int64(len(p))
	switch st.sess.SpeechAudio {
	case SpeechStream:
		if len(p)%2 != 0 {
			return fatal(results.ErrMalformed, "message %d: binary frame of %d bytes is not whole s16le samples", st.events, len(p))
		}
		st.c.addChunk(&st.onset, st.format, st.rec, st.sink, off, p)
	case SpeechFile:
		if st.rec.AudioBytes > 0 || st.fmtKnown {
			return fatal(results.ErrMalformed, "message %d: a second binary frame in one utterance; the non-streaming mode sends exactly one file", st.events)
		}
		pcm, f := p, wav.Format{SampleRate: st.pcmRate(), Channels: 1, BitsPerSample: 16}
		if st.sess.AudioFormat == "" || st.sess.AudioFormat == "wav" {
			var err error
			if f, pcm, err = wav.Decode(p); err != nil {
				return fatal(results.ErrMalformed, "message %d: the utterance's WAV file: %v", st.events, err)
			}
		}
		if ff := st.setFormat(f); ff != nil {
			return ff
		}
		st.c.addChunk(&st.onset, st.format, st.rec, st.sink, off, pcm)
	default:
		return fatal(results.ErrMalformed, "message %d: a binary frame in word-timestamps mode, where audio comes as audio.chunk", st.events)
	}
	return nil
}

func (st *speechTurn) pcmRate() int {
	if st.sess.PCMSampleRate > 0 {
		return st.sess.PCMSampleRate
	}
	return 24000
}

func (st *speechTurn) setFormat(f wav.Format) *failure {
	if !st.fmtKnown {
		if f.SampleRate <= 0 || f.Channels <= 0 || f.BitsPerSample <= 0 || f.BitsPerSample%8 != 0 {
			return fatal(results.ErrMalformed, "message %d: unusable audio format (%d Hz, %d channels, %d bits)", st.events, f.SampleRate, f.Channels, f.BitsPerSample)
		}
		st.format, st.fmtKnown = f, true
		return nil
	}
	if f != st.format {
		return fatal(results.ErrMalformed, "message %d: audio format changed from %d Hz to %d Hz", st.events, st.format.SampleRate, f.SampleRate)
	}
	return nil
}

// checkTotal compares audio.done.total_bytes with what arrived.
func (st *speechTurn) checkTotal() *failure {
	tb := st.rec.WS.ServerTotalBytes
	if !st.started {
		return nil // an empty flush: no audio.start, no audio.done
	}
	if tb == nil {
		return fail(results.ErrTruncated, "session.done without audio.done after audio.start")
	}
	switch {
	case *tb > st.wire:
		return fail(results.ErrTruncated, "audio.done.total_bytes is %d but %d audio bytes arrived", *tb, st.wire)
	case *tb < st.wire:
		return fail(results.ErrMalformed, "audio.done.total_bytes is %d but %d audio bytes arrived", *tb, st.wire)
	}
	return nil
}

// finish fills the derived fields once the utterance has ended.
func (st *speechTurn) finish() {
	rec := st.rec
	if rec.E2ES == 0 {
		rec.E2ES = time.Since(st.t0).Seconds() // failed before session.done
	}
	if st.fmtKnown {
		if rec.AudioBytes > 0 {
			st.onset.Finish(rec)
		}
		st.c.fin.FinishAudio(rec, st.format)
	}
	if rec.HasAudio() {
		rec.WS.TTFPFirstTextS = rec.TTFPS + rec.WS.TextLeadS
	}
}
