package abtest

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/stats"
)

// TestCompactArmsAnalyseLikeRecords: an arm keeps compact samples, and
// every figure analysed from them equals package compare's analysis of the
// full records, with and without the ramp: counts, first error, each
// metric's values in the order sent, summaries and tests.
func TestCompactArmsAnalyseLikeRecords(t *testing.T) {
	if size, limit := unsafe.Sizeof(armSample{}), unsafe.Sizeof(results.Record{})/4; size > limit {
		t.Fatalf("a kept sample is %d bytes, want at most a quarter of a record (%d)", size, limit)
	}
	arm := func(name string, offset float64) (*ArmResult, []results.Record) {
		var recs []results.Record
		for i := range 40 {
			// Completed out of the order sent: Seq runs backwards in pairs.
			r := results.Record{Seq: i ^ 1, Kind: results.KindChat, E2ES: offset + float64(i%7)/10, TTFPS: 0.2 + float64(i%5)/100,
				AudioBytes: 4800, AudioDurationS: 0.1, RTFLastChunk: 0.4 + float64(i%3)/10, RTFE2E: 0.9}
			switch {
			case i%9 == 0:
				r.Kind = results.KindSpeech
			case i < 3:
				r.Warmup = true
			case i < 8:
				r.Phase = "ramp"
			}
			if i%11 == 4 || i == 15 {
				r.ErrorClass, r.Error = results.ErrConnect, fmt.Sprintf("refused %d", i)
			}
			recs = append(recs, r)
		}
		a := &ArmResult{Name: name}
		for _, r := range recs {
			addRecord(a, r)
		}
		return a, recs
	}
	opts := stats.Options{Alpha: 0.05, Power: 0.8, Percentiles: []float64{50, 95}}
	for _, includeRamp := range []bool{false, true} {
		a, recsA := arm("A", 1)
		b, recsB := arm("B", 1.2)
		res := &Result{A: a, B: b, Alpha: 0.05, IncludeRamp: includeRamp}
		analyse(res, opts, nil)

		usedA, failedA, warmupA, _ := compare.Usable(recsA, includeRamp)
		usedB, _, _, _ := compare.Usable(recsB, includeRamp)
		if a.Used != len(usedA) || a.Failed != len(failedA) || a.Warmup != warmupA ||
			a.FirstError != failedA[0].ErrorClass+": "+failedA[0].Error {
			t.Errorf("ramp %v: A used %d failed %d warm-up %d first error %q; records: %d %d %d %q", includeRamp,
				a.Used, a.Failed, a.Warmup, a.FirstError, len(usedA), len(failedA), warmupA, failedA[0].Error)
		}
		rows, _ := compare.Analyze(Metrics(), usedA, usedB, opts)
		if len(rows) != len(res.Metrics) {
			t.Fatalf("ramp %v: %d metrics, %d from the records", includeRamp, len(res.Metrics), len(rows))
		}
		for i, row := range rows {
			got := res.Metrics[i].Row
			got.Metric.Value, row.Metric.Value = nil, nil // functions never compare equal
			if !reflect.DeepEqual(got, row) {
				t.Errorf("ramp %v: %s differs from compare's analysis of the records:\n got %+v\nwant %+v", includeRamp, row.Metric.Name, got, row)
			}
		}
	}
}

// TestArmSamplesAreOffTheHeap: an arm's kept requests, 40 bytes each, live
// outside the Go heap as a run's samples do, so that a long A/B run's
// resident memory grows by what they hold and no collector headroom over
// it; and they come back in the order kept.
func TestArmSamplesAreOffTheHeap(t *testing.T) {
	const n = 50_000
	ms := Metrics()
	r := results.Record{Kind: results.KindChat, E2ES: 1, TTFPS: 0.2, AudioBytes: 4800, AudioDurationS: 0.1, RTFLastChunk: 0.5}
	before := liveHeap()
	var a armSamples
	for i := range n {
		r.Seq = i
		a.add(ms, &r)
	}
	if grown := liveHeap() - before; grown > 4*n {
		t.Errorf("the Go heap grew by %d bytes for %d kept requests, want at most 4 a request", grown, n)
	}
	i := 0
	a.each(func(x armSample) {
		if x.seq != i {
			t.Fatalf("sample %d has seq %d", i, x.seq)
		}
		i++
	})
	if i != n {
		t.Errorf("%d samples came back, want %d", i, n)
	}
}

// liveHeap is the Go heap's live bytes after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
