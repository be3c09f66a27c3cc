package client

import (
	"encoding/binary"
	"net/http"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/flac"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

// s16 renders frames of mono s16le: zero before start, then the constant
// magnitude amp (in sample units) with alternating sign.
func s16(frames, start int, amp int16) []byte {
	b := make([]byte, 2*frames)
	for n := start; n < frames; n++ {
		v := amp
		if n%2 == 1 {
			v = -amp
		}
		binary.LittleEndian.PutUint16(b[2*n:], uint16(v))
	}
	return b
}

// TestAudibleOnsetChat: an empty audio event first, then 0.1 s of silence,
// then a chunk whose tone starts at its frame 1000. TTFP is the first
// non-empty chunk, the benchmark's TTFP the empty event, TTFA audible the
// chunk holding the onset, and the leading silence exactly 3400 frames.
func TestAudibleOnsetChat(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", textEvent("Hi"))
		event(w, "", audioEvent(nil, "")) // content "": an audio output without samples
		event(w, "", audioEvent(s16(2400, 2400, 0), ""))
		event(w, "", audioEvent(s16(2400, 1000, 8000), ""))
		event(w, "", audioEvent(s16(2400, 0, 8000), "stop"))
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "pcm", PCMSampleRate: 24000})
	if !rec.OK() {
		t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
	}
	checkTimeline(t, rec)
	if len(rec.ChunkBytes) != 3 {
		t.Fatalf("%d chunks, want 3 (the empty event is not a chunk)", len(rec.ChunkBytes))
	}
	if !(rec.FirstAudioEventS > 0 && rec.FirstAudioEventS <= rec.TTFPS) {
		t.Errorf("first audio event %v, TTFP %v: want 0 < event <= TTFP", rec.FirstAudioEventS, rec.TTFPS)
	}
	if rec.TTFAAudibleS != rec.ChunkArrivalsS[1] {
		t.Errorf("TTFA audible %v, want the second chunk's arrival %v (arrivals %v)", rec.TTFAAudibleS, rec.ChunkArrivalsS[1], rec.ChunkArrivalsS)
	}
	if rec.LeadingSilenceS == nil || *rec.LeadingSilenceS != 3400.0/24000 {
		t.Errorf("leading silence %v, want %v", rec.LeadingSilenceS, 3400.0/24000)
	}
}

// TestAudibleOnsetAcrossChunks: a quiet tone (-45 dBFS, 76 frames needed
// to fill the 10 ms window above -50 dBFS) starting 10 frames before the
// end of the first chunk is found in the second chunk, but its onset, and
// so TTFA audible, belongs to the first.
func TestAudibleOnsetAcrossChunks(t *testing.T) {
	const amp = 184 // 32768 * 10^(-45/20) = 184.3
	tail := s16(2400, 2390, amp)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", audioEvent(tail, ""))
		event(w, "", audioEvent(s16(2400, 0, amp), "stop"))
		event(w, "", "[DONE]")
	})
	c := newClient(t, srv.URL, Options{})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "pcm", PCMSampleRate: 24000})
	if !rec.OK() || len(rec.ChunkArrivalsS) != 2 {
		t.Fatalf("%s: %s; %d chunks", rec.ErrorClass, rec.Error, len(rec.ChunkArrivalsS))
	}
	if rec.TTFAAudibleS != rec.ChunkArrivalsS[0] || rec.LeadingSilenceS == nil || *rec.LeadingSilenceS != 2390.0/24000 {
		t.Errorf("TTFA audible %v (arrivals %v), leading silence %v; want the first arrival and %v",
			rec.TTFAAudibleS, rec.ChunkArrivalsS, rec.LeadingSilenceS, 2390.0/24000)
	}
	// A higher threshold (-40 dBFS) never hears it: TTFA stays 0 and the
	// whole audio is leading silence.
	c = newClient(t, srv.URL, Options{AudibleThresholdDBFS: -40})
	rec = do(t, c, Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "pcm", PCMSampleRate: 24000})
	if rec.TTFAAudibleS != 0 || rec.LeadingSilenceS == nil || *rec.LeadingSilenceS != rec.AudioDurationS {
		t.Errorf("at -40 dBFS: TTFA audible %v, leading silence %v; want 0 and the duration %v",
			rec.TTFAAudibleS, rec.LeadingSilenceS, rec.AudioDurationS)
	}
}

// TestTokenHeaders: the X-VLLM-OMNI-*-TOKENS headers go into the record;
// one that is not a count is left out; without them the field is nil.
func TestTokenHeaders(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		w.Header().Set("Content-Type", "audio/pcm")
		if r.Header.Get("X-Test-No-Tokens") == "" {
			w.Header().Set("X-VLLM-OMNI-INPUT-TOKENS", "12")
			w.Header().Set("X-VLLM-OMNI-OUTPUT-TOKENS", "150")
			w.Header().Set("X-VLLM-OMNI-TOTAL-TOKENS", "lots")
			w.Header().Set("X-VLLM-OMNI-INPUT-AUDIO-TOKENS", "0")
		}
		w.Write(s16(2400, 0, 8000))
	})
	c := newClient(t, srv.URL, Options{})
	rec := do(t, c, Request{Kind: results.KindSpeech, Prompt: "hi", AudioFormat: "pcm", PCMSampleRate: 24000})
	st := rec.ServerTokens
	if !rec.OK() || st == nil || st.Input == nil || *st.Input != 12 || st.Output == nil || *st.Output != 150 ||
		st.Total != nil || st.InputText != nil || st.InputAudio == nil || *st.InputAudio != 0 {
		t.Errorf("server tokens %+v (%s %s)", st, rec.ErrorClass, rec.Error)
	}
	rec = do(t, c, Request{Kind: results.KindSpeech, Prompt: "hi", AudioFormat: "pcm", PCMSampleRate: 24000,
		Headers: map[string]string{"X-Test-No-Tokens": "1"}})
	if !rec.OK() || rec.ServerTokens != nil {
		t.Errorf("without headers: server tokens %+v (%s %s)", rec.ServerTokens, rec.ErrorClass, rec.Error)
	}
}

func TestAudibleOptionsValidated(t *testing.T) {
	for _, db := range []float64{3, -200} {
		if _, err := New(Options{BaseURL: "http://127.0.0.1:1", AudibleThresholdDBFS: db}); err == nil {
			t.Errorf("threshold %v dBFS accepted", db)
		}
	}
}

// TestFLACChatEvents: FLAC events are measured from their STREAMINFO; the
// decodable ones (the simulator's) also give the audible onset, the ones
// whose frame headers code 24 kHz (libFLAC's) give frames and timeline but
// no onset, rather than a guessed one.
func TestFLACChatEvents(t *testing.T) {
	f := wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}
	quiet, _ := flac.Encode(f, s16(2400, 2400, 0))
	loud, _ := flac.Encode(f, s16(2400, 600, 8000))
	coded := append([]byte(nil), loud...)
	_, first, _ := flac.ParseHeader(coded)
	coded[first+2] = coded[first+2]&0xf0 | 0x7 // as libFLAC writes 24 kHz
	for _, tc := range []struct {
		name   string
		events [][]byte
		onset  bool
	}{{"decodable", [][]byte{quiet, loud}, true}, {"24 kHz coded", [][]byte{quiet, coded}, false}} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
			sseStart(w)
			for _, ev := range tc.events {
				event(w, "", audioEvent(ev, ""))
			}
			event(w, "", "[DONE]")
		})
		c := newClient(t, srv.URL, Options{})
		rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", AudioFormat: "flac"})
		if !rec.OK() {
			t.Fatalf("%s: %s %s", tc.name, rec.ErrorClass, rec.Error)
		}
		checkTimeline(t, rec)
		if rec.AudioFrames != 4800 || rec.SampleRate != 24000 || len(rec.ChunkBytes) != 2 || rec.ChunkBytes[1] != 4800 {
			t.Errorf("%s: %d frames at %d Hz, chunks %v", tc.name, rec.AudioFrames, rec.SampleRate, rec.ChunkBytes)
		}
		if tc.onset {
			if rec.LeadingSilenceS == nil || *rec.LeadingSilenceS != 3000.0/24000 || rec.TTFAAudibleS != rec.ChunkArrivalsS[1] {
				t.Errorf("%s: leading silence %v, TTFA %v (arrivals %v)", tc.name, rec.LeadingSilenceS, rec.TTFAAudibleS, rec.ChunkArrivalsS)
			}
		} else if rec.LeadingSilenceS != nil || rec.TTFAAudibleS != 0 {
			t.Errorf("%s: an onset (%v, %v) from audio that was not decoded", tc.name, rec.LeadingSilenceS, rec.TTFAAudibleS)
		}
	}
	// Speech kinds stream pcm or wav only.
	c := newClient(t, "http://127.0.0.1:1", Options{})
	if rec := do(t, c, Request{Kind: results.KindSpeech, Prompt: "x", AudioFormat: "flac"}); rec.OK() {
		t.Error("flac accepted for a speech stream")
	}
}
