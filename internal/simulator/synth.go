package simulator

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"unicode"
)

// The simulated voice: every character of the text becomes one vowel-like
// segment (a harmonic tone shaped by the formants of a vowel, with an attack
// and release envelope); spaces and punctuation are pauses. It is audible and
// clearly derived from the text, costs a table lookup per sample, and is
// deterministic: the same text, voice and sample rate give the same PCM no
// matter how it is cut into chunks.

const (
	tableBits = 11 // 2048-entry single-cycle tables
	tableSize = 1 << tableBits
	// amplitude of a sustained segment, in s16 units (about -7 dBFS).
	synthAmplitude float32 = 14000
	// refF0 is the pitch at which the formant weights are computed.
	refF0 = 140.0
	// maxPitchRatio is the highest note over the voice's base pitch (an octave).
	maxPitchRatio = 2.0
	// maxBaseF0 is the highest base pitch a voice hash can give.
	maxBaseF0 = 230.0
)

// vowelFormants are (F1, F2, F3) in Hz of a, e, i, o, u (adult speaker averages).
var vowelFormants = [5][3]float64{
	{730, 1090, 2440},
	{530, 1840, 2480},
	{270, 2290, 3010},
	{570, 840, 2410},
	{300, 870, 2240},
}

// formantBandwidth is the -3 dB bandwidth in Hz of F1, F2, F3.
var formantBandwidth = [3]float64{90, 110, 170}

// pentatonic semitone steps keep successive characters musical.
var pentatonic = [6]int{0, 2, 4, 7, 9, 12}

// voiceTables holds one normalised single-cycle waveform per vowel. Built
// once per server for its sample rate and only read afterwards.
type voiceTables struct {
	sampleRate int
	wave       [5][tableSize]float32
}

func newVoiceTables(sampleRate int) *voiceTables {
	vt := &voiceTables{sampleRate: sampleRate}
	// Harmonics stay below 45% of the sample rate at the highest pitch, so
	// nothing aliases.
	harmonics := max(1, int(0.45*float64(sampleRate)/(maxBaseF0*maxPitchRatio)))
	for v, fm := range vowelFormants {
		amp := make([]float64, harmonics+1)
		for h := 1; h <= harmonics; h++ {
			f := float64(h) * refF0
			for k, F := range fm {
				x := (f - F) / formantBandwidth[k]
				amp[h] += 1 / (1 + x*x) / float64(k+1) // higher formants are weaker
			}
			amp[h] += 0.05 / float64(h) // a little glottal tilt keeps low harmonics present
		}
		peak := 0.0
		var cycle [tableSize]float64
		for i := range cycle {
			ph := 2 * math.Pi * float64(i) / tableSize
			s := 0.0
			for h := 1; h <= harmonics; h++ {
				s += amp[h] * math.Sin(float64(h)*ph)
			}
			cycle[i] = s
			peak = max(peak, math.Abs(s))
		}
		for i, s := range cycle {
			vt.wave[v][i] = float32(s / peak)
		}
	}
	return vt
}

// voiceBaseF0 maps a voice name to a base pitch in [95, 230) Hz.
func voiceBaseF0(voice string) float64 {
	h := fnv.New32a()
	h.Write([]byte(voice))
	return 95 + float64(h.Sum32()%135)
}

// charVoice is how one character sounds: a vowel table and a pitch ratio;
// ok is false for pauses.
func charVoice(r rune) (vowel int, ratio float64, ok bool) {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return 0, 0, false
	}
	u := uint32(unicode.ToLower(r))
	return int(u % 5), math.Exp2(float64(pentatonic[(u/5)%6]) / 12), true
}

// synth renders one response's audio, chunk by chunk.
type synth struct {
	vt        *voiceTables
	text      []rune
	baseF0    float64
	segFrames int64
	pos       int64  // next frame of the voice
	phase     uint32 // oscillator phase, continuous across segments and chunks
	lead      int64  // frames of leading silence still to render
}

// newSynth renders text in totalFrames, of which the first leadFrames are
// digital silence (Timing.LeadingSilence) and the voice fills the rest.
func newSynth(vt *voiceTables, text string, voice string, totalFrames, leadFrames int64) *synth {
	rs := []rune(text)
	lead := min(max(leadFrames, 0), totalFrames)
	voiced := totalFrames - lead
	seg := int64(1)
	if len(rs) > 0 && voiced > int64(len(rs)) {
		seg = voiced / int64(len(rs))
	}
	return &synth{vt: vt, text: rs, baseF0: voiceBaseF0(voice), segFrames: seg, lead: lead}
}

// Append renders the next frames as s16le mono onto dst.
func (g *synth) Append(dst []byte, frames int) []byte {
	start := len(dst)
	dst = growLen(dst, frames*2)
	out := dst[start:]
	done := 0
	if g.lead > 0 {
		done = int(min(int64(frames), g.lead))
		clear(out[:done*2])
		g.lead -= int64(done)
	}
	for done < frames {
		segIdx := g.pos / g.segFrames
		off := g.pos % g.segFrames
		n := int(min(int64(frames-done), g.segFrames-off))
		var (
			vowel int
			ratio float64
			ok    bool
		)
		if segIdx < int64(len(g.text)) {
			vowel, ratio, ok = charVoice(g.text[segIdx])
		}
		if !ok {
			clear(out[done*2 : (done+n)*2])
			done += n
			g.pos += int64(n)
			continue
		}
		f := g.baseF0 * ratio
		inc := uint32(f / float64(g.vt.sampleRate) * (1 << 32))
		table := &g.vt.wave[vowel]
		// Envelope: linear attack over the first fifth of the segment,
		// sustain, linear release over the last quarter. The three regions
		// are separate loops so the hot sustain loop has no branches.
		seg := g.segFrames
		attackEnd, releaseStart := seg/5, seg-seg/4
		attackGain := synthAmplitude / float32(max(seg/5, 1))
		releaseGain := synthAmplitude / float32(max(seg/4, 1))
		x, end := off, off+int64(n)
		o := out[done*2 : (done+n)*2]
		for ; x < min(end, attackEnd); x++ {
			v := table[g.phase>>(32-tableBits)] * float32(x) * attackGain
			g.phase += inc
			binary.LittleEndian.PutUint16(o[(x-off)*2:], uint16(int16(v)))
		}
		for ; x < min(end, releaseStart); x++ {
			v := table[g.phase>>(32-tableBits)] * synthAmplitude
			g.phase += inc
			binary.LittleEndian.PutUint16(o[(x-off)*2:], uint16(int16(v)))
		}
		for ; x < end; x++ {
			v := table[g.phase>>(32-tableBits)] * float32(seg-x) * releaseGain
			g.phase += inc
			binary.LittleEndian.PutUint16(o[(x-off)*2:], uint16(int16(v)))
		}
		done += n
		g.pos += int64(n)
	}
	return dst
}

// growLen extends b by n bytes, reallocating only when the capacity is short.
func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*cap(b)+n)
	copy(nb, b)
	return nb
}
