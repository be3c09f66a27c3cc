package client

import (
	"bytes"
	"net/http"
	"slices"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestAudioChecks: with Options.AudioChecks the client keeps decoding after
// the onset (found in the first event), so damage in later events, which
// are otherwise measured from their lengths, reaches the checks: a 1.2 s
// silence between two tones is an internal gap, a full-scale stretch is
// clipping. Without the option no record carries a check.
func TestAudioChecks(t *testing.T) {
	tone := s16(2400, 0, 8000)       // 0.1 s at 24 kHz, -12 dBFS
	silence := make([]byte, 2*28800) // 1.2 s
	clipped := s16(2400, 0, 32767)   // alternating full scale: no run of 3
	flat := bytes.Repeat([]byte{0xff, 0x7f}, 2400)
	cases := []struct {
		name    string
		events  [][]byte
		defects []string
		gapS    float64
	}{
		{"clean", [][]byte{tone, tone, tone}, nil, 0},
		{"gap", [][]byte{tone, silence[:len(silence)/2], silence[len(silence)/2:], tone}, []string{"internal_gap"}, 1.2},
		{"clipped", [][]byte{tone, clipped, flat, tone}, []string{"clipped"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				for i, e := range tc.events {
					finish := ""
					if i == len(tc.events)-1 {
						finish = "stop"
					}
					event(w, "", audioEvent(e, finish))
				}
				event(w, "", "[DONE]")
			})
			req := Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "pcm", PCMSampleRate: 24000}
			if rec := do(t, newClient(t, srv.URL, Options{}), req); rec.Audio != nil {
				t.Errorf("checks off: record has a check %+v", rec.Audio)
			}
			rec := do(t, newClient(t, srv.URL, Options{AudioChecks: true}), req)
			if !rec.OK() {
				t.Fatalf("%s: %s (a defect is no failure)", rec.ErrorClass, rec.Error)
			}
			a := rec.Audio
			if a == nil {
				t.Fatal("checks on: no check in the record")
			}
			if !slices.Equal(a.Defects, tc.defects) || a.LongestGapS != tc.gapS {
				t.Errorf("defects %q, longest gap %v s; want %q, %v s", a.Defects, a.LongestGapS, tc.defects, tc.gapS)
			}
			if rec.AudioDefect() != (tc.defects != nil) {
				t.Errorf("AudioDefect() = %v with defects %q", rec.AudioDefect(), a.Defects)
			}
		})
	}
}

// TestTextOut: a chat response's text reaches Request.TextOut unescaped,
// event by event, as the reference its transcription is scored against.
func TestTextOut(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", textEvent(`Say "hi",`))
		event(w, "", textEvent(" then go."))
		event(w, "", audioEvent(s16(2400, 0, 8000), "stop"))
		event(w, "", "[DONE]")
	})
	var text bytes.Buffer
	rec := do(t, newClient(t, srv.URL, Options{}), Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "pcm", PCMSampleRate: 24000, TextOut: &text})
	if !rec.OK() {
		t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
	}
	if got, want := text.String(), `Say "hi", then go.`; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
