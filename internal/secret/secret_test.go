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
	for in, want := range map[string]string{
		"http://u:p@host:bad port":           Mask + "@host:bad port",
		"u:s3cret@127.0.0.1:1/metrics":       Mask + "@127.0.0.1:1/metrics",
		"http://tok3n@h/x?sig=abc&a=1#frag":  "http://h/x?a=xxxxx&sig=xxxxx",
		"http://h:9/metrics":                 "http://h:9/metrics",
		"what is this? x=1":                  "what is this? x=1", // not a URL: left alone
		"https://user:pw@h/v1/chat?token=t1": "https://h/v1/chat?token=xxxxx",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
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

func TestClipMasksWhatTheCutLeaves(t *testing.T) {
	const key = "sk-CLIPKEY-0123456789"
	r := New(key)
	for cut := 0; cut <= len(key)+2; cut++ {
		msg := strings.Repeat("x", 50) + key + " tail"
		got := r.Clip(msg, 50+cut)
		for k := MinLen; k <= len(key); k++ {
			if strings.Contains(got, key[:k]) {
				t.Fatalf("cut at %d: %q keeps %q of the key", 50+cut, got, key[:k])
			}
		}
		if !strings.HasPrefix(got, strings.Repeat("x", 50)) {
			t.Fatalf("cut at %d: %q lost the text before the key", 50+cut, got)
		}
	}
	if got := r.Clip("short "+key, 200); got != "short "+Mask {
		t.Errorf("unclipped: %q", got)
	}
	// A token after an authentication scheme goes whether known or not,
	// whole or cut.
	basic := base64.StdEncoding.EncodeToString([]byte("proxyuser:proxy-PW-77"))
	var nilR *Redactor
	for _, msg := range []string{"got Proxy-Authorization: Basic " + basic + " from you", "authorization=BEARER tok-UNKNOWN-42,x"} {
		got := nilR.String(msg)
		if strings.Contains(got, basic) || strings.Contains(got, "tok-UNKNOWN-42") || !strings.Contains(got, Mask) {
			t.Errorf("String(%q) = %q", msg, got)
		}
		for cut := 20; cut < len(msg); cut++ {
			got := nilR.Clip(msg, cut)
			if strings.Contains(got, basic[:4]) || strings.Contains(got, "tok-") {
				t.Errorf("Clip(%q, %d) = %q", msg, cut, got)
			}
		}
	}
	for _, prose := range []string{"missing Bearer token", "Basic authentication required", "basic stuff"} {
		if got := nilR.String(prose); got != prose {
			t.Errorf("prose %q masked: %q", prose, got)
		}
	}
}

func TestFromEnvironment(t *testing.T) {
	env := map[string]string{"HTTPS_PROXY": "http://pu:proxy-PW-1@proxy:3128", "http_proxy": "pv:proxy-PW-2@proxy:3128"}
	got := FromEnvironment(func(k string) string { return env[k] })
	for _, want := range []string{"proxy-PW-1", "proxy-PW-2", base64.StdEncoding.EncodeToString([]byte("pu:proxy-PW-1"))} {
		if !slices.Contains(got, want) {
			t.Errorf("FromEnvironment lacks %q: %q", want, got)
		}
	}
}
