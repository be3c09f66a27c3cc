package audiocheck

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

const rate = 24000

// pcm encodes float samples (full scale 1.0, clamped) as s16le, interleaving
// the channel slices.
func pcm(channels ...[]float64) []byte {
	b := make([]byte, 0, 2*len(channels[0])*len(channels))
	for i := range channels[0] {
		for _, ch := range channels {
			v := max(-32768, min(32767, math.Round(ch[i]*32768)))
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(v)))
		}
	}
	return b
}

func sine(n int, amp, f float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = amp * math.Sin(2*math.Pi*f*float64(i)/rate)
	}
	return x
}

func constant(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

func cat(parts ...[]float64) []float64 {
	var x []float64
	for _, p := range parts {
		x = append(x, p...)
	}
	return x
}

func ms(d int) int { return d * rate / 1000 }

func dbfsOf(a float64) float64 { return 20 * math.Log10(a) }

func analyze(t *testing.T, b []byte, cfg Config, split func(i int) int) Report {
	t.Helper()
	if cfg.SampleRate == 0 {
		cfg.SampleRate, cfg.Channels = rate, 1
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), split(i))
		a.Write(b[:n])
		b = b[n:]
	}
	return a.Report()
}

func whole(int) int { return math.MaxInt }

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestLevelsByHand: levels of signals whose values follow from their
// definition: a constant is its own peak, RMS and DC offset; a square
// wave's RMS is its peak and its DC offset zero; a sine's RMS is 3.01 dB
// below its peak.
func TestLevelsByHand(t *testing.T) {
	square := make([]float64, rate)
	for i := range square {
		square[i] = 0.25 * float64(1-2*(i/12%2))
	}
	for _, tc := range []struct {
		name          string
		x             []float64
		peak, rms, dc float64
	}{
		{"constant 0.1", constant(rate, 0.1), dbfsOf(3277.0 / 32768), dbfsOf(3277.0 / 32768), 3277.0 / 32768},
		{"constant -0.5", constant(rate, -0.5), dbfsOf(0.5), dbfsOf(0.5), -0.5},
		{"square 0.25", square, dbfsOf(0.25), dbfsOf(0.25), 0},
		{"full-scale negative", constant(rate, -1), 0, 0, -1},
		{"sine 0.5", sine(rate, 0.5, 1000), dbfsOf(0.5), dbfsOf(0.5 / math.Sqrt2), 0},
	} {
		r := analyze(t, pcm(tc.x), Config{}, whole)
		if !near(r.PeakDBFS, tc.peak, 1e-3) || !near(r.RMSDBFS, tc.rms, 1e-3) || !near(r.DCOffset, tc.dc, 1e-6) {
			t.Errorf("%s: peak %.4f RMS %.4f DC %.7f dBFS; want %.4f %.4f %.7f", tc.name, r.PeakDBFS, r.RMSDBFS, r.DCOffset, tc.peak, tc.rms, tc.dc)
		}
		if r.Frames != int64(len(tc.x)) {
			t.Errorf("%s: %d frames, want %d", tc.name, r.Frames, len(tc.x))
		}
	}
}

// TestGaps: a tone with silences inside it; the gaps are whole windows
// (240 frames at 24 kHz), so their lengths are exact.
func TestGaps(t *testing.T) {
	tone := func(d int) []float64 { return sine(ms(d), 0.3, 440) }
	noise := func(d int) []float64 { // uniform noise at -60 dBFS RMS: below the gate
		rng := rand.New(rand.NewPCG(3, 4))
		x := make([]float64, ms(d))
		for i := range x {
			x[i] = (rng.Float64()*2 - 1) * math.Pow(10, -60.0/20) * math.Sqrt(3)
		}
		return x
	}
	silence := func(d int) []float64 { return make([]float64, ms(d)) }
	x := cat(silence(500), tone(1000), silence(300), tone(500), noise(150), tone(500), silence(210), tone(300), silence(400))
	r := analyze(t, pcm(x), Config{}, func(i int) int { return 960 })
	if r.LongestInternalGap != 300*time.Millisecond || r.GapsOver != 2 || r.TrailingSilence != 400*time.Millisecond {
		t.Errorf("longest gap %v, %d over 200 ms, trailing %v; want 300ms, 2 (300 and 210 ms), 400ms", r.LongestInternalGap, r.GapsOver, r.TrailingSilence)
	}
	if r.Defects != 0 || r.AllSilent {
		t.Errorf("defects %q, all silent %v; want none", r.Defects, r.AllSilent)
	}
	// A gap of 1.2 s is over the 1 s limit; one of exactly 1 s is not.
	for _, tc := range []struct {
		gap  int
		want Defects
	}{{1200, InternalGap}, {1000, 0}} {
		r := analyze(t, pcm(cat(tone(200), silence(tc.gap), tone(200))), Config{}, whole)
		if r.Defects != tc.want || r.LongestInternalGap != time.Duration(tc.gap)*time.Millisecond {
			t.Errorf("gap of %d ms: defects %q, longest %v; want %q", tc.gap, r.Defects, r.LongestInternalGap, tc.want)
		}
	}
}

// TestAllSilent: digital silence and a noise floor below the gate are all
// silent, a defect; no audio at all is not (that is a missing response,
// not a silent one).
func TestAllSilent(t *testing.T) {
	r := analyze(t, pcm(make([]float64, rate)), Config{}, whole)
	if !r.AllSilent || r.Defects != AllSilent || r.PeakDBFS != FloorDBFS || r.RMSDBFS != FloorDBFS {
		t.Errorf("digital silence: %+v", r)
	}
	quiet := sine(rate, math.Pow(10, -52.0/20)*math.Sqrt2, 300) // -52 dBFS RMS
	if r := analyze(t, pcm(quiet), Config{}, whole); !r.AllSilent || !r.Defects.Has(AllSilent) {
		t.Errorf("sine at -52 dBFS RMS: %+v", r)
	}
	if r := analyze(t, nil, Config{}, whole); r.AllSilent || r.Defects != 0 {
		t.Errorf("no audio: %+v", r)
	}
}

// clippedByCount counts samples in runs of at least run full-scale samples
// of one channel, by a plain scan of the decoded samples.
func clippedByCount(x []float64, run int) int {
	n, length := 0, 0
	for i := 0; i <= len(x); i++ {
		if i < len(x) && math.Abs(max(-32768, min(32767, math.Round(x[i]*32768)))) >= 32767 {
			length++
			continue
		}
		if length >= run {
			n += length
		}
		length = 0
	}
	return n
}

// TestClipping: a sine driven to twice full scale is flattened into runs
// at full scale; a sine whose peaks just touch full scale is not clipped.
func TestClipping(t *testing.T) {
	hot := sine(rate, 2, 100)
	want := float64(clippedByCount(hot, DefaultClipRun)) / float64(len(hot))
	r := analyze(t, pcm(hot), Config{}, func(int) int { return 7 })
	if r.ClippedShare != want || want < 0.3 || !r.Defects.Has(Clipped) || r.PeakDBFS != 0 {
		t.Errorf("overdriven sine: clipped share %v (want %v), defects %q, peak %v", r.ClippedShare, want, r.Defects, r.PeakDBFS)
	}
	// Runs of exactly ClipRun samples count; one shorter do not.
	runs := []float64{1, 1, 1, 0, -1, -1, 0, 0.5}
	if r := analyze(t, pcm(runs), Config{}, whole); r.ClippedShare != 3.0/8 {
		t.Errorf("runs of 3 and 2 full-scale samples in 8: clipped share %v, want 3/8", r.ClippedShare)
	}
	touching := sine(rate, 1, 250) // peaks at 32767 for one sample each
	if r := analyze(t, pcm(touching), Config{}, whole); r.ClippedShare != 0 || r.Defects != 0 {
		t.Errorf("sine touching full scale: clipped share %v, defects %q", r.ClippedShare, r.Defects)
	}
	// A clipped run that ends the stream still counts; its share is just
	// under or over the 1 % limit.
	for _, tc := range []struct {
		frames int
		want   Defects
	}{{240, 0}, {241, Clipped}} {
		x := cat(sine(rate-tc.frames, 0.3, 440), constant(tc.frames, 1))
		r := analyze(t, pcm(x), Config{}, whole)
		if r.ClippedShare != float64(tc.frames)/rate || r.Defects != tc.want {
			t.Errorf("%d clipped frames at the end: share %v, defects %q; want %v, %q", tc.frames, r.ClippedShare, r.Defects, float64(tc.frames)/rate, tc.want)
		}
	}
}

// TestStereo: clip runs are per channel, so a full-scale left channel is
// clipped whatever the right one does; levels are over all samples.
func TestStereo(t *testing.T) {
	left, right := constant(4800, -1), sine(4800, 0.5, 1000)
	r := analyze(t, pcm(left, right), Config{SampleRate: rate, Channels: 2}, func(i int) int { return 3 })
	wantRMS := dbfsOf(math.Sqrt((1 + 0.125) / 2))
	if r.ClippedShare != 0.5 || !near(r.RMSDBFS, wantRMS, 1e-3) || r.Frames != 4800 {
		t.Errorf("stereo: clipped %v (want 0.5), RMS %.4f (want %.4f), %d frames", r.ClippedShare, r.RMSDBFS, wantRMS, r.Frames)
	}
}

// TestAbruptEnd: a tone cut off ends abruptly; the same tone fading out
// over 50 ms or followed by silence does not.
func TestAbruptEnd(t *testing.T) {
	tone := sine(ms(500), 0.3, 440)
	fade := sine(ms(50), 0.3, 440)
	for i := range fade {
		fade[i] *= 1 - float64(i)/float64(len(fade))
	}
	for _, tc := range []struct {
		name string
		x    []float64
		want bool
	}{
		{"cut", tone, true},
		{"cut, partial window", cat(tone, sine(100, 0.3, 440)), true},
		{"faded", cat(tone, fade), false},
		{"silence after", cat(tone, make([]float64, ms(100))), false},
	} {
		if r := analyze(t, pcm(tc.x), Config{}, whole); r.AbruptEnd != tc.want || r.Defects != 0 {
			t.Errorf("%s: abrupt end %v, defects %q; want %v, none", tc.name, r.AbruptEnd, r.Defects, tc.want)
		}
	}
}

func TestDefectsString(t *testing.T) {
	for d, want := range map[Defects]string{0: "", AllSilent: "all_silent", Clipped | InternalGap: "clipped,internal_gap"} {
		if d.String() != want {
			t.Errorf("%d: %q, want %q", d, d.String(), want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{SampleRate: rate, Channels: 1}
	for name, mod := range map[string]func(*Config){
		"rate":       func(c *Config) { c.SampleRate = 0 },
		"channels":   func(c *Config) { c.Channels = 65 },
		"gate":       func(c *Config) { c.GateDBFS = 3 },
		"gate NaN":   func(c *Config) { c.GateDBFS = math.NaN() },
		"abrupt":     func(c *Config) { c.AbruptEndDBFS = -100 },
		"window":     func(c *Config) { c.Window = -time.Millisecond },
		"long":       func(c *Config) { c.Window = time.Hour },
		"clip run":   func(c *Config) { c.ClipRun = -1 },
		"clip share": func(c *Config) { c.MaxClippedShare = 2 },
	} {
		c := ok
		mod(&c)
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", name, err)
		}
	}
}

// TestWriteAllocatesNothing: the per-chunk path and the report allocate
// nothing.
func TestWriteAllocatesNothing(t *testing.T) {
	a, _ := New(Config{SampleRate: rate, Channels: 1})
	chunk := pcm(sine(ms(20), 0.3, 440))[:ms(20)*2-1]
	if n := testing.AllocsPerRun(50, func() { a.Write(chunk); _ = a.Report() }); n != 0 {
		t.Errorf("%v allocations per chunk", n)
	}
}

// TestResetForgets: a reset analyzer reports only the new stream.
func TestResetForgets(t *testing.T) {
	cfg := Config{SampleRate: rate, Channels: 1}
	a, _ := New(cfg)
	a.Write(pcm(cat(sine(ms(100), 1.5, 100), make([]float64, ms(1500)), sine(ms(100), 0.3, 440))))
	if err := a.Reset(cfg); err != nil {
		t.Fatal(err)
	}
	a.Write(pcm(make([]float64, 1000)))
	if r := a.Report(); r.Frames != 1000 || r.Defects != AllSilent || r.ClippedShare != 0 || r.LongestInternalGap != 0 {
		t.Errorf("after reset: %+v", r)
	}
}

// FuzzWrite: any PCM, split anywhere, gives the report of writing it at
// once, with its figures in range; mono PCM (the analyzer's own loop) gives
// the report of the same PCM in both channels of stereo (the general loop).
func FuzzWrite(f *testing.F) {
	f.Add(pcm(cat(sine(600, 2, 440), make([]float64, 300), sine(300, 0.5, 440))), uint16(7), uint8(0))
	f.Add([]byte{0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0, 0x80, 1}, uint16(1), uint8(1))
	f.Add(make([]byte, 1000), uint16(13), uint8(2))
	f.Add([]byte{0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0, 0, 0, 0x80, 0, 0x80, 1, 0}, uint16(3), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, step uint16, ch uint8) {
		channels := 1 + int(ch)%4
		cfg := Config{SampleRate: 8000, Channels: channels, Window: 2 * time.Millisecond, GapThreshold: 4 * time.Millisecond, MaxGap: 8 * time.Millisecond}
		one, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		one.Write(b)
		parts, _ := New(cfg)
		s := 1 + int(step)%97
		for rest := b; len(rest) > 0; {
			n := min(s, len(rest))
			parts.Write(rest[:n])
			rest = rest[n:]
		}
		r1, r2 := one.Report(), parts.Report()
		if r1 != r2 {
			t.Fatalf("whole: %+v\nsplit by %d: %+v", r1, s, r2)
		}
		if want := int64(len(b) / (2 * channels)); r1.Frames != want {
			t.Fatalf("%d frames, want %d", r1.Frames, want)
		}
		if channels == 1 {
			stereo, _ := New(Config{SampleRate: 8000, Channels: 2, Window: cfg.Window, GapThreshold: cfg.GapThreshold, MaxGap: cfg.MaxGap})
			for i := 0; i+1 < len(b); i += 2 {
				stereo.Write([]byte{b[i], b[i+1], b[i], b[i+1]})
			}
			if r3 := stereo.Report(); r3 != r1 {
				t.Fatalf("mono: %+v\nthe same in stereo: %+v", r1, r3)
			}
		}
		if !(r1.ClippedShare >= 0 && r1.ClippedShare <= 1) || r1.PeakDBFS > 0 || r1.RMSDBFS > r1.PeakDBFS || math.Abs(r1.DCOffset) > 1 {
			t.Fatalf("out of range: %+v", r1)
		}
	})
}
