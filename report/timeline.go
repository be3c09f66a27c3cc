package report

import (
	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// The curves in this file are drawn for the worst response's timeline
// chart. The pausing players' positions come from continuity itself
// (PrerollTimeline), so the chart and the reported stalls are one model; the
// received and reference curves follow continuity's input semantics
// (zero-byte chunks ignored, the first arrival is the first non-empty one).

// pcmRates returns the bytes per second of in, with continuity's defaults
// (width 2, mono); ok is false when in cannot be simulated, exactly when
// continuity gives a zero result.
func pcmRates(in continuity.Input) (bps float64, ok bool) {
	w, c := in.SampleWidth, in.Channels
	if w == 0 {
		w = 2
	}
	if c == 0 {
		c = 1
	}
	if len(in.ArrivalsS) == 0 || len(in.ArrivalsS) != len(in.Bytes) || in.SampleRate <= 0 || in.SampleRate*w*c <= 0 {
		return 0, false
	}
	return float64(in.SampleRate * w * c), true
}

// firstAudio is the index of the first chunk with audio, or -1.
func firstAudio(in continuity.Input) int {
	for i, b := range in.Bytes {
		if b > 0 {
			return i
		}
	}
	return -1
}

// receivedCurve is the cumulative audio received (seconds of playback) as
// step points: 0 from time 0 until the first arrival, then a jump at every
// chunk. Times are those of in (seconds since the request was sent).
func receivedCurve(in continuity.Input) (ts, audio []float64) {
	bps, ok := pcmRates(in)
	if !ok || firstAudio(in) < 0 {
		return nil, nil
	}
	ts, audio = []float64{0}, []float64{0}
	total := 0
	for i, b := range in.Bytes {
		if b <= 0 {
			continue
		}
		total += b
		ts, audio = append(ts, in.ArrivalsS[i]), append(audio, float64(total)/bps)
	}
	return ts, audio
}

// referenceCurve is the position of the reference player
// (docs/reference/continuity.md, section 2): it starts at the first arrival and plays at real time without ever
// pausing, until all the audio received has been played. Where it runs
// above the received curve the reference counts an underrun.
func referenceCurve(in continuity.Input) (ts, pos []float64) {
	bps, ok := pcmRates(in)
	first := firstAudio(in)
	if !ok || first < 0 {
		return nil, nil
	}
	total := 0
	for _, b := range in.Bytes {
		if b > 0 {
			total += b
		}
	}
	d := float64(total) / bps
	t0 := in.ArrivalsS[first]
	return []float64{t0, t0 + d}, []float64{0, d}
}

// playback is the position curve of a pausing player and its stalls.
type playback struct {
	ts, pos       []float64 // corners: time since send (s), audio played (s)
	stalls        int
	totalStallS   float64
	longestStallS float64
	startupDelayS float64
	ok            bool
}

// playerCurve is the position of continuity's pausing player that starts
// startupS after the first non-empty arrival: StallResume with 0, Preroll
// with the start-up delay its configuration produced (a record keeps the
// delay, not the configuration). ok is false when continuity has nothing to
// play.
func playerCurve(in continuity.Input, startupS float64) playback {
	return prerollCurve(in, continuity.FixedStartup(startupS))
}

// prerollCurve is the pre-roll player's position under cfg, for a record
// that does not carry the player's result.
func prerollCurve(in continuity.Input, cfg continuity.PrerollConfig) playback {
	res, tl := continuity.PrerollTimeline(in, cfg)
	if len(tl.Times) == 0 {
		return playback{}
	}
	return playback{ts: tl.Times, pos: tl.Positions, stalls: res.Stalls, totalStallS: res.TotalStallS,
		longestStallS: res.LongestStallS, startupDelayS: res.StartupDelayS, ok: true}
}

// inputOf is the continuity input of a record's chunk timeline.
func inputOf(r *results.Record) continuity.Input {
	return continuity.Input{ArrivalsS: r.ChunkArrivalsS, Bytes: r.ChunkBytes, SampleRate: r.SampleRate, SampleWidth: r.SampleWidth, Channels: r.Channels}
}

// worstResponse picks the measured response with the largest maximum
// underrun (see summary.WorstPicker); ok is false when no record has a
// usable chunk timeline.
func worstResponse(recs []results.Record) (worst *results.Record, underrunS float64, ok bool) {
	return summary.WorstOf(recs).Worst()
}
