package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/omnibench/omnibench/internal/run/results"
)

// mixedRecords is a run with every kind of record the summary tells apart:
// chat, speech and realtime responses with and without audio, text, audible
// onset, server RTF and continuity results (with and without the players,
// with labels the options do and do not ask for), failures of several
// classes and messages, warm-up and ramp requests, both latency origins,
// text gaps and stamp delays.
func mixedRecords(n int, seed uint64) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	kinds := []string{results.KindChat, results.KindSpeech, results.KindRealtime, "speech-ws"}
	finishes := []string{"", "stop", "length"}
	classes := []string{results.ErrHTTPStatus, results.ErrTimeout, results.ErrConnect, "malformed"}
	messages := []string{"HTTP 503: overloaded", "HTTP 404: model  foo\n not found", "timeout after 20s", "", "req %d failed"}
	recs := make([]results.Record, n)
	for i := range recs {
		r := &recs[i]
		r.ID, r.Seq = fmt.Sprintf("req-%06d", i), i
		r.Kind = kinds[rng.IntN(len(kinds))]
		r.Warmup = i < 5
		if !r.Warmup && rng.IntN(6) == 0 {
			r.Phase = "ramp"
		}
		r.LatencyOrigin = results.OriginSend
		if i%3 == 0 {
			r.LatencyOrigin = results.OriginIntended
		}
		r.IntendedS = float64(i) * 0.01
		r.LagS = rng.Float64() * 0.01
		r.SentS = r.IntendedS + r.LagS
		r.QueueS = rng.Float64() * 0.002
		r.E2ES = 0.1 + rng.Float64()
		r.InputAudioS, r.InputAudioBytes = rng.Float64(), int64(rng.IntN(5000))
		r.PromptTokens, r.CompletionTokens = rng.IntN(100), rng.IntN(200)
		for range rng.IntN(6) {
			r.StampDelaysS = append(r.StampDelaysS, rng.Float64()*0.001)
		}
		if rng.IntN(7) == 0 {
			r.ErrorClass = classes[rng.IntN(len(classes))]
			r.Error = messages[rng.IntN(len(messages))]
			if r.Error == "req %d failed" {
				r.Error = fmt.Sprintf(r.Error, i)
			}
			if r.ErrorClass == results.ErrHTTPStatus {
				r.Status = []int{0, 404, 503}[rng.IntN(3)]
			}
			continue
		}
		r.Status = 200
		r.FinishReason = finishes[rng.IntN(len(finishes))]
		if rng.IntN(4) > 0 {
			r.TTFTS = rng.Float64() * 0.05
			for range rng.IntN(8) {
				r.TextGapsS = append(r.TextGapsS, rng.Float64()*0.02)
			}
		}
		if rng.IntN(5) == 0 {
			continue // no audio
		}
		r.AudioBytes = int64(1 + rng.IntN(100000))
		r.AudioFrames = r.AudioBytes / 2
		r.AudioDurationS = float64(r.AudioFrames) / 24000
		if rng.IntN(10) == 0 {
			r.AudioDurationS = 0
		}
		r.TTFPS = rng.Float64() * 0.2
		if rng.IntN(2) == 0 {
			r.FirstAudioEventS = r.TTFPS * rng.Float64()
		}
		if rng.IntN(3) > 0 {
			r.TTFAAudibleS = r.TTFPS + rng.Float64()*0.05
		}
		if rng.IntN(3) > 0 {
			v := rng.Float64() * 0.05
			r.LeadingSilenceS = &v
		}
		r.RTFLastChunk, r.RTFE2E = rng.Float64(), rng.Float64()
		if rng.IntN(2) == 0 {
			v := rng.Float64()
			r.RTFServer = &v
		}
		if rng.IntN(6) == 0 {
			continue // no continuity result
		}
		u := []float64{0, 0.05, 0.1, 0.2, rng.Float64() * 0.5}[rng.IntN(5)]
		c := &results.Continuity{Mode: "default", MaxUnderrunS: u, OK: map[string]bool{}}
		if rng.IntN(4) > 0 {
			c.OK["100"] = u <= 0.1
			c.OK["500"] = rng.IntN(5) > 0 // disagrees with the underrun now and then
		}
		if rng.IntN(3) > 0 {
			c.StallResume = &results.PlayerResult{Stalls: rng.IntN(3), TotalStallS: rng.Float64(), LongestStallS: rng.Float64()}
			c.Preroll = &results.PlayerResult{Stalls: rng.IntN(2), StartupDelayS: rng.Float64() * 0.2}
		}
		r.Continuity = c
	}
	return recs
}

// TestSetMatchesRecords: the summary of the compact Set equals, field by
// field, the one the pre-Set implementation (reference_test.go) computes
// from the full records, for several option sets.
func TestSetMatchesRecords(t *testing.T) {
	recs := mixedRecords(3000, 7)
	goodput, err := ParseGoodput("ttfp:150,e2e:900,itl:15,underrun:100,rtf:0.8")
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{},
		{IncludeRamp: true},
		{Percentiles: []float64{50, 99.9}, Thresholds: []float64{0.05, 0.1, 0.5}, Goodput: goodput},
		{Percentiles: []float64{25, 75}, Thresholds: []float64{0.2}, Goodput: goodput, IncludeRamp: true},
	} {
		want := ComputeRef(recs, opts)
		got := ComputeSet(SetOf(recs), opts)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("options %+v: the Set's summary differs from the records'\n got %+v\nwant %+v", opts, got, want)
		}
		if g, w := got.Bench(), want.Bench(); !reflect.DeepEqual(g, w) {
			t.Errorf("options %+v: bench differs\n got %v\nwant %v", opts, g, w)
		}
		if len(want.Errors) == 0 || want.Requests.Ramp == 0 && !opts.IncludeRamp || want.Goodput == nil && len(opts.Goodput) > 0 {
			t.Errorf("options %+v: the mix does not exercise errors, ramp or goodput: %+v", opts, want.Requests)
		}
	}
}

// TestSetErrorSetManyMessages: a message per failure (a request id in each)
// fills the error set past its 20 rows exactly as the records do.
func TestSetErrorSetManyMessages(t *testing.T) {
	recs := make([]results.Record, 500)
	for i := range recs {
		recs[i] = results.Record{ID: fmt.Sprintf("r%d", i), Seq: i, ErrorClass: results.ErrStreamError, Error: fmt.Sprintf("error of request %d", i%60)}
	}
	want, got := ComputeRef(recs, Options{}), Compute(recs, Options{})
	if !reflect.DeepEqual(got.Errors, want.Errors) || got.ErrorsOmitted != want.ErrorsOmitted || got.ErrorsOmitted == 0 {
		t.Errorf("errors %v omitted %d, want %v omitted %d", got.Errors, got.ErrorsOmitted, want.Errors, want.ErrorsOmitted)
	}
}

// TestSetEventPoolCap: past its cap a pool keeps a uniform sample and the
// summary says so; below it nothing is said.
func TestSetEventPoolCap(t *testing.T) {
	set := NewSet()
	set.gaps.max = 100
	for i := range 1000 {
		set.Add(&results.Record{Seq: i, E2ES: 1, TTFTS: 0.1, TextGapsS: []float64{float64(i) / 1000}})
	}
	s := ComputeSet(set, Options{})
	m, ok := s.Metric(MetricTextGap)
	if !ok || m.N != 100 {
		t.Fatalf("itl_ms over %d values, want the 100 kept", m.N)
	}
	// Uniform over 0..999 ms: the sample's median is near 500 ms.
	if m.Median < 300 || m.Median > 700 {
		t.Errorf("median of the sample %v ms, want near 500", m.Median)
	}
	warned := false
	for _, w := range s.Warnings {
		warned = warned || w == "itl_ms (text gaps): 1000 values, more than the 100 kept: its figures are from a uniform random sample of them"
	}
	if !warned {
		t.Errorf("no warning about the sampled text gaps: %q", s.Warnings)
	}
	for _, w := range ComputeSet(SetOf(mixedRecords(200, 1)), Options{}).Warnings {
		if strings.Contains(w, "sample") || strings.Contains(w, otherString) || strings.Contains(w, "past the") {
			t.Errorf("a cap warning below every cap: %q", w)
		}
	}
}

// TestSetBlocks adds records across several blocks of packed samples:
// every one comes back in order with the bits it went in with, every block
// but the last is full to within one packed sample, and the store holds
// less than a Sample per request.
func TestSetBlocks(t *testing.T) {
	s := NewSet()
	const n = 20_000
	for i := range n {
		r := results.Record{Seq: i, E2ES: float64(i), Status: 200, TTFPS: 0.25, FirstAudioEventS: 0.25, TTFAAudibleS: 0.25,
			AudioBytes: int64(4800 + 2*i), AudioFrames: int64(2400 + i), SampleRate: 24000}
		r.AudioDurationS = float64(r.AudioFrames) / 24000
		r.RTFE2E = r.E2ES / r.AudioDurationS
		if i%7 == 0 {
			r.AudioDurationS = math.Nextafter(r.AudioDurationS, 1) // not derivable: kept as it is
			r.TTFAAudibleS = 0.5
		}
		s.Add(&r)
	}
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	i := 0
	s.All(func(x *Sample) {
		dur := float64(2400+i) / 24000
		ttfa := 0.25
		if i%7 == 0 {
			dur, ttfa = math.Nextafter(dur, 1), 0.5
		}
		if x.E2ES != float64(i) || x.AudioDurationS != dur || x.RTFE2E != float64(i)/(float64(2400+i)/24000) ||
			x.FirstAudioEventS != 0.25 || x.TTFAAudibleS != ttfa || x.AudioFrames != int64(2400+i) || x.Status != 200 {
			t.Fatalf("sample %d came back as %+v", i, *x)
		}
		i++
	})
	if i != n {
		t.Fatalf("All gave %d samples, want %d", i, n)
	}
	if len(s.samples.blocks) < 2 {
		t.Fatalf("%d blocks: the test wants several", len(s.samples.blocks))
	}
	for k, b := range s.samples.blocks[:len(s.samples.blocks)-1] {
		if cap(b)-len(b) >= maxPacked {
			t.Errorf("block %d has room for another sample: %d of %d bytes used", k, len(b), cap(b))
		}
	}
	if per := float64(s.samples.bytes()) / n; per > float64(unsafe.Sizeof(Sample{}))/2 {
		t.Errorf("%.1f bytes per packed sample, want at most half a Sample's %d", per, unsafe.Sizeof(Sample{}))
	}
}
