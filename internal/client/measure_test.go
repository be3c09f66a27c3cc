package client

import (
	"encoding/base64"
	"encoding/binary"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/sse"
)

// runEvents feeds an event stream to a fresh pooled stream of kind and
// format, each event arriving 10 ms after the previous one, and returns the
// finished record and the error that ended it. With decodeAll an audio sink
// is attached, so every payload takes audioText's full decoding path.
func runEvents(t *testing.T, kind, format, wire string, decodeAll bool) (results.Record, error) {
	t.Helper()
	c, err := New(Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	var rec results.Record
	var sink io.Writer
	if decodeAll {
		sink = io.Discard
	}
	s := c.streams.Get().(*stream)
	s.reset(&rec, kind, format, defaultPCMSampleRate, sink, sse.DefaultMaxEventBytes)
	s.t0 = time.Unix(1767000000, 0)
	now := s.t0
	r := sse.NewReader(strings.NewReader(wire))
	var ferr error
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				ferr = err
			}
			break
		}
		now = now.Add(10 * time.Millisecond)
		var done bool
		if kind == results.KindChat {
			done, err = s.chatEvent(ev, now)
		} else {
			done, err = s.speechEvent(ev, now)
		}
		if err != nil {
			ferr = err
			break
		}
		if done {
			break
		}
	}
	c.finish(s)
	return rec, ferr
}

// chatStream is a chat event stream whose audio events carry the given
// payloads (JSON string contents) in delta.content, ended by [DONE].
func chatStream(payloads ...string) string {
	var sb strings.Builder
	for _, p := range payloads {
		sb.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + p + "\"}}],\"modality\":\"audio\"}\n\n")
	}
	return sb.String() + "data: [DONE]\n\n"
}

// speechStream is a speech SSE stream of audio deltas with the given
// payloads, ended by speech.audio.done.
func speechStream(payloads ...string) string {
	var sb strings.Builder
	for _, p := range payloads {
		sb.WriteString("event: speech.audio.delta\ndata: {\"type\":\"speech.audio.delta\",\"audio\":\"" + p + "\"}\n\n")
	}
	return sb.String() + "event: speech.audio.done\ndata: {\"type\":\"speech.audio.done\"}\n\n"
}

// TestMeasuredAudioMatchesDecoded runs each response through the path that
// measures audio from its length (measureAudio) and through the one that
// decodes every payload, and wants the same record and the same error.
func TestMeasuredAudioMatchesDecoded(t *testing.T) {
	loud := testPCM(3840)
	quiet := make([]byte, 3840)
	b64 := base64.StdEncoding.EncodeToString
	w := func(pcm []byte) string { return b64(testWAV(24000, pcm, false)) }
	withList := func(pcm []byte) string { // a LIST chunk before the data: a 300-byte header
		h := testWAV(24000, pcm, false)
		list := append([]byte("LIST"), make([]byte, 4+256)...)
		binary.LittleEndian.PutUint32(list[4:], 256)
		out := append(append(append([]byte{}, h[:36]...), list...), h[36:]...)
		binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-8))
		return b64(out)
	}
	short := func(pcm []byte) string { // declares more data than it holds
		h := testWAV(24000, pcm, false)
		binary.LittleEndian.PutUint32(h[40:], uint32(len(pcm)+100))
		return b64(h)
	}
	streaming := func(pcm []byte) string { return b64(testWAV(24000, pcm, true)) }
	declared := func(n int) string { // a speech header that declares n data bytes
		h := testWAV(24000, nil, false)
		binary.LittleEndian.PutUint32(h[40:], uint32(n))
		binary.LittleEndian.PutUint32(h[4:], uint32(36+n))
		return b64(h)
	}
	chat, speech := chatStream, speechStream
	cases := []struct {
		name, kind, format, wire string
	}{
		{"chat wav", results.KindChat, "wav", chat(w(loud), w(loud), w(loud[:1000]), w(loud))},
		{"chat wav silent start", results.KindChat, "wav", chat(w(quiet), w(quiet), w(loud), w(loud))},
		{"chat wav all silent", results.KindChat, "wav", chat(w(quiet), w(quiet), w(quiet))},
		{"chat wav raw base64", results.KindChat, "wav", chat(w(loud), base64.RawStdEncoding.EncodeToString(testWAV(24000, loud[:1001], false)))},
		{"chat wav escaped slash", results.KindChat, "wav", chat(w(loud), strings.ReplaceAll(w(loud), "/", `\/`))},
		{"chat wav line breaks", results.KindChat, "wav", chat(w(loud), w(loud)[:100]+`\n`+w(loud)[100:])},
		{"chat wav long header", results.KindChat, "wav", chat(w(loud), withList(loud), withList(loud))},
		{"chat wav streaming header", results.KindChat, "wav", chat(w(loud), streaming(loud))},
		{"chat wav declares too much", results.KindChat, "wav", chat(w(loud), short(loud))},
		{"chat wav bad base64", results.KindChat, "wav", chat(w(loud), w(loud)[:500]+"*"+w(loud)[501:])},
		{"chat wav format change", results.KindChat, "wav", chat(w(loud), b64(testWAV(16000, loud, false)))},
		{"chat wav not wav", results.KindChat, "wav", chat(w(loud), b64(loud))},
		{"chat pcm", results.KindChat, "pcm", chat(b64(loud), b64(loud[:7]), b64(loud))},
		{"speech pcm", results.KindSpeechSSE, "pcm", speech(b64(loud), b64(loud[:3]), b64(loud))},
		{"speech wav", results.KindSpeechSSE, "wav", speech(streaming(nil), b64(loud), b64(loud), b64(loud[:10]))},
		{"speech wav declared", results.KindSpeechSSE, "wav", speech(declared(5000), b64(loud), b64(loud))},
		{"speech wav declared short", results.KindSpeechSSE, "wav", speech(declared(9000), b64(loud), b64(loud))},
		{"speech wav second file", results.KindSpeechSSE, "wav", speech(w(loud), w(loud), b64(loud))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			measured, merr := runEvents(t, tc.kind, tc.format, tc.wire, false)
			decoded, derr := runEvents(t, tc.kind, tc.format, tc.wire, true)
			if (merr == nil) != (derr == nil) || (merr != nil && merr.Error() != derr.Error()) {
				t.Fatalf("error: measured %v, decoded %v", merr, derr)
			}
			if !reflect.DeepEqual(measured, decoded) {
				t.Errorf("records differ:\nmeasured %+v\ndecoded  %+v", measured, decoded)
			}
			if measured.AudioBytes == 0 {
				t.Errorf("no audio recorded: the case does not exercise the audio path")
			}
		})
	}
}

// FuzzMeasuredAudioMatchesDecoded sends a loud first event (so the onset is
// found and later payloads can be measured) and then two fuzzed payloads,
// as the bytes of an audio file base64-encoded (padded, raw, with "\/"
// escapes) or as the JSON string itself, on chat and speech streams in wav
// and pcm, and wants the measuring and the decoding path to agree.
func FuzzMeasuredAudioMatchesDecoded(f *testing.F) {
	loud := testPCM(3840)
	f.Add(testWAV(24000, loud[:1000], false), testWAV(24000, loud[:2000], true), uint8(0))
	f.Add(loud[:301], loud[:7], uint8(1))
	f.Add([]byte("UklGRiR9AABXQVZF*mt"), []byte("AAAA\\nAAAA"), uint8(8))
	f.Add(testWAV(16000, loud[:100], false), []byte("RIFF"), uint8(6))
	f.Fuzz(func(t *testing.T, a, b []byte, mode uint8) {
		kind, format := results.KindChat, "wav"
		if mode&1 != 0 {
			format = "pcm"
		}
		if mode&2 != 0 {
			kind = results.KindSpeechSSE
		}
		first := testWAV(24000, loud, format == "wav" && kind != results.KindChat)
		if format == "pcm" {
			first = loud
		}
		payload := func(p []byte) string {
			switch {
			case mode&8 != 0: // the fuzz bytes are the string: only what JSON allows unescaped
				return strings.Map(func(r rune) rune {
					if r < 0x20 || r == '"' || r == '\\' || r == utf8.RuneError {
						return -1
					}
					return r
				}, string(p))
			case mode&4 != 0:
				return base64.RawStdEncoding.EncodeToString(p)
			case mode&16 != 0:
				return strings.ReplaceAll(base64.StdEncoding.EncodeToString(p), "/", `\/`)
			}
			return base64.StdEncoding.EncodeToString(p)
		}
		wire := chatStream(base64.StdEncoding.EncodeToString(first), payload(a), payload(b))
		if kind != results.KindChat {
			wire = speechStream(base64.StdEncoding.EncodeToString(first), payload(a), payload(b))
		}
		measured, merr := runEvents(t, kind, format, wire, false)
		decoded, derr := runEvents(t, kind, format, wire, true)
		if (merr == nil) != (derr == nil) || (merr != nil && merr.Error() != derr.Error()) {
			t.Fatalf("error: measured %v, decoded %v", merr, derr)
		}
		if !reflect.DeepEqual(measured, decoded) {
			t.Fatalf("records differ:\nmeasured %+v\ndecoded  %+v", measured, decoded)
		}
	})
}
