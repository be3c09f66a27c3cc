package simulator

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/flac"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
)

// TestLeadingSilenceThroughTheClient: with 200 ms of leading silence the
// client's audible onset comes 200 ms into the audio (plus the few frames
// of the voice's attack ramp below -50 dBFS), for chat and raw speech,
// while TTFP still counts the first PCM byte.
func TestLeadingSilenceThroughTheClient(t *testing.T) {
	cfg := testConfig()
	cfg.Timing.LeadingSilence = 200 * time.Millisecond
	run := startSim(t, cfg)
	c, err := client.New(client.Options{BaseURL: run.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for _, kind := range []string{results.KindChat, results.KindSpeech} {
		rec := &results.Record{}
		c.Do(t.Context(), client.Request{Kind: kind, Prompt: prompt25, AudioFormat: "pcm", PCMSampleRate: 24000}, rec)
		if !rec.OK() || !rec.HasAudio() {
			t.Fatalf("%s: %s %s", kind, rec.ErrorClass, rec.Error)
		}
		if rec.LeadingSilenceS == nil || *rec.LeadingSilenceS < 0.2 || *rec.LeadingSilenceS > 0.2+0.002 {
			t.Errorf("%s: leading silence %v, want 0.2 s plus at most 2 ms of attack", kind, rec.LeadingSilenceS)
		}
		if rec.TTFAAudibleS < rec.TTFPS {
			t.Errorf("%s: TTFA audible %v before TTFP %v", kind, rec.TTFAAudibleS, rec.TTFPS)
		}
	}
}

// TestFLACChat: with audio.format flac every chat audio event is a complete
// FLAC file (checked by flac and, when installed, by sox); the client
// measures the same frames and timeline as for pcm from a fresh server with
// the same seed, and finds the audible onset after the leading silence.
func TestFLACChat(t *testing.T) {
	cfg := testConfig()
	cfg.Timing.LeadingSilence = 100 * time.Millisecond
	measure := func(format string) *results.Record {
		run := startSim(t, cfg)
		c, err := client.New(client.Options{BaseURL: run.URL})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		rec := &results.Record{}
		c.Do(t.Context(), client.Request{Kind: results.KindChat, Prompt: prompt25, AudioFormat: format, PCMSampleRate: 24000}, rec)
		if !rec.OK() {
			t.Fatalf("%s: %s %s", format, rec.ErrorClass, rec.Error)
		}
		return rec
	}
	fl, pcm := measure("flac"), measure("pcm")
	if fl.AudioFrames == 0 || fl.AudioFrames != pcm.AudioFrames || !slices.Equal(fl.ChunkBytes, pcm.ChunkBytes) || fl.SampleRate != 24000 {
		t.Errorf("flac: %d frames, chunks %v; pcm: %d frames, chunks %v", fl.AudioFrames, fl.ChunkBytes, pcm.AudioFrames, pcm.ChunkBytes)
	}
	if fl.LeadingSilenceS == nil || pcm.LeadingSilenceS == nil || *fl.LeadingSilenceS != *pcm.LeadingSilenceS || *fl.LeadingSilenceS < 0.1 {
		t.Errorf("leading silence flac %v, pcm %v; want equal, at least 0.1 s", fl.LeadingSilenceS, pcm.LeadingSilenceS)
	}

	// The events themselves, checked by the decoder and by sox.
	run := startSim(t, cfg)
	cs := doChat(t, run, chatReq(prompt25, map[string]any{"audio": map[string]any{"format": "flac"}}))
	if len(cs.audio) == 0 {
		t.Fatal("no audio events")
	}
	var frames int64
	for i, ev := range cs.audio {
		info, _, _, err := flac.Decode(ev, nil)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		frames += info.Frames
	}
	if frames != fl.AudioFrames {
		t.Errorf("STREAMINFO frames sum to %d, the client measured %d", frames, fl.AudioFrames)
	}
	sox, err := exec.LookPath("sox")
	if err != nil {
		t.Log("sox not installed: the events are checked by flac only")
		return
	}
	path := filepath.Join(t.TempDir(), "ev.flac")
	if err := os.WriteFile(path, cs.audio[0], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), sox, "--i", "-s", path).CombinedOutput()
	first, _, _, _ := flac.Decode(cs.audio[0], nil)
	if err != nil || strings.TrimSpace(string(out)) != strconv.FormatInt(first.Frames, 10) {
		t.Errorf("sox --i -s: %q (%v), want %d samples", out, err, first.Frames)
	}
}
