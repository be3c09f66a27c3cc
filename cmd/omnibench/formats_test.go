package main

import (
	"testing"

	"github.com/omnibench/omnibench/runner"
)

// TestRunCmdCompressedFormats: `run --audio-format mp3|opus` against the
// simulator, which sends every chat audio event as a complete MP3 or Ogg
// Opus file of digital silence: the client measures the frames from the
// files' headers, equal to the frames of the wav run of a fresh simulator
// with the same seed, and the server's audio_frames_total agrees.
func TestRunCmdCompressedFormats(t *testing.T) {
	t.Parallel()
	measure := func(format string) runner.Document {
		url := startRunSim(t, runSimConfig(t))
		stdout, stderr, code, err := execRun(t, "--url", url, "-n", "3", "-c", "1", "--warmup", "0", "--format", "json", "--settle", "0", "--audio-format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d (%v)\nstderr:\n%s", format, code, err, stderr)
		}
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
	}
}
