package client

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omnibench/omnibench/results"
)

// TestEventCap: a server that streams data without ever ending a line (or
// an event) is cut off at the cap and classed malformed with the size
// seen, instead of being held whole in memory.
func TestEventCap(t *testing.T) {
	const cap = 1 << 20
	const bound = 64 << 20 // the server gives up after this much; the client must stop long before
	for _, tc := range []struct {
		name, kind, prefix, loop, msg string
	}{
		{"chat line without end", results.KindChat, "data: ", strings.Repeat("QUJD", 1024), "line starting at byte 0 exceeds the limit of 1048576 bytes"},
		{"speech event without end", results.KindSpeechSSE, "", "data: " + strings.Repeat("QUJD", 255) + "\n", "event 1 starting at byte 0 exceeds the limit of 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				io.WriteString(w, tc.prefix)
				chunk := []byte(tc.loop)
				for written.Load() < bound {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return // the client hung up
					}
				}
			})
			c := newClient(t, srv.URL, Options{MaxEventBytes: cap})
			rec := do(t, c, Request{Kind: tc.kind, Prompt: "x", AudioFormat: "pcm"})
			if rec.ErrorClass != results.ErrMalformed {
				t.Fatalf("class %q (%s), want malformed", rec.ErrorClass, rec.Error)
			}
			if !strings.Contains(rec.Error, tc.msg) || !strings.Contains(rec.Error, "bytes") || !strings.Contains(rec.Error, "--max-event-bytes") {
				t.Errorf("error %q does not contain %q, the size seen and the flag", rec.Error, tc.msg)
			}
			if w := written.Load(); w >= bound {
				t.Errorf("the client read all %d bytes the server sent", w)
			}
		})
	}
}
