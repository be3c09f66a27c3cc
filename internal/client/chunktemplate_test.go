package client

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// sameChunk describes how got (decoded from data by the template) differs
// from want (the full walk of data), or returns "". Strings must be the
// same bytes at the same place of data, with the same flags.
func sameChunk(data []byte, got, want chatChunk) string {
	texts := func(c *chatChunk) []*jsonText {
		return []*jsonText{&c.Modality, &c.Content, &c.AudioData, &c.FinishReason, &c.ErrorMessage}
	}
	names := []string{"Modality", "Content", "AudioData", "FinishReason", "ErrorMessage"}
	g, w := texts(&got), texts(&want)
	for k := range g {
		a, b := *g[k], *w[k]
		if (a.raw == nil) != (b.raw == nil) || a.esc != b.esc || a.set != b.set || a.plain != b.plain || len(a.raw) != len(b.raw) ||
			(a.raw != nil && offsetIn(data, a.raw) != offsetIn(data, b.raw)) {
			return fmt.Sprintf("%s: got %+v, want %+v", names[k], a, b)
		}
		*g[k], *w[k] = jsonText{}, jsonText{}
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	return ""
}

// checkTemplate makes prev the template (when it qualifies) and decodes
// next both ways: when the template fits, the walk must succeed with the
// same chunk.
func checkTemplate(t *testing.T, prev, next []byte) (applied bool) {
	t.Helper()
	var tp chunkTemplate
	var c chatChunk
	if tp.decode(prev, &c) != nil || !tp.ok {
		return false
	}
	var got, want chatChunk
	if !tp.apply(next, &got) {
		return false
	}
	if err := decodeChatChunk(next, &want); err != nil {
		t.Fatalf("the template decoded %q, which the walk refuses: %v\n(template from %q)", next, err, prev)
	}
	if d := sameChunk(next, got, want); d != "" {
		t.Fatalf("%q decoded by the template from %q: %s", next, prev, d)
	}
	return true
}

// audioChunk is a chat audio event whose content is payload; around puts
// other members before and after it.
func audioChunk(payload, before, after string) string {
	return `{"id":"chatcmpl-7","object":"chat.completion.chunk","model":"Qwen/Qwen3-Omni"` + before +
		`,"choices":[{"index":0,"delta":{"role":"assistant","content":"` + payload + `"},"logprobs":null,"finish_reason":null}],"modality":"audio"` + after + `}`
}

func TestChunkTemplate(t *testing.T) {
	long := strings.Repeat("QUJD", 300)
	other := strings.Repeat("REVG", 250)
	audioData := func(p string) string {
		return `{"id":"c","choices":[{"index":0,"delta":{"audio":{"data":"` + p + `","id":"a1"}},"finish_reason":"stop"}],"modality":"audio"}`
	}
	for _, tc := range []struct {
		name, prev, next string
		applies          bool
	}{
		{"same layout, another payload", audioChunk(long, "", ""), audioChunk(other, "", ""), true},
		{"a shorter payload", audioChunk(long, "", ""), audioChunk("QUJD", "", ""), true},
		{"an empty payload", audioChunk(long, "", ""), audioChunk("", "", ""), true},
		{"non-ASCII in the payload", audioChunk(long, "", ""), audioChunk("\xff\xfeé", "", ""), true},
		{"delta.audio.data", audioData(long), audioData(other), true},
		{"fields after the payload move", audioChunk(long, "", `,"usage":{"prompt_tokens":3},"error":null`), audioChunk(other+other, "", `,"usage":{"prompt_tokens":3},"error":null`), true},
		{"another id", audioChunk(long, "", ""), strings.Replace(audioChunk(other, "", ""), "chatcmpl-7", "chatcmpl-8", 1), false},
		{"another suffix", audioChunk(long, "", ""), audioChunk(other, "", `,"x":1`), false},
		{"a suffix of the same length", audioChunk(long, "", `,"n":1`), audioChunk(other, "", `,"n":2`), false},
		{"a prefix of the same length", audioChunk(long, `,"n":1`, ""), audioChunk(other, `,"n":2`, ""), false},
		{"an escape in the payload", audioChunk(long, "", ""), audioChunk(`QU\nJD`, "", ""), false},
		{"a control byte in the payload", audioChunk(long, "", ""), audioChunk("QU\x01JD", "", ""), false},
		{"a quote that ends the string early", audioChunk(long, "", ""), audioChunk(`QU"JD`, "", ""), false},
		{"a short payload makes no template", audioChunk("QUJD", "", ""), audioChunk("REVG", "", ""), false},
		{"an escaped payload makes no template", audioChunk(long+`\/`, "", ""), audioChunk(other, "", ""), false},
		{"a later duplicate content wins", audioChunk(long, "", "")[:0] + `{"choices":[{"delta":{"content":"` + long + `","content":"x"}}]}`,
			`{"choices":[{"delta":{"content":"` + other + `","content":"x"}}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkTemplate(t, []byte(tc.prev), []byte(tc.next)); got != tc.applies {
				t.Errorf("template applied: %v, want %v", got, tc.applies)
			}
		})
	}
}

// FuzzChunkTemplate decodes an event made of the template's bytes around
// any middle, and any event at all, both ways.
func FuzzChunkTemplate(f *testing.F) {
	long := strings.Repeat("QUJD", 300)
	for _, seed := range [][2]string{
		{audioChunk(long, "", ""), "REVG"},
		{audioChunk(long, `,"created":1`, `,"metrics":{"a":[1,2]}`), `QUJD"},"x":"`},
		{`{"choices":[{"delta":{"audio":{"data":"` + long + `"}}}],"error":{"message":"m"}}`, `\u0041`},
		{exAudioChunk, "x"},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, prev, mid []byte) {
		checkTemplate(t, prev, mid)
		var tp chunkTemplate
		var c chatChunk
		if tp.decode(prev, &c) != nil || !tp.ok {
			return
		}
		next := append(append(append([]byte(nil), tp.prefix...), mid...), tp.suffix...)
		checkTemplate(t, prev, next)
	})
}

// BenchmarkChunkTemplate decodes two audio events of one layout with
// different audio, alternately, by the full walk (the baseline) and by the
// template, as a stream's events come.
func BenchmarkChunkTemplate(b *testing.B) {
	other := testPCM(chunk80ms)
	other[100] ^= 0xff
	events := [2][]byte{
		[]byte(chatAudioEvent(testWAV(24000, testPCM(chunk80ms), false))),
		[]byte(chatAudioEvent(testWAV(24000, other, false))),
	}
	if string(events[0]) == string(events[1]) {
		b.Fatal("the two events are the same")
	}
	b.Run("walk", func(b *testing.B) {
		var c chatChunk
		for i := 0; b.Loop(); i++ {
			if err := decodeChatChunk(events[i%2], &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("template", func(b *testing.B) {
		var tp chunkTemplate
		var c chatChunk
		hits := 0
		for i := 0; b.Loop(); i++ {
			if tp.apply(events[i%2], &c) {
				hits++
			} else if err := tp.decode(events[i%2], &c); err != nil {
				b.Fatal(err)
			}
		}
		if hits < b.N-1 {
			b.Fatalf("the template fitted %d of %d events", hits, b.N)
		}
	})
}
