package scenarios

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPromptSets(t *testing.T) {
	want := map[string]int{"short": 12, "medium": 10, "long": 8, "questions": 8, "mixed": 30, voiceSet: 5}
	seen := map[string]bool{}
	for _, set := range PromptSets() {
		ps, err := LoadPrompts("builtin:" + set)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != want[set] {
			t.Errorf("set %s has %d prompts, want %d", set, len(ps), want[set])
		}
		if set == "mixed" || set == voiceSet { // voice: audio only, no text
			continue
		}
		for _, p := range ps {
			if seen[p] {
				t.Errorf("prompt %q appears twice", p)
			}
			seen[p] = true
		}
	}
	// The sets differ in length: short < medium < long on average.
	avg := func(set string) float64 {
		ps, _ := LoadPrompts("builtin:" + set)
		n := 0
		for _, p := range ps {
			n += len(p)
		}
		return float64(n) / float64(len(ps))
	}
	if !(avg("short") < avg("medium") && avg("medium") < avg("long")) {
		t.Errorf("average lengths short %v, medium %v, long %v", avg("short"), avg("medium"), avg("long"))
	}
	if _, err := LoadPrompts("builtin:poems"); err == nil || !strings.Contains(err.Error(), "questions") {
		t.Errorf("unknown set error %v does not list the sets", err)
	}
}

func TestParseText(t *testing.T) {
	in := "\uFEFFfirst\r\n\n  second  \n\t\nthird"
	ps, err := ParseText("t.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"first", "second", "third"}; !slices.Equal(ps, want) {
		t.Errorf("got %q, want %q", ps, want)
	}
	if _, err := ParseText("t.txt", strings.NewReader("\n \n")); err == nil {
		t.Error("no error for a file of blank lines")
	}
	_, err = ParseText("t.txt", strings.NewReader("ok\nbad \xff\n"))
	var pe *PositionError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.File != "t.txt" {
		t.Errorf("invalid UTF-8: %v, want t.txt:2", err)
	}
}

func TestParseJSONL(t *testing.T) {
	long := strings.Repeat("a", 200_000) // beyond bufio.Scanner's 64 KiB
	in := `{"prompt": "hello", "id": 1}` + "\r\n\n" + `{"prompt":"` + long + `"}` + "\n" + `{"prompt": "line\nbreak"}`
	ps, err := ParseJSONL("p.jsonl", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 || ps[0] != "hello" || ps[1] != long || ps[2] != "line\nbreak" {
		t.Errorf("got %d prompts: %.20q", len(ps), ps)
	}
	bad := []struct {
		in    string
		line  int
		field string
	}{
		{`{"prompt": "ok"}` + "\n\n" + `{"prompt": "unterminated}`, 3, ""},
		{`{"prompt": "ok"}` + "\n" + `{"text": "no prompt"}`, 2, "prompt"},
		{`{"prompt": "  "}`, 1, "prompt"},
		{`{"prompt": 5}`, 1, ""},
		{`"just a string"`, 1, ""},
		{"\n\n", 0, ""},
	}
	for _, tt := range bad {
		_, err := ParseJSONL("p.jsonl", strings.NewReader(tt.in))
		var pe *PositionError
		if !errors.As(err, &pe) || pe.Line != tt.line || pe.Field != tt.field {
			t.Errorf("%q: %v, want p.jsonl:%d field %q", tt.in, err, tt.line, tt.field)
		} else if tt.line > 0 && !strings.HasPrefix(err.Error(), "p.jsonl:") {
			t.Errorf("%q: error %q does not start with the file and line", tt.in, err)
		}
	}
}

func TestLoadPromptsFiles(t *testing.T) {
	dir := t.TempDir()
	j := writeFile(t, dir, "a.jsonl", `{"prompt": "x"}`+"\n")
	n := writeFile(t, dir, "a.ndjson", `{"prompt": "y"}`+"\n")
	x := writeFile(t, dir, "a.txt", `{"prompt": "z"}`+"\n") // text: the line is the prompt
	for path, want := range map[string]string{j: "x", n: "y", x: `{"prompt": "z"}`} {
		ps, err := LoadPrompts(path)
		if err != nil || len(ps) != 1 || ps[0] != want {
			t.Errorf("%s: %q, %v; want [%q]", filepath.Base(path), ps, err, want)
		}
	}
	if _, err := LoadPrompts(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("no error for a missing file")
	}
	if _, err := LoadPrompts(writeFile(t, dir, "a.json", "[]")); err == nil {
		t.Error("no error for a .json file")
	}
}

func FuzzParseJSONL(f *testing.F) {
	f.Add(`{"prompt": "a"}`)
	f.Add("{\"prompt\": \"a\"}\r\n\n{\"prompt\":\"b\"}")
	f.Add(`{"prompt": null}`)
	f.Add("\xef\xbb\xbf{\"prompt\": \"bom\"}")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ParseJSONL("f.jsonl", strings.NewReader(in))
		if err == nil && len(ps) == 0 {
			t.Error("no error and no prompts")
		}
		ts, err := ParseText("f.txt", strings.NewReader(in))
		if err == nil && len(ts) == 0 {
			t.Error("text: no error and no prompts")
		}
	})
}
