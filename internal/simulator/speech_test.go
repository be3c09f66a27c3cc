package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// "Good night" is 10 characters: 0.5 s = 12000 frames = 5 chunks of 2400.
const input10 = "Good night"

func speechReq(input string, extra map[string]any) map[string]any {
	b := map[string]any{"input": input}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// doSpeech posts a speech request and returns status, content type and body.
func doSpeech(t *testing.T, run *Running, body any) (int, string, []byte) {
	t.Helper()
	resp := post(t, t.Context(), run.URL+"/v1/audio/speech", body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading speech body: %v", err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func TestSpeechWholeFile(t *testing.T) {
	run := startSim(t, testConfig())
	status, ct, body := doSpeech(t, run, speechReq(input10, nil))
	if status != 200 || ct != "audio/wav" {
		t.Fatalf("status %d, content type %q", status, ct)
	}
	f, pcm, err := wav.Decode(body)
	if err != nil || f != (wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}) || len(pcm) != 24000 {
		t.Fatalf("wav: %v, %+v, %d PCM bytes; want 12000 frames", err, f, len(pcm))
	}
	h, _ := wav.ParseHeader(body)
	if h.Streaming || h.DataSize != 24000 {
		t.Errorf("whole-file header %+v, want a sized header", h)
	}
	status, ct, raw := doSpeech(t, run, speechReq(input10, map[string]any{"response_format": "pcm"}))
	if status != 200 || ct != "audio/pcm" || !bytes.Equal(raw, pcm) {
		t.Errorf("pcm: status %d, type %q, %d bytes equal to the wav PCM: %v", status, ct, len(raw), bytes.Equal(raw, pcm))
	}
	// speed 2 halves the audio.
	_, _, fast := doSpeech(t, run, speechReq(input10, map[string]any{"speed": 2.0, "response_format": "pcm"}))
	if len(fast) != 12000 {
		t.Errorf("speed 2: %d bytes, want 12000", len(fast))
	}
}

func TestSpeechByteStream(t *testing.T) {
	run := startSim(t, testConfig())
	_, _, ref := doSpeech(t, run, speechReq(input10, map[string]any{"response_format": "pcm"}))
	status, ct, body := doSpeech(t, run, speechReq(input10, map[string]any{"stream_format": "audio"}))
	if status != 200 || ct != "audio/wav" {
		t.Fatalf("status %d, type %q", status, ct)
	}
	h, err := wav.ParseHeader(body)
	if err != nil || !h.Streaming || h.DataOffset != 44 {
		t.Fatalf("raw wav stream header %+v: %v; want a 44-byte streaming header", h, err)
	}
	if got := body[4:8]; !bytes.Equal(got, []byte{0xff, 0xff, 0xff, 0xff}) || !bytes.Equal(body[40:44], []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("size fields % x / % x, want 0xFFFFFFFF", got, body[40:44])
	}
	if !bytes.Equal(body[44:], ref) {
		t.Errorf("streamed PCM (%d bytes) differs from the whole file (%d bytes)", len(body)-44, len(ref))
	}
	status, ct, body = doSpeech(t, run, speechReq(input10, map[string]any{"stream_format": "audio", "response_format": "pcm", "stream": true}))
	if status != 200 || ct != "audio/pcm" || !bytes.Equal(body, ref) {
		t.Errorf("raw pcm stream: %d %q, %d bytes", status, ct, len(body))
	}
}

type speechEvent struct {
	Type           string `json:"type"`
	Audio          string `json:"audio"`
	ResponseFormat string `json:"response_format"`
	Usage          *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// doSpeechSSE posts an SSE speech request and parses every event.
func doSpeechSSE(t *testing.T, run *Running, body any) ([]sseEvent, []speechEvent, error) {
	t.Helper()
	resp := post(t, t.Context(), run.URL+"/v1/audio/speech", body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	raw, err := readEvents(resp.Body)
	var out []speechEvent
	for i, ev := range raw {
		var se speechEvent
		if jerr := json.Unmarshal(ev.data, &se); jerr != nil {
			t.Fatalf("event %d: %v", i, jerr)
		}
		if se.Type != ev.typ {
			t.Errorf("event %d: SSE type %q, JSON type %q", i, ev.typ, se.Type)
		}
		out = append(out, se)
	}
	return raw, out, err
}

func TestSpeechSSE(t *testing.T) {
	run := startSim(t, testConfig())
	_, _, ref := doSpeech(t, run, speechReq(input10, map[string]any{"response_format": "pcm"}))
	for _, tc := range []struct {
		name   string
		extra  map[string]any
		format string
	}{
		{"stream true", map[string]any{"stream": true, "response_format": "pcm"}, "pcm"},
		{"stream_format sse", map[string]any{"stream_format": "sse", "response_format": "pcm"}, "pcm"},
		{"wav", map[string]any{"stream": true}, "wav"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, evs, err := doSpeechSSE(t, run, speechReq(input10, tc.extra))
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1]
			if last.Type != "speech.audio.done" || last.Usage == nil ||
				last.Usage.InputTokens != 3 || last.Usage.OutputTokens != 7 || last.Usage.TotalTokens != 10 {
				t.Errorf("last event %+v, want done with usage 3 + ceil(0.5*12.5)=7", last)
			}
			var pcm []byte
			deltas := evs[:len(evs)-1]
			for i, ev := range deltas {
				if ev.Type != "speech.audio.delta" || ev.ResponseFormat != tc.format {
					t.Fatalf("event %d: %+v", i, ev)
				}
				b, err := base64.StdEncoding.DecodeString(ev.Audio)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && tc.format == "wav" {
					h, err := wav.ParseHeader(b)
					if err != nil || len(b) != 44 || !h.Streaming {
						t.Errorf("first wav delta: %d bytes, %+v, %v; want the bare streaming header", len(b), h, err)
					}
					continue
				}
				pcm = append(pcm, b...)
			}
			if !bytes.Equal(pcm, ref) {
				t.Errorf("SSE PCM %d bytes differs from the whole file's %d", len(pcm), len(ref))
			}
			wantDeltas := 5
			if tc.format == "wav" {
				wantDeltas++
			}
			if len(deltas) != wantDeltas {
				t.Errorf("%d deltas, want %d", len(deltas), wantDeltas)
			}
			for i, ev := range raw {
				if !strings.HasPrefix(ev.comment, "sent=") {
					t.Errorf("event %d: no send stamp", i)
				}
			}
		})
	}
}

func TestSpeechValidation(t *testing.T) {
	run := startSim(t, testConfig())
	for _, tc := range []struct {
		name  string
		body  any
		msg   string
		param string
	}{
		{"no input", map[string]any{"voice": "x"}, "input: field required", "input"},
		{"empty input", speechReq("  ", nil), "input: must not be empty", "input"},
		{"input type", `{"input":5}`, "input: expected a string, got JSON number (byte offset 10)", "input"},
		{"speed low", speechReq("hi", map[string]any{"speed": 0.1}), "speed: must be between 0.25 and 4.0, got 0.1", "speed"},
		{"speed high", speechReq("hi", map[string]any{"speed": 4.5}), "speed: must be between 0.25 and 4.0, got 4.5", "speed"},
		{"bad format", speechReq("hi", map[string]any{"response_format": "ogg"}),
			"Invalid audio format 'ogg' (response_format; supported: wav, pcm, flac, mp3, opus, aac, pcm16)", "response_format"},
		{"bad stream_format", speechReq("hi", map[string]any{"stream_format": "ws"}),
			"stream_format: must be 'sse' or 'audio', got 'ws'", "stream_format"},
		{"stream mp3", speechReq("hi", map[string]any{"stream": true, "response_format": "mp3"}),
			"Streaming (stream=true) requires response_format='pcm' or 'wav'. Got response_format='mp3'.", "response_format"},
		{"raw stream flac", speechReq("hi", map[string]any{"stream_format": "audio", "response_format": "flac"}),
			"Streaming (stream=true) requires response_format='pcm' or 'wav'. Got response_format='flac'.", "response_format"},
		{"stream speed", speechReq("hi", map[string]any{"stream": true, "speed": 1.5}),
			"Speed adjustment is not supported when streaming (stream=true). Set speed=1.0 or omit it.", "speed"},
		{"file opus", speechReq("hi", map[string]any{"response_format": "opus"}),
			"response_format: audio format 'opus' is not supported by the simulator; use wav or pcm", "response_format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, typ, msg, param := apiErr(t, post(t, t.Context(), run.URL+"/v1/audio/speech", tc.body))
			if status != 400 || typ != "BadRequestError" || msg != tc.msg || param == nil || *param != tc.param {
				t.Errorf("got %d %s %q param %v, want 400 %q param %q", status, typ, msg, param, tc.msg, tc.param)
			}
		})
	}
	status, _, msg, _ := apiErr(t, post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq("hi", map[string]any{"model": "x"})))
	if status != http.StatusNotFound || msg != "The model `x` does not exist." {
		t.Errorf("wrong model: %d %q", status, msg)
	}
}

// TestSpeechTokenHeaders: a non-streaming speech response carries the five
// X-VLLM-OMNI-*-TOKENS headers (docs/reference/http-streams.md, section 3.5),
// consistent with each
// other: input = text tokens (the simulator's input is text), total = input
// + output, and output the codec tokens the SSE done event reports.
func TestSpeechTokenHeaders(t *testing.T) {
	run := startSim(t, testConfig())
	resp := post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq(input10, nil))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	num := func(name string) int {
		v, err := strconv.Atoi(resp.Header.Get(name))
		if err != nil {
			t.Fatalf("header %s = %q: %v", name, resp.Header.Get(name), err)
		}
		return v
	}
	in, out, total := num(HeaderInputTokens), num(HeaderOutputTokens), num(HeaderTotalTokens)
	if in != promptTokens(len(input10)) || out <= 0 || total != in+out {
		t.Errorf("tokens in %d out %d total %d; want in %d, out > 0, total = in + out", in, out, total, promptTokens(len(input10)))
	}
	if num(HeaderInputTextTokens) != in || num(HeaderInputAudioTokens) != 0 {
		t.Errorf("text %d audio %d, want %d and 0", num(HeaderInputTextTokens), num(HeaderInputAudioTokens), in)
	}
	_, events, err := doSpeechSSE(t, run, speechReq(input10, map[string]any{"stream": true, "response_format": "pcm"}))
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Usage == nil || last.Usage.OutputTokens != out {
		t.Errorf("SSE done usage %+v, want output_tokens %d like the header", last.Usage, out)
	}
}
