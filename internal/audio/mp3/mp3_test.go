package mp3

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// frames builds n layer III frames of the given header with zero side
// information and main data.
func frames(hdr [4]byte, n int) []byte {
	h, err := parseHeader(hdr[:])
	if err != nil {
		panic(err)
	}
	f := make([]byte, h.size)
	copy(f, hdr[:])
	return bytes.Repeat(f, n)
}

func TestParseHandBuilt(t *testing.T) {
	id3 := append([]byte("ID3\x04\x00\x00\x00\x00\x01\x00"), make([]byte, 128)...) // synchsafe 128
	v1 := append([]byte("TAG"), make([]byte, 125)...)
	tests := []struct {
		name     string
		file     []byte
		rate, ch int
		frames   int64
		mpeg     int
	}{
		// MPEG 1, 128 kbit/s, 44.1 kHz, joint stereo: 417 bytes, no padding.
		{"mpeg1 stereo", frames([4]byte{0xff, 0xfb, 0x90, 0x40}, 10), 44100, 2, 10 * 1152, 10},
		// MPEG 1 with the padding bit: 418-byte frames.
		{"mpeg1 padded", frames([4]byte{0xff, 0xfb, 0x92, 0x40}, 3), 44100, 2, 3 * 1152, 3},
		// MPEG 2, 64 kbit/s, 24 kHz, mono, behind ID3v2 and before ID3v1.
		{"mpeg2 mono tags", append(append(id3, frames([4]byte{0xff, 0xf3, 0x84, 0xc0}, 25)...), v1...), 24000, 1, 25 * 576, 25},
		// MPEG 2.5, 8 kbit/s, 8 kHz, mono: 72 bytes.
		{"mpeg2.5", frames([4]byte{0xff, 0xe3, 0x18, 0xc0}, 7), 8000, 1, 7 * 576, 7},
	}
	for _, tc := range tests {
		info, err := Parse(tc.file)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if info.SampleRate != tc.rate || info.Channels != tc.ch || info.Frames != tc.frames || info.MPEGFrames != tc.mpeg || info.Tagged {
			t.Errorf("%s: %+v, want %d Hz, %d ch, %d samples in %d frames", tc.name, info, tc.rate, tc.ch, tc.frames, tc.mpeg)
		}
	}
	// Frame sizes against the formula by hand: 144*128000/44100 = 417.9.
	if h, _ := parseHeader([]byte{0xff, 0xfb, 0x90, 0x40}); h.size != 417 {
		t.Errorf("MPEG 1 128k 44.1k frame %d bytes, want 417", h.size)
	}
	if h, _ := parseHeader([]byte{0xff, 0xf3, 0x84, 0xc0}); h.size != 192 {
		t.Errorf("MPEG 2 64k 24k frame %d bytes, want 192", h.size)
	}
}

func TestParseErrors(t *testing.T) {
	good := frames([4]byte{0xff, 0xfb, 0x90, 0x40}, 2)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "no MPEG audio frame"},
		{"text", []byte("hello world"), "no frame sync"},
		{"cut", good[:600], "cut at byte 600"},
		{"layer II", frames([4]byte{0xff, 0xfb, 0x90, 0x40}, 1)[:4:4], "cut"},
		{"rate change", append(good, frames([4]byte{0xff, 0xfb, 0x94, 0x40}, 1)...), "48000 Hz"},
		{"id3 past end", []byte("ID3\x04\x00\x00\x00\x00\x7f\x00"), "runs past the end"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.file)
		if err == nil || !errors.Is(err, ErrMP3) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrMP3 with %q", tc.name, err, tc.want)
		}
	}
	if _, err := parseHeader([]byte{0xff, 0xfd, 0x90, 0x40}); err == nil || !strings.Contains(err.Error(), "layer II") {
		t.Errorf("layer II header: %v", err)
	}
}

// TestEncodeSilence: the writer's files measure to the sample by Parse,
// decode to exactly that many zero samples, and state a wrong count
// nowhere (a frame more or less than the Info header states is refused).
func TestEncodeSilence(t *testing.T) {
	for _, tc := range []struct {
		rate, ch int
		n        int64
	}{{24000, 1, 24000}, {44100, 2, 12345}, {8000, 1, 1}, {16000, 1, 1}, {48000, 2, 0}, {22050, 2, 576 * 3}} {
		file, err := EncodeSilence(tc.rate, tc.ch, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		info, err := Parse(file)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if info.Frames != tc.n || info.SampleRate != tc.rate || info.Channels != tc.ch || !info.Tagged || info.Delay != EncoderDelay {
			t.Errorf("%+v: parsed %+v", tc, info)
		}
		if !Decodable(info) {
			if _, err := Decode(file, info, nil); err == nil {
				t.Errorf("%+v: not Decodable, yet decoded", tc)
			}
			continue
		}
		pcm, err := Decode(file, info, nil)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if int64(len(pcm)) != tc.n*2*int64(tc.ch) || bytes.ContainsFunc(pcm, func(r rune) bool { return r != 0 }) {
			t.Errorf("%+v: decoded %d bytes (want %d), all zero: %v", tc, len(pcm), tc.n*2*int64(tc.ch), !bytes.ContainsFunc(pcm, func(r rune) bool { return r != 0 }))
		}
		last := 0
		for off := 0; off < len(file); {
			h, _ := parseHeader(file[off:])
			last, off = off, off+h.size
		}
		if _, err := Parse(file[:last]); err == nil || !strings.Contains(err.Error(), "states") {
			t.Errorf("%+v: a file one frame shorter than its Info header: %v", tc, err)
		}
	}
	if _, err := EncodeSilence(44000, 1, 1); err == nil {
		t.Error("44000 Hz accepted")
	}
}

// TestFFmpeg: FFmpeg (Debian package ffmpeg) reads the writer's file as MP3
// and decodes exactly the samples Parse counts (it honours the LAME tag's
// delay and padding). Skipped without ffmpeg unless $CI is set.
func TestFFmpeg(t *testing.T) {
	ffmpeg := lookTool(t, "ffmpeg")
	for _, tc := range []struct {
		rate, ch int
		n        int64
	}{{24000, 1, 24000}, {44100, 2, 12345}} {
		file, err := EncodeSilence(tc.rate, tc.ch, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "a.mp3")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), ffmpeg, "-v", "error", "-i", path, "-f", "s16le", "-acodec", "pcm_s16le", "-").Output()
		if err != nil {
			t.Fatalf("ffmpeg: %v", err)
		}
		if int64(len(out)) != tc.n*2*int64(tc.ch) {
			t.Errorf("%+v: ffmpeg decoded %d bytes, want %d", tc, len(out), tc.n*2*int64(tc.ch))
		}
		probe, err := exec.CommandContext(t.Context(), ffmpeg[:len(ffmpeg)-len("ffmpeg")]+"ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", path).Output()
		if want := "mp3," + strconv.Itoa(tc.rate) + "," + strconv.Itoa(tc.ch); err != nil || strings.TrimSpace(string(probe)) != want {
			t.Errorf("ffprobe: %q (%v), want %q", probe, err, want)
		}
	}
}

func lookTool(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (the CI installs the Debian package ffmpeg)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

func FuzzParse(f *testing.F) {
	f.Add(frames([4]byte{0xff, 0xfb, 0x90, 0x40}, 2))
	s, _ := EncodeSilence(24000, 1, 5000)
	f.Add(s)
	f.Add([]byte("ID3\x04\x00\x10\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Parse(b)
		if err != nil {
			return
		}
		if info.Frames < 0 || info.Frames > MaxFrames || info.SampleRate == 0 {
			t.Fatalf("accepted %+v", info)
		}
		if pcm, err := Decode(b, info, nil); err == nil && int64(len(pcm)) != info.Frames*2*int64(info.Channels) {
			t.Fatalf("decoded %d bytes for %+v", len(pcm), info)
		}
	})
}

// TestFFmpegFile: testdata/onset.mp3 was made by FFmpeg's libmp3lame
// (ffmpeg -f lavfi -i "aevalsrc=if(gte(t\,0.1)\,0.5*sin(2*PI*440*t)\,0):
// s=24000:d=0.3" -ac 1 -c:a libmp3lame -b:a 32k -id3v2_version 3): an ID3v2
// tag, an Info frame with a "Lavc" LAME extension, 0.3 s at 24 kHz. Parse
// counts exactly 7200 samples (FFmpeg decodes 14400 bytes), and the decoded
// tone starts at 0.1 s, sample 2400 (within 50 samples of pre-echo), not the
// 1681 samples (Info frame, encoder and decoder delay) late an untrimmed
// decode would put it.
func TestFFmpegFile(t *testing.T) {
	data, err := os.ReadFile("testdata/onset.mp3")
	if err != nil {
		t.Fatal(err)
	}
	info, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != 7200 || info.SampleRate != 24000 || info.Channels != 1 || !info.Tagged || info.ID3v2 == 0 || info.Delay == 0 {
		t.Fatalf("%+v", info)
	}
	pcm, err := Decode(data, info, nil)
	if err != nil || len(pcm) != 14400 {
		t.Fatalf("decoded %d bytes (%v), want 14400", len(pcm), err)
	}
	first := -1
	for i := 0; i < len(pcm); i += 2 {
		if v := int16(uint16(pcm[i]) | uint16(pcm[i+1])<<8); v > 104 || v < -104 { // -50 dBFS
			first = i / 2
			break
		}
	}
	t.Logf("first sample above -50 dBFS: %d", first)
	if first < 2400-50 || first > 2400+24 {
		t.Errorf("first sample above -50 dBFS at %d, want near 2400", first)
	}
}
