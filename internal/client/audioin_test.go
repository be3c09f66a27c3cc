package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

func testClip(t *testing.T) *input.Clip {
	t.Helper()
	c, err := input.NewClip("q.wav", wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, make([]byte, 3200)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The user message of a chat request with audio: the text part first (when
// there is text), then the audio part in the requested style.
func TestChatBodyWithInputAudio(t *testing.T) {
	clip := testClip(t)
	for _, tt := range []struct {
		prompt, style, want string
	}{
		{"What did I say?", "", `[{"text":"What did I say?","type":"text"},{"input_audio":{"data":"` + clip.Base64 + `","format":"wav"},"type":"input_audio"}]`},
		{"", "input_audio", `[{"input_audio":{"data":"` + clip.Base64 + `","format":"wav"},"type":"input_audio"}]`},
		{"Hi", "audio_url", `[{"text":"Hi","type":"text"},{"audio_url":{"url":"data:audio/wav;base64,` + clip.Base64 + `"},"type":"audio_url"}]`},
	} {
		r := Request{Kind: results.KindChat, Prompt: tt.prompt, InputAudio: clip, AudioInputStyle: tt.style}
		body, _, err := r.build()
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		if got := string(b.Messages[0].Content); got != tt.want {
			t.Errorf("%q/%q: content\n%s\nwant\n%s", tt.prompt, tt.style, got, tt.want)
		}
		if s, n := r.inputAudio(); s != 0.1 || n != int64(clip.Bytes) {
			t.Errorf("input audio %v s %d bytes, want 0.1 s %d", s, n, clip.Bytes)
		}
	}
	// Without audio the content stays a plain string.
	body, _, _ := Request{Kind: results.KindChat, Prompt: "plain"}.build()
	if !strings.Contains(string(body), `"content":"plain"`) {
		t.Errorf("body %s", body)
	}
}

func TestRequestAudioErrors(t *testing.T) {
	clip := testClip(t)
	for _, r := range []Request{
		{Kind: results.KindChat, Prompt: "x", InputAudio: clip, AudioInputStyle: "base64"},
		{Kind: results.KindChat, Prompt: "x", RefAudio: clip},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	// ExtraBody's task_type wins over the Base the clip implies.
	body, _, err := Request{Kind: results.KindSpeech, Prompt: "x", RefAudio: clip, RefText: "t", ExtraBody: map[string]any{"task_type": "Custom"}}.build()
	if err != nil || !strings.Contains(string(body), `"task_type":"Custom"`) || !strings.Contains(string(body), `"ref_text":"t"`) {
		t.Errorf("body %s, %v", body, err)
	}
}
