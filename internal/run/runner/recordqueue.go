package runner

import (
	"bytes"
	"runtime"

	"github.com/omnibench/omnibench/internal/run/results"
)

// recordQueueCap bounds the finished records waiting for the bookkeeping
// goroutine. A record grows with its response (16 bytes per audio chunk,
// 8 per send stamp and text gap): about 3 KB for a 4 s chat response, so
// about 12 MB for a full queue of those.
const recordQueueCap = 4096

// recordQueue hands finished records from the jobs to one goroutine that
// does the run's bookkeeping: it takes each record to every sink (see
// sink). A stream's goroutine is then free as soon as its
// record is complete. When many streams end at once (every closed-loop
// worker started together on a fixed schedule), their bookkeeping would
// otherwise run ahead of the events the other streams are still
// receiving, and show in those events' timestamps. The goroutine yields
// after each record, so that goroutines with events waiting go first. A job
// waits for room only when recordQueueCap records are already waiting.
type recordQueue struct {
	ch   chan finishedRecord
	done chan struct{}
}

type finishedRecord struct {
	rec   *results.Record
	audio *bytes.Buffer // decoded audio for --save-audio; nil without
}

// startRecordQueue starts the goroutine that passes every record put to
// consume, in the order they were put.
func startRecordQueue(capacity int, consume func(*results.Record, *bytes.Buffer)) *recordQueue {
	q := &recordQueue{ch: make(chan finishedRecord, capacity), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for f := range q.ch {
			consume(f.rec, f.audio)
			runtime.Gosched()
		}
	}()
	return q
}

// put queues a finished record; the caller must not touch it afterwards.
func (q *recordQueue) put(rec *results.Record, audio *bytes.Buffer) {
	q.ch <- finishedRecord{rec: rec, audio: audio}
}

// close waits until every record put has been consumed. No put may follow.
func (q *recordQueue) close() {
	close(q.ch)
	<-q.done
}
