package simulator

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/sse"
)

// fastTiming makes every test request finish in milliseconds: 50 ms of
// audio per character, chunks of 0.1 s (2400 frames at 24 kHz), generation
// at RTF 0.01 and no jitter, so chunk sizes are exact.
func fastTiming() Timing {
	return Timing{
		TTFT:         time.Millisecond,
		WordInterval: time.Millisecond,
		TTFA:         2 * time.Millisecond,
		ChunkAudio:   100 * time.Millisecond,
		RTF:          0.01,
		Jitter:       0,
		Stall:        time.Millisecond,
		AudioPerChar: 50 * time.Millisecond,
		MinAudio:     100 * time.Millisecond,
		MaxAudio:     10 * time.Second,
	}
}

// testConfig is a stats-on, stamped server with fastTiming on a free port.
func testConfig() Config {
	return Config{
		Addr:         "127.0.0.1:0",
		SampleRate:   24000,
		StatsEnabled: true,
		Seed:         1,
		Timing:       fastTiming(),
		Stamp:        true,
	}
}

// startSim starts a simulator for the test and stops it at cleanup.
func startSim(t testing.TB, cfg Config) *Running {
	t.Helper()
	run, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := run.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return run
}

// post sends a JSON body and returns the response (the caller closes it).
func post(t testing.TB, ctx context.Context, url string, body any) *http.Response {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatalf("marshal request: %v", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// sseEvent is a copied sse.Event.
type sseEvent struct {
	typ     string
	data    []byte
	comment string
}

// readEvents reads every event of an SSE body; err is the reader's error
// other than a clean io.EOF.
func readEvents(r io.Reader) ([]sseEvent, error) {
	rd := sse.NewReader(r)
	var out []sseEvent
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, sseEvent{typ: ev.Type, data: bytes.Clone(ev.Data), comment: string(ev.Comment)})
	}
}

// chatChunk is a parsed chat.completion.chunk (or error event).
type chatChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage    *usageJSON       `json:"usage"`
	Modality *string          `json:"modality"`
	Metrics  *json.RawMessage `json:"metrics"`
	Error    *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// chatStream is a parsed streaming chat response.
type chatStream struct {
	events   []sseEvent
	chunks   []chatChunk // every data event but [DONE]
	done     bool        // [DONE] was the last event
	text     string
	audio    [][]byte // decoded delta.content of each audio event
	readErr  error
	badAudio int // audio events whose base64 did not decode
}

func parseChatStream(t testing.TB, body io.Reader) chatStream {
	t.Helper()
	var cs chatStream
	cs.events, cs.readErr = readEvents(body)
	for i, ev := range cs.events {
		if string(ev.data) == "[DONE]" {
			if i != len(cs.events)-1 {
				t.Errorf("event %d: [DONE] is not the last event", i)
			}
			cs.done = true
			continue
		}
		var c chatChunk
		if err := json.Unmarshal(ev.data, &c); err != nil {
			t.Fatalf("event %d: bad JSON %q: %v", i, ev.data, err)
		}
		cs.chunks = append(cs.chunks, c)
		if c.Modality == nil || len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil {
			continue
		}
		switch *c.Modality {
		case "text":
			cs.text += *c.Choices[0].Delta.Content
		case "audio":
			b, err := base64.StdEncoding.DecodeString(*c.Choices[0].Delta.Content)
			if err != nil {
				cs.badAudio++
				continue
			}
			cs.audio = append(cs.audio, b)
		}
	}
	return cs
}

// pcmOf concatenates the PCM of audio events, decoding WAV files.
func pcmOf(t testing.TB, events [][]byte, isWAV bool) []byte {
	t.Helper()
	var pcm []byte
	for i, b := range events {
		if !isWAV {
			pcm = append(pcm, b...)
			continue
		}
		f, p, err := wav.Decode(b)
		if err != nil {
			t.Fatalf("audio event %d: %v", i, err)
		}
		if f.SampleRate != 24000 || f.Channels != 1 || f.BitsPerSample != 16 {
			t.Fatalf("audio event %d: format %+v", i, f)
		}
		pcm = append(pcm, p...)
	}
	return pcm
}

// chatReq builds a streaming chat request body with extra fields.
func chatReq(prompt string, extra map[string]any) map[string]any {
	b := map[string]any{
		"messages": []map[string]any{{"role": "user", "content": prompt}},
		"stream":   true,
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// doChat posts a chat request and parses the stream.
func doChat(t testing.TB, run *Running, body any) chatStream {
	t.Helper()
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("chat: status %d: %s", resp.StatusCode, b)
	}
	return parseChatStream(t, resp.Body)
}

// scrape fetches /metrics with an Accept header and decodes it by the
// response's content type.
func scrape(t testing.TB, url, accept string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.ResponseFormat(resp.Header))
	out := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding /metrics (%s): %v", resp.Header.Get("Content-Type"), err)
		}
		out[mf.GetName()] = mf
	}
	return out, resp.Header.Get("Content-Type")
}

// sample finds the metric of a family whose labels include want.
func sample(mfs map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	mf := mfs[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// counter is the value of a counter sample, 0 when absent.
func counter(mfs map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	if m := sample(mfs, name, want); m != nil {
		return m.GetCounter().GetValue()
	}
	return 0
}

// histCount is the sample count of a histogram sample, 0 when absent.
func histCount(mfs map[string]*dto.MetricFamily, name string, want map[string]string) uint64 {
	if m := sample(mfs, name, want); m != nil {
		return m.GetHistogram().GetSampleCount()
	}
	return 0
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not a wait for the condition itself
	}
}

// apiErr reads an OpenAI-style error body.
func apiErr(t testing.TB, resp *http.Response) (status int, typ, msg string, param *string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error content type %q", ct)
	}
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    int     `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("error body %q: %v", b, err)
	}
	if e.Error.Code != resp.StatusCode {
		t.Errorf("error code %d != status %d", e.Error.Code, resp.StatusCode)
	}
	return resp.StatusCode, e.Error.Type, e.Error.Message, e.Error.Param
}

// m is shorthand for label maps.
type m = map[string]string

const testModel = DefaultModel

// lbl returns the audio-family labels of code2wav replica r.
func lbl(r int) m {
	return m{"model_name": testModel, "stage": "2", "replica": fmt.Sprint(r)}
}

// jsonBody marshals v for a request body.
func jsonBody(t testing.TB, v any) io.Reader {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// bytesReader re-serialises parsed events as an SSE stream.
func bytesReader(events []sseEvent) io.Reader {
	var b bytes.Buffer
	for _, ev := range events {
		b.WriteString("data: ")
		b.Write(ev.data)
		b.WriteString("\n\n")
	}
	return &b
}

// scrapeText fetches /metrics as text.
func scrapeText(t testing.TB, url, accept string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
