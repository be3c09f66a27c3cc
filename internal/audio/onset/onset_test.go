package onset

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

const rate = 24000

// pcm encodes float samples (full scale 1.0) as s16le, interleaving the
// channel slices.
func pcm(channels ...[]float64) []byte {
	n := len(channels[0])
	b := make([]byte, 0, 2*n*len(channels))
	for i := range n {
		for _, ch := range channels {
			v := math.Round(ch[i] * 32768)
			v = max(-32768, min(32767, v))
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(v)))
		}
	}
	return b
}

// sine returns total samples: silence (or the floor signal) up to start,
// then amp*sin(2*pi*f*(n-start)/rate + phase).
func sine(total, start int, amp, f, phase float64, floor func(n int) float64) []float64 {
	x := make([]float64, total)
	for n := range x {
		if n < start {
			if floor != nil {
				x[n] = floor(n)
			}
			continue
		}
		x[n] = amp * math.Sin(2*math.Pi*f*float64(n-start)/rate+phase)
	}
	return x
}

func dbfs(db float64) float64 { return math.Pow(10, db/20) }

func detect(t *testing.T, b []byte, channels int, split func(i int) int) (int64, bool) {
	t.Helper()
	d, err := New(Config{SampleRate: rate, Channels: channels, ThresholdDBFS: DefaultThresholdDBFS, Window: DefaultWindow})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), split(i))
		d.Write(b[:n])
		b = b[n:]
	}
	return d.Onset()
}

func whole(int) int { return math.MaxInt }

// TestOnsetToTheSample: a cosine (full amplitude at its first sample)
// starting at sample N after digital silence has its onset at N, however
// the PCM is split into chunks.
func TestOnsetToTheSample(t *testing.T) {
	for _, start := range []int{0, 1, 239, 240, 241, 4321, 12000} {
		b := pcm(sine(start+2400, start, 0.5, 440, math.Pi/2, nil))
		for name, split := range map[string]func(int) int{
			"whole": whole, "1 byte": func(int) int { return 1 }, "odd 3": func(int) int { return 3 },
			"varying": func(i int) int { return 1 + (i*7919)%4099 },
		} {
			if got, ok := detect(t, b, 1, split); !ok || got != int64(start) {
				t.Errorf("start %d, %s: onset %d (found %v), want %d", start, name, got, ok, start)
			}
		}
	}
}

// TestOnsetReference checks against an independent computation: for a sine
// with phase 0 (zero at its first sample) the onset is the first sample n
// >= N with |x[n]| above the threshold amplitude, from the float formula.
func TestOnsetReference(t *testing.T) {
	for _, tc := range []struct{ amp, f float64 }{{0.5, 440}, {dbfs(-40), 100}, {dbfs(-45), 50}} {
		const start = 5000
		x := sine(start+4800, start, tc.amp, tc.f, 0, nil)
		a := dbfs(DefaultThresholdDBFS)
		want := -1
		for n := start; n < len(x); n++ {
			if math.Abs(math.Round(x[n]*32768)) > a*32768 {
				want = n
				break
			}
		}
		got, ok := detect(t, pcm(x), 1, whole)
		if !ok || got != int64(want) {
			t.Errorf("amp %.4g, %v Hz: onset %d (found %v), want %d", tc.amp, tc.f, got, ok, want)
		}
	}
}

// TestNoiseFloor: uniform noise at -60 dBFS RMS (peaks -55.2 dBFS) is never
// audible; a tone after it has its onset at its first sample.
func TestNoiseFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rms := dbfs(-60)
	noise := func(int) float64 { return (rng.Float64()*2 - 1) * rms * math.Sqrt(3) }
	if _, ok := detect(t, pcm(sine(48000, 48000, 0, 0, 0, noise)), 1, whole); ok {
		t.Error("noise at -60 dBFS found audible")
	}
	const start = 7777
	if got, ok := detect(t, pcm(sine(start+2400, start, 0.3, 220, math.Pi/2, noise)), 1, func(int) int { return 960 }); !ok || got != start {
		t.Errorf("tone after the noise floor: onset %d (found %v), want %d", got, ok, start)
	}
}

// TestThresholdLevel: the window RMS decides. A sine's RMS is amp/sqrt(2):
// at -48 dBFS RMS it is audible, at -52 dBFS not, although its peaks (-49
// dBFS) are above the threshold.
func TestThresholdLevel(t *testing.T) {
	for _, tc := range []struct {
		rmsDB float64
		want  bool
	}{{-48, true}, {-52, false}, {-30, true}, {-70, false}} {
		amp := dbfs(tc.rmsDB) * math.Sqrt2
		_, ok := detect(t, pcm(sine(24000, 0, amp, 1000, 0, nil)), 1, whole)
		if ok != tc.want {
			t.Errorf("sine at %v dBFS RMS: audible %v, want %v", tc.rmsDB, ok, tc.want)
		}
	}
	// A square wave (|x| constant) just above and just below the threshold.
	for _, tc := range []struct {
		db   float64
		want bool
	}{{-49.9, true}, {-50.1, false}} {
		x := make([]float64, 2400)
		for n := range x {
			x[n] = dbfs(tc.db) * float64(1-2*(n/24%2))
		}
		if _, ok := detect(t, pcm(x), 1, whole); ok != tc.want {
			t.Errorf("square at %v dBFS: audible %v, want %v", tc.db, ok, tc.want)
		}
	}
}

// TestStereo: the frame power is the mean over channels, so the same tone
// in both channels has the mono onset, and a tone in one channel only must
// be 3 dB louder to count.
func TestStereo(t *testing.T) {
	const start = 3000
	tone := sine(start+2400, start, 0.5, 440, math.Pi/2, nil)
	if got, ok := detect(t, pcm(tone, tone), 2, func(int) int { return 1001 }); !ok || got != start {
		t.Errorf("stereo tone: onset %d (found %v), want %d", got, ok, start)
	}
	silent := make([]float64, len(tone))
	quiet := sine(24000, 0, dbfs(-48.5)*math.Sqrt2, 1000, 0, nil) // -48.5 dBFS RMS, -51.5 as a stereo mean
	if _, ok := detect(t, pcm(quiet, make([]float64, len(quiet))), 2, whole); ok {
		t.Error("one channel at -48.5 dBFS RMS counted audible in stereo (mean -51.5 dBFS)")
	}
	if got, ok := detect(t, pcm(silent, tone), 2, whole); !ok || got != start {
		t.Errorf("loud tone in the right channel: onset %d (found %v), want %d", got, ok, start)
	}
}

// TestShortSound: a burst shorter than the window counts by the energy it
// brings into the window. 20 frames at -40 dBFS in a 240-frame window give
// a window RMS of -40 + 10*log10(20/240) = -50.8 dBFS (silent); 30 frames
// give -49.0 dBFS (audible, onset at the burst's first frame).
func TestShortSound(t *testing.T) {
	mk := func(frames int) []byte {
		x := make([]float64, 4800)
		for n := 1000; n < 1000+frames; n++ {
			x[n] = dbfs(-40) * float64(1-2*(n%2))
		}
		return pcm(x)
	}
	if _, ok := detect(t, mk(20), 1, whole); ok {
		t.Error("20 frames at -40 dBFS in a 240-frame window (window RMS -50.8 dBFS) counted audible")
	}
	if got, ok := detect(t, mk(30), 1, whole); !ok || got != 1000 {
		t.Errorf("30 frames at -40 dBFS (window RMS -49.0 dBFS): onset %d (found %v), want 1000", got, ok)
	}
}

func TestWindowFrames(t *testing.T) {
	for _, tc := range []struct {
		rate, want int
	}{{24000, 240}, {44100, 441}, {16000, 160}, {48000, 480}, {50, 1}} {
		if got := WindowFrames(DefaultWindow, tc.rate); got != tc.want {
			t.Errorf("%d Hz: %d frames, want %d", tc.rate, got, tc.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{SampleRate: rate, Channels: 1, ThresholdDBFS: -50, Window: DefaultWindow}
	for name, mod := range map[string]func(*Config){
		"rate":       func(c *Config) { c.SampleRate = 0 },
		"channels":   func(c *Config) { c.Channels = 0 },
		"channels65": func(c *Config) { c.Channels = 65 },
		"threshold0": func(c *Config) { c.ThresholdDBFS = 0 },
		"too low":    func(c *Config) { c.ThresholdDBFS = -120 },
		"NaN":        func(c *Config) { c.ThresholdDBFS = math.NaN() },
		"window":     func(c *Config) { c.Window = 0 },
		"long":       func(c *Config) { c.Window = time.Hour },
	} {
		c := ok
		mod(&c)
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", name, err)
		}
	}
}

// TestResetReuses: a detector reset for a new stream forgets the old one.
func TestResetReuses(t *testing.T) {
	cfg := Config{SampleRate: rate, Channels: 1, ThresholdDBFS: -50, Window: DefaultWindow}
	d, _ := New(cfg)
	d.Write(pcm(sine(2400, 100, 0.5, 440, math.Pi/2, nil)))
	if f, ok := d.Onset(); !ok || f != 100 {
		t.Fatalf("first stream: %d %v", f, ok)
	}
	if err := d.Reset(cfg); err != nil {
		t.Fatal(err)
	}
	d.Write(pcm(sine(2400, 900, 0.5, 440, math.Pi/2, nil)))
	if f, ok := d.Onset(); !ok || f != 900 || d.Frames() != 2400 {
		t.Errorf("second stream: onset %d %v, %d frames; want 900, 2400 frames", f, ok, d.Frames())
	}
}

// TestWriteAllocatesNothing: the per-chunk path allocates nothing, before
// and after the onset.
func TestWriteAllocatesNothing(t *testing.T) {
	d, _ := New(Config{SampleRate: rate, Channels: 1, ThresholdDBFS: -50, Window: DefaultWindow})
	silence := make([]byte, 9601)
	if n := testing.AllocsPerRun(20, func() { d.Write(silence) }); n != 0 {
		t.Errorf("Write before the onset: %v allocations", n)
	}
	d.Write(pcm(sine(2400, 0, 0.5, 440, math.Pi/2, nil)))
	if n := testing.AllocsPerRun(20, func() { d.Write(silence) }); n != 0 {
		t.Errorf("Write after the onset: %v allocations", n)
	}
}

func BenchmarkWrite(b *testing.B) {
	d, _ := New(Config{SampleRate: rate, Channels: 1, ThresholdDBFS: -50, Window: DefaultWindow})
	chunk := make([]byte, 15360) // 0.32 s of silence
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		d.Write(chunk)
	}
}

// FuzzWrite: any PCM, split anywhere, gives the onset of writing it at once;
// the onset lies within the frames written and is above the threshold.
func FuzzWrite(f *testing.F) {
	f.Add(pcm(sine(600, 300, 0.5, 440, 0, nil)), uint16(7), uint8(1))
	f.Add([]byte{0xff, 0x7f, 0, 0, 1}, uint16(1), uint8(2))
	f.Add(make([]byte, 1000), uint16(13), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, step uint16, ch uint8) {
		channels := 1 + int(ch)%4
		cfg := Config{SampleRate: 8000, Channels: channels, ThresholdDBFS: -50, Window: 2 * time.Millisecond}
		one, _ := New(cfg)
		one.Write(b)
		parts, _ := New(cfg)
		s := 1 + int(step)%97
		for rest := b; len(rest) > 0; {
			n := min(s, len(rest))
			parts.Write(rest[:n])
			rest = rest[n:]
		}
		f1, ok1 := one.Onset()
		f2, ok2 := parts.Onset()
		if f1 != f2 || ok1 != ok2 || one.Frames() != parts.Frames() {
			t.Fatalf("whole: %d %v %d frames; split by %d: %d %v %d frames", f1, ok1, one.Frames(), s, f2, ok2, parts.Frames())
		}
		if want := int64(len(b) / (2 * channels)); one.Frames() != want {
			t.Fatalf("%d frames, want %d", one.Frames(), want)
		}
		if ok1 && (f1 < 0 || f1 >= one.Frames()) {
			t.Fatalf("onset %d outside %d frames", f1, one.Frames())
		}
	})
}
