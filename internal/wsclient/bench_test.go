package wsclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
)

// The per-chunk messages of a realtime turn as the simulator sends them (a
// map marshalled: keys sorted, the payload before the type).
var (
	benchAudioDelta = []byte(`{"content_index":0,"delta":"` + audioB64Sample + `","format":"pcm16","item_id":"item_resp-1","metadata":{"epoch":0,"session_id":"rt-1"},"output_index":0,"response_id":"resp-1","type":"response.output_audio.delta"}`)
	benchTranscript = []byte(`{"content_index":0,"delta":"","item_id":"item_resp-1","output_index":0,"response_id":"resp-1","type":"response.output_audio_transcript.delta"}`)
)

// BenchmarkRealtimeDeltas is the session's work for one realtime audio
// chunk once its messages are read: the audio delta and its transcript
// delta through realtimeTurn.event (parsing, base64, the record, the
// onset detector).
func BenchmarkRealtimeDeltas(b *testing.B) {
	c := newClient(b, "http://127.0.0.1:1", Options{})
	rec := &results.Record{WS: &results.WSTurn{}}
	rt := &realtimeTurn{c: c, ss: &realtimeSession{benchRate: benchDefaultRate}, rec: rec, t0: time.Now()}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchAudioDelta) + len(benchTranscript)))
	for b.Loop() {
		for _, data := range [][]byte{benchAudioDelta, benchTranscript} {
			if _, f := rt.event(message{typ: websocket.MessageText, data: data, at: time.Now()}); f != nil {
				b.Fatal(f)
			}
		}
	}
}

// BenchmarkConnNext is the client's cost per message on the connection: a
// local server writes b.N messages as fast as it can (binary PCM frames of
// 80 ms, or the realtime deltas in turn) and the session takes each with
// conn.next (the read into a buffer on the session's goroutine).
// The server's writing is in the figure too, the same for any client.
func BenchmarkConnNext(b *testing.B) {
	for _, tc := range []struct {
		name string
		typ  websocket.MessageType
		msgs [][]byte
	}{
		{"speech-pcm", websocket.MessageBinary, [][]byte{make([]byte, 3840)}},
		{"realtime-deltas", websocket.MessageText, [][]byte{benchAudioDelta, benchTranscript}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
				if err != nil {
					return
				}
				defer ws.CloseNow()
				for i := 0; i < b.N; i++ {
					if ws.Write(r.Context(), tc.typ, tc.msgs[i%len(tc.msgs)]) != nil {
						return
					}
				}
				_ = ws.Close(websocket.StatusNormalClosure, "")
			}))
			defer srv.Close()
			c := newClient(b, srv.URL, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cn, _, f := c.dial(ctx, Session{}, "/")
			if f != nil {
				b.Fatal(f)
			}
			defer cn.closeClient(ctx)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, f := cn.next(ctx, time.Time{}, i); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
