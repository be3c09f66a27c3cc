package continuity

import "math"

// PrerollConfig is the start rule of the pre-buffering player.
type PrerollConfig struct {
	BufferS  float64 // start once this much audio (seconds) has been received
	MaxWaitS float64 // or this long after the first arrival, whichever is first; 0 = no wait limit
}

// PlayerResult is what a listener experiences with one player model.
type PlayerResult struct {
	StartupDelayS float64 // playback start minus first arrival
	Stalls        int     // times playback ran dry and waited for audio
	TotalStallS   float64 // sum of the stalls
	LongestStallS float64 // the longest stall
}

// StallResume plays from the first arrival at real time, pauses when the
// buffer runs dry and resumes when the next chunk arrives.
//
// Both players ignore zero-byte chunks (the first arrival is the first chunk
// with audio), and a shortfall smaller than one sample frame is not a stall.
// Invalid input (as for Simulate) gives a zero PlayerResult.
func StallResume(in Input) PlayerResult {
	return Preroll(in, PrerollConfig{})
}

// Preroll waits until cfg.BufferS seconds of audio have arrived, or
// cfg.MaxWaitS after the first arrival (when > 0), whichever comes first, or
// the last arrival when the stream ends with less; then it plays like
// StallResume (which is Preroll with a zero config).
//
// Zero-byte chunks carry no audio, so the players ignore them: the first
// arrival is the first non-empty chunk's. All times are taken relative to that
// arrival so large absolute timestamps do not leak rounding residue into the
// stall arithmetic.
//
// A stall is measured like Simulate's deficit, but from the last resume: the
// player resumed at time r with b bytes received since then, so a chunk that
// arrives at t finds the buffer dry when (t-r)*bps - b > 0. A shortfall below
// one sample frame is rounding noise, not a gap a listener hears; it is
// neither counted nor used to reset the resume point, so real lateness that
// accumulates across chunks is still reported once it reaches a frame.
func Preroll(in Input, cfg PrerollConfig) PlayerResult {
	return play(in, cfg, nil)
}

// Timeline is the playback position of a player over time: at Times[i] (the
// clock of Input.ArrivalsS) the player has played Positions[i] seconds of
// audio. Between consecutive points the position is linear, either playing
// (slope 1) or stalled (flat); before Times[0] playback has not started
// (position 0), and the last point is where it has played all the audio it
// received. Times is non-decreasing; both slices are empty for input that
// gives a zero PlayerResult.
//
// The points are the corners of the curve: the start, then for each stall
// the time the buffer ran dry and the arrival that resumed playback (equal
// positions), then the end.
type Timeline struct {
	Times     []float64
	Positions []float64
}

// PrerollTimeline is Preroll together with the playback position it
// describes; the PlayerResult is exactly Preroll's. With a zero config it is
// StallResume's timeline, and with FixedStartup(d) that of a player known
// only by its start-up delay d.
func PrerollTimeline(in Input, cfg PrerollConfig) (PlayerResult, Timeline) {
	var tl Timeline
	res := play(in, cfg, &tl)
	return res, tl
}

// FixedStartup is the configuration of a player that starts delayS after the
// first arrival whatever it has received (or at the last arrival, if that is
// earlier): an unreachable buffer capped by MaxWaitS. It recreates a Preroll
// player from a recorded StartupDelayS. delayS <= 0 gives the zero config,
// StallResume, which starts at the first arrival.
func FixedStartup(delayS float64) PrerollConfig {
	if !(delayS > 0) {
		return PrerollConfig{}
	}
	return PrerollConfig{BufferS: math.Inf(1), MaxWaitS: delayS}
}

// play is the player loop behind Preroll, StallResume and PrerollTimeline.
// When tl is not nil it also records the corners of the position curve: the
// player resumed at r with since bytes received from then on, so when a
// chunk at t finds it dry it ran dry at r + since/bps, having played
// since/bps more seconds of audio, and stayed there until t.
func play(in Input, cfg PrerollConfig, tl *Timeline) PlayerResult {
	if !in.valid() {
		return PlayerResult{}
	}
	first := -1
	for i, b := range in.Bytes {
		if b > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return PlayerResult{}
	}
	bps := float64(in.bytesPerSecond())
	frame := float64(in.frameBytes())
	t0 := in.ArrivalsS[first]

	start := startTime(in, first, t0, bps, cfg)
	res := PlayerResult{StartupDelayS: start}
	played := 0.0 // seconds of audio played up to resume
	if tl != nil {
		tl.Times, tl.Positions = append(tl.Times, t0+start), append(tl.Positions, 0)
	}

	resume := start // relative time playback last (re)started
	since := 0      // bytes received up to resume, plus those after it
	i := first
	for ; i < len(in.Bytes) && in.ArrivalsS[i]-t0 <= start; i++ {
		if in.Bytes[i] > 0 {
			since += in.Bytes[i]
		}
	}
	for ; i < len(in.Bytes); i++ {
		b := in.Bytes[i]
		if b <= 0 {
			continue
		}
		t := in.ArrivalsS[i] - t0
		if deficit := (t-resume)*bps - float64(since); deficit > 0 && deficit >= frame {
			stall := deficit / bps
			res.Stalls++
			res.TotalStallS += stall
			if stall > res.LongestStallS {
				res.LongestStallS = stall
			}
			if tl != nil {
				played += float64(since) / bps
				tl.Times = append(tl.Times, t0+(resume+float64(since)/bps), in.ArrivalsS[i])
				tl.Positions = append(tl.Positions, played, played)
			}
			resume, since = t, 0
		}
		since += b
	}
	if tl != nil {
		tl.Times = append(tl.Times, t0+resume+float64(since)/bps)
		tl.Positions = append(tl.Positions, played+float64(since)/bps)
	}
	return res
}

// startTime is the playback start relative to t0 (the first non-empty
// arrival): the arrival that brings the received audio to cfg.BufferS, capped
// at cfg.MaxWaitS when that is set, and the last arrival when the stream ends
// short of the buffer.
func startTime(in Input, first int, t0, bps float64, cfg PrerollConfig) float64 {
	start := 0.0
	received := 0
	for i := first; i < len(in.Bytes); i++ {
		if in.Bytes[i] <= 0 {
			continue
		}
		received += in.Bytes[i]
		start = in.ArrivalsS[i] - t0
		if float64(received)/bps >= cfg.BufferS {
			break
		}
	}
	if cfg.MaxWaitS > 0 && cfg.MaxWaitS < start {
		start = cfg.MaxWaitS
	}
	return start
}
