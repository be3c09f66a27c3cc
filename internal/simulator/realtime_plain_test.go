package simulator

import (
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// plainConfig serves a named model, which session.update must name.
func plainConfig() Config {
	c := testConfig()
	c.Model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
	return c
}

// plainAppend is an input_audio_buffer.append of seconds of 16 kHz silence.
func plainAppend(seconds float64) string {
	pcm := make([]byte, int(seconds*plainInputRate)*2)
	return `{"type":"input_audio_buffer.append","audio":"` + base64.StdEncoding.EncodeToString(pcm) + `"}`
}

// plainTurn runs one commit cycle of transcript 9.9 B and returns the
// transcription.done event; it checks the event grammar on the way.
func plainTurn(t *testing.T, w *wsTest, seconds float64) map[string]any {
	t.Helper()
	w.send(`{"type":"input_audio_buffer.commit","final":false}`)
	for range int(math.Round(seconds / 0.2)) { // 200 ms appends, as in 9.9 B
		w.send(plainAppend(0.2))
	}
	w.send(`{"type":"input_audio_buffer.commit","final":true}`)
	var text strings.Builder
	audio := 0
	for {
		m := w.next()
		switch m["type"] {
		case "transcription.delta":
			text.WriteString(m["delta"].(string))
		case "response.audio.delta":
			if m["format"] != "pcm16" || m["sample_rate_hz"] != float64(24000) || m["delta"] != nil {
				t.Fatalf("audio delta %.200v", m)
			}
			b, err := base64.StdEncoding.DecodeString(m["audio"].(string))
			if err != nil || len(b)%2 != 0 || string(b[:min(4, len(b))]) == "RIFF" {
				t.Fatalf("audio is not raw pcm16: %d bytes, %v", len(b), err)
			}
			audio++
		case "transcription.done":
			if m["text"] != text.String() || text.Len() == 0 || audio == 0 {
				t.Fatalf("done %v after text %q and %d audio deltas", m, text.String(), audio)
			}
			if d := w.expect("response.audio.done"); d["has_audio"] != true {
				t.Fatalf("%v", d)
			}
			return m
		default:
			t.Fatalf("unexpected %v", m)
		}
	}
}

// Transcript 9.9 B, two commit cycles on one connection: the prompt tokens
// count the input audio (12.5 per second) and the server's prefill grows
// by AudioPrefill per second of it, as on the chat path.
func TestPlainRealtimeTurns(t *testing.T) {
	cfg := plainConfig()
	run := startSim(t, cfg)
	w := dialWS(t, run, "/v1/realtime")
	if c := w.expect("session.created"); !strings.HasPrefix(c["id"].(string), "sess-") || c["created"] == nil {
		t.Fatalf("%v", c)
	}
	w.send(`{"type":"session.update","model":"` + cfg.Model + `"}`)
	stage0 := map[string]string{"stage": "0", "replica": "0"}
	var prevN uint64
	var prevSum float64
	var means []float64
	for _, seconds := range []float64{0.4, 2} {
		done := plainTurn(t, w, seconds)
		u := done["usage"].(map[string]any)
		if want := math.Ceil(seconds * 12.5); u["prompt_tokens"] != want || u["total_tokens"] != want+u["completion_tokens"].(float64) {
			t.Errorf("%v s: usage %v, want %v prompt tokens", seconds, u, want)
		}
		mfs, _ := scrape(t, run.URL, "")
		h := sample(mfs, "vllm:request_prefill_time_seconds", stage0).GetHistogram()
		means = append(means, (h.GetSampleSum()-prevSum)/float64(h.GetSampleCount()-prevN))
		prevN, prevSum = h.GetSampleCount(), h.GetSampleSum()
	}
	for i, s := range []float64{0.4, 2} {
		if want := cfg.Timing.TTFT.Seconds() + s*cfg.Timing.AudioPrefill.Seconds(); math.Abs(means[i]-want) > 1e-9 {
			t.Errorf("%v s of audio: server prefill %v s, want %v s", s, means[i], want)
		}
	}
	// The endpoint has no TTFP family (9.7).
	mfs, _ := scrape(t, run.URL, "")
	if h := sample(mfs, "vllm_omni:audio_ttfp_s", nil); h != nil && h.GetHistogram().GetSampleCount() != 0 {
		t.Errorf("plain realtime observed TTFP: %v", h)
	}
	// session.close is an unknown event and the connection stays open.
	w.send(`{"type":"session.close"}`)
	if e := w.expect("error"); e["code"] != "unknown_event" || e["error"] != "Unknown event type: session.close" {
		t.Fatalf("%v", e)
	}
	if err := w.c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("client close: %v", err)
	}
}

func TestPlainRealtimeErrors(t *testing.T) {
	cfg := plainConfig()
	run := startSim(t, cfg)
	open := func(t *testing.T) *wsTest {
		w := dialWS(t, run, "/v1/realtime?duplex=0")
		w.expect("session.created")
		return w
	}
	for _, tt := range []struct{ name, send, code, msg string }{
		{"not validated", `{"type":"input_audio_buffer.commit","final":false}`, "model_not_validated", "Model not validated. Make sure to validate the model by sending a session.update event."},
		{"no model", `{"type":"session.update"}`, "invalid_event", "Missing required field: model"},
		{"wrapped model", `{"type":"session.update","session":{"model":"x"}}`, "invalid_event", "Missing required field: model"},
		{"unknown model", `{"type":"session.update","model":"nope"}`, "model_not_found", "The model `nope` does not exist."},
		{"bad base64", `{"type":"input_audio_buffer.append","audio":"!!"}`, "invalid_audio", "Invalid audio data"},
		{"empty audio", `{"type":"input_audio_buffer.append","audio":""}`, "invalid_audio", "Invalid audio data"},
		{"no audio", `{"type":"input_audio_buffer.append"}`, "processing_error", ""},
		{"text turn", `{"type":"conversation.item.create","item":{}}`, "unknown_event", "Unknown event type: conversation.item.create"},
		{"invalid json", `{`, "invalid_json", "Invalid JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := open(t)
			w.send(tt.send)
			e := w.expect("error")
			if e["code"] != tt.code || (tt.msg != "" && e["error"] != tt.msg) {
				t.Fatalf("%v, want code %s", e, tt.code)
			}
			// The connection stays usable.
			w.send(`{"type":"session.update","model":"` + cfg.Model + `"}`)
			plainTurn(t, w, 0.2)
		})
	}
	t.Run("fault 500", func(t *testing.T) {
		c := plainConfig()
		c.Faults.HTTP500 = 1
		w := dialWS(t, startSim(t, c), "/v1/realtime")
		w.expect("session.created")
		w.send(`{"type":"session.update","model":"` + c.Model + `"}`)
		w.send(`{"type":"input_audio_buffer.commit","final":false}`)
		w.send(plainAppend(0.2))
		w.send(`{"type":"input_audio_buffer.commit","final":true}`)
		if e := w.expect("error"); e["code"] != "processing_error" {
			t.Fatalf("%v", e)
		}
		if d := w.expect("response.audio.done"); d["has_audio"] != false {
			t.Fatalf("%v", d)
		}
	})
}
