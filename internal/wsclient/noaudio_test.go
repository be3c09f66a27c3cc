package wsclient

import (
	"testing"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// TestNoAudio: an utterance or turn that asked for audio and ended
// normally without one sample fails as no_audio, with the HTTP kinds'
// words for what came instead, and the session goes on to the next one.
// The simulator's empty-audio fault makes every response carry none.
func TestNoAudio(t *testing.T) {
	clip, _ := speechClip(t, 0.3, 16000)
	for _, tc := range []struct {
		name string
		sess Session
		want string
	}{
		{"speech-ws stream", Session{Kind: results.KindSpeechWS, Texts: texts[:2]}, "no audio event"},
		{"speech-ws file", Session{Kind: results.KindSpeechWS, Texts: texts[:2], SpeechAudio: SpeechFile}, "1 audio event without samples"},
		{"speech-ws timestamps", Session{Kind: results.KindSpeechWS, Texts: texts[:2], SpeechAudio: SpeechTimestamps}, "no audio event"},
		{"realtime", Session{Kind: results.KindRealtime, Texts: texts[:2]}, "text only"},
		{"realtime native", Session{Kind: results.KindRealtime, Endpoint: DuplexPath, Texts: texts[:2]}, "text only"},
		{"realtime-audio", audioSession(clip, clip), "text only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := fastSim(t, func(c *simulator.Config) {
				c.Faults = simulator.Faults{EmptyAudio: 1}
				if tc.sess.Kind == results.KindRealtimeAudio {
					c.Model = omniModel
				}
			})
			recs := runSession(t, newClient(t, sim.URL, Options{}), tc.sess)
			for _, r := range recs {
				if r.ErrorClass != results.ErrNoAudio || r.Error != tc.want {
					t.Errorf("record %d: %q %q, want %q %q", r.WS.Index, r.ErrorClass, r.Error, results.ErrNoAudio, tc.want)
				}
			}
		})
	}
}

// TestNoAudioEvents: audio events without samples are counted in the
// message, and text beside them is named.
func TestNoAudioEvents(t *testing.T) {
	url := tinyServer(t, func(tc *tinyConn) {
		tc.expect("session.update")
		tc.text(`{"type":"session.created","session":{"id":"s"}}`)
		for n := range 2 {
			realtimeTurnScript(tc, n, results.EventsGA, []string{"", ""}, func(int) string { return "" })
			tc.expect("playback.ack")
		}
		tc.expect("session.close")
		tc.text(`{"type":"session.closed"}`)
		_ = tc.c.Close(websocket.StatusNormalClosure, "")
	})
	recs := runSession(t, tinyClient(t, url, testKey), Session{Kind: results.KindRealtime, Texts: texts[:2]})
	for _, r := range recs {
		if want := "2 audio events without samples, and text"; r.ErrorClass != results.ErrNoAudio || r.Error != want {
			t.Errorf("record %d: %q %q, want %q %q", r.WS.Index, r.ErrorClass, r.Error, results.ErrNoAudio, want)
		}
	}
}
