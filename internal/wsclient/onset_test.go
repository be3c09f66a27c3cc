package wsclient

import (
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// TestAudibleOnsetWS: both WebSocket kinds record the audible onset per
// utterance or turn, as the HTTP kinds do: with 150 ms of leading silence
// every record's leading silence is 150 ms plus at most the 2 ms of the
// voice's attack below -50 dBFS, and TTFA audible is not before TTFP.
func TestAudibleOnsetWS(t *testing.T) {
	sim := fastSim(t, func(c *simulator.Config) { c.Timing.LeadingSilence = 150 * time.Millisecond })
	c := newClient(t, sim.URL, Options{})
	for _, kind := range []string{results.KindSpeechWS, results.KindRealtime} {
		recs := runSession(t, c, Session{Seq: 1, Kind: kind, Texts: texts})
		for i, r := range recs {
			if !r.OK() || !r.HasAudio() {
				t.Fatalf("%s record %d: %s %s", kind, i, r.ErrorClass, r.Error)
			}
			if r.LeadingSilenceS == nil || *r.LeadingSilenceS < 0.15 || *r.LeadingSilenceS > 0.152 {
				t.Errorf("%s record %d: leading silence %v, want 0.15 s + at most 2 ms", kind, i, r.LeadingSilenceS)
			}
			if r.TTFAAudibleS < r.TTFPS {
				t.Errorf("%s record %d: TTFA audible %v before TTFP %v", kind, i, r.TTFAAudibleS, r.TTFPS)
			}
		}
	}
}
