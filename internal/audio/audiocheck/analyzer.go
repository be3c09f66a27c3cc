package audiocheck

import (
	"math"
	"strings"
	"time"
)

// Analyzer measures one stream; Reset reuses it for the next. It is not
// safe for concurrent use.
type Analyzer struct {
	cfg       Config
	frameSize int   // bytes per frame
	window    int   // frames per window
	gate      int64 // a window's power sum above this is audible
	abrupt    int64 // the last window's power sum above this is an abrupt end
	gapCount  int64 // windows in a gap longer than GapThreshold
	gapMax    int64 // windows in a gap longer than MaxGap

	frames  int64 // whole frames written
	sum     int64 // sum of all samples
	sumSq   int64 // sum of all squared samples
	peak    int32 // largest |sample|
	clipped int64 // samples in closed clip runs

	runs [maxChannels]int32 // current full-scale run per channel
	ch   int                // channel of the next sample

	winSum   int64 // power sum of the window being filled
	winFill  int   // frames in it
	lastWin  int64 // power sum of the last whole window; -1 before the first
	heard    bool  // a window was audible
	silent   int64 // silent windows since the last audible one
	longest  int64 // longest internal gap, in windows
	gapsOver int   // internal gaps longer than GapThreshold

	carry   [2 * maxChannels]byte
	carried int
}

// New returns an Analyzer for cfg (zero thresholds take the defaults).
func New(cfg Config) (*Analyzer, error) {
	a := &Analyzer{}
	if err := a.Reset(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// Reset prepares a for a new stream.
func (a *Analyzer) Reset(cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	w := windowFrames(cfg.Window, cfg.SampleRate)
	*a = Analyzer{
		cfg:       cfg,
		frameSize: 2 * cfg.Channels,
		window:    w,
		gate:      powerLimit(cfg.GateDBFS, cfg.Channels, w),
		abrupt:    powerLimit(cfg.AbruptEndDBFS, cfg.Channels, w),
		gapCount:  windowsIn(cfg.GapThreshold, cfg.SampleRate, w),
		gapMax:    windowsIn(cfg.MaxGap, cfg.SampleRate, w),
		lastWin:   -1,
	}
	return nil
}

// windowsIn returns how many whole windows of w frames fit in d: a gap of
// more windows than that is longer than d.
func windowsIn(d time.Duration, rate, w int) int64 {
	return int64(math.Floor(d.Seconds() * float64(rate) / float64(w)))
}

// Write feeds PCM (s16le, interleaved) in arrival order. Bytes of a frame
// split across calls are carried over.
func (a *Analyzer) Write(p []byte) {
	if a.carried > 0 {
		n := copy(a.carry[a.carried:a.frameSize], p)
		a.carried += n
		p = p[n:]
		if a.carried < a.frameSize {
			return
		}
		a.samples(a.carry[:a.frameSize])
		a.carried = 0
	}
	whole := len(p) - len(p)%a.frameSize
	if a.cfg.Channels == 1 {
		a.mono(p[:whole])
	} else {
		a.samples(p[:whole])
	}
	a.carried = copy(a.carry[:], p[whole:])
}

// samples takes whole frames. The sums live in locals for the loop; the
// window is judged each time it fills.
func (a *Analyzer) samples(p []byte) {
	sum, sumSq, peak, clipped := a.sum, a.sumSq, a.peak, a.clipped
	winSum, winFill, ch := a.winSum, a.winFill, a.ch
	channels, clipRun := a.cfg.Channels, int32(a.cfg.ClipRun)
	for i := 0; i+1 < len(p); i += 2 {
		x := int32(int16(uint16(p[i]) | uint16(p[i+1])<<8))
		sum += int64(x)
		sq := int64(x * x)
		sumSq += sq
		winSum += sq
		ax := x
		if ax < 0 {
			ax = -ax
		}
		peak = max(peak, ax)
		if ax >= 32767 {
			a.runs[ch]++
		} else if r := a.runs[ch]; r > 0 {
			if r >= clipRun {
				clipped += int64(r)
			}
			a.runs[ch] = 0
		}
		if ch++; ch < channels {
			continue
		}
		ch = 0
		if winFill++; winFill == a.window {
			a.endWindow(winSum)
			winSum, winFill = 0, 0
		}
	}
	a.frames += int64(len(p) / a.frameSize)
	a.sum, a.sumSq, a.peak, a.clipped = sum, sumSq, peak, clipped
	a.winSum, a.winFill, a.ch = winSum, winFill, ch
}

// mono is samples for one channel, without the channel bookkeeping: the
// common case, and the hot loop.
func (a *Analyzer) mono(p []byte) {
	sum, sumSq, peak, clipped := a.sum, a.sumSq, a.peak, a.clipped
	winSum, winFill, run := a.winSum, a.winFill, a.runs[0]
	clipRun := int32(a.cfg.ClipRun)
	for i := 0; i+1 < len(p); i += 2 {
		x := int32(int16(uint16(p[i]) | uint16(p[i+1])<<8))
		sum += int64(x)
		sq := int64(x * x)
		sumSq += sq
		winSum += sq
		ax := max(x, -x)
		peak = max(peak, ax)
		if ax >= 32767 {
			run++
		} else if run > 0 {
			if run >= clipRun {
				clipped += int64(run)
			}
			run = 0
		}
		if winFill++; winFill == a.window {
			a.endWindow(winSum)
			winSum, winFill = 0, 0
		}
	}
	a.frames += int64(len(p) / 2)
	a.sum, a.sumSq, a.peak, a.clipped = sum, sumSq, peak, clipped
	a.winSum, a.winFill, a.runs[0] = winSum, winFill, run
}

// endWindow judges a whole window by its power sum and keeps the gap count.
func (a *Analyzer) endWindow(power int64) {
	a.lastWin = power
	if power <= a.gate {
		if a.heard {
			a.silent++
		}
		return
	}
	if a.silent > 0 {
		a.longest = max(a.longest, a.silent)
		if a.silent > a.gapCount {
			a.gapsOver++
		}
		a.silent = 0
	}
	a.heard = true
}

// Report is the measurement of the audio written so far.
type Report struct {
	Frames             int64         `json:"frames"`
	PeakDBFS           float64       `json:"peak_dbfs"`
	RMSDBFS            float64       `json:"rms_dbfs"`
	DCOffset           float64       `json:"dc_offset"`     // mean sample / full scale
	ClippedShare       float64       `json:"clipped_share"` // clipped samples / samples
	LongestInternalGap time.Duration `json:"longest_internal_gap"`
	GapsOver           int           `json:"gaps_over"` // internal gaps longer than Config.GapThreshold
	TrailingSilence    time.Duration `json:"trailing_silence"`
	AbruptEnd          bool          `json:"abrupt_end"`
	AllSilent          bool          `json:"all_silent"`
	Defects            Defects       `json:"-"`
}

// Report returns the measurement so far; it does not change a, so it can
// be taken mid-stream. Runs of full-scale samples still open count as
// clipped when long enough, and a run of silent windows still open is
// trailing silence, not a gap.
func (a *Analyzer) Report() Report {
	samples := a.frames * int64(a.cfg.Channels)
	clipped := a.clipped
	for _, r := range a.runs[:a.cfg.Channels] {
		if r >= int32(a.cfg.ClipRun) {
			clipped += int64(r)
		}
	}
	r := Report{
		Frames:             a.frames,
		PeakDBFS:           dbfs(float64(a.peak) / fullScale),
		RMSDBFS:            FloorDBFS,
		LongestInternalGap: a.windowsDuration(a.longest),
		GapsOver:           a.gapsOver,
		TrailingSilence:    a.windowsDuration(a.silent),
		AbruptEnd:          a.lastWin > a.abrupt,
		AllSilent:          a.lastWin >= 0 && !a.heard,
	}
	if samples > 0 {
		r.RMSDBFS = dbfs(math.Sqrt(float64(a.sumSq)/float64(samples)) / fullScale)
		r.DCOffset = float64(a.sum) / float64(samples) / fullScale
		r.ClippedShare = float64(clipped) / float64(samples)
	}
	if r.AllSilent {
		r.Defects |= AllSilent
	}
	if r.ClippedShare > a.cfg.MaxClippedShare {
		r.Defects |= Clipped
	}
	if a.longest > a.gapMax {
		r.Defects |= InternalGap
	}
	return r
}

func (a *Analyzer) windowsDuration(n int64) time.Duration {
	return time.Duration(float64(n*int64(a.window)) / float64(a.cfg.SampleRate) * float64(time.Second))
}

// dbfs is 20*log10(amplitude), FloorDBFS for zero.
func dbfs(amplitude float64) float64 {
	if amplitude <= 0 {
		return FloorDBFS
	}
	return max(FloorDBFS, 20*math.Log10(amplitude))
}

// Defects is a set of reasons to flag a response's audio.
type Defects uint8

// The defects. An abrupt end is reported (Report.AbruptEnd) but is not a
// defect: a server may trim trailing silence, and a fade shorter than the
// window cannot be told from a cut.
const (
	AllSilent   Defects = 1 << iota // no window above the gate
	Clipped                         // clipped share above Config.MaxClippedShare
	InternalGap                     // an internal gap longer than Config.MaxGap
)

var defectNames = [...]string{"all_silent", "clipped", "internal_gap"}

// Has reports whether d holds every defect of o.
func (d Defects) Has(o Defects) bool { return d&o == o }

// String returns the reasons, comma-separated in a fixed order ("" for none).
func (d Defects) String() string {
	var b strings.Builder
	for i, name := range defectNames {
		if d&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name)
	}
	return b.String()
}
