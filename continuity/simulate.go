package continuity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Mode selects how Simulate counts an underrun.
type Mode int

const (
	// Default is omnibench's own model: times relative to the first arrival,
	// and a deficit counts only when it is at least one sample frame.
	Default Mode = iota
	// Reference reproduces the reference benchmark (and what servers export)
	// bit for bit, floating-point residue included.
	Reference
)

// String returns "default" or "reference".
func (m Mode) String() string {
	switch m {
	case Default:
		return "default"
	case Reference:
		return "reference"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses "default" or "reference" (case-insensitive, surrounding
// space ignored).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "default":
		return Default, nil
	case "reference":
		return Reference, nil
	}
	return Default, fmt.Errorf("continuity mode %q: want default or reference", s)
}

// Input is one response's chunk timeline.
type Input struct {
	ArrivalsS   []float64 // arrival of each chunk's last byte, seconds (any origin), non-decreasing
	Bytes       []int     // PCM bytes of each chunk
	SampleRate  int
	SampleWidth int // bytes per sample; 0 means 2
	Channels    int // 0 means 1
}

// frameBytes is the size of one sample frame (all channels of one sample).
func (in Input) frameBytes() int {
	w, c := in.SampleWidth, in.Channels
	if w == 0 {
		w = 2
	}
	if c == 0 {
		c = 1
	}
	return w * c
}

// bytesPerSecond is the playback rate; <= 0 means the input cannot be
// simulated.
func (in Input) bytesPerSecond() int {
	return in.SampleRate * in.frameBytes()
}

// DurationS is the playback length of all the input's audio in seconds; 0
// when the format is unusable.
func (in Input) DurationS() float64 {
	bps := in.bytesPerSecond()
	if in.SampleRate <= 0 || bps <= 0 {
		return 0
	}
	total := 0
	for _, b := range in.Bytes {
		total += b
	}
	return float64(total) / float64(bps)
}

// valid reports whether the input describes something to simulate. The
// reference answers (0, 0) for anything else, and so do the players.
func (in Input) valid() bool {
	return len(in.ArrivalsS) > 0 && len(in.ArrivalsS) == len(in.Bytes) && in.SampleRate > 0 && in.bytesPerSecond() > 0
}

// Result is the outcome of the underrun simulation.
type Result struct {
	MaxUnderrunS   float64 // largest playback deficit in seconds; 0 when none
	UnderrunEvents int     // chunks that arrived after the player had run dry
}

// Continuous reports whether the worst underrun is within thresholdS
// (inclusive, as in the reference).
func (r Result) Continuous(thresholdS float64) bool { return r.MaxUnderrunS <= thresholdS }

// Simulate runs the never-pausing player of docs/reference/continuity.md,
// section 2 over in.
//
// The player starts at the first arrival t0 and consumes bps bytes per second
// without ever pausing. Before chunk i (i > 0) it has consumed (t_i-t0)*bps
// bytes but only received the bytes of chunks 0..i-1; the difference is the
// deficit. The deficit is cumulative, the last chunk's own playback is never
// checked, and zero-byte chunks add nothing.
//
// Reference counts every deficit > 0, exactly as the reference computes it.
// Default counts a deficit only when it is at least one sample frame, so the
// rounding residue of large absolute timestamps is not an underrun.
func Simulate(in Input, mode Mode) Result {
	if !in.valid() {
		return Result{}
	}
	// The reference multiplies a float time by an integer bps and subtracts an
	// integer byte count; both integers become float64 at that point. Keep
	// that order: Reference mode must reproduce its residue exactly.
	bps := float64(in.bytesPerSecond())
	minDeficit := 0.0 // Reference: any deficit > 0
	if mode != Reference {
		minDeficit = float64(in.frameBytes())
	}
	t0 := in.ArrivalsS[0]
	var r Result
	received := in.Bytes[0]
	for i := 1; i < len(in.ArrivalsS); i++ {
		deficit := (in.ArrivalsS[i]-t0)*bps - float64(received)
		if deficit > 0 && deficit >= minDeficit {
			r.UnderrunEvents++
			if u := deficit / bps; u > r.MaxUnderrunS {
				r.MaxUnderrunS = u
			}
		}
		received += in.Bytes[i]
	}
	return r
}

// ThresholdLabel names a threshold by its integer milliseconds, rounded:
// 0.1 -> "100". Results maps and metric labels are keyed by it.
func ThresholdLabel(thresholdS float64) string {
	return strconv.FormatInt(int64(math.Round(thresholdS*1000)), 10)
}
