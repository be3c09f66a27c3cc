package wsclient

import (
	"time"

	"github.com/omnibench/omnibench/internal/watchdog"
)

// expiry is why a wait's watchdog closed the connection under it.
type expiry int

const (
	notExpired expiry = iota
	idleExpired
	turnExpired
)

// waitWatch ends a session's wait for a message that outlasts the idle
// timeout or the turn's deadline, by closing the connection under it: a
// read the session makes on its own goroutine cannot be interrupted
// otherwise, and both timeouts fail the session anyway. A wait sets the
// watchdog's due time as it begins and clears it as it ends, which costs a
// monotonic clock reading and a few atomic operations: the timer is armed
// again only when it fires or a wait is due earlier than it is armed for
// (package watchdog). Only the session's goroutine calls its methods.
type waitWatch struct {
	idle    time.Duration
	dog     *watchdog.Watchdog // closes the connection when it expires
	turnDue time.Time          // the deadline of the wait in progress; zero means none
	expired expiry             // notExpired, or why the connection was closed
}

// newWaitWatch returns the watch of a connection that closeNow closes.
func newWaitWatch(idle time.Duration, closeNow func()) waitWatch {
	return waitWatch{idle: idle, dog: watchdog.New(closeNow)}
}

// begin starts a wait that ends at the idle timeout or at deadline (zero:
// none), whichever comes first.
func (w *waitWatch) begin(deadline time.Time) {
	w.turnDue = deadline
	w.dog.DueInBy(w.idle, deadline)
}

// end ends the wait begun last and returns notExpired, or why the watchdog
// closed the connection: the turn's deadline when it had passed at the
// expiry, the idle timeout otherwise.
func (w *waitWatch) end() expiry {
	at, expired := w.dog.Clear()
	if expired && w.expired == notExpired {
		w.expired = idleExpired
		if !w.turnDue.IsZero() && !at.Before(w.turnDue) {
			w.expired = turnExpired
		}
	}
	return w.expired
}

// stop disarms the watch for good (the connection is closed).
func (w *waitWatch) stop() { w.dog.Stop() }
