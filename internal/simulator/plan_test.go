package simulator

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/omnibench/omnibench/continuity"
)

func TestAudioFrames(t *testing.T) {
	tm := fastTiming() // 50 ms per character, 0.1 s .. 10 s
	for _, tc := range []struct {
		runes int
		speed float64
		want  int64
	}{
		{25, 1, 30000},    // 1.25 s
		{10, 1, 12000},    // 0.5 s
		{10, 2, 6000},     // 0.5 s at double speed
		{10, 0.25, 48000}, // 0.5 s at quarter speed
		{1, 1, 2400},      // 0.05 s, raised to the 0.1 s minimum
		{0, 1, 2400},      // no text: the minimum
		{1000, 1, 240000}, // 50 s, capped at 10 s
		{math.MaxInt32, 1, 240000},
	} {
		if got := audioFrames(tm, tc.runes, tc.speed, 24000); got != tc.want {
			t.Errorf("audioFrames(%d runes, speed %v) = %d, want %d", tc.runes, tc.speed, got, tc.want)
		}
	}
}

func TestPlanChunks(t *testing.T) {
	tm := fastTiming()
	p := newPlan(requestRNG(1, 2, 0), tm, Faults{}, planInput{words: 5, textRunes: 25, speed: 1, audio: true, sampleRate: 24000})
	want := append(slices.Repeat([]int{2400}, 12), 1200)
	if !slices.Equal(p.chunkFrames, want) || p.totalFrames != 30000 {
		t.Errorf("chunks %v (total %d), want 12 x 2400 + 1200", p.chunkFrames, p.totalFrames)
	}
	// With jitter, sizes vary within +-J of nominal but always sum to the total.
	tm.Jitter = 0.3
	p = newPlan(requestRNG(1, 2, 0), tm, Faults{}, planInput{textRunes: 25, speed: 1, audio: true, sampleRate: 24000})
	sum := 0
	for i, c := range p.chunkFrames {
		sum += c
		if i < len(p.chunkFrames)-1 && (c < 1680 || c > 3120) {
			t.Errorf("chunk %d: %d frames outside 2400 +- 30%%", i, c)
		}
	}
	if int64(sum) != p.totalFrames || sum != 30000 {
		t.Errorf("jittered chunks sum to %d (total %d), want 30000", sum, p.totalFrames)
	}
	// Oversized: chunk 1 carries 300 KiB of base64 = 230400 bytes = 115200 frames.
	p = newPlan(requestRNG(1, 2, 0), fastTiming(), Faults{Oversized: 1, OversizedBytes: 300 * 1024},
		planInput{textRunes: 25, speed: 1, audio: true, sampleRate: 24000})
	if p.chunkFrames[1] != 115200 || p.totalFrames != 30000-2400+115200 {
		t.Errorf("oversized chunk %d frames (total %d), want 115200", p.chunkFrames[1], p.totalFrames)
	}
	// No audio requested, or the empty-audio fault: no chunks.
	for _, tc := range []struct {
		audio bool
		f     Faults
	}{{false, Faults{}}, {true, Faults{EmptyAudio: 1}}} {
		p = newPlan(requestRNG(1, 2, 0), fastTiming(), tc.f, planInput{textRunes: 25, speed: 1, audio: tc.audio, sampleRate: 24000})
		if len(p.chunkFrames) != 0 || p.totalFrames != 0 {
			t.Errorf("audio %v faults %+v: %d chunks", tc.audio, tc.f, len(p.chunkFrames))
		}
	}
}

func TestPlanDeterminism(t *testing.T) {
	tm := DefaultTiming()
	tm.StallProb = 0.2
	in := planInput{words: 8, textRunes: 60, speed: 1, audio: true, sampleRate: 24000}
	key := contentKey("chat", "some prompt")
	a := newPlan(requestRNG(7, key, 3), tm, Faults{}, in)
	b := newPlan(requestRNG(7, key, 3), tm, Faults{}, in)
	if !slices.Equal(a.chunkFrames, b.chunkFrames) || !slices.Equal(a.chunkMul, b.chunkMul) ||
		!slices.Equal(a.chunkStall, b.chunkStall) || !slices.Equal(a.wordMul, b.wordMul) || a.ttfaMul != b.ttfaMul {
		t.Error("same seed, key and occurrence gave different plans")
	}
	for _, other := range []*plan{
		newPlan(requestRNG(8, key, 3), tm, Faults{}, in),
		newPlan(requestRNG(7, key, 4), tm, Faults{}, in),
		newPlan(requestRNG(7, contentKey("speech", "some prompt"), 3), tm, Faults{}, in),
	} {
		if slices.Equal(a.chunkFrames, other.chunkFrames) {
			t.Error("a different seed, occurrence or endpoint gave the same chunk sizes")
		}
	}
	// Faults are drawn first, so fault rates do not move timing draws.
	c := newPlan(requestRNG(7, key, 3), tm, Faults{Disconnect: 1, Stall: 0.5, MalformedBase64: 0.5}, in)
	if !slices.Equal(a.chunkFrames, c.chunkFrames) || !slices.Equal(a.chunkMul, c.chunkMul) {
		t.Error("fault rates changed the timing draws")
	}
}

func TestFaultRates(t *testing.T) {
	f := Faults{HTTP500: 0.1, Disconnect: 0.3, EmptyAudio: 1, Oversized: 0}
	n500, nDisc, nEmpty, nBig := 0, 0, 0, 0
	const n = 2000
	for i := range uint64(n) {
		p := newPlan(requestRNG(42, 1, i), fastTiming(), f, planInput{textRunes: 10, audio: true, sampleRate: 24000})
		if p.faults.http500 {
			n500++
		}
		if p.faults.disconnect {
			nDisc++
		}
		if p.faults.emptyAudio {
			nEmpty++
		}
		if p.faults.oversized {
			nBig++
		}
	}
	// Binomial bounds at about 5 sigma (deterministic under the seed anyway).
	if n500 < 130 || n500 > 270 || nDisc < 500 || nDisc > 700 || nEmpty != n || nBig != 0 {
		t.Errorf("fault counts of %d: 500 %d (want ~200), disconnect %d (~600), empty %d (%d), oversized %d (0)",
			n, n500, nDisc, nEmpty, n, nBig)
	}
}

func TestOccurrences(t *testing.T) {
	var o occurrences
	if o.next(1) != 0 || o.next(1) != 1 || o.next(2) != 0 || o.next(1) != 2 {
		t.Error("occurrence counts are not 0, 1, 2 per key")
	}
}

func TestTimingFormulas(t *testing.T) {
	tm := Timing{TTFT: 40 * time.Millisecond, WordInterval: 15 * time.Millisecond, TTFA: 150 * time.Millisecond,
		ChunkAudio: 320 * time.Millisecond, RTF: 0.3, Stall: 500 * time.Millisecond}
	p := &plan{ttftMul: 1.1, ttfaMul: 0.9, wordMul: []float64{0, 1.2},
		chunkFrames: []int{7680, 7680}, chunkMul: []float64{1, 1.05}, chunkStall: []bool{false, true}}
	// Hand-computed: 0.32 s * 0.3 = 96 ms; * 1.05 * 2 = 201.6 ms, + 500 ms stall.
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		{"chunk 0", p.chunkGen(tm, 24000, 0, 1), 96 * time.Millisecond},
		{"chunk 1 slowed 2x with stall", p.chunkGen(tm, 24000, 1, 2), 701600 * time.Microsecond},
		{"first audio", p.firstAudio(tm, 1), 135 * time.Millisecond},
		{"first audio slowed 3x", p.firstAudio(tm, 3), 405 * time.Millisecond},
		{"first text", p.firstText(tm, 1), 44 * time.Millisecond},
		{"word gap", p.wordGap(tm, 1, 1), 18 * time.Millisecond},
	} {
		if d := tc.got - tc.want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, tc := range []struct {
		active   int64
		capacity int
		want     float64
	}{{5, 0, 1}, {5, 10, 1}, {10, 10, 1}, {15, 10, 1.5}, {40, 10, 4}} {
		if got := slowdown(tc.active, tc.capacity); got != tc.want {
			t.Errorf("slowdown(%d, %d) = %v, want %v", tc.active, tc.capacity, got, tc.want)
		}
	}
	if got := codecTokens(30000, 24000); got != 16 { // ceil(1.25 * 12.5)
		t.Errorf("codecTokens = %d, want 16", got)
	}
	if got := promptTokens(25); got != 7 {
		t.Errorf("promptTokens(25) = %d, want 7", got)
	}
}

// TestCapacityKnee plays the model's chunk schedule through the reference
// continuity simulation: continuous up to Capacity/RTF streams, broken above,
// with the underrun the package documentation predicts.
func TestCapacityKnee(t *testing.T) {
	tm := DefaultTiming()
	tm.Jitter = 0
	cfg := Config{Capacity: 10, Timing: tm}
	if k := cfg.KneeStreams(); math.Abs(k-100.0/3) > 1e-9 {
		t.Fatalf("knee %v, want 33.33", k)
	}
	// 3.2 s of audio: 10 chunks of 0.32 s.
	p := newPlan(requestRNG(1, 1, 0), tm, Faults{}, planInput{textRunes: 3200 / 60, audio: true, sampleRate: 24000})
	p.chunkFrames = slices.Repeat([]int{7680}, 10)
	p.chunkMul = slices.Repeat([]float64{1}, 10)
	p.chunkStall = make([]bool, 10)
	schedule := func(active int64) continuity.Result {
		s := slowdown(active, cfg.Capacity)
		at := p.firstAudio(tm, s)
		in := continuity.Input{SampleRate: 24000}
		for i := range p.chunkFrames {
			if i > 0 {
				at += p.chunkGen(tm, 24000, i, s)
			}
			in.ArrivalsS = append(in.ArrivalsS, at.Seconds())
			in.Bytes = append(in.Bytes, p.chunkFrames[i]*2)
		}
		return continuity.Simulate(in, continuity.Reference)
	}
	for _, active := range []int64{1, 10, 33} {
		if r := schedule(active); r.MaxUnderrunS > 1e-9 {
			t.Errorf("%d streams (below the knee): underrun %v", active, r.MaxUnderrunS)
		}
	}
	// 40 streams: slowdown 4, RTF 1.2; underrun (10-1) * 0.32 * (1.2-1) = 0.576 s.
	if r := schedule(40); math.Abs(r.MaxUnderrunS-0.576) > 1e-6 || r.Continuous(0.1) {
		t.Errorf("40 streams: underrun %v, want 0.576 and not continuous", r.MaxUnderrunS)
	}
	// 34 streams, just above the knee: (9) * 0.32 * (1.02-1) = 0.0576 s, a gap but within 100 ms.
	if r := schedule(34); math.Abs(r.MaxUnderrunS-0.0576) > 1e-6 || r.UnderrunEvents != 9 {
		t.Errorf("34 streams: underrun %v with %d events, want 0.0576 with 9", r.MaxUnderrunS, r.UnderrunEvents)
	}
}
