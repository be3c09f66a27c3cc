package wsclient

import (
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// wantFail checks a record's class and that its message contains want.
func wantFail(t *testing.T, r *results.Record, class, want string) {
	t.Helper()
	if r.ErrorClass != class || !strings.Contains(r.Error, want) {
		t.Errorf("record %s: %q: %q, want %q containing %q", r.ID, r.ErrorClass, r.Error, class, want)
	}
}

func TestSpeechFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  simulator.Faults
		mode    string
		class   string
		want    string
		fatal   bool // later utterances are not sent
		noAudio bool
	}{
		{name: "500", faults: simulator.Faults{HTTP500: 1}, class: results.ErrStreamError, want: "Generation failed for utterance", noAudio: true},
		{name: "error event", faults: simulator.Faults{ErrorEvent: 1}, class: results.ErrStreamError, want: "fault injection: --fault-error-event"},
		{name: "disconnect", faults: simulator.Faults{Disconnect: 1}, class: results.ErrTruncated, want: "the connection ended", fatal: true},
		{name: "bad base64", faults: simulator.Faults{MalformedBase64: 1}, mode: SpeechTimestamps, class: results.ErrMalformed, want: "bad base64", fatal: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := fastSim(t, func(c *simulator.Config) { c.Faults = tc.faults })
			c := newClient(t, sim.URL, Options{})
			recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts, SpeechAudio: tc.mode})
			wantFail(t, recs[0], tc.class, tc.want)
			if tc.noAudio && recs[0].HasAudio() {
				t.Errorf("audio received: %d bytes", recs[0].AudioBytes)
			}
			if !tc.noAudio && !recs[0].HasAudio() {
				t.Errorf("the audio before the fault was not kept")
			}
			for _, r := range recs[1:] {
				if tc.fatal {
					wantFail(t, r, tc.class, "not sent")
				} else {
					// The server goes on with the next utterance.
					wantFail(t, r, tc.class, tc.want)
					if r.WS.ServerIndex == nil || *r.WS.ServerIndex != r.WS.Index {
						t.Errorf("record %d: server index %v", r.WS.Index, r.WS.ServerIndex)
					}
				}
			}
		})
	}
}

func TestSpeechIdleTimeoutAndCap(t *testing.T) {
	t.Run("stall", func(t *testing.T) {
		sim := fastSim(t, func(c *simulator.Config) { c.Faults = simulator.Faults{Stall: 1, StallFor: 10 * time.Second} })
		c := newClient(t, sim.URL, Options{IdleTimeout: 300 * time.Millisecond})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:2]})
		wantFail(t, recs[0], results.ErrIdleTimeout, "no message for the idle timeout")
		wantFail(t, recs[1], results.ErrIdleTimeout, "not sent")
	})
	t.Run("message cap", func(t *testing.T) {
		sim := fastSim(t, nil)
		c := newClient(t, sim.URL, Options{MaxMessageBytes: 1000})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:1], SpeechAudio: SpeechFile})
		wantFail(t, recs[0], results.ErrMalformed, "exceeds the cap of 1000 bytes")
	})
	t.Run("server rate", func(t *testing.T) {
		// audio.start says 24000 whatever the model's rate: the client
		// measures 16 kHz audio right only when told the rate.
		sim := fastSim(t, func(c *simulator.Config) { c.SampleRate = 16000 })
		c := newClient(t, sim.URL, Options{})
		nominal := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[1:2]})[0]
		told := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[1:2], PCMSampleRate: 16000})[0]
		if nominal.SampleRate != 24000 || told.SampleRate != 16000 || told.AudioDurationS != 0.4 {
			t.Errorf("nominal %d Hz %v s, told %d Hz %v s; want 16000 Hz 0.4 s when told", nominal.SampleRate, nominal.AudioDurationS, told.SampleRate, told.AudioDurationS)
		}
	})
	t.Run("no aligner", func(t *testing.T) {
		sim := fastSim(t, func(c *simulator.Config) { c.WS.NoForcedAligner = true })
		c := newClient(t, sim.URL, Options{})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:2], SpeechAudio: SpeechTimestamps})
		for _, r := range recs {
			wantFail(t, r, results.ErrStreamError, "--forced-aligner")
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		sim := fastSim(t, nil)
		c := newClient(t, sim.URL, Options{})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:2], Extra: map[string]any{"speed": 9}})
		wantFail(t, recs[0], results.ErrStreamError, "Invalid session config")
		if recs[0].WS.CloseCode != 1000 {
			t.Errorf("close code %d", recs[0].WS.CloseCode)
		}
		wantFail(t, recs[1], results.ErrStreamError, "not sent")
	})
	t.Run("reserved extra", func(t *testing.T) {
		sim := fastSim(t, nil)
		c := newClient(t, sim.URL, Options{})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:1], Extra: map[string]any{"stream_audio": false}})
		wantFail(t, recs[0], results.ErrConnect, "request not sent")
	})
}

func TestRealtimeFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults simulator.Faults
		class  string
		want   string
	}{
		{"500", simulator.Faults{HTTP500: 1}, results.ErrStreamError, "code internal_error"},
		{"error event", simulator.Faults{ErrorEvent: 1}, results.ErrStreamError, "duplex.response.message: server error: simulated mid-stream error"},
		{"disconnect", simulator.Faults{Disconnect: 1}, results.ErrTruncated, "the connection ended"},
		{"bad base64", simulator.Faults{MalformedBase64: 1}, results.ErrMalformed, "bad base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := fastSim(t, func(c *simulator.Config) { c.Faults = tc.faults })
			c := newClient(t, sim.URL, Options{})
			recs := runSession(t, c, Session{Kind: results.KindRealtime, Texts: texts})
			wantFail(t, recs[0], tc.class, tc.want)
			for _, r := range recs[1:] {
				wantFail(t, r, tc.class, "not sent")
			}
		})
	}
	t.Run("unknown model", func(t *testing.T) {
		sim := fastSim(t, nil)
		c := newClient(t, sim.URL, Options{})
		recs := runSession(t, c, Session{Kind: results.KindRealtime, Model: "nope", Texts: texts[:2]})
		wantFail(t, recs[0], results.ErrStreamError, "opening the session: server error: The model `nope` does not exist. (code model_not_found)")
		wantFail(t, recs[1], results.ErrStreamError, "not sent")
	})
	t.Run("stall", func(t *testing.T) {
		sim := fastSim(t, func(c *simulator.Config) { c.Faults = simulator.Faults{Stall: 1, StallFor: 10 * time.Second} })
		c := newClient(t, sim.URL, Options{IdleTimeout: 300 * time.Millisecond})
		recs := runSession(t, c, Session{Kind: results.KindRealtime, Texts: texts[:1]})
		wantFail(t, recs[0], results.ErrIdleTimeout, "no message for the idle timeout")
	})
	t.Run("refused handshake", func(t *testing.T) {
		sim := fastSim(t, nil)
		c := newClient(t, sim.URL, Options{})
		recs := runSession(t, c, Session{Kind: results.KindRealtime, Endpoint: "/v1/nowhere", Texts: texts[:2]})
		wantFail(t, recs[0], results.ErrHTTPStatus, "HTTP 404")
		wantFail(t, recs[1], results.ErrHTTPStatus, "not sent")
	})
	t.Run("connect", func(t *testing.T) {
		c := newClient(t, "http://127.0.0.1:1", Options{})
		recs := runSession(t, c, Session{Kind: results.KindSpeechWS, Texts: texts[:1]})
		wantFail(t, recs[0], results.ErrConnect, "WebSocket handshake")
	})
}
