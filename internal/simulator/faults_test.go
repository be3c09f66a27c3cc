package simulator

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/sse"
)

// faultSim starts a server where every request suffers f.
func faultSim(t *testing.T, f Faults) *Running {
	cfg := testConfig()
	cfg.Faults = f
	return startSim(t, cfg)
}

// aborts is requests_success_total{finished_reason="abort"}.
func aborts(t *testing.T, run *Running) float64 {
	mfs, _ := scrape(t, run.URL, "")
	return counter(mfs, p+"requests_success_total", m{"finished_reason": "abort"})
}

func TestFaultHTTP500(t *testing.T) {
	run := faultSim(t, Faults{HTTP500: 1})
	status, typ, msg, _ := apiErr(t, post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq("hi", nil)))
	if status != 500 || typ != "InternalServerError" || msg != "simulated internal server error (fault injection: --fault-500)" {
		t.Errorf("chat: %d %s %q", status, typ, msg)
	}
	if status, _, _, _ := apiErr(t, post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq("hi", map[string]any{"stream": true}))); status != 500 {
		t.Errorf("speech: %d", status)
	}
	if a := aborts(t, run); a != 2 {
		t.Errorf("abort counter %v, want 2", a)
	}
}

func TestFaultDisconnect(t *testing.T) {
	run := faultSim(t, Faults{Disconnect: 1})
	// Chat: 13 chunks, the connection drops before chunk 6.
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq(prompt25, nil))
	cs := parseChatStream(t, resp.Body)
	resp.Body.Close()
	if cs.readErr == nil || errors.Is(cs.readErr, io.EOF) || cs.done {
		t.Errorf("chat: read error %v, done %v; want a truncated stream", cs.readErr, cs.done)
	}
	if len(cs.audio) != 6 {
		t.Errorf("chat: %d audio events before the drop, want 6", len(cs.audio))
	}
	// Raw speech stream: 5 chunks, drop before chunk 2 (after the header and 2 chunks).
	resp = post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq(input10, map[string]any{"stream_format": "audio"}))
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || len(b) != 44+2*4800 {
		t.Errorf("raw speech: %d bytes, err %v; want 44+9600 then an error", len(b), err)
	}
	// Whole file: no response at all.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, run.URL+"/v1/audio/speech", jsonBody(t, speechReq(input10, nil)))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("whole file: got status %d, want a dropped connection", resp.StatusCode)
	}
	waitFor(t, "3 aborts", func() bool { return aborts(t, run) == 3 })
}

func TestFaultErrorEvent(t *testing.T) {
	run := faultSim(t, Faults{ErrorEvent: 1})
	cs := doChat(t, run, chatReq(prompt25, nil))
	if cs.readErr != nil || !cs.done {
		t.Fatalf("chat: %v, done %v; want an error event then [DONE]", cs.readErr, cs.done)
	}
	last := cs.chunks[len(cs.chunks)-1]
	if last.Error == nil || last.Error.Code != 500 || last.Error.Type != "InternalServerError" ||
		last.Error.Message != "simulated mid-stream error (fault injection: --fault-error-event)" {
		t.Errorf("last chunk before [DONE]: %+v", last)
	}
	if len(cs.audio) != 6 {
		t.Errorf("%d audio events before the error, want 6", len(cs.audio))
	}
	_, evs, err := doSpeechSSE(t, run, speechReq(input10, map[string]any{"stream": true, "response_format": "pcm"}))
	if err != nil {
		t.Fatal(err)
	}
	e := evs[len(evs)-1]
	if e.Type != "speech.audio.error" || e.Error == nil || e.Error.Code != 500 || e.Error.Type != "server_error" || len(evs) != 3 {
		t.Errorf("speech SSE: %d events, last %+v; want 2 deltas then speech.audio.error", len(evs), e)
	}
	if status, _, _, _ := apiErr(t, post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq(input10, nil))); status != 500 {
		t.Errorf("whole file: status %d, want 500", status)
	}
	if a := aborts(t, run); a != 3 {
		t.Errorf("abort counter %v, want 3", a)
	}
}

func TestFaultStallEndsWhenClientLeaves(t *testing.T) {
	run := faultSim(t, Faults{Stall: 1, StallFor: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp := post(t, ctx, run.URL+"/v1/chat/completions", chatReq(prompt25, map[string]any{"modalities": []string{"audio"}}))
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	// The stall strikes before audio chunk 6 of 13: read the 6 events before it.
	for i := range 6 {
		if _, err := rd.Next(); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	cancel() // the client gives up; the server's stall must end with it
	waitFor(t, "the stalled request to end as an abort", func() bool { return aborts(t, run) == 1 })
	mfs, _ := scrape(t, run.URL, "")
	if v := sample(mfs, p+"num_requests_running", nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("running %v after the stalled request ended", v)
	}
}

func TestFaultStallShort(t *testing.T) {
	run := faultSim(t, Faults{Stall: 1, StallFor: 5 * time.Millisecond})
	cs := doChat(t, run, chatReq(prompt25, nil))
	if !cs.done || len(cs.audio) != 13 {
		t.Errorf("done %v with %d audio events; a short stall must not lose events", cs.done, len(cs.audio))
	}
}

func TestFaultEmptyAudio(t *testing.T) {
	run := faultSim(t, Faults{EmptyAudio: 1})
	cs := doChat(t, run, chatReq(prompt25, nil))
	if len(cs.audio) != 0 || !cs.done || cs.text != wantReply(prompt25, prompt25) {
		t.Errorf("%d audio events, done %v, text %q; want text only", len(cs.audio), cs.done, cs.text)
	}
	status, _, body := doSpeech(t, run, speechReq(input10, nil))
	if _, pcm, err := wav.Decode(body); status != 200 || err != nil || len(pcm) != 0 {
		t.Errorf("speech: %d, %v, %d PCM bytes; want an empty WAV", status, err, len(pcm))
	}
	mfs, _ := scrape(t, run.URL, "")
	skipped := m{"model_name": testModel, "stage": "2", "replica": "0", "reason": "no_audio_data"}
	if v := counter(mfs, p+"audio_skipped_requests_total", skipped); v != 2 {
		t.Errorf("skipped{no_audio_data} %v, want 2", v)
	}
	if n := histCount(mfs, p+"audio_duration_s", lbl(0)); n != 0 {
		t.Errorf("duration recorded %d times for empty audio", n)
	}
	if n := histCount(mfs, p+"audio_ttfp_s", lbl(0)); n != 0 {
		t.Errorf("TTFP recorded %d times without audio", n)
	}
	if v := counter(mfs, p+"requests_success_total", m{"finished_reason": "stop"}); v != 2 {
		t.Errorf("success %v, want 2 (silent loss is a 200)", v)
	}
}

func TestFaultMalformedBase64(t *testing.T) {
	run := faultSim(t, Faults{MalformedBase64: 1})
	cs := doChat(t, run, chatReq(prompt25, nil))
	if cs.badAudio != 1 || len(cs.audio) != 12 || !cs.done {
		t.Errorf("%d undecodable and %d good audio events, want 1 and 12", cs.badAudio, len(cs.audio))
	}
	_, evs, _ := doSpeechSSE(t, run, speechReq(input10, map[string]any{"stream": true, "response_format": "pcm"}))
	bad := 0
	for _, ev := range evs {
		if ev.Type == "speech.audio.delta" {
			if _, err := base64.StdEncoding.DecodeString(ev.Audio); err != nil {
				bad++
			}
		}
	}
	if bad != 1 {
		t.Errorf("speech SSE: %d undecodable deltas, want 1", bad)
	}
}

func TestFaultOversized(t *testing.T) {
	run := faultSim(t, Faults{Oversized: 1})
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq(prompt25, map[string]any{"modalities": []string{"audio"}}))
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	big := 0
	for _, ev := range events {
		if len(ev.data) >= 300*1024 {
			big++
		}
	}
	if big != 1 {
		t.Errorf("%d events of 300 KiB or more, want 1", big)
	}
	cs := parseChatStream(t, bytesReader(events))
	if cs.badAudio != 0 || !cs.done {
		t.Errorf("oversized stream: %d bad events, done %v", cs.badAudio, cs.done)
	}
	pcmOf(t, cs.audio, true) // every event, the big one included, is a valid WAV file
}
