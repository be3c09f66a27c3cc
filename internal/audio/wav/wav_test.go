package wav

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
)

var mono24k = Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}

// chunk builds one RIFF chunk with its pad byte.
func chunk(id string, payload []byte) []byte {
	b := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))...)
	b = append(b, payload...)
	if len(payload)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// riff wraps chunks in a RIFF/WAVE header with a correct size.
func riff(chunks ...[]byte) []byte {
	body := bytes.Join(chunks, nil)
	b := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(body)))...)
	return append(append(b, "WAVE"...), body...)
}

// pcmFmt is a 16-byte PCM fmt payload.
func pcmFmt(tag uint16, f Format) []byte {
	le := binary.LittleEndian
	b := le.AppendUint16(nil, tag)
	b = le.AppendUint16(b, uint16(f.Channels))
	b = le.AppendUint32(b, uint32(f.SampleRate))
	b = le.AppendUint32(b, uint32(f.SampleRate*f.BytesPerFrame()))
	b = le.AppendUint16(b, uint16(f.BytesPerFrame()))
	return le.AppendUint16(b, uint16(f.BitsPerSample))
}

// extensibleFmt is a 40-byte WAVE_FORMAT_EXTENSIBLE payload with the given
// sub-format tag.
func extensibleFmt(f Format, subTag uint16) []byte {
	le := binary.LittleEndian
	b := pcmFmt(tagExtensible, f)
	b = le.AppendUint16(b, 22)                      // cbSize
	b = le.AppendUint16(b, uint16(f.BitsPerSample)) // valid bits
	b = le.AppendUint32(b, 4)                       // channel mask: front center
	b = le.AppendUint16(b, subTag)
	return append(b, guidTail...)
}

func TestAppendHeaderMatchesProtocolExample(t *testing.T) {
	// Independent reference: the base64 audio prefix in the example of
	// docs/reference/http-streams.md, section 2.3 is a 24 kHz mono s16 header
	// for 32000 bytes of PCM.
	const example = "UklGRiR9AABXQVZFZm10IBAAAAABAAEAwF0AAIC7AAACABAAZGF0YQB9AAA"
	h := AppendHeader(nil, mono24k, 32000)
	if len(h) != HeaderSize {
		t.Fatalf("header is %d bytes, want %d", len(h), HeaderSize)
	}
	// 58 characters encode the first 43.5 bytes, independent of what follows.
	if got := base64.StdEncoding.EncodeToString(h)[:58]; got != example[:58] {
		t.Fatalf("header base64 %s, want %s", got, example[:58])
	}
	// Hand-computed fields of a 3840-byte (80 ms) chunk.
	want := []byte("RIFF\x24\x0F\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\xC0\x5D\x00\x00\x80\xBB\x00\x00\x02\x00\x10\x00data\x00\x0F\x00\x00")
	if got := AppendHeader([]byte("x"), mono24k, 3840); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Fatalf("header\n got %q\nwant %q", got, want)
	}
}

func TestParseHeaderShapes(t *testing.T) {
	pcm := []byte{1, 2, 3, 4, 5, 6}
	stereo8 := Format{SampleRate: 8000, Channels: 2, BitsPerSample: 8}
	mono24 := Format{SampleRate: 48000, Channels: 1, BitsPerSample: 24}
	cases := []struct {
		name    string
		in      []byte
		want    Header
		wantPCM []byte
	}{
		{"canonical", Encode(mono24k, pcm), Header{Format: mono24k, DataOffset: 44, DataSize: 6}, pcm},
		{"LIST before data",
			riff(chunk("fmt ", pcmFmt(1, mono24k)), chunk("LIST", []byte("INFOISFT\x0e\x00\x00\x00Lavf61.7.100\x00\x00")), chunk("data", pcm)),
			Header{Format: mono24k, DataOffset: 78, DataSize: 6}, pcm},
		{"odd chunk padded",
			riff(chunk("fmt ", pcmFmt(1, mono24k)), chunk("junk", []byte{9, 9, 9}), chunk("data", pcm)),
			Header{Format: mono24k, DataOffset: 56, DataSize: 6}, pcm},
		{"fact and fmt with cbSize",
			riff(chunk("fact", []byte{3, 0, 0, 0}), chunk("fmt ", append(pcmFmt(1, mono24k), 0, 0)), chunk("data", pcm)),
			Header{Format: mono24k, DataOffset: 58, DataSize: 6}, pcm},
		{"extensible", riff(chunk("fmt ", extensibleFmt(mono24k, 1)), chunk("data", pcm)),
			Header{Format: mono24k, DataOffset: 68, DataSize: 6}, pcm},
		{"8-bit stereo", Encode(stereo8, pcm), Header{Format: stereo8, DataOffset: 44, DataSize: 6}, pcm},
		{"24-bit", Encode(mono24, pcm), Header{Format: mono24, DataOffset: 44, DataSize: 6}, pcm},
		{"odd 8-bit data", Encode(stereo8, pcm[:5]), Header{Format: stereo8, DataOffset: 44, DataSize: 5}, pcm[:5]},
		{"trailing LIST after data", riff(chunk("fmt ", pcmFmt(1, mono24k)), chunk("data", pcm), chunk("LIST", []byte("INFO"))),
			Header{Format: mono24k, DataOffset: 44, DataSize: 6}, pcm},
		{"streaming", append(AppendHeader(nil, mono24k, UnknownSize), pcm...),
			Header{Format: mono24k, DataOffset: 44, DataSize: -1, Streaming: true}, pcm},
		{"streaming header alone", AppendHeader(nil, mono24k, UnknownSize),
			Header{Format: mono24k, DataOffset: 44, DataSize: -1, Streaming: true}, []byte{}},
		{"streaming RIFF size only", append(setU32(AppendHeader(nil, mono24k, 2), 4, 0xFFFFFFFF), pcm...),
			Header{Format: mono24k, DataOffset: 44, DataSize: -1, Streaming: true}, pcm},
		{"placeholder sizes with PCM", append(setU32(AppendHeader(nil, mono24k, 0), 4, 36), pcm...),
			Header{Format: mono24k, DataOffset: 44, DataSize: -1, Streaming: true, Placeholder: true}, pcm},
		{"zero RIFF and data sizes", append(setU32(AppendHeader(nil, mono24k, 0), 4, 0), pcm...),
			Header{Format: mono24k, DataOffset: 44, DataSize: -1, Streaming: true, Placeholder: true}, pcm},
		// An empty file and a placeholder header that arrived alone look
		// the same: sized 0 here, and flagged for stream readers.
		{"empty file", AppendHeader(nil, mono24k, 0), Header{Format: mono24k, DataOffset: 44, DataSize: 0, Placeholder: true}, []byte{}},
		{"empty data then LIST", riff(chunk("fmt ", pcmFmt(1, mono24k)), chunk("data", nil), chunk("LIST", []byte("INFO"))),
			Header{Format: mono24k, DataOffset: 44, DataSize: 0}, []byte{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ParseHeader(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if h != tc.want {
				t.Fatalf("header %+v, want %+v", h, tc.want)
			}
			f, got, err := Decode(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if f != tc.want.Format || !bytes.Equal(got, tc.wantPCM) {
				t.Fatalf("Decode = %+v %v, want %+v %v", f, got, tc.want.Format, tc.wantPCM)
			}
		})
	}
}

func setU32(b []byte, off int, v uint32) []byte {
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

func TestBytesPerFrame(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		want int
	}{
		{mono24k, 2},
		{Format{SampleRate: 8000, Channels: 2, BitsPerSample: 8}, 2},
		{Format{SampleRate: 48000, Channels: 1, BitsPerSample: 24}, 3},
		{Format{SampleRate: 44100, Channels: 2, BitsPerSample: 16}, 4},
	} {
		if got := tc.f.BytesPerFrame(); got != tc.want {
			t.Errorf("%+v: BytesPerFrame %d, want %d", tc.f, got, tc.want)
		}
	}
	if got := mono24k.BytesPerSecond(); got != 48000 {
		t.Errorf("BytesPerSecond %d, want 48000", got)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	fmtChunk := chunk("fmt ", pcmFmt(1, mono24k))
	cases := []struct {
		name string
		in   []byte
		want string // the whole message when it starts with "wav:", else a part
	}{
		{"ID3", []byte("ID3\x03\x00\x00\x00\x00\x00\x00\x00\x00"), `wav: not a RIFF file (starts with "ID3\x03")`},
		{"empty", nil, `wav: header truncated at 0 bytes; the RIFF header needs 12`},
		{"short junk", []byte("RX"), `wav: not a RIFF file (starts with "RX")`},
		{"AVI", []byte("RIFF\x00\x00\x00\x00AVI LIST"), `wav: byte 8: RIFF form type is "AVI ", not "WAVE"`},
		{"fmt truncated", riff(fmtChunk)[:12+15], `wav: byte 12: chunk "fmt " declares 16 bytes but 7 remain`},
		{"no fmt", riff(chunk("data", []byte{0, 0})), `wav: byte 12: fmt chunk missing before data`},
		{"no data", riff(fmtChunk), `wav: byte 36: header ends before the data chunk`},
		{"half chunk header", append(riff(fmtChunk), "dat"...), `wav: byte 36: chunk header truncated (3 of 8 bytes) before the data chunk`},
		{"float", riff(chunk("fmt ", pcmFmt(3, mono24k)), chunk("data", nil)), `wav: byte 20: unsupported format tag 3 (IEEE float); only PCM`},
		{"mp3", riff(chunk("fmt ", pcmFmt(0x55, mono24k)), chunk("data", nil)), `unsupported format tag 85 (MPEG Layer 3)`},
		{"extensible float", riff(chunk("fmt ", extensibleFmt(mono24k, 3)), chunk("data", nil)), `wav: byte 44: unsupported extensible sub-format 3 (IEEE float); only PCM`},
		{"extensible bad GUID", riff(chunk("fmt ", append(extensibleFmt(mono24k, 1)[:39], 0x72)), chunk("data", nil)), `unsupported extensible sub-format GUID 0100000000001000800000aa00389b72`},
		{"extensible short", riff(chunk("fmt ", extensibleFmt(mono24k, 1)[:18]), chunk("data", nil)), `extensible fmt chunk is 18 bytes; it needs 40`},
		{"short fmt", riff(chunk("fmt ", pcmFmt(1, mono24k)[:14]), chunk("data", nil)), `wav: byte 12: fmt chunk is 14 bytes; PCM needs at least 16`},
		{"zero channels", riff(chunk("fmt ", pcmFmt(1, Format{SampleRate: 8000, BitsPerSample: 16})), chunk("data", nil)), `byte 22: fmt chunk declares 0 channels`},
		{"zero rate", riff(chunk("fmt ", pcmFmt(1, Format{Channels: 1, BitsPerSample: 16})), chunk("data", nil)), `byte 24: fmt chunk declares a sample rate of 0`},
		{"12 bits", riff(chunk("fmt ", pcmFmt(1, Format{SampleRate: 8000, Channels: 1, BitsPerSample: 12})), chunk("data", nil)), `byte 34: 12 bits per sample is not a whole number of bytes`},
		{"huge LIST", append(riff(fmtChunk), "LIST\xff\xff\xff\x7fINFO"...), `wav: byte 36: chunk "LIST" declares 2147483647 bytes but 4 remain`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHeader(tc.in)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.HasPrefix(tc.want, "wav:") && err.Error() != tc.want || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want %q", err, tc.want)
			}
			if _, _, derr := Decode(tc.in); derr == nil || derr.Error() != err.Error() {
				t.Fatalf("Decode error %v, want the ParseHeader error", derr)
			}
		})
	}
}

func TestDecodeDataTooLong(t *testing.T) {
	b := Encode(mono24k, make([]byte, 3840))[:1000]
	if _, err := ParseHeader(b); err != nil {
		t.Fatalf("a header alone must parse: %v", err)
	}
	_, _, err := Decode(b)
	if want := "wav: byte 36: data chunk declares 3840 bytes but 956 remain"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestTruncatedHeaders(t *testing.T) {
	for _, full := range [][]byte{
		Encode(mono24k, []byte{1, 2}),
		AppendHeader(nil, mono24k, UnknownSize),
		AppendHeader(nil, mono24k, 0),
	} {
		for n := range HeaderSize {
			if _, err := ParseHeader(full[:n]); err == nil {
				t.Errorf("%d-byte prefix of %q parsed without error", n, full[:12])
			}
			if _, _, err := Decode(full[:n]); err == nil {
				t.Errorf("%d-byte prefix of %q decoded without error", n, full[:12])
			}
		}
	}
}

func TestDecodeAliases(t *testing.T) {
	b := append(Encode(mono24k, []byte{1, 2, 3, 4}), "LIST\x04\x00\x00\x00INFO"...)
	_, pcm, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if &pcm[0] != &b[HeaderSize] {
		t.Fatal("PCM is a copy, want a slice of the input")
	}
	if cap(pcm) != 4 {
		t.Fatalf("PCM capacity %d, want 4 so appends cannot overwrite the input", cap(pcm))
	}
}

func TestEncodePadsOddData(t *testing.T) {
	f := Format{SampleRate: 8000, Channels: 1, BitsPerSample: 8}
	b := Encode(f, []byte{1, 2, 3})
	if len(b) != HeaderSize+4 || b[len(b)-1] != 0 {
		t.Fatalf("encoded %d bytes %v, want 44+3+pad", len(b), b[HeaderSize:])
	}
	if riffSize := binary.LittleEndian.Uint32(b[4:]); riffSize != uint32(len(b)-8) {
		t.Fatalf("RIFF size %d, want %d (the file minus 8)", riffSize, len(b)-8)
	}
}

func TestDecodeZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	b := Encode(mono24k, make([]byte, 3840))
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := Decode(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Decode allocates %.1f times, want 0", allocs)
	}
}

func BenchmarkDecode(b *testing.B) {
	file := Encode(mono24k, make([]byte, 3840)) // one 80 ms chunk
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Decode(file); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	pcm := make([]byte, 3840)
	b.SetBytes(int64(len(pcm)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Encode(mono24k, pcm)
	}
}
