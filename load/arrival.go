package load

import (
	"context"
	"time"
)

// Arrival is one job start, as the Job sees it.
type Arrival struct {
	Seq    int  // unique in the run; warm-up arrivals come first (0..Warmup-1)
	Warmup bool // a warm-up arrival, excluded from measured statistics
	// Phase is PhaseRamp for an arrival started while the load was still
	// ramping (see Config.RampUp and Config.Stages), "" in the steady phase.
	Phase string

	// Start is the start of this arrival's phase (warm-up or measured);
	// Intended and Launched are offsets from it.
	Start time.Time
	// Intended is the scheduled offset. Latency measured from Start+Intended
	// includes the time the arrival waited, which avoids coordinated
	// omission. In a closed loop it equals Launched.
	Intended time.Duration
	// Launched is when the scheduler actually started the job; Launched -
	// Intended is the scheduling lag.
	Launched time.Duration
}

// Lag is how late the job started relative to its schedule.
func (a Arrival) Lag() time.Duration { return a.Launched - a.Intended }

// Job runs one request. ctx is not cancelled when Run's context is; Run
// cancels it Config.Grace after an interruption. A Job must return once ctx
// is done, and must be safe for concurrent use.
type Job func(ctx context.Context, a Arrival)
