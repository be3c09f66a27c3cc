package simulator

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/mp3"
	"github.com/omnibench/omnibench/internal/audio/opus"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
)

// TestCompressedChat: with audio.format mp3 or opus every chat audio event
// is a complete file of digital silence (checked by mp3/opus and,
// when installed, by ffprobe); the client measures the same frames and
// chunk timeline as for pcm from a fresh server with the same seed. MP3 is
// decoded, so its whole duration is leading silence (never audible); Opus
// is not, so its onset stays unknown (no leading silence recorded).
func TestCompressedChat(t *testing.T) {
	cfg := testConfig()
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
	pcm := measure("pcm")
	for _, format := range []string{"mp3", "opus"} {
		rec := measure(format)
		if rec.AudioFrames == 0 || rec.AudioFrames != pcm.AudioFrames || !slices.Equal(rec.ChunkBytes, pcm.ChunkBytes) || rec.SampleRate != 24000 {
			t.Errorf("%s: %d frames at %d Hz, chunks %v; pcm: %d frames, chunks %v", format, rec.AudioFrames, rec.SampleRate, rec.ChunkBytes, pcm.AudioFrames, pcm.ChunkBytes)
		}
		if rec.TTFAAudibleS != 0 {
			t.Errorf("%s: audible at %v s, but the audio is digital silence", format, rec.TTFAAudibleS)
		}
		switch format {
		case "mp3":
			if d := float64(rec.AudioFrames) / 24000; rec.LeadingSilenceS == nil || *rec.LeadingSilenceS != d {
				t.Errorf("mp3: leading silence %v, want the whole %v s", rec.LeadingSilenceS, d)
			}
		case "opus":
			if rec.LeadingSilenceS != nil {
				t.Errorf("opus: leading silence %v, want unknown (Opus is not decoded)", *rec.LeadingSilenceS)
			}
		}

		run := startSim(t, cfg)
		cs := doChat(t, run, chatReq(prompt25, map[string]any{"audio": map[string]any{"format": format}}))
		if len(cs.audio) == 0 {
			t.Fatalf("%s: no audio events", format)
		}
		var frames int64
		for i, ev := range cs.audio {
			switch format {
			case "mp3":
				info, err := mp3.Parse(ev)
				if err != nil {
					t.Fatalf("mp3 event %d: %v", i, err)
				}
				frames += info.Frames
			case "opus":
				info, err := opus.Parse(ev)
				if err != nil {
					t.Fatalf("opus event %d: %v", i, err)
				}
				frames += info.Frames / 2 // 48 kHz to the model's 24 kHz
			}
		}
		if frames != rec.AudioFrames {
			t.Errorf("%s: the files' headers sum to %d frames, the client measured %d", format, frames, rec.AudioFrames)
		}
		ffprobe, err := exec.LookPath("ffprobe")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("ffprobe not installed (the CI installs the Debian package ffmpeg)")
			}
			t.Logf("ffprobe not installed: the %s events are checked by the project's parser only", format)
			continue
		}
		path := filepath.Join(t.TempDir(), "ev."+format)
		if err := os.WriteFile(path, cs.audio[0], 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), ffprobe, "-v", "error", "-count_packets", "-show_entries", "stream=codec_name,channels", "-of", "csv=p=0", path).CombinedOutput()
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), format+",1") {
			t.Errorf("ffprobe %s: %q (%v), want %s, 1 channel", format, out, err, format)
		}
	}
}
