package simulator

import (
	"cmp"
	"container/list"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// defaultVoiceCacheBytes bounds the PCM the voice cache keeps: 64 MiB is
// about 23 minutes of 24 kHz speech, many times a benchmark's prompt set.
const defaultVoiceCacheBytes = 64 << 20

// Damage done by the voice faults (Faults.VoiceMute, VoiceClip, VoiceCutEnd).
const (
	// voiceClipGain drives the voice 18 dB past its level: speech peaking
	// near -4 dBFS then sits at full scale for most of every syllable.
	voiceClipGain = 8
	// voiceCutKeep is the share of the speech the cut-end fault keeps at
	// least: the stream stops at the end of the first loud 30 ms after it
	// (three 10 ms windows in a row with RMS above voiceCutDBFS), inside a
	// syllable, well before espeak-ng's trailing pause.
	voiceCutKeep = 0.6
	voiceCutDBFS = -25.0
	// swapFallbackText is spoken by the swap fault when no other text has
	// been spoken before.
	swapFallbackText = "This audio belongs to another request."
)

// voiceKey identifies a synthesis: the same text at the same speed is the
// same audio.
type voiceKey struct {
	text  string
	speed float64
}

type voiceEntry struct {
	key voiceKey
	pcm []byte
}

// voiceCache wraps an engine with a least-recently-used cache of its PCM
// (bounded in bytes, shared read-only by the responses that stream it) and
// remembers the last text spoken, for the swap fault.
type voiceCache struct {
	engine     VoiceEngine
	sampleRate int
	maxBytes   int

	mu       sync.Mutex
	order    *list.List // of *voiceEntry, most recent first
	index    map[voiceKey]*list.Element
	bytes    int
	last     string // the last text spoken
	previous string // the last text spoken that differs from last
}

func newVoiceCache(engine VoiceEngine, sampleRate, maxBytes int) *voiceCache {
	return &voiceCache{engine: engine, sampleRate: sampleRate, maxBytes: maxBytes,
		order: list.New(), index: make(map[voiceKey]*list.Element)}
}

// speak returns the PCM of text at speed, from the cache or the engine.
// Two requests missing the same text at once both synthesize it; the cache
// keeps one.
func (c *voiceCache) speak(ctx context.Context, text string, speed float64) ([]byte, error) {
	key := voiceKey{text, speed}
	c.mu.Lock()
	if el, ok := c.index[key]; ok {
		c.order.MoveToFront(el)
		pcm := el.Value.(*voiceEntry).pcm
		c.mu.Unlock()
		return pcm, nil
	}
	c.mu.Unlock()
	pcm, err := c.engine.Speak(ctx, text, speed, c.sampleRate)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[key]; ok || len(pcm) > c.maxBytes {
		return pcm, nil
	}
	c.index[key] = c.order.PushFront(&voiceEntry{key, pcm})
	c.bytes += len(pcm)
	for c.bytes > c.maxBytes {
		oldest := c.order.Back()
		e := oldest.Value.(*voiceEntry)
		c.order.Remove(oldest)
		delete(c.index, e.key)
		c.bytes -= len(e.pcm)
	}
	return pcm, nil
}

// remember records text as the last one spoken and returns the last
// different one spoken before it ("" for none): another request's text, for
// the swap fault.
func (c *voiceCache) remember(text string) (previous string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	previous, c.last = c.last, text
	if previous == text {
		previous = c.previous
	} else {
		c.previous = previous
	}
	return previous
}

// voiceFaults is the damage one response's voice suffers.
type voiceFaults struct {
	mute, clip, cutEnd, swap bool
}

// drawVoiceFaults draws them from their own generator, so that the draws of
// the timing and the other faults are those of the tone voice.
func drawVoiceFaults(seed int64, key, occurrence uint64, f Faults) voiceFaults {
	r := requestRNG(seed, key^0x766f6963655f6661, occurrence) // "voice_fa"
	hit := func(rate float64) bool { return r.Float64() < rate }
	return voiceFaults{mute: hit(f.VoiceMute), clip: hit(f.VoiceClip), cutEnd: hit(f.VoiceCutEnd), swap: hit(f.VoiceSwap)}
}

// newVoiceSource speaks a response's text (or, with the swap fault,
// another's) and prepares it to stream: lead frames of digital silence,
// the speech bounded by Timing.MaxAudio (and cut short by the cut-end
// fault), then silence up to Timing.MinAudio.
func (s *Server) newVoiceSource(ctx context.Context, text string, speed float64, lead int64, vf voiceFaults) (*voiceSource, error) {
	if previous := s.voice.remember(text); vf.swap {
		text = cmp.Or(previous, swapFallbackText)
	}
	pcm, err := s.voice.speak(ctx, text, speed)
	if err != nil {
		return nil, fmt.Errorf("voice engine: %w", err)
	}
	rate := float64(s.cfg.SampleRate)
	speech := min(int64(len(pcm)/2), int64(s.cfg.Timing.MaxAudio.Seconds()*rate))
	if vf.cutEnd {
		speech = loudCut(pcm[:2*speech], int64(float64(speech)*voiceCutKeep), s.cfg.SampleRate)
	}
	v := &voiceSource{pcm: pcm[:2*speech], lead: lead, gain: 1}
	v.total = max(lead+speech, int64(math.Round(s.cfg.Timing.MinAudio.Seconds()*rate)))
	if vf.mute {
		span := int64(math.Round(s.cfg.Faults.VoiceMuteFor.Seconds() * rate))
		v.muteFrom = max(0, speech/2-span/2)
		v.muteTo = min(speech, v.muteFrom+span)
	}
	if vf.clip {
		v.gain = voiceClipGain
	}
	return v, nil
}

// loudCut returns the end of the first three 10 ms windows in a row, from
// frame from on, whose RMS is each above voiceCutDBFS; from when there are
// none.
func loudCut(pcm []byte, from int64, sampleRate int) int64 {
	w := int64(max(1, sampleRate/100))
	a := 32768 * math.Pow(10, voiceCutDBFS/20)
	limit := a * a * float64(w)
	loud := 0
	for start := from; 2*(start+w) <= int64(len(pcm)); start += w {
		var sum float64
		for i := start; i < start+w; i++ {
			x := float64(int16(binary.LittleEndian.Uint16(pcm[2*i:])))
			sum += x * x
		}
		if loud = loud + 1; sum <= limit {
			loud = 0
		}
		if loud == 3 {
			return start + w
		}
	}
	return from
}

// voiceSource streams a response's speech chunk by chunk: leading silence,
// the speech (with the mute and clip faults applied as it is copied, so the
// cached PCM is never written), then silence.
type voiceSource struct {
	pcm              []byte // shared with the cache: read only
	lead             int64  // frames of leading silence
	total            int64  // frames of the whole response
	pos              int64  // next frame of the response
	muteFrom, muteTo int64  // speech frames written as silence
	gain             int32  // clip fault: 1 for none
}

// Append renders the next frames as s16le mono onto dst.
func (v *voiceSource) Append(dst []byte, frames int) []byte {
	start := len(dst)
	dst = growLen(dst, 2*frames)
	out := dst[start:]
	speech := int64(len(v.pcm) / 2)
	for k := range int64(frames) {
		i := v.pos + k - v.lead // speech frame
		var y int32
		if i >= 0 && i < speech && (i < v.muteFrom || i >= v.muteTo) {
			y = int32(int16(binary.LittleEndian.Uint16(v.pcm[2*i:]))) * v.gain
			y = min(max(y, -32768), 32767)
		}
		binary.LittleEndian.PutUint16(out[2*k:], uint16(int16(y)))
	}
	v.pos += int64(frames)
	return dst
}
