package simulator

import (
	"bytes"
	"testing"
)

// TestSpeechVoiceShapes: speech takes the voice as a name or as the object
// {"id": name} the OpenAI SDK sends, with the same audio; other shapes are
// a 400 naming the field.
func TestSpeechVoiceShapes(t *testing.T) {
	run := startSim(t, testConfig())
	speech := func(extra map[string]any) []byte {
		t.Helper()
		status, _, body := doSpeech(t, run, speechReq(input10, extra))
		if status != 200 {
			t.Fatalf("voice %v: status %d: %s", extra, status, body)
		}
		return body
	}
	byName := speech(map[string]any{"voice": "ryan"})
	if byObject := speech(map[string]any{"voice": map[string]any{"id": "ryan"}}); !bytes.Equal(byObject, byName) {
		t.Error(`voice {"id": "ryan"} gave other audio than voice "ryan"`)
	}
	if byDefault := speech(nil); bytes.Equal(byDefault, byName) {
		t.Error(`voice "ryan" gave the default voice's audio`)
	}
	for _, tc := range []struct {
		voice any
		got   string
	}{
		{5, "JSON number"},
		{[]string{"ryan"}, "JSON array"},
		{true, "JSON bool"},
		{map[string]any{"name": "ryan"}, "an object without a string id"},
		{map[string]any{"id": 7}, "an object without a string id"},
	} {
		status, typ, msg, param := apiErr(t, post(t, t.Context(), run.URL+"/v1/audio/speech", speechReq("hi", map[string]any{"voice": tc.voice})))
		want := `voice: expected a voice name or an object {"id": "<voice name>"}, got ` + tc.got
		if status != 400 || typ != "BadRequestError" || msg != want || param == nil || *param != "voice" {
			t.Errorf("voice %v: got %d %s %q param %v, want 400 %q param voice", tc.voice, status, typ, msg, param, want)
		}
	}
}

// TestChatVoiceIsTopLevel: chat speaks in the top-level voice (or speaker),
// as vLLM-Omni does, and ignores audio.voice, which it does not read.
func TestChatVoiceIsTopLevel(t *testing.T) {
	run := startSim(t, testConfig())
	pcm := func(extra map[string]any) []byte {
		t.Helper()
		return pcmOf(t, doChat(t, run, chatReq(prompt25, extra)).audio, true)
	}
	byDefault := pcm(nil)
	top := pcm(map[string]any{"voice": "ryan"})
	if bytes.Equal(top, byDefault) {
		t.Error(`top-level voice "ryan" gave the default voice's audio`)
	}
	if speaker := pcm(map[string]any{"speaker": "ryan"}); !bytes.Equal(speaker, top) {
		t.Error(`speaker "ryan" gave other audio than voice "ryan"`)
	}
	if nested := pcm(map[string]any{"audio": map[string]any{"format": "wav", "voice": "ryan"}}); !bytes.Equal(nested, byDefault) {
		t.Error(`audio.voice "ryan" changed the voice; the server does not read it`)
	}
}
