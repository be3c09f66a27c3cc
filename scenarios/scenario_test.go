package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

func TestBuiltinsLoadAndValidate(t *testing.T) {
	names := Names()
	for _, want := range []string{"chat-voice", "speech-pcm", "tts-long", "tts-short"} {
		if !slices.Contains(names, want) {
			t.Errorf("built-in %q missing from %v", want, names)
		}
	}
	for _, name := range names {
		s, err := Get(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Name != name || s.Description == "" {
			t.Errorf("%s: name %q, description %q", name, s.Name, s.Description)
		}
		w, err := s.Workload()
		if err != nil {
			t.Errorf("%s: workload: %v", name, err)
			continue
		}
		if len(w.Prompts()) == 0 {
			t.Errorf("%s: no prompts", name)
		}
		if s.Load.Requests == 0 && s.Load.Duration == 0 {
			t.Errorf("%s: no default run length", name)
		}
	}
}

func TestBuiltinContents(t *testing.T) {
	chat, err := Get("chat-voice")
	if err != nil {
		t.Fatal(err)
	}
	if chat.Kind != results.KindChat || chat.Model != "Qwen/Qwen3-Omni-30B-A3B-Instruct" ||
		!slices.Equal(chat.Modalities, []string{"text", "audio"}) || chat.EndpointPath() != "/v1/chat/completions" {
		t.Errorf("chat-voice = %+v", chat)
	}
	pcm, err := Get("speech-pcm")
	if err != nil {
		t.Fatal(err)
	}
	if pcm.Kind != results.KindSpeech || pcm.AudioFormat != FormatPCM || pcm.PCMSampleRate != 24000 || pcm.EndpointPath() != "/v1/audio/speech" {
		t.Errorf("speech-pcm = %+v", pcm)
	}
	short, _ := Get("tts-short")
	if short.Kind != results.KindSpeechSSE {
		t.Errorf("tts-short kind %q", short.Kind)
	}
}

func TestGetUnknownListsNames(t *testing.T) {
	_, err := Get("nope")
	if err == nil {
		t.Fatal("no error")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
	if _, err := Open("nope"); err == nil || !strings.Contains(err.Error(), "tts-short") {
		t.Errorf("Open(nope) = %v, want the list of names", err)
	}
}

func TestGetReturnsFreshCopies(t *testing.T) {
	a, _ := Get("tts-short")
	a.ExtraBody["language"] = "German"
	a.Model = "changed"
	b, _ := Get("tts-short")
	if b.ExtraBody["language"] != "English" || b.Model == "changed" {
		t.Error("changing one Get result changed another")
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// positions returns the PositionErrors inside err.
func positions(t *testing.T, err error) []*PositionError {
	t.Helper()
	var out []*PositionError
	for _, e := range unjoin(err) {
		var pe *PositionError
		if !errors.As(e, &pe) {
			t.Fatalf("error %q is not a PositionError", e)
		}
		out = append(out, pe)
	}
	return out
}

const validYAML = `name: mine
kind: speech
model: m
prompts:
  source: builtin:short
load:
  concurrency: 3
  duration: 90s
`

func TestLoadValid(t *testing.T) {
	p := writeFile(t, t.TempDir(), "mine.yaml", validYAML)
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Load.Duration != 90*time.Second || s.Load.Concurrency != 3 {
		t.Errorf("load = %+v", s.Load)
	}
	if s.AudioFormat != FormatWAV {
		t.Errorf("audio_format default %q, want wav", s.AudioFormat)
	}
}

func TestLoadUnknownField(t *testing.T) {
	tests := []struct {
		yaml  string
		line  int
		field string
	}{
		{"name: x\nkind: speech\nlaod:\n  requests: 3\n", 3, "laod"},
		{"name: x\nkind: speech\nload:\n  requests: 3\n  concurency: 4\n", 5, "load.concurency"},
		{"name: x\nkind: speech\nprompts:\n  sauce: builtin:short\n", 4, "prompts.sauce"},
	}
	for _, tt := range tests {
		p := writeFile(t, t.TempDir(), "s.yaml", tt.yaml)
		_, err := Load(p)
		if err == nil {
			t.Fatalf("%q: no error", tt.yaml)
		}
		pes := positions(t, err)
		if len(pes) != 1 || pes[0].Line != tt.line || pes[0].Field != tt.field || pes[0].File != p {
			t.Errorf("%q: got %+v, want %s:%d field %s", tt.yaml, pes[0], p, tt.line, tt.field)
		}
		want := fmt.Sprintf("%s:%d: %s: unknown field", p, tt.line, tt.field)
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q does not start with %q", err, want)
		}
		t.Log(err)
	}
}

func TestLoadValidationErrorsHaveLines(t *testing.T) {
	src := `name: x
kind: tts
audio_format: pcm
modalities:
  - text
  - video
prompts:
  source: builtin:poems
extra_body:
  stream: false
headers:
  Authorization: Bearer secret
load:
  rate: -1
  burstiness: 0.5
slos:
  - audio_ttfp_p95<500
  - e2e_p99<2s
  - "errors<=1 x"
`
	p := writeFile(t, t.TempDir(), "bad.yaml", src)
	_, err := Load(p)
	if err == nil {
		t.Fatal("no error")
	}
	got := map[string]int{}
	for _, pe := range positions(t, err) {
		got[pe.Field] = pe.Line
	}
	want := map[string]int{
		"kind": 2, "pcm_sample_rate": 0, "modalities": 4, "modalities[1]": 6, "prompts.source": 8,
		"extra_body.stream": 10, "headers.Authorization": 12, "load.rate": 14,
		// What run refuses: burstiness without arrival gamma, a time
		// without its unit, text after the value.
		"load.burstiness": 15, "slos[0]": 17, "slos[2]": 19,
	}
	if _, ok := got["slos[1]"]; ok {
		t.Error("a valid SLO is reported")
	}
	for f, line := range want {
		if l, ok := got[f]; !ok || l != line {
			t.Errorf("field %s: line %d (reported %v), want %d", f, l, ok, line)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Error("the error repeats a header value")
	}
	t.Log(err)
}

func TestLoadSyntaxAndTypeErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		msg        string
		field      string
	}{
		{"type", "name: x\nkind: speech\nload:\n  requests: many\n", 4, "cannot unmarshal", "load.requests"},
		{"type in a list", "name: x\nkind: speech\nthresholds:\n  - 0.1\n  - abc\n", 5, "cannot unmarshal", "thresholds[1]"},
		{"type of a mapping", "name: x\nkind: speech\nmodel: [a, b]\n", 3, "cannot unmarshal !!seq into string", "model"},
		{"fraction in an integer", "name: x\nkind: speech\nload:\n  concurrency: 2\n  requests: 4.5\n", 5, "must be a whole number (got 4.5)", "load.requests"},
		{"unclosed flow list", "name: x\nkind: chat\nmodalities: [text, audio\nload:\n  requests: 3\n", 3, "did not find expected ',' or ']'", ""},
		{"item in a mapping", "name: x\nkind: chat\nmodel: m\n- y\n", 4, "did not find expected key", ""},
		{"duration int", "name: x\nkind: speech\nload:\n  duration: 30\n", 4, "time.Duration", "load.duration"},
		{"syntax", "name: x\nkind: a: b\n", 2, "mapping values are not allowed", ""},
		{"tab", "name: x\n\tkind: speech\n", 2, "tab character", ""},
		{"two documents", validYAML + "---\nname: y\n", 9, "second", ""},
		{"empty", "# nothing\n", 0, "empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "s.yaml", tt.yaml)
			_, err := Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			pe := positions(t, err)[0]
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) || pe.File != p || pe.Field != tt.field {
				t.Errorf("got %+v, want line %d, field %q and %q", pe, tt.line, tt.field, tt.msg)
			}
			t.Log(err)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

func TestLoadRelativePromptsAndDefaultName(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sub/p.txt", "one\n\ntwo\n")
	p := writeFile(t, dir, "sub/my-run.yml", "kind: chat\nprompts:\n  source: p.txt\n")
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "my-run" {
		t.Errorf("name %q, want my-run", s.Name)
	}
	ps, err := s.Prompts()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ps, []string{"one", "two"}) {
		t.Errorf("prompts %q", ps)
	}
	o, err := Open(p)
	if err != nil || o.Name != "my-run" {
		t.Errorf("Open(path) = %v, %v", o, err)
	}
}

func TestValidateFieldErrors(t *testing.T) {
	base := func() *Scenario {
		s, err := Get("speech-pcm")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		field string
		mut   func(s *Scenario)
	}{
		{"name", func(s *Scenario) { s.Name = "bad name" }},
		{"kind", func(s *Scenario) { s.Kind = "" }},
		{"endpoint", func(s *Scenario) { s.Endpoint = "v1/speech" }},
		{"audio_format", func(s *Scenario) { s.AudioFormat = "mp3" }},
		{"pcm_sample_rate", func(s *Scenario) { s.PCMSampleRate = 0 }},
		{"pcm_sample_rate", func(s *Scenario) { s.PCMSampleRate = 10 }},
		{"modalities", func(s *Scenario) { s.Modalities = []string{"audio"} }},
		{"modalities[1]", func(s *Scenario) { s.Kind = results.KindChat; s.Modalities = []string{"audio", "audio"} }},
		{"prompts.source", func(s *Scenario) { s.PromptSpec.Source = "" }},
		{"prompts.source", func(s *Scenario) { s.PromptSpec.Source = "prompts.json" }},
		{"extra_body.model", func(s *Scenario) { s.ExtraBody["model"] = "x" }},
		{"extra_body.weird", func(s *Scenario) { s.ExtraBody["weird"] = map[any]any{1: "x"} }},
		{"headers.Content-Length", func(s *Scenario) { s.Headers = map[string]string{"Content-Length": "1"} }},
		{"headers.bad name", func(s *Scenario) { s.Headers = map[string]string{"bad name": "1"} }},
		{"headers.X-A", func(s *Scenario) { s.Headers = map[string]string{"X-A": "a\r\nb"} }},
		{"load.concurrency", func(s *Scenario) { s.Load.Concurrency = -1 }},
		{"load.arrival", func(s *Scenario) { s.Load.Arrival = "uniform" }},
		{"load.burstiness", func(s *Scenario) { s.Load.Burstiness = -2 }},
		{"load.requests", func(s *Scenario) { s.Load.Requests = -2 }},
		{"load.duration", func(s *Scenario) { s.Load.Duration = -time.Second }},
		{"load.warmup", func(s *Scenario) { s.Load.Warmup = -1 }},
		{"thresholds[1]", func(s *Scenario) { s.Thresholds = []float64{0.1, 0} }},
		{"slos[0]", func(s *Scenario) { s.SLOs = []string{" "} }},
		{"percentiles[0]", func(s *Scenario) { s.Percentiles = []float64{0} }},
	}
	for _, tt := range tests {
		s := base()
		tt.mut(s)
		err := s.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%s: Validate() = %v", tt.field, err)
		}
	}
	if err := base().Validate(); err != nil {
		t.Errorf("unchanged built-in: %v", err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	s, _ := Get("tts-short")
	s.ExtraBody["nested"] = map[string]any{"k": []any{1, 2}}
	c := s.Clone()
	c.ExtraBody["nested"].(map[string]any)["k"].([]any)[0] = 99
	c.Thresholds[0] = 5
	if s.ExtraBody["nested"].(map[string]any)["k"].([]any)[0] != 1 || s.Thresholds[0] != 0.1 {
		t.Error("Clone shares state with the original")
	}
}

// realtime-audio: its default prompts are the spoken ones, it loads as a
// workload whose every request carries audio, and it refuses extra_body
// (plain /v1/realtime would ignore it without a word).
func TestRealtimeAudioScenario(t *testing.T) {
	s := &Scenario{Name: "rta", Kind: results.KindRealtimeAudio, Model: "m"}
	s.applyDefaults()
	if s.PromptSpec.Source != "builtin:voice" || s.EndpointPath() != "/v1/realtime" {
		t.Fatalf("prompts %q, endpoint %q", s.PromptSpec.Source, s.EndpointPath())
	}
	w, err := s.Workload()
	if err != nil {
		t.Fatal(err)
	}
	for seq := range 5 {
		if r := w.Request(seq, 1); r.InputAudio == nil || r.InputAudio.SampleRate != 16000 {
			t.Fatalf("request %d: input audio %+v", seq, r.InputAudio)
		}
	}
	s.ExtraBody = map[string]any{"task_type": "Base"}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "extra_body") {
		t.Errorf("extra_body accepted: %v", err)
	}
}

func TestSetKindDropsChatOnlyFields(t *testing.T) {
	sc, err := Get("chat-voice")
	if err != nil {
		t.Fatal(err)
	}
	notes := sc.SetKind(results.KindSpeech)
	if sc.Kind != results.KindSpeech || sc.Modalities != nil || sc.EndpointPath() != "/v1/audio/speech" {
		t.Errorf("after SetKind: kind %q, modalities %v, endpoint %q", sc.Kind, sc.Modalities, sc.EndpointPath())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "dropped the scenario's chat-only field modalities [text, audio]") {
		t.Errorf("notes %q", notes)
	}
	if err := sc.Validate(); err != nil {
		t.Errorf("chat-voice with --kind speech does not validate: %v", err)
	}
	if _, err := sc.Workload(); err != nil {
		t.Errorf("chat-voice with --kind speech has no workload: %v", err)
	}
	if notes := sc.SetKind(results.KindSpeech); notes != nil {
		t.Errorf("setting the same kind again: notes %q", notes)
	}
	sc.Endpoint = "/custom/tts"
	if notes := sc.SetKind(results.KindChat); len(notes) != 1 || !strings.Contains(notes[0], "endpoint /custom/tts") || sc.Endpoint != "" {
		t.Errorf("endpoint override: notes %q, endpoint %q", notes, sc.Endpoint)
	}
}

// A duration-only open loop that load cannot schedule is refused by the
// checker, as run refuses it.
func TestLoadRefusesUnschedulableLoad(t *testing.T) {
	p := writeFile(t, t.TempDir(), "big.yaml", "name: x\nkind: chat\nload:\n  rate: 20000000\n  duration: 10m\n")
	_, err := Load(p)
	if err == nil {
		t.Fatal("no error")
	}
	if pe := positions(t, err)[0]; pe.Field != "load.rate" || pe.Line != 4 || !strings.Contains(pe.Msg, "more than the limit") {
		t.Errorf("got %+v", pe)
	}
}
