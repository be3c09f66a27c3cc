package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/stats"
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
// from the full records, for several option sets; but for the mean and
// standard deviation of the per-event pools, which the Set sums in the
// order the values came (see pool.summary) and the records sorted: those
// agree to within a relative 1e-12.
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
		alignPoolSums(t, got, want)
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

// alignPoolSums checks that the means and standard deviations of the pooled
// figures of got are want's to within a relative 1e-12, and then gives got
// want's, so that the rest compares exactly.
func alignPoolSums(t *testing.T, got, want *Summary) {
	t.Helper()
	near := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
	for i := range got.Metrics {
		g := &got.Metrics[i].Summary
		if name := got.Metrics[i].Name; name != MetricTextGap && name != MetricStampDelay {
			continue
		}
		w, ok := want.Metric(got.Metrics[i].Name)
		if !ok || !near(g.Mean, w.Mean) || !near(g.Std, w.Std) {
			t.Errorf("%s: mean %v std %v, the records' %v %v", got.Metrics[i].Name, g.Mean, g.Std, w.Mean, w.Std)
			continue
		}
		g.Mean, g.Std = w.Mean, w.Std
	}
	if got.bench != nil && want.bench != nil {
		const k = "mean_itl_ms"
		if g, w := got.bench.dists[k], want.bench.dists[k]; !near(g, w) {
			t.Errorf("%s %v, the records' %v", k, g, w)
		} else {
			got.bench.dists[k] = w
		}
	}
}

// TestSetEventPoolSpills: past the values a pool keeps in memory the rest
// go to its temporary file, and the figures are those of every value, to
// the bit for the percentiles, with no warning; below the cap nothing is
// said either.
func TestSetEventPoolSpills(t *testing.T) {
	set := NewSet()
	set.gaps.max = 100
	set.gaps.dir = t.TempDir()
	var all []float64
	for i := range 20_000 {
		g := float64((i*7919)%20_000) / 1000 // each of 0..19999 ms once, out of order
		all = append(all, g*1000)
		set.Add(&results.Record{Seq: i, E2ES: 1, TTFTS: 0.1, TextGapsS: []float64{g}})
	}
	if set.gaps.spilled() != len(all)-100 || set.gaps.spill.written == 0 {
		t.Fatalf("%d values in the file (%d bytes written), want %d", set.gaps.spilled(), set.gaps.spill.written, len(all)-100)
	}
	ps := []float64{1, 50, 90, 99, 99.9}
	s := ComputeSet(set, Options{Percentiles: ps})
	m, ok := s.Metric(MetricTextGap)
	want := stats.Summarize(all, ps)
	if !ok || m.N != want.N || m.Min != want.Min || m.Max != want.Max || m.Median != want.Median || !reflect.DeepEqual(m.Percentiles, want.Percentiles) {
		t.Errorf("itl_ms %+v, want every value's %+v", m, want)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "sample") {
			t.Errorf("a spilled pool warns: %q", w)
		}
	}
	for _, w := range ComputeSet(SetOf(mixedRecords(200, 1)), Options{}).Warnings {
		if strings.Contains(w, "sample") || strings.Contains(w, otherString) || strings.Contains(w, "past the") {
			t.Errorf("a cap warning below every cap: %q", w)
		}
	}
}

// TestSetEventPoolSampleWithoutFile: a pool whose temporary file cannot be
// created keeps a uniform sample of its values, and the summary says so,
// with the reason.
func TestSetEventPoolSampleWithoutFile(t *testing.T) {
	set := NewSet()
	set.gaps.max = 100
	set.gaps.dir = filepath.Join(t.TempDir(), "missing")
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
		warned = warned || strings.HasPrefix(w, "itl_ms (text gaps): 1000 values, more than the 100 kept in memory: "+
			"its figures are from a uniform random sample of them, as the rest could not be written to a temporary file (creating the temporary file: ")
	}
	if !warned {
		t.Errorf("no warning about the sampled text gaps: %q", s.Warnings)
	}
}

// TestSetEventPoolWriteError: when writing the file fails part way, what it
// held goes through the sample as it would have: the sample is uniform over
// every value, and the summary warns.
func TestSetEventPoolWriteError(t *testing.T) {
	set := NewSet()
	set.gaps.max = 100
	set.gaps.dir = t.TempDir()
	const n = 40_000
	add := func(i int) {
		set.Add(&results.Record{Seq: i, E2ES: 1, TTFTS: 0.1, TextGapsS: []float64{float64(i) / 1000}})
	}
	for i := range n / 2 {
		add(i)
	}
	sp := set.gaps.spill
	if sp == nil || sp.written == 0 {
		t.Fatal("the pool wrote nothing to its file")
	}
	// The same file, open for reading only: the next block's write fails,
	// reading it back still works.
	readOnly, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", sp.f.Fd()))
	if err != nil {
		t.Skipf("no /proc/self/fd to reopen the file read-only: %v", err)
	}
	sp.f.Close()
	sp.f = readOnly
	for i := n / 2; i < n; i++ {
		add(i)
	}
	if set.gaps.spill != nil || set.gaps.spillErr == nil {
		t.Fatalf("the pool still spills after a write error")
	}
	s := ComputeSet(set, Options{})
	m, _ := s.Metric(MetricTextGap)
	if m.N != 100 {
		t.Fatalf("itl_ms over %d values, want the 100 kept", m.N)
	}
	// Half the values were in the file or its pending block when the write
	// failed, and were sampled from there: about half the sample.
	replayed := 0
	for _, v := range set.gaps.values {
		if v >= 100 && v < n/2 {
			replayed++
		}
	}
	if replayed < 25 || replayed > 75 {
		t.Errorf("%d of the 100 sampled values from the file's, want about 50", replayed)
	}
	if ws := strings.Join(s.Warnings, "\n"); !strings.Contains(ws, "uniform random sample") || !strings.Contains(ws, "bad file descriptor") {
		t.Errorf("no warning with the write error: %q", s.Warnings)
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
