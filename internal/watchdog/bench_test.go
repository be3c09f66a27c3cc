package watchdog

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks time the two uses of a Watchdog per event beside the code
// it replaced, copied below as it was (baselineIdleWatchdog from package
// client, baselineWaitWatchdog from package wsclient) to compare their
// costs. Their timeouts are an hour, so no timer fires during a run.

// BenchmarkMoveLater is a request's idle timeout at every read of its
// response: the due time moves to the idle timeout from now.
func BenchmarkMoveLater(b *testing.B) {
	const idle = time.Hour
	b.Run("watchdog", func(b *testing.B) {
		w := New(func() {})
		defer w.Stop()
		w.DueIn(idle)
		b.ReportAllocs()
		for b.Loop() {
			w.DueIn(idle)
		}
	})
	b.Run("baseline", func(b *testing.B) {
		_, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		w := startBaselineIdleWatchdog(time.Now(), idle, cancel)
		defer w.stop()
		b.ReportAllocs()
		for b.Loop() {
			w.touch()
		}
	})
}

// BenchmarkWait is a WebSocket session's wait for a message, begun and
// ended: the due time is the idle timeout from now or the turn's deadline,
// whichever comes first, and it is cleared when the message came.
func BenchmarkWait(b *testing.B) {
	const idle = time.Hour
	deadline := time.Now().Add(2 * time.Hour)
	b.Run("watchdog", func(b *testing.B) {
		w := New(func() {})
		defer w.Stop()
		b.ReportAllocs()
		for b.Loop() {
			w.DueInBy(idle, deadline) // as wsclient's waitWatch.begin and end
			if _, expired := w.Clear(); expired {
				b.Fatal("expired")
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		w := &baselineWaitWatchdog{idle: idle, close: func() {}}
		defer w.stop()
		b.ReportAllocs()
		for b.Loop() {
			w.begin(deadline)
			if w.end() {
				b.Fatal("expired")
			}
		}
	})
}

// baselineIdleWatchdog is package client's idle watchdog before this
// package: reads store the time of the last byte, and one timer checks it.
type baselineIdleWatchdog struct {
	base    time.Time
	idle    time.Duration
	last    atomic.Int64 // time of the last byte, nanoseconds since base
	stopped atomic.Bool
	timer   *time.Timer
	cancel  context.CancelCauseFunc
}

func startBaselineIdleWatchdog(base time.Time, idle time.Duration, cancel context.CancelCauseFunc) *baselineIdleWatchdog {
	w := &baselineIdleWatchdog{base: base, idle: idle, cancel: cancel}
	w.timer = time.AfterFunc(time.Duration(math.MaxInt64), w.check)
	w.timer.Reset(idle - time.Since(base))
	return w
}

func (w *baselineIdleWatchdog) touch() { w.last.Store(int64(time.Since(w.base))) }

func (w *baselineIdleWatchdog) check() {
	if w.stopped.Load() {
		return
	}
	quiet := time.Since(w.base) - time.Duration(w.last.Load())
	if quiet >= w.idle {
		w.cancel(context.DeadlineExceeded)
		return
	}
	w.timer.Reset(w.idle - quiet)
}

func (w *baselineIdleWatchdog) stop() {
	w.stopped.Store(true)
	w.timer.Stop()
}

// baselineWaitWatchdog is package wsclient's watchdog of a wait before this
// package: a mutex around begin, end and the timer's firing. end returns
// whether it expired (the original told the idle timeout from the turn's
// deadline; the cost is the same).
type baselineWaitWatchdog struct {
	idle  time.Duration
	close func()

	mu      sync.Mutex
	timer   *time.Timer
	armedAt time.Time
	waiting bool
	idleDue time.Time
	turnDue time.Time
	expired bool
}

func (w *baselineWaitWatchdog) begin(deadline time.Time) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting = true
	w.idleDue = now.Add(w.idle)
	w.turnDue = deadline
	if due := w.due(); w.armedAt.IsZero() || due.Before(w.armedAt) {
		w.arm(now, due)
	}
}

func (w *baselineWaitWatchdog) end() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting = false
	return w.expired
}

func (w *baselineWaitWatchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armedAt = time.Time{}
	w.waiting = false
}

func (w *baselineWaitWatchdog) due() time.Time {
	if !w.turnDue.IsZero() && w.turnDue.Before(w.idleDue) {
		return w.turnDue
	}
	return w.idleDue
}

func (w *baselineWaitWatchdog) arm(now, due time.Time) {
	if w.timer == nil {
		w.timer = time.AfterFunc(due.Sub(now), w.fire)
	} else {
		w.timer.Reset(due.Sub(now))
	}
	w.armedAt = due
}

func (w *baselineWaitWatchdog) fire() {
	w.mu.Lock()
	w.armedAt = time.Time{}
	if !w.waiting || w.expired {
		w.mu.Unlock()
		return
	}
	now := time.Now()
	if !now.Before(w.due()) {
		w.expired = true
		w.mu.Unlock()
		w.close()
		return
	}
	w.arm(now, w.due())
	w.mu.Unlock()
}
