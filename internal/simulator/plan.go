package simulator

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// codecTokensPerSecond is the talker's codec frame rate (Qwen3-Omni and
// Qwen3-TTS-12Hz emit 12.5 codec frames per second of audio); it turns audio
// length into generated tokens for usage and token counters.
const codecTokensPerSecond = 12.5

// faultSet is the faults one request suffers.
type faultSet struct {
	http500, disconnect, errorEvent, stall, emptyAudio, malformed, oversized bool
	emptyEvent                                                               bool // drawn last, see newPlan
}

// plan is everything random about one request, drawn up front from the
// request's own generator so that it does not depend on scheduling. Only the
// capacity slowdown is applied later, when each wait starts.
type plan struct {
	faults faultSet

	ttftMul float64   // 1 + J*j for the first text word
	ttfaMul float64   // 1 + J*j for the first audio chunk
	wordMul []float64 // per text word k >= 1: 1 + J*j for the gap before it

	chunkFrames []int     // frames per audio chunk
	chunkMul    []float64 // per chunk: 1 + J*j on its generation time
	chunkStall  []bool    // per chunk: a stall precedes it

	totalFrames int64

	prefill time.Duration // input-audio prefill: AudioPrefill per second of input audio
}

// planInput is what the plan depends on besides the generator.
type planInput struct {
	words      int     // text words the thinker generates
	textRunes  int     // characters the audio is derived from
	speed      float64 // speech speed (1 for chat)
	audio      bool    // the response carries audio
	sampleRate int
	audioInS   float64 // seconds of input audio
	frames     int64   // when > 0, the audio's length in frames (a spoken voice), instead of the timing model's
}

// occurrences counts requests per content hash, so that identical prompts get
// different (but reproducible) generators: the n-th request with a given
// endpoint and prompt always gets the same one.
type occurrences struct {
	mu sync.Mutex
	n  map[uint64]uint64
}

// maxOccurrenceKeys bounds the memory of the occurrence map; when it fills up
// it starts over (documented: determinism then holds per window of distinct
// prompts, which no test or benchmark reaches).
const maxOccurrenceKeys = 1 << 20

func (o *occurrences) next(key uint64) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil || len(o.n) >= maxOccurrenceKeys {
		o.n = make(map[uint64]uint64)
	}
	k := o.n[key]
	o.n[key] = k + 1
	return k
}

// contentKey hashes what identifies a request for its generator.
func contentKey(endpoint, text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(endpoint))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return h.Sum64()
}

// requestRNG derives a request's generator from the server seed, its content
// key and its occurrence index.
func requestRNG(seed int64, key, occurrence uint64) *rand.Rand {
	// splitmix-style mixing keeps nearby occurrence numbers far apart.
	mix := key ^ (occurrence+1)*0x9E3779B97F4A7C15
	mix ^= mix >> 31
	return rand.New(rand.NewPCG(uint64(seed), mix))
}

// signed draws j in [-1, 1).
func signed(r *rand.Rand) float64 { return 2*r.Float64() - 1 }

// audioFrames is the total frames of a response: D = clamp(runes *
// AudioPerChar, MinAudio, MaxAudio) / speed at the sample rate.
func audioFrames(t Timing, runes int, speed float64, sampleRate int) int64 {
	d := time.Duration(runes) * t.AudioPerChar
	if runes > 0 && d/time.Duration(runes) != t.AudioPerChar { // overflow
		d = t.MaxAudio
	}
	d = min(max(d, t.MinAudio), t.MaxAudio)
	if speed <= 0 {
		speed = 1
	}
	return int64(math.Round(d.Seconds() / speed * float64(sampleRate)))
}

// newPlan draws a request's plan. Draw order is fixed: faults first (so
// fault rates never shift timing draws), then first-event multipliers, then
// words, then chunks.
func newPlan(r *rand.Rand, t Timing, f Faults, in planInput) *plan {
	p := &plan{}
	hit := func(rate float64) bool { return r.Float64() < rate }
	p.faults = faultSet{
		http500:    hit(f.HTTP500),
		disconnect: hit(f.Disconnect),
		errorEvent: hit(f.ErrorEvent),
		stall:      hit(f.Stall),
		emptyAudio: hit(f.EmptyAudio),
		malformed:  hit(f.MalformedBase64),
		oversized:  hit(f.Oversized),
	}
	p.prefill = time.Duration(in.audioInS * float64(t.AudioPrefill))
	p.ttftMul = 1 + t.Jitter*signed(r)
	p.ttfaMul = 1 + t.Jitter*signed(r)
	if in.words > 1 {
		p.wordMul = make([]float64, in.words)
		for k := 1; k < in.words; k++ {
			p.wordMul[k] = 1 + t.Jitter*signed(r)
		}
	}
	if !in.audio || p.faults.emptyAudio {
		return p
	}
	// Drawn after everything else so that adding this fault did not move
	// the draws of the older ones.
	defer func() { p.faults.emptyEvent = hit(f.EmptyAudioEvent) }()
	total := in.frames
	if total <= 0 {
		total = audioFrames(t, in.textRunes, in.speed, in.sampleRate)
	}
	nominal := t.ChunkAudio.Seconds() * float64(in.sampleRate)
	for left := total; left > 0; {
		c := int64(math.Round(nominal * (1 + t.Jitter*signed(r))))
		c = min(max(c, 1), left)
		p.chunkFrames = append(p.chunkFrames, int(c))
		left -= c
	}
	if p.faults.oversized && len(p.chunkFrames) > 0 {
		// base64 is 4/3 of the bytes; 2 bytes per mono s16 frame.
		big := (f.OversizedBytes*3/4 + 1) / 2
		k := min(1, len(p.chunkFrames)-1)
		p.chunkFrames[k] = max(p.chunkFrames[k], big)
	}
	p.chunkMul = make([]float64, len(p.chunkFrames))
	p.chunkStall = make([]bool, len(p.chunkFrames))
	for i, c := range p.chunkFrames {
		p.chunkMul[i] = 1 + t.Jitter*signed(r)
		p.chunkStall[i] = hit(t.StallProb)
		p.totalFrames += int64(c)
	}
	return p
}

// chunkGen is the code2wav generation time of chunk i at slowdown s:
// (c_i / f) * RTF * (1 + J*j_i) * s, plus the stall when one precedes it.
func (p *plan) chunkGen(t Timing, sampleRate, i int, s float64) time.Duration {
	sec := float64(p.chunkFrames[i]) / float64(sampleRate) * t.RTF * p.chunkMul[i] * s
	d := time.Duration(sec * float64(time.Second))
	if p.chunkStall[i] {
		d += t.Stall
	}
	return d
}

// firstAudio is t_0 = (TTFA * (1 + J*j) + P) * s, P the input-audio prefill.
func (p *plan) firstAudio(t Timing, s float64) time.Duration {
	return time.Duration((float64(t.TTFA)*p.ttfaMul + float64(p.prefill)) * s)
}

// firstText is w_0 = (TTFT * (1 + J*j) + P) * s, P the input-audio prefill.
func (p *plan) firstText(t Timing, s float64) time.Duration {
	return time.Duration((float64(t.TTFT)*p.ttftMul + float64(p.prefill)) * s)
}

// wordGap is the gap before text word k >= 1: WordInterval * (1 + J*j_k) * s.
func (p *plan) wordGap(t Timing, k int, s float64) time.Duration {
	return time.Duration(float64(t.WordInterval) * p.wordMul[k] * s)
}

// codecTokens is the talker's generated tokens for frames of audio.
func codecTokens(frames int64, sampleRate int) int {
	return int(math.Ceil(float64(frames) / float64(sampleRate) * codecTokensPerSecond))
}

// promptTokens estimates prompt tokens from text (about 4 characters per
// token, at least 1), the usual rule of thumb for English BPE tokenizers.
func promptTokens(runes int) int { return max(1, (runes+3)/4) }

// slowdown is the capacity model's factor max(1, active / capacity).
func slowdown(active int64, capacity int) float64 {
	if capacity <= 0 || active <= int64(capacity) {
		return 1
	}
	return float64(active) / float64(capacity)
}
