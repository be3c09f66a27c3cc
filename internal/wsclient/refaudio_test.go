package wsclient

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
)

// session.config carries the reference clip byte for byte as a data: URL,
// its transcript and task_type Base; the scenario's extra fields win.
func TestSpeechConfigRefAudio(t *testing.T) {
	file := wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, []byte{1, 2, 3, 4, 250, 251})
	clip, err := input.NewClip("ref.wav", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []map[string]any{nil, {"task_type": "VoiceDesign"}} {
		b, err := speechConfig(Session{SpeechAudio: SpeechStream, RefAudio: clip, RefText: "my voice", Extra: extra})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		url, _ := m["ref_audio"].(string)
		mt, sent, err := input.ParseDataURL(url)
		if err != nil || mt != "audio/wav" || !bytes.Equal(sent, file) {
			t.Errorf("ref_audio %q (%v) is not the file byte for byte", mt, err)
		}
		want := "Base"
		if extra != nil {
			want = "VoiceDesign"
		}
		if m["ref_text"] != "my voice" || m["task_type"] != want {
			t.Errorf("config %s", b)
		}
	}
}
