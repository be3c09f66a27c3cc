package simulator

import (
	"testing"
)

func FuzzParseChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio"}]}],"modalities":["audio"],"audio":{"format":"pcm16"}}`,
		`{"messages":[]}`, `{"messages":null}`, `{}`, `[]`, `null`, ``, `{"messages":[1]}`,
		`{"messages":[{"role":"user","content":{"x":1}}]}`, `{"modalities":["image"],"messages":[{"role":"u","content":null}]}`,
		`{"messages":[{"role":"user","content":"x"}],"audio":{"format":"ogg"}}`,
		`{"messages":[{"role":"user","content":"x"}],"audio":{"format":"wav","voice":"v"},"speaker":"s"}`,
		`{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=","format":"wav"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"audio_url","audio_url":{"url":"data:audio/wav;base64,UklGRg=="}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := parseChatRequest(body)
		if e != nil {
			if e.Status != 400 || e.Message == "" || e.Type != "BadRequestError" {
				t.Fatalf("bad error %+v", e)
			}
			return
		}
		if req.format != "wav" && req.format != "pcm" {
			t.Fatalf("format %q accepted", req.format)
		}
		if !req.text && !req.audio {
			t.Fatal("no output modality")
		}
		if req.reply == "" || req.voice == "" {
			t.Fatalf("empty reply %q or voice %q", req.reply, req.voice)
		}
	})
}

func FuzzParseSpeechRequest(f *testing.F) {
	for _, s := range []string{
		`{"input":"hello"}`, `{"input":"hi","stream":true,"response_format":"pcm"}`,
		`{"input":"hi","stream_format":"audio","speed":1}`, `{"input":"hi","speed":0.25,"response_format":"wav"}`,
		`{"input":""}`, `{"input":5}`, `{}`, `{"input":"x","speed":"fast"}`, `{"input":"x","stream_format":"ws"}`,
		`{"input":"x","stream":true,"speed":2}`, `{"input":"x","response_format":"aac"}`,
		`{"input":"x","ref_audio":"data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=","ref_text":"y"}`,
		`{"input":"x","ref_audio":"https://example.com/a.wav"}`,
		`{"input":"x","voice":{"id":"ryan"}}`, `{"input":"x","voice":{"id":""},"speaker":"s"}`, `{"input":"x","voice":{"id":null}}`,
		`{"input":"x","voice":[1]}`, `{"input":"x","voice":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := parseSpeechRequest(body)
		if e != nil {
			if e.Status != 400 || e.Message == "" || e.Type != "BadRequestError" {
				t.Fatalf("bad error %+v", e)
			}
			return
		}
		if req.format != "wav" && req.format != "pcm" {
			t.Fatalf("format %q accepted", req.format)
		}
		if !(req.speed >= 0.25 && req.speed <= 4) || req.mode != speechFile && req.speed != 1 {
			t.Fatalf("speed %v in mode %d accepted", req.speed, req.mode)
		}
		if req.input == "" || req.voice == "" {
			t.Fatalf("empty input %q or voice %q accepted", req.input, req.voice)
		}
	})
}
