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
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// "Hello brave new big world" is 25 characters: 1.25 s of audio at 50 ms
// per character = 30000 frames = 12 chunks of 2400 and one of 1200.
const prompt25 = "Hello brave new big world"

func TestChatStreamProtocol(t *testing.T) {
	run := startSim(t, testConfig())
	cs := doChat(t, run, chatReq(prompt25, map[string]any{"stream_options": map[string]any{"include_usage": true}}))
	if cs.readErr != nil {
		t.Fatalf("read: %v", cs.readErr)
	}
	if !cs.done {
		t.Fatal("stream did not end with [DONE]")
	}
	if want := wantReply(prompt25, prompt25); cs.text != want {
		t.Errorf("text %q, want the corpus reply %q", cs.text, want)
	}
	// The first event is the role chunk.
	first := cs.chunks[0]
	if first.Choices[0].Delta.Role == nil || *first.Choices[0].Delta.Role != "assistant" || *first.Modality != "text" {
		t.Errorf("first chunk %+v is not the assistant role chunk", first)
	}
	var stops, audioEvents int
	for i, c := range cs.chunks {
		if c.Object != "chat.completion.chunk" || c.Model != testModel || !strings.HasPrefix(c.ID, "chatcmpl-") {
			t.Errorf("chunk %d: object %q model %q id %q", i, c.Object, c.Model, c.ID)
		}
		if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
			if *c.Choices[0].FinishReason != "stop" {
				t.Errorf("chunk %d: finish_reason %q", i, *c.Choices[0].FinishReason)
			}
			stops++
			if i != len(cs.chunks)-2 {
				t.Errorf("finish_reason stop on chunk %d of %d, want the last choice chunk", i, len(cs.chunks))
			}
		}
		if c.Modality != nil && *c.Modality == "audio" {
			audioEvents++
			if c.Usage == nil || c.Usage.CompletionTokens != 0 || c.Usage.PromptTokens != 7 || c.Usage.TotalTokens != 7 {
				t.Errorf("audio chunk %d: usage %+v, want prompt 7, completion 0", i, c.Usage)
			}
			if c.Choices[0].Delta.Role == nil {
				t.Errorf("audio chunk %d: no delta.role", i)
			}
		}
	}
	if stops != 1 {
		t.Errorf("%d chunks with finish_reason, want exactly 1", stops)
	}
	// prompt 25 chars -> 7 tokens; 5 words + ceil(1.25 s * 12.5) = 16 codec tokens.
	last := cs.chunks[len(cs.chunks)-1]
	if last.Modality != nil || len(last.Choices) != 0 || last.Usage == nil {
		t.Fatalf("last chunk %+v is not the usage chunk", last)
	}
	if *last.Usage != (usageJSON{PromptTokens: 7, CompletionTokens: 21, TotalTokens: 28}) {
		t.Errorf("usage %+v, want 7 + 21 = 28", *last.Usage)
	}
	if audioEvents != 13 || len(cs.audio) != 13 {
		t.Fatalf("%d audio events (%d decoded), want 13", audioEvents, len(cs.audio))
	}
	for i, a := range cs.audio {
		h, err := wav.ParseHeader(a)
		if err != nil {
			t.Fatalf("audio event %d: %v", i, err)
		}
		want := 4800
		if i == 12 {
			want = 2400
		}
		if h.DataSize != int64(want) || h.Streaming || len(a) != h.DataOffset+want {
			t.Errorf("audio event %d: header %+v, %d bytes; want %d bytes of PCM", i, h, len(a), want)
		}
	}
	if pcm := pcmOf(t, cs.audio, true); len(pcm) != 60000 {
		t.Errorf("%d PCM bytes, want 30000 frames = 60000", len(pcm))
	}
	// Every data event is preceded by a send stamp close to now.
	for i, ev := range cs.events {
		ns, ok := strings.CutPrefix(ev.comment, "sent=")
		if !ok {
			t.Fatalf("event %d: comment %q, want a sent= stamp", i, ev.comment)
		}
		v, err := strconv.ParseInt(ns, 10, 64)
		if err != nil || time.Since(time.Unix(0, v)) > time.Hour || time.Since(time.Unix(0, v)) < 0 {
			t.Errorf("event %d: stamp %q is not a recent unix-ns time", i, ns)
		}
	}
}

func TestChatStreamNoStamp(t *testing.T) {
	cfg := testConfig()
	cfg.Stamp = false
	run := startSim(t, cfg)
	cs := doChat(t, run, chatReq("Hi", nil))
	for i, ev := range cs.events {
		if ev.comment != "" {
			t.Errorf("event %d: comment %q with stamping off", i, ev.comment)
		}
	}
	if !cs.done {
		t.Error("no [DONE]")
	}
}

func TestChatPCMEqualsWAV(t *testing.T) {
	run := startSim(t, testConfig())
	w := doChat(t, run, chatReq(prompt25, nil))
	for _, format := range []string{"pcm", "pcm16"} {
		p := doChat(t, run, chatReq(prompt25, map[string]any{"audio": map[string]any{"format": format}}))
		if len(p.audio) != len(w.audio) {
			t.Fatalf("%s: %d audio events, wav had %d", format, len(p.audio), len(w.audio))
		}
		// Identical prompts get different generators (the occurrence
		// counter), but with no jitter the audio is the same.
		if !bytes.Equal(pcmOf(t, p.audio, false), pcmOf(t, w.audio, true)) {
			t.Errorf("%s PCM differs from the WAV events' PCM", format)
		}
		if _, err := wav.ParseHeader(p.audio[0]); err == nil {
			t.Errorf("%s event starts with a WAV header", format)
		}
	}
}

func TestChatModalities(t *testing.T) {
	run := startSim(t, testConfig())
	count := func(cs chatStream) (text, audio int) {
		for _, c := range cs.chunks {
			if c.Modality == nil {
				continue
			}
			switch *c.Modality {
			case "text":
				text++
			case "audio":
				audio++
			}
		}
		return
	}
	for _, tc := range []struct {
		modalities  []string
		text, audio bool
	}{
		{nil, true, true},
		{[]string{"text", "audio"}, true, true},
		{[]string{"audio"}, false, true},
		{[]string{"text"}, true, false},
	} {
		extra := map[string]any{}
		if tc.modalities != nil {
			extra["modalities"] = tc.modalities
		}
		cs := doChat(t, run, chatReq(prompt25, extra))
		text, audio := count(cs)
		if (text > 0) != tc.text || (audio > 0) != tc.audio {
			t.Errorf("modalities %v: %d text and %d audio events", tc.modalities, text, audio)
		}
		stops := 0
		for _, c := range cs.chunks {
			if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
				stops++
			}
		}
		if stops != 1 || !cs.done {
			t.Errorf("modalities %v: %d finish_reason chunks, done %v", tc.modalities, stops, cs.done)
		}
	}
}

func TestChatNonStreaming(t *testing.T) {
	run := startSim(t, testConfig())
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq(prompt25, map[string]any{"stream": false}))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
				Audio   *struct {
					ID   string `json:"id"`
					Data string `json:"data"`
				} `json:"audio"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage usageJSON `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || len(c.Choices) != 2 {
		t.Fatalf("object %q with %d choices, want chat.completion with text and audio", c.Object, len(c.Choices))
	}
	if c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != wantReply(prompt25, prompt25) {
		t.Errorf("text choice %+v", c.Choices[0])
	}
	a := c.Choices[1].Message.Audio
	if a == nil || !strings.HasPrefix(a.ID, "audio-") {
		t.Fatalf("audio choice %+v", c.Choices[1])
	}
	b, err := base64.StdEncoding.DecodeString(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	f, pcm, err := wav.Decode(b)
	if err != nil || f.SampleRate != 24000 || len(pcm) != 60000 {
		t.Errorf("audio: %v, format %+v, %d PCM bytes; want 60000", err, f, len(pcm))
	}
	if c.Usage != (usageJSON{PromptTokens: 7, CompletionTokens: 21, TotalTokens: 28}) {
		t.Errorf("usage %+v", c.Usage)
	}
}

func TestChatValidation(t *testing.T) {
	run := startSim(t, testConfig())
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		body   any
		status int
		msg    string
		param  *string
	}{
		{"bad format", chatReq("hi", map[string]any{"audio": map[string]any{"format": "ogg"}}), 400,
			"Invalid audio format 'ogg' (audio.format; supported: wav, pcm, flac, mp3, opus, pcm16)", ptr("audio.format")},
		{"no messages", map[string]any{"stream": true}, 400, "messages: field required", ptr("messages")},
		{"empty messages", map[string]any{"messages": []any{}}, 400, "messages: must contain at least one message", ptr("messages")},
		{"bad modality", chatReq("hi", map[string]any{"modalities": []string{"video"}}), 400,
			"Unsupported output modalities ['video'] for this model. Supported modalities: ['text', 'audio']", ptr("modalities")},
		{"image modality", chatReq("hi", map[string]any{"modalities": []string{"text", "image", "video"}}), 400,
			"Unsupported output modalities ['image', 'video'] for this model. Supported modalities: ['text', 'audio']", ptr("modalities")},
		{"modalities a string", chatReq("hi", map[string]any{"modalities": "audio"}), 400,
			"'modalities' must be a list of strings.", ptr("modalities")},
		{"modalities not strings", chatReq("hi", map[string]any{"modalities": []any{"text", 1}}), 400,
			"'modalities' must be a list of strings.", ptr("modalities")},
		{"modalities an object", chatReq("hi", map[string]any{"modalities": map[string]any{"text": true}}), 400,
			"'modalities' must be a list of strings.", ptr("modalities")},
		{"stream type", `{"messages":[{"role":"user","content":"hi"}],"stream":"yes"}`, 400,
			"stream: expected a boolean, got JSON string (byte offset 59)", ptr("stream")},
		{"content type", `{"messages":[{"role":"user","content":42}]}`, 400,
			"messages[0].content: expected a string, an array of content parts or null", ptr("messages")},
		{"no role", `{"messages":[{"content":"hi"}]}`, 400, "messages[0].role: field required", ptr("messages")},
		{"bad json", `{"messages":`, 400, "request body is not valid JSON: unexpected end of JSON input (byte offset 12)", nil},
		{"empty body", ``, 400, "request body is empty; expected a JSON object", nil},
		{"not an object", `[1,2]`, 400, "request body: expected a JSON object, got JSON array", nil},
		{"wrong model", chatReq("hi", map[string]any{"model": "other/model"}), 404, "The model `other/model` does not exist.", ptr("model")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, typ, msg, param := apiErr(t, post(t, t.Context(), run.URL+"/v1/chat/completions", tc.body))
			if status != tc.status || msg != tc.msg {
				t.Errorf("got %d %q, want %d %q", status, msg, tc.status, tc.msg)
			}
			if want := map[int]string{400: "BadRequestError", 404: "NotFoundError"}[tc.status]; typ != want {
				t.Errorf("type %q, want %q", typ, want)
			}
			if (param == nil) != (tc.param == nil) || (param != nil && *param != *tc.param) {
				t.Errorf("param %v, want %v", param, tc.param)
			}
		})
	}
	// A wrong method is a 405 with the same error shape.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, run.URL+"/v1/chat/completions", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _, _ := apiErr(t, resp); status != http.StatusMethodNotAllowed {
		t.Errorf("GET chat: status %d", status)
	}
}

func TestChatContentParts(t *testing.T) {
	run := startSim(t, testConfig())
	body := map[string]any{
		"stream": true,
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a helpful assistant."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "Say"},
				map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": wavBase64(0.5), "format": "wav"}},
				map[string]any{"type": "text", "text": "something"},
			}},
		},
		"modalities": []string{"text"},
	}
	cs := doChat(t, run, body)
	if want := wantReply("You are a helpful assistant.\nSay something", "Say something"); cs.text != want {
		t.Errorf("text %q, want the corpus reply %q (as many words as the user's text parts)", cs.text, want)
	}
}

func TestModelsHealthAndRoutes(t *testing.T) {
	run := startSim(t, testConfig())
	get := func(path string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, run.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get("/health")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) != 0 {
		t.Errorf("/health: %d %q", resp.StatusCode, b)
	}
	resp = get("/v1/models")
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID != testModel || models.Data[0].Object != "model" {
		t.Errorf("/v1/models: %+v", models)
	}
	if status, typ, _, _ := apiErr(t, get("/v1/nothing")); status != 404 || typ != "NotFoundError" {
		t.Errorf("unknown route: %d %s", status, typ)
	}
}

// wantReply is the reply testConfig's server gives to a chat whose messages
// join to prompt with userText as the last user text: corpus words, as many
// as userText has, and never an echo.
func wantReply(prompt, userText string) string {
	return strings.Join(replyWords(testConfig().Seed, prompt, len(strings.Fields(userText))), " ")
}

func TestReplyWords(t *testing.T) {
	a := replyWords(1, "Hello brave new big world", 5)
	if len(a) != 5 || strings.Join(a, " ") == "Hello brave new big world" {
		t.Errorf("reply %q: want 5 corpus words", a)
	}
	if b := replyWords(1, "Hello brave new big world", 5); strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("same seed and prompt gave %q then %q", a, b)
	}
	// Choice by seed: over a few seeds, more than one starting sentence.
	starts := map[string]bool{}
	for seed := range int64(8) {
		starts[replyWords(seed, "Hi", 1)[0]] = true
	}
	if len(starts) < 2 {
		t.Errorf("8 seeds all start the reply with %v", starts)
	}
	// A reply starts at a sentence (capital letter) and wraps around the corpus.
	long := replyWords(3, "x", 500)
	if r := long[0][0]; r < 'A' || r > 'Z' {
		t.Errorf("reply starts mid-sentence: %q", long[0])
	}
	if replyWords(1, "x", 0) != nil {
		t.Error("0 words: want nil")
	}
}
