// Package watchdog calls a function once when a due time passes: the
// timeout of a wait that is extended far more often than it runs out, as a
// request's idle timeout is at every byte that arrives and a WebSocket
// session's wait for a message is at every message.
//
// A Watchdog is lazy. Setting the due time later than the time its one
// timer is armed for, which is what nearly every event does, is an atomic
// store and touches neither the timer nor a lock. The timer is armed again
// only when it fires, and then looks at the due time in force: past, it
// expires; later, it sleeps for what is left; none, it stays unarmed until
// the next due time is set. A due time set earlier than the timer is armed
// for arms it at once (under the lock, rarely). So a stream of events costs
// a store each and the timer wakes about once per timeout period, where
// resetting a timer at every event would cost a timer operation and the
// lock of the runtime's timer heap each.
package watchdog

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Special values of Watchdog.due and Watchdog.armed, which otherwise hold
// times as nanoseconds since Watchdog.base.
const (
	// none is a due time that never comes: no due time. It is also the
	// armed time of an unarmed timer, so that any due time set while the
	// timer is not armed is earlier than it and arms it.
	none int64 = math.MaxInt64
	// retired is the armed time of a watchdog that expired or was stopped:
	// no due time is earlier, so no due time set afterwards arms the timer.
	retired int64 = math.MinInt64
)

// state is where a Watchdog is in its life.
type state uint8

const (
	running state = iota
	ranOut        // the due time passed and expire was called
	stopped       // Stop was called before it ran out
)

// Watchdog calls its expire function once, on the timer's goroutine, when
// a due time passes. It starts with no due time. Its methods may be called
// from any goroutine.
type Watchdog struct {
	base   time.Time // the origin of due, armed and expiredAt (with a monotonic reading)
	expire func()

	// due is the due time in force, or none. armed is the time the timer
	// fires at, none when it is not armed, or retired. A due time set
	// earlier than armed arms the timer; a later one is only stored.
	due   atomic.Int64
	armed atomic.Int64

	mu        sync.Mutex // serialises arming the timer, its firing and Stop
	timer     *time.Timer
	state     state
	expiredAt int64 // when it expired, since base; valid in state ranOut
}

// New returns a watchdog with no due time that calls expire, on the
// timer's goroutine and at most once, when a due time passes. expire must
// not block for long; it may call the watchdog's methods.
func New(expire func()) *Watchdog {
	w := &Watchdog{base: time.Now(), expire: expire}
	w.due.Store(none)
	w.armed.Store(none)
	return w
}

// DueAt sets the due time to t. A time in the past expires the watchdog at
// once; so does the zero time.
func (w *Watchdog) DueAt(t time.Time) {
	w.move(int64(t.Sub(w.base))) // Sub saturates rather than overflows
}

// DueIn sets the due time to d from now. It reads only the monotonic clock,
// which is cheaper than DueAt(time.Now().Add(d)).
func (w *Watchdog) DueIn(d time.Duration) { w.move(w.in(d)) }

// DueInBy sets the due time to d from now or to deadline, whichever comes
// first; a zero deadline is none. It costs what DueIn does.
func (w *Watchdog) DueInBy(d time.Duration, deadline time.Time) {
	due := w.in(d)
	if !deadline.IsZero() {
		due = min(due, int64(deadline.Sub(w.base)))
	}
	w.move(due)
}

// in is the time d from now, since base; none when that is beyond the
// clock's range.
func (w *Watchdog) in(d time.Duration) int64 {
	now := w.since()
	if d >= time.Duration(none-now) {
		return none
	}
	return now + int64(d)
}

// move sets the due time. Storing it first and then reading armed pairs
// with fire, which stores armed first and then reads due: of the two, at
// least one sees the other's store (atomics are sequentially consistent),
// so either the timer's firing sees this due time or this call sees the
// timer unarmed and arms it.
func (w *Watchdog) move(due int64) {
	w.due.Store(due)
	if due < w.armed.Load() {
		w.armEarlier()
	}
}

// armEarlier arms the timer for the due time in force when that is earlier
// than the time the timer is armed for.
func (w *Watchdog) armEarlier() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != running {
		return
	}
	// Another call may have set a later due time since: the one in force
	// counts.
	if due := w.due.Load(); due < w.armed.Load() {
		w.arm(due, w.since())
	}
}

// Clear removes the due time, so that the watchdog does not expire until
// one is set again, and reports whether it has expired and when. A wait
// that clears its due time as it ends learns from it whether the watchdog
// expired under it: the expiry and the clear are ordered, one before the
// other.
func (w *Watchdog) Clear() (at time.Time, expired bool) {
	w.due.Store(none)
	// As in move: if a firing read the due time before this store, it had
	// marked the timer unarmed before that, and this read sees it (or
	// retired, after an expiry). An armed timer means no firing is deciding
	// on the due time just removed, and so no expiry.
	if a := w.armed.Load(); a != none && a != retired {
		return time.Time{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != ranOut {
		return time.Time{}, false
	}
	return w.base.Add(time.Duration(w.expiredAt)), true
}

// Stop disarms the watchdog for good: it does not expire after Stop
// returns, whatever due time is set. An expire call already under way on
// the timer's goroutine may still be running.
func (w *Watchdog) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == running {
		w.state = stopped
	}
	w.armed.Store(retired)
	if w.timer != nil {
		w.timer.Stop()
	}
}

// since is the time since base in nanoseconds: a monotonic clock reading.
func (w *Watchdog) since() int64 { return int64(time.Since(w.base)) }

// arm makes the timer fire at due (at once if that has passed). Called with
// mu held.
func (w *Watchdog) arm(due, now int64) {
	var wait time.Duration
	if due > now {
		wait = time.Duration(due - now)
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(wait, w.fire)
	} else {
		w.timer.Reset(wait)
	}
	w.armed.Store(due)
}

// fire runs on the timer's goroutine: it expires the watchdog if the due
// time in force has passed, arms the timer for it if it has not, and leaves
// the timer unarmed if there is none.
func (w *Watchdog) fire() {
	w.mu.Lock()
	if w.state != running {
		w.mu.Unlock()
		return
	}
	// The timer is no longer armed; say so before reading the due time
	// (see move).
	w.armed.Store(none)
	due, now := w.due.Load(), w.since()
	switch {
	case due == none:
		// Between waits: the next due time arms the timer.
	case now < due:
		w.arm(due, now)
	default:
		w.state, w.expiredAt = ranOut, now
		w.armed.Store(retired)
		w.mu.Unlock()
		w.expire()
		return
	}
	w.mu.Unlock()
}
