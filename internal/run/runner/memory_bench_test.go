package runner

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// The resident memory of the records a run holds after they finished
// (issue 11, "Bounded memory"): synthetic records shaped like short chat
// voice responses go through the sinks that keep figures (setSink,
// worstSink: the summary.Set, the worst-response picker), and the live heap after a GC is
// compared before and after. Every slice is a fresh allocation, as the
// client makes them, and the records are dropped after add, as the runner
// drops them once written.

// benchRecordsPerOp is how many finished requests one benchmark op holds
// (the figure: 1 M short requests).
const benchRecordsPerOp = 1_000_000

// syntheticRecord is a successful chat voice response: chunks audio chunks,
// gaps text gaps, stamps stamped events, a continuity result with both
// players, the pointer figures set.
func syntheticRecord(seq, chunks, gaps, stamps int) results.Record {
	silence, rtfServer := 0.01, 0.3
	r := results.Record{
		ID: fmt.Sprintf("req-%06d", seq), Seq: seq, Kind: results.KindChat, Endpoint: "/v1/chat/completions",
		Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct", IntendedS: float64(seq) * 0.02, SentS: float64(seq)*0.02 + 0.001,
		LagS: 0.001, LatencyOrigin: results.OriginSend, Status: 200, FirstByteS: 0.004, TTFPS: 0.03, TTFTS: 0.005,
		LastAudioS: 0.2, E2ES: 0.21, TTFAAudibleS: 0.03, LeadingSilenceS: &silence, FirstAudioEventS: 0.03,
		SampleRate: 24000, SampleWidth: 2, Channels: 1, AudioBytes: int64(chunks) * 1920, AudioFrames: int64(chunks) * 960,
		AudioDurationS: float64(chunks) * 0.04, PromptTokens: 20, CompletionTokens: 40, FinishReason: "stop",
		TextChars: 160, RTFLastChunk: 0.2, RTFE2E: 0.21, RTFServer: &rtfServer,
		Continuity: &results.Continuity{Mode: "default", OK: map[string]bool{"100": true},
			Preroll:     &results.PlayerResult{StartupDelayS: 0.2},
			StallResume: &results.PlayerResult{}},
	}
	for i := range chunks {
		r.ChunkArrivalsS = append(r.ChunkArrivalsS, 0.03+float64(i)*0.005)
		r.ChunkBytes = append(r.ChunkBytes, 1920)
	}
	for i := range gaps {
		r.TextGapsS = append(r.TextGapsS, 0.001+float64(i%7)*0.0001)
	}
	for i := range stamps {
		r.StampDelaysS = append(r.StampDelaysS, 0.0001+float64(i%5)*0.00001)
	}
	return r
}

// liveHeap is the heap in use by live objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkFinishedRequestBytes reports bytes/request: the memory the
// figure sinks hold per finished request, on the live heap and outside it
// (summary.Set.OffHeapBytes), for records of a few shapes.
func BenchmarkFinishedRequestBytes(b *testing.B) {
	for _, shape := range []struct {
		name                 string
		chunks, gaps, stamps int
	}{
		{"scalars-only", 0, 0, 0},
		{"short-chat-voice", 10, 40, 60},
	} {
		b.Run(shape.name, func(b *testing.B) {
			var perRequest float64
			for b.Loop() {
				before := liveHeap()
				set, worst := summary.NewSet(), new(summary.WorstPicker)
				sinks := []sink{(*setSink)(set), (*worstSink)(worst)}
				for seq := range benchRecordsPerOp {
					r := syntheticRecord(seq, shape.chunks, shape.gaps, shape.stamps)
					for _, s := range sinks {
						_ = s.add(&r, nil)
					}
				}
				after := int64(liveHeap()) + int64(set.OffHeapBytes())
				runtime.KeepAlive(sinks)
				perRequest = float64(after-int64(before)) / benchRecordsPerOp
			}
			b.ReportMetric(perRequest, "bytes/request")
		})
	}
}
