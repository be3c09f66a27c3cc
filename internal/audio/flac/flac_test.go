package flac

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

func tone(frames, channels int) []byte {
	b := make([]byte, 0, 2*frames*channels)
	for n := range frames {
		for c := range channels {
			v := int16(8000 * math.Sin(2*math.Pi*440*float64(n)/24000+float64(c)))
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		}
	}
	return b
}

// TestRoundTrip: Encode then Decode gives the PCM back, and STREAMINFO the
// frame count, for block-size multiples, odd lengths and stereo.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct{ frames, channels int }{{7680, 1}, {4096, 1}, {4097, 1}, {1, 1}, {10000, 2}, {0, 1}} {
		f := wav.Format{SampleRate: 24000, Channels: tc.channels, BitsPerSample: 16}
		pcm := tone(tc.frames, tc.channels)
		file, err := Encode(f, pcm)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		info, out, got, err := Decode(file, nil)
		if err != nil {
			t.Fatalf("%+v: decode: %v", tc, err)
		}
		if info.Frames != int64(tc.frames) || info.Format != f || out != f || !bytes.Equal(got, pcm) {
			t.Errorf("%+v: info %+v out %+v, %d PCM bytes equal %v", tc, info, out, len(got), bytes.Equal(got, pcm))
		}
	}
}

// TestDecodeErrors: a cut file, a declared count the frames do not hold,
// not FLAC at all: errors wrapping ErrFLAC, never a panic.
func TestDecodeErrors(t *testing.T) {
	file, _ := Encode(wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}, tone(9000, 1))
	for name, b := range map[string][]byte{
		"cut":      file[:len(file)-100],
		"not flac": []byte("RIFF....WAVEfmt "),
		"empty":    nil,
		"header only": func() []byte {
			return file[:42] // signature + STREAMINFO, no frames: declares 9000 samples
		}(),
	} {
		if _, _, _, err := Decode(b, nil); !errors.Is(err, ErrFLAC) {
			t.Errorf("%s: err %v, want ErrFLAC", name, err)
		}
	}
}

// TestSoxReadsIt: sox (when installed) reads the encoded file and agrees on
// rate, channels and length: the file is valid FLAC for an independent decoder.
func TestSoxReadsIt(t *testing.T) {
	sox, err := exec.LookPath("sox")
	if err != nil {
		t.Skip("sox not installed")
	}
	file, err := Encode(wav.Format{SampleRate: 24000, Channels: 2, BitsPerSample: 16}, tone(12345, 2))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.flac")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{"-r": "24000", "-c": "2", "-s": "12345", "-b": "16"} {
		out, err := exec.CommandContext(t.Context(), sox, "--i", flag, path).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("sox --i %s: %q (%v), want %s", flag, out, err, want)
		}
	}
	// Decode to raw and compare the samples.
	raw := filepath.Join(t.TempDir(), "a.raw")
	if out, err := exec.CommandContext(t.Context(), sox, path, "-t", "raw", "-e", "signed", "-b", "16", "-L", raw).CombinedOutput(); err != nil {
		t.Fatalf("sox decode: %v: %s", err, out)
	}
	got, _ := os.ReadFile(raw)
	if want := tone(12345, 2); !bytes.Equal(got, want) {
		t.Errorf("sox decodes %d bytes, differing from the %d encoded (n=%s)", len(got), len(want), strconv.Itoa(len(got)))
	}
}

// FuzzDecode: any bytes give a result or an ErrFLAC error, no panic, and a
// decoded file's PCM holds exactly its frames.
func FuzzDecode(f *testing.F) {
	file, _ := Encode(wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}, tone(500, 1))
	f.Add(file)
	f.Add(file[:50])
	f.Add([]byte("fLaC"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if hinfo, first, err := ParseHeader(b); err == nil {
			if first < 4 || first > len(b) || hinfo.Format.SampleRate <= 0 || hinfo.Format.Channels < 1 || hinfo.Format.Channels > 8 {
				t.Fatalf("header %+v, first frame at %d of %d bytes", hinfo, first, len(b))
			}
			_ = Decodable(b, first)
		} else if !errors.Is(err, ErrFLAC) {
			t.Fatalf("header error %v does not wrap ErrFLAC", err)
		}
		info, out, pcm, err := Decode(b, nil)
		if err != nil {
			if !errors.Is(err, ErrFLAC) {
				t.Fatalf("error %v does not wrap ErrFLAC", err)
			}
			return
		}
		if out.Channels > 0 && int64(len(pcm)) != info.Frames*int64(2*out.Channels) {
			t.Fatalf("%d PCM bytes for %d frames of %d channels", len(pcm), info.Frames, out.Channels)
		}
	})
}

// TestParseHeaderAndDecodable: the STREAMINFO parser agrees with the
// encoder; the simulator's files are decodable; a file coding 24 kHz in
// its frame headers (as libFLAC writes, here made by sox when installed)
// is measured from STREAMINFO and not decoded.
func TestParseHeaderAndDecodable(t *testing.T) {
	file, _ := Encode(wav.Format{SampleRate: 24000, Channels: 2, BitsPerSample: 16}, tone(5000, 2))
	info, first, err := ParseHeader(file)
	if err != nil || info.Frames != 5000 || info.Format != (wav.Format{SampleRate: 24000, Channels: 2, BitsPerSample: 16}) || first != 42 {
		t.Fatalf("ParseHeader: %+v, first frame %d, %v", info, first, err)
	}
	if !Decodable(file, first) {
		t.Error("the simulator's file is not decodable")
	}
	coded := append([]byte(nil), file...)
	coded[first+2] = coded[first+2]&0xf0 | 0x7
	if Decodable(coded, first) {
		t.Error("a frame coding 24 kHz counted decodable")
	}
	for name, b := range map[string][]byte{"short": file[:20], "no signature": file[4:], "cut block": file[:30]} {
		if _, _, err := ParseHeader(b); !errors.Is(err, ErrFLAC) {
			t.Errorf("%s: %v, want ErrFLAC", name, err)
		}
	}

	sox, err := exec.LookPath("sox")
	if err != nil {
		t.Skip("sox not installed: no libFLAC-made file to check")
	}
	dir := t.TempDir()
	raw, out := filepath.Join(dir, "a.raw"), filepath.Join(dir, "a.flac")
	if err := os.WriteFile(raw, tone(7777, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.CommandContext(t.Context(), sox, "-r", "24000", "-e", "signed", "-b", "16", "-c", "1", "-L", raw, out).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v: %s", err, b)
	}
	b, _ := os.ReadFile(out)
	info, first, err = ParseHeader(b)
	if err != nil || info.Frames != 7777 || info.Format.SampleRate != 24000 || info.Format.Channels != 1 {
		t.Errorf("sox's file: %+v, %v", info, err)
	}
	if Decodable(b, first) {
		t.Error("sox's 24 kHz file counted decodable (its frames code 24 kHz)")
	}
}
