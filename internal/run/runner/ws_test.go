package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/internal/wsclient"
	"github.com/omnibench/omnibench/load"
)

// TestRunWebSocketKinds runs both WebSocket kinds through Run: each arrival
// is one session of K records with their own sequence numbers, the server's
// counters agree with the client's, and saved audio is written per record.
func TestRunWebSocketKinds(t *testing.T) {
	for _, tc := range []struct {
		kind string
		ws   WSOptions
		load load.Config
	}{
		{results.KindSpeechWS, WSOptions{Turns: 3}, load.Config{Concurrency: 2, Requests: 4}},
		{results.KindSpeechWS, WSOptions{Turns: 2, SpeechAudio: wsclient.SpeechTimestamps, TextRate: 500}, load.Config{Concurrency: 2, Requests: 2}},
		{results.KindRealtime, WSOptions{Turns: 2}, load.Config{Concurrency: 2, Requests: 3, Warmup: 1}},
		{results.KindRealtime, WSOptions{Turns: 1}, load.Config{Rate: 50, Arrival: load.Constant, Requests: 4}},
		{results.KindRealtimeAudio, WSOptions{Turns: 2, AudioPace: -1}, load.Config{Concurrency: 2, Requests: 3}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			scenario := "tts-short"
			if tc.kind == results.KindRealtimeAudio {
				scenario = "voice-chat" // spoken prompts
			}
			wl := workload(t, scenario, tc.kind, "")
			sim := startSim(t, wl, nil)
			cfg := baseConfig(sim.URL, wl, 0, 0)
			tc.load.Seed, tc.load.Grace = 1, cfg.Load.Grace
			cfg.Load = tc.load
			cfg.WS = tc.ws
			cfg.SaveAudioDir = t.TempDir()
			out := mustRun(t, cfg)
			k := tc.ws.turns()
			want := (tc.load.Requests + tc.load.Warmup) * k
			if len(out.Records) != want {
				t.Fatalf("%d records, want %d sessions x %d", len(out.Records), tc.load.Requests+tc.load.Warmup, k)
			}
			seen := map[int]bool{}
			for _, r := range out.Records {
				if !r.OK() || !r.HasAudio() || r.Kind != tc.kind || r.WS == nil {
					t.Fatalf("record %s: %s %s, kind %s, ws %v", r.ID, r.ErrorClass, r.Error, r.Kind, r.WS)
				}
				if seen[r.Seq] || r.Seq != r.WS.Session*k+r.WS.Index {
					t.Errorf("record %s: seq %d, session %d, index %d", r.ID, r.Seq, r.WS.Session, r.WS.Index)
				}
				seen[r.Seq] = true
				if r.WS.Index > 0 && r.LagS != 0 {
					t.Errorf("record %s: lag %v on a later turn of a session", r.ID, r.LagS)
				}
				if tc.kind == results.KindRealtimeAudio {
					// Each turn appends the prompt of its own sequence number.
					clip := wl.Request(r.Seq, cfg.Seed).InputAudio
					if pcm, err := wsclient.InputPCM(clip); err != nil || r.InputAudioBytes != int64(len(pcm)) {
						t.Errorf("record %s: %d input bytes, its prompt %s has %d (%v)", r.ID, r.InputAudioBytes, clip.Name, len(pcm), err)
					}
				}
				if _, err := os.Stat(filepath.Join(cfg.SaveAudioDir, r.ID+".wav")); err != nil {
					t.Errorf("saved audio: %v", err)
				}
			}
			rows := out.ServerVsClient()
			wantAgree(t, rows, "requests completed", float64(want))
			if tc.kind == results.KindRealtime {
				// Each realtime response is a streaming chat completion
				// upstream: the server records its TTFP and continuity.
				wantAgree(t, rows, "TTFP observations", float64(want))
			}
			if out.Summary.Requests.Completed != tc.load.Requests*k {
				t.Errorf("summary: %d completed, want %d", out.Summary.Requests.Completed, tc.load.Requests*k)
			}
		})
	}
}

// TestRunWebSocketFaults: a disconnect fails the utterance in flight and
// marks the session's later ones not sent; the run goes on.
func TestRunWebSocketFaults(t *testing.T) {
	wl := workload(t, "tts-short", results.KindSpeechWS, "")
	sim := startSim(t, wl, func(c *simulator.Config) { c.Faults.Disconnect = 1 })
	cfg := baseConfig(sim.URL, wl, 3, 2)
	cfg.WS = WSOptions{Turns: 2}
	out, err := runChecked(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 6 {
		t.Fatalf("%d records", len(out.Records))
	}
	for _, r := range out.Records {
		if r.ErrorClass != results.ErrTruncated {
			t.Errorf("record %s: %q %s", r.ID, r.ErrorClass, r.Error)
		}
	}
}
