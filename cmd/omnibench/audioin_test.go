package main

// End-to-end tests of prompts that carry audio: the real command against a
// simulator behind a handler that keeps every request body, so the tests see
// exactly what went over the wire.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scenarios"
)

// bodyRecorder serves the simulator and keeps the bodies of the requests to
// path (at most 100, each read whole: the test's own files are small).
type bodyRecorder struct {
	next   http.Handler
	path   string
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == b.path {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		if len(b.bodies) < 100 {
			b.bodies = append(b.bodies, body)
		}
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	b.next.ServeHTTP(w, r)
}

func (b *bodyRecorder) taken() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.bodies)
}

// startRecordingSim starts a simulator (for model) behind a bodyRecorder of
// path.
func startRecordingSim(t *testing.T, model, path string) (*httptest.Server, *bodyRecorder) {
	t.Helper()
	cfg := runSimConfig(t)
	cfg.Model = model
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &bodyRecorder{next: sim.Handler(), path: path}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return srv, rec
}

// noiseWAV is seconds of seeded 16 kHz noise: bytes that a lossy copy or a
// re-encoding would not reproduce.
func noiseWAV(seconds float64, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	pcm := make([]byte, 2*int(seconds*16000))
	for i := range pcm {
		pcm[i] = byte(r.Uint32())
	}
	return wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, pcm)
}

// mp3Frames is n MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, 417 bytes
// of 1152 samples each) with seeded payloads.
func mp3Frames(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	var b []byte
	for range n {
		f := make([]byte, 417)
		for i := range f {
			f[i] = byte(r.Uint32())
		}
		copy(f, []byte{0xff, 0xfb, 0x90, 0x00})
		b = append(b, f...)
	}
	return b
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// chatPart is a content part of a captured chat body.
type chatPart struct {
	Type       string `json:"type"`
	Text       string `json:"text"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	AudioURL *struct {
		URL string `json:"url"`
	} `json:"audio_url"`
}

func TestRunCmdChatAudioPromptsByteForByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string][]byte{
		"q1.wav":     noiseWAV(0.25, 1),
		"sub/q2.mp3": mp3Frames(20, 2),
		// A WAV file under a FLAC name: the format comes from its bytes.
		"q3.flac": noiseWAV(0.5, 3),
	}
	formats := map[string]string{"q1.wav": "wav", "sub/q2.mp3": "mp3", "q3.flac": "wav"}
	durations := map[string]float64{"q1.wav": 0.25, "sub/q2.mp3": 20 * 1152 / 44100.0, "q3.flac": 0.5}
	texts := map[string]string{"q1.wav": "What did I just say?"}
	for name, data := range files {
		writeTestFile(t, filepath.Join(dir, name), data)
	}
	prompts := filepath.Join(dir, "voice.jsonl")
	writeTestFile(t, prompts, []byte(`{"prompt": "What did I just say?", "audio": "q1.wav"}`+"\n"+
		`{"audio": "sub/q2.mp3", "id": 2}`+"\n\n"+`{"audio": "`+filepath.Join(dir, "q3.flac")+`"}`+"\n"))

	for _, style := range []string{"input_audio", "audio_url"} {
		t.Run(style, func(t *testing.T) {
			srv, rec := startRecordingSim(t, "Qwen/Qwen3-Omni-30B-A3B-Instruct", "/v1/chat/completions")
			out := filepath.Join(t.TempDir(), "out.jsonl")
			args := []string{"--url", srv.URL, "--scenario", "chat-voice", "--prompts", prompts, "-n", "3", "-c", "1",
				"--warmup", "0", "--settle", "0", "--scrape", "off", "--out", out}
			if style == "audio_url" {
				args = append(args, "--audio-input-style", "audio_url")
			}
			_, stderr, code, err := execRun(t, args...)
			if code != 0 {
				t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
			}
			seen := map[string]bool{}
			for i, body := range rec.taken() {
				var b struct {
					Messages []struct {
						Content []chatPart `json:"content"`
					} `json:"messages"`
				}
				if err := json.Unmarshal(body, &b); err != nil || len(b.Messages) != 1 {
					t.Fatalf("body %d: %v (%d messages)", i, err, len(b.Messages))
				}
				var text string
				var sent []byte
				var format string
				for _, p := range b.Messages[0].Content {
					switch {
					case p.Type == "text":
						text = p.Text
					case p.Type == "input_audio" && style == "input_audio" && p.InputAudio != nil:
						sent, err = base64.StdEncoding.DecodeString(p.InputAudio.Data)
						format = p.InputAudio.Format
					case p.Type == "audio_url" && style == "audio_url" && p.AudioURL != nil:
						var mt string
						mt, sent, err = input.ParseDataURL(p.AudioURL.URL)
						format = map[string]string{"audio/wav": "wav", "audio/mpeg": "mp3"}[mt]
					default:
						t.Fatalf("body %d: unexpected part %+v", i, p)
					}
					if err != nil {
						t.Fatalf("body %d: %v", i, err)
					}
				}
				name := ""
				for n, data := range files {
					if bytes.Equal(sent, data) {
						name = n
					}
				}
				if name == "" {
					t.Fatalf("body %d: the audio sent (%d bytes) is none of the prompt files byte for byte", i, len(sent))
				}
				seen[name] = true
				if format != formats[name] || text != texts[name] {
					t.Errorf("%s: format %q text %q, want %q and %q", name, format, text, formats[name], texts[name])
				}
			}
			if len(seen) != 3 {
				t.Errorf("files sent: %v, want all three", seen)
			}
			_, recs, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if !r.OK() {
					t.Errorf("%s failed: %s", r.ID, r.Error)
				}
				ok := false
				for n, d := range durations {
					ok = ok || (r.InputAudioBytes == int64(len(files[n])) && abs(r.InputAudioS-d) < 1e-9)
				}
				if !ok {
					t.Errorf("%s: input audio %v s, %d bytes: not one of the files", r.ID, r.InputAudioS, r.InputAudioBytes)
				}
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestRunCmdSpeechCloningByteForByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ref := noiseWAV(0.4, 7)
	writeTestFile(t, filepath.Join(dir, "voices", "ref.wav"), ref)
	prompts := filepath.Join(dir, "clone.jsonl")
	writeTestFile(t, prompts, []byte(`{"prompt": "Say this in my voice.", "ref_audio": "voices/ref.wav", "ref_text": "This is how I sound."}`+"\n"))
	for _, scenario := range []string{"tts-long", "tts-short"} { // raw byte stream and SSE
		t.Run(scenario, func(t *testing.T) {
			srv, rec := startRecordingSim(t, "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice", "/v1/audio/speech")
			out := filepath.Join(t.TempDir(), "out.jsonl")
			_, stderr, code, err := execRun(t, "--url", srv.URL, "--no-probe", "--scenario", scenario, "--prompts", prompts,
				"--extra-body", `{"task_type": "Base"}`, "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0",
				"--scrape", "off", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
			}
			bodies := rec.taken()
			if len(bodies) != 2 {
				t.Fatalf("%d bodies, want 2", len(bodies))
			}
			for i, body := range bodies {
				var b struct {
					Input, RefAudio, RefText, TaskType string
				}
				var raw map[string]any
				if err := json.Unmarshal(body, &raw); err != nil {
					t.Fatal(err)
				}
				b.Input, _ = raw["input"].(string)
				b.RefAudio, _ = raw["ref_audio"].(string)
				b.RefText, _ = raw["ref_text"].(string)
				b.TaskType, _ = raw["task_type"].(string)
				mt, sent, err := input.ParseDataURL(b.RefAudio)
				if err != nil || mt != "audio/wav" || !bytes.Equal(sent, ref) {
					t.Errorf("body %d: ref_audio %q (%v) is not ref.wav byte for byte", i, mt, err)
				}
				if b.Input != "Say this in my voice." || b.RefText != "This is how I sound." || b.TaskType != "Base" {
					t.Errorf("body %d: %+v", i, b)
				}
			}
			_, recs, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if !r.OK() || r.InputAudioBytes != int64(len(ref)) || abs(r.InputAudioS-0.4) > 1e-9 {
					t.Errorf("%s: ok %v (%s), input audio %v s %d bytes, want 0.4 s %d bytes", r.ID, r.OK(), r.Error, r.InputAudioS, r.InputAudioBytes, len(ref))
				}
			}
		})
	}
}

// A prompt set whose audio cannot be used is unusable input: exit 2, the
// message naming the file and line (or the audio file of a directory),
// before any request is sent.
func TestRunCmdBadAudioPromptsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "ok.wav"), noiseWAV(0.1, 1))
	writeTestFile(t, filepath.Join(dir, "text.wav"), []byte("this is not audio at all"))
	if err := os.Mkdir(filepath.Join(dir, "adir.wav"), 0o755); err != nil {
		t.Fatal(err)
	}
	badDir := filepath.Join(dir, "set")
	writeTestFile(t, filepath.Join(badDir, "a.wav"), noiseWAV(0.1, 2))
	writeTestFile(t, filepath.Join(badDir, "b.mp3"), []byte("ID3 but not really"))
	emptyDir := filepath.Join(dir, "empty")
	writeTestFile(t, filepath.Join(emptyDir, "notes.txt"), []byte("no audio here"))
	jsonl := func(name, content string) string {
		p := filepath.Join(dir, name)
		writeTestFile(t, p, []byte(content))
		return p
	}
	okLine := `{"audio": "ok.wav"}` + "\n"
	tests := []struct {
		name   string
		args   []string
		want   []string
		sentOK bool
	}{
		{"missing file", []string{"--prompts", jsonl("missing.jsonl", okLine+"\n"+`{"prompt": "hi", "audio": "nope.wav"}`+"\n")},
			[]string{"missing.jsonl:3: audio:", "nope.wav", "no such file"}, false},
		{"unreadable file", []string{"--prompts", jsonl("adir.jsonl", `{"audio": "adir.wav"}`)},
			[]string{"adir.jsonl:1: audio:", "adir.wav"}, false},
		{"not audio", []string{"--prompts", jsonl("text.jsonl", okLine+`{"audio": "text.wav"}`)},
			[]string{"text.jsonl:2: audio:", "text.wav", "not WAV, FLAC or MP3"}, false},
		{"bad file in a directory", []string{"--prompts", badDir}, []string{filepath.Join(badDir, "b.mp3"), "mp3:"}, false},
		{"directory without audio", []string{"--prompts", emptyDir}, []string{emptyDir, "no audio files"}, false},
		{"question audio for speech", []string{"--scenario", "tts-short", "--prompts", jsonl("speech.jsonl", `{"prompt": "x", "audio": "ok.wav"}`)},
			[]string{"speech.jsonl:1: audio:", "ref_audio"}, false},
		{"cloning under CustomVoice", []string{"--scenario", "tts-short", "--prompts", jsonl("clone.jsonl", `{"prompt": "x", "ref_audio": "ok.wav"}`)},
			[]string{"clone.jsonl:1: ref_audio:", "task_type Base"}, false},
		{"bad style", []string{"--prompts", jsonl("style.jsonl", okLine), "--audio-input-style", "base64"},
			[]string{"--audio-input-style", "input_audio or audio_url"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := startRecordingSim(t, "Qwen/Qwen3-Omni-30B-A3B-Instruct", "/v1/chat/completions")
			args := append([]string{"--url", srv.URL, "-n", "1", "--settle", "0", "--scrape", "off"}, tt.args...)
			_, stderr, code, err := execRun(t, args...)
			if code != 2 {
				t.Fatalf("exit %d (%v), want 2\nstderr:\n%s", code, err, stderr)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if n := len(rec.taken()); n != 0 {
				t.Errorf("%d requests sent despite unusable input", n)
			}
		})
	}
}

// --prompts DIR: every audio file of the directory is one spoken prompt.
func TestRunCmdAudioDirectoryPrompts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := noiseWAV(0.2, 4), noiseWAV(0.3, 5)
	writeTestFile(t, filepath.Join(dir, "a.WAV"), a)
	writeTestFile(t, filepath.Join(dir, "b.wav"), b)
	writeTestFile(t, filepath.Join(dir, "README"), []byte("ignored"))
	srv, rec := startRecordingSim(t, "Qwen/Qwen3-Omni-30B-A3B-Instruct", "/v1/chat/completions")
	_, stderr, code, err := execRun(t, "--url", srv.URL, "--no-probe", "--prompts", dir, "-n", "4", "-c", "1", "--warmup", "0", "--settle", "0", "--scrape", "off")
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	counts := map[int]int{}
	for _, body := range rec.taken() {
		var m struct {
			Messages []struct {
				Content []chatPart `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &m); err != nil || len(m.Messages) != 1 || len(m.Messages[0].Content) != 1 {
			t.Fatalf("body %s: want one message with one (audio) part", body[:min(len(body), 200)])
		}
		data, _ := base64.StdEncoding.DecodeString(m.Messages[0].Content[0].InputAudio.Data)
		switch {
		case bytes.Equal(data, a):
			counts[0]++
		case bytes.Equal(data, b):
			counts[1]++
		default:
			t.Error("audio sent is neither file")
		}
	}
	if counts[0] != 2 || counts[1] != 2 {
		t.Errorf("files sent %v times, want each twice in 4 requests", counts)
	}
}

// The built-in voice-chat scenario: five spoken questions (builtin:voice),
// each sent once in five requests; the report shows the input audio beside
// the output audio.
func TestRunCmdVoiceChatScenario(t *testing.T) {
	t.Parallel()
	srv, rec := startRecordingSim(t, "Qwen/Qwen3-Omni-30B-A3B-Instruct", "/v1/chat/completions")
	set, err := scenarios.LoadPromptSet("builtin:voice")
	if err != nil {
		t.Fatal(err)
	}
	wantS, wantBytes := 0.0, int64(0)
	for _, p := range set {
		wantS += p.Audio.DurationS
		wantBytes += int64(p.Audio.Bytes)
	}
	stdout, stderr, code, err := execRun(t, "--url", srv.URL, "--no-probe", "--scenario", "voice-chat", "-n", "5", "--warmup", "0",
		"--format", "json", "--settle", "0", "--scrape", "off")
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	doc := decodeRunDocument(t, "stdout", []byte(stdout))
	a := doc.Summary.Audio
	if abs(a.InputDurationS-wantS) > 1e-9 || a.InputBytes != wantBytes || doc.Summary.Requests.Completed != 5 {
		t.Errorf("input audio %v s %d bytes (completed %d), want %v s %d bytes: each question once",
			a.InputDurationS, a.InputBytes, doc.Summary.Requests.Completed, wantS, wantBytes)
	}
	if n := len(rec.taken()); n != 5 {
		t.Errorf("%d requests, want 5", n)
	}
	table, _, code, _ := execRun(t, "--url", srv.URL, "--scenario", "voice-chat", "-n", "1", "--warmup", "0", "--settle", "0", "--scrape", "off")
	if code != 0 || !strings.Contains(table, "total input audio (s)") || !strings.Contains(table, "total audio (s)") {
		t.Errorf("exit %d; the table does not show input audio beside output audio:\n%s", code, table)
	}
}

// speech-ws voice cloning: the simulator decodes session.config's
// ref_audio (a malformed clip would end the session with "Invalid session
// config"), and the first utterance of each session counts the clip.
func TestRunCmdSpeechWSCloning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ref := noiseWAV(0.3, 9)
	writeTestFile(t, filepath.Join(dir, "ref.wav"), ref)
	prompts := filepath.Join(dir, "clone.jsonl")
	writeTestFile(t, prompts, []byte(`{"prompt": "First sentence.", "ref_audio": "ref.wav", "ref_text": "Reference."}`+"\n"+
		`{"prompt": "Second sentence.", "ref_audio": "ref.wav", "ref_text": "Reference."}`+"\n"))
	cfg := runSimConfig(t)
	cfg.Model = "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice"
	url := startRunSim(t, cfg)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	_, stderr, code, err := execRun(t, "--url", url, "--scenario", "tts-short", "--kind", "speech-ws", "--utterances-per-session", "2",
		"--prompts", prompts, "--extra-body", `{"task_type": "Base"}`, "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0",
		"--scrape", "off", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	_, recs, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, r := range recs {
		if !r.OK() {
			t.Errorf("%s: %s", r.ID, r.Error)
		}
		if r.WS != nil && r.WS.Index == 0 {
			first++
			if r.InputAudioBytes != int64(len(ref)) || abs(r.InputAudioS-0.3) > 1e-9 {
				t.Errorf("%s: input audio %v s %d bytes, want the clip's 0.3 s %d bytes", r.ID, r.InputAudioS, r.InputAudioBytes, len(ref))
			}
		} else if r.InputAudioBytes != 0 {
			t.Errorf("%s: a later utterance counts the session's clip again", r.ID)
		}
	}
	if first != 2 || len(recs) != 4 {
		t.Errorf("%d records, %d first utterances; want 4 and 2", len(recs), first)
	}
}
