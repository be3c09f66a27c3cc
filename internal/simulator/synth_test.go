package simulator

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func samples(pcm []byte) []float64 {
	out := make([]float64, len(pcm)/2)
	for i := range out {
		out[i] = float64(int16(binary.LittleEndian.Uint16(pcm[2*i:])))
	}
	return out
}

func rms(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

// bestPeriod is the shortest lag in [lo, hi] whose normalised
// autocorrelation is within 0.03 of the best one (multiples of the period
// correlate almost as well, better when the period is not a whole number
// of samples; the shortest is the fundamental).
func bestPeriod(x []float64, lo, hi int) (int, float64) {
	rs := make([]float64, hi+1)
	bestR := -2.0
	for lag := lo; lag <= hi; lag++ {
		var num, e0, e1 float64
		for i := 0; i+lag < len(x); i++ {
			num += x[i] * x[i+lag]
			e0 += x[i] * x[i]
			e1 += x[i+lag] * x[i+lag]
		}
		rs[lag] = num / math.Sqrt(e0*e1)
		bestR = max(bestR, rs[lag])
	}
	for lag := lo; lag <= hi; lag++ {
		if rs[lag] >= bestR-0.03 {
			return lag, rs[lag]
		}
	}
	return 0, bestR
}

func TestSynthChunkingInvariant(t *testing.T) {
	vt := newVoiceTables(24000)
	const total = 30000
	whole := newSynth(vt, prompt25, "Chelsie", total, 0).Append(nil, total)
	if len(whole) != 2*total {
		t.Fatalf("%d bytes, want %d", len(whole), 2*total)
	}
	g := newSynth(vt, prompt25, "Chelsie", total, 0)
	r := rand.New(rand.NewPCG(1, 2))
	var pieces []byte
	buf := make([]byte, 0, 64)
	for left := total; left > 0; {
		n := min(left, 1+r.IntN(3000))
		buf = g.Append(buf[:0], n)
		pieces = append(pieces, buf...)
		left -= n
	}
	if !bytes.Equal(whole, pieces) {
		t.Error("audio rendered in random chunks differs from one piece")
	}
}

func TestSynthIsAudibleVoice(t *testing.T) {
	vt := newVoiceTables(24000)
	// "ak a": 4 segments of 0.1 s (2400 frames): 'a', 'k', a pause, 'a'.
	const seg = 2400
	x := samples(newSynth(vt, "ak a", "Chelsie", 4*seg, 0).Append(nil, 4*seg))
	if r := rms(x[2*seg : 3*seg]); r != 0 {
		t.Errorf("pause RMS %v, want silence", r)
	}
	for i, c := range []int{0, 1, 3} {
		if r := rms(x[c*seg : (c+1)*seg]); r < 2000 || r > 12000 {
			t.Errorf("segment %d RMS %v, want a clearly audible level", i, r)
		}
	}
	// Pitch: 'a' (U+0061 = 97) is pentatonic step (97/5)%6 = 1 -> 2 semitones,
	// 'k' (107) is step 3 -> 7 semitones over the voice's base pitch.
	base := voiceBaseF0("Chelsie")
	for _, tc := range []struct {
		name  string
		seg   int
		semis float64
	}{{"a", 0, 2}, {"k", 1, 7}} {
		f := base * math.Exp2(tc.semis/12)
		want := 24000 / f
		// The sustained middle of the segment, away from the envelope ramps.
		lag, r := bestPeriod(x[tc.seg*seg+600:tc.seg*seg+1800], 40, 300)
		if math.Abs(float64(lag)-want) > want*0.02+1 {
			t.Errorf("%s: period %d samples, want %.1f (%.1f Hz)", tc.name, lag, want, f)
		}
		if r < 0.9 {
			t.Errorf("%s: autocorrelation %.2f at the period; a voiced tone is periodic, not noise", tc.name, r)
		}
	}
}

func TestSynthDeterministicPerVoice(t *testing.T) {
	vt := newVoiceTables(24000)
	a := newSynth(vt, "hello", "vivian", 12000, 0).Append(nil, 12000)
	b := newSynth(vt, "hello", "vivian", 12000, 0).Append(nil, 12000)
	c := newSynth(vt, "hello", "ryan", 12000, 0).Append(nil, 12000)
	if !bytes.Equal(a, b) {
		t.Error("same text and voice gave different audio")
	}
	if bytes.Equal(a, c) && voiceBaseF0("vivian") != voiceBaseF0("ryan") {
		t.Error("different voices gave the same audio")
	}
}

func TestSynthLowSampleRate(t *testing.T) {
	// At 8 kHz the tables keep harmonics below 3.6 kHz; output stays bounded.
	vt := newVoiceTables(8000)
	x := samples(newSynth(vt, "abc", "v", 2400, 0).Append(nil, 2400))
	for i, v := range x {
		if math.Abs(v) > float64(synthAmplitude)+1 {
			t.Fatalf("sample %d = %v exceeds the amplitude", i, v)
		}
	}
}

func BenchmarkSynth(b *testing.B) {
	vt := newVoiceTables(24000)
	g := newSynth(vt, prompt25, "Chelsie", 1<<40, 0)
	buf := make([]byte, 0, 2*2400)
	b.SetBytes(2 * 2400)
	for b.Loop() {
		buf = g.Append(buf[:0], 2400)
	}
}

// TestLeadingSilence: the first frames are digital silence however the audio
// is cut into chunks, the voice follows at once, and the total is unchanged.
func TestLeadingSilence(t *testing.T) {
	vt := newVoiceTables(24000)
	const total, lead = 24000, 4800
	whole := newSynth(vt, prompt25, "Chelsie", total, lead).Append(nil, total)
	var cut []byte
	g := newSynth(vt, prompt25, "Chelsie", total, lead)
	for _, n := range []int{1000, 3799, 2, 19199} {
		cut = g.Append(cut, n)
	}
	if !bytes.Equal(whole, cut) || len(whole) != 2*total {
		t.Fatalf("chunked render differs or has %d bytes", len(whole))
	}
	firstNonZero := func(b []byte) int {
		for i, c := range b {
			if c != 0 {
				return i
			}
		}
		return -1
	}
	if i := firstNonZero(whole); i < 2*lead {
		t.Errorf("first non-zero byte at %d, want at or after %d", i, 2*lead)
	}
	if firstNonZero(whole[2*lead:2*lead+2400]) < 0 {
		t.Error("no voice in the 50 ms after the leading silence")
	}
	if s := newSynth(vt, "a", "v", 100, 500).Append(nil, 100); !bytes.Equal(s, make([]byte, 200)) {
		t.Error("silence longer than the audio: want all zeros")
	}
}
