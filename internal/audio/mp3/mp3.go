// Package mp3 reads and writes the MP3 files a vLLM-Omni server sends as
// chat audio events with audio.format "mp3" (every event is a complete,
// independent file: docs/reference/http-streams.md, section 2.4).
//
// Parse measures a file from its own headers, without decoding: it skips an
// ID3v2 tag, walks the MPEG audio frame headers (MPEG 1, 2 and 2.5, layer
// III; bitrate and sample-rate tables, padding slot; 1152 samples per frame
// for MPEG 1, 576 for MPEG 2 and 2.5) and, when the first frame is a
// Xing/Info frame, takes the audio frame count from it and the encoder delay
// and padding from its LAME extension. Decode turns a file into s16le PCM
// with github.com/hajimehoshi/go-mp3 (pure Go), trimmed to the samples Parse
// counted, so the client can find the audible onset. EncodeSilence writes
// the files the simulator sends: digital silence, since no well-kept pure-Go
// MP3 encoder exists.
package mp3

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	mp3 "github.com/hajimehoshi/go-mp3"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// MaxFrames caps the samples per channel Parse accepts from one file (one
// hour at 48 kHz), so a header cannot make Decode allocate without bound.
const MaxFrames = 48000 * 3600

// ErrMP3 is wrapped by every error this package returns for a bad file.
var ErrMP3 = errors.New("mp3")

// decoderDelay is the delay every MP3 decoder's synthesis filterbank adds
// (528 samples plus one, as LAME and FFmpeg count it). A LAME tag's encoder
// delay excludes it, so gapless playback skips delay+decoderDelay samples.
const decoderDelay = 529

// Info is what a file's headers say.
type Info struct {
	SampleRate      int
	Channels        int   // 1 (mono) or 2 (stereo, joint stereo, dual channel)
	Frames          int64 // samples per channel to play: after the LAME delay and padding when a tag states them
	MPEGFrames      int   // audio frames in the file (the Xing/Info frame excluded)
	SamplesPerFrame int
	// Tagged is true when the first frame is a Xing/Info frame; Delay and
	// Padding are the encoder delay and padding of its LAME extension (0
	// without one: then Frames includes the encoder's delay, which no
	// header states).
	Tagged         bool
	Delay, Padding int
	// ID3v2 is the size in bytes of the leading ID3v2 tag (0 without one).
	ID3v2 int
}

// Format is the PCM format Decode returns.
func (i Info) Format() wav.Format {
	return wav.Format{SampleRate: i.SampleRate, Channels: i.Channels, BitsPerSample: 16}
}

// header is one parsed MPEG audio frame header.
type header struct {
	version  int // 0 MPEG 1, 1 MPEG 2, 2 MPEG 2.5
	crc      bool
	bitrate  int // bits per second
	rate     int
	padding  bool
	channels int
	size     int // whole frame in bytes, header included
	samples  int // per channel
	sideInfo int // bytes of layer III side information
}

var (
	sampleRates = [3][3]int{{44100, 48000, 32000}, {22050, 24000, 16000}, {11025, 12000, 8000}}
	// bitrates in kbit/s of layer III by [MPEG 1, MPEG 2/2.5][index].
	bitrates = [2][15]int{
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
	}
)

// parseHeader parses the 4-byte frame header at the start of b.
func parseHeader(b []byte) (header, error) {
	if len(b) < 4 {
		return header{}, errors.New("frame header cut short")
	}
	if b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return header{}, fmt.Errorf("no frame sync (found % x)", b[:2])
	}
	var h header
	switch (b[1] >> 3) & 3 {
	case 3:
		h.version = 0
	case 2:
		h.version = 1
	case 0:
		h.version = 2
	default:
		return header{}, errors.New("reserved MPEG version")
	}
	if (b[1]>>1)&3 != 1 {
		return header{}, fmt.Errorf("layer %d, want layer III", 4-int((b[1]>>1)&3))
	}
	h.crc = b[1]&1 == 0
	bri, sri := int(b[2]>>4), int(b[2]>>2)&3
	switch {
	case bri == 0:
		return header{}, errors.New("free-format bitrate is not supported")
	case bri == 15:
		return header{}, errors.New("invalid bitrate index 15")
	case sri == 3:
		return header{}, errors.New("reserved sample rate index")
	}
	lsf := min(h.version, 1)
	h.bitrate = bitrates[lsf][bri] * 1000
	h.rate = sampleRates[h.version][sri]
	h.padding = b[2]&2 != 0
	h.channels = 2
	if b[3]>>6 == 3 {
		h.channels = 1
	}
	// Layer III: 1152 samples per frame in MPEG 1, 576 (one granule) in
	// MPEG 2 and 2.5; the frame holds samples/8 bytes per bit per second.
	h.samples = 1152 >> lsf
	h.size = h.samples/8*h.bitrate/h.rate + b2i(h.padding)
	h.sideInfo = [2][2]int{{17, 32}, {9, 17}}[lsf][h.channels-1]
	if min := 4 + 2*b2i(h.crc) + h.sideInfo; h.size < min {
		return header{}, fmt.Errorf("frame of %d bytes is shorter than its header and side information (%d)", h.size, min)
	}
	return h, nil
}

// IsFrameHeader reports whether b starts with a valid layer III frame
// header: how a file with no ID3v2 tag is recognised as MP3.
func IsFrameHeader(b []byte) bool {
	_, err := parseHeader(b)
	return err == nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// id3v2Size returns the size of an ID3v2 tag at the start of b (header,
// footer and synchsafe size), or 0 without one.
func id3v2Size(b []byte) (int, error) {
	if len(b) < 10 || string(b[:3]) != "ID3" {
		return 0, nil
	}
	for _, c := range b[6:10] {
		if c&0x80 != 0 {
			return 0, fmt.Errorf("%w: ID3v2 tag size is not synchsafe (% x)", ErrMP3, b[6:10])
		}
	}
	n := 10 + (int(b[6])<<21 | int(b[7])<<14 | int(b[8])<<7 | int(b[9]))
	if b[5]&0x10 != 0 {
		n += 10 // footer
	}
	if n > len(b) {
		return 0, fmt.Errorf("%w: ID3v2 tag of %d bytes runs past the end (%d bytes)", ErrMP3, n, len(b))
	}
	return n, nil
}

// xing reads a Xing/Info tag in the frame f (header h): whether there is
// one, the audio frame count it states (-1 when it states none) and its
// LAME encoder delay and padding.
func xing(f []byte, h header) (ok bool, frames int64, delay, padding int) {
	off := 4 + 2*b2i(h.crc) + h.sideInfo
	if off+8 > len(f) {
		return false, -1, 0, 0
	}
	id := string(f[off : off+4])
	if id != "Xing" && id != "Info" {
		return false, -1, 0, 0
	}
	flags := be32(f[off+4:])
	p := off + 8
	frames = -1
	if flags&1 != 0 {
		if p+4 > len(f) {
			return true, -1, 0, 0
		}
		frames = int64(be32(f[p:]))
		p += 4
	}
	if flags&2 != 0 {
		p += 4 // stream bytes
	}
	if flags&4 != 0 {
		p += 100 // seek table
	}
	if flags&8 != 0 {
		p += 4 // quality
	}
	// The LAME extension: 9 bytes of encoder version, then at byte 21 the
	// 12-bit encoder delay and 12-bit padding.
	if p+24 <= len(f) && (string(f[p:p+4]) == "LAME" || string(f[p:p+4]) == "Lavf" || string(f[p:p+4]) == "Lavc") {
		v := int(f[p+21])<<16 | int(f[p+22])<<8 | int(f[p+23])
		delay, padding = v>>12, v&0xfff
	}
	return true, frames, delay, padding
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Parse measures an MP3 file from its headers: every byte after an ID3v2
// tag must be a layer III frame of one sample rate and channel count, up to
// an optional trailing 128-byte ID3v1 tag.
func Parse(data []byte) (Info, error) {
	tag, err := id3v2Size(data)
	if err != nil {
		return Info{}, err
	}
	info := Info{ID3v2: tag}
	end := len(data)
	if end-tag >= 128 && string(data[end-128:end-125]) == "TAG" {
		end -= 128
	}
	xingFrames := int64(-1)
	for off := tag; off < end; {
		h, err := parseHeader(data[off:end])
		if err != nil {
			return Info{}, fmt.Errorf("%w: byte %d: %w", ErrMP3, off, err)
		}
		if off+h.size > end {
			return Info{}, fmt.Errorf("%w: byte %d: frame of %d bytes cut at byte %d", ErrMP3, off, h.size, end)
		}
		if off == tag {
			info.SampleRate, info.Channels, info.SamplesPerFrame = h.rate, h.channels, h.samples
			if ok, n, d, p := xing(data[off:off+h.size], h); ok {
				info.Tagged, info.Delay, info.Padding, xingFrames = true, d, p, n
				off += h.size
				continue
			}
		} else if h.rate != info.SampleRate || h.channels != info.Channels {
			return Info{}, fmt.Errorf("%w: byte %d: frame of %d Hz, %d channels after frames of %d Hz, %d channels", ErrMP3, off, h.rate, h.channels, info.SampleRate, info.Channels)
		}
		info.MPEGFrames++
		off += h.size
	}
	if info.SampleRate == 0 {
		return Info{}, fmt.Errorf("%w: no MPEG audio frame after byte %d", ErrMP3, tag)
	}
	if xingFrames >= 0 && xingFrames != int64(info.MPEGFrames) {
		return Info{}, fmt.Errorf("%w: the Xing/Info header at byte %d states %d audio frames, the file holds %d", ErrMP3, tag, xingFrames, info.MPEGFrames)
	}
	total := int64(info.MPEGFrames) * int64(info.SamplesPerFrame)
	info.Frames = total - int64(info.Delay) - int64(info.Padding)
	if info.Frames < 0 || info.Frames > MaxFrames {
		return Info{}, fmt.Errorf("%w: %d frames of %d samples less encoder delay %d and padding %d leave %d samples (want 0 to %d)", ErrMP3, info.MPEGFrames, info.SamplesPerFrame, info.Delay, info.Padding, info.Frames, int64(MaxFrames))
	}
	return info, nil
}

// Decodable reports whether Decode can decode a file Parse measured as
// info: go-mp3 decodes MPEG 1 and 2, not MPEG 2.5 (11025, 12000 and 8000
// Hz).
func Decodable(info Info) bool { return info.SampleRate >= 16000 }

// Decode decodes a file Parse measured as info to s16le PCM of
// info.Channels channels, appended to dst: exactly info.Frames samples per
// channel, the leading Xing/Info frame's silence, the encoder delay and the
// decoder delay skipped as a gapless player does.
func Decode(data []byte, info Info, dst []byte) ([]byte, error) {
	d, err := mp3.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return dst, fmt.Errorf("%w: decode: %w", ErrMP3, err)
	}
	// go-mp3 always writes 16-bit stereo, and decodes the Xing/Info frame
	// as a frame of silence.
	stereo, err := io.ReadAll(io.LimitReader(d, (int64(info.MPEGFrames)+1)*int64(info.SamplesPerFrame)*4))
	if err != nil {
		return dst, fmt.Errorf("%w: decode: %w", ErrMP3, err)
	}
	got := int64(len(stereo) / 4)
	skip := int64(0)
	if info.Tagged {
		skip = int64(info.SamplesPerFrame)
		if info.Delay > 0 || info.Padding > 0 {
			skip += int64(info.Delay) + decoderDelay
		}
	}
	// A padding shorter than the decoder delay leaves the tail short; the
	// start moves back rather than the length changing.
	skip = min(skip, got-info.Frames)
	if skip < 0 {
		return dst, fmt.Errorf("%w: decoded %d samples, the headers state %d", ErrMP3, got, info.Frames)
	}
	pcm := stereo[skip*4 : (skip+info.Frames)*4]
	if info.Channels == 2 {
		return append(dst, pcm...), nil
	}
	for i := 0; i < len(pcm); i += 4 {
		dst = append(dst, pcm[i], pcm[i+1])
	}
	return dst, nil
}
