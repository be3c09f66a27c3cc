package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"a\nb\r\t", `"a\nb\r\t"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"héllo 世界", `"héllo 世界"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
	} {
		if got := string(appendJSONString(nil, tc.in)); got != tc.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "hello", `"\`, "\x00\n", "日本語", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString([]byte("x"), s)[1:]
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("appendJSONString(%q) = %s is not valid JSON: %v", s, b, err)
		}
		// Valid UTF-8 round-trips; encoding/json (the reference) and we
		// replace each invalid byte with U+FFFD.
		ref, _ := json.Marshal(s)
		var refS string
		if err := json.Unmarshal(ref, &refS); err != nil {
			t.Fatal(err)
		}
		if got != refS || (utf8.ValidString(s) && got != s) {
			t.Errorf("round trip of %q: got %q, encoding/json gives %q", s, got, refS)
		}
	})
}

func TestAppendBase64(t *testing.T) {
	src := bytes.Repeat([]byte{1, 2, 3, 250}, 100)
	good := appendBase64([]byte("p"), src, false)[1:]
	if d, err := base64.StdEncoding.DecodeString(string(good)); err != nil || !bytes.Equal(d, src) {
		t.Errorf("clean base64 does not round trip: %v", err)
	}
	for _, n := range []int{0, 1, 2, 3, 4, 400} {
		bad := appendBase64(nil, src[:n], true)
		if _, err := base64.StdEncoding.DecodeString(string(bad)); err == nil {
			t.Errorf("corrupt base64 of %d bytes decodes", n)
		}
		if bytes.ContainsAny(bad, "\"\\\n") {
			t.Errorf("corrupt base64 %q breaks the JSON string", bad)
		}
	}
}

func TestAppendUsage(t *testing.T) {
	if got := string(appendUsage(nil, 7, 21)); got != `{"prompt_tokens":7,"completion_tokens":21,"total_tokens":28}` {
		t.Errorf("usage %s", got)
	}
}
