package input

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// flacHeader builds "fLaC" and a last STREAMINFO block stating rate and
// total samples (16-bit mono), the layout of the FLAC format specification.
func flacHeader(rate int, total uint64) []byte {
	b := []byte("fLaC")
	b = append(b, 0x80, 0, 0, 34) // last block, type 0, length 34
	si := make([]byte, 34)
	binary.BigEndian.PutUint16(si[0:], 4096)
	binary.BigEndian.PutUint16(si[2:], 4096)
	// sample rate 20 bits | channels-1 3 bits | bps-1 5 bits | total 36 bits
	v := uint64(rate)<<44 | uint64(0)<<41 | uint64(15)<<36 | total
	binary.BigEndian.PutUint64(si[10:], v)
	return append(b, si...)
}

// mp3Frames builds n frames of the given 4-byte header padded to size.
func mp3Frames(hdr [4]byte, size, n int) []byte {
	var b []byte
	for range n {
		f := make([]byte, size)
		copy(f, hdr[:])
		b = append(b, f...)
	}
	return b
}

func TestInspect(t *testing.T) {
	wav16k := wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, make([]byte, 2*16000*3/2))
	id3 := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x0a"), make([]byte, 10)...) // 10-byte body
	tests := []struct {
		name   string
		in     []byte
		format string
		rate   int
		dur    float64
	}{
		{"wav 1.5 s", wav16k, WAV, 16000, 1.5},
		{"flac 2 s", flacHeader(48000, 96000), FLAC, 48000, 2},
		// MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: 417-byte frames of 1152 samples.
		{"mp3 mpeg1", mp3Frames([4]byte{0xff, 0xfb, 0x90, 0x00}, 417, 10), MP3, 44100, 10 * 1152 / 44100.0},
		// MPEG-2 Layer III, 64 kbit/s, 24 kHz: 192-byte frames of 576 samples.
		{"mp3 mpeg2 with ID3v2 and ID3v1", append(append(id3, mp3Frames([4]byte{0xff, 0xf3, 0x84, 0x00}, 192, 25)...), append([]byte("TAG"), make([]byte, 125)...)...), MP3, 24000, 25 * 576 / 24000.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sniff(tt.in); got != tt.format {
				t.Errorf("Sniff = %q, want %q", got, tt.format)
			}
			info, err := Inspect(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != tt.format || info.SampleRate != tt.rate || math.Abs(info.DurationS-tt.dur) > 1e-12 {
				t.Errorf("got %+v, want %s %d Hz %v s", info, tt.format, tt.rate, tt.dur)
			}
		})
	}
}

func TestInspectRejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"text", []byte("hello world"), "not WAV, FLAC or MP3"},
		{"empty", nil, "not WAV, FLAC or MP3"},
		{"wav short data", wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, make([]byte, 100))[:80], "declares 100 bytes"},
		{"flac truncated", flacHeader(16000, 10)[:20], "declares 34 bytes, 12 remain"},
		{"flac no length", flacHeader(16000, 0), "no sample count"},
		{"mp3 garbage after frames", append(mp3Frames([4]byte{0xff, 0xfb, 0x90, 0x00}, 417, 2), []byte("garbage!")...), "byte 834"},
		{"mp3 free format", []byte{0xff, 0xfb, 0x00, 0x00, 1, 2, 3}, "not WAV, FLAC or MP3"},
		{"id3 past end", []byte("ID3\x04\x00\x00\x00\x00\x01\x00"), "runs past the end"},
	}
	for _, tt := range tests {
		if _, err := Inspect(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestDataURLRoundTrip(t *testing.T) {
	data := []byte("RIFF\x00\x01\x02\xff")
	u := DataURL(WAV, base64.StdEncoding.EncodeToString(data))
	if !strings.HasPrefix(u, "data:audio/wav;base64,") {
		t.Errorf("url %q", u)
	}
	mt, got, err := ParseDataURL(u)
	if err != nil || mt != "audio/wav" || !bytes.Equal(got, data) {
		t.Errorf("ParseDataURL = %q, %q, %v", mt, got, err)
	}
	for _, bad := range []string{"http://x/a.wav", "data:audio/wav,abc", "data:audio/wav;base64", "data:audio/wav;base64,@@@"} {
		if _, _, err := ParseDataURL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzInspect(f *testing.F) {
	f.Add(wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, make([]byte, 64)))
	f.Add(flacHeader(44100, 1000))
	f.Add(mp3Frames([4]byte{0xff, 0xfb, 0x90, 0x00}, 417, 2))
	f.Add([]byte("ID3\x04\x00\x10\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Inspect(b)
		if err != nil {
			return
		}
		if info.DurationS < 0 || math.IsNaN(info.DurationS) || math.IsInf(info.DurationS, 0) || info.SampleRate <= 0 {
			t.Fatalf("bad info %+v", info)
		}
	})
}

func FuzzParseDataURL(f *testing.F) {
	f.Add("data:audio/wav;base64,UklGRg==")
	f.Add("data:,")
	f.Fuzz(func(t *testing.T, u string) {
		_, _, _ = ParseDataURL(u) // must not panic
	})
}
