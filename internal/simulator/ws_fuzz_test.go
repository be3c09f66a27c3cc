package simulator

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSpeechSessionConfig: any session.config either parses into a config
// that obeys the documented constraints or is refused; it never panics.
func FuzzSpeechSessionConfig(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.config","model":"m","voice":"vivian","task_type":"CustomVoice","response_format":"pcm","stream_audio":true}`,
		`{"type":"session.config","speed":4,"response_format":"mp3"}`,
		`{"type":"session.config","stream_audio":true,"response_format":"wav"}`,
		`{"type":"session.config","speaker_embedding":[0.1,0.2],"ref_audio":"x"}`,
		`{"type":"session.config","voice":{"id":"v"}}`,
		`{"type":"session.config","max_new_tokens":0}`,
		`{}`, `[]`, `null`, `{"speed":"fast"}`,
	} {
		f.Add([]byte(s))
	}
	s, err := New(testConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := s.parseSpeechSessionConfig(data)
		if err != nil {
			return
		}
		if cfg.speed < 0.25 || cfg.speed > 4 {
			t.Fatalf("speed %v accepted", cfg.speed)
		}
		if cfg.streamAudio && (cfg.format != "pcm" || cfg.speed != 1) {
			t.Fatalf("stream_audio with %s at speed %v accepted", cfg.format, cfg.speed)
		}
		switch cfg.format {
		case "wav", "pcm", "flac", "mp3", "opus":
		default:
			t.Fatalf("format %q accepted", cfg.format)
		}
	})
}

// FuzzRealtimeClientEvent: the simulator's reading of a client event and
// of a session.update never panics.
func FuzzRealtimeClientEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.update","session":{"model":"m","turn_detection":null,"idle_timeout_s":5,"extra_body":{"audio":{"format":"pcm"}}}}`,
		`{"type":"conversation.item.create","item":{"id":"item_u0","type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
		`{"type":"playback.ack","response_id":"r","item_id":"item_r","played_ms":2140,"committed_ms":2140}`,
		`{"type":"session.update","output_audio_format":7}`,
		`{"type":"conversation.item.create","item":"x"}`,
		`{"type":"session.create","session_id":"tts-1","session":{"response_format":"wav","playback_commit_policy":"ack_only"}}`,
		`{"type":"session.create","session":{"response_format":["wav"]}}`,
		`{"type":"input.text.append","text":"Hello."}`,
		`{"type":"input.commit","response_create":false}`,
		`{"type":"input.commit","response_create":"yes"}`,
		`{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := parseRealtimeEvent(data)
		if err != nil {
			return
		}
		if u, code, _ := parseSessionUpdate(ev); code == "" {
			if td := strings.TrimSpace(string(u.TurnDetection)); td != "" && td != "null" {
				t.Fatalf("turn_detection %s accepted", td)
			}
			for _, raw := range []*json.RawMessage{u.OutputAudioFormat, u.ResponseFormat} {
				var f string
				if raw != nil && (json.Unmarshal(*raw, &f) != nil || !outputAudioFormat(f)) {
					t.Fatalf("output format %s accepted", *raw)
				}
			}
		}
		if it, texts, ok := parseItem(ev); ok {
			if it.Type != "message" || len(texts) > len(it.Content) {
				t.Fatalf("item %+v with %d texts accepted", it, len(texts))
			}
		}
		if c := contentJSON(ev.Item); !json.Valid(c) {
			t.Fatalf("content %q is not JSON", c)
		}
	})
}

// FuzzPlainRealtimeEvent: any plain realtime client event either parses or
// is refused, and an append is either whole PCM16 samples or refused with
// one of the endpoint's codes; it never panics.
func FuzzPlainRealtimeEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.update","model":"Qwen/Qwen3-Omni-30B-A3B-Instruct"}`,
		`{"type":"input_audio_buffer.commit","final":false}`,
		`{"type":"input_audio_buffer.append","audio":"AAAAAA=="}`,
		`{"type":"input_audio_buffer.append","audio":"AAA="}`,
		`{"type":"input_audio_buffer.append","audio":null}`,
		`{"type":"input_audio_buffer.commit","final":"yes"}`,
		`{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := parsePlainEvent(data)
		if err != nil {
			return
		}
		pcm, code, msg := appendPCM(ev)
		switch code {
		case "":
			if len(pcm) == 0 || len(pcm)%2 != 0 || msg != "" {
				t.Fatalf("append of %d bytes accepted", len(pcm))
			}
		case "invalid_audio", "processing_error":
			if pcm != nil || msg == "" {
				t.Fatalf("refusal %s without a message or with audio", code)
			}
		default:
			t.Fatalf("code %q", code)
		}
	})
}
