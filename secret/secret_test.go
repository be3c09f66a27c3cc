package secret

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestRedactorLongestFirst(t *testing.T) {
	r := New("abcd", "abcdefgh", "", "ab", "abcd")
	if got := r.String("x abcdefgh y abcd z ab"); got != "x [redacted] y [redacted] z ab" {
		t.Errorf("got %q", got)
	}
	var nilR *Redactor
	if nilR.String("abcd") != "abcd" || !nilR.Empty() || nilR.With("wxyz").String("wxyz") != Mask {
		t.Error("a nil Redactor must pass text through and extend")
	}
}

func TestFromURL(t *testing.T) {
	got := FromURL("http://bench:p%40ss-word@host:8000/v1")
	pair := "bench:p@ss-word"
	for _, want := range []string{"p@ss-word", pair, base64.StdEncoding.EncodeToString([]byte(pair)), "bench:p%40ss-word", "p%40ss-word"} {
		if !slices.Contains(got, want) {
			t.Errorf("FromURL lacks %q: %q", want, got)
		}
	}
	if FromURL("http://host:8000") != nil || FromURL("::bad") != nil {
		t.Error("no credentials expected")
	}
	if got := URL("http://u:p@host/x"); got != "http://host/x" {
		t.Errorf("URL = %q", got)
	}
	if got := URL("http://u:p@host:bad port"); got != Mask {
		t.Errorf("unparsable URL with userinfo shown as %q", got)
	}
}

func TestFromHeader(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("user:hunter22"))
	got := FromHeader("  Basic " + basic + " ")
	for _, want := range []string{"Basic " + basic, basic, "user:hunter22", "hunter22"} {
		if !slices.Contains(got, want) {
			t.Errorf("FromHeader lacks %q: %q", want, got)
		}
	}
	if got := FromHeader("tenant-42"); !slices.Equal(got, []string{"tenant-42"}) {
		t.Errorf("plain value: %q", got)
	}
}

func TestFromArgs(t *testing.T) {
	got := FromArgs([]string{"env", "HF_TOKEN=tok-1234", "CUDA_VISIBLE_DEVICES=0", "vllm", "serve", "--api-key", "key-5678",
		"--hf-token=tok-9999", "--tokenizer", "gpt2", "--max-num-batched-tokens", "8192"})
	want := []string{"tok-1234", "key-5678", "tok-9999"}
	if !slices.Equal(got, want) {
		t.Errorf("FromArgs = %q, want %q", got, want)
	}
}

// The writer redacts each call and reports the caller's length.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := New("s3cret").Writer(&buf)
	n, err := w.Write([]byte("a s3cret b\n"))
	if err != nil || n != len("a s3cret b\n") || buf.String() != "a [redacted] b\n" {
		t.Errorf("n %d err %v wrote %q", n, err, buf.String())
	}
}

// Whatever surrounds a secret, it never survives redaction.
func FuzzRedactor(f *testing.F) {
	f.Add("sk-live-1234", "prefix sk-live-1234 suffix", "tok")
	f.Add("aaaa", "aaaaaaaaa", "aaaaa")
	f.Add("pass", "ppassspass", "")
	f.Fuzz(func(t *testing.T, s1, text, s2 string) {
		r := New(s1, s2)
		out := r.String(text)
		for _, s := range []string{s1, s2} {
			// A secret made of the mask's own characters can reappear
			// across a mask; any other must be gone.
			if len(s) >= MinLen && !strings.ContainsAny(s, "[]") && !strings.Contains(Mask, s) && strings.Contains(out, s) {
				t.Fatalf("secret %q survives in %q (from %q)", s, out, text)
			}
		}
	})
}
