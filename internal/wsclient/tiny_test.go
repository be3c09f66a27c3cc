package wsclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// The tests in this file run the client against tiny WebSocket servers
// written here from the worked transcripts of docs/reference/websocket.md,
// section 9, not
// against the simulator: they pin the wire format independently of it.

const testKey = "sk-test-0123456789"

// tinyConn is the server side of one test connection: a reader goroutine
// (so that the server can ping, which needs a concurrent read) and helpers
// that fail the test on any protocol surprise.
type tinyConn struct {
	t    *testing.T
	ctx  context.Context
	c    *websocket.Conn
	msgs chan map[string]any
	gone bool // the connection was closed on purpose: later writes may fail
}

// tinyServer serves script on every connection that carries the bearer
// key; others get vLLM's 401.
func tinyServer(t *testing.T, script func(tc *tinyConn)) string {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"Unauthorized"}`))
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		tc := &tinyConn{t: t, ctx: ctx, c: c, msgs: make(chan map[string]any, 16)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(tc.msgs)
			for {
				typ, data, err := c.Read(ctx)
				if err != nil {
					return
				}
				if typ != websocket.MessageText {
					t.Errorf("the client sent a binary frame")
				}
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					t.Errorf("client message %q: %v", data, err)
				}
				tc.msgs <- m
			}
		}()
		wg.Add(1)
		defer wg.Done()
		script(tc)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		wg.Wait()
	})
	return srv.URL
}

// read returns the client's next message, or nil when it closed.
func (tc *tinyConn) read() map[string]any {
	select {
	case m := <-tc.msgs:
		return m
	case <-tc.ctx.Done():
		tc.t.Errorf("server: no client message in time")
		return nil
	}
}

func (tc *tinyConn) expect(typ string) map[string]any {
	m := tc.read()
	if m == nil || m["type"] != typ {
		tc.t.Errorf("server: got %v, want %s", m, typ)
	}
	return m
}

func (tc *tinyConn) text(s string) {
	if err := tc.c.Write(tc.ctx, websocket.MessageText, []byte(s)); err != nil && !tc.gone {
		tc.t.Errorf("server write: %v", err)
	}
}

func (tc *tinyConn) json(v any) {
	b, _ := json.Marshal(v)
	tc.text(string(b))
}

func (tc *tinyConn) bin(n int) {
	if err := tc.c.Write(tc.ctx, websocket.MessageBinary, make([]byte, n)); err != nil && !tc.gone {
		tc.t.Errorf("server write: %v", err)
	}
}

// utterance reads input.text messages until input.done and returns the text.
func (tc *tinyConn) utterance() (string, bool) {
	var b strings.Builder
	for {
		m := tc.read()
		if m == nil {
			return "", false
		}
		switch m["type"] {
		case "input.text":
			b.WriteString(m["text"].(string))
		case "input.done":
			return b.String(), true
		case "session.close":
			_ = tc.c.Close(websocket.StatusNormalClosure, "")
			return "", false
		default:
			tc.t.Errorf("server: unexpected %v", m)
		}
	}
}

func tinyClient(t *testing.T, url, key string) *Client {
	return newClient(t, url, Options{APIKey: key, IdleTimeout: 5 * time.Second})
}

// TestTranscriptA is transcript A: streamed PCM, two utterances and an
// empty flush on one connection, with a ping from the server inside the
// first utterance.
func TestTranscriptA(t *testing.T) {
	url := tinyServer(t, func(tc *tinyConn) {
		cfg := tc.expect("session.config")
		if cfg["response_format"] != "pcm" || cfg["stream_audio"] != true || cfg["voice"] != "vivian" || cfg["model"] != "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice" {
			t.Errorf("session.config %v", cfg)
		}
		for idx := 0; ; idx++ {
			text, ok := tc.utterance()
			if !ok {
				return
			}
			switch {
			case text == "":
				tc.text(fmt.Sprintf(`{"type":"session.done","utterance_index":%d,"total_sentences":0}`, idx))
				continue
			case idx == 0:
				tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"Hello there. How are you today?","format":"pcm","sample_rate":24000}`)
				pctx, cancel := context.WithTimeout(tc.ctx, 5*time.Second)
				if err := tc.c.Ping(pctx); err != nil {
					t.Errorf("the client did not answer a ping: %v", err)
				}
				cancel()
				tc.bin(15360)
				tc.bin(38400)
				tc.bin(40320)
				tc.text(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":94080,"error":false}`)
			default:
				tc.text(fmt.Sprintf(`{"type": "audio.start", "utterance_index": %d, "sentence_index": 0, "sentence_text": %q, "format": "pcm", "sample_rate": 24000}`, idx, text))
				tc.bin(43200)
				tc.text(fmt.Sprintf(`{"type":"audio.done","utterance_index":%d,"sentence_index":0,"total_bytes":43200,"error":false}`, idx))
			}
			tc.text(fmt.Sprintf(`{"type":"session.done","utterance_index":%d,"total_sentences":1}`, idx))
		}
	})
	c := tinyClient(t, url, testKey)
	recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Model: "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice", Voice: "vivian",
		Texts: []string{"Hello there. How are you today?", "", "Goodbye."}, TextRate: 1000})
	r0, r1, r2 := recs[0], recs[1], recs[2]
	for _, r := range recs {
		if !r.OK() {
			t.Fatalf("record %d: %s: %s", r.WS.Index, r.ErrorClass, r.Error)
		}
	}
	if r0.AudioBytes != 94080 || fmt.Sprint(r0.ChunkBytes) != "[15360 38400 40320]" || r0.AudioDurationS != 1.96 || *r0.WS.ServerIndex != 0 {
		t.Errorf("utterance 0: %d bytes in %v, %v s, index %v", r0.AudioBytes, r0.ChunkBytes, r0.AudioDurationS, *r0.WS.ServerIndex)
	}
	if r1.HasAudio() || r1.WS.ServerIndex != nil {
		t.Errorf("empty flush: %d bytes, index %v", r1.AudioBytes, r1.WS.ServerIndex)
	}
	if r2.AudioBytes != 43200 || r2.AudioDurationS != 0.9 || *r2.WS.ServerIndex != 2 || r2.WS.CloseCode != 1000 {
		t.Errorf("utterance 2: %d bytes, %v s, index %v, close %d", r2.AudioBytes, r2.AudioDurationS, *r2.WS.ServerIndex, r2.WS.CloseCode)
	}
}

// TestTranscriptAVariants are the variants the reference lists, plus the
// ways a server can go wrong.
func TestTranscriptAVariants(t *testing.T) {
	wavFile := wav.Encode(wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}, make([]byte, 4800))
	pcm := base64.StdEncoding.EncodeToString(make([]byte, 15360))
	for _, tc := range []struct {
		name   string
		sess   Session
		reply  func(tc *tinyConn)
		class  string
		want   string
		check  func(t *testing.T, r *results.Record)
		closed int
	}{
		{name: "non-streaming wav", sess: Session{SpeechAudio: SpeechFile}, reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"wav"}`)
			if err := tc.c.Write(tc.ctx, websocket.MessageBinary, wavFile); err != nil {
				t.Error(err)
			}
			tc.text(fmt.Sprintf(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":%d,"error":false}`, len(wavFile)))
		}, check: func(t *testing.T, r *results.Record) {
			if r.AudioBytes != 4800 || r.AudioDurationS != 0.1 || *r.WS.ServerTotalBytes != int64(len(wavFile)) {
				t.Errorf("%d bytes, %v s, total %d", r.AudioBytes, r.AudioDurationS, *r.WS.ServerTotalBytes)
			}
		}},
		{name: "word timestamps", sess: Session{SpeechAudio: SpeechTimestamps}, reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"Hello world","format":"pcm","sample_rate":24000,"word_timestamps":true}`)
			for i := range 3 {
				tc.text(fmt.Sprintf(`{"type":"audio.chunk","utterance_index":0,"sentence_index":0,"chunk_id":%d,"chunk_start_ms":%d,"chunk_end_ms":%d,"sample_rate":24000,"audio_b64":%q,"timestamps":null}`, i, i*320, i*320+320, pcm))
			}
			tc.text(`{"type":"audio.chunk","utterance_index":0,"sentence_index":0,"chunk_id":3,"chunk_start_ms":0,"chunk_end_ms":960,"sample_rate":24000,"audio_b64":"","timestamps":[{"word":"Hello","start_ms":80,"end_ms":420},{"word":"world","start_ms":450,"end_ms":900}]}`)
			tc.text(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":46080,"error":false}`)
		}, check: func(t *testing.T, r *results.Record) {
			if r.AudioBytes != 46080 || len(r.ChunkBytes) != 3 || r.WS.Words != 2 {
				t.Errorf("%d bytes in %d chunks, %d words", r.AudioBytes, len(r.ChunkBytes), r.WS.Words)
			}
		}},
		{name: "generation failure", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.text(`{"type":"error","message":"Generation failed for utterance 0, sentence 0: CUDA out of memory"}`)
			tc.text(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":0,"error":true}`)
		}, class: results.ErrStreamError, want: "server error: Generation failed for utterance 0, sentence 0: CUDA out of memory"},
		{name: "done with error only", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.bin(960)
			tc.text(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":960,"error":true}`)
		}, class: results.ErrStreamError, want: "error: true"},
		{name: "short of total_bytes", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.bin(1000)
			tc.text(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":2000,"error":false}`)
		}, class: results.ErrTruncated, want: "total_bytes is 2000 but 1000 audio bytes arrived"},
		{name: "beyond total_bytes", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.bin(2000)
			tc.text(`{"type":"audio.done","utterance_index":0,"sentence_index":0,"total_bytes":1000,"error":false}`)
		}, class: results.ErrMalformed, want: "total_bytes is 1000 but 2000 audio bytes arrived"},
		{name: "odd PCM frame", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.bin(1001)
		}, class: results.ErrMalformed, want: "not whole s16le samples"},
		{name: "bad JSON", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start",`)
		}, class: results.ErrMalformed, want: "not a JSON object"},
		{name: "audio.done without total", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.text(`{"type":"audio.done","utterance_index":0,"error":false}`)
		}, class: results.ErrMalformed, want: "audio.done: a non-negative total_bytes missing"},
		{name: "close 1011", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.bin(960)
			_ = tc.c.Close(websocket.StatusInternalError, "engine died")
			tc.gone = true
		}, class: results.ErrTruncated, want: "closed the connection (code 1011, reason engine died)", closed: 1011},
		{name: "oversized message", reply: func(tc *tinyConn) {
			tc.text(`{"type":"audio.start","utterance_index":0,"sentence_index":0,"sentence_text":"x","format":"pcm","sample_rate":24000}`)
			tc.bin(5000)
			tc.gone = true // the client closes with 1009
		}, class: results.ErrMalformed, want: "exceeds the cap of 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tinyServer(t, func(c *tinyConn) {
				c.expect("session.config")
				if _, ok := c.utterance(); !ok {
					return
				}
				tc.reply(c)
				c.text(`{"type":"session.done","utterance_index":0,"total_sentences":1}`)
				c.utterance() // session.close, or the client gone
			})
			opts := Options{APIKey: testKey, IdleTimeout: 5 * time.Second}
			if tc.name == "oversized message" {
				opts.MaxMessageBytes = 4096
			}
			c := newClient(t, url, opts)
			sess := tc.sess
			sess.Kind, sess.Texts = results.KindSpeechWS, []string{"x"}
			r := runSession(t, c, sess)[0]
			if tc.class == "" {
				if !r.OK() {
					t.Fatalf("%s: %s", r.ErrorClass, r.Error)
				}
				tc.check(t, r)
				return
			}
			wantFail(t, r, tc.class, tc.want)
			if tc.closed != 0 && r.WS.CloseCode != tc.closed {
				t.Errorf("close code %d, want %d", r.WS.CloseCode, tc.closed)
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	url := tinyServer(t, func(tc *tinyConn) { t.Error("a connection without the key was accepted") })
	for _, kind := range []string{results.KindSpeechWS, results.KindRealtime} {
		c := tinyClient(t, url, "wrong-key")
		recs := runSession(t, c, Session{Kind: kind, Texts: texts[:2]})
		wantFail(t, recs[0], results.ErrHTTPStatus, "HTTP 401")
		wantFail(t, recs[1], results.ErrHTTPStatus, "not sent")
		for _, r := range recs {
			if strings.Contains(r.Error, "wrong-key") {
				t.Errorf("the key leaked into %q", r.Error)
			}
		}
	}
}

// realtimeTurnScript answers one turn as transcript C does, with the audio
// deltas given (base64 payloads) and extra fields on each delta. The audio
// events have the names of spelling (results.EventsGA or EventsLegacy).
func realtimeTurnScript(tc *tinyConn, n int, spelling string, deltas []string, extra func(i int) string) string {
	audio := "response.audio" // release 0.28.0 and older
	if spelling == results.EventsGA {
		audio = "response.output_audio"
	}
	item := tc.expect("conversation.item.create")
	parts := item["item"].(map[string]any)["content"].([]any)
	text := parts[0].(map[string]any)["text"].(string)
	if parts[0].(map[string]any)["type"] != "input_text" {
		tc.t.Errorf("content %v", parts)
	}
	tc.expect("response.create")
	rid := fmt.Sprintf("resp-seed-tts-0-%d-ff5f9ade", n)
	seq := 100 * (n + 1)
	ev := func(s string) {
		seq++
		tc.text(strings.TrimSuffix(s, "}") + fmt.Sprintf(`,"event_id":"event_%032d","server_event_seq":%d}`, seq, seq))
	}
	ev(`{"type":"conversation.item.added","previous_item_id":null,"item":{"id":"item_u0","type":"message","role":"user"}}`)
	ev(`{"type":"conversation.item.created","previous_item_id":null,"item":{"id":"item_u0"}}`)
	ev(`{"type":"conversation.item.done","previous_item_id":null,"item":{"id":"item_u0"}}`)
	ev(fmt.Sprintf(`{"type":"response.created","response_id":%q,"response":{"id":%q,"object":"realtime.response","status":"in_progress","status_details":null,"output":[]}}`, rid, rid))
	ev(fmt.Sprintf(`{"type":"response.content_part.added","response_id":%q,"item_id":"item_%s","output_index":0,"content_index":0,"part":{"type":"audio","transcript":""}}`, rid, rid))
	ev(fmt.Sprintf(`{"type":"response.output_text.delta","response_id":%q,"item_id":"item_%s","output_index":0,"content_index":1,"delta":%q}`, rid, rid, text))
	for i, d := range deltas {
		ev(fmt.Sprintf(`{"type":"%s.delta","response_id":%q,"item_id":"item_%s","output_index":0,"content_index":0,"delta":%q,"format":"pcm16"%s}`, audio, rid, rid, d, extra(i)))
		ev(fmt.Sprintf(`{"type":"%s_transcript.delta","response_id":%q,"item_id":"item_%s","output_index":0,"content_index":0,"delta":""}`, audio, rid, rid))
	}
	ev(fmt.Sprintf(`{"type":"%s.done","response_id":%q,"item_id":"item_%s","output_index":0,"content_index":0}`, audio, rid, rid))
	ev(fmt.Sprintf(`{"type":"response.done","response_id":%q,"response":{"id":%q,"object":"realtime.response","status":"completed","status_details":null,"output":[]}}`, rid, rid))
	ev(`{"type":"rate_limits.updated","rate_limits":[]}`)
	return rid
}

func b64(p []byte) string { return base64.StdEncoding.EncodeToString(p) }

// TestTranscriptC is transcript C: a chat-fallback session whose deltas are
// WAV files in "pcm16", two turns, playback.ack after each, session.close.
// The first delta of each turn is a bare WAV header: the benchmark's TTFP
// counts it, omnibench's waits for the first sample. The server sends the
// audio events in each spelling in turn: current servers' GA names and
// release 0.28.0's; the record says which one it got.
func TestTranscriptC(t *testing.T) {
	for _, spelling := range []string{results.EventsLegacy, results.EventsGA} {
		t.Run(spelling, func(t *testing.T) {
			f := wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}
			header := wav.Encode(f, nil)
			chunk := wav.Encode(f, make([]byte, 4800))
			acks := make(chan map[string]any, 2)
			url := tinyServer(t, func(tc *tinyConn) {
				up := tc.expect("session.update")["session"].(map[string]any)
				eb := up["extra_body"].(map[string]any)
				if v, ok := up["turn_detection"]; !ok || v != nil || eb["minicpmo45_native_duplex"] != false || eb["task_type"] != "Base" || up["playback_commit_policy"] != "ack_only" {
					t.Errorf("session.update %v", up)
				}
				tc.text(`{"type":"session.created","session":{"object":"realtime.session","id":"seed-tts-0","state":"open"},"event_id":"event_1"}`)
				tc.text(`{"type":"session.updated","session":{"id":"seed-tts-0"},"event_id":"event_2","server_event_seq":1}`)
				for n := 0; n < 2; n++ {
					rid := realtimeTurnScript(tc, n, spelling, []string{b64(header), b64(chunk), b64(chunk)}, func(int) string {
						return `,"metadata":{"session_id":"seed-tts-0","epoch":0}`
					})
					ack := tc.expect("playback.ack")
					if ack["response_id"] != rid || ack["item_id"] != "item_"+rid {
						t.Errorf("playback.ack %v for %s", ack, rid)
					}
					acks <- ack
					tc.text(`{"type":"playback.acknowledged","event":{"type":"playback.acknowledged"}}`)
				}
				tc.expect("session.close")
				tc.text(`{"type":"session.closed","event":{"type":"session.closed","session_id":"seed-tts-0"}}`)
				_ = tc.c.Close(websocket.StatusNormalClosure, "")
			})
			c := tinyClient(t, url, testKey)
			recs := runSession(t, c, Session{Kind: results.KindRealtime, Texts: []string{"The quick brown fox.", "Jumps over."}, Extra: map[string]any{"task_type": "Base"}})
			for i, r := range recs {
				if !r.OK() {
					t.Fatalf("turn %d: %s: %s", i, r.ErrorClass, r.Error)
				}
				b := r.WS.Bench
				if b == nil || r.WS.Events != spelling {
					t.Fatalf("turn %d: %d audio bytes, bench %+v, events %q, want %q", i, r.AudioBytes, b, r.WS.Events, spelling)
				}
				// Ours: 2 x 4800 PCM bytes = 0.2 s. The benchmark's: every byte of
				// the three files, 44 + 2 x 4844 = 9732 bytes = 0.20275 s.
				if r.AudioBytes != 9600 || r.AudioDurationS != 0.2 || b.AudioDurationS != 0.20275 {
					t.Errorf("turn %d: %d bytes, %v s; bench %v s", i, r.AudioBytes, r.AudioDurationS, b.AudioDurationS)
				}
				if !(b.TTFPS > 0 && b.TTFPS <= r.TTFPS) || b.GenerationS != r.LastAudioS {
					t.Errorf("turn %d: bench TTFP %v vs ours %v; generation %v vs last audio %v", i, b.TTFPS, r.TTFPS, b.GenerationS, r.LastAudioS)
				}
				if want := BenchRTF(r.LastAudioS, 0.20275); *b.RTF != *want {
					t.Errorf("turn %d: bench RTF %v, want %v", i, *b.RTF, *want)
				}
				if b.TTFTS == nil || *b.TTFTS != r.TTFTS || r.TextChars != len([]rune([]string{"The quick brown fox.", "Jumps over."}[i])) {
					t.Errorf("turn %d: ttft %v / %v, %d chars", i, b.TTFTS, r.TTFTS, r.TextChars)
				}
			}
			// played_ms = every decoded byte at 24 kHz: 9732 / 48 = 202 ms.
			if a := <-acks; a["played_ms"] != 202.0 || a["committed_ms"] != 202.0 {
				t.Errorf("playback.ack %v", a)
			}
			if recs[1].WS.CloseCode != 1000 {
				t.Errorf("close code %d", recs[1].WS.CloseCode)
			}
		})
	}
}

// TestRealtimeNativeDeltas: raw PCM deltas with sample_rate_hz and the
// cumulative metadata.audio_duration_ms of native sessions.
func TestRealtimeNativeDeltas(t *testing.T) {
	url := tinyServer(t, func(tc *tinyConn) {
		tc.expect("session.update")
		tc.text(`{"type":"session.created","session":{"id":"s"}}`)
		realtimeTurnScript(tc, 0, results.EventsLegacy, []string{b64(make([]byte, 3200)), b64(make([]byte, 3200))}, func(i int) string {
			return fmt.Sprintf(`,"sample_rate_hz":16000,"metadata":{"audio_duration_ms":%d}`, 100*(i+1)+5)
		})
		tc.expect("playback.ack")
		tc.expect("session.close")
		tc.text(`{"type":"session.closed"}`)
		_ = tc.c.Close(websocket.StatusNormalClosure, "")
	})
	c := tinyClient(t, url, testKey)
	r := runSession(t, c, Session{Kind: results.KindRealtime, Texts: []string{"hi"}})[0]
	if !r.OK() || r.SampleRate != 16000 || r.AudioDurationS != 0.2 || r.WS.Bench.AudioDurationS != 0.205 {
		t.Fatalf("%s %s: %d Hz, %v s, bench %v s", r.ErrorClass, r.Error, r.SampleRate, r.AudioDurationS, r.WS.Bench.AudioDurationS)
	}
}

// TestRealtimeServerErrors: any error event fails the session, as it fails
// the benchmark's; both error shapes are read.
func TestRealtimeServerErrors(t *testing.T) {
	for _, tc := range []struct{ name, event, want string }{
		{"realtime shape", `{"type":"error","error":{"type":"rate_limit_error","code":"resource_exhausted","message":"too many sessions"}}`, "too many sessions (code resource_exhausted)"},
		{"flat shape", `{"type":"error","error":"Model not validated.","code":"model_not_validated"}`, "Model not validated. (code model_not_validated)"},
		{"forwarded", `{"type":"duplex.response.message","event":{"error":{"message":"chat failed"}}}`, "duplex.response.message: server error: chat failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tinyServer(t, func(c *tinyConn) {
				c.expect("session.update")
				c.text(`{"type":"session.created","session":{"id":"s"}}`)
				c.expect("conversation.item.create")
				c.expect("response.create")
				c.text(tc.event)
				c.read() // session.close
			})
			recs := runSession(t, tinyClient(t, url, testKey), Session{Kind: results.KindRealtime, Texts: texts[:2]})
			wantFail(t, recs[0], results.ErrStreamError, tc.want)
			wantFail(t, recs[1], results.ErrStreamError, "not sent")
		})
	}
}

// TestInterrupted: cancelling the run mid-utterance marks that utterance
// cancelled and hands out no "not sent" records for the rest.
func TestInterrupted(t *testing.T) {
	waiting := make(chan struct{})
	url := tinyServer(t, func(tc *tinyConn) {
		tc.expect("session.config")
		tc.utterance()
		close(waiting) // and never answer
		tc.read()
	})
	c := tinyClient(t, url, testKey)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-waiting
		cancel()
	}()
	var got []*results.Record
	c.Run(ctx, Session{Kind: results.KindSpeechWS, Texts: texts}, Turn{
		Begin: func(i int) *results.Record { return &results.Record{} },
		End:   func(i int, r *results.Record) { got = append(got, r) },
	})
	if len(got) != 1 || got[0].ErrorClass != results.ErrCancelled {
		t.Fatalf("%d records, first %+v; want one, cancelled", len(got), got[0])
	}
}
