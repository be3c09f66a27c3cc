package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/simulator"
)

// TestREADMERunExamples runs every `omnibench run` command line of the
// README against a simulator serving what `omnibench serve` serves (its
// default model; fast timing), as written except for the host, tiny bounds
// and output files in a temporary directory.
func TestREADMERunExamples(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := runExamples(string(data))
	if len(examples) < 4 {
		t.Fatalf("found only %d `omnibench run` lines in the README: the extraction is broken", len(examples))
	}
	cfg := runSimConfig(t)
	cfg.Model = simulator.DefaultConfig().Model // what `omnibench serve` serves
	url := startRunSim(t, cfg)
	for _, line := range examples {
		args, err := shellWords(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		args = shrinkExample(args, url, t.TempDir())
		_, stderr, code, err := execRun(t, args...)
		if code != 0 {
			t.Errorf("README: %s\nran as omnibench run %q: exit %d (%v)\nstderr:\n%s", line, args, code, err, stderr)
		}
	}
}

// runExamples returns the `omnibench run` command lines of a Markdown text
// (backslash continuations joined), without the program and command names.
func runExamples(text string) []string {
	text = strings.ReplaceAll(text, "\\\n", " ")
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^(?:\$ )?(?:\./)?omnibench run (.*)$`).FindAllStringSubmatch(text, -1) {
		line, _, _ := strings.Cut(m[1], " # ") // a trailing comment
		out = append(out, strings.TrimSpace(line))
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for the quoting
// the manual uses: words separated by blanks, 'single' and "double" quotes.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, os.ErrInvalid
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// shrinkExample points an example at url, bounds it to eight measured
// requests, as many as the README's shards (a duration becomes an upper bound the count reaches first) and
// writes its files under dir.
func shrinkExample(args []string, url, dir string) []string {
	files := []string{"--out", "--summary", "--html", "--junit", "--save-scrapes", "--save-audio", "--metrics-out"}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		if i+1 >= len(out) {
			break
		}
		switch a := out[i]; {
		case a == "--url":
			out[i+1] = url
		case a == "-n":
			out[i+1] = "8"
		case a == "-d":
			out[i+1] = "30s"
		case slices.Contains(files, a):
			out[i+1] = filepath.Join(dir, out[i+1])
		}
	}
	if !slices.Contains(out, "-n") {
		out = append(out, "-n", "8")
	}
	return append(out, "--warmup", "0", "--settle", "0")
}
