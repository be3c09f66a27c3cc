package wsclient

import (
	"sync"
	"time"
)

// expiry is why a watchdog closed the connection under a wait.
type expiry int

const (
	notExpired expiry = iota
	idleExpired
	turnExpired
)

// watchdog ends a session's wait for a message that outlasts the idle
// timeout or the turn's deadline, by closing the connection under it: a
// read the session makes on its own goroutine cannot be interrupted
// otherwise, and both timeouts fail the session anyway. It costs a wait a
// clock reading and two uncontended locks: its one timer is armed again only
// when it fired or a wait ends earlier than it is armed for, not for every
// message, so it fires about once per idle period and checks then whether
// the wait in progress has really run out.
type watchdog struct {
	idle  time.Duration
	close func() // closes the connection; called at most once

	mu      sync.Mutex
	timer   *time.Timer // created at the first wait
	armedAt time.Time   // when timer fires; zero when it is not armed
	waiting bool        // a wait is in progress (begin without end)
	idleDue time.Time   // the wait's end by the idle timeout
	turnDue time.Time   // the turn's deadline; zero means none
	expired expiry      // notExpired, or why the connection was closed
}

// begin starts a wait that ends at the idle timeout or at deadline (zero:
// none), whichever comes first.
func (w *watchdog) begin(deadline time.Time) {
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

// end ends the wait begun last and returns notExpired, or why the watchdog
// closed the connection.
func (w *watchdog) end() expiry {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting = false
	return w.expired
}

// stop disarms the watchdog for good (the connection is closed).
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armedAt = time.Time{}
	w.waiting = false
}

// due is the current wait's end. Called with mu held.
func (w *watchdog) due() time.Time {
	if !w.turnDue.IsZero() && w.turnDue.Before(w.idleDue) {
		return w.turnDue
	}
	return w.idleDue
}

// arm makes the timer fire at due. Called with mu held.
func (w *watchdog) arm(now, due time.Time) {
	if w.timer == nil {
		w.timer = time.AfterFunc(due.Sub(now), w.fire)
	} else {
		w.timer.Reset(due.Sub(now))
	}
	w.armedAt = due
}

// fire runs on the timer's goroutine: it closes the connection if the wait
// in progress has run out, and otherwise arms the timer for its end. With
// no wait in progress, the next one arms it.
func (w *watchdog) fire() {
	w.mu.Lock()
	w.armedAt = time.Time{}
	if !w.waiting || w.expired != notExpired {
		w.mu.Unlock()
		return
	}
	now := time.Now()
	switch {
	case !w.turnDue.IsZero() && !now.Before(w.turnDue):
		w.expired = turnExpired
	case !now.Before(w.idleDue):
		w.expired = idleExpired
	default:
		w.arm(now, w.due())
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.close()
}
