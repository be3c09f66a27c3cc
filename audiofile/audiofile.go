package audiofile

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/wav"
)

// Formats of input audio, as named in an OpenAI input_audio part.
const (
	WAV  = "wav"
	FLAC = "flac"
	MP3  = "mp3"
)

// Formats lists the accepted formats.
func Formats() []string { return []string{WAV, FLAC, MP3} }

// MIMEType is the media type of a format in a data: URL.
func MIMEType(format string) string {
	switch format {
	case FLAC:
		return "audio/flac"
	case MP3:
		return "audio/mpeg"
	}
	return "audio/wav"
}

// Info is what is known of an audio file without decoding it.
type Info struct {
	Format     string  // WAV, FLAC or MP3
	SampleRate int     // Hz
	DurationS  float64 // seconds of audio
}

// Sniff names the format of b from its first bytes ("" when it is none of
// them): "RIFF....WAVE", "fLaC", or an ID3v2 tag or MPEG audio frame sync.
func Sniff(b []byte) string {
	switch {
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return WAV
	case len(b) >= 4 && string(b[:4]) == "fLaC":
		return FLAC
	case len(b) >= 3 && string(b[:3]) == "ID3":
		return MP3
	case len(b) >= 4:
		if _, err := parseMP3Frame(b); err == nil {
			return MP3
		}
	}
	return ""
}

// Inspect identifies b by its first bytes and measures its duration. Errors
// say what is wrong and where (byte offsets).
func Inspect(b []byte) (Info, error) {
	switch Sniff(b) {
	case WAV:
		f, pcm, err := wav.Decode(b)
		if err != nil {
			return Info{}, err
		}
		bpf := f.BytesPerFrame()
		if bpf <= 0 || f.SampleRate <= 0 {
			return Info{}, fmt.Errorf("wav: %d channels of %d bits at %d Hz is not playable audio", f.Channels, f.BitsPerSample, f.SampleRate)
		}
		return Info{Format: WAV, SampleRate: f.SampleRate, DurationS: float64(len(pcm)/bpf) / float64(f.SampleRate)}, nil
	case FLAC:
		return inspectFLAC(b)
	case MP3:
		return inspectMP3(b)
	}
	return Info{}, fmt.Errorf("not WAV, FLAC or MP3 audio (starts with %q)", b[:min(len(b), 4)])
}

// inspectFLAC reads the STREAMINFO block, which must come first: sample
// rate (20 bits) and total samples (36 bits) at bits 80 and 108 of it.
func inspectFLAC(b []byte) (Info, error) {
	const need = 4 + 4 + 34
	if len(b) < need {
		return Info{}, fmt.Errorf("flac: %d bytes; the STREAMINFO block ends at byte %d", len(b), need)
	}
	if typ := b[4] & 0x7f; typ != 0 {
		return Info{}, fmt.Errorf("flac: byte 4: first metadata block has type %d, want STREAMINFO (0)", typ)
	}
	if n := int(b[5])<<16 | int(b[6])<<8 | int(b[7]); n != 34 {
		return Info{}, fmt.Errorf("flac: byte 5: STREAMINFO length %d, want 34", n)
	}
	si := b[8:]
	v := binary.BigEndian.Uint64(si[10:18])
	rate := int(v >> 44)
	total := v & (1<<36 - 1)
	if rate == 0 {
		return Info{}, errors.New("flac: byte 18: STREAMINFO sample rate is 0")
	}
	if total == 0 {
		return Info{}, errors.New("flac: byte 21: STREAMINFO states no sample count; the duration is unknown")
	}
	return Info{Format: FLAC, SampleRate: rate, DurationS: float64(total) / float64(rate)}, nil
}

// mp3Frame is one parsed MPEG audio frame header.
type mp3Frame struct {
	size, samples, rate int
}

var (
	mp3Rates = [3][3]int{ // [version: MPEG1, MPEG2, MPEG2.5][index]
		{44100, 48000, 32000}, {22050, 24000, 16000}, {11025, 12000, 8000},
	}
	// kbit/s by [MPEG1?][layer I, II, III][index 1..14].
	mp3Bitrates = [2][3][15]int{
		{ // MPEG2 and 2.5
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		},
		{ // MPEG1
			{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
			{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
		},
	}
)

// parseMP3Frame parses the 4-byte frame header at the start of b.
func parseMP3Frame(b []byte) (mp3Frame, error) {
	if len(b) < 4 {
		return mp3Frame{}, errors.New("truncated frame header")
	}
	if b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return mp3Frame{}, fmt.Errorf("no frame sync (found % x)", b[:2])
	}
	ver := (b[1] >> 3) & 3 // 0 MPEG2.5, 1 reserved, 2 MPEG2, 3 MPEG1
	layerBits := (b[1] >> 1) & 3
	bri := int(b[2] >> 4)
	sri := int(b[2]>>2) & 3
	pad := int(b[2]>>1) & 1
	switch {
	case ver == 1:
		return mp3Frame{}, errors.New("reserved MPEG version")
	case layerBits == 0:
		return mp3Frame{}, errors.New("reserved layer (not MPEG audio)")
	case bri == 0:
		return mp3Frame{}, errors.New("free-format bitrate is not supported")
	case bri == 15:
		return mp3Frame{}, errors.New("invalid bitrate index 15")
	case sri == 3:
		return mp3Frame{}, errors.New("reserved sample rate index")
	}
	layer := 4 - int(layerBits) // 1, 2 or 3
	vi := map[byte]int{3: 0, 2: 1, 0: 2}[ver]
	mpeg1 := ver == 3
	m1 := 0
	if mpeg1 {
		m1 = 1
	}
	rate := mp3Rates[vi][sri]
	bitrate := mp3Bitrates[m1][layer-1][bri] * 1000
	var f mp3Frame
	f.rate = rate
	switch {
	case layer == 1:
		f.samples = 384
		f.size = (12*bitrate/rate + pad) * 4
	case layer == 3 && !mpeg1:
		f.samples = 576
		f.size = 72*bitrate/rate + pad
	default:
		f.samples = 1152
		f.size = 144*bitrate/rate + pad
	}
	if f.size < 4 {
		return mp3Frame{}, fmt.Errorf("frame size %d is shorter than its header", f.size)
	}
	return f, nil
}

// inspectMP3 skips an ID3v2 tag and walks the frames to the end, summing
// their samples. A trailing ID3v1 or APE tag ends the walk; anything else
// that is not a frame is an error naming its offset.
func inspectMP3(b []byte) (Info, error) {
	off := 0
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
		off = 10 + size
		if b[5]&0x10 != 0 { // footer present
			off += 10
		}
		if off > len(b) {
			return Info{}, fmt.Errorf("mp3: ID3v2 tag of %d bytes runs past the end (%d bytes)", off, len(b))
		}
	}
	var samples int64
	rate, frames := 0, 0
	for off < len(b) {
		rest := b[off:]
		if len(rest) < 4 || strings.HasPrefix(string(rest), "TAG") || strings.HasPrefix(string(rest), "APETAGEX") {
			break
		}
		f, err := parseMP3Frame(rest)
		if err != nil {
			return Info{}, fmt.Errorf("mp3: byte %d: %w", off, err)
		}
		if rate != 0 && f.rate != rate {
			return Info{}, fmt.Errorf("mp3: byte %d: sample rate changes from %d to %d Hz", off, rate, f.rate)
		}
		rate = f.rate
		samples += int64(f.samples)
		frames++
		off += f.size
	}
	if frames == 0 {
		return Info{}, fmt.Errorf("mp3: no MPEG audio frame after byte %d", off)
	}
	return Info{Format: MP3, SampleRate: rate, DurationS: float64(samples) / float64(rate)}, nil
}

// DataURL is a data: URL carrying b64 (base64 of a file of format).
func DataURL(format, b64 string) string {
	return "data:" + MIMEType(format) + ";base64," + b64
}

// ParseDataURL decodes a base64 data: URL ("data:audio/wav;base64,...").
// Only base64 payloads are accepted: audio is binary.
func ParseDataURL(u string) (mediaType string, data []byte, err error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", nil, fmt.Errorf("not a data: URL (starts with %q)", u[:min(len(u), 16)])
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, errors.New("data: URL has no ',' before its payload")
	}
	mediaType, isB64 := strings.CutSuffix(meta, ";base64")
	if !isB64 {
		return "", nil, errors.New("data: URL is not base64 (';base64' missing)")
	}
	data, err = base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("data: URL payload: %w", err)
	}
	return mediaType, data, nil
}
