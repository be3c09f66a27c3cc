package client

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/mp3"
	"github.com/omnibench/omnibench/internal/audio/opus"
	"github.com/omnibench/omnibench/internal/run/results"
)

// TestCompressedChatEvents: MP3 and Ogg Opus chat events are measured from
// their headers. A decoded MP3 (FFmpeg's, a tone from 0.1 s) gives the
// audible onset 0.1 s into the response; MPEG 2.5 (not decodable by
// go-mp3) and Opus give frames and timeline but no onset, rather than a
// guessed one; Opus frames count at OpusHead's input rate, or 48 kHz
// without one. Broken files are malformed responses naming the event.
func TestCompressedChatEvents(t *testing.T) {
	tone, err := os.ReadFile("../audio/mp3/testdata/onset.mp3") // 7200 samples at 24 kHz
	if err != nil {
		t.Fatal(err)
	}
	mp3Quiet, _ := mp3.EncodeSilence(24000, 1, 2400)
	mp3Low, _ := mp3.EncodeSilence(8000, 1, 800)
	opus24, _ := opus.EncodeSilence(1, 24000, 4800)
	opus48, _ := opus.EncodeSilence(2, 0, 960)
	badCRC := append([]byte(nil), opus24...)
	badCRC[len(badCRC)-1] ^= 1
	for _, tc := range []struct {
		name, format string
		events       [][]byte
		frames       int64
		rate         int
		silence      float64 // leading silence; -1: unknown
		err          string
	}{
		{"mp3 decoded", "mp3", [][]byte{mp3Quiet, tone}, 2400 + 7200, 24000, (2400 + 2399) / 24000.0, ""},
		{"mp3 silent", "mp3", [][]byte{mp3Quiet}, 2400, 24000, 0.1, ""},
		{"mp3 2.5", "mp3", [][]byte{mp3Low, mp3Low}, 1600, 8000, -1, ""},
		{"opus at 24 kHz", "opus", [][]byte{opus24, opus24}, 2 * 2400, 24000, -1, ""},
		{"opus at 48 kHz", "opus", [][]byte{opus48}, 960, 48000, -1, ""},
		{"mp3 cut", "mp3", [][]byte{mp3Quiet, tone[:len(tone)-10]}, 0, 0, 0, "event 2: choices[0].delta.content: bad MP3: mp3: byte 1598"},
		{"opus bad CRC", "opus", [][]byte{opus24, badCRC}, 0, 0, 0, "event 2: choices[0].delta.content: bad Ogg Opus: ogg opus: page 2 at byte 118: CRC-32"},
	} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
			sseStart(w)
			for _, ev := range tc.events {
				event(w, "", audioEvent(ev, ""))
			}
			event(w, "", "[DONE]")
		})
		c := newClient(t, srv.URL, Options{})
		rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", AudioFormat: tc.format})
		if tc.err != "" {
			if rec.OK() || rec.ErrorClass != results.ErrMalformed || !strings.Contains(rec.Error, tc.err) {
				t.Errorf("%s: %s %q, want malformed with %q", tc.name, rec.ErrorClass, rec.Error, tc.err)
			}
			continue
		}
		if !rec.OK() {
			t.Fatalf("%s: %s %s", tc.name, rec.ErrorClass, rec.Error)
		}
		checkTimeline(t, rec)
		if rec.AudioFrames != tc.frames || rec.SampleRate != tc.rate || len(rec.ChunkBytes) != len(tc.events) {
			t.Errorf("%s: %d frames at %d Hz in %d chunks, want %d at %d Hz in %d", tc.name, rec.AudioFrames, rec.SampleRate, len(rec.ChunkBytes), tc.frames, tc.rate, len(tc.events))
		}
		switch {
		case tc.silence < 0:
			if rec.LeadingSilenceS != nil || rec.TTFAAudibleS != 0 {
				t.Errorf("%s: an onset (%v, %v) from audio that was not decoded", tc.name, rec.LeadingSilenceS, rec.TTFAAudibleS)
			}
		case rec.LeadingSilenceS == nil:
			t.Errorf("%s: no leading silence, want %v s", tc.name, tc.silence)
		case *rec.LeadingSilenceS < tc.silence-0.003 || *rec.LeadingSilenceS > tc.silence+0.001:
			t.Errorf("%s: leading silence %v s, want %v s (the 10 ms window may start up to 3 ms early)", tc.name, *rec.LeadingSilenceS, tc.silence)
		}
		if tc.name == "mp3 decoded" && rec.TTFAAudibleS != rec.ChunkArrivalsS[1] {
			t.Errorf("mp3: TTFA audible %v, want the second event's arrival %v", rec.TTFAAudibleS, rec.ChunkArrivalsS[1])
		}
		if tc.name == "mp3 silent" && rec.TTFAAudibleS != 0 {
			t.Errorf("mp3 silent: audible at %v", rec.TTFAAudibleS)
		}
	}
	// Speech kinds stream pcm or wav only.
	c := newClient(t, "http://127.0.0.1:1", Options{})
	for _, f := range []string{"mp3", "opus"} {
		if rec := do(t, c, Request{Kind: results.KindSpeech, Prompt: "x", AudioFormat: f}); rec.OK() || !strings.Contains(rec.Error, "chat only") {
			t.Errorf("%s accepted for a speech stream: %s", f, rec.Error)
		}
	}
}
