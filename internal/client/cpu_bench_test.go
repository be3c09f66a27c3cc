//go:build unix

package client

import (
	"encoding/base64"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/sse"
)

// cpuClock measures the CPU time this process uses during a benchmark, so
// that a per-event cost can be read on a machine shared with other work:
// ns/op is wall-clock time and grows when other processes take the CPU,
// cpu-ns/op does not.
type cpuClock struct{ start time.Duration }

func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{start: processCPUTime()} }

// report adds cpu-ns/op. The benchmark loop runs on one goroutine and does
// not allocate, so the process's CPU time is the loop's.
func (c cpuClock) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPUTime()-c.start)/float64(b.N), "cpu-ns/op")
	}
}

// simulatorChatEvent is an 80 ms audio event exactly as the simulator sends
// it: the send stamp, then a chat chunk carrying a complete WAV file.
func simulatorChatEvent() []byte {
	return []byte(": sent=1767000000123456789\ndata: " + chatAudioEvent(testWAV(24000, testPCM(chunk80ms), false)) + "\n\n")
}

// simulatorSpeechEvent is an 80 ms speech SSE delta (raw PCM) as the
// simulator sends it.
func simulatorSpeechEvent() []byte {
	return []byte(": sent=1767000000123456789\nevent: speech.audio.delta\ndata: {\"type\":\"speech.audio.delta\",\"audio\":\"" +
		base64.StdEncoding.EncodeToString(testPCM(chunk80ms)) + "\",\"response_format\":\"pcm\"}\n\n")
}

// BenchmarkAudioEventSteadyState is the per-event figure: one
// additional 80 ms audio event (24 kHz s16 mono) in steady state, from the
// bytes of the response body to the record: SSE framing, the receive time,
// the send stamp's delay, the JSON walk, base64 and WAV decoding, and the
// appends to the record's chunk slices (pre-sized per request, rewound when
// full, as a new request's would be). Reports allocations and CPU time per
// event next to the wall-clock ns/op. The "+checks" cases run the signal
// checks (Options.AudioChecks), which keep every event decoded.
func BenchmarkAudioEventSteadyState(b *testing.B) {
	for _, bc := range []struct {
		name, kind, format string
		wire               []byte
		checks             bool
	}{
		{"chat-wav", results.KindChat, "wav", simulatorChatEvent(), false},
		{"speech-sse-pcm", results.KindSpeechSSE, "pcm", simulatorSpeechEvent(), false},
		{"chat-wav+checks", results.KindChat, "wav", simulatorChatEvent(), true},
		{"speech-sse-pcm+checks", results.KindSpeechSSE, "pcm", simulatorSpeechEvent(), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			_, s := benchStreamWith(b, Options{AudioChecks: bc.checks}, bc.kind, bc.format)
			r := sse.NewReader(&loopReader{b: bc.wire})
			rec := s.rec
			handle := s.chatEvent
			if bc.kind == results.KindSpeechSSE {
				handle = s.speechEvent
			}
			b.SetBytes(int64(len(bc.wire)))
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				ev, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := handle(ev, time.Now()); err != nil {
					b.Fatal(err)
				}
				if len(rec.ChunkArrivalsS) == cap(rec.ChunkArrivalsS) {
					rec.ChunkArrivalsS, rec.ChunkBytes = rec.ChunkArrivalsS[:0], rec.ChunkBytes[:0]
				}
				if len(rec.StampDelaysS) == cap(rec.StampDelaysS) {
					rec.StampDelaysS = rec.StampDelaysS[:0]
				}
			}
			cpu.report(b)
			// The stamp slice is rewound when full, so only its existence
			// shows that stamps were recorded.
			if rec.AudioBytes != int64(b.N)*chunk80ms || rec.StampDelaysS == nil {
				b.Fatalf("recorded %d bytes for %d events (stamps recorded: %v)", rec.AudioBytes, b.N, rec.StampDelaysS != nil)
			}
		})
	}
}

// BenchmarkRequestBookkeeping is the fixed cost of one request apart from
// the network and its events: building the JSON body, the pooled per-request
// state, the SSE reader, the record's chunk slices, and at the end the
// derived fields (totals, RTFs, continuity at two thresholds, the pre-roll
// and stall-and-resume players) over a 5 s response of 63 chunks of 80 ms.
func BenchmarkRequestBookkeeping(b *testing.B) {
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", Thresholds: []float64{0.1, 0.2}})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Kind: results.KindChat, Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct", AudioFormat: "wav",
		Prompt: "What is the tallest mountain in Europe?", Modalities: []string{"text", "audio"}}
	const chunks = 63
	pcm := testPCM(chunk80ms)
	empty := strings.NewReader("")
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		rec := &results.Record{}
		body, format, err := req.build()
		if err != nil || len(body) == 0 {
			b.Fatal(err)
		}
		s := c.streams.Get().(*stream)
		s.reset(rec, req.Kind, format, defaultPCMSampleRate, nil, sse.DefaultMaxEventBytes)
		s.t0 = time.Now()
		empty.Reset("")
		if err := s.consume(empty); err == nil { // the pooled SSE reader, reset per request
			b.Fatal("an empty body must count as truncated")
		}
		if err := s.setFormat(wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}); err != nil {
			b.Fatal(err)
		}
		for i := range chunks {
			s.addChunk(s.t0.Add(50*time.Millisecond+time.Duration(i)*80*time.Millisecond), pcm)
		}
		rec.E2ES = 5.1
		c.finish(s)
		s.release()
		c.streams.Put(s)
		if rec.Continuity == nil || len(rec.ChunkBytes) != chunks {
			b.Fatalf("continuity %v, %d chunks", rec.Continuity, len(rec.ChunkBytes))
		}
	}
	cpu.report(b)
}
