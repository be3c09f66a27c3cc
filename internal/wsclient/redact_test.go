package wsclient

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
)

// echoHandshake accepts a WebSocket session, reads the client's first
// message and answers with an error event quoting the handshake's
// credentials (the bearer token, the cookie), padded by X-Pad so that the
// 200-byte cut of messages falls inside them; the close reason quotes the
// cookie too.
func echoHandshake(t *testing.T, realtime bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		if !realtime {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
		n, _ := strconv.Atoi(r.Header.Get("X-Pad"))
		quoted := strings.Repeat("p", n) + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " " + r.Header.Get("Cookie")
		ev := fmt.Sprintf(`{"type":"error","message":%q}`, quoted)
		if realtime {
			ev = fmt.Sprintf(`{"type":"error","error":{"message":%q}}`, quoted)
		}
		_ = ws.Write(ctx, websocket.MessageText, []byte(ev))
		_ = ws.Close(websocket.StatusPolicyViolation, "bad "+r.Header.Get("Cookie"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServerErrorsRedacted: a WebSocket server whose error event and close
// reason echo the handshake's headers near the cut leaves nothing of the
// API key or of a custom header's value in any record.
func TestServerErrorsRedacted(t *testing.T) {
	const key, cookie = "sk-WSKEY-QZ81-handshake", "sid=ckVAL-7QX2-cookie"
	for _, realtime := range []bool{false, true} {
		c := newClient(t, echoHandshake(t, realtime), Options{APIKey: key})
		kind := results.KindSpeechWS
		if realtime {
			kind = results.KindRealtime
		}
		for pad := 150; pad <= 200; pad++ {
			sess := Session{Kind: kind, Texts: texts[:1], Headers: map[string]string{"Cookie": cookie, "X-Pad": strconv.Itoa(pad)}}
			for _, rec := range runSession(t, c, sess) {
				if rec.ErrorClass == "" {
					t.Fatalf("%s: no failure", kind)
				}
				text := rec.Error
				if rec.WS != nil {
					text += " " + rec.WS.CloseReason
				}
				for _, s := range []string{key, cookie} {
					for k := len(s); k >= 4; k-- {
						if strings.Contains(text, s[:k]) {
							t.Fatalf("%s, pad %d: %q of a credential kept: %s", kind, pad, s[:k], text)
						}
					}
				}
			}
		}
	}
}
