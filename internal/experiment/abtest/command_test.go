package abtest

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"vllm serve Qwen/Qwen3-Omni --port {port}", []string{"vllm", "serve", "Qwen/Qwen3-Omni", "--port", "{port}"}},
		{"  a\t b\n", []string{"a", "b"}},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}},
		{`--extra '{"a": 1}'`, []string{"--extra", `{"a": 1}`}},
		{`"say \"hi\"" 'it'\''s'`, []string{`say "hi"`, "it's"}},
		{`"a\nb" a\ b`, []string{`a\nb`, "a b"}}, // in double quotes \n stays; outside \ escapes
		{`'' ""`, []string{"", ""}},
		{`x"y"'z'`, []string{"xyz"}},
		{`$HOME *.go`, []string{"$HOME", "*.go"}}, // no expansion
	} {
		got, err := SplitCommand(tc.in)
		if err != nil {
			t.Errorf("SplitCommand(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		`a 'b`:  "unterminated ' quote opened at byte 2",
		`a "b'`: `unterminated " quote opened at byte 2`,
		`a b\`:  "trailing backslash at byte 3",
	} {
		if _, err := SplitCommand(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SplitCommand(%q): error %v, want %q", in, err, want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	in := []string{"vllm", "serve", "m", "--api-key", "sk-1", "--hf-token=hf_2", "--tokenizer", "tok", "--max-num-batched-tokens", "8192", "--AUTH", "x", "--port", "{port}"}
	want := []string{"vllm", "serve", "m", "--api-key", "[redacted]", "--hf-token=[redacted]", "--tokenizer", "tok", "--max-num-batched-tokens", "8192", "--AUTH", "[redacted]", "--port", "{port}"}
	if got := RedactArgs(in); !reflect.DeepEqual(got, want) {
		t.Errorf("RedactArgs:\n got %q\nwant %q", got, want)
	}
	if in[4] != "sk-1" {
		t.Error("RedactArgs modified its input")
	}
}

func TestJoinArgsRoundTrip(t *testing.T) {
	argv := []string{"sh", "-c", `echo "it's $HOME"`, "", `a\b`, "plain", "[x]"}
	got, err := SplitCommand(JoinArgs(argv))
	if err != nil || !reflect.DeepEqual(got, argv) {
		t.Errorf("round trip of %q via %q: %q, %v", argv, JoinArgs(argv), got, err)
	}
	if s := JoinArgs([]string{"a", "b c"}); s != "a 'b c'" {
		t.Errorf("JoinArgs = %s", s)
	}
}

func TestSubstitutePort(t *testing.T) {
	argv := []string{"srv", "--port", "{port}", "--url=http://127.0.0.1:{port}/v1"}
	got := substitutePort(argv, "8123")
	want := []string{"srv", "--port", "8123", "--url=http://127.0.0.1:8123/v1"}
	if !reflect.DeepEqual(got, want) || argv[2] != "{port}" {
		t.Errorf("substitutePort = %q (input now %q)", got, argv)
	}
	if hasPlaceholder([]string{"a"}) || !hasPlaceholder(argv) {
		t.Error("hasPlaceholder")
	}
}

// FuzzSplitCommand checks that splitting never panics, and that what it
// returns survives JoinArgs and a second split unchanged.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"", "a b", `a 'b c' "d\"e"`, `x\ y`, `'unterminated`, `"\$\\"`, "\t\n", `''`, "a\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := SplitCommand(s)
		if err != nil {
			return
		}
		again, err := SplitCommand(JoinArgs(argv))
		if err != nil {
			t.Fatalf("SplitCommand(JoinArgs(%q)): %v", argv, err)
		}
		if len(argv) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(again, argv) {
			t.Fatalf("round trip of %q: %q", argv, again)
		}
	})
}
