package client

import (
	"context"
	"io"
	"math"
	"sync/atomic"
	"time"
)

// cause is why the client cancelled a request's context itself. It is a
// comparable constant type, so errors.Is works on context.Cause without
// package-level error variables.
type cause int

const (
	causeIdle    cause = iota + 1 // the idle watchdog fired
	causeTimeout                  // Options.Timeout passed
	causeDrain                    // draining the body after the end took too long
)

func (c cause) Error() string {
	switch c {
	case causeIdle:
		return "idle timeout"
	case causeTimeout:
		return "request timeout"
	case causeDrain:
		return "drain timeout"
	}
	return "unknown cause"
}

// watchdog cancels a request when no byte has arrived for idle. Reads only
// store a timestamp (one atomic store, no timer operation); a single timer
// wakes up when the idle time could at the earliest have passed, looks at the
// last read, and either cancels or sleeps for the remainder. So a stream of
// many small reads costs one atomic store per read and about one timer wake-up
// per idle period.
type watchdog struct {
	base    time.Time
	idle    time.Duration
	last    atomic.Int64 // time of the last byte, nanoseconds since base
	stopped atomic.Bool
	timer   *time.Timer
	cancel  context.CancelCauseFunc
}

// startWatchdog arms a watchdog whose idle period starts at base.
func startWatchdog(base time.Time, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{base: base, idle: idle, cancel: cancel}
	// Create the timer disarmed and arm it after w.timer is set, so the
	// callback never sees a nil timer.
	w.timer = time.AfterFunc(time.Duration(math.MaxInt64), w.check)
	w.timer.Reset(idle - time.Since(base))
	return w
}

// touch records that a byte arrived now.
func (w *watchdog) touch() { w.last.Store(int64(time.Since(w.base))) }

func (w *watchdog) check() {
	if w.stopped.Load() {
		return
	}
	quiet := time.Since(w.base) - time.Duration(w.last.Load())
	if quiet >= w.idle {
		w.cancel(causeIdle)
		return
	}
	w.timer.Reset(w.idle - quiet)
}

// stop disarms the watchdog. A check already running may still re-arm the
// timer once; it then finds stopped set and does nothing.
func (w *watchdog) stop() {
	w.stopped.Store(true)
	w.timer.Stop()
}

// body wraps a response body: it feeds the watchdog on every read and
// remembers whether the underlying stream reached io.EOF.
type body struct {
	r   io.Reader
	wd  *watchdog // nil without an idle timeout
	eof bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && b.wd != nil {
		b.wd.touch()
	}
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}
