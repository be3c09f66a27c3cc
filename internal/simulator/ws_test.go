package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// wsTest is a raw client connection for checking the simulator's
// WebSocket messages one by one.
type wsTest struct {
	t   *testing.T
	ctx context.Context
	c   *websocket.Conn
}

func dialWS(t *testing.T, run *Running, path string) *wsTest {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(run.URL, "http")+path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &wsTest{t: t, ctx: ctx, c: c}
}

func (w *wsTest) send(v any) {
	w.t.Helper()
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := w.c.Write(w.ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// next reads one message: a JSON object (with "_binary" holding the length
// of a binary frame instead).
func (w *wsTest) next() map[string]any {
	w.t.Helper()
	typ, data, err := w.c.Read(w.ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	if typ == websocket.MessageBinary {
		return map[string]any{"type": "_binary", "len": float64(len(data)), "riff": strings.HasPrefix(string(data), "RIFF")}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		w.t.Fatalf("message %q: %v", data, err)
	}
	return m
}

// expect reads the next message and checks its type.
func (w *wsTest) expect(typ string) map[string]any {
	w.t.Helper()
	m := w.next()
	if m["type"] != typ {
		w.t.Fatalf("got %v, want a %s message", m, typ)
	}
	return m
}

// closed waits for the server's close and returns its code.
func (w *wsTest) closed() websocket.StatusCode {
	w.t.Helper()
	for {
		_, data, err := w.c.Read(w.ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			w.t.Fatalf("connection ended without a close frame: %v", err)
		}
		w.t.Logf("message before close: %.200s", data)
	}
}

// wsSim starts a simulator for the WebSocket tests; the timeouts stay at
// their 10 s and 30 s unless mod shortens them (only the timeout tests do,
// so that a slow test machine never races a short timeout elsewhere).
func wsSim(t *testing.T, mod func(*Config)) *Running {
	cfg := testConfig()
	if mod != nil {
		mod(&cfg)
	}
	return startSim(t, cfg)
}

// TestSpeechStreamTranscript replays transcript A of the reference (9.9):
// two utterances with an empty flush between them, utterance_index counting
// the empty flush, the nominal sample_rate 24000 although the model runs at
// 16 kHz, total_bytes equal to the PCM sent, and close 1000 after
// session.close.
func TestSpeechStreamTranscript(t *testing.T) {
	run := wsSim(t, func(c *Config) { c.SampleRate = 16000 })
	w := dialWS(t, run, "/v1/audio/speech/stream")
	w.send(`{"type":"session.config","model":"` + DefaultModel + `","voice":"vivian","task_type":"CustomVoice","language":"English","response_format":"pcm","stream_audio":true,"seed":7}`)
	w.send(`{"type":"input.text","text":"Hello there. "}`)
	w.send(`{"type":"input.text","text":"How are you today?"}`)
	w.send(`{"type":"input.done"}`)
	start := w.expect("audio.start")
	if start["utterance_index"] != 0.0 || start["sentence_index"] != 0.0 || start["sentence_text"] != "Hello there. How are you today?" ||
		start["format"] != "pcm" || start["sample_rate"] != 24000.0 {
		t.Fatalf("audio.start %v", start)
	}
	var got float64
	var m map[string]any
	for m = w.next(); m["type"] == "_binary"; m = w.next() {
		got += m["len"].(float64)
	}
	// 31 characters at 50 ms, 16 kHz, s16: 1.55 s = 49,600 bytes.
	if m["type"] != "audio.done" || m["total_bytes"] != got || m["error"] != false || got != 49600 {
		t.Fatalf("audio.done %v after %v bytes, want 49600", m, got)
	}
	if d := w.expect("session.done"); d["utterance_index"] != 0.0 || d["total_sentences"] != 1.0 {
		t.Fatalf("session.done %v", d)
	}
	w.send(`{"type":"input.done"}`)
	if d := w.expect("session.done"); d["utterance_index"] != 1.0 || d["total_sentences"] != 0.0 {
		t.Fatalf("empty flush: %v", d)
	}
	w.send(`{"type":"input.text","text":"Goodbye."}`)
	w.send(`{"type":"input.done"}`)
	if s := w.expect("audio.start"); s["utterance_index"] != 2.0 {
		t.Fatalf("audio.start %v", s)
	}
	for m = w.next(); m["type"] == "_binary"; m = w.next() {
	}
	if m["type"] != "audio.done" {
		t.Fatalf("got %v", m)
	}
	w.expect("session.done")
	w.send(`{"type":"session.close"}`)
	if code := w.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("close code %d, want 1000", code)
	}
}

func TestSpeechStreamNonStreamingFile(t *testing.T) {
	run := wsSim(t, nil)
	w := dialWS(t, run, "/v1/audio/speech/stream")
	w.send(`{"type":"session.config"}`) // every field defaults: wav, one file
	w.send(`{"type":"input.text","text":"Hi."}`)
	w.send(`{"type":"input.done"}`)
	if s := w.expect("audio.start"); s["format"] != "wav" || s["sample_rate"] != nil {
		t.Fatalf("audio.start %v: wav mode states no sample_rate", s)
	}
	f := w.expect("_binary")
	if f["riff"] != true {
		t.Fatalf("frame %v does not start with RIFF", f)
	}
	// 3 characters at 50 ms, 24 kHz: 7200 bytes of PCM plus the 44-byte header.
	if d := w.expect("audio.done"); d["total_bytes"] != f["len"] || f["len"] != float64(7200+wav.HeaderSize) {
		t.Fatalf("audio.done %v for a %v byte file", d, f["len"])
	}
	w.expect("session.done")
}

func TestSpeechStreamErrors(t *testing.T) {
	run := wsSim(t, nil)
	for _, tc := range []struct {
		name  string
		msgs  []string
		want  string // the error message's start
		fatal bool
	}{
		{"not config first", []string{`{"type":"input.text","text":"x"}`}, "Expected session.config, got: input.text", true},
		{"invalid json", []string{`{"type":`}, "Invalid JSON message", true},
		{"not an object", []string{`[1,2]`}, "WebSocket messages must be JSON objects", true},
		{"bad config", []string{`{"type":"session.config","stream_audio":true,"response_format":"wav"}`}, "Invalid session config: ", true},
		{"speed with streaming", []string{`{"type":"session.config","stream_audio":true,"response_format":"pcm","speed":2}`}, "Invalid session config: Value error, WebSocket stream_audio=true currently requires speed=1.0", true},
		{"ref_audio not a data URL", []string{`{"type":"session.config","task_type":"Base","ref_audio":"https://example.com/v.wav"}`}, "Invalid session config: ref_audio: the simulator accepts only data: URLs", true},
		{"ref_audio not audio", []string{`{"type":"session.config","task_type":"Base","ref_audio":"data:audio/wav;base64,aGVsbG8="}`}, "Invalid session config: ref_audio: cannot decode audio", true},
		{"voice object", []string{`{"type":"session.config","voice":{"id":"v"}}`}, "Invalid session config: ", true},
		{"unknown model", []string{`{"type":"session.config","model":"nope"}`}, "error=ErrorInfo(message='The model `nope` does not exist.'", true},
		{"unknown type after config", []string{`{"type":"session.config"}`, `{"type":"hello"}`}, "Unknown message type: hello", false},
		{"text not a string", []string{`{"type":"session.config"}`, `{"type":"input.text","text":5}`}, "input.text requires a string value", false},
		{"config while buffered", []string{`{"type":"session.config"}`, `{"type":"input.text","text":"a"}`, `{"type":"session.config"}`},
			"session.config cannot be applied while input is buffered; send input.done first", false},
		{"input too large after config", []string{`{"type":"session.config"}`, `{"type":"input.text","text":"` + strings.Repeat("é", 128<<10) + `"}`}, "input.text message too large", false},
		{"input too large before config", []string{`{"type":"input.text","text":"` + strings.Repeat("a", 128<<10) + `"}`}, "input.text message too large", true},
		{"message too large", []string{`{"type":"session.config","instructions":"` + strings.Repeat("a", 4<<20) + `"}`}, "WebSocket message too large", true},
		{"timestamps without streaming", []string{`{"type":"session.config","word_timestamps":true}`, `{"type":"input.text","text":"a"}`, `{"type":"input.done"}`},
			"word_timestamps=true requires stream_audio=true and response_format='pcm'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dialWS(t, run, "/v1/audio/speech/stream")
			for _, m := range tc.msgs {
				w.send(m)
			}
			e := w.expect("error")
			if msg, _ := e["message"].(string); !strings.HasPrefix(msg, tc.want) || len(e) != 2 {
				t.Fatalf("error %.300v, want %q (and no other field)", e, tc.want)
			}
			if tc.fatal {
				if code := w.closed(); code != websocket.StatusNormalClosure {
					t.Errorf("close %d", code)
				}
				return
			}
			if strings.HasPrefix(tc.name, "timestamps") {
				if d := w.expect("session.done"); d["total_sentences"] != 1.0 {
					t.Errorf("session.done %v", d)
				}
			}
			// Not fatal: the session goes on.
			w.send(`{"type":"input.done"}`)
			for m := w.next(); m["type"] != "session.done"; m = w.next() {
			}
		})
	}
}

func shortTimeouts(c *Config) {
	c.WS.SpeechConfigTimeout = 100 * time.Millisecond
	c.WS.SpeechIdleTimeout = 200 * time.Millisecond
	c.WS.RealtimeFirstTimeout = 100 * time.Millisecond
}

func TestSpeechStreamTimeoutsAndBinary(t *testing.T) {
	run := wsSim(t, shortTimeouts)
	t.Run("config timeout", func(t *testing.T) {
		w := dialWS(t, run, "/v1/audio/speech/stream")
		if e := w.expect("error"); e["message"] != "Timeout waiting for session.config" {
			t.Fatalf("%v", e)
		}
		w.closed()
	})
	t.Run("idle timeout", func(t *testing.T) {
		w := dialWS(t, run, "/v1/audio/speech/stream")
		w.send(`{"type":"session.config"}`)
		if e := w.expect("error"); e["message"] != "Idle timeout: no message received" {
			t.Fatalf("%v", e)
		}
		w.closed()
	})
	t.Run("binary frame", func(t *testing.T) {
		w := dialWS(t, wsSim(t, nil), "/v1/audio/speech/stream")
		if err := w.c.Write(w.ctx, websocket.MessageBinary, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if e := w.expect("error"); e["message"] != "Internal error: 'text'" {
			t.Fatalf("%v", e)
		}
		w.closed()
	})
}

func TestSpeechStreamGenerationFailure(t *testing.T) {
	run := wsSim(t, func(c *Config) { c.Faults.HTTP500 = 1 })
	w := dialWS(t, run, "/v1/audio/speech/stream")
	w.send(`{"type":"session.config","response_format":"pcm","stream_audio":true}`)
	w.send(`{"type":"input.text","text":"Hi."}`)
	w.send(`{"type":"input.done"}`)
	w.expect("audio.start")
	if e := w.expect("error"); !strings.HasPrefix(e["message"].(string), "Generation failed for utterance 0, sentence 0: ") {
		t.Fatalf("%v", e)
	}
	if d := w.expect("audio.done"); d["error"] != true || d["total_bytes"] != 0.0 {
		t.Fatalf("%v", d)
	}
	if d := w.expect("session.done"); d["total_sentences"] != 1.0 {
		t.Fatalf("%v", d)
	}
}

// TestRealtimeTranscript follows transcript C (9.9): the envelope
// (event_id everywhere, server_event_seq from 1 after session.created),
// the event order of one text-in/audio-out turn, WAV files in pcm16 deltas
// without sample_rate_hz, the empty transcript delta after every audio
// delta, response.done (the assistant item in response.output, the
// internal done event as response.metadata) then rate_limits.updated,
// playback.ack and session.close. The audio events come in each spelling:
// the GA names of current servers (the default) and release 0.28.0's.
func TestRealtimeTranscript(t *testing.T) {
	for _, tc := range []struct{ events, audio string }{
		{"", "response.output_audio"},
		{RealtimeEventsGA, "response.output_audio"},
		{RealtimeEventsLegacy, "response.audio"},
	} {
		t.Run("events="+tc.events, func(t *testing.T) {
			run := wsSim(t, func(c *Config) { c.WS.RealtimeEvents = tc.events })
			realtimeTranscript(t, dialWS(t, run, "/v1/realtime?duplex=1"), tc.audio)
		})
	}
}

// realtimeTranscript runs transcript C on w, whose audio events start with
// audio ("response.output_audio" or "response.audio").
func realtimeTranscript(t *testing.T, w *wsTest, audio string) {
	t.Helper()
	w.send(`{"type":"session.update","session":{"model":"` + DefaultModel + `","modalities":["audio","text"],"output_audio_format":"pcm16","turn_detection":null,"session_id":"seed-tts-0","extra_body":{"minicpmo45_native_duplex":false}}}`)
	created := w.expect("session.created")
	if created["server_event_seq"] != nil || !strings.HasPrefix(created["event_id"].(string), "event_") {
		t.Fatalf("session.created %v", created)
	}
	if s := created["session"].(map[string]any); s["id"] != "seed-tts-0" {
		t.Fatalf("session %v", s)
	}
	seq := 0.0
	next := func(typ string) map[string]any {
		t.Helper()
		m := w.expect(typ)
		seq++
		if m["server_event_seq"] != seq {
			t.Fatalf("%s: server_event_seq %v, want %v", typ, m["server_event_seq"], seq)
		}
		return m
	}
	next("session.updated")
	w.send(`{"type":"conversation.item.create","item":{"id":"item_u0","type":"message","role":"user","content":[{"type":"input_text","text":"The quick brown fox."}]}}`)
	w.send(`{"type":"response.create"}`)
	for _, typ := range []string{"conversation.item.added", "conversation.item.created", "conversation.item.done"} {
		if it := next(typ)["item"].(map[string]any); it["id"] != "item_u0" {
			t.Fatalf("%s item %v", typ, it)
		}
	}
	rid := next("response.created")["response_id"].(string)
	if !strings.HasPrefix(rid, "resp-seed-tts-0-0-") {
		t.Fatalf("response id %q", rid)
	}
	for _, typ := range []string{"conversation.item.added", "conversation.item.created", "response.output_item.added", "response.content_part.added"} {
		next(typ)
	}
	var text strings.Builder
	deltas := 0
	var m map[string]any
	for {
		m = w.next()
		seq++
		if m["type"] == audio+".done" {
			break
		}
		switch m["type"] {
		case "response.content_part.added":
		case "response.output_text.delta":
			text.WriteString(m["delta"].(string))
		case audio + ".delta":
			deltas++
			if !strings.HasPrefix(m["delta"].(string), "UklGR") || m["format"] != "pcm16" || m["sample_rate_hz"] != nil || m["response_id"] != rid {
				t.Fatalf("audio delta %.200v", m)
			}
			if tr := w.expect(audio + "_transcript.delta"); tr["delta"] != "" {
				t.Fatalf("transcript delta %v", tr)
			}
			seq++
		default:
			t.Fatalf("unexpected %.300v", m)
		}
	}
	if text.String() != "The quick brown fox." || deltas == 0 {
		t.Fatalf("text %q, %d audio deltas", text.String(), deltas)
	}
	for _, typ := range []string{"response.content_part.done", "response.output_text.done", "response.content_part.done", "response.output_item.done", "conversation.item.done"} {
		w.expect(typ)
	}
	checkResponseDone(t, w.expect("response.done"), rid, "completed", "The quick brown fox.")
	w.expect("rate_limits.updated")
	// A second response before the first was acknowledged is refused.
	w.send(`{"type":"response.create"}`)
	if e := w.expect("error")["error"].(map[string]any); e["code"] != "response_already_active" || e["type"] != "invalid_request_error" {
		t.Fatalf("%v", e)
	}
	w.send(`{"type":"playback.ack","response_id":"` + rid + `","item_id":"item_` + rid + `","played_ms":2140,"committed_ms":2140}`)
	w.expect("playback.acknowledged")
	w.send(`{"type":"session.heartbeat"}`)
	w.expect("session.heartbeat_ack")
	w.send(`{"type":"session.close"}`)
	w.expect("session.closed")
	if code := w.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("close %d", code)
	}
}

// checkResponseDone checks response.done's shape: the response object with
// its status, the assistant item (with the reply's text) in output, and
// the internal done event as metadata; nothing of it at the top level.
func checkResponseDone(t *testing.T, d map[string]any, rid, status, text string) {
	t.Helper()
	resp, _ := d["response"].(map[string]any)
	if d["response_id"] != rid || resp == nil || resp["id"] != rid || resp["status"] != status || d["metadata"] != nil {
		t.Fatalf("response.done %v", d)
	}
	output, _ := resp["output"].([]any)
	if len(output) != 1 {
		t.Fatalf("response.done output %v, want the assistant item", resp["output"])
	}
	item := output[0].(map[string]any)
	content, _ := item["content"].([]any)
	if item["id"] != "item_"+rid || item["role"] != "assistant" || len(content) != 2 || content[1].(map[string]any)["text"] != text {
		t.Fatalf("response.done item %v", item)
	}
	meta, _ := resp["metadata"].(map[string]any)
	if meta == nil || meta["type"] != "response.done" || meta["response_id"] != rid || meta["session_id"] == nil || meta["epoch"] == nil || meta["playback"] == nil {
		t.Fatalf("response.done metadata %v", resp["metadata"])
	}
}

func TestRealtimeErrors(t *testing.T) {
	run := wsSim(t, nil)
	code := func(m map[string]any) string { return m["error"].(map[string]any)["code"].(string) }
	t.Run("first event timeout", func(t *testing.T) {
		w := dialWS(t, wsSim(t, shortTimeouts), "/v1/realtime?duplex=TRUE")
		if e := w.expect("error"); code(e) != "config_timeout" {
			t.Fatalf("%v", e)
		}
		w.closed()
	})
	t.Run("model query opens a session", func(t *testing.T) {
		w := dialWS(t, run, "/v1/realtime?duplex=on&model=x")
		w.expect("session.created")
		w.send(`{"type":"session.update","session":{"idle_timeout_s":0.05}}`)
		w.expect("session.updated")
		if c := w.expect("session.closed"); c["event"].(map[string]any)["reason"] != "timeout" {
			t.Fatalf("%v", c)
		}
		w.closed()
	})
	for _, tc := range []struct{ name, first, code string }{
		{"turn detection", `{"type":"session.update","session":{"turn_detection":{"type":"server_vad"}}}`, "unsupported_turn_detection"},
		{"audio format", `{"type":"session.update","session":{"output_audio_format":"mp3"}}`, "unsupported_audio_format"},
		{"model", `{"type":"session.update","session":{"model":"nope"}}`, "model_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dialWS(t, run, "/v1/realtime?duplex=1")
			w.send(tc.first)
			if e := w.expect("error"); code(e) != tc.code {
				t.Fatalf("%v", e)
			}
			w.closed()
		})
	}
	t.Run("after open", func(t *testing.T) {
		w := dialWS(t, run, "/v1/realtime?duplex=1")
		w.send(`{"type":"session.update","session":{}}`)
		w.expect("session.created")
		w.expect("session.updated")
		w.send(`{"type":`)
		if e := w.expect("error"); code(e) != "invalid_json" {
			t.Fatalf("%v", e)
		}
		w.send(`{"type":"what"}`)
		if e := w.expect("error"); code(e) != "unknown_event" {
			t.Fatalf("%v", e)
		}
		w.send(`{"type":"session.event_ack","server_event_seq":1,"pad":"` + strings.Repeat("a", realtimeMaxEventBytes) + `"}`)
		if e := w.expect("error"); code(e) != "event_too_large" {
			t.Fatalf("%v", e)
		}
		w.send(`{"type":"session.close"}`)
		w.expect("session.closed")
	})
}

// TestSpeechStreamSequential: utterances sent back to back are processed
// one at a time; their frames never interleave.
func TestSpeechStreamSequential(t *testing.T) {
	run := wsSim(t, nil)
	w := dialWS(t, run, "/v1/audio/speech/stream")
	w.send(`{"type":"session.config","response_format":"pcm","stream_audio":true}`)
	for _, text := range []string{"One two three.", "Four five six."} {
		w.send(map[string]string{"type": "input.text", "text": text})
		w.send(`{"type":"input.done"}`)
	}
	for idx := 0.0; idx < 2; idx++ {
		if s := w.expect("audio.start"); s["utterance_index"] != idx {
			t.Fatalf("audio.start %v, want utterance %v", s, idx)
		}
		m := w.next()
		for m["type"] == "_binary" {
			m = w.next()
		}
		if m["type"] != "audio.done" || m["utterance_index"] != idx {
			t.Fatalf("got %v inside utterance %v", m, idx)
		}
		if d := w.expect("session.done"); d["utterance_index"] != idx {
			t.Fatalf("session.done %v", d)
		}
	}
}

// TestRealtimeCancel: response.cancel ends the running response with
// response.done status cancelled, and the session goes on.
func TestRealtimeCancel(t *testing.T) {
	run := wsSim(t, func(c *Config) {
		// A long response: 10 s of audio at RTF 1.
		c.Timing.RTF, c.Timing.MinAudio, c.Timing.MaxAudio = 1, 10*time.Second, 10*time.Second
	})
	w := dialWS(t, run, "/v1/realtime?duplex=1")
	w.send(`{"type":"session.update","session":{}}`)
	w.expect("session.created")
	w.expect("session.updated")
	w.send(`{"type":"conversation.item.create","item":{"id":"u","type":"message","role":"user","content":[{"type":"input_text","text":"Hi."}]}}`)
	w.send(`{"type":"response.create"}`)
	for m := w.next(); m["type"] != "response.created"; m = w.next() {
	}
	w.send(`{"type":"response.cancel"}`)
	for {
		m := w.next()
		if m["type"] == "response.done" {
			if st := m["response"].(map[string]any)["status"]; st != "cancelled" {
				t.Fatalf("response.done status %v, want cancelled", st)
			}
			break
		}
	}
	w.expect("rate_limits.updated")
	w.send(`{"type":"session.close"}`)
	w.expect("session.closed")
}
