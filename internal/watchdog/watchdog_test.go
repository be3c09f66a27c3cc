package watchdog

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Most tests run in a synctest bubble: its clock is fake and moves only
// when every goroutine of the bubble is blocked, so a time.Sleep there moves
// the clock to the instant asked for at once, after the timer functions due
// before it have run. The times the tests assert are exact, and nothing
// waits on the real clock.

// counted returns a watchdog whose expiries are counted in n.
func counted(n *atomic.Int32) *Watchdog {
	return New(func() { n.Add(1) })
}

// wantExpiries fails the test unless the watchdog expired want times.
func wantExpiries(t *testing.T, n *atomic.Int32, want int32, when string) {
	t.Helper()
	if got := n.Load(); got != want {
		t.Fatalf("%s: %d expiries, want %d", when, got, want)
	}
}

// wantExpiredAt fails the test unless Clear reports an expiry at want.
func wantExpiredAt(t *testing.T, w *Watchdog, want time.Time) {
	t.Helper()
	if at, expired := w.Clear(); !expired || !at.Equal(want) {
		t.Fatalf("Clear: expired %v at %v, want at %v", expired, at, want)
	}
}

func TestExpiresOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		start := time.Now()
		w := counted(&n)
		defer w.Stop()
		w.DueIn(time.Minute)
		time.Sleep(time.Hour)
		wantExpiries(t, &n, 1, "an hour after a due time a minute ahead")
		wantExpiredAt(t, w, start.Add(time.Minute))

		// Expired for good: due times set afterwards, past or not, call
		// nothing again, and Clear keeps saying when it expired.
		w.DueAt(start)
		w.DueIn(time.Minute)
		time.Sleep(time.Hour)
		wantExpiries(t, &n, 1, "after more due times")
		wantExpiredAt(t, w, start.Add(time.Minute))
	})
}

func TestDueLaterPostpones(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		start := time.Now()
		w := counted(&n)
		defer w.Stop()
		w.DueIn(time.Hour)     // arms the timer for an hour
		w.DueIn(2 * time.Hour) // later: stored only
		time.Sleep(90 * time.Minute)
		wantExpiries(t, &n, 0, "between the first due time and the second")
		time.Sleep(time.Hour)
		wantExpiries(t, &n, 1, "after the second due time")
		wantExpiredAt(t, w, start.Add(2*time.Hour))
	})
}

func TestDueEarlierRearms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		start := time.Now()
		w := counted(&n)
		defer w.Stop()
		w.DueIn(2 * time.Hour) // arms the timer for two hours
		w.DueIn(time.Hour)     // earlier than the timer is armed for
		time.Sleep(90 * time.Minute)
		wantExpiries(t, &n, 1, "after the earlier due time")
		wantExpiredAt(t, w, start.Add(time.Hour))
	})
}

func TestNoDueTimeNeverExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		w := counted(&n)
		defer w.Stop()
		time.Sleep(1000 * time.Hour)
		wantExpiries(t, &n, 0, "a new watchdog")

		w.DueIn(time.Minute)
		if _, expired := w.Clear(); expired {
			t.Fatal("Clear reports an expiry before the due time")
		}
		time.Sleep(1000 * time.Hour)
		wantExpiries(t, &n, 0, "after Clear")

		w.DueIn(time.Duration(math.MaxInt64)) // saturates to no due time
		time.Sleep(1000 * time.Hour)
		wantExpiries(t, &n, 0, "a due time beyond the clock's range")
		if _, expired := w.Clear(); expired {
			t.Fatal("Clear reports an expiry without one")
		}
	})
}

func TestStopPreventsExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		w := counted(&n)
		w.DueIn(time.Hour)
		w.Stop()
		time.Sleep(2 * time.Hour)
		wantExpiries(t, &n, 0, "after Stop")
		w.DueAt(time.Time{}) // long past
		time.Sleep(time.Hour)
		wantExpiries(t, &n, 0, "a past due time after Stop")
		w.fire() // as a firing that was under way when Stop ran
		wantExpiries(t, &n, 0, "a firing after Stop")
		if _, expired := w.Clear(); expired {
			t.Fatal("Clear reports an expiry after Stop")
		}
	})
}

// TestWaits drives a watchdog as a session's waits for messages do: each
// wait sets a due time as it begins and clears it as it ends, some with
// gaps between them in which the timer finds no due time, some back to
// back so that the timer finds the next wait's due time when it fires.
// None of them runs out until the last.
func TestWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		w := counted(&n)
		defer w.Stop()
		wait := func(idle time.Duration, deadline time.Time, took time.Duration) {
			w.DueInBy(idle, deadline)
			time.Sleep(took)
			if at, expired := w.Clear(); expired {
				t.Fatalf("a wait of %v with an idle timeout of %v (deadline %v) expired at %v", took, idle, deadline, at)
			}
		}
		for range 20 {
			wait(time.Minute, time.Time{}, 50*time.Second)
			time.Sleep(time.Hour) // the timer fires and stays unarmed
		}
		for range 100 {
			wait(time.Minute, time.Now().Add(2*time.Minute), 10*time.Second)
		}
		// The turn's deadline, earlier than the idle timeout.
		deadline := time.Now().Add(30 * time.Second)
		w.DueInBy(time.Minute, deadline)
		time.Sleep(time.Minute)
		wantExpiries(t, &n, 1, "after the turn's deadline")
		wantExpiredAt(t, w, deadline)
	})
}

// TestIdleBeforeDeadline checks that a wait whose idle timeout comes
// before the turn's deadline runs out at the idle timeout.
func TestIdleBeforeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		start := time.Now()
		w := counted(&n)
		defer w.Stop()
		w.DueInBy(time.Minute, start.Add(time.Hour))
		time.Sleep(2 * time.Minute)
		wantExpiries(t, &n, 1, "after the idle timeout")
		wantExpiredAt(t, w, start.Add(time.Minute))
	})
}

// TestRealClock checks the watchdog on the real clock, where only the
// order of events is certain: a due time an hour ahead does not expire
// before Stop, and a past due time set after it expires at once, although
// the timer was armed for an hour.
func TestRealClock(t *testing.T) {
	var n atomic.Int32
	w := counted(&n)
	w.DueIn(time.Hour)
	w.Stop()
	wantExpiries(t, &n, 0, "an hour ahead, stopped")

	fired := make(chan struct{})
	w = New(func() { close(fired) }) // a second call would panic
	defer w.Stop()
	w.DueIn(time.Hour)
	w.DueAt(time.Now().Add(-time.Second))
	// The bound only ends the test if the watchdog waits for the hour.
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	select {
	case <-fired:
	case <-bound.C:
		t.Fatal("a past due time set after one an hour ahead did not expire the watchdog")
	}
	if _, expired := w.Clear(); !expired {
		t.Fatal("Clear does not report the expiry")
	}
}

// TestConcurrentMovesAndFiring sets due times from several goroutines
// while the timer fires (some of them are past, so that the timer fires
// among the moves) and clears them from another, as a wait does: the
// watchdog expires exactly once, and once Clear has reported the expiry it
// keeps reporting it. Run it with -race.
func TestConcurrentMovesAndFiring(t *testing.T) {
	// The bound only ends the test if a past due time never expires.
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	for range 20 {
		var n atomic.Int32
		fired := make(chan struct{})
		w := New(func() {
			if n.Add(1) == 1 {
				close(fired)
			}
		})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 1000 {
					if (i+g)%100 == 0 {
						w.DueIn(-time.Nanosecond)
					} else {
						w.DueIn(time.Hour)
					}
				}
			})
		}
		wg.Go(func() {
			seen := false
			for range 1000 {
				w.DueIn(time.Hour)
				_, expired := w.Clear()
				if seen && !expired {
					t.Error("Clear reports no expiry after it reported one")
					return
				}
				seen = expired
			}
		})
		wg.Wait()
		w.DueAt(time.Time{}) // expires now if it has not yet
		select {
		case <-fired:
		case <-bound.C:
			t.Fatal("a past due time did not expire the watchdog")
		}
		if _, expired := w.Clear(); !expired {
			t.Error("Clear does not report the expiry")
		}
		w.Stop()
		wantExpiries(t, &n, 1, "after the moves")
	}
}
