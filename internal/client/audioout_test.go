package client

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// TestAudioOutAndEndpoint checks that AudioOut receives exactly the PCM the
// record counts (headers stripped, in order) and that Endpoint overrides the
// kind's path.
func TestAudioOutAndEndpoint(t *testing.T) {
	pcm1 := bytes.Repeat([]byte{1, 2}, chunk80ms/2)
	pcm2 := bytes.Repeat([]byte{3, 4}, chunk80ms/2)
	paths := make(chan string, 4)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ *server) {
		paths <- r.URL.Path
		sseStart(w)
		f := wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}
		event(w, "", audioEvent(wav.Encode(f, pcm1), ""))
		event(w, "", audioEvent(wav.Encode(f, pcm2), "stop"))
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{})
	var got bytes.Buffer
	rec := do(t, c, Request{Kind: results.KindChat, Endpoint: "/custom/chat", Prompt: "hi", AudioOut: &got})
	if !rec.OK() {
		t.Fatalf("request failed: %s: %s", rec.ErrorClass, rec.Error)
	}
	if p := <-paths; p != "/custom/chat" {
		t.Errorf("path = %q, want /custom/chat", p)
	}
	if rec.Endpoint != "/custom/chat" {
		t.Errorf("rec.Endpoint = %q", rec.Endpoint)
	}
	want := append(append([]byte{}, pcm1...), pcm2...)
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("AudioOut got %d bytes, want the %d PCM bytes of both chunks", got.Len(), len(want))
	}
	if int64(got.Len()) != rec.AudioBytes {
		t.Errorf("AudioOut %d bytes, record counts %d", got.Len(), rec.AudioBytes)
	}
}
