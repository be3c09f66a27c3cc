package continuity

import (
	"math"
	"math/rand/v2"
	"testing"
)

const playerTol = 1e-12

func samePlayer(got, want PlayerResult) bool {
	near := func(a, b float64) bool { return math.Abs(a-b) <= playerTol }
	return got.Stalls == want.Stalls && near(got.StartupDelayS, want.StartupDelayS) &&
		near(got.TotalStallS, want.TotalStallS) && near(got.LongestStallS, want.LongestStallS)
}

// TestPlayersHandComputed checks both players against values worked out by
// hand. All cases are 24 kHz mono s16: bps 48000, 4800 bytes = 0.1 s.
func TestPlayersHandComputed(t *testing.T) {
	const h = 1.0 / 48000 // time of one byte; a frame is 2 bytes
	doc := Input{ArrivalsS: []float64{0, 0.1, 0.5, 0.55}, Bytes: []int{9600, 4800, 9600, 4800}, SampleRate: 24000}
	three := Input{ArrivalsS: []float64{1.0, 1.3, 1.45, 2.0}, Bytes: repeat(4, 4800), SampleRate: 24000}
	cases := []struct {
		name string
		in   Input
		cfg  *PrerollConfig // nil: StallResume
		want PlayerResult
	}{
		// The package doc example. Start 0 with 0.2 s; at 0.1 +0.1 s -> audio
		// until 0.3; the chunk at 0.5 is 0.2 s late (24000-14400 = 9600 bytes).
		// Resume at 0.5 with 0.2 s, so 0.55 is in time.
		{"doc stall-resume", doc, nil, PlayerResult{0, 1, 0.2, 0.2}},
		// 0.3 s received at 0.1 >= 0.25: start at 0.1 with audio until 0.4;
		// chunk at 0.5: (0.5-0.1)*48000 - 14400 = 4800 bytes = 0.1 s stall.
		{"doc preroll 250ms", doc, &PrerollConfig{BufferS: 0.25}, PlayerResult{0.1, 1, 0.1, 0.1}},
		// Max wait 0.05 < 0.1: start at 0.05 with 0.2 s (chunk 0); +0.1 s at
		// 0.1 -> audio until 0.35; chunk at 0.5: 0.45*48000-14400 = 7200 = 0.15 s.
		{"doc preroll max wait", doc, &PrerollConfig{BufferS: 0.25, MaxWaitS: 0.05}, PlayerResult{0.05, 1, 0.15, 0.15}},
		// Only 0.6 s ever arrives: start at the last arrival, nothing to wait for.
		{"doc preroll never full", doc, &PrerollConfig{BufferS: 1}, PlayerResult{0.55, 0, 0, 0}},
		// Start at 0.3 with 0.3 s -> until 0.6; the 0.5 chunk is in time;
		// 0.2 s + 0.3 s = max_underrun - delay < 0: no stall.
		{"doc preroll wait 300ms", doc, &PrerollConfig{BufferS: 1, MaxWaitS: 0.3}, PlayerResult{0.3, 0, 0, 0}},
		// Relative to t0 = 1.0: 0.1 s chunks at 0, 0.3, 0.45, 1.0.
		// 0.3: 14400-4800 = 9600 -> 0.2 stall, resume at 0.3 with 0.1 s;
		// 0.45: 0.15*48000-4800 = 2400 -> 0.05, resume at 0.45 with 0.1 s;
		// 1.0: 0.55*48000-4800 = 21600 -> 0.45. Total 0.7 = reference max.
		{"three stalls", three, nil, PlayerResult{0, 3, 0.7, 0.45}},
		// 0.2 s buffered at 0.3: start 0.3 with 0.2 s -> until 0.5, 0.45 in
		// time (+0.1 -> 0.6); 1.0: 0.7*48000-14400 = 19200 -> 0.4 = 0.7 - 0.3.
		{"three preroll 150ms", three, &PrerollConfig{BufferS: 0.15}, PlayerResult{0.3, 1, 0.4, 0.4}},
		// Leading zero-byte chunk is ignored: t0 = 0.2; the chunk at 0.5 is
		// 0.3*48000-4800 = 9600 bytes = 0.2 s late.
		{"leading empty chunk", Input{ArrivalsS: []float64{0, 0.2, 0.5}, Bytes: []int{0, 4800, 4800}, SampleRate: 24000}, nil, PlayerResult{0, 1, 0.2, 0.2}},
		// One byte (half a frame) late: not a stall.
		{"half frame late", Input{ArrivalsS: []float64{0, 0.1 + h}, Bytes: []int{4800, 4800}, SampleRate: 24000}, nil, PlayerResult{}},
		// One frame (2 bytes) late: a stall of 1/24000 s.
		{"one frame late", Input{ArrivalsS: []float64{0, 0.1 + 2*h}, Bytes: []int{4800, 4800}, SampleRate: 24000}, nil, PlayerResult{0, 1, 2 * h, 2 * h}},
		// Each chunk one byte later than the last: 1 byte at 0.1+h (ignored,
		// no resume), 2 bytes accumulated at 0.2+2h -> one stall of 2h; after
		// resuming there, 0.3+3h is again only 1 byte late.
		{"accumulated sub-frame lateness", Input{ArrivalsS: []float64{0, 0.1 + h, 0.2 + 2*h, 0.3 + 3*h}, Bytes: repeat(4, 4800), SampleRate: 24000}, nil, PlayerResult{0, 1, 2 * h, 2 * h}},
		// Rounding residue of large absolute timestamps is not a stall.
		{"absolute timestamps residue", Input{ArrivalsS: drift12(), Bytes: repeat(20, 4800), SampleRate: 24000}, nil, PlayerResult{}},
		// BufferS is audio received, not a start-up delay: 1 s arrives at 0
		// and 1 s at 1.5. Reference max underrun is 72000-48000 = 0.5 s, yet
		// a 0.5 s buffer starts at once and stalls 0.5 s.
		{"buffer is audio not delay", Input{ArrivalsS: []float64{0, 1.5}, Bytes: []int{48000, 48000}, SampleRate: 24000}, &PrerollConfig{BufferS: 0.5}, PlayerResult{0, 1, 0.5, 0.5}},
		{"empty", Input{SampleRate: 24000}, nil, PlayerResult{}},
		{"only empty chunks", Input{ArrivalsS: []float64{0, 1}, Bytes: []int{0, 0}, SampleRate: 24000}, &PrerollConfig{BufferS: 0.2}, PlayerResult{}},
		{"length mismatch", Input{ArrivalsS: []float64{0, 1}, Bytes: []int{4800}, SampleRate: 24000}, nil, PlayerResult{}},
		{"no rate", Input{ArrivalsS: []float64{0, 1}, Bytes: []int{4800, 4800}}, nil, PlayerResult{}},
	}
	for _, c := range cases {
		var got PlayerResult
		if c.cfg == nil {
			got = StallResume(c.in)
		} else {
			got = Preroll(c.in, *c.cfg)
		}
		if !samePlayer(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// randomInput is a frame-aligned chunk timeline with random gaps, sizes,
// formats and time origin.
func randomInput(r *rand.Rand) Input {
	rates := [...]int{8000, 16000, 24000, 44100, 48000}
	widths := [...]int{0, 1, 2, 4}
	in := Input{SampleRate: rates[r.IntN(len(rates))], SampleWidth: widths[r.IntN(len(widths))], Channels: 1 + r.IntN(2)}
	frame := in.frameBytes()
	n := 1 + r.IntN(40)
	t := 0.0
	if r.IntN(2) == 0 {
		t = 1e5 * r.Float64() // absolute clock origin
	}
	for range n {
		t += r.ExpFloat64() * 0.08
		in.ArrivalsS = append(in.ArrivalsS, t)
		in.Bytes = append(in.Bytes, frame*(1+r.IntN(4000)))
	}
	return in
}

// TestPlayerProperties checks relations that hold for any input. With M the
// reference max underrun (the never-pausing player's worst lag) and a frame
// f = 1/sample_rate seconds:
//   - stall-and-resume's total stall is M up to one frame: each stall
//     resets the lag, so the sum of stalls is the largest lag, except for a
//     last sub-frame remainder that is deliberately not counted;
//   - a pre-roll player that starts D after the first arrival stalls for
//     max(0, M-D) in total, up to one frame;
//   - so waiting at most M (MaxWaitS = M, huge BufferS) never stalls;
//   - stalls are a subset of the default-mode underrun events, the longest
//     stall is at most the total, and playback never starts after the last
//     arrival or after MaxWaitS.
func TestPlayerProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const eps = 1e-9
	for iter := range 2000 {
		in := randomInput(r)
		f := 1 / float64(in.SampleRate)
		m := Simulate(in, Reference).MaxUnderrunS
		last := in.ArrivalsS[len(in.ArrivalsS)-1] - in.ArrivalsS[0]

		sr := StallResume(in)
		if sr.TotalStallS > m+eps || sr.TotalStallS < m-f-eps {
			t.Fatalf("iter %d: stall-resume total %g, reference max %g (frame %g): %+v", iter, sr.TotalStallS, m, f, in)
		}
		if ev := Simulate(in, Default).UnderrunEvents; sr.Stalls > ev {
			t.Fatalf("iter %d: %d stalls > %d default underrun events", iter, sr.Stalls, ev)
		}
		if sr.StartupDelayS != 0 || sr.LongestStallS > sr.TotalStallS+eps || (sr.Stalls == 0) != (sr.TotalStallS == 0) {
			t.Fatalf("iter %d: inconsistent %+v", iter, sr)
		}
		if zero := Preroll(in, PrerollConfig{}); zero != sr {
			t.Fatalf("iter %d: Preroll{} %+v != StallResume %+v", iter, zero, sr)
		}

		cfg := PrerollConfig{BufferS: r.Float64() * 1.5}
		if r.IntN(2) == 0 {
			cfg.MaxWaitS = r.Float64()
		}
		pr := Preroll(in, cfg)
		want := math.Max(0, m-pr.StartupDelayS)
		if pr.TotalStallS > want+eps || pr.TotalStallS < want-f-eps {
			t.Fatalf("iter %d: preroll %+v total %g, want max(0, %g-%g) = %g within a frame", iter, cfg, pr.TotalStallS, m, pr.StartupDelayS, want)
		}
		if pr.TotalStallS > sr.TotalStallS+eps || pr.StartupDelayS > last+eps || (cfg.MaxWaitS > 0 && pr.StartupDelayS > cfg.MaxWaitS) {
			t.Fatalf("iter %d: preroll %+v gave %+v (stall-resume %+v, last arrival %g)", iter, cfg, pr, sr, last)
		}
		// A bigger buffer never starts earlier and never stalls longer.
		bigger := Preroll(in, PrerollConfig{BufferS: cfg.BufferS + 0.5, MaxWaitS: cfg.MaxWaitS})
		if bigger.StartupDelayS < pr.StartupDelayS || bigger.TotalStallS > pr.TotalStallS+eps {
			t.Fatalf("iter %d: bigger buffer %+v worse than %+v", iter, bigger, pr)
		}

		if waitM := Preroll(in, PrerollConfig{BufferS: math.Inf(1), MaxWaitS: m}); waitM.Stalls != 0 {
			t.Fatalf("iter %d: waiting the reference max %g still stalls: %+v", iter, m, waitM)
		}
	}
}

func BenchmarkPreroll(b *testing.B) {
	in := Input{SampleRate: 24000, ArrivalsS: make([]float64, 300), Bytes: repeat(300, 2880)}
	for i := range in.ArrivalsS {
		in.ArrivalsS[i] = 0.2 + 0.06*float64(i) + 0.01*float64(i%7)
	}
	for b.Loop() {
		_ = Preroll(in, PrerollConfig{BufferS: 0.2})
	}
}

// TestPrerollTimelineHandComputed checks the playback curve's corners
// against values worked out by hand (24 kHz mono s16, 4800 bytes = 0.1 s),
// and that its PlayerResult is Preroll's.
func TestPrerollTimelineHandComputed(t *testing.T) {
	const h = 1.0 / 48000
	doc := Input{ArrivalsS: []float64{0, 0.1, 0.5, 0.55}, Bytes: []int{9600, 4800, 9600, 4800}, SampleRate: 24000}
	three := Input{ArrivalsS: []float64{1.0, 1.3, 1.45, 2.0}, Bytes: repeat(4, 4800), SampleRate: 24000}
	cases := []struct {
		name       string
		in         Input
		cfg        PrerollConfig
		times, pos []float64
	}{
		// The package doc example: 0.3 s received by 0.1 plays from 0 to
		// 0.3, flat until the chunk at 0.5, then the other 0.3 s to 0.8.
		{"doc stall-resume", doc, PrerollConfig{}, []float64{0, 0.3, 0.5, 0.8}, []float64{0, 0.3, 0.3, 0.6}},
		// Starts at 0.1 with 0.3 s: dry at 0.4, resumes at 0.5.
		{"doc preroll 250ms", doc, PrerollConfig{BufferS: 0.25}, []float64{0.1, 0.4, 0.5, 0.8}, []float64{0, 0.3, 0.3, 0.6}},
		// Starts at 0.05; the chunk at 0.1 extends the audio to 0.35.
		{"doc preroll max wait", doc, PrerollConfig{BufferS: 0.25, MaxWaitS: 0.05}, []float64{0.05, 0.35, 0.5, 0.8}, []float64{0, 0.3, 0.3, 0.6}},
		// Starts at the last arrival with everything: one straight line.
		{"doc preroll never full", doc, PrerollConfig{BufferS: 1}, []float64{0.55, 1.15}, []float64{0, 0.6}},
		// A fixed start-up of 0.3 s is in time for every later chunk.
		{"doc fixed 300ms", doc, FixedStartup(0.3), []float64{0.3, 0.9}, []float64{0, 0.6}},
		// A fixed start-up past the last arrival starts at the last arrival.
		{"doc fixed 2s", doc, FixedStartup(2), []float64{0.55, 1.15}, []float64{0, 0.6}},
		// Absolute clock t0 = 1.0: each 0.1 s chunk is played out before the
		// next one comes, so three stalls (1.1-1.3, 1.4-1.45, 1.55-2.0).
		{"three stalls", three, PrerollConfig{}, []float64{1.0, 1.1, 1.3, 1.4, 1.45, 1.55, 2.0, 2.1}, []float64{0, 0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4}},
		// The leading zero-byte chunk is ignored: playback starts at 0.2.
		{"leading empty chunk", Input{ArrivalsS: []float64{0, 0.2, 0.5}, Bytes: []int{0, 4800, 4800}, SampleRate: 24000}, PrerollConfig{},
			[]float64{0.2, 0.3, 0.5, 0.6}, []float64{0, 0.1, 0.1, 0.2}},
		// Half a frame late is not a stall: the line runs straight through.
		{"half frame late", Input{ArrivalsS: []float64{0, 0.1 + h}, Bytes: []int{4800, 4800}, SampleRate: 24000}, PrerollConfig{}, []float64{0, 0.2}, []float64{0, 0.2}},
		{"empty", Input{SampleRate: 24000}, PrerollConfig{}, nil, nil},
		{"only empty chunks", Input{ArrivalsS: []float64{0, 1}, Bytes: []int{0, 0}, SampleRate: 24000}, PrerollConfig{BufferS: 0.2}, nil, nil},
		{"no rate", Input{ArrivalsS: []float64{0, 1}, Bytes: []int{4800, 4800}}, PrerollConfig{}, nil, nil},
	}
	near := func(got, want []float64) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				return false
			}
		}
		return true
	}
	for _, c := range cases {
		res, tl := PrerollTimeline(c.in, c.cfg)
		if !near(tl.Times, c.times) || !near(tl.Positions, c.pos) {
			t.Errorf("%s: timeline %v / %v, want %v / %v", c.name, tl.Times, tl.Positions, c.times, c.pos)
		}
		if want := Preroll(c.in, c.cfg); res != want {
			t.Errorf("%s: result %+v, Preroll %+v", c.name, res, want)
		}
	}
}

// TestFixedStartup checks that a Preroll player is recreated exactly from
// its start-up delay, and that FixedStartup of 0 (or less) is StallResume.
func TestFixedStartup(t *testing.T) {
	if FixedStartup(0) != (PrerollConfig{}) || FixedStartup(-1) != (PrerollConfig{}) || FixedStartup(math.NaN()) != (PrerollConfig{}) {
		t.Error("FixedStartup of a non-positive delay should be the zero config")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 2000 {
		in := randomInput(r)
		cfg := PrerollConfig{BufferS: r.Float64() * 1.5}
		if r.IntN(2) == 0 {
			cfg.MaxWaitS = r.Float64()
		}
		want := Preroll(in, cfg)
		if got := Preroll(in, FixedStartup(want.StartupDelayS)); got != want {
			t.Fatalf("iter %d: %+v from start-up %g, Preroll %+v gave %+v", iter, got, want.StartupDelayS, cfg, want)
		}
	}
}

// TestPrerollTimelineShape checks, for random inputs, that the timeline is
// the curve of its PlayerResult: it starts StartupDelayS after the first
// arrival, alternates playing (slope 1) and stalled (flat) segments with one
// flat segment per stall whose lengths add up to TotalStallS, never plays
// more than a frame of audio that has not arrived, and ends having played
// all of it.
func TestPrerollTimelineShape(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const eps = 1e-8 // absolute clocks up to 1e5 s lose digits
	for iter := range 2000 {
		in := randomInput(r)
		if r.IntN(4) == 0 {
			in.Bytes[r.IntN(len(in.Bytes))] = 0
		}
		cfg := PrerollConfig{}
		if r.IntN(2) == 0 {
			cfg = PrerollConfig{BufferS: r.Float64(), MaxWaitS: r.Float64()}
		}
		res, tl := PrerollTimeline(in, cfg)
		if want := Preroll(in, cfg); res != want {
			t.Fatalf("iter %d: result %+v, Preroll %+v", iter, res, want)
		}
		if in.DurationS() == 0 {
			if len(tl.Times) != 0 || len(tl.Positions) != 0 {
				t.Fatalf("iter %d: a timeline without audio: %+v", iter, tl)
			}
			continue
		}
		n := len(tl.Times)
		if n != len(tl.Positions) || n != 2+2*res.Stalls {
			t.Fatalf("iter %d: %d times, %d positions for %d stalls", iter, n, len(tl.Positions), res.Stalls)
		}
		t0 := in.ArrivalsS[0]
		for i, b := range in.Bytes {
			if b > 0 {
				t0 = in.ArrivalsS[i]
				break
			}
		}
		if math.Abs(tl.Times[0]-(t0+res.StartupDelayS)) > eps || tl.Positions[0] != 0 {
			t.Fatalf("iter %d: starts at %g/%g, want %g/0", iter, tl.Times[0], tl.Positions[0], t0+res.StartupDelayS)
		}
		if math.Abs(tl.Positions[n-1]-in.DurationS()) > eps {
			t.Fatalf("iter %d: ends at %g s of audio, want %g", iter, tl.Positions[n-1], in.DurationS())
		}
		stalled := 0.0
		for i := 1; i < n; i++ {
			dt, dp := tl.Times[i]-tl.Times[i-1], tl.Positions[i]-tl.Positions[i-1]
			if i%2 == 0 { // a stall: flat
				if dp != 0 || dt <= 0 {
					t.Fatalf("iter %d: stall segment %d has dt %g, dp %g", iter, i, dt, dp)
				}
				stalled += dt
			} else if math.Abs(dt-dp) > eps || dp < 0 { // playing: slope 1
				t.Fatalf("iter %d: playing segment %d has dt %g, dp %g", iter, i, dt, dp)
			}
		}
		if math.Abs(stalled-res.TotalStallS) > eps {
			t.Fatalf("iter %d: flat segments last %g s, TotalStallS %g", iter, stalled, res.TotalStallS)
		}
		frame := 1 / float64(in.SampleRate)
		for i, tt := range tl.Times {
			received := 0
			for j, a := range in.ArrivalsS {
				if a <= tt+eps {
					received += in.Bytes[j]
				}
			}
			if have := float64(received) / float64(in.bytesPerSecond()); tl.Positions[i] > have+frame+eps {
				t.Fatalf("iter %d: position %g at %g beyond the %g s received", iter, tl.Positions[i], tt, have)
			}
		}
	}
}
