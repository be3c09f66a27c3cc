package client

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// bodiesOf encodes r's body both ways: as the structs of requests without
// ExtraBody and as the map ExtraBody is merged into.
func bodiesOf(t testing.TB, r Request) (plain, merged []byte) {
	t.Helper()
	format, _ := normalizeFormat(r.AudioFormat)
	var content any
	if r.Kind == results.KindChat {
		var err error
		if content, err = r.userContent(); err != nil {
			t.Fatal(err)
		}
	}
	plain, err := json.Marshal(r.plainBody(format, content))
	if err != nil {
		t.Fatal(err)
	}
	if merged, err = json.Marshal(r.mergedBody(format, content)); err != nil {
		t.Fatal(err)
	}
	return plain, merged
}

// TestPlainBodyIsTheMap checks that a request without ExtraBody gets the
// very bytes the map would give, for every kind and optional field.
func TestPlainBodyIsTheMap(t *testing.T) {
	clip := testClip(t)
	for name, r := range map[string]Request{
		"chat":                   {Kind: results.KindChat, Prompt: "Hello"},
		"chat, every field":      {Kind: results.KindChat, Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct", Voice: "Ethan", Prompt: "Say <b>&</b> \u2028 \xff", AudioFormat: "pcm16", Modalities: []string{"text", "audio"}},
		"chat, empty modalities": {Kind: results.KindChat, Prompt: "x", Modalities: []string{}},
		"chat, input audio":      {Kind: results.KindChat, Prompt: "What did I say?", InputAudio: clip},
		"chat, audio url":        {Kind: results.KindChat, InputAudio: clip, AudioInputStyle: "audio_url"},
		"speech":                 {Kind: results.KindSpeech, Prompt: ""},
		"speech, every field":    {Kind: results.KindSpeech, Model: "Qwen/Qwen3-TTS", Voice: "Vivian", Prompt: "Hi", AudioFormat: "pcm", RefAudio: clip, RefText: "reference"},
		"speech, ref audio":      {Kind: results.KindSpeech, Prompt: "Hi", RefAudio: clip},
		"speech sse":             {Kind: results.KindSpeechSSE, Model: "m", Prompt: "Hi", AudioFormat: "wav"},
		"speech sse, ref audio":  {Kind: results.KindSpeechSSE, Prompt: "Hi", RefAudio: clip, RefText: "t"},
	} {
		if plain, merged := bodiesOf(t, r); !bytes.Equal(plain, merged) {
			t.Errorf("%s:\nplain  %.300s\nmerged %.300s", name, plain, merged)
		}
	}
}

// FuzzPlainBodyIsTheMap is TestPlainBodyIsTheMap over fuzzed text: any
// prompt, model, voice and modality bytes (invalid UTF-8, HTML characters,
// line separators) are escaped alike both ways.
func FuzzPlainBodyIsTheMap(f *testing.F) {
	f.Add("Hello", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "Ethan", "audio", uint8(0))
	f.Add("<script>&\u2028\u2029\x00\xff\"\\", "", "", "", uint8(1))
	f.Add("", "m", "", "text", uint8(2))
	f.Fuzz(func(t *testing.T, prompt, model, voice, modality string, kind uint8) {
		r := Request{Kind: []string{results.KindChat, results.KindSpeech, results.KindSpeechSSE}[kind%3],
			Prompt: prompt, Model: model, Voice: voice}
		if modality != "" {
			r.Modalities = []string{"text", modality}
		}
		if plain, merged := bodiesOf(t, r); !bytes.Equal(plain, merged) {
			t.Fatalf("%+v:\nplain  %s\nmerged %s", r, plain, merged)
		}
	})
}

// BenchmarkRequestBody compares the two encodings of a chat-voice body.
func BenchmarkRequestBody(b *testing.B) {
	r := Request{Kind: results.KindChat, Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct", Prompt: "Tell me about the weather in Paris.",
		Modalities: []string{"text", "audio"}}
	for _, tc := range []struct {
		name string
		body func() any
	}{
		{"struct", func() any { return r.plainBody("wav", r.Prompt) }},
		{"map", func() any { return r.mergedBody("wav", r.Prompt) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(tc.body()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
