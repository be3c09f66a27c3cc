package sse

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// loopReader returns its bytes over and over, without allocating, so that
// benchmarks measure the parser and not the source.
type loopReader struct {
	b   []byte
	off int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.b[l.off:])
		n += c
		l.off = (l.off + c) % len(l.b)
	}
	return n, nil
}

// audioWAV returns ms milliseconds of a 24 kHz mono s16 tone as a WAV file,
// like one vocoder chunk of Qwen3-Omni.
func audioWAV(ms int) []byte {
	const rate = 24000
	n := rate * ms / 1000
	pcm := make([]byte, 2*n)
	for i := range n {
		s := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		pcm[2*i], pcm[2*i+1] = byte(s), byte(uint16(s)>>8)
	}
	return wav.Encode(wav.Format{SampleRate: rate, Channels: 1, BitsPerSample: 16}, pcm)
}

// chatAudioEvent is one streaming chat audio chunk
// (docs/reference/http-streams.md, section 2.4)
// carrying ms milliseconds of audio, framed as an SSE event.
func chatAudioEvent(ms int) []byte {
	chunk := map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1767000000,
		"model": "Qwen/Qwen3-Omni-30B-A3B-Instruct",
		"choices": []any{map[string]any{
			"index":         0,
			"delta":         map[string]any{"role": "assistant", "content": base64.StdEncoding.EncodeToString(audioWAV(ms))},
			"logprobs":      nil,
			"finish_reason": nil,
		}},
		"usage":    map[string]any{"prompt_tokens": 42, "completion_tokens": 0, "total_tokens": 42},
		"modality": "audio", "metrics": nil,
	}
	js, err := json.Marshal(chunk)
	if err != nil {
		panic(err)
	}
	return []byte(": sent=1767000000123456789\ndata: " + string(js) + "\n\n")
}

// speechDeltaEvent is one /v1/audio/speech SSE delta
// (docs/reference/http-streams.md, section 3.4).
func speechDeltaEvent(ms int) []byte {
	pcm := audioWAV(ms)[wav.HeaderSize:]
	return fmt.Appendf(nil, "event: speech.audio.delta\ndata: {\"type\":\"speech.audio.delta\",\"audio\":%q,\"response_format\":\"pcm\"}\n\n",
		base64.StdEncoding.EncodeToString(pcm))
}

// bigEvent is a chat-style event whose data line is about size bytes.
func bigEvent(size int) []byte {
	b := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"")
	for len(b) < size {
		b = append(b, "UklGRiR9AABXQVZFZm10IBAAAAABAAEAwF0AAIC7AAACABAAZGF0YQB9AAA"...)
	}
	return append(b, "\"}}],\"modality\":\"audio\"}\n\n"...)
}

func benchmarkReader(b *testing.B, event []byte) {
	r := NewReader(&loopReader{b: event})
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReaderAudioEvent(b *testing.B) {
	b.Run("chat-80ms", func(b *testing.B) { benchmarkReader(b, chatAudioEvent(80)) })
	b.Run("speech-80ms", func(b *testing.B) { benchmarkReader(b, speechDeltaEvent(80)) })
	b.Run("200KB", func(b *testing.B) { benchmarkReader(b, bigEvent(200<<10)) })
}

func BenchmarkWriterAudioEvent(b *testing.B) {
	ev := chatAudioEvent(80)
	data := ev[len(": sent=1767000000123456789\ndata: ") : len(ev)-2]
	w := NewWriter(io.Discard)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Event("", data); err != nil {
			b.Fatal(err)
		}
	}
}

// eventReader returns one event per Read (the rest of it when p was too
// small), as a socket does that received each event in its own segment: a
// Reader then consumes all it read with every event, so a lent buffer goes
// back to its pool each time.
type eventReader struct {
	b   []byte
	off int
}

func (e *eventReader) Read(p []byte) (int, error) {
	n := copy(p, e.b[e.off:])
	e.off = (e.off + n) % len(e.b)
	return n, nil
}

// BenchmarkReaderLentBuffer is the price of BufferPool per 80 ms chat event
// arriving alone: the 64-byte probe read, the pool's get and put and the
// second read, against a Reader with its own buffer on the same source.
func BenchmarkReaderLentBuffer(b *testing.B) {
	ev := chatAudioEvent(80)
	for _, tc := range []struct {
		name string
		new  func(io.Reader) *Reader
	}{
		{"own-buffer", NewReader},
		{"lent", new(BufferPool).NewReader},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := tc.new(&eventReader{b: ev})
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
