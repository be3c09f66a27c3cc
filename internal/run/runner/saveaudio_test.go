package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// TestRunSaveAudio checks that --save-audio leaves one playable WAV file per
// response, named by request id, holding exactly the PCM the record counts.
func TestRunSaveAudio(t *testing.T) {
	for _, kind := range []struct{ scenario, kind, format string }{
		{"chat-voice", "", ""},
		{"speech-pcm", "speech", "pcm"},
	} {
		t.Run(kind.scenario, func(t *testing.T) {
			wl := workload(t, kind.scenario, kind.kind, kind.format)
			sim := startSim(t, wl, nil)
			cfg := baseConfig(sim.URL, wl, 3, 3)
			cfg.Scrape = ScrapeOff
			cfg.SaveAudioDir = filepath.Join(t.TempDir(), "audio")
			out := mustRun(t, cfg)
			for _, rec := range out.Records {
				data, err := os.ReadFile(filepath.Join(cfg.SaveAudioDir, rec.ID+".wav"))
				if err != nil {
					t.Fatalf("%s: %v", rec.ID, err)
				}
				f, pcm, err := wav.Decode(data)
				if err != nil {
					t.Fatalf("%s.wav does not decode: %v", rec.ID, err)
				}
				if int64(len(pcm)) != rec.AudioBytes || f.SampleRate != rec.SampleRate || f.Channels != rec.Channels {
					t.Errorf("%s.wav: %d bytes at %d Hz x%d, record says %d bytes at %d Hz x%d",
						rec.ID, len(pcm), f.SampleRate, f.Channels, rec.AudioBytes, rec.SampleRate, rec.Channels)
				}
				silent := true
				for _, b := range pcm {
					if b != 0 {
						silent = false
						break
					}
				}
				if silent {
					t.Errorf("%s.wav is silence: the simulator's audio should be audible", rec.ID)
				}
			}
		})
	}
}
