package simulator

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// referencePayloads reads an event stream as the vLLM-Omni benchmark's
// reader does: the body is split into blocks at blank lines, a block whose
// first line starts with ':' is dropped whole, and of every other block the
// "data:" lines are kept, one payload per block.
func referencePayloads(t *testing.T, body io.Reader) []string {
	t.Helper()
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	var payloads []string
	for _, block := range strings.Split(string(b), "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if lines[0] == "" || strings.HasPrefix(lines[0], ":") {
			continue
		}
		var data []string
		for _, l := range lines {
			if v, ok := strings.CutPrefix(l, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if len(data) > 0 {
			payloads = append(payloads, strings.Join(data, "\n"))
		}
	}
	return payloads
}

// referenceChat posts a streaming chat request and returns what the
// reference reader makes of it: the text, the PCM bytes of the audio events
// and whether [DONE] came.
func referenceChat(t *testing.T, run *Running) (text string, pcm int, done bool) {
	t.Helper()
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq(prompt25, nil))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: status %d", resp.StatusCode)
	}
	var audio [][]byte
	for i, p := range referencePayloads(t, resp.Body) {
		if p == "[DONE]" {
			done = true
			continue
		}
		var c chatChunk
		if err := json.Unmarshal([]byte(p), &c); err != nil {
			t.Fatalf("payload %d: %v: %q", i, err, p)
		}
		if c.Modality == nil || len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil {
			continue
		}
		switch content := *c.Choices[0].Delta.Content; *c.Modality {
		case "text":
			text += content
		case "audio":
			b, err := base64.StdEncoding.DecodeString(content)
			if err != nil {
				t.Fatalf("payload %d: audio: %v", i, err)
			}
			audio = append(audio, b)
		}
	}
	return text, len(pcmOf(t, audio, true)), done
}

// TestReferenceReaderOnDefaultServer drives a default simulator with a
// reader that behaves like the vLLM-Omni benchmark's: it must see every
// event a real server would send. With send stamps on, the same reader sees
// nothing, which is why they are opt-in.
func TestReferenceReaderOnDefaultServer(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Addr, cfg.Timing = "127.0.0.1:0", fastTiming()
	run := startSim(t, cfg)
	text, pcm, done := referenceChat(t, run)
	if text == "" || pcm != 60000 || !done {
		t.Errorf("chat: text %q, %d PCM bytes, [DONE] %v; want text, 60000 bytes (1.25 s), [DONE]", text, pcm, done)
	}

	resp := post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq(input10, map[string]any{"stream": true, "response_format": "pcm"}))
	defer resp.Body.Close()
	var speechPCM int
	var speechDone bool
	for i, p := range referencePayloads(t, resp.Body) {
		var ev speechEvent
		if err := json.Unmarshal([]byte(p), &ev); err != nil {
			t.Fatalf("speech payload %d: %v", i, err)
		}
		b, err := base64.StdEncoding.DecodeString(ev.Audio)
		if err != nil {
			t.Fatalf("speech payload %d: audio: %v", i, err)
		}
		speechPCM += len(b)
		speechDone = speechDone || ev.Type == "speech.audio.done"
	}
	if speechPCM == 0 || !speechDone {
		t.Errorf("speech SSE: %d PCM bytes, done %v; want audio and speech.audio.done", speechPCM, speechDone)
	}

	cfg.Stamp = true
	stamped := startSim(t, cfg)
	if text, pcm, done := referenceChat(t, stamped); text != "" || pcm != 0 || done {
		t.Errorf("stamped chat: the reference reader saw text %q, %d PCM bytes, [DONE] %v; want nothing", text, pcm, done)
	}
}
