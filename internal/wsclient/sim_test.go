package wsclient

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// TestMain fails the package if a session leaves goroutines behind (a
// reader not stopped, a connection not closed).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fastSim is a simulator whose utterances finish in milliseconds: 50 ms of
// audio per character in chunks of 0.1 s, generated at RTF 0.01, no jitter.
func fastSim(t testing.TB, mod func(*simulator.Config)) *simulator.Running {
	t.Helper()
	cfg := simulator.Config{
		Addr:         "127.0.0.1:0",
		SampleRate:   24000,
		StatsEnabled: true,
		Seed:         1,
		Timing: simulator.Timing{
			TTFT: time.Millisecond, WordInterval: time.Millisecond, TTFA: 2 * time.Millisecond,
			ChunkAudio: 100 * time.Millisecond, RTF: 0.01, Stall: time.Millisecond,
			AudioPerChar: 50 * time.Millisecond, MinAudio: 100 * time.Millisecond, MaxAudio: 10 * time.Second,
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	run, err := simulator.Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("simulator.Start: %v", err)
	}
	t.Cleanup(func() { _ = run.Close() })
	return run
}

// newClient builds a wsclient (and the HTTP client it finishes records
// with) for base.
func newClient(t testing.TB, base string, opts Options) *Client {
	t.Helper()
	fin, err := client.New(client.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fin.Close)
	opts.BaseURL = base
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 5 * time.Second
	}
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	c, err := New(opts, fin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runSession runs sess and returns its records by index, checking that each
// index is handed out exactly once and begun before it ends.
func runSession(t testing.TB, c *Client, sess Session) []*results.Record {
	t.Helper()
	var mu sync.Mutex
	begun := map[int]*results.Record{}
	out := make([]*results.Record, len(sess.Texts))
	c.Run(t.Context(), sess, Turn{
		Begin: func(i int) *results.Record {
			mu.Lock()
			defer mu.Unlock()
			if begun[i] != nil {
				t.Errorf("record %d begun twice", i)
			}
			begun[i] = &results.Record{ID: "r", Seq: i}
			return begun[i]
		},
		End: func(i int, rec *results.Record) {
			mu.Lock()
			defer mu.Unlock()
			if begun[i] != rec {
				t.Errorf("record %d ended without being begun", i)
			}
			if out[i] != nil {
				t.Errorf("record %d ended twice", i)
			}
			out[i] = rec
		},
	})
	for i, r := range out {
		if r == nil {
			t.Fatalf("record %d never handed out", i)
		}
	}
	return out
}

var texts = []string{"Hello there. How are you today?", "Goodbye.", "A third and final sentence."}

func checkAudioRecord(t *testing.T, r *results.Record, i int) {
	t.Helper()
	checkAudioShape(t, r, i)
	// The simulator makes 50 ms of audio per character.
	want := float64(len([]rune(texts[i]))) * 0.05
	if d := r.AudioDurationS - want; d > 0.001 || d < -0.001 {
		t.Errorf("record %d: %v s of audio, want %v", i, r.AudioDurationS, want)
	}
}

// checkAudioShape checks that record i succeeded with a consistent audio
// timeline and the derived fields filled.
func checkAudioShape(t *testing.T, r *results.Record, i int) {
	t.Helper()
	if !r.OK() {
		t.Fatalf("record %d failed: %s: %s", i, r.ErrorClass, r.Error)
	}
	if r.WS == nil || r.WS.Index != i {
		t.Fatalf("record %d: ws %+v", i, r.WS)
	}
	if !r.HasAudio() || r.TTFPS <= 0 || r.TTFPS > r.E2ES || r.LastAudioS > r.E2ES {
		t.Fatalf("record %d: audio %d bytes, ttfp %v, last %v, e2e %v", i, r.AudioBytes, r.TTFPS, r.LastAudioS, r.E2ES)
	}
	if r.SampleRate != 24000 || r.AudioDurationS <= 0 || r.RTFLastChunk <= 0 || r.Continuity == nil {
		t.Fatalf("record %d: rate %d, duration %v, rtf %v, continuity %v", i, r.SampleRate, r.AudioDurationS, r.RTFLastChunk, r.Continuity)
	}
}

func TestSpeechStreamMultiUtterance(t *testing.T) {
	sim := fastSim(t, nil)
	c := newClient(t, sim.URL, Options{})
	recs := runSession(t, c, Session{Seq: 7, Kind: results.KindSpeechWS, Texts: texts})
	for i, r := range recs {
		checkAudioRecord(t, r, i)
		if r.WS.Session != 7 || r.WS.ServerIndex == nil || *r.WS.ServerIndex != i {
			t.Errorf("record %d: session %d, server index %v", i, r.WS.Session, r.WS.ServerIndex)
		}
		if r.WS.ServerTotalBytes == nil || *r.WS.ServerTotalBytes != r.AudioBytes {
			t.Errorf("record %d: total_bytes %v, received %d", i, r.WS.ServerTotalBytes, r.AudioBytes)
		}
		if len(r.ChunkArrivalsS) < 2 {
			t.Errorf("record %d: %d chunks, want the progressive stream", i, len(r.ChunkArrivalsS))
		}
		if r.WS.TTFPFirstTextS < r.TTFPS {
			t.Errorf("record %d: TTFP from first text %v < from input.done %v", i, r.WS.TTFPFirstTextS, r.TTFPS)
		}
	}
	last := recs[len(recs)-1]
	if last.WS.CloseCode != 1000 {
		t.Errorf("close code %d on the last record, want 1000 after session.close", last.WS.CloseCode)
	}
	if recs[0].WS.CloseCode != 0 {
		t.Errorf("close code %d on the first record", recs[0].WS.CloseCode)
	}
}

func TestSpeechStreamFileAndTimestamps(t *testing.T) {
	sim := fastSim(t, nil)
	c := newClient(t, sim.URL, Options{})
	for _, tc := range []struct {
		mode, format string
		chunks       int // 0: more than one
	}{
		{SpeechFile, "wav", 1},
		{SpeechFile, "pcm", 1},
		{SpeechTimestamps, "", 0},
	} {
		t.Run(tc.mode+tc.format, func(t *testing.T) {
			recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:2], SpeechAudio: tc.mode, AudioFormat: tc.format})
			for i, r := range recs {
				checkAudioRecord(t, r, i)
				if tc.chunks == 1 && len(r.ChunkBytes) != 1 {
					t.Errorf("record %d: %d chunks, want one file", i, len(r.ChunkBytes))
				}
				if tc.chunks == 0 && len(r.ChunkBytes) < 2 {
					t.Errorf("record %d: %d chunks", i, len(r.ChunkBytes))
				}
				tb := *r.WS.ServerTotalBytes
				switch {
				case tc.format == "wav" && tb != r.AudioBytes+44:
					t.Errorf("record %d: total_bytes %d, want the file's %d", i, tb, r.AudioBytes+44)
				case tc.format != "wav" && tb != r.AudioBytes:
					t.Errorf("record %d: total_bytes %d, want %d", i, tb, r.AudioBytes)
				}
				if tc.mode == SpeechTimestamps && r.WS.Words != len(strings.Fields(texts[i])) {
					t.Errorf("record %d: %d word timestamps, want %d", i, r.WS.Words, len(strings.Fields(texts[i])))
				}
			}
		})
	}
}

func TestSpeechStreamTextRate(t *testing.T) {
	sim := fastSim(t, nil)
	c := newClient(t, sim.URL, Options{})
	// 5 words at 100 words/s: input.done leaves at least 40 ms after the first word.
	recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: []string{"one two three four five"}, TextRate: 100})
	r := recs[0]
	if !r.OK() || r.WS.TextLeadS < 0.04 {
		t.Fatalf("record: %s %s, text lead %v", r.ErrorClass, r.Error, r.WS.TextLeadS)
	}
	if d := r.WS.TTFPFirstTextS - (r.TTFPS + r.WS.TextLeadS); d > 1e-9 || d < -1e-9 {
		t.Errorf("TTFP from first text %v != %v + %v", r.WS.TTFPFirstTextS, r.TTFPS, r.WS.TextLeadS)
	}
}

// TestRealtimeMultiTurn runs a three-turn session against the simulator
// sending the audio events in each spelling on /v1/realtime?duplex=1, and
// in the session's native schema on /v1/duplex: every turn has its audio,
// and its record says which Realtime spelling the server used (none on
// /v1/duplex).
func TestRealtimeMultiTurn(t *testing.T) {
	for _, tc := range []struct{ events, endpoint, want string }{
		{simulator.RealtimeEventsGA, "", results.EventsGA},
		{simulator.RealtimeEventsLegacy, "", results.EventsLegacy},
		{simulator.RealtimeEventsGA, DuplexPath, ""}, // the native schema has no Realtime spelling
	} {
		t.Run(tc.events+tc.endpoint, func(t *testing.T) {
			sim := fastSim(t, func(c *simulator.Config) { c.WS.RealtimeEvents = tc.events })
			c := newClient(t, sim.URL, Options{})
			recs := runSession(t, c, Session{Seq: 3, Kind: results.KindRealtime, Endpoint: tc.endpoint, Texts: texts})
			for i, r := range recs {
				checkRealtimeTurn(t, r, i)
				if r.WS.Events != tc.want {
					t.Errorf("turn %d: events %q, want %q", i, r.WS.Events, tc.want)
				}
			}
			if recs[2].WS.CloseCode != 1000 {
				t.Errorf("close code %d", recs[2].WS.CloseCode)
			}
		})
	}
}

// checkRealtimeTurn checks turn i of a realtime session against the
// simulator: its audio and text, and the benchmark's figures beside ours.
func checkRealtimeTurn(t *testing.T, r *results.Record, i int) {
	t.Helper()
	checkAudioRecord(t, r, i)
	if r.TTFTS <= 0 || r.TextChars != len([]rune(texts[i])) {
		t.Errorf("turn %d: ttft %v, %d text chars, want %d", i, r.TTFTS, r.TextChars, len([]rune(texts[i])))
	}
	b := r.WS.Bench
	if b == nil || b.RTF == nil || b.TTFTS == nil {
		t.Fatalf("turn %d: bench %+v", i, b)
	}
	// Every delta is a WAV file: the benchmark counts its 44-byte header
	// as audio, and its first audio is the same delta as ours.
	wantDur := float64(r.AudioBytes+44*int64(len(r.ChunkBytes))) / 48000
	if d := b.AudioDurationS - wantDur; d > 1e-9 || d < -1e-9 {
		t.Errorf("turn %d: bench duration %v, want %v", i, b.AudioDurationS, wantDur)
	}
	if b.TTFPS != r.TTFPS {
		t.Errorf("turn %d: bench TTFP %v, ours %v", i, b.TTFPS, r.TTFPS)
	}
}

func TestBenchFormulas(t *testing.T) {
	// 96,000 bytes at 24 kHz s16 = 2 s; 1.5 s of generation: RTF 0.75.
	if d := BenchAudioDuration(96000, 24000, false, 0); d != 2 {
		t.Errorf("duration %v, want 2", d)
	}
	if d := BenchAudioDuration(96000, 24000, true, 2140); d != 2.14 {
		t.Errorf("duration from metadata %v, want 2.14", d)
	}
	if r := BenchRTF(1.5, 2); r == nil || *r != 0.75 {
		t.Errorf("rtf %v, want 0.75", r)
	}
	if r := BenchRTF(1, 3); r == nil || *r != 0.333333 {
		t.Errorf("rtf %v, want 0.333333 (rounded to 6 digits)", r)
	}
	if r := BenchRTF(1, 0); r != nil {
		t.Errorf("rtf %v for no audio, want nil", *r)
	}
}
