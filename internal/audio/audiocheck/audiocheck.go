// Package audiocheck measures whether streamed audio is sound as well as on
// time: its peak and RMS level, DC offset, share of clipped samples, the
// gaps of silence inside it, whether it ends abruptly, and the defects that
// follow (all silent, clipped, an internal gap over a limit).
//
// An Analyzer is fed the PCM of one response as it arrives (s16le,
// interleaved channels, chunks of any length, frames split across chunks
// carried over), like the onset detector in package onset, and keeps only
// running sums: memory is fixed by the channel count, the per-chunk work is
// a few integer operations per sample and allocates nothing, and the result
// does not depend on how the PCM was split.
//
// # Definitions
//
// Levels are in dBFS as in package onset: an amplitude a (|sample| / 32768)
// is 20*log10(a) dBFS. Peak is the largest |sample| over all channels
// (-32768 is 0 dBFS); RMS the root of the mean square over all samples of
// all channels; DC offset the mean sample over full scale (as sox's "stats"
// reports them for one channel). Digital silence has no level: it is
// reported as FloorDBFS.
//
// The stream is cut into consecutive windows of Config.Window frames (10 ms
// by default; a trailing partial window is not judged). A window is silent
// when its RMS (the mean over channels of the frames' power, as the onset
// takes it) is at or below Config.GateDBFS, the onset's -50 dBFS gate. The
// audio is all silent when it has a whole window and none above the gate
// (audio shorter than one window is too short to tell). An internal gap is
// a run of silent windows with an audible window on both sides: leading
// silence is the onset's business and trailing silence is reported on its
// own. Gap lengths are whole windows, so they are exact to the window.
//
// A clipped sample is one in a run of at least Config.ClipRun consecutive
// full-scale samples (32767 or -32768) in one channel: a waveform driven
// past full scale is flattened into such runs, while a correctly scaled
// peak touches full scale for a sample or two.
//
// The end is abrupt when the last whole window is louder than
// Config.AbruptEndDBFS: speech ends by decaying into silence, and a response
// cut mid-word stops at speech level.
package audiocheck

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of Config; docs/measurements.md gives the reasons.
const (
	DefaultGateDBFS        = -50.0
	DefaultWindow          = 10 * time.Millisecond
	DefaultGapThreshold    = 200 * time.Millisecond
	DefaultMaxGap          = 1 * time.Second
	DefaultClipRun         = 3
	DefaultMaxClippedShare = 0.01
	DefaultAbruptEndDBFS   = -30.0
)

// FloorDBFS stands for the level of digital silence (no sample off zero),
// below anything s16 can carry (one step is about -90.3 dBFS).
const FloorDBFS = -120.0

const (
	minGateDBFS     = -90.0
	maxWindowFrames = 1 << 16
	maxChannels     = 64
	fullScale       = 32768.0
)

// ErrConfig is wrapped by every error New and Reset return.
var ErrConfig = errors.New("audiocheck: invalid configuration")

// Config describes the audio and the thresholds. Zero thresholds take the
// defaults; SampleRate and Channels are required.
type Config struct {
	SampleRate      int           // frames per second, > 0
	Channels        int           // interleaved channels, 1..64
	GateDBFS        float64       // a window at or below this RMS is silent; in [-90, 0)
	Window          time.Duration // the silence window
	GapThreshold    time.Duration // internal gaps longer than this are counted (Report.GapsOver)
	MaxGap          time.Duration // an internal gap longer than this is a defect
	ClipRun         int           // full-scale samples in a row that count as clipping
	MaxClippedShare float64       // a clipped share above this is a defect; in (0, 1]
	AbruptEndDBFS   float64       // the last window above this RMS is an abrupt end; in [-90, 0)
}

// withDefaults returns c with zero thresholds replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.GateDBFS == 0 {
		c.GateDBFS = DefaultGateDBFS
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.GapThreshold == 0 {
		c.GapThreshold = DefaultGapThreshold
	}
	if c.MaxGap == 0 {
		c.MaxGap = DefaultMaxGap
	}
	if c.ClipRun == 0 {
		c.ClipRun = DefaultClipRun
	}
	if c.MaxClippedShare == 0 {
		c.MaxClippedShare = DefaultMaxClippedShare
	}
	if c.AbruptEndDBFS == 0 {
		c.AbruptEndDBFS = DefaultAbruptEndDBFS
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.SampleRate <= 0:
		return fmt.Errorf("%w: sample rate %d Hz", ErrConfig, c.SampleRate)
	case c.Channels < 1 || c.Channels > maxChannels:
		return fmt.Errorf("%w: %d channels (want 1..%d)", ErrConfig, c.Channels, maxChannels)
	case !(c.GateDBFS >= minGateDBFS && c.GateDBFS < 0):
		return fmt.Errorf("%w: gate %v dBFS (want %v to below 0)", ErrConfig, c.GateDBFS, minGateDBFS)
	case !(c.AbruptEndDBFS >= minGateDBFS && c.AbruptEndDBFS < 0):
		return fmt.Errorf("%w: abrupt-end level %v dBFS (want %v to below 0)", ErrConfig, c.AbruptEndDBFS, minGateDBFS)
	case c.Window < 0 || c.GapThreshold < 0 || c.MaxGap < 0:
		return fmt.Errorf("%w: negative duration (window %v, gap threshold %v, max gap %v)", ErrConfig, c.Window, c.GapThreshold, c.MaxGap)
	case c.ClipRun < 1:
		return fmt.Errorf("%w: clip run %d samples", ErrConfig, c.ClipRun)
	case !(c.MaxClippedShare > 0 && c.MaxClippedShare <= 1):
		return fmt.Errorf("%w: max clipped share %v (want above 0, at most 1)", ErrConfig, c.MaxClippedShare)
	}
	if w := windowFrames(c.Window, c.SampleRate); w > maxWindowFrames {
		return fmt.Errorf("%w: window %v is %d frames at %d Hz (at most %d)", ErrConfig, c.Window, w, c.SampleRate, maxWindowFrames)
	}
	return nil
}

// windowFrames is round(window * rate), at least 1, as the onset's window.
func windowFrames(window time.Duration, sampleRate int) int {
	return max(1, int(math.Round(window.Seconds()*float64(sampleRate))))
}

// powerLimit returns the integer a window's power sum (squares of every
// sample in frames frames of channels channels) must exceed to be above db
// dBFS RMS; rounding down is exact for integer sums (see package onset).
func powerLimit(db float64, channels, frames int) int64 {
	a := fullScale * math.Pow(10, db/20)
	return int64(math.Floor(a * a * float64(channels) * float64(frames)))
}
