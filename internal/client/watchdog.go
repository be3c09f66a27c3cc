package client

import (
	"context"
	"io"
	"time"

	"github.com/omnibench/omnibench/internal/watchdog"
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

// idleWatch cancels a request when no byte has arrived for idle: every
// byte moves its watchdog's due time to idle from then, which is one atomic
// store (see package watchdog). The zero value watches nothing.
type idleWatch struct {
	dog  *watchdog.Watchdog
	idle time.Duration
}

// startIdleWatch arms an idle watch whose first idle period starts at
// base; it cancels the request with causeIdle.
func startIdleWatch(base time.Time, idle time.Duration, cancel context.CancelCauseFunc) idleWatch {
	w := idleWatch{dog: watchdog.New(func() { cancel(causeIdle) }), idle: idle}
	w.dog.DueAt(base.Add(idle))
	return w
}

// touch records that a byte arrived now.
func (w idleWatch) touch() {
	if w.dog != nil {
		w.dog.DueIn(w.idle)
	}
}

// stop disarms the watch (the request is over).
func (w idleWatch) stop() {
	if w.dog != nil {
		w.dog.Stop()
	}
}

// body wraps a response body: it feeds the watchdog on every read and
// remembers whether the underlying stream reached io.EOF.
type body struct {
	r    io.Reader
	idle idleWatch // the zero value without an idle timeout
	eof  bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.idle.touch()
	}
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}
