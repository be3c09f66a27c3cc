package summary

import (
	"runtime"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// shortChatRecord is a short chat response with audio as the simulator's
// default scenario gives it: 26 text gaps, a continuity result with its
// players, figures of every kind.
func shortChatRecord() results.Record {
	r := results.Record{Kind: results.KindChat, Status: 200, LatencyOrigin: results.OriginIntended,
		IntendedS: 1, LagS: 0.0004, SentS: 1.0004, E2ES: 0.16, TTFTS: 0.002, TTFPS: 0.05, FirstAudioEventS: 0.05,
		TTFAAudibleS: 0.05, AudioBytes: 4800, AudioFrames: 2400, SampleRate: 24000, SampleWidth: 2, Channels: 1,
		LastAudioS: 0.05, FinishReason: "stop", ChunkArrivalsS: []float64{0.05}, ChunkBytes: []int{4800}}
	silence := 0.0
	r.LeadingSilenceS = &silence
	r.AudioDurationS = float64(r.AudioFrames) / 24000
	r.RTFLastChunk, r.RTFE2E = r.LastAudioS/r.AudioDurationS, r.E2ES/r.AudioDurationS
	for i := range 26 {
		r.TextGapsS = append(r.TextGapsS, 0.001+float64(i)*1e-6)
	}
	r.Continuity = &results.Continuity{Mode: "default", OK: map[string]bool{"100": true},
		StallResume: &results.PlayerResult{}, Preroll: &results.PlayerResult{StartupDelayS: 0.1}}
	return r
}

// liveHeap is the Go heap's live bytes after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSetKeepsItsRequestsOffTheHeap: the samples and the text gaps of
// 50,000 requests leave the Go heap where it was, so that the collector's
// headroom over the live heap does not double their cost in resident memory.
// (Kept on the heap, they were about 420 bytes a request: the Sample and 26
// gaps of 9 bytes.)
func TestSetKeepsItsRequestsOffTheHeap(t *testing.T) {
	const n = 50_000
	rec := shortChatRecord()
	before := liveHeap()
	set := NewSet()
	for i := range n {
		rec.Seq = i
		set.Add(&rec)
	}
	grown := liveHeap() - before
	if perRequest := float64(grown) / n; perRequest > 4 {
		t.Errorf("the Go heap grew by %d bytes for %d requests: %.1f a request, want at most 4", grown, n, perRequest)
	}
	if set.Len() != n {
		t.Errorf("Len %d, want %d", set.Len(), n)
	}
	if packed := float64(set.samples.bytes()) / n; packed > 120 {
		t.Errorf("%.1f bytes a packed short chat response, want at most 120", packed)
	}
}

// TestComputeSetTakesNoColumnFromTheHeap: the summary of 50,000 requests
// (and of their 1.3 million text gaps, most of them in the pool's
// temporary file) allocates almost nothing on the Go heap: each
// distribution is computed in one scratch buffer outside it, the pools'
// selection in working memory outside it too. It
// used to copy every figure's values, then copy each again to sort it:
// about 25 MB here.
func TestComputeSetTakesNoColumnFromTheHeap(t *testing.T) {
	const n = 50_000
	rec := shortChatRecord()
	set := NewSet()
	for i := range n {
		rec.Seq = i
		set.Add(&rec)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := ComputeSet(set, Options{})
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 256<<10 {
		t.Errorf("ComputeSet of %d requests allocated %d bytes on the heap, want at most 256 KiB", n, allocated)
	}
	if m, ok := s.Metric(MetricTextGap); !ok || m.N != n*len(rec.TextGapsS) {
		t.Errorf("itl_ms over %d values, want all %d", m.N, n*len(rec.TextGapsS))
	}
	if again := ComputeSet(set, Options{}); !equalMetrics(again, s) {
		t.Errorf("a second summary of the same set differs:\n%+v\n%+v", again.Metrics, s.Metrics)
	}
}

func equalMetrics(a, b *Summary) bool {
	if len(a.Metrics) != len(b.Metrics) {
		return false
	}
	for i := range a.Metrics {
		x, y := a.Metrics[i].Summary, b.Metrics[i].Summary
		if a.Metrics[i].Name != b.Metrics[i].Name || x.N != y.N || x.Mean != y.Mean || x.Std != y.Std || x.Min != y.Min || x.Max != y.Max {
			return false
		}
		for j := range x.Percentiles {
			if x.Percentiles[j] != y.Percentiles[j] {
				return false
			}
		}
	}
	return true
}

// TestSetCapsItsSamples: past its cap a Set keeps no more samples; the
// requests still count in the totals and the pools, and the summary says
// which figures leave them out.
func TestSetCapsItsSamples(t *testing.T) {
	set := NewSet()
	set.maxSamples = 100
	rec := shortChatRecord()
	for i := range 150 {
		rec.Seq = i
		set.Add(&rec)
	}
	if set.Len() != 100 || set.Totals.Requests != 150 {
		t.Errorf("Len %d and %d requests in the totals, want 100 and 150", set.Len(), set.Totals.Requests)
	}
	s := ComputeSet(set, Options{})
	if s.Requests.Total != 100 {
		t.Errorf("%d requests in the figures, want the 100 kept", s.Requests.Total)
	}
	if m, _ := s.Metric(MetricTextGap); m.N != 150*26 {
		t.Errorf("itl_ms over %d values, want every request's %d", m.N, 150*26)
	}
	warned := false
	for _, w := range s.Warnings {
		warned = warned || strings.HasPrefix(w, "50 requests past the first 100 are left out of every figure but")
	}
	if !warned {
		t.Errorf("no warning about the requests past the cap: %q", s.Warnings)
	}
}
