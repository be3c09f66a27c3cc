package summary

import (
	"encoding/binary"
	"math"

	"github.com/omnibench/omnibench/internal/run/offheap"
)

// The samples of a Set live outside the Go heap (package offheap), packed:
// a fixed header, then only the figures that are not zero and that cannot be
// derived from the others with the operation the client derived them by
// (an audio duration is its frames over the sample rate, the whole-response
// RTF the e2e time over the duration, and the first audio event and the
// audible onset are most often the first audio itself). Decoding repeats
// those operations, so every figure comes back with the bits it went in
// with. A short chat response with audio packs into about 100 bytes instead
// of the 184 of a Sample.

// The packed figures, in order; bit i of a header's present mask says that
// figure i follows the header.
const (
	wSent = iota
	wE2E
	wLag
	wQueue
	wTTFP
	wTTFT
	wFirstAudioEvent
	wTTFAAudible
	wLeadingSilence
	wRTFServer
	wAudioDuration
	wRTFLastChunk
	wRTFE2E
	wInputAudio
	wMaxUnderrun
	wStallTotal
	wStallLongest
	wPrerollStartup
	wMaxTextGap
	wAudioFrames
	wInputAudioBytes
	wStalls
	numWords
)

// Derivation flags of a packed sample, above the Sample flags.
const (
	flagFirstIsTTFP   = flagRTFServer << (iota + 1) // FirstAudioEventS == TTFPS
	flagTTFAIsTTFP                                  // TTFAAudibleS == TTFPS
	flagDurFromRate                                 // AudioDurationS == AudioFrames / the rate at index rate
	flagRTFE2EDerived                               // RTFE2E == E2ES / AudioDurationS
)

// headerSize is the packed header: flags (2), present (4), known and ok
// (2 each), status (2), kind, class, finish and rate (1 each).
const (
	headerSize  = 16
	maxPacked   = headerSize + 8*numWords
	sampleBlock = 1 << 18 // bytes of one block of packed samples
)

// words returns x's figures as bits, in packed order.
func (x *Sample) words() [numWords]uint64 {
	f := math.Float64bits
	return [numWords]uint64{
		f(x.SentS), f(x.E2ES), f(x.LagS), f(x.QueueS), f(x.TTFPS), f(x.TTFTS), f(x.FirstAudioEventS),
		f(x.TTFAAudibleS), f(x.LeadingSilenceS), f(x.RTFServer), f(x.AudioDurationS), f(x.RTFLastChunk),
		f(x.RTFE2E), f(x.InputAudioS), f(x.MaxUnderrunS), f(x.StallTotalS), f(x.StallLongestS),
		f(x.PrerollStartupS), f(x.MaxTextGapS), uint64(x.AudioFrames), uint64(x.InputAudioBytes), uint64(int64(x.Stalls)),
	}
}

// setWords sets x's figures from their bits.
func (x *Sample) setWords(w *[numWords]uint64) {
	f := math.Float64frombits
	x.SentS, x.E2ES, x.LagS, x.QueueS, x.TTFPS, x.TTFTS = f(w[wSent]), f(w[wE2E]), f(w[wLag]), f(w[wQueue]), f(w[wTTFP]), f(w[wTTFT])
	x.FirstAudioEventS, x.TTFAAudibleS, x.LeadingSilenceS = f(w[wFirstAudioEvent]), f(w[wTTFAAudible]), f(w[wLeadingSilence])
	x.RTFServer, x.AudioDurationS, x.RTFLastChunk, x.RTFE2E = f(w[wRTFServer]), f(w[wAudioDuration]), f(w[wRTFLastChunk]), f(w[wRTFE2E])
	x.InputAudioS, x.MaxUnderrunS, x.StallTotalS, x.StallLongestS = f(w[wInputAudio]), f(w[wMaxUnderrun]), f(w[wStallTotal]), f(w[wStallLongest])
	x.PrerollStartupS, x.MaxTextGapS = f(w[wPrerollStartup]), f(w[wMaxTextGap])
	x.AudioFrames, x.InputAudioBytes, x.Stalls = int64(w[wAudioFrames]), int64(w[wInputAudioBytes]), int32(int64(w[wStalls]))
}

// sampleStore is the packed samples in blocks of sampleBlock bytes from an
// arena; every block but the last is full to within one packed sample.
type sampleStore struct {
	blocks [][]byte // each sliced to the bytes written
	n      int
	rates  []int // the sample rates flagDurFromRate refers to, by index-1
}

// add packs x, whose audio has sampleRate frames per second (0: unknown).
func (st *sampleStore) add(arena *offheap.Arena, x *Sample, sampleRate int) {
	w := x.words()
	flags := x.flags
	same := func(a, b int, flag uint16) {
		if w[a] != 0 && w[a] == w[b] {
			flags |= flag
			w[a] = 0
		}
	}
	same(wFirstAudioEvent, wTTFP, flagFirstIsTTFP)
	same(wTTFAAudible, wTTFP, flagTTFAIsTTFP)
	rate := st.rateIndex(sampleRate)
	if rate > 0 && w[wAudioDuration] != 0 && w[wAudioDuration] == math.Float64bits(float64(x.AudioFrames)/float64(sampleRate)) {
		flags |= flagDurFromRate
		w[wAudioDuration] = 0
	} else {
		rate = 0
	}
	if x.AudioDurationS != 0 && w[wRTFE2E] != 0 && w[wRTFE2E] == math.Float64bits(x.E2ES/x.AudioDurationS) {
		flags |= flagRTFE2EDerived
		w[wRTFE2E] = 0
	}
	b := st.room(arena)
	at := len(b)
	b = b[:at+headerSize]
	var present uint32
	for i, v := range w {
		if v != 0 {
			present |= 1 << i
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	h := b[at : at+headerSize]
	binary.LittleEndian.PutUint16(h[0:], flags)
	binary.LittleEndian.PutUint32(h[2:], present)
	binary.LittleEndian.PutUint16(h[6:], x.known)
	binary.LittleEndian.PutUint16(h[8:], x.ok)
	binary.LittleEndian.PutUint16(h[10:], uint16(x.Status))
	h[12], h[13], h[14], h[15] = x.kind, x.class, x.finish, uint8(rate)
	st.blocks[len(st.blocks)-1] = b
	st.n++
}

// room returns the last block, first starting a new one when a packed
// sample might not fit in it.
func (st *sampleStore) room(arena *offheap.Arena) []byte {
	if n := len(st.blocks); n > 0 && cap(st.blocks[n-1])-len(st.blocks[n-1]) >= maxPacked {
		return st.blocks[n-1]
	}
	st.blocks = append(st.blocks, arena.Bytes(sampleBlock)[:0])
	return st.blocks[len(st.blocks)-1]
}

// rateIndex interns a sample rate for flagDurFromRate: 0 when there is
// none or no room for another.
func (st *sampleStore) rateIndex(rate int) int {
	if rate <= 0 {
		return 0
	}
	for i, r := range st.rates {
		if r == rate {
			return i + 1
		}
	}
	if len(st.rates) == maxInterned {
		return 0
	}
	st.rates = append(st.rates, rate)
	return len(st.rates)
}

// each unpacks every sample in the order added into one Sample and calls f
// with it and its index; f must not keep the pointer.
func (st *sampleStore) each(f func(i int, x *Sample)) {
	var x Sample
	i := 0
	for _, b := range st.blocks {
		for len(b) > 0 {
			b = st.unpack(b, &x)
			f(i, &x)
			i++
		}
	}
}

// unpack decodes the packed sample at the start of b into x and returns
// the rest of b.
func (st *sampleStore) unpack(b []byte, x *Sample) []byte {
	flags := binary.LittleEndian.Uint16(b[0:])
	present := binary.LittleEndian.Uint32(b[2:])
	*x = Sample{
		known: binary.LittleEndian.Uint16(b[6:]), ok: binary.LittleEndian.Uint16(b[8:]),
		Status: int16(binary.LittleEndian.Uint16(b[10:])),
		kind:   b[12], class: b[13], finish: b[14],
		flags: flags &^ (flagFirstIsTTFP | flagTTFAIsTTFP | flagDurFromRate | flagRTFE2EDerived),
	}
	rate := int(b[15])
	b = b[headerSize:]
	var w [numWords]uint64
	for i := range w {
		if present&(1<<i) != 0 {
			w[i] = binary.LittleEndian.Uint64(b)
			b = b[8:]
		}
	}
	if flags&flagFirstIsTTFP != 0 {
		w[wFirstAudioEvent] = w[wTTFP]
	}
	if flags&flagTTFAIsTTFP != 0 {
		w[wTTFAAudible] = w[wTTFP]
	}
	x.setWords(&w)
	if flags&flagDurFromRate != 0 {
		x.AudioDurationS = float64(x.AudioFrames) / float64(st.rates[rate-1])
	}
	if flags&flagRTFE2EDerived != 0 {
		x.RTFE2E = x.E2ES / x.AudioDurationS
	}
	return b
}

// bytes is the store's size in bytes, packed.
func (st *sampleStore) bytes() int {
	n := 0
	for _, b := range st.blocks {
		n += len(b)
	}
	return n
}
