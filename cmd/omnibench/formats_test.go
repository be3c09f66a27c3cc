package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/runner"
)

// TestRunCmdCompressedFormats: `run --audio-format mp3|opus` against the
// simulator, which sends every chat audio event as a complete MP3 or Ogg
// Opus file of digital silence: the client measures the frames from the
// files' headers, equal to the frames of the wav run of a fresh simulator
// with the same seed, and the server's audio_frames_total agrees.
func TestRunCmdCompressedFormats(t *testing.T) {
	t.Parallel()
	saved := map[string]string{}
	notes := map[string]string{}
	measure := func(format string) runner.Document {
		url := startRunSim(t, runSimConfig(t))
		saved[format] = t.TempDir()
		stdout, stderr, code, err := execRun(t, "--url", url, "-n", "3", "-c", "1", "--warmup", "0", "--format", "json", "--settle", "0", "--audio-format", format, "--save-audio", saved[format])
		if code != 0 {
			t.Fatalf("%s: exit %d (%v)\nstderr:\n%s", format, code, err, stderr)
		}
		notes[format] = stderr
		return decodeRunDocument(t, format, []byte(stdout))
	}
	ref := measure("wav").Summary.Audio
	if ref.TotalFrames == 0 {
		t.Fatal("the wav run measured no audio")
	}
	for _, format := range []string{"mp3", "opus"} {
		doc := measure(format)
		if a := doc.Summary.Audio; a.TotalFrames != ref.TotalFrames || a.TotalDurationS != ref.TotalDurationS {
			t.Errorf("%s: %d frames, %v s; wav: %d frames, %v s", format, a.TotalFrames, a.TotalDurationS, ref.TotalFrames, ref.TotalDurationS)
		}
		if doc.Summary.Requests.Completed != 3 {
			t.Errorf("%s: requests %+v", format, doc.Summary.Requests)
		}
		found := false
		for _, c := range doc.Server.ServerVsClient {
			if c.Figure != "audio frames" {
				continue
			}
			found = true
			if c.Server == nil || c.Client == nil || *c.Server != *c.Client || *c.Client != float64(ref.TotalFrames) {
				t.Errorf("%s: audio frames server %v, client %v, want %d each", format, c.Server, c.Client, ref.TotalFrames)
			}
		}
		if !found {
			t.Errorf("%s: no audio frames comparison in %+v", format, doc.Server.ServerVsClient)
		}

		// --save-audio: MP3 is decoded, so its WAVs hold the measured
		// frames (of silence); Opus is not, so nothing is written and a note
		// says why.
		files, _ := filepath.Glob(filepath.Join(saved[format], "*.wav"))
		var frames int64
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, pcm, err := wav.Decode(data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			frames += int64(len(pcm) / f.BytesPerFrame())
		}
		switch format {
		case "mp3":
			if len(files) != 3 || frames != ref.TotalFrames {
				t.Errorf("mp3: --save-audio wrote %d files of %d frames, want 3 of %d", len(files), frames, ref.TotalFrames)
			}
		case "opus":
			if len(files) != 0 || !strings.Contains(notes[format], "no WAV written") {
				t.Errorf("opus: --save-audio wrote %d files; stderr %q", len(files), notes[format])
			}
		}
	}
}
