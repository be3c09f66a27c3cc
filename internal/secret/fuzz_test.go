package secret

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip feeds server text of any shape with a known credential planted
// in it and checks that no start of the credential survives redaction and
// a cut at any length, that a cut output stays within its bound, and that
// valid UTF-8 stays valid.
func FuzzClip(f *testing.F) {
	const key = "sk-FUZZKEY-4471"
	basic := base64.StdEncoding.EncodeToString([]byte("u:fuzz-PW-9"))
	for _, s := range []string{"", "plain text", "Bearer abc.def-ghi", "basic " + basic, "BEARER", "x=Basic dTpw", "é" + key} {
		f.Add(s, key[:5], 40)
	}
	r := New(key)
	f.Fuzz(func(t *testing.T, text, around string, n int) {
		if n < 0 || n > 1<<12 {
			return
		}
		msg := text + key + around + " Basic " + basic + " " + text
		got := r.Clip(msg, n)
		for k := MinLen; k <= len(key); k++ {
			if strings.Contains(got, key[:k]) && !strings.Contains(text+around, key[:k]) {
				t.Fatalf("Clip(%q, %d) = %q keeps %q", msg, n, got, key[:k])
			}
		}
		if strings.Contains(got, basic) {
			t.Fatalf("Clip(%q, %d) = %q keeps the Basic token", msg, n, got)
		}
		if len(r.String(msg)) > n && len(got) > n+len(Mask)+len("...") {
			t.Fatalf("Clip(%q, %d) is %d bytes", msg, n, len(got))
		}
		if utf8.ValidString(msg) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", msg, n, got)
		}
	})
}
