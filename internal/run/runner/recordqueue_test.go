package runner

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestRecordQueue puts records from many goroutines at once, more than the
// queue holds, and checks that each reaches consume exactly once, with its
// audio, one at a time, each job's records in the order it put them, and
// all of them before close returns.
func TestRecordQueue(t *testing.T) {
	const jobs, perJob = 16, 50
	var (
		inside  atomic.Int32
		overlap atomic.Bool
		seen    = map[int]bool{}
		last    = map[int]int{} // job -> the last index consumed
		order   = true
	)
	q := startRecordQueue(8, func(rec *results.Record, audio *bytes.Buffer) {
		if inside.Add(1) != 1 {
			overlap.Store(true)
		}
		defer inside.Add(-1)
		if seen[rec.Seq] {
			t.Errorf("record %d consumed twice", rec.Seq)
		}
		seen[rec.Seq] = true
		job, i := rec.Seq/perJob, rec.Seq%perJob
		if prev, ok := last[job]; ok && i != prev+1 || !ok && i != 0 {
			order = false
		}
		last[job] = i
		if audio == nil || audio.String() != rec.ID {
			t.Errorf("record %d came with audio %v", rec.Seq, audio)
		}
	})
	var wg sync.WaitGroup
	for j := range jobs {
		wg.Go(func() {
			for i := range perJob {
				rec := &results.Record{Seq: j*perJob + i, ID: "r" + string(rune('a'+j)) + string(rune('0'+i%10))}
				q.put(rec, bytes.NewBufferString(rec.ID))
			}
		})
	}
	wg.Wait()
	q.close()
	if len(seen) != jobs*perJob {
		t.Errorf("%d records consumed, want %d", len(seen), jobs*perJob)
	}
	if overlap.Load() {
		t.Error("consume ran on two goroutines at once")
	}
	if !order {
		t.Error("a job's records were consumed out of the order it put them")
	}
}
