package wsclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// This file runs realtime-audio: plain WS /v1/realtime
// (docs/reference/websocket.md, section 3), vLLM core's realtime transcription protocol with audio out.
// Per turn: input_audio_buffer.commit{final:false} starts a generation, the
// spoken input goes as input_audio_buffer.append chunks paced in real time,
// commit{final:true} ends it, and the server answers with
// transcription.delta and response.audio.delta (field "audio") until
// response.audio.done. The record's offsets count from the final commit,
// the listener's end of speech; TTFP from the first append is kept beside.
// The audio events are read in either spelling (response.output_audio.*
// too), as on the duplex endpoint; the record names no spelling, since only
// the duplex session's events were renamed upstream.

// InputSampleRate is the only input rate plain realtime takes: PCM16 mono
// at 16 kHz.
const InputSampleRate = 16000

// AppendChunk is the duration of one input_audio_buffer.append, as in the
// reference transcript (6400 bytes = 200 ms at 16 kHz).
const AppendChunk = 200 * time.Millisecond

// InputPCM is a clip's PCM samples, checked to be what plain realtime takes:
// a WAV file of 16 kHz mono 16-bit PCM. Other audio is refused, not
// resampled, so that what was measured is the listener's own recording.
func InputPCM(c *input.Clip) ([]byte, error) {
	if c.Format != input.WAV {
		return nil, fmt.Errorf("%s: realtime-audio sends 16 kHz mono PCM16, and this is a %s file; convert it to such a WAV (e.g. ffmpeg -i IN -ar 16000 -ac 1 -c:a pcm_s16le OUT.wav)", c.Name, c.Format)
	}
	data, err := base64.StdEncoding.DecodeString(c.Base64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	f, pcm, err := wav.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	if f.SampleRate != InputSampleRate || f.Channels != 1 || f.BitsPerSample != 16 {
		return nil, fmt.Errorf("%s: realtime-audio sends 16 kHz mono PCM16, and this WAV is %d Hz, %d channels, %d bits; convert it (e.g. ffmpeg -i IN -ar 16000 -ac 1 -c:a pcm_s16le OUT.wav)",
			c.Name, f.SampleRate, f.Channels, f.BitsPerSample)
	}
	return pcm, nil
}

func (c *Client) runRealtimeAudio(ctx context.Context, sess Session, t Turn) {
	if sess.Endpoint == "" {
		sess.Endpoint = RealtimePath
	}
	ss := &realtimeSession{benchRate: benchDefaultRate}
	c.runTurns(ctx, sess, t, turnProtocol{
		open: func(cn *conn) *failure { return c.openPlainRealtime(ctx, cn, sess) },
		turn: func(cn *conn, i int, rec *results.Record, sink io.Writer) *failure {
			at := &audioTurn{realtimeTurn: realtimeTurn{c: c, sess: sess, ss: ss, rec: rec, sink: sink}}
			var clip *input.Clip
			if i < len(sess.Audio) {
				clip = sess.Audio[i]
			}
			return at.run(ctx, cn, clip)
		},
		// The plain endpoint takes no session.close (unknown_event) and
		// never closes a connection itself: the client closes it.
		close: func(cn *conn) *websocket.CloseError { return cn.closeClient(ctx) },
	})
}

// openPlainRealtime waits for session.created (sent right after accept) and
// sends session.update with the model at the top level. Success has no
// reply at the targeted version; a refusal comes as an error event, which
// fails the first turn when it arrives.
func (c *Client) openPlainRealtime(ctx context.Context, cn *conn, sess Session) *failure {
	if f := awaitSessionCreated(ctx, cn); f != nil {
		return f
	}
	b, err := json.Marshal(map[string]any{"type": "session.update", "model": sess.Model})
	if err != nil {
		return fatal(results.ErrConnect, "request not sent: encoding session.update: %v", err)
	}
	return cn.send(ctx, b)
}

// audioTurn is one commit cycle. It reads audio and text deltas as a
// realtime turn does; t0 (realtimeTurn.t0) is the final commit.
type audioTurn struct {
	realtimeTurn
	first  time.Time // immediately before the first append
	ended  bool      // the final commit was sent
	failed *failure  // an error event inside the generation; the turn goes on to response.audio.done
}

// appendMessage is one input_audio_buffer.append.
func appendMessage(pcm []byte) []byte {
	b, _ := json.Marshal(map[string]string{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(pcm)}) // a string always encodes
	return b
}

// clipAppends is a spoken input as the messages that send it: one
// input_audio_buffer.append per AppendChunk of its PCM.
type clipAppends struct {
	msgs   [][]byte
	pcmLen int // the PCM's bytes: every message carries AppendChunk's but the last
	err    error
}

// appendChunkBytes is the PCM of one append.
const appendChunkBytes = InputSampleRate * 2 * int(AppendChunk/time.Millisecond) / 1000

// maxCachedClips bounds the clips whose messages a Client keeps: a
// workload's spoken prompts are a few clips that every session shares.
const maxCachedClips = 64

// inputCache keeps the append messages of the clips sessions send, built
// once per clip: decoding a clip, encoding each chunk in base64 and
// marshalling it cost more than the session's whole reading of the answer.
// The messages are only read (a write masks a copy).
type inputCache struct {
	mu    sync.Mutex
	clips map[*input.Clip]*clipAppends
}

// appends is clip's messages, from the cache when it has them.
func (ic *inputCache) appends(clip *input.Clip) *clipAppends {
	ic.mu.Lock()
	a := ic.clips[clip]
	ic.mu.Unlock()
	if a != nil {
		return a
	}
	a = newClipAppends(clip)
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.clips == nil {
		ic.clips = make(map[*input.Clip]*clipAppends)
	}
	if len(ic.clips) < maxCachedClips {
		ic.clips[clip] = a
	}
	return a
}

func newClipAppends(clip *input.Clip) *clipAppends {
	pcm, err := InputPCM(clip)
	if err != nil {
		return &clipAppends{err: err}
	}
	a := &clipAppends{pcmLen: len(pcm)}
	for off := 0; off < len(pcm); off += appendChunkBytes {
		a.msgs = append(a.msgs, appendMessage(pcm[off:min(off+appendChunkBytes, len(pcm))]))
	}
	return a
}

// run sends one utterance, paced, and reads the answer to response.audio.done.
func (at *audioTurn) run(ctx context.Context, cn *conn, clip *input.Clip) *failure {
	rec := at.rec
	at.t0 = time.Now() // until the final commit, for a turn that fails before it
	if clip == nil {
		return fail(results.ErrConnect, "request not sent: the prompt of turn %d has no audio (realtime-audio sends speech)", rec.WS.Index)
	}
	in := at.c.inputs.appends(clip)
	if in.err != nil {
		return fail(results.ErrConnect, "request not sent: %v", in.err)
	}
	pace := at.sess.AudioPace
	if pace == 0 {
		pace = 1
	}
	at.first = time.Now()
	var deadline time.Time
	if at.c.opts.Timeout > 0 {
		deadline = at.first.Add(at.c.opts.Timeout)
	}
	defer at.finish()
	if f := cn.send(ctx, []byte(`{"type":"input_audio_buffer.commit","final":false}`)); f != nil {
		return f
	}
	for k, msg := range in.msgs {
		off := k * appendChunkBytes
		end := min(off+appendChunkBytes, in.pcmLen)
		if k > 0 && pace > 0 {
			// As from a microphone, each chunk goes when it has been
			// spoken: the first one's end is the clock's origin.
			due := at.first.Add(time.Duration(float64(end-appendChunkBytes) / (InputSampleRate * 2) * float64(time.Second) / pace))
			if f := at.readUntil(ctx, cn, due, deadline); f != nil {
				return f
			}
		}
		if f := cn.send(ctx, msg); f != nil {
			return f
		}
		rec.InputAudioBytes += int64(end - off)
	}
	rec.InputAudioS = float64(rec.InputAudioBytes) / (InputSampleRate * 2)
	at.t0 = time.Now() // the listener's end of speech
	at.ended = true
	rec.WS.SpeechLeadS = at.t0.Sub(at.first).Seconds()
	if f := cn.send(ctx, []byte(`{"type":"input_audio_buffer.commit","final":true}`)); f != nil {
		return f
	}
	for {
		m, f := cn.next(ctx, deadline, at.events)
		if f != nil {
			return f
		}
		done, f := at.message(m)
		if f != nil || done {
			if f == nil && at.failed != nil {
				f = at.failed
			}
			return f
		}
	}
}

// readUntil handles the server's messages until due: output may come before
// the end of speech (async_chunk), and an error must not wait for it.
func (at *audioTurn) readUntil(ctx context.Context, cn *conn, due, deadline time.Time) *failure {
	cn.startReader() // waiting for the next send and for messages at once
	wake := time.NewTimer(time.Until(due))
	defer wake.Stop()
	for {
		m, woke, f := cn.nextOrWake(ctx, deadline, at.events, wake.C)
		if f != nil || woke {
			return f
		}
		done, f := at.message(m)
		if f != nil {
			return f
		}
		if done {
			return fatal(results.ErrStreamError, "event %d: response.audio.done before the end of the spoken input", at.events)
		}
	}
}

// message handles one server message; done is true at response.audio.done.
func (at *audioTurn) message(m message) (done bool, f *failure) {
	at.events++
	rec := at.rec
	// Offsets count from the final commit; a message received before it
	// (the reader may stamp one while the commit is being sent) counts as 0.
	early := !at.ended || m.at.Before(at.t0)
	off := 0.0
	if !early {
		off = m.at.Sub(at.t0).Seconds()
		if rec.FirstByteS == 0 {
			rec.FirstByteS = off
		}
	}
	if m.typ != websocket.MessageText {
		return false, fatal(results.ErrMalformed, "event %d: a binary frame; realtime events are JSON text", at.events)
	}
	var ev realtimeEvent
	if err := parseRealtimeEvent(m.data, &ev); err != nil {
		return false, fatal(results.ErrMalformed, "event %d: %v", at.events, err)
	}
	switch ev.typ {
	case "error":
		msg := errorText(at.c.redactor(at.sess), ev.errorRaw, ev.code)
		if ev.code != nil && (*ev.code == "processing_error" || *ev.code == "invalid_audio") {
			// A generation failure is followed by response.audio.done:
			// read on to it so that the next turn starts clean.
			if at.failed == nil {
				at.failed = fail(results.ErrStreamError, "event %d: server error: %s", at.events, msg)
			}
			return false, nil
		}
		return false, fatal(results.ErrStreamError, "event %d: server error: %s", at.events, msg)
	case evAudioDelta, evLegacyAudioDelta:
		at.audioEvents++
		before := rec.AudioBytes
		if f := at.audio(&ev, m.at, off); f != nil {
			return false, f
		}
		if early {
			rec.WS.EarlyAudioBytes += rec.AudioBytes - before
		}
	case evTranscriptionDelta:
		if len(ev.delta) > 0 {
			at.text(ev.delta, m.at, off)
		}
	case evAudioDone, evLegacyAudioDone:
		rec.E2ES = off
		if at.failed == nil && !rec.HasAudio() { // speech out is the kind's job
			return true, noAudio(at.audioEvents, rec.TextChars > 0)
		}
		return true, nil
	}
	return false, nil
}

// finish fills the derived fields, TTFP from the first append among them.
func (at *audioTurn) finish() {
	at.realtimeTurn.finish()
	rec := at.rec
	if rec.HasAudio() && !at.first.IsZero() {
		rec.WS.TTFPFirstAppendS = rec.TTFPS + rec.WS.SpeechLeadS
	}
}
