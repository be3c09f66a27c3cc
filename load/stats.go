package load

import "time"

// Stats describes what a run did. Counts are of the measured phase only;
// warm-up has its own fields. Stats are complete even when Run reports an
// interruption.
type Stats struct {
	Mode string // "open" or "closed"

	// Planned is the measured arrival count the run set out to issue: the
	// schedule length (open loop) or Requests (closed loop; 0 when only
	// Duration bounds it).
	Planned int
	// Scheduled counts the measured arrivals that came due before the run
	// stopped: Started + Dropped.
	Scheduled int
	Started   int // jobs started
	Completed int // jobs that returned while their context was still live
	Cancelled int // jobs that returned after Run cancelled their context (grace expired)
	Dropped   int // open-loop arrivals refused because MaxInflight jobs were running
	// RampStarted counts the started jobs marked PhaseRamp (included in
	// Started).
	RampStarted int

	// Late counts started open-loop jobs whose lag exceeded LateThreshold.
	Late          int
	LateThreshold time.Duration
	// Lags holds the lag of every started open-loop job in start order (nil in
	// a closed loop, where lag is 0 by definition). Dropped arrivals have none.
	Lags   []time.Duration
	MaxLag time.Duration

	WarmupStarted   int
	WarmupCompleted int // warm-up jobs that returned while their context was live

	// Elapsed runs from the measured start until the last job returned.
	Elapsed time.Duration
	// Window is the span in which arrivals were issued. Open loop: the
	// schedule's End (or the last actual start, if later; or the moment of
	// interruption). Closed loop: Elapsed, since workers stay busy throughout.
	Window time.Duration
	// TargetRate is Config.Rate (0 in a closed loop); AchievedRate is
	// Started / Window, in arrivals per second. Drops and scheduler lag make
	// AchievedRate fall below TargetRate.
	TargetRate   float64
	AchievedRate float64

	Interrupted bool // ctx was cancelled before the run finished

	// StartLate is how long after Config.StartAt the measured phase began
	// (the timer's wake-up error when the run was early and slept).
	StartLate time.Duration
}

// rate is n per window in 1/s, 0 for an empty window.
func rate(n int, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(n) / window.Seconds()
}
