package simulator

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestDuplexNative replays transcript D of the reference on WS /v1/duplex:
// the session's native schema, two text turns with audio and no
// playback.ack between them (the default policy commits a response when it
// ends), then session.close.
func TestDuplexNative(t *testing.T) {
	run := wsSim(t, nil)
	nativeTranscript(t, dialWS(t, run, "/v1/duplex"))
}

// nativeTranscript runs transcript D on w.
func nativeTranscript(t *testing.T, w *wsTest) {
	t.Helper()
	w.send(`{"type":"session.create","session_id":"tts-1","session":{"model":"` + DefaultModel + `","modalities":["audio","text"],"response_format":"wav","extra_body":{"minicpmo45_native_duplex":false}}}`)
	created := w.expect("session.created")
	if s, _ := created["session"].(map[string]any); created["server_event_seq"] != nil || created["event_id"] != nil || s["id"] != "tts-1" || s["response_format"] != "wav" {
		t.Fatalf("session.created %v", created)
	}
	seq := 0.0
	next := func(typ string) map[string]any {
		t.Helper()
		m := w.expect(typ)
		seq++
		if m["server_event_seq"] != seq || m["event_id"] != nil {
			t.Fatalf("%s: server_event_seq %v, event_id %v; want %v and none", typ, m["server_event_seq"], m["event_id"], seq)
		}
		return m
	}
	for turn, text := range []string{"Hello there.", "Goodbye."} {
		w.send(map[string]string{"type": "input.text.append", "text": text})
		w.send(`{"type":"input.commit"}`)
		c := next("input.committed")
		if msg, _ := c["message"].(map[string]any); c["session_id"] != "tts-1" || c["turn_id"] != float64(turn) || msg["role"] != "user" || msg["content"] != text {
			t.Fatalf("input.committed %v", c)
		}
		r := next("response.created")
		rid, _ := r["response_id"].(string)
		if !strings.HasPrefix(rid, fmt.Sprintf("resp-tts-1-%d-", turn)) || r["session_id"] != "tts-1" || r["request_id"] == nil || r["modalities"] == nil {
			t.Fatalf("response.created %v", r)
		}
		var got strings.Builder
		var audio [][]byte
		for {
			m := w.next()
			seq++
			if m["server_event_seq"] != seq || m["response_id"] != rid || m["epoch"] == nil {
				t.Fatalf("%.300v: want server_event_seq %v and response %s", m, seq, rid)
			}
			if m["type"] == "response.done" {
				if m["committed"] != true || m["playback"] == nil || m["session_id"] != "tts-1" {
					t.Fatalf("response.done %v", m)
				}
				break
			}
			switch m["type"] {
			case "response.text.delta":
				got.WriteString(m["delta"].(string))
			case "response.output_audio.delta":
				b, err := base64.StdEncoding.DecodeString(m["audio"].(string))
				if err != nil || m["format"] != "wav" || m["delta"] != nil {
					t.Fatalf("audio delta %.200v: %v", m, err)
				}
				audio = append(audio, b)
			default:
				t.Fatalf("unexpected %.300v", m)
			}
		}
		if got.String() != text || len(pcmOf(t, audio, true)) == 0 {
			t.Fatalf("turn %d: text %q, %d audio deltas without samples", turn, got.String(), len(audio))
		}
	}
	w.send(`{"type":"session.heartbeat"}`)
	if a := next("session.heartbeat_ack"); a["session_id"] != "tts-1" {
		t.Fatalf("%v", a)
	}
	w.send(`{"type":"session.close"}`)
	if c := next("session.closed"); c["session_id"] != "tts-1" || c["event"] != nil {
		t.Fatalf("session.closed %v", c)
	}
	if code := w.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("close %d", code)
	}
}

// TestDuplexNativeFirstEvent: on /v1/duplex the first event must be
// session.create or one of its aliases; anything else, a Realtime
// session.update included, ends the session with a flat error.
func TestDuplexNativeFirstEvent(t *testing.T) {
	run := wsSim(t, nil)
	for _, alias := range []string{"open_session", "session.config"} {
		w := dialWS(t, run, "/v1/duplex")
		w.send(`{"type":"` + alias + `","session":{}}`)
		if s := w.expect("session.created")["session"].(map[string]any); s["response_format"] != "wav" || s["playback_commit_policy"] != "commit_all_on_done" {
			t.Errorf("%s: session %v", alias, s)
		}
	}
	for _, tc := range []struct{ first, code, msg string }{
		{`{"type":"session.update","session":{"model":"` + DefaultModel + `"}}`, "bad_event", "Expected session.create, got: session.update"},
		{`{"type":"conversation.item.create","item":{}}`, "bad_event", "Expected session.create, got: conversation.item.create"},
		{`{"type":`, "invalid_json", "Invalid JSON"},
		{`{"type":"session.resume","session_id":"x"}`, "unsupported_session_resume", ""},
		{`{"type":"session.create","session":{"model":"nope"}}`, "model_not_found", ""},
	} {
		w := dialWS(t, run, "/v1/duplex")
		w.send(tc.first)
		e := w.expect("error")
		if e["code"] != tc.code || (tc.msg != "" && e["error"] != tc.msg) || e["event_id"] != nil {
			t.Errorf("first event %s: %v, want code %s %q", tc.first, e, tc.code, tc.msg)
		}
		if code := w.closed(); code != websocket.StatusNormalClosure {
			t.Errorf("first event %s: close %d", tc.first, code)
		}
	}
	w := dialWS(t, wsSim(t, shortTimeouts), "/v1/duplex")
	if e := w.expect("error"); e["code"] != "config_timeout" || e["error"] != "Timeout waiting for session.create" {
		t.Errorf("no first event: %v", e)
	}
	w.closed()
}

// TestRealtimeNativeInput: the Realtime projection takes the native text
// turn too (input.text.append, input.commit), as upstream's translator
// passes it through: the user text becomes a conversation item and the
// response follows in Realtime events.
func TestRealtimeNativeInput(t *testing.T) {
	w := dialWS(t, wsSim(t, nil), "/v1/realtime?duplex=1")
	w.send(`{"type":"session.update","session":{}}`)
	w.expect("session.created")
	w.expect("session.updated")
	w.send(`{"type":"input.text.append","text":"Hi there."}`)
	w.send(`{"type":"input.commit"}`)
	for _, typ := range []string{"conversation.item.added", "conversation.item.created", "conversation.item.done"} {
		it := w.expect(typ)["item"].(map[string]any)
		if c := it["content"].([]any)[0].(map[string]any); it["role"] != "user" || c["text"] != "Hi there." {
			t.Fatalf("%s item %v", typ, it)
		}
	}
	rid := w.expect("response.created")["response_id"].(string)
	for m := w.next(); m["type"] != "response.done"; m = w.next() {
	}
	w.expect("rate_limits.updated")
	w.send(`{"type":"playback.ack","response_id":"` + rid + `"}`)
	w.expect("playback.acknowledged")
}

// TestDuplexOnlyRoutes: a duplex-only server keeps the duplex session (on
// both paths), /v1/models, /health and /metrics; chat, speech and the
// plain WebSocket routes answer that they are not available, naming the
// route, and chat comes back with DuplexChat.
func TestDuplexOnlyRoutes(t *testing.T) {
	run := wsSim(t, func(c *Config) { c.DuplexOnly = true })
	for _, path := range []string{"/v1/chat/completions", "/v1/audio/speech"} {
		status, typ, msg, _ := apiErr(t, post(t, t.Context(), run.URL+path, chatReq("Hello.", nil)))
		if want := "POST " + path + " is not available"; status != http.StatusNotFound || typ != "NotFoundError" || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %s %q, want 404 NotFoundError with %q", path, status, typ, msg, want)
		}
	}
	for _, path := range []string{"/v1/models", "/health", "/metrics"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, run.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
	t.Run("speech stream", func(t *testing.T) {
		w := dialWS(t, run, "/v1/audio/speech/stream")
		if e := w.expect("error"); e["message"] != "Streaming speech is not available" {
			t.Fatalf("%v", e)
		}
		if code := w.closed(); code != websocket.StatusNormalClosure {
			t.Errorf("close %d", code)
		}
	})
	t.Run("plain realtime", func(t *testing.T) {
		w := dialWS(t, run, "/v1/realtime")
		if e := w.expect("error"); e["error"] != "Realtime API is not available" || e["code"] != "unsupported" {
			t.Fatalf("%v", e)
		}
		if code := w.closed(); code != websocket.StatusNormalClosure {
			t.Errorf("close %d", code)
		}
	})
	t.Run("/v1/realtime?duplex=1", func(t *testing.T) {
		realtimeTranscript(t, dialWS(t, run, "/v1/realtime?duplex=1"), "response.output_audio")
	})
	t.Run("/v1/duplex", func(t *testing.T) {
		nativeTranscript(t, dialWS(t, run, "/v1/duplex"))
	})
	t.Run("duplex chat", func(t *testing.T) {
		run := wsSim(t, func(c *Config) { c.DuplexOnly, c.DuplexChat = true, true })
		if cs := doChat(t, run, chatReq("Hello.", nil)); !cs.done {
			t.Errorf("chat on a duplex-chat server: %d chunks, no [DONE]", len(cs.chunks))
		}
		status, _, msg, _ := apiErr(t, post(t, t.Context(), run.URL+"/v1/audio/speech", map[string]any{"input": "Hello."}))
		if status != http.StatusNotFound || !strings.Contains(msg, "POST /v1/audio/speech is not available") || !strings.Contains(msg, "POST /v1/chat/completions") {
			t.Errorf("speech on a duplex-chat server: %d %q", status, msg)
		}
	})
}

// TestDuplexConfig: the spelling is one of the two, and DuplexChat needs
// DuplexOnly; errors name the serve flag.
func TestDuplexConfig(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.WS.RealtimeEvents = "beta" }, `--realtime-events: "beta" is neither "ga" nor "legacy"`},
		{func(c *Config) { c.DuplexChat = true }, "--duplex-chat: only with --duplex-only"},
	} {
		cfg := testConfig()
		tc.mod(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v, want %q", err, tc.want)
		}
	}
	s, err := New(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Config().WS.RealtimeEvents; e != RealtimeEventsGA {
		t.Errorf("default spelling %q, want %q", e, RealtimeEventsGA)
	}
}

// TestDuplexNativeInputCap: the text appended before a commit is capped;
// an append beyond the cap is refused and the session goes on.
func TestDuplexNativeInputCap(t *testing.T) {
	w := dialWS(t, wsSim(t, nil), "/v1/duplex")
	w.send(`{"type":"session.create","session":{}}`)
	w.expect("session.created")
	half := `{"type":"input.text.append","text":"` + strings.Repeat("a", realtimeMaxPendingInput/2+1) + `"}`
	w.send(half)
	w.send(half)
	if e := w.expect("error"); e["code"] != "input_backpressure" {
		t.Fatalf("%v", e)
	}
	w.send(`{"type":"session.close"}`)
	w.expect("session.closed")
}
