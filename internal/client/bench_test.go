package client

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/sse"
)

// loopReader serves the same bytes forever, so a benchmark can read any
// number of identical events from one small buffer.
type loopReader struct {
	b   []byte
	off int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

func benchStream(b *testing.B, kind, format string) (*Client, *stream) {
	return benchStreamWith(b, Options{}, kind, format)
}

// benchStreamWith is benchStream for a client with opts (BaseURL is set).
func benchStreamWith(b *testing.B, opts Options, kind, format string) (*Client, *stream) {
	b.Helper()
	opts.BaseURL = "http://127.0.0.1:1"
	c, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	s := c.streams.Get().(*stream)
	s.reset(&results.Record{}, kind, format, defaultPCMSampleRate, nil, sse.DefaultMaxEventBytes)
	s.audioChecks = c.opts.AudioChecks
	s.t0 = time.Now()
	return c, s
}

// BenchmarkChatAudioEvent is the per-event hot path for one 80 ms chunk
// (24 kHz s16 mono): SSE read, chunk decode, base64 decode, WAV decode and
// the record appends. The record's chunk slices are rewound when full, as
// they would be pre-sized for a new request, so this is the steady state.
func BenchmarkChatAudioEvent(b *testing.B) {
	wavEvent := chatAudioEvent(testWAV(24000, testPCM(chunk80ms), false))
	pcmEvent := chatAudioEvent(testPCM(chunk80ms))
	dataEvent := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767000000,"model":"m","choices":[{"index":0,"delta":{"audio":{"id":"audio_1","data":"` +
		base64.StdEncoding.EncodeToString(testPCM(chunk80ms)) + `"}},"finish_reason":null}],"modality":"audio"}`
	for _, bc := range []struct {
		name, format, payload, prefix string
	}{
		{"wav", "wav", wavEvent, ""},
		{"pcm", "pcm", pcmEvent, ""},
		{"delta.audio.data", "pcm", dataEvent, ""},
		{"wav+stamp", "wav", wavEvent, ": sent=1767000000000000000\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, s := benchStream(b, results.KindChat, bc.format)
			wire := []byte(bc.prefix + "data: " + bc.payload + "\n\n")
			r := sse.NewReader(&loopReader{b: wire})
			rec := s.rec
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ev, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.chatEvent(ev, time.Now()); err != nil {
					b.Fatal(err)
				}
				if len(rec.ChunkArrivalsS) == cap(rec.ChunkArrivalsS) {
					rec.ChunkArrivalsS, rec.ChunkBytes = rec.ChunkArrivalsS[:0], rec.ChunkBytes[:0]
				}
				if len(rec.StampDelaysS) == cap(rec.StampDelaysS) {
					rec.StampDelaysS = rec.StampDelaysS[:0]
				}
			}
			b.StopTimer()
			if rec.AudioBytes != int64(b.N)*chunk80ms {
				b.Fatalf("recorded %d bytes for %d events", rec.AudioBytes, b.N)
			}
		})
	}
}

// BenchmarkSpeechSSEEvent is the per-event path of a speech SSE delta.
func BenchmarkSpeechSSEEvent(b *testing.B) {
	_, s := benchStream(b, results.KindSpeechSSE, "pcm")
	wire := []byte("event: speech.audio.delta\ndata: {\"type\":\"speech.audio.delta\",\"audio\":\"" +
		base64.StdEncoding.EncodeToString(testPCM(chunk80ms)) + "\",\"response_format\":\"pcm\"}\n\n")
	r := sse.NewReader(&loopReader{b: wire})
	rec := s.rec
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ev, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.speechEvent(ev, time.Now()); err != nil {
			b.Fatal(err)
		}
		if len(rec.ChunkArrivalsS) == cap(rec.ChunkArrivalsS) {
			rec.ChunkArrivalsS, rec.ChunkBytes = rec.ChunkArrivalsS[:0], rec.ChunkBytes[:0]
		}
	}
}

// BenchmarkDecodeChatChunk isolates the JSON walk of one 80 ms WAV event.
func BenchmarkDecodeChatChunk(b *testing.B) {
	payload := []byte(chatAudioEvent(testWAV(24000, testPCM(chunk80ms), false)))
	var c chatChunk
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for range b.N {
		if err := decodeChatChunk(payload, &c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBase64 isolates base64 decoding of one 80 ms WAV event, with
// encoding/base64 alone as the reference.
func BenchmarkBase64(b *testing.B) {
	src := []byte(base64.StdEncoding.EncodeToString(testWAV(24000, testPCM(chunk80ms), false)))
	b.Run("client", func(b *testing.B) {
		var buf []byte
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for range b.N {
			if _, err := DecodeBase64(&buf, src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("length-only", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for range b.N {
			if _, ok := plainBase64Len(src, -1); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encoding-base64", func(b *testing.B) {
		buf := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for range b.N {
			if _, err := base64.StdEncoding.Decode(buf, src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// chatResponse is a whole streaming chat response: a role chunk, ten text
// events, n 80 ms WAV audio events, the usage chunk and [DONE].
func chatResponse(n int) []byte {
	var sb strings.Builder
	w := func(d string) { sb.WriteString("data: " + d + "\n\n") }
	w(exRoleChunk)
	for range 10 {
		w(exTextChunk)
	}
	ev := chatAudioEvent(testWAV(24000, testPCM(chunk80ms), false))
	for range n {
		w(ev)
	}
	w(exUsageChunk)
	w("[DONE]")
	return []byte(sb.String())
}

// BenchmarkChatRequest is the whole-request bookkeeping of a 60-chunk
// (4.8 s) response read from memory: pooled stream, SSE reader, every event,
// and the derived fields (totals, RTFs, continuity, players).
func BenchmarkChatRequest(b *testing.B) {
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", Thresholds: []float64{0.1, 0.2}})
	if err != nil {
		b.Fatal(err)
	}
	resp := chatResponse(60)
	b.SetBytes(int64(len(resp)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec := &results.Record{}
		s := c.streams.Get().(*stream)
		s.reset(rec, results.KindChat, "wav", defaultPCMSampleRate, nil, sse.DefaultMaxEventBytes)
		s.t0 = time.Now()
		s.body = body{r: bytes.NewReader(resp)}
		if err := s.consume(&s.body); err != nil {
			b.Fatal(err)
		}
		rec.E2ES = time.Since(s.t0).Seconds()
		c.finish(s)
		s.release()
		c.streams.Put(s)
		if len(rec.ChunkBytes) != 60 || rec.Continuity == nil {
			b.Fatalf("%d chunks", len(rec.ChunkBytes))
		}
	}
}
