package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete runs the hidden __complete command, as a shell does, and
// returns the values offered (the last line is cobra's directive).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	root := newRootCmd("test")
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"__complete"}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %q: %v\n%s", args, err, errOut.String())
	}
	var values []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, ":") && l != "" {
			values = append(values, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return values
}

func TestCompletionOffersValues(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"mine.yaml", "other.yml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"run", "--scenario", ""}, []string{"chat-voice", "speech-pcm", "tts-long", "tts-short"}, nil},
		{[]string{"run", "--scenario", "tts"}, []string{"tts-long", "tts-short"}, []string{"chat-voice"}},
		{[]string{"run", "--scenario", dir + "/"}, []string{dir + "/mine.yaml", dir + "/other.yml"}, []string{dir + "/notes.txt"}},
		{[]string{"run", "--format", ""}, []string{"table", "markdown", "json", "csv"}, nil},
		{[]string{"report", "--format", ""}, []string{"table", "markdown", "json", "csv"}, nil},
		{[]string{"sweep", "--format", ""}, []string{"table", "markdown", "json", "csv"}, nil},
		{[]string{"run", "--kind", ""}, []string{"chat", "speech", "speech-sse"}, nil},
		{[]string{"sweep", "--arrival", ""}, []string{"constant", "poisson", "gamma"}, nil},
		{[]string{"capacity", "--continuity-mode", ""}, []string{"default", "reference"}, nil},
		{[]string{"capacity", "--by", ""}, []string{"concurrency", "rate"}, nil},
		{[]string{"run", "--accept", ""}, []string{"auto", "proto", "openmetrics", "text"}, nil},
		{[]string{"ab", "--scenario", ""}, []string{"chat-voice"}, nil},
		{[]string{"check", "--profile", ""}, []string{"vllm-omni", "none"}, nil},
		{[]string{"check", "--accept", ""}, []string{"auto", "proto", "openmetrics", "text"}, nil},
	} {
		got := complete(t, c.args...)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q offers %q, want %q among them", c.args, got, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(got, n) {
				t.Errorf("%q offers %q, which should not be offered", c.args, n)
			}
		}
	}
}

// The bash script needs the bash-completion package: loaded without it, it
// says so and defines nothing (rather than a TAB that prints "command not
// found"); with it, it registers the completion.
func TestBashCompletionNeedsThePackage(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root := newRootCmd("test")
	var script, errOut bytes.Buffer
	root.SetOut(&script)
	root.SetErr(&errOut)
	root.SetArgs([]string{"completion", "bash"})
	if err := root.Execute(); err != nil {
		t.Fatalf("completion bash: %v\n%s", err, errOut.String())
	}
	file := filepath.Join(t.TempDir(), "omnibench.bash")
	if err := os.WriteFile(file, script.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, before string
		wantStderr   string
		registered   bool
	}{
		{"without bash-completion", "", "needs the bash-completion package", false},
		{"with bash-completion", "_get_comp_words_by_ref() { :; }; ", "", true},
	} {
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", tc.before+`source "$1"; complete -p omnibench >/dev/null 2>&1 && echo registered`, "bash", file)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run() // the outcome is in what it printed
		if got := strings.Contains(stdout.String(), "registered"); got != tc.registered || !strings.Contains(stderr.String(), tc.wantStderr) ||
			(tc.wantStderr == "" && stderr.Len() > 0) {
			t.Errorf("%s: registered %v, stderr %q; want registered %v, stderr with %q", tc.name, got, stderr.String(), tc.registered, tc.wantStderr)
		}
	}
	help, _, _, _ := runMetricsCmd(t, "completion", "--help")
	if !strings.Contains(help, "Bash completion needs the bash-completion package") {
		t.Errorf("completion --help does not say bash needs bash-completion:\n%s", help)
	}
}
