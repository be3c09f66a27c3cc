package client

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestNoAudio checks that a response which asked for audio and ended
// normally without one sample is a no_audio failure saying what came
// instead, and that an audio event without samples is not one on its own.
func TestNoAudio(t *testing.T) {
	voice := []string{"text", "audio"}
	chatText := func(w http.ResponseWriter) {
		sseStart(w)
		event(w, "", textEvent("Hello there."))
		event(w, "", usageEvent)
		event(w, "", "[DONE]")
	}
	speechSSE := func(deltas ...[]byte) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			sseStart(w)
			for _, d := range deltas {
				event(w, speechDelta, `{"type":"speech.audio.delta","audio":"`+base64.StdEncoding.EncodeToString(d)+`","response_format":"wav"}`)
			}
			event(w, speechDone, `{"type":"speech.audio.done"}`)
		}
	}
	for _, tc := range []struct {
		name  string
		req   Request
		serve func(w http.ResponseWriter)
		want  string // Record.Error of the no_audio failure; "" = the request succeeds
		audio bool   // a success carries audio
	}{
		{name: "chat/text only", req: Request{Kind: results.KindChat, Modalities: voice}, serve: chatText, want: "text only"},
		{name: "chat/audio asked in extra body", serve: chatText, want: "text only",
			req: Request{Kind: results.KindChat, ExtraBody: map[string]any{"modalities": []any{"audio"}}}},
		{name: "chat/text asked", req: Request{Kind: results.KindChat, Modalities: []string{"text"}}, serve: chatText},
		{name: "chat/model default", req: Request{Kind: results.KindChat}, serve: chatText},
		{name: "chat/only empty audio events", req: Request{Kind: results.KindChat, Modalities: voice},
			want: "2 audio events without samples, and text",
			serve: func(w http.ResponseWriter) {
				sseStart(w)
				event(w, "", audioEvent(nil, ""))
				event(w, "", textEvent("Hello."))
				event(w, "", audioEvent(testWAV(24000, nil, false), "stop"))
				event(w, "", "[DONE]")
			}},
		{name: "chat/empty first audio event", req: Request{Kind: results.KindChat, Modalities: voice}, audio: true,
			serve: func(w http.ResponseWriter) {
				sseStart(w)
				event(w, "", audioEvent(nil, ""))
				event(w, "", audioEvent(testWAV(24000, testPCM(chunk80ms), false), "stop"))
				event(w, "", "[DONE]")
			}},
		{name: "chat/no event", req: Request{Kind: results.KindChat, Modalities: voice}, want: "no audio event",
			serve: func(w http.ResponseWriter) {
				sseStart(w)
				event(w, "", "[DONE]")
			}},
		{name: "speech/empty body", req: Request{Kind: results.KindSpeech, AudioFormat: "pcm"}, want: "an empty body",
			serve: func(w http.ResponseWriter) { w.Header().Set("Content-Type", "audio/pcm") }},
		{name: "speech/wav header only", req: Request{Kind: results.KindSpeech, AudioFormat: "wav"}, want: "a WAV header without samples",
			serve: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "audio/wav")
				w.Write(testWAV(24000, nil, true))
			}},
		{name: "speech-sse/header only", req: Request{Kind: results.KindSpeechSSE, AudioFormat: "wav"},
			serve: speechSSE(testWAV(24000, nil, true)), want: "1 audio event without samples"},
		{name: "speech-sse/no delta", req: Request{Kind: results.KindSpeechSSE, AudioFormat: "wav"},
			serve: speechSSE(), want: "no audio event"},
		{name: "speech-sse/audio", req: Request{Kind: results.KindSpeechSSE, AudioFormat: "wav"},
			serve: speechSSE(testWAV(24000, nil, true), testPCM(chunk80ms)), audio: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ *server) { tc.serve(w) })
			req := tc.req
			req.Prompt = "Say hello."
			rec := do(t, newClient(t, srv.URL, Options{}), req)
			if tc.want == "" {
				if !rec.OK() || rec.HasAudio() != tc.audio {
					t.Fatalf("class %q (%s), %d audio bytes: want success, audio %v", rec.ErrorClass, rec.Error, rec.AudioBytes, tc.audio)
				}
				return
			}
			if rec.ErrorClass != results.ErrNoAudio || rec.Error != tc.want {
				t.Fatalf("class %q, error %q; want %s: %q", rec.ErrorClass, rec.Error, results.ErrNoAudio, tc.want)
			}
			if !rec.Delivered() || rec.Status != http.StatusOK || rec.E2ES <= 0 {
				t.Errorf("delivered %v, status %d, e2e %v: the response itself completed", rec.Delivered(), rec.Status, rec.E2ES)
			}
		})
	}
}
