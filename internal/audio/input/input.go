package input

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/audio/flac"
	"github.com/omnibench/omnibench/internal/audio/mp3"
	"github.com/omnibench/omnibench/internal/audio/wav"
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
		if mp3.IsFrameHeader(b) {
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

// inspectFLAC measures a FLAC file from its STREAMINFO block with
// flac, the parser FLAC responses go through.
func inspectFLAC(b []byte) (Info, error) {
	info, _, err := flac.ParseHeader(b)
	if err != nil {
		return Info{}, err
	}
	if info.Frames == 0 {
		return Info{}, errors.New("flac: STREAMINFO states no sample count; the duration is unknown")
	}
	return Info{Format: FLAC, SampleRate: info.Format.SampleRate, DurationS: float64(info.Frames) / float64(info.Format.SampleRate)}, nil
}

// inspectMP3 measures an MP3 file with mp3, the parser the client
// measures MP3 responses with: one reading of MPEG frame headers (ID3 tags,
// Xing/Info frames and LAME encoder delay included) for audio in and out.
func inspectMP3(b []byte) (Info, error) {
	info, err := mp3.Parse(b)
	if err != nil {
		return Info{}, err
	}
	return Info{Format: MP3, SampleRate: info.SampleRate, DurationS: float64(info.Frames) / float64(info.SampleRate)}, nil
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
