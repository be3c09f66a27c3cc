package opus

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCRC against an independent reference: the Ogg CRC is CRC-32/CKSUM
// (polynomial 0x04C11DB7, initial value 0, not reflected) without its final
// XOR with 0xFFFFFFFF, so its check value for "123456789" is the catalogued
// 0x765E7680 XOR 0xFFFFFFFF = 0x89A1897F.
func TestCRC(t *testing.T) {
	if got := crc32([]byte("123456789")); got != 0x89a1897f {
		t.Errorf("crc32 = %08x, want 89a1897f", got)
	}
}

func TestEncodeParse(t *testing.T) {
	for _, tc := range []struct {
		ch int
		n  int64
	}{{1, 24000 * 2}, {2, 12345}, {1, 0}, {1, 960 - PreSkip}, {2, 48000 * 3}} {
		file, err := EncodeSilence(tc.ch, 24000, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		info, err := Parse(file)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		wantPackets := int((tc.n + PreSkip + 959) / 960)
		if info.Frames != tc.n || info.Channels != tc.ch || info.PreSkip != PreSkip || info.InputRate != 24000 || info.Packets != wantPackets || info.Vendor == "" {
			t.Errorf("%+v: %+v (want %d packets)", tc, info, wantPackets)
		}
	}
}

// TestParseHandBuilt: packets continued across pages, and the duration from
// the last granule position, for a stream built page by page here.
func TestParseHandBuilt(t *testing.T) {
	var file []byte
	seq := uint32(0)
	page := func(flags byte, granule int64, lacing []byte, body []byte) {
		b := append([]byte("OggS"), 0, flags)
		b = append32(append32(b, uint32(granule)), uint32(granule>>32))
		b = append32(append32(b, 7), seq)
		b = append32(b, 0)
		b = append(append(b, byte(len(lacing))), lacing...)
		b = append(b, body...)
		c := crc32(b)
		b[22], b[23], b[24], b[25] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		file = append(file, b...)
		seq++
	}
	head := append([]byte("OpusHead"), 1, 2, 0x38, 0x01) // pre-skip 312
	head = append32(head, 16000)
	head = append(head, 0, 0, 0)
	page(2, 0, []byte{19}, head)
	tags := append32([]byte("OpusTags"), 1)
	tags = append32(append(tags, 'x'), 0)
	page(0, 0, []byte{byte(len(tags))}, tags)
	// A 300-byte packet split over two pages (255 on the first, continued),
	// then a 3-byte packet: 2 packets of 20 ms.
	big := make([]byte, 300)
	big[0] = 0xfc
	page(0, -1, []byte{255}, big[:255])
	page(1|4, 312+1500, []byte{45, 3}, append(big[255:], 0xfc, 0xff, 0xfe))
	info, err := Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != 1500 || info.Channels != 2 || info.Packets != 2 || info.Pages != 4 || info.InputRate != 16000 || info.Vendor != "x" {
		t.Errorf("%+v", info)
	}

	// Damage: every one refused, naming the page.
	bad := func(name, want string, f []byte) {
		t.Helper()
		if _, err := Parse(f); err == nil || !errors.Is(err, ErrOpus) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrOpus with %q", name, err, want)
		}
	}
	flip := append([]byte(nil), file...)
	flip[len(flip)-1] ^= 1
	bad("crc", "CRC-32", flip)
	bad("cut inside a packet", "ends inside a packet", file[:len(file)-(27+2+48)])
	long, _ := EncodeSilence(1, 0, 48000*3)
	last := 0
	for off := 0; off < len(long); {
		p, err := parsePage(long[off:])
		if err != nil {
			t.Fatal(err)
		}
		last, off = off, off+p.size
	}
	bad("cut at a page", "no end-of-stream", long[:last])
	bad("truncated page", "cut", file[:len(file)-1])
	bad("not ogg", "capture pattern", []byte("RIFF0000000000000000000000000000"))
	bad("empty", "no Ogg page", nil)
	twice := append(append([]byte(nil), file...), file[:27+1+19]...)
	bad("page after EOS", "after the end-of-stream", twice)
}

// TestFFmpeg: FFmpeg (Debian package ffmpeg) reads the writer's file as
// Opus and decodes exactly the samples Parse counts, honouring pre-skip and
// end trimming. Skipped without ffmpeg unless $CI is set.
func TestFFmpeg(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg not installed (the CI installs the Debian package ffmpeg)")
		}
		t.Skip("ffmpeg not installed")
	}
	for _, tc := range []struct {
		ch int
		n  int64
	}{{1, 48000}, {2, 12345}} {
		file, err := EncodeSilence(tc.ch, 24000, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "a.opus")
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
		for i, b := range out {
			if b != 0 {
				t.Errorf("%+v: byte %d of the decoded audio is %d, want silence", tc, i, b)
				break
			}
		}
		probe, err := exec.CommandContext(t.Context(), filepath.Join(filepath.Dir(ffmpeg), "ffprobe"), "-v", "error", "-show_entries", "stream=codec_name,channels", "-of", "csv=p=0", path).Output()
		if want := "opus," + strconv.Itoa(tc.ch); err != nil || strings.TrimSpace(string(probe)) != want {
			t.Errorf("ffprobe: %q (%v), want %q", probe, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	s, _ := EncodeSilence(2, 24000, 5000)
	f.Add(s)
	f.Add([]byte("OggS"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Parse(b)
		if err != nil {
			return
		}
		if info.Frames < 0 || info.Frames > MaxFrames || info.Channels == 0 {
			t.Fatalf("accepted %+v", info)
		}
	})
}
