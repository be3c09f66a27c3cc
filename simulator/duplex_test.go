package simulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestDuplexAlias: WS /v1/duplex is the duplex session of
// /v1/realtime?duplex=1, transcript C included, without the query.
func TestDuplexAlias(t *testing.T) {
	run := wsSim(t, nil)
	realtimeTranscript(t, dialWS(t, run, "/v1/duplex"), "response.output_audio")
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
	for _, path := range []string{"/v1/realtime?duplex=1", "/v1/duplex"} {
		t.Run(path, func(t *testing.T) {
			realtimeTranscript(t, dialWS(t, run, path), "response.output_audio")
		})
	}
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
