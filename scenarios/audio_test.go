package scenarios

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
)

func testWAV(seconds float64) string {
	return string(wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, make([]byte, 2*int(seconds*16000))))
}

func TestPromptSetWithAudio(t *testing.T) {
	dir := t.TempDir()
	q := testWAV(1.5)
	writeFile(t, dir, "a/q.wav", q)
	writeFile(t, dir, "ref.wav", testWAV(0.5))
	p := writeFile(t, dir, "a/p.jsonl", `{"prompt": "text only"}`+"\n"+
		`{"audio": "q.wav"}`+"\n"+
		`{"prompt": "both", "audio": "q.wav"}`+"\n"+
		`{"prompt": "clone", "ref_audio": "../ref.wav", "ref_text": "the transcript"}`+"\n")
	set, err := LoadPromptSet(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 4 {
		t.Fatalf("%d prompts", len(set))
	}
	if set[0].Audio != nil || set[0].Text != "text only" {
		t.Errorf("line 1: %+v", set[0])
	}
	a := set[1].Audio
	if a == nil || set[1].Text != "" || a.Format != "wav" || a.DurationS != 1.5 || a.Bytes != len(q) || set[1].Line != 2 {
		t.Fatalf("line 2: %+v %+v", set[1], a)
	}
	if got, _ := base64.StdEncoding.DecodeString(a.Base64); string(got) != q {
		t.Error("the clip's base64 is not the file")
	}
	if c := set[3]; c.RefAudio == nil || c.RefAudio.DurationS != 0.5 || c.RefText != "the transcript" {
		t.Errorf("line 4: %+v", c)
	}
	// The texts: "" for the audio-only prompt.
	if ts, _ := LoadPrompts(p); strings.Join(ts, "|") != "text only||both|clone" {
		t.Errorf("texts %q", ts)
	}
}

func TestPromptSetAudioErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ok.wav", testWAV(0.1))
	big := filepath.Join(dir, "big.wav")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxAudioFileBytes+1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	tests := []struct {
		line, field, want string
	}{
		{`{"audio": ""}`, "audio", "empty path"},
		{`{"audio": "missing.wav"}`, "audio", "no such file"},
		{`{"audio": "big.wav"}`, "audio", "16 MiB cap"},
		{`{"prompt": "x", "ref_text": "y"}`, "ref_text", "without ref_audio"},
		{`{"id": 3}`, "prompt", "\"audio\" file"},
		{`{"prompt": "x", "audio": 5}`, "", "want a JSON object"},
	}
	for _, tt := range tests {
		p := writeFile(t, dir, "p.jsonl", `{"audio": "ok.wav"}`+"\n"+tt.line+"\n")
		_, err := LoadPromptSet(p)
		var pe *PositionError
		if !errors.As(err, &pe) || pe.Line != 2 || pe.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want line 2 field %q saying %q", tt.line, err, tt.field, tt.want)
		}
	}
}

func TestBuiltinVoiceSet(t *testing.T) {
	set, err := LoadPromptSet("builtin:voice")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range set {
		if p.Audio == nil || p.Audio.Format != "wav" || p.Audio.SampleRate != 16000 || p.Audio.DurationS < 1 || p.Audio.DurationS > 10 {
			t.Errorf("%s: %+v", p.File, p.Audio)
			continue
		}
		total += p.Audio.Bytes
	}
	if len(set) != 5 || total > 600<<10 {
		t.Errorf("%d prompts, %d bytes: want 5 short questions, a few hundred KB", len(set), total)
	}
	s, err := Get("voice-chat")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Workload()
	if err != nil {
		t.Fatal(err)
	}
	r := w.Request(3, 1)
	if r.Kind != results.KindChat || r.InputAudio == nil || r.Prompt != "" || r.RefAudio != nil {
		t.Errorf("request %+v", r)
	}
}

func TestWorkloadAudioStyleAndKinds(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "q.wav", testWAV(0.2))
	chat := writeFile(t, dir, "chat.jsonl", `{"prompt": "hi", "audio": "q.wav"}`)
	s, _ := Get("chat-voice")
	s.PromptSpec.Source = chat
	s.AudioInputStyle = AudioStyleURL
	w, err := s.Workload()
	if err != nil {
		t.Fatal(err)
	}
	if r := w.Request(0, 1); r.AudioInputStyle != AudioStyleURL || r.InputAudio == nil || r.Prompt != "hi" {
		t.Errorf("request %+v", r)
	}
	s.AudioInputStyle = "mp3"
	var fe *FieldError
	if err := s.Validate(); !errors.As(err, &fe) || fe.Field != "audio_input_style" {
		t.Errorf("bad style: %v", err)
	}
	// Speech takes no question audio; chat takes no reference clip.
	sp, _ := Get("tts-short")
	sp.PromptSpec.Source = chat
	if _, err := sp.Workload(); err == nil || !strings.Contains(err.Error(), "chat.jsonl:1: audio:") {
		t.Errorf("speech with question audio: %v", err)
	}
	clone := writeFile(t, dir, "clone.jsonl", `{"prompt": "x", "ref_audio": "q.wav"}`)
	s.AudioInputStyle = ""
	s.PromptSpec.Source = clone
	if _, err := s.Workload(); err == nil || !strings.Contains(err.Error(), "clone.jsonl:1: ref_audio:") {
		t.Errorf("chat with a reference clip: %v", err)
	}
	sp.PromptSpec.Source = clone
	sp.ExtraBody["task_type"] = "Base"
	if w, err := sp.Workload(); err != nil || w.Request(0, 1).RefAudio == nil {
		t.Errorf("cloning under Base: %v", err)
	}
	sp.ExtraBody["ref_audio"] = "data:audio/wav;base64,AAAA"
	if _, err := sp.Workload(); err == nil || !strings.Contains(err.Error(), "extra_body.ref_audio would replace it") {
		t.Errorf("extra_body.ref_audio beside a prompt's clip: %v", err)
	}
}

// The cap on a whole prompt set's audio: the file that crosses it is named.
func TestAudioBudgetTotalCap(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "q.wav", testWAV(0.01)) // 364 bytes
	b := audioBudget{used: MaxAudioTotalBytes - 364}
	if _, err := b.diskClip(filepath.Join(dir, "p.jsonl"), "q.wav"); err != nil {
		t.Fatalf("a set exactly at the cap: %v", err)
	}
	if _, err := b.diskClip(filepath.Join(dir, "p.jsonl"), "q.wav"); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "128 MiB cap") {
		t.Errorf("beyond the cap: %v", err)
	}
}
