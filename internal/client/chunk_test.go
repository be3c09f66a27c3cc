package client

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// refChatChunk is the encoding/json equivalent of chatChunk: the fuzz test
// demands that decodeChatChunk extracts what encoding/json extracts into it.
type refChatChunk struct {
	Modality string `json:"modality"`
	Choices  []struct {
		Delta struct {
			Content string `json:"content"`
			Audio   struct {
				Data string `json:"data"`
			} `json:"audio"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// testWAV builds a canonical 44-byte-header WAV file by hand (independent of
// the wav package, so it can serve as a reference).
func testWAV(rate int, pcm []byte, streaming bool) []byte {
	b := make([]byte, 44, 44+len(pcm))
	copy(b[0:], "RIFF")
	size := uint32(36 + len(pcm))
	dsize := uint32(len(pcm))
	if streaming {
		size, dsize = 0xFFFFFFFF, 0xFFFFFFFF
	}
	binary.LittleEndian.PutUint32(b[4:], size)
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], dsize)
	return append(b, pcm...)
}

// testPCM is n bytes of a deterministic non-silent s16le pattern.
func testPCM(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/3)
	}
	return b
}

// chatAudioEvent is one protocol-shaped audio chunk payload.
func chatAudioEvent(audio []byte) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"Qwen/Qwen3-Omni-30B-A3B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":"` +
		base64.StdEncoding.EncodeToString(audio) +
		`"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":42,"completion_tokens":0,"total_tokens":42},"modality":"audio","metrics":null}`
}

// Chunks of the shapes docs/reference/http-streams.md, section 2.3 gives.
const (
	exRoleChunk  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"Qwen/Qwen3-Omni-30B-A3B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"modality":"text"}`
	exTextChunk  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"Qwen/Qwen3-Omni-30B-A3B-Instruct","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"modality":"text","metrics":null}`
	exAudioChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"Qwen/Qwen3-Omni-30B-A3B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":"UklGRiR9AABXQVZFZm10IBAAAAABAAEAwF0AAIC7AAACABAAZGF0YQB9AAA="},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":42,"completion_tokens":0,"total_tokens":42},"modality":"audio","metrics":null}`
	exUsageChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"Qwen/Qwen3-Omni-30B-A3B-Instruct","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":57,"total_tokens":99}}`
	exErrorChunk = `{"error":{"message":"CUDA out of memory","type":"server_error","code":500}}`
	exStopChunk  = `{"id":"c","choices":[{"index":0,"delta":{"audio":{"data":"AAAA","id":"a1"}},"finish_reason":"stop"}],"modality":"audio"}`
)

func chatSeeds() []string {
	return []string{
		exRoleChunk, exTextChunk, exAudioChunk, exUsageChunk, exErrorChunk, exStopChunk,
		chatAudioEvent(testWAV(24000, testPCM(64), false)),
		`{"choices":[{"delta":{"content":"a\"b\\c\/d\u00e9\ud83d\ude00\n"}}],"modality":"text"}`,
		`{"Modality":"TEXT","CHOICES":[{"Delta":{"Content":"x"}}]}`,
		`{"modality":"audio","choices":[{"delta":{"content":"QUJD"}}],"choices":[{"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"content":"a"}}],"choices":[],"choices":[{"delta":{}}]}`,
		`{"error":{"message":"a"},"error":null}`,
		`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2},"usage":null}`,
		`{"u\u017fage":{"prompt_to\u212aens":3}}`,
		`null`, `{}`, `[]`, `{"choices":[null,1,{"a":[1,2,{"b":true}]}]}`,
		`{"choices":[{"delta":{"content":null,"audio":null},"finish_reason":null}],"usage":{"prompt_tokens":-0,"completion_tokens":1.5e3}}`,
		"{\"choices\":[{\"delta\":{\"content\":\"a\x01b\"}}],\"modality\":\"text\"}",
		"{\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("QUJD", 10) + "\n\"}}],\"modality\":\"audio\"}",
		"{\"choices\":[{\"delta\":{\"content\":\"caf\xe9\xff\x7f\"}}],\"modality\":\"text\"}",
	}
}

// compareChat reports differences between the decoder's output and
// encoding/json's.
func compareChat(t *testing.T, in []byte, c *chatChunk, ref *refChatChunk) {
	t.Helper()
	check := func(field, got, want string) {
		if got != want {
			t.Errorf("input %q: %s = %q, encoding/json says %q", in, field, got, want)
		}
	}
	check("modality", c.Modality.String(), ref.Modality)
	if got, want := c.NoChoices, len(ref.Choices) == 0; got != want {
		t.Errorf("input %q: NoChoices = %v, encoding/json has %d choices", in, got, len(ref.Choices))
	}
	if len(ref.Choices) > 0 {
		ch := ref.Choices[0]
		check("content", c.Content.String(), ch.Delta.Content)
		check("audio.data", c.AudioData.String(), ch.Delta.Audio.Data)
		check("finish_reason", c.FinishReason.String(), ch.FinishReason)
	}
	if c.PromptTokens != ref.Usage.PromptTokens || c.CompletionTokens != ref.Usage.CompletionTokens {
		t.Errorf("input %q: tokens = %d/%d, encoding/json says %d/%d", in,
			c.PromptTokens, c.CompletionTokens, ref.Usage.PromptTokens, ref.Usage.CompletionTokens)
	}
	if got, want := c.HasError, ref.Error != nil; got != want {
		t.Errorf("input %q: HasError = %v, want %v", in, got, want)
	}
	if ref.Error != nil {
		check("error.message", c.ErrorMessage.String(), ref.Error.Message)
	}
}

func TestDecodeChatChunkSemantics(t *testing.T) {
	cases := []struct {
		in     string
		check  func(c *chatChunk) bool
		reason string
	}{
		{`{"choices":[{"delta":{"content":"a\/b"}}]}`, func(c *chatChunk) bool { return c.Content.esc && c.Content.String() == "a/b" }, "escaped slash"},
		{`{"modality":"au\u0064io"}`, func(c *chatChunk) bool { return c.Modality.equal("audio") }, "escaped modality"},
		{`{"MODALITY":"audio"}`, func(c *chatChunk) bool { return c.Modality.equal("audio") }, "case-insensitive key"},
		{`{"error":"overloaded"}`, func(c *chatChunk) bool { return c.HasError && c.ErrorMessage.String() == "overloaded" }, "string error"},
		{`{"error":null}`, func(c *chatChunk) bool { return !c.HasError }, "null error"},
		{`{"choices":null}`, func(c *chatChunk) bool { return c.NoChoices }, "null choices"},
		{`{"choices":[{},{"delta":{"content":"second"}}]}`, func(c *chatChunk) bool { return !c.NoChoices && !c.Content.set }, "only choice 0 counts"},
		{`{"usage":{"prompt_tokens":99999999999999999999}}`, func(c *chatChunk) bool { return !c.HasPrompt }, "overflow ignored"},
		{` {"usage" : { "prompt_tokens" : -3 } } `, func(c *chatChunk) bool { return c.PromptTokens == -3 }, "whitespace"},
		// Raw (unescaped) non-ASCII in keys, seen by the word-wide scan in
		// its first and third word: U+017F folds to 's', U+212A to 'k'.
		{"{\"u\xc5\xbfage\":{\"prompt_to\xe2\x84\xaaens\":3}}", func(c *chatChunk) bool { return c.HasUsage && c.PromptTokens == 3 }, "raw folded keys"},
		{"{\"usage\":{\"completion_token\xc5\xbf\":4}}", func(c *chatChunk) bool { return c.CompletionTokens == 4 }, "raw folded key, third word"},
		{"{\"modalit\xc3\xa9\":\"audio\"}", func(c *chatChunk) bool { return !c.Modality.set }, "non-ASCII key that folds to no field"},
	}
	for _, tc := range cases {
		var c chatChunk
		if err := decodeChatChunk([]byte(tc.in), &c); err != nil {
			t.Errorf("%s: %q: %v", tc.reason, tc.in, err)
			continue
		}
		if !tc.check(&c) {
			t.Errorf("%s: %q: got %+v", tc.reason, tc.in, c)
		}
	}
}

func TestDecodeChatChunkErrorsNameOffset(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, "byte 0"},
		{`{"choices":[{"delta":{"content":"abc}}]}`, "unterminated string"},
		{`{"choices":[{"delta":{"content":"abc"}}],}`, "byte 41: expected a string key"},
		{`{"modality":5}`, "modality: expected a string"},
		{`{"a":tru}`, "expected true"},
		{`{"a":01}`, "expected ',' or '}'"},
		{`{"a":"\x"}`, `invalid escape \x`},
		{`{"a":1} x`, "byte 8: unexpected data after the top-level value"},
		{`[1]`, "expected an object"},
		{`{"choices":{}}`, "choices:"},
		{`{"a":[1 2]}`, "expected ',' or ']'"},
		{`{"a" 1}`, "expected ':'"},
		{`{"a":-}`, "invalid number"},
		{`{"a":1.}`, "no digits after '.'"},
		{`{"a":1e}`, "no exponent digits"},
		{"{\"modality\":\"au\x01dio\"}", `byte 15: invalid character '\x01' in string literal`},
		{"{\"a\":\"" + strings.Repeat("QUJD", 100) + "\nQUJD\"}", `byte 406: invalid character '\n' in string literal`},
		{"{\"a\":\"" + strings.Repeat("x", 30) + "\\n\t\"}", `byte 38: invalid character '\t' in string literal`},
		{"{\"k\x1fey\":1}", `byte 3: invalid character '\x1f' in string literal`},
		// Strings are scanned eight bytes at a time for their first 24
		// bytes: a stop in the second or third word, a control character
		// after an escape, and one past the first 24 bytes of a string that
		// never ends (reported as unterminated, as before the word-wide scan).
		{"{\"a\":\"0123456789\x01\"}", `byte 16: invalid character '\x01' in string literal`},
		{"{\"0123456789\x1f\":1}", `byte 12: invalid character '\x1f' in string literal`},
		{"{\"a\":\"0123456789abcdefghijk\x01", `byte 27: invalid character '\x01' in string literal`},
		{"{\"a\":\"0123456789abcdefghijklmn\x01", `byte 5: unterminated string`},
		{"{\"a\":\"ab\\\x01\"}", `byte 9: invalid character '\x01' in string literal`},
		{`{"a":"ab\\`, `byte 5: unterminated string`},
		{`{"x":` + strings.Repeat(`{"a":`, maxDepth) + `1` + strings.Repeat("}", maxDepth) + `}`, "byte 50000: nesting deeper than 10000"},
		{`{"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, "byte 10004: nesting deeper than 10000"},
		{`{"choices":[{"delta":[]}]}`, "choices[0].delta: invalid JSON at byte 21: expected an object"},
	}
	for _, tc := range cases {
		var c chatChunk
		err := decodeChatChunk([]byte(tc.in), &c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

// TestJSONStringsAgreeWithEncodingJSON: raw control characters in a string
// are refused as encoding/json refuses them, at every position (short and
// long strings, keys, skipped values); invalid UTF-8 and DEL are accepted
// and decode to what encoding/json decodes them to.
func TestJSONStringsAgreeWithEncodingJSON(t *testing.T) {
	long := strings.Repeat("QUJD", 40)
	for _, c := range []byte{0x00, 0x01, '\t', '\n', '\r', 0x1f} {
		for _, in := range []string{
			`{"choices":[{"delta":{"content":"a` + string(c) + `b"}}],"modality":"text"}`,
			`{"choices":[{"delta":{"content":"` + long + string(c) + long + `"}}],"modality":"audio"}`,
			`{"choices":[{"delta":{"content":"` + long + `\/` + string(c) + `"}}],"modality":"audio"}`,
			`{"id":"` + long[:i8(c)] + string(c) + `","choices":[]}`,
			`{"x` + string(c) + `":1}`,
		} {
			var c chatChunk
			var ref refChatChunk
			if json.Unmarshal([]byte(in), &ref) == nil {
				t.Fatalf("encoding/json accepts %q", in)
			}
			if err := decodeChatChunk([]byte(in), &c); err == nil || !strings.Contains(err.Error(), "in string literal") {
				t.Errorf("%q: error %v, want a control character error", in, err)
			}
			var e speechEvent
			if err := decodeSpeechEvent([]byte(in), &e); err == nil {
				t.Errorf("speech event %q accepted", in)
			}
		}
	}
	for _, in := range []string{
		"{\"choices\":[{\"delta\":{\"content\":\"caf\xe9 \xff\xfe \x7f ok\"}}],\"modality\":\"text\"}",
		"{\"choices\":[{\"delta\":{\"content\":\"" + long + "\xc3\x28\"}}],\"modality\":\"text\"}",
	} {
		var c chatChunk
		var ref refChatChunk
		if err := json.Unmarshal([]byte(in), &ref); err != nil {
			t.Fatalf("encoding/json refuses %q: %v", in, err)
		}
		if err := decodeChatChunk([]byte(in), &c); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		compareChat(t, []byte(in), &c, &ref)
		if n, _ := c.Content.runeCount(nil); n != len([]rune(ref.Choices[0].Delta.Content)) {
			t.Errorf("%q: %d characters, encoding/json decodes %d", in, n, len([]rune(ref.Choices[0].Delta.Content)))
		}
	}
}

// i8 varies the length of a short string with the byte, so the control
// character sits at different offsets of the byte-wise and word-wise scans.
func i8(c byte) int { return int(c) % 29 }

func TestDecodeChatChunkDeepNesting(t *testing.T) {
	ok := `{"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`
	tooDeep := `{"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`
	var c chatChunk
	var ref refChatChunk
	if err := decodeChatChunk([]byte(ok), &c); err != nil {
		t.Errorf("depth %d: %v", maxDepth, err)
	}
	if err := json.Unmarshal([]byte(ok), &ref); err != nil {
		t.Errorf("encoding/json at depth %d: %v", maxDepth, err)
	}
	if err := decodeChatChunk([]byte(tooDeep), &c); err == nil {
		t.Errorf("depth %d accepted", maxDepth+1)
	}
	if err := json.Unmarshal([]byte(tooDeep), &ref); err == nil {
		t.Errorf("encoding/json accepted depth %d", maxDepth+1)
	}
}

func TestDecodeChatChunkAllocationFree(t *testing.T) {
	payload := []byte(chatAudioEvent(testWAV(24000, testPCM(3840), false)))
	var c chatChunk
	allocs := testing.AllocsPerRun(100, func() {
		if err := decodeChatChunk(payload, &c); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("decodeChatChunk allocates %.1f times per event, want 0", allocs)
	}
}

func TestDecodeChatChunkProtocolExamples(t *testing.T) {
	var c chatChunk
	if err := decodeChatChunk([]byte(exRoleChunk), &c); err != nil {
		t.Fatal(err)
	}
	if !c.Modality.equal("text") || !c.Content.set || !c.Content.empty() || c.NoChoices {
		t.Errorf("role chunk: %+v", c)
	}
	if err := decodeChatChunk([]byte(exTextChunk), &c); err != nil {
		t.Fatal(err)
	}
	if c.Content.String() != "Hello" || c.FinishReason.set {
		t.Errorf("text chunk: content %q finish %v", c.Content.String(), c.FinishReason.set)
	}
	if err := decodeChatChunk([]byte(exAudioChunk), &c); err != nil {
		t.Fatal(err)
	}
	if !c.Modality.equal("audio") || c.Content.esc || !c.HasUsage || c.PromptTokens != 42 || c.CompletionTokens != 0 {
		t.Errorf("audio chunk: %+v", c)
	}
	raw, err := base64.StdEncoding.DecodeString(string(c.Content.raw))
	if err != nil || string(raw[:4]) != "RIFF" {
		t.Errorf("audio chunk content does not decode to RIFF: %v", err)
	}
	if err := decodeChatChunk([]byte(exUsageChunk), &c); err != nil {
		t.Fatal(err)
	}
	if !c.NoChoices || c.Modality.set || c.PromptTokens != 42 || c.CompletionTokens != 57 || !c.HasPrompt || !c.HasCompletion {
		t.Errorf("usage chunk: %+v", c)
	}
	if err := decodeChatChunk([]byte(exErrorChunk), &c); err != nil {
		t.Fatal(err)
	}
	if !c.HasError || c.ErrorMessage.String() != "CUDA out of memory" {
		t.Errorf("error chunk: %+v", c)
	}
	if err := decodeChatChunk([]byte(exStopChunk), &c); err != nil {
		t.Fatal(err)
	}
	if c.AudioData.String() != "AAAA" || !c.FinishReason.equal("stop") || c.Content.set {
		t.Errorf("delta.audio.data chunk: %+v", c)
	}
}
func FuzzDecodeChatChunk(f *testing.F) {
	for _, s := range chatSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var c chatChunk
		err := decodeChatChunk(in, &c) // must never panic
		var ref refChatChunk
		if jerr := json.Unmarshal(in, &ref); jerr != nil {
			// Invalid JSON (raw control characters in strings included)
			// must fail; valid JSON of unexpected types may pass.
			if err == nil && !json.Valid(in) {
				t.Errorf("input %q is invalid JSON (%v) but the decoder accepted it", in, jerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("encoding/json accepts %q but the decoder fails: %v", in, err)
		}
		compareChat(t, in, &c, &ref)
	})
}

// refSpeechEvent is the encoding/json equivalent of speechEvent.
type refSpeechEvent struct {
	Type  string `json:"type"`
	Audio string `json:"audio"`
	Usage struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func TestDecodeSpeechEventProtocolExamples(t *testing.T) {
	var e speechEvent
	in := `{"type":"speech.audio.delta","audio":"AAECAw==","response_format":"pcm"}`
	if err := decodeSpeechEvent([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if !e.Type.equal(speechDelta) || e.Audio.String() != "AAECAw==" {
		t.Errorf("delta: %+v", e)
	}
	in = `{"type":"speech.audio.done","usage":{"input_tokens":12,"output_tokens":150,"total_tokens":162}}`
	if err := decodeSpeechEvent([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if !e.Type.equal(speechDone) || e.InputTokens != 12 || e.OutputTokens != 150 || !e.HasUsage {
		t.Errorf("done: %+v", e)
	}
	in = `{"type":"speech.audio.error","error":{"message":"boom","type":"server_error","code":500}}`
	if err := decodeSpeechEvent([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if !e.Type.equal(speechError) || !e.HasError || e.ErrorMessage.String() != "boom" {
		t.Errorf("error: %+v", e)
	}
}

func FuzzDecodeSpeechEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"speech.audio.delta","audio":"AAECAw==","response_format":"pcm"}`,
		`{"type":"speech.audio.delta","audio":"` + base64.StdEncoding.EncodeToString(testWAV(24000, nil, true)) + `","response_format":"wav"}`,
		`{"type":"speech.audio.done","usage":{"input_tokens":12,"output_tokens":150,"total_tokens":162}}`,
		`{"type":"speech.audio.error","error":{"message":"boom","type":"server_error","code":500}}`,
		`{"TYPE":"x","Usage":{"INPUT_TOKENS":1},"usage":{"output_tokens":2},"error":{"message":"a"},"error":null}`,
		`null`, `{"audio":null,"type":"\u0041"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var e speechEvent
		err := decodeSpeechEvent(in, &e)
		var ref refSpeechEvent
		if jerr := json.Unmarshal(in, &ref); jerr != nil {
			if err == nil && !json.Valid(in) {
				t.Errorf("input %q is invalid JSON (%v) but the decoder accepted it", in, jerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("encoding/json accepts %q but the decoder fails: %v", in, err)
		}
		if e.Type.String() != ref.Type || e.Audio.String() != ref.Audio ||
			e.InputTokens != ref.Usage.InputTokens || e.OutputTokens != ref.Usage.OutputTokens ||
			e.HasError != (ref.Error != nil) || (ref.Error != nil && e.ErrorMessage.String() != ref.Error.Message) {
			t.Errorf("input %q: decoder %+v, encoding/json %+v", in, e, ref)
		}
	})
}

func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{
		"", "AAECAw==", "AAECAw", "AAEC\nAw==", "AA-_", "QUJD",
		base64.StdEncoding.EncodeToString(testWAV(24000, testPCM(300), false)),
		base64.RawStdEncoding.EncodeToString(testPCM(301)),
		base64.StdEncoding.EncodeToString(testPCM(100)) + "*" + base64.StdEncoding.EncodeToString(testPCM(100)),
		"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=QUJD",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var buf []byte
		got, err := DecodeBase64(&buf, in)
		enc := base64.StdEncoding
		if n := len(in); n%4 != 0 && in[n-1] != '=' && !bytes.ContainsAny(in, "\r\n") {
			enc = base64.RawStdEncoding
		}
		want := make([]byte, enc.DecodedLen(len(in)))
		n, werr := enc.Decode(want, in)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/base64 says %v", in, err, werr)
		}
		if err != nil {
			if err.Error() != werr.Error() {
				t.Errorf("%q: error %q, encoding/base64 says %q", in, err, werr)
			}
			return
		}
		if !bytes.Equal(got, want[:n]) {
			t.Errorf("%q: decoded %x, encoding/base64 says %x", in, got, want[:n])
		}
	})
}

// TestDecodeBase64MatchesStdlib sweeps lengths and corruption positions
// across the fast path's group boundaries.
func TestDecodeBase64MatchesStdlib(t *testing.T) {
	var buf []byte
	for n := range 120 {
		enc := base64.StdEncoding.EncodeToString(testPCM(n))
		for pos := -1; pos < len(enc); pos++ {
			for _, bad := range []byte{'*', '=', '\n', '-'} {
				in := []byte(enc)
				if pos >= 0 {
					in[pos] = bad
				}
				got, err := DecodeBase64(&buf, in)
				want, werr := base64.StdEncoding.DecodeString(string(in))
				if (err == nil) != (werr == nil) || (err == nil && !bytes.Equal(got, want)) || (err != nil && err.Error() != werr.Error()) {
					t.Fatalf("len %d, %q at %d: got %x, %v; encoding/base64 %x, %v", n, bad, pos, got, err, want, werr)
				}
				if pos < 0 {
					break
				}
			}
		}
	}
}

// FuzzPlainBase64Len checks the length-only fast path against
// DecodeBase64: whatever it accepts must decode, to that many bytes.
func FuzzPlainBase64Len(f *testing.F) {
	for _, s := range []string{
		"", "A", "AA", "AAA", "AAAA", "AAECAw==", "AAECAw=", "AAECAw", "AAEC\nAw==", "AA-_", "A===", "AB=A",
		base64.StdEncoding.EncodeToString(testWAV(24000, testPCM(300), false)),
		base64.RawStdEncoding.EncodeToString(testPCM(301)),
		base64.StdEncoding.EncodeToString(testPCM(100)) + "\x80" + base64.StdEncoding.EncodeToString(testPCM(100)),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		n, ok := plainBase64Len(in, -1)
		var buf []byte
		got, err := DecodeBase64(&buf, in)
		if ok && (err != nil || len(got) != n) {
			t.Fatalf("%q: fast path says %d bytes, DecodeBase64 %d bytes, %v", in, n, len(got), err)
		}
		if !ok && err == nil && !bytes.ContainsAny(in, "\r\n") {
			t.Fatalf("%q: fast path refuses plain base64 that decodes to %d bytes", in, len(got))
		}
	})
}

// TestPlainBase64LenMatchesStdlib sweeps lengths, padded and raw, against
// encoding/base64's decoded length.
func TestPlainBase64LenMatchesStdlib(t *testing.T) {
	for n := range 100 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			s := enc.EncodeToString(testPCM(n))
			got, ok := plainBase64Len([]byte(s), -1)
			if !ok || got != n {
				t.Fatalf("%d bytes (%q): fast path %d, %v", n, s, got, ok)
			}
		}
	}
}

// TestDecodePlainHeadMatchesStdlib: the head the measured path decodes (the
// first 8 or 64 characters of a payload plainBase64Len accepted, padded or
// raw) is what decoding the whole payload starts with, through one reused
// buffer; a head that is not base64 is an error.
func TestDecodePlainHeadMatchesStdlib(t *testing.T) {
	var buf []byte
	for n := range 100 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			pcm := testPCM(n)
			s := []byte(enc.EncodeToString(pcm))
			if _, ok := plainBase64Len(s, -1); !ok {
				t.Fatalf("%d bytes: not plain", n)
			}
			for _, chars := range []int{8, wavHeadChars} {
				if len(s) < chars {
					continue
				}
				got, err := decodePlainHead(&buf, s[:chars])
				if err != nil || !bytes.Equal(got, pcm[:len(got)]) || len(got) != min(len(pcm), chars/4*3) {
					t.Fatalf("%d bytes, head of %d: %x, %v; want %x", n, chars, got, err, pcm[:min(len(pcm), chars/4*3)])
				}
			}
		}
	}
	if _, err := decodePlainHead(&buf, []byte("AAAA*AAA")); err == nil {
		t.Error("a head with '*' decoded")
	}
}
