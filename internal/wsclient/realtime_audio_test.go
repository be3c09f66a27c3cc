package wsclient

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

const omniModel = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

// speechClip is a 16 kHz mono PCM16 WAV clip of seconds of a ramp (so that
// byte-for-byte checks see distinct samples) and its PCM.
func speechClip(t testing.TB, seconds float64, rate int) (*input.Clip, []byte) {
	t.Helper()
	pcm := make([]byte, int(seconds*float64(rate))*2)
	for i := range pcm {
		pcm[i] = byte(i * 7)
	}
	c, err := input.NewClip(fmt.Sprintf("q%v.wav", seconds), wav.Encode(wav.Format{SampleRate: rate, Channels: 1, BitsPerSample: 16}, pcm))
	if err != nil {
		t.Fatal(err)
	}
	return c, pcm
}

// audioSession is a realtime-audio session of the clips, appended at 50
// times real time so that the test is fast (the pacing code still runs).
func audioSession(clips ...*input.Clip) Session {
	return Session{Kind: results.KindRealtimeAudio, Model: omniModel, Texts: make([]string, len(clips)), Audio: clips, AudioPace: 50}
}

// Against the simulator: a three-turn session on one connection, each turn
// a full commit cycle with audio out; the record counts the input audio and
// keeps TTFP from the first append beside TTFP from the end of speech.
func TestRealtimeAudioSimulator(t *testing.T) {
	sim := fastSim(t, func(c *simulator.Config) { c.Model = omniModel })
	c := newClient(t, sim.URL, Options{})
	a, pcmA := speechClip(t, 0.5, 16000)
	b, pcmB := speechClip(t, 1.3, 16000)
	recs := runSession(t, c, audioSession(a, b, a))
	for i, r := range recs {
		checkAudioShape(t, r, i)
		want := pcmA
		if i == 1 {
			want = pcmB
		}
		if r.Kind != results.KindRealtimeAudio || r.Endpoint != RealtimePath || r.WS.Bench != nil {
			t.Errorf("record %d: kind %s, endpoint %s, bench %+v", i, r.Kind, r.Endpoint, r.WS.Bench)
		}
		if r.InputAudioBytes != int64(len(want)) || r.InputAudioS != float64(len(want))/32000 {
			t.Errorf("record %d: input %d bytes, %v s; want %d bytes", i, r.InputAudioBytes, r.InputAudioS, len(want))
		}
		if r.WS.TTFPFirstAppendS != r.TTFPS+r.WS.SpeechLeadS || r.WS.SpeechLeadS <= 0 {
			t.Errorf("record %d: ttfp %v + lead %v != from first append %v", i, r.TTFPS, r.WS.SpeechLeadS, r.WS.TTFPFirstAppendS)
		}
		if r.TextChars == 0 || r.TTFTS <= 0 || r.SampleRate != 24000 {
			t.Errorf("record %d: %d text chars, ttft %v, %d Hz", i, r.TextChars, r.TTFTS, r.SampleRate)
		}
	}
	// The server never closes a plain connection: the client does, and
	// no server close frame is recorded.
	if recs[2].WS.CloseCode != 0 {
		t.Errorf("last record close code %d", recs[2].WS.CloseCode)
	}
}

// plainTranscript plays transcript B's server side for one commit cycle
// and returns the PCM the client appended, after checking every append is
// a 200 ms chunk but the last.
func plainTranscript(tc *tinyConn, before func()) []byte {
	if m := tc.expect("input_audio_buffer.commit"); m["final"] != false {
		tc.t.Errorf("first commit %v", m)
	}
	var got []byte
	var sizes []int
	for {
		m := tc.read()
		if m == nil {
			return got
		}
		if m["type"] == "input_audio_buffer.commit" {
			if m["final"] != true {
				tc.t.Errorf("closing commit %v", m)
			}
			break
		}
		if m["type"] != "input_audio_buffer.append" {
			tc.t.Errorf("server: unexpected %v", m)
			continue
		}
		b, err := base64.StdEncoding.DecodeString(m["audio"].(string))
		if err != nil {
			tc.t.Errorf("append: %v", err)
		}
		got = append(got, b...)
		sizes = append(sizes, len(b))
	}
	for i, n := range sizes[:max(len(sizes)-1, 0)] {
		if n != 6400 {
			tc.t.Errorf("append %d: %d bytes, want 6400 (200 ms)", i, n)
		}
	}
	if before != nil {
		before()
	}
	audio := b64(make([]byte, 9600))
	tc.text(`{"type":"transcription.delta","delta":"北京是"}`)
	// vLLM-Omni writes its audio events with json.dumps' spaces.
	tc.text(`{"type": "response.audio.delta", "audio": "` + audio + `", "format": "pcm16", "sample_rate_hz": 24000}`)
	tc.text(`{"type":"transcription.delta","delta":"中国的首都。"}`)
	tc.text(`{"type": "response.audio.delta", "audio": "` + audio + `", "format": "pcm16", "sample_rate_hz": 24000}`)
	tc.text(`{"type":"transcription.done","text":"北京是中国的首都。","usage":{"prompt_tokens":187,"total_tokens":199,"completion_tokens":12,"prompt_tokens_details":null}}`)
	tc.text(`{"type": "response.audio.done", "has_audio": true}`)
	return got
}

// TestTranscriptB is transcript B against a tiny server: session.created
// first, session.update with the model at the top level, two commit cycles
// whose appends carry the clip's PCM byte for byte, and the client closing
// the connection (the server never does).
func TestTranscriptB(t *testing.T) {
	a, pcmA := speechClip(t, 0.7, 16000)
	b, pcmB := speechClip(t, 0.2, 16000)
	appended := make(chan []byte, 2)
	url := tinyServer(t, func(tc *tinyConn) {
		tc.text(`{"type":"session.created","id":"sess-5b0e2c","created":1787400000}`)
		if u := tc.expect("session.update"); u["model"] != omniModel || u["session"] != nil {
			t.Errorf("session.update %v", u)
		}
		for range 2 {
			appended <- plainTranscript(tc, nil)
		}
		if m := tc.read(); m != nil {
			t.Errorf("after the last turn: %v (the client should close)", m)
		}
	})
	recs := runSession(t, tinyClient(t, url, testKey), audioSession(a, b))
	for i, want := range [][]byte{pcmA, pcmB} {
		if got := <-appended; !bytes.Equal(got, want) {
			t.Errorf("turn %d: appended %d bytes, not the clip's %d bytes of PCM", i, len(got), len(want))
		}
		r := recs[i]
		checkAudioShape(t, r, i)
		if r.AudioBytes != 19200 || r.AudioDurationS != 0.4 || r.TextChars != 9 || len(r.TextGapsS) != 1 {
			t.Errorf("record %d: %d bytes, %v s, %d chars, %d gaps", i, r.AudioBytes, r.AudioDurationS, r.TextChars, len(r.TextGapsS))
		}
		if r.WS.Events != "" {
			t.Errorf("record %d: events %q; realtime-audio records name no spelling", i, r.WS.Events)
		}
	}
}

func TestRealtimeAudioErrors(t *testing.T) {
	clip, _ := speechClip(t, 0.3, 16000)
	t.Run("generation error then the next turn", func(t *testing.T) {
		url := tinyServer(t, func(tc *tinyConn) {
			tc.text(`{"type":"session.created","id":"sess-1","created":1}`)
			tc.expect("session.update")
			tc.expect("input_audio_buffer.commit")
			for m := tc.read(); m != nil && m["final"] != true; m = tc.read() {
			}
			tc.text(`{"type":"error","error":"Generation failed: out of memory","code":"processing_error"}`)
			tc.text(`{"type": "response.audio.done", "has_audio": false}`)
			plainTranscript(tc, nil)
		})
		recs := runSession(t, tinyClient(t, url, testKey), audioSession(clip, clip))
		wantFail(t, recs[0], results.ErrStreamError, "server error: Generation failed: out of memory (code processing_error)")
		checkAudioShape(t, recs[1], 1)
	})
	t.Run("closed mid-turn", func(t *testing.T) {
		url := tinyServer(t, func(tc *tinyConn) {
			tc.text(`{"type":"session.created","id":"sess-1","created":1}`)
			tc.expect("session.update")
			plainTranscript(tc, func() {
				tc.text(`{"type":"transcription.delta","delta":"half"}`)
				tc.gone = true
				_ = tc.c.Close(websocket.StatusInternalError, "engine died")
			})
		})
		recs := runSession(t, tinyClient(t, url, testKey), audioSession(clip, clip))
		wantFail(t, recs[0], results.ErrTruncated, "the server closed the connection (code 1011, reason engine died)")
		if recs[0].WS.CloseCode != 1011 {
			t.Errorf("close code %d", recs[0].WS.CloseCode)
		}
		wantFail(t, recs[1], results.ErrTruncated, "not sent")
	})
	t.Run("no audio out", func(t *testing.T) {
		url := tinyServer(t, func(tc *tinyConn) {
			tc.text(`{"type":"session.created","id":"sess-1","created":1}`)
			tc.expect("session.update")
			tc.expect("input_audio_buffer.commit")
			for m := tc.read(); m != nil && m["final"] != true; m = tc.read() {
			}
			tc.text(`{"type":"transcription.done","text":"","usage":{}}`)
			tc.text(`{"type": "response.audio.done", "has_audio": false}`)
		})
		recs := runSession(t, tinyClient(t, url, testKey), audioSession(clip))
		wantFail(t, recs[0], results.ErrNoAudio, "no audio event")
	})
	t.Run("unknown model", func(t *testing.T) {
		sim := fastSim(t, func(c *simulator.Config) { c.Model = omniModel })
		s := audioSession(clip, clip)
		s.Model = "nope"
		recs := runSession(t, newClient(t, sim.URL, Options{}), s)
		wantFail(t, recs[0], results.ErrStreamError, "The model `nope` does not exist. (code model_not_found)")
		wantFail(t, recs[1], results.ErrStreamError, "not sent")
	})
	t.Run("simulator fault", func(t *testing.T) {
		sim := fastSim(t, func(c *simulator.Config) { c.Model = omniModel; c.Faults = simulator.Faults{HTTP500: 1} })
		recs := runSession(t, newClient(t, sim.URL, Options{}), audioSession(clip, clip))
		for _, r := range recs { // a generation failure leaves the session usable
			wantFail(t, r, results.ErrStreamError, "(code processing_error)")
		}
	})
	t.Run("not 16 kHz", func(t *testing.T) {
		sim := fastSim(t, func(c *simulator.Config) { c.Model = omniModel })
		wrong, _ := speechClip(t, 0.3, 24000)
		recs := runSession(t, newClient(t, sim.URL, Options{}), audioSession(wrong, clip))
		wantFail(t, recs[0], results.ErrConnect, "request not sent: q0.3.wav: realtime-audio sends 16 kHz mono PCM16, and this WAV is 24000 Hz")
		checkAudioShape(t, recs[1], 1)
	})
}

// FuzzRealtimeAudioEvent feeds arbitrary server messages to a plain
// realtime turn, before and after its final commit: no panic, and the
// record's timeline stays consistent with offsets never negative.
func FuzzRealtimeAudioEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.created","id":"sess-5b0e2c","created":1787400000}`,
		`{"type":"transcription.delta","delta":"北京是"}`,
		`{"type": "response.audio.delta", "audio": "AAAAAA==", "format": "pcm16", "sample_rate_hz": 24000}`,
		`{"type":"response.audio.delta","audio":"AAA=","sample_rate_hz":-3}`,
		`{"type":"transcription.done","text":"x","usage":{"prompt_tokens":1}}`,
		`{"type": "response.audio.done", "has_audio": true}`,
		`{"type":"response.audio.done","has_audio":"yes"}`,
		`{"type":"response.output_audio.delta","audio":"AAAAAA==","format":"pcm16","sample_rate_hz":24000}`,
		`{"type":"response.output_audio.done","has_audio":true}`,
		`{"type":"error","error":"Invalid audio data","code":"invalid_audio"}`,
		`{"type":"error","error":{"message":"m"},"code":null}`,
		`{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	c := newClient(f, "http://127.0.0.1:1", Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := &results.Record{WS: &results.WSTurn{}}
		at := &audioTurn{realtimeTurn: realtimeTurn{c: c, ss: &realtimeSession{benchRate: benchDefaultRate}, rec: rec, t0: time.Now()}}
		_, _ = at.message(message{typ: websocket.MessageText, data: data, at: time.Now()})
		at.ended, at.t0 = true, time.Now()
		_, _ = at.message(message{typ: websocket.MessageText, data: data, at: time.Now()})
		checkTimeline(t, rec)
		for _, a := range rec.ChunkArrivalsS {
			if a < 0 {
				t.Fatalf("negative chunk offset %v", a)
			}
		}
		if rec.WS.EarlyAudioBytes < 0 || rec.WS.EarlyAudioBytes > rec.AudioBytes || strings.Contains(rec.Error, "\x00") {
			t.Fatalf("early bytes %d of %d", rec.WS.EarlyAudioBytes, rec.AudioBytes)
		}
	})
}

// TestInputAppendsCached checks the append messages a Client keeps per
// spoken clip: the same messages as encoding each chunk (what goes on the
// wire is unchanged), built once per clip however many turns send it, a
// refused clip's error kept alike, and no more than maxCachedClips kept.
func TestInputAppendsCached(t *testing.T) {
	var ic inputCache
	clip, pcm := speechClip(t, 0.5, 16000) // two whole chunks and a part
	a := ic.appends(clip)
	if a.err != nil || a.pcmLen != len(pcm) || len(a.msgs) != 3 {
		t.Fatalf("%d messages of %d bytes, %v; want 3 of %d", len(a.msgs), a.pcmLen, a.err, len(pcm))
	}
	for k, msg := range a.msgs {
		if want := appendMessage(pcm[k*appendChunkBytes : min((k+1)*appendChunkBytes, len(pcm))]); !bytes.Equal(msg, want) {
			t.Fatalf("message %d differs from the chunk's own", k)
		}
	}
	if ic.appends(clip) != a {
		t.Error("the clip's messages were built again")
	}
	bad, _ := speechClip(t, 0.1, 24000)
	if b := ic.appends(bad); b.err == nil || ic.appends(bad) != b {
		t.Errorf("a 24 kHz clip: %v, kept %v", b.err, ic.appends(bad) == b)
	}
	for range maxCachedClips {
		c, _ := speechClip(t, 0.01, 16000)
		ic.appends(c)
	}
	if len(ic.clips) != maxCachedClips {
		t.Errorf("%d clips kept, want at most %d", len(ic.clips), maxCachedClips)
	}
}
