package load

import (
	"testing"
	"time"
)

func TestStoppedByCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		st   Stats
		want bool
	}{
		{"closed, count reached", Config{Concurrency: 1, Requests: 5, Duration: time.Minute}, Stats{Scheduled: 5, Window: time.Second}, true},
		{"closed, duration first", Config{Concurrency: 1, Requests: 5, Duration: time.Second}, Stats{Scheduled: 3, Window: time.Second}, false},
		{"closed, count only", Config{Concurrency: 1, Requests: 5}, Stats{Scheduled: 5}, false},
		{"closed, interrupted", Config{Concurrency: 1, Requests: 5, Duration: time.Minute}, Stats{Scheduled: 5, Interrupted: true}, false},
		{"open, schedule ends early", Config{Rate: 10, Requests: 5, Duration: time.Minute}, Stats{Scheduled: 5, Window: 500 * time.Millisecond}, true},
		{"open, schedule fills the duration", Config{Rate: 10, Requests: 10, Duration: time.Second}, Stats{Scheduled: 10, Window: time.Second}, false},
	} {
		if got := tc.cfg.StoppedByCount(tc.st); got != tc.want {
			t.Errorf("%s: StoppedByCount = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A duration-only open loop too long to schedule is refused by Validate, so
// run reports it as unusable input before starting.
func TestValidateRefusesUnschedulableDuration(t *testing.T) {
	c := Config{Rate: 2e7, Duration: 10 * time.Minute}
	if err := c.Validate(); err == nil {
		t.Fatal("rate 2e7/s for 10m: no error")
	}
	c.Requests = 100 // a count bound caps the schedule
	if err := c.Validate(); err != nil {
		t.Errorf("with requests: %v", err)
	}
}
