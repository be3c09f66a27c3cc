package load

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a clock that jumps instead of sleeping: SleepUntil moves the
// time to its target, plus the next programmed oversleep (to simulate a late
// timer), and returns at once.
type fakeClock struct {
	mu        sync.Mutex
	now       time.Time
	oversleep []time.Duration
}

func newFakeClock(oversleep ...time.Duration) *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), oversleep: oversleep}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	if len(c.oversleep) > 0 {
		c.now = c.now.Add(c.oversleep[0])
		c.oversleep = c.oversleep[1:]
	}
	return nil
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
