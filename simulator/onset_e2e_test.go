package simulator

import (
	"testing"
	"time"

	"github.com/omnibench/omnibench/client"
	"github.com/omnibench/omnibench/results"
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
