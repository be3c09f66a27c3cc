package continuity

import (
	"math"
	"testing"
)

// drift12 is reference case 12: 20 chunks of 0.1 s every 0.1 s at an absolute
// origin of 123456 s, built the way the reference builds it
// (123456.0 + 0.1*i), so the arrivals carry the same rounding residue.
func drift12() []float64 {
	a := make([]float64, 20)
	for i := range a {
		a[i] = 123456.0 + 0.1*float64(i)
	}
	return a
}

func repeat(n, v int) []int {
	b := make([]int, n)
	for i := range b {
		b[i] = v
	}
	return b
}

// TestSimulateReferenceCases runs the twelve cases of
// docs/reference/continuity.md, section 3 (rate 24000, bps 48000) in both
// modes.
func TestSimulateReferenceCases(t *testing.T) {
	type want struct {
		max    float64
		events int
	}
	cases := []struct {
		name      string
		arrivals  []float64
		bytes     []int
		threshold []float64 // thresholds checked; continuous[i] is the verdict
		cont      []bool
		ref, def  want
		tol       float64 // |got-want| allowed on max (case 12 only)
	}{
		{"empty", nil, nil, []float64{0.1}, []bool{true}, want{0, 0}, want{0, 0}, 0},
		{"single chunk", []float64{0.05}, []int{48000}, []float64{0.1}, []bool{true}, want{0, 0}, want{0, 0}, 0},
		{"steady 50ms", []float64{0, 0.05, 0.10, 0.15}, repeat(4, 4800), []float64{0.1}, []bool{true}, want{0, 0}, want{0, 0}, 0},
		// (0.5*48000 - 4800)/48000 = 19200/48000 = 0.4
		{"one late chunk", []float64{0, 0.5}, []int{4800, 4800}, []float64{0.1}, []bool{false}, want{0.4, 1}, want{0.4, 1}, 0},
		// i=1: 14400-4800 = 9600 -> 0.2; i=2: 21600-9600 = 12000 -> 0.25 (cumulative)
		{"cumulative", []float64{0, 0.3, 0.45}, repeat(3, 4800), []float64{0.1}, []bool{false}, want{0.25, 2}, want{0.25, 2}, 0},
		// 9600-4800 = 4800 -> 0.1, equal to the threshold: continuous
		{"boundary inclusive", []float64{0, 0.2}, []int{4800, 4800}, []float64{0.1}, []bool{true}, want{0.1, 1}, want{0.1, 1}, 0},
		{"length mismatch", []float64{0, 0.1}, []int{100}, []float64{0.1}, []bool{true}, want{0, 0}, want{0, 0}, 0},
		// 14400-4800 = 9600 -> 0.2
		{"two thresholds", []float64{0, 0.3}, []int{4800, 4800}, []float64{0.1, 0.5}, []bool{false, true}, want{0.2, 1}, want{0.2, 1}, 0},
		// 0.5 s chunks every 0.5 s: deficit 0 at each, not > 0
		{"late origin real time", []float64{0.5, 1.0, 1.5}, repeat(3, 24000), []float64{0.1}, []bool{true}, want{0, 0}, want{0, 0}, 0},
		// 96000-24000 = 72000 -> 1.5
		{"long gap", []float64{0, 2.0}, []int{24000, 24000}, []float64{0.1}, []bool{false}, want{1.5, 1}, want{1.5, 1}, 0},
		// i=1 (0 bytes): 2400-4800 < 0; i=2: 14400-4800 = 9600 -> 0.2
		{"zero-byte chunk", []float64{0, 0.05, 0.3}, []int{4800, 0, 4800}, []float64{0.1}, []bool{false}, want{0.2, 1}, want{0.2, 1}, 0},
		// Rounding residue of 123456+0.1i: the reference sees 8 deficits of a
		// few 1e-7 bytes, max about 5.8e-12 s. Default ignores sub-frame
		// deficits.
		{"absolute timestamps residue", drift12(), repeat(20, 4800), []float64{0.1}, []bool{true}, want{5.8e-12, 8}, want{0, 0}, 0.05e-12},
	}
	for _, c := range cases {
		in := Input{ArrivalsS: c.arrivals, Bytes: c.bytes, SampleRate: 24000}
		for _, m := range []struct {
			mode Mode
			want want
		}{{Reference, c.ref}, {Default, c.def}} {
			got := Simulate(in, m.mode)
			if got.UnderrunEvents != m.want.events || math.Abs(got.MaxUnderrunS-m.want.max) > c.tol+1e-15 {
				t.Errorf("%s/%s: got max %.17g events %d, want max %g events %d", c.name, m.mode, got.MaxUnderrunS, got.UnderrunEvents, m.want.max, m.want.events)
			}
			for i, th := range c.threshold {
				if got.Continuous(th) != c.cont[i] {
					t.Errorf("%s/%s: Continuous(%g) = %v, want %v", c.name, m.mode, th, got.Continuous(th), c.cont[i])
				}
			}
		}
	}
}

// TestSimulateReferenceExactValues pins values that must match the
// reference bit for bit, i.e. computed in its floating-point order.
func TestSimulateReferenceExactValues(t *testing.T) {
	a := drift12()
	// Independent recomputation of the reference formula, written out.
	var wantMax float64
	wantEvents := 0
	for i := 1; i < len(a); i++ {
		d := (a[i]-a[0])*48000.0 - float64(4800*i)
		if d > 0 {
			wantEvents++
			wantMax = math.Max(wantMax, d/48000.0)
		}
	}
	got := Simulate(Input{ArrivalsS: a, Bytes: repeat(20, 4800), SampleRate: 24000}, Reference)
	if got.MaxUnderrunS != wantMax || got.UnderrunEvents != wantEvents {
		t.Fatalf("got %+v, want max %.17g events %d", got, wantMax, wantEvents)
	}
	// The case "0.1 boundary" must be exactly 0.1 so that <= 0.1 holds.
	got = Simulate(Input{ArrivalsS: []float64{0, 0.2}, Bytes: []int{4800, 4800}, SampleRate: 24000}, Reference)
	if got.MaxUnderrunS != 0.1 {
		t.Fatalf("boundary case max = %.17g, want exactly 0.1", got.MaxUnderrunS)
	}
}

func TestSimulateFormat(t *testing.T) {
	// Stereo 32-bit at 8000 Hz: bps = 8000*4*2 = 64000, frame = 8 bytes.
	// Chunk 0 holds 6400 bytes = 0.1 s; chunk 1 arrives at 0.3 s:
	// deficit 0.3*64000 - 6400 = 12800 bytes = 0.2 s.
	in := Input{ArrivalsS: []float64{0, 0.3}, Bytes: []int{6400, 6400}, SampleRate: 8000, SampleWidth: 4, Channels: 2}
	if got := Simulate(in, Default); got != (Result{MaxUnderrunS: 0.2, UnderrunEvents: 1}) {
		t.Errorf("stereo: got %+v", got)
	}
	// A deficit of 4 bytes is half a frame here: Reference counts it,
	// Default does not. 6400 bytes + 4 bytes late = arrival (6404/64000) s.
	in.ArrivalsS = []float64{0, 6404.0 / 64000}
	if got := Simulate(in, Reference); got.UnderrunEvents != 1 {
		t.Errorf("half-frame reference: got %+v, want 1 event", got)
	}
	if got := Simulate(in, Default); got.UnderrunEvents != 0 {
		t.Errorf("half-frame default: got %+v, want 0 events", got)
	}
	// Exactly one frame (8 bytes) counts in Default.
	in.ArrivalsS = []float64{0, 6408.0 / 64000}
	if got := Simulate(in, Default); got.UnderrunEvents != 1 {
		t.Errorf("one-frame default: got %+v, want 1 event", got)
	}
	// bps <= 0 gives (0, 0).
	for _, bad := range []Input{
		{ArrivalsS: []float64{0, 1}, Bytes: []int{1, 1}, SampleRate: 0},
		{ArrivalsS: []float64{0, 1}, Bytes: []int{1, 1}, SampleRate: -24000},
		{ArrivalsS: []float64{0, 1}, Bytes: []int{1, 1}, SampleRate: 24000, SampleWidth: -2},
	} {
		if got := Simulate(bad, Reference); got != (Result{}) {
			t.Errorf("%+v: got %+v, want zero", bad, got)
		}
	}
}

func TestThresholdLabel(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{{0.1, "100"}, {0.25, "250"}, {1, "1000"}, {0, "0"}, {0.0004, "0"}, {0.0005, "1"}, {0.1004, "100"}, {0.3, "300"}, {0.07, "70"}} {
		if got := ThresholdLabel(c.s); got != c.want {
			t.Errorf("ThresholdLabel(%g) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Mode
		ok   bool
	}{{"default", Default, true}, {"reference", Reference, true}, {" Reference ", Reference, true}, {"", Default, false}, {"ref", Default, false}} {
		got, err := ParseMode(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseMode(%q) = %v, %v", c.in, got, err)
		}
	}
	for _, m := range []Mode{Default, Reference} {
		if back, err := ParseMode(m.String()); err != nil || back != m {
			t.Errorf("round trip %v: %v, %v", m, back, err)
		}
	}
	if s := Mode(7).String(); s != "Mode(7)" {
		t.Errorf("Mode(7).String() = %q", s)
	}
}

// BenchmarkSimulate runs a 300-chunk response (60 ms chunks, some jitter).
func BenchmarkSimulate(b *testing.B) {
	in := Input{SampleRate: 24000, ArrivalsS: make([]float64, 300), Bytes: repeat(300, 2880)}
	for i := range in.ArrivalsS {
		in.ArrivalsS[i] = 0.2 + 0.06*float64(i) + 0.01*float64(i%7)
	}
	for _, mode := range []Mode{Reference, Default} {
		b.Run(mode.String(), func(b *testing.B) {
			for b.Loop() {
				_ = Simulate(in, mode)
			}
		})
	}
	b.Run("stall-resume", func(b *testing.B) {
		for b.Loop() {
			_ = StallResume(in)
		}
	})
}

func TestDurationS(t *testing.T) {
	for _, c := range []struct {
		in   Input
		want float64
	}{
		{Input{Bytes: []int{24000, 24000}, SampleRate: 24000}, 1},                      // 48000 / (24000*2)
		{Input{Bytes: []int{64000}, SampleRate: 8000, SampleWidth: 4, Channels: 2}, 1}, // 64000 / 64000
		{Input{Bytes: []int{4800, 0, 4800}, SampleRate: 48000, SampleWidth: 1}, 0.2},   // 9600 / 48000
		{Input{Bytes: []int{4800}}, 0},
	} {
		if got := c.in.DurationS(); got != c.want {
			t.Errorf("%+v: DurationS = %g, want %g", c.in, got, c.want)
		}
	}
}
