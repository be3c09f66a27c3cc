package wav

import (
	"bytes"
	"testing"
)

func headerSeeds() [][]byte {
	pcm := []byte{1, 2, 3, 4, 5, 6}
	return [][]byte{
		nil,
		[]byte("ID3\x03"),
		Encode(mono24k, pcm),
		Encode(Format{SampleRate: 8000, Channels: 2, BitsPerSample: 8}, pcm[:5]),
		append(AppendHeader(nil, mono24k, UnknownSize), pcm...),
		append(setU32(AppendHeader(nil, mono24k, 0), 4, 36), pcm...),
		riff(chunk("fmt ", pcmFmt(1, mono24k)), chunk("LIST", []byte("INFOISFT\x03\x00\x00\x00ab\x00")), chunk("data", pcm)),
		riff(chunk("fmt ", extensibleFmt(mono24k, 1)), chunk("data", pcm)),
		riff(chunk("fmt ", pcmFmt(3, mono24k)), chunk("data", pcm)),
		riff(chunk("data", pcm)),
		Encode(mono24k, pcm)[:30],
	}
}

// checkHeader asserts what holds for every successful parse.
func checkHeader(t *testing.T, b []byte, h Header) {
	t.Helper()
	if h.DataOffset < 12+8+16+8 || h.DataOffset > len(b) {
		t.Fatalf("DataOffset %d outside [44, %d]", h.DataOffset, len(b))
	}
	if string(b[h.DataOffset-8:h.DataOffset-4]) != "data" {
		t.Fatalf("DataOffset %d does not follow a data chunk id", h.DataOffset)
	}
	if h.Streaming != (h.DataSize == -1) || h.DataSize < -1 {
		t.Fatalf("Streaming %v with DataSize %d", h.Streaming, h.DataSize)
	}
	if h.Placeholder && h.DataSize > 0 {
		t.Fatalf("placeholder header with a data size of %d", h.DataSize)
	}
	if h.Channels < 1 || h.SampleRate < 1 || h.BitsPerSample < 8 || h.BitsPerSample%8 != 0 || h.BytesPerFrame() < 1 {
		t.Fatalf("invalid format %+v accepted", h.Format)
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range headerSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			return
		}
		checkHeader(t, b, h)
	})
}

func FuzzDecode(f *testing.F) {
	for i, s := range headerSeeds() {
		f.Add(s, uint32(24000), uint16(1), uint8(2), uint8(i))
	}
	f.Add([]byte{}, uint32(8000), uint16(2), uint8(1), uint8(0))
	f.Add([]byte{1, 2, 3}, uint32(48000), uint16(6), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, rate uint32, channels uint16, bytesPerSample uint8, split uint8) {
		// Any input: no panic, and the PCM lies within the input.
		if format, pcm, err := Decode(b); err == nil {
			h, _ := ParseHeader(b)
			checkHeader(t, b, h)
			if format != h.Format || len(pcm) > len(b)-h.DataOffset || (len(pcm) > 0 && &pcm[0] != &b[h.DataOffset]) {
				t.Fatalf("PCM of %d bytes does not alias input at %d", len(pcm), h.DataOffset)
			}
		}

		// Round trip: what Encode writes, Decode reads back.
		fm := Format{SampleRate: int(rate), Channels: int(channels), BitsPerSample: 8 * int(bytesPerSample)}
		if rate == 0 || channels == 0 || bytesPerSample == 0 {
			if _, _, err := Decode(Encode(fm, b)); err == nil {
				t.Fatalf("invalid format %+v round-tripped", fm)
			}
			return
		}
		file := Encode(fm, b)
		got, pcm, err := Decode(file)
		if err != nil {
			t.Fatalf("Decode(Encode(%+v, %d bytes)): %v", fm, len(b), err)
		}
		if got != fm || !bytes.Equal(pcm, b) {
			t.Fatalf("round trip gave %+v and %d bytes, want %+v and %d", got, len(pcm), fm, len(b))
		}
		// A streaming header followed by the PCM decodes to the same PCM,
		// and any prefix of the header alone fails without panicking.
		stream := append(AppendHeader(nil, fm, UnknownSize), b...)
		if got, pcm, err := Decode(stream); err != nil || got != fm || !bytes.Equal(pcm, b) {
			t.Fatalf("streaming round trip: %+v, %d bytes, %v", got, len(pcm), err)
		}
		n := int(split) % HeaderSize
		if _, err := ParseHeader(file[:n]); err == nil {
			t.Fatalf("%d-byte header prefix parsed", n)
		}

		// Declared sizes are honoured: a trailing chunk after the data is
		// not PCM, and a file cut anywhere inside its declared data (the
		// pad byte aside) fails instead of decoding short.
		if len(file) <= HeaderSize+len(b) { // not the 4 GiB streaming case
			withList := append(append([]byte(nil), file...), "LIST\x04\x00\x00\x00INFO"...)
			withList = setU32(withList, 4, uint32(len(withList)-8)) // the RIFF size covers the LIST
			if _, pcm, err := Decode(withList); err != nil || !bytes.Equal(pcm, b) {
				t.Fatalf("file with a trailing LIST chunk: %d bytes, %v; want the %d declared", len(pcm), err, len(b))
			}
			if len(b) > 0 {
				cut := HeaderSize + int(split)%len(b)
				if _, pcm, err := Decode(file[:cut]); err == nil {
					t.Fatalf("file cut at byte %d of %d decoded to %d bytes of PCM", cut, len(file), len(pcm))
				}
			}
		}
	})
}
