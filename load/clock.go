package load

import (
	"context"
	"time"
)

// clock is the runner's time source. Tests substitute a fake one to make lag
// and late counts deterministic.
type clock interface {
	Now() time.Time
	// SleepUntil blocks until t or until ctx is done (then it returns
	// ctx.Err()). Only the scheduling goroutine calls it.
	SleepUntil(ctx context.Context, t time.Time) error
}

// realClock sleeps on one reusable timer. Since Go 1.23 Reset needs no drain:
// a stopped or reset timer never delivers a stale value.
type realClock struct {
	timer *time.Timer
}

func (c *realClock) Now() time.Time { return time.Now() }

func (c *realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t) // monotonic: t derives from a time.Now() value
	if d <= 0 {
		return ctx.Err()
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-c.timer.C:
		return nil
	case <-ctx.Done():
		c.timer.Stop()
		return ctx.Err()
	}
}
