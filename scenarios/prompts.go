package scenarios

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

const builtinPrefix = "builtin:"

// PromptSets lists the built-in prompt set names, for "builtin:<set>".
func PromptSets() []string {
	return []string{"short", "medium", "long", "mixed", "questions", voiceSet}
}

// voiceSet is the built-in set of spoken questions: the WAV files of
// prompts/voice (made by prompts/voice/generate.sh).
const voiceSet = "voice"

// mixedSets are the sets "mixed" concatenates.
func mixedSets() []string { return []string{"short", "medium", "long"} }

func isBuiltinSource(src string) bool { return strings.HasPrefix(src, builtinPrefix) }

// checkPromptSource checks the syntax of a prompts source without reading a file.
func checkPromptSource(src string) error {
	switch {
	case src == "":
		return fmt.Errorf("required: builtin:<set> (%s) or a file path", strings.Join(PromptSets(), ", "))
	case isBuiltinSource(src):
		if set := strings.TrimPrefix(src, builtinPrefix); !slices.Contains(PromptSets(), set) {
			return fmt.Errorf("unknown built-in prompt set %q (available: %s)", set, strings.Join(PromptSets(), ", "))
		}
	case strings.EqualFold(filepath.Ext(src), ".json"):
		return fmt.Errorf("%s: a .json file is not read; use JSONL (.jsonl, one {\"prompt\": ...} per line) or plain text", src)
	}
	return nil
}

// Prompts loads the prompts of the scenario's source and returns their
// texts ("" for a prompt that is only audio).
func (s *Scenario) Prompts() ([]string, error) {
	return LoadPrompts(s.PromptSpec.Source)
}

// PromptSet loads the prompts of the scenario's source with their audio.
func (s *Scenario) PromptSet() ([]Prompt, error) {
	return LoadPromptSet(s.PromptSpec.Source)
}

// LoadPrompts loads a prompts source (see LoadPromptSet) and returns the
// texts of its prompts ("" for a prompt that is only audio).
func LoadPrompts(src string) ([]string, error) {
	set, err := LoadPromptSet(src)
	if err != nil {
		return nil, err
	}
	return texts(set), nil
}

// LoadPromptSet loads a prompts source: "builtin:<set>", a directory (its
// audio files, one prompt each), or a file path (JSONL when it ends in
// .jsonl or .ndjson, else plain text). Every audio file is read, checked and
// base64-encoded here, once.
func LoadPromptSet(src string) ([]Prompt, error) {
	if err := checkPromptSource(src); err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	if isBuiltinSource(src) {
		set := strings.TrimPrefix(src, builtinPrefix)
		if set == voiceSet {
			return loadAudioDir(builtinFS, "prompts/voice", builtinPrefix+"prompts/voice")
		}
		ps, err := builtinPrompts(set)
		return textSet(builtinPrefix+set, ps), err
	}
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		return loadAudioDir(os.DirFS(src), ".", src)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	defer f.Close()
	switch strings.ToLower(filepath.Ext(src)) {
	case ".jsonl", ".ndjson":
		return parseJSONLSet(src, f)
	default:
		ps, err := ParseText(src, f)
		return textSet(src, ps), err
	}
}

func builtinPrompts(set string) ([]string, error) {
	sets := []string{set}
	if set == "mixed" {
		sets = mixedSets()
	}
	var all []string
	for _, name := range sets {
		file := path.Join("prompts", name+".txt")
		data, err := builtinFS.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("prompts: built-in set %q: %w", name, err)
		}
		ps, err := ParseText(builtinPrefix+file, bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}

// ParseText reads one prompt per line, skipping blank lines; surrounding
// whitespace is trimmed. file names the input in errors.
func ParseText(file string, r io.Reader) ([]string, error) {
	var prompts []string
	err := eachLine(file, r, func(line int, text string) error {
		if t := strings.TrimSpace(text); t != "" {
			prompts = append(prompts, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(prompts) == 0 {
		return nil, &PositionError{File: file, Msg: "no prompts (every line is blank)"}
	}
	return prompts, nil
}

// ParseJSONL reads one JSON object per line and returns the prompt texts;
// see parseJSONLSet for the fields. Audio files named by a line are read
// relative to file's directory.
func ParseJSONL(file string, r io.Reader) ([]string, error) {
	set, err := parseJSONLSet(file, r)
	if err != nil {
		return nil, err
	}
	return texts(set), nil
}

// eachLine calls fn for each line (1-based number, text without the line
// ending). Lines have no length limit; invalid UTF-8 is an error; a UTF-8
// byte order mark at the start is dropped.
func eachLine(file string, r io.Reader, fn func(line int, text string) error) error {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
		if text == "" && err != nil { // EOF with nothing left
			return nil
		}
		text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
		if line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		if !utf8.ValidString(text) {
			return &PositionError{File: file, Line: line, Msg: "invalid UTF-8"}
		}
		if ferr := fn(line, text); ferr != nil {
			return ferr
		}
		if err != nil { // last line without a newline
			return nil
		}
	}
}
