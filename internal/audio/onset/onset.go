// Package onset finds where streamed audio becomes audible: the first sample
// of the first short window whose RMS level is above a threshold in dBFS.
//
// TTFP counts the first PCM byte, but servers often begin with silence or a
// low noise floor; a listener hears the first sound. A Detector is fed the
// PCM of a response as it arrives (s16le, interleaved channels, chunks of
// any length, frames split across chunks) and stops working once the onset
// is found, so the per-chunk cost is a few integer operations per frame
// until then and nothing after.
//
// # Definition
//
// Levels are relative to full scale: an amplitude a (|sample| / 32768) is
// 20*log10(a) dBFS, so the RMS of a full-scale square wave is 0 dBFS and of a
// full-scale sine -3.01 dBFS. The power of a frame is the mean of its
// channels' squared samples (ITU-R BS.1770 sums channel powers; the mean
// keeps the threshold independent of the channel count). A window of W
// frames is audible when its mean power exceeds A^2, A the threshold
// amplitude, i.e. its RMS is above the threshold. The onset is the first
// frame of the first audible window whose own power exceeds A^2: the window
// decides that something is audible (a lone click of one sample does not
// count unless it carries the window), the frame test places the onset to
// the sample. Only full windows are judged, so a sound shorter than the
// window at the very end of a response can pass unnoticed.
//
// Sums are exact integer arithmetic (squares of int16 in int64), so the
// result does not depend on how the PCM was split into chunks.
//
// # Defaults
//
// DefaultThresholdDBFS (-50 dBFS) and DefaultWindow (10 ms) are the
// project's choice, explained in docs/measurements.md ("Time to first
// audible audio").
package onset

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of Config.
const (
	DefaultThresholdDBFS = -50.0
	DefaultWindow        = 10 * time.Millisecond
)

// Bounds of Config, so a window's ring and sums stay small and exact.
const (
	MinThresholdDBFS = -90.0 // the s16 noise floor is about -96 dBFS
	maxWindowFrames  = 1 << 16
	maxChannels      = 64
)

// ErrConfig is wrapped by every error New returns.
var ErrConfig = errors.New("onset: invalid configuration")

// Config describes the audio and the audibility test.
type Config struct {
	SampleRate    int           // frames per second, > 0
	Channels      int           // interleaved channels, 1..64
	ThresholdDBFS float64       // window RMS above this is audible; in [MinThresholdDBFS, 0)
	Window        time.Duration // RMS window; at least one frame long
}

// Detector finds the onset of one stream; Reset reuses it for the next.
// It is not safe for concurrent use.
type Detector struct {
	channels  int
	frameSize int   // bytes per frame
	window    int   // frames per window
	limit     int64 // a frame is above the threshold when its power sum exceeds this (see Reset)
	winLimit  int64 // a window is audible when its power sum exceeds this
	ring      []int64
	sum       int64 // power sum over the ring
	pos       int   // next ring slot
	frames    int64 // frames seen
	carry     [2 * maxChannels]byte
	carried   int
	onset     int64 // frame index of the onset; -1 until found
}

// New returns a Detector for cfg.
func New(cfg Config) (*Detector, error) {
	d := &Detector{}
	if err := d.Reset(cfg); err != nil {
		return nil, err
	}
	return d, nil
}

// WindowFrames returns the window length in frames for a sample rate:
// round(window * rate), at least 1.
func WindowFrames(window time.Duration, sampleRate int) int {
	return max(1, int(math.Round(window.Seconds()*float64(sampleRate))))
}

// Reset prepares d for a new stream, keeping its ring when it is big enough.
func (d *Detector) Reset(cfg Config) error {
	switch {
	case cfg.SampleRate <= 0:
		return fmt.Errorf("%w: sample rate %d Hz", ErrConfig, cfg.SampleRate)
	case cfg.Channels < 1 || cfg.Channels > maxChannels:
		return fmt.Errorf("%w: %d channels (want 1..%d)", ErrConfig, cfg.Channels, maxChannels)
	case !(cfg.ThresholdDBFS >= MinThresholdDBFS && cfg.ThresholdDBFS < 0):
		return fmt.Errorf("%w: threshold %v dBFS (want %v to below 0)", ErrConfig, cfg.ThresholdDBFS, MinThresholdDBFS)
	case cfg.Window <= 0:
		return fmt.Errorf("%w: window %v", ErrConfig, cfg.Window)
	}
	w := WindowFrames(cfg.Window, cfg.SampleRate)
	if w > maxWindowFrames {
		return fmt.Errorf("%w: window %v is %d frames at %d Hz (at most %d)", ErrConfig, cfg.Window, w, cfg.SampleRate, maxWindowFrames)
	}
	ring := d.ring
	if cap(ring) < w {
		ring = make([]int64, w)
	}
	ring = ring[:w]
	clear(ring)
	// A frame's power sum is sum over channels of x^2; it exceeds
	// channels * A^2 (A in sample units) exactly when the mean power
	// exceeds A^2. Likewise a window's sum against window * channels * A^2.
	// A^2 is rounded down to an integer: for integer sums, sum > floor(t)
	// is sum > t unless t is an integer, where both agree.
	a := 32768 * math.Pow(10, cfg.ThresholdDBFS/20)
	*d = Detector{
		channels:  cfg.Channels,
		frameSize: 2 * cfg.Channels,
		window:    w,
		limit:     int64(math.Floor(a * a * float64(cfg.Channels))),
		winLimit:  int64(math.Floor(a * a * float64(cfg.Channels) * float64(w))),
		ring:      ring,
		onset:     -1,
	}
	return nil
}

// Write feeds PCM (s16le, interleaved) in arrival order and reports whether
// the onset is known. Bytes of a frame split across calls are carried over.
// After the onset is found, Write only counts frames.
func (d *Detector) Write(p []byte) bool {
	if d.carried > 0 {
		n := copy(d.carry[d.carried:d.frameSize], p)
		d.carried += n
		p = p[n:]
		if d.carried < d.frameSize {
			return d.onset >= 0
		}
		d.frame(d.carry[:d.frameSize])
		d.carried = 0
	}
	whole := len(p) - len(p)%d.frameSize
	if d.onset >= 0 {
		d.frames += int64(whole / d.frameSize)
	} else if d.channels == 1 {
		d.mono(p[:whole])
	} else {
		for i := 0; i < whole; i += d.frameSize {
			d.frame(p[i : i+d.frameSize])
		}
	}
	d.carried = copy(d.carry[:], p[whole:])
	return d.onset >= 0
}

// mono is frame for every frame of mono PCM p (whole frames), with the
// ring position and sums in locals: the common case, and the hot loop.
func (d *Detector) mono(p []byte) {
	ring, pos, sum, frames := d.ring, d.pos, d.sum, d.frames
	w := int64(len(ring))
	for i := 0; i+1 < len(p); i += 2 {
		x := int64(int16(uint16(p[i]) | uint16(p[i+1])<<8))
		pow := x * x
		sum += pow - ring[pos]
		ring[pos] = pow
		pos++
		if pos == len(ring) {
			pos = 0
		}
		frames++
		if sum > d.winLimit && frames >= w {
			d.pos, d.sum, d.frames = pos, sum, frames
			d.found()
			d.frames += int64((len(p) - i - 2) / 2)
			return
		}
	}
	d.pos, d.sum, d.frames = pos, sum, frames
}

// frame takes one frame.
func (d *Detector) frame(f []byte) {
	if d.onset >= 0 {
		d.frames++
		return
	}
	var pow int64
	for c := 0; c < len(f); c += 2 {
		x := int64(int16(uint16(f[c]) | uint16(f[c+1])<<8))
		pow += x * x
	}
	d.sum += pow - d.ring[d.pos]
	d.ring[d.pos] = pow
	d.pos++
	if d.pos == d.window {
		d.pos = 0
	}
	d.frames++
	if d.frames < int64(d.window) || d.sum <= d.winLimit {
		return
	}
	d.found()
}

// found is called when the window ending at the last frame is audible: the
// onset is its first frame above the threshold. The oldest frame sits at
// d.pos.
func (d *Detector) found() {
	for k := range d.window {
		if d.ring[(d.pos+k)%d.window] > d.limit {
			d.onset = d.frames - int64(d.window) + int64(k)
			return
		}
	}
}

// Onset returns the frame index (from the first frame written) of the
// onset, and whether it was found.
func (d *Detector) Onset() (frame int64, ok bool) { return d.onset, d.onset >= 0 }

// Frames returns the whole frames written so far.
func (d *Detector) Frames() int64 { return d.frames }
