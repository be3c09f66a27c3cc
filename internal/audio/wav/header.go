package wav

import (
	"encoding/binary"
	"fmt"
)

// Format tags from the fmt chunk.
const (
	tagPCM        = 0x0001
	tagExtensible = 0xFFFE
)

// guidTail is the WAVE_FORMAT_EXTENSIBLE sub-format GUID without its first
// two bytes, which hold the format tag: KSDATAFORMAT_SUBTYPE_PCM is
// 00000001-0000-0010-8000-00AA00389B71.
const guidTail = "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71"

// Header is a parsed WAV header.
type Header struct {
	Format
	// DataOffset is the byte offset of the first PCM byte (just after the
	// data chunk header); 44 for a canonical header.
	DataOffset int
	// DataSize is the declared length of the PCM data in bytes, or -1 when
	// Streaming.
	DataSize int64
	// Streaming is set when the header does not state the data length:
	// the RIFF or data size is 0xFFFFFFFF, or both are placeholders (data
	// size 0 with a RIFF size that ends at the data chunk header) and
	// bytes follow the header. The PCM then runs to the end of the input.
	Streaming bool
	// Placeholder is set when both sizes are a writer's placeholders: data
	// size 0 with a RIFF size that ends at the data chunk header. With bytes
	// after the header that makes the header Streaming; a reader of a live
	// stream whose header arrived alone cannot know yet, and should take
	// the data as running to the end of the stream too.
	Placeholder bool
}

// ParseHeader parses the RIFF/WAVE header at the start of b, walking the
// chunk list up to the "data" chunk header: fmt is decoded, LIST, fact and
// other chunks are skipped (with their pad byte when odd-sized). b needs to
// hold only the header; whether b holds the PCM that the header declares is
// checked by Decode, not here.
//
// A data size of 0 is taken as a placeholder of a writer that did not know
// the length (Streaming) only when the RIFF size also ends at the data
// chunk header and bytes follow; with a RIFF size covering later chunks
// (say a LIST after the data) the data chunk is genuinely empty.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < 4 || string(b[:4]) != "RIFF" {
		if len(b) < 4 && string(b) == "RIFF"[:len(b)] {
			return Header{}, fmt.Errorf("wav: header truncated at %d bytes; the RIFF header needs 12", len(b))
		}
		return Header{}, fmt.Errorf("wav: not a RIFF file (starts with %q)", b[:min(len(b), 4)])
	}
	if len(b) < 12 {
		return Header{}, fmt.Errorf("wav: header truncated at %d bytes; the RIFF header needs 12", len(b))
	}
	riffSize := binary.LittleEndian.Uint32(b[4:])
	if string(b[8:12]) != "WAVE" {
		return Header{}, fmt.Errorf("wav: byte 8: RIFF form type is %q, not \"WAVE\"", b[8:12])
	}
	var h Header
	haveFmt := false
	for off := 12; ; {
		if off >= len(b) {
			return Header{}, fmt.Errorf("wav: byte %d: header ends before the data chunk", len(b))
		}
		if rem := len(b) - off; rem < 8 {
			return Header{}, fmt.Errorf("wav: byte %d: chunk header truncated (%d of 8 bytes) before the data chunk", off, rem)
		}
		id := b[off : off+4]
		size := binary.LittleEndian.Uint32(b[off+4:])
		body := off + 8
		if string(id) == "data" {
			if !haveFmt {
				return Header{}, fmt.Errorf("wav: byte %d: fmt chunk missing before data", off)
			}
			h.DataOffset = body
			h.Placeholder = size == 0 && int64(riffSize) <= int64(off)
			switch {
			case size == 0xFFFFFFFF || riffSize == 0xFFFFFFFF,
				h.Placeholder && len(b) > body:
				h.Streaming, h.DataSize = true, -1
			default:
				h.DataSize = int64(size)
			}
			return h, nil
		}
		if remain := len(b) - body; int64(size) > int64(remain) {
			return Header{}, fmt.Errorf("wav: byte %d: chunk %q declares %d bytes but %d remain", off, id, size, remain)
		}
		if string(id) == "fmt " {
			f, err := parseFmt(b[body:body+int(size)], off)
			if err != nil {
				return Header{}, err
			}
			h.Format, haveFmt = f, true
		}
		off = body + int(size) + int(size&1) // RIFF pads odd-sized chunks to even
	}
}

// parseFmt decodes the payload of a fmt chunk that starts at byte off.
func parseFmt(p []byte, off int) (Format, error) {
	body := off + 8
	if len(p) < 16 {
		return Format{}, fmt.Errorf("wav: byte %d: fmt chunk is %d bytes; PCM needs at least 16", off, len(p))
	}
	tag := binary.LittleEndian.Uint16(p)
	f := Format{
		Channels:      int(binary.LittleEndian.Uint16(p[2:])),
		SampleRate:    int(binary.LittleEndian.Uint32(p[4:])),
		BitsPerSample: int(binary.LittleEndian.Uint16(p[14:])),
	}
	switch tag {
	case tagPCM:
	case tagExtensible:
		if len(p) < 40 {
			return Format{}, fmt.Errorf("wav: byte %d: extensible fmt chunk is %d bytes; it needs 40", off, len(p))
		}
		sub := p[24:40]
		if string(sub[2:]) != guidTail {
			return Format{}, fmt.Errorf("wav: byte %d: unsupported extensible sub-format GUID %x; only PCM", body+24, sub)
		}
		if st := binary.LittleEndian.Uint16(sub); st != tagPCM {
			return Format{}, fmt.Errorf("wav: byte %d: unsupported extensible sub-format %d (%s); only PCM", body+24, st, tagName(st))
		}
	default:
		return Format{}, fmt.Errorf("wav: byte %d: unsupported format tag %d (%s); only PCM", body, tag, tagName(tag))
	}
	switch {
	case f.Channels == 0:
		return Format{}, fmt.Errorf("wav: byte %d: fmt chunk declares 0 channels", body+2)
	case f.SampleRate == 0:
		return Format{}, fmt.Errorf("wav: byte %d: fmt chunk declares a sample rate of 0", body+4)
	case f.BitsPerSample == 0 || f.BitsPerSample%8 != 0:
		return Format{}, fmt.Errorf("wav: byte %d: %d bits per sample is not a whole number of bytes", body+14, f.BitsPerSample)
	}
	return f, nil
}

// tagName names the common format tags so that errors say what the file is.
func tagName(tag uint16) string {
	switch tag {
	case 0x0001:
		return "PCM"
	case 0x0002:
		return "Microsoft ADPCM"
	case 0x0003:
		return "IEEE float"
	case 0x0006:
		return "A-law"
	case 0x0007:
		return "mu-law"
	case 0x0011:
		return "IMA ADPCM"
	case 0x0031:
		return "GSM 6.10"
	case 0x0050:
		return "MPEG"
	case 0x0055:
		return "MPEG Layer 3"
	case 0x00FF:
		return "AAC"
	case 0x1610:
		return "HE-AAC"
	case 0xF1AC:
		return "FLAC"
	case tagExtensible:
		return "extensible"
	}
	return "unknown"
}

// Decode parses a WAV file in b and returns its format and PCM data. The
// PCM aliases b (nothing is copied; its capacity is clipped so appending to
// it cannot overwrite b). With a Streaming header the PCM is everything
// after the data chunk header; otherwise it is the declared data size, and
// a size larger than b holds is an error. Trailing chunks after the data are
// ignored. Decode does not check that the PCM is a whole number of frames,
// so that pieces of a raw stream decode too.
func Decode(b []byte) (Format, []byte, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return Format{}, nil, err
	}
	n, err := h.PCMLen(len(b))
	if err != nil {
		return Format{}, nil, err
	}
	pcm := b[h.DataOffset : h.DataOffset+n]
	return h.Format, pcm[:n:n], nil
}

// PCMLen is the length of the PCM data, as Decode takes it, of a WAV file of
// size bytes whose header h was parsed from its first bytes: everything
// after the data chunk header for a Streaming header, otherwise the declared
// data size, which must fit. It lets a reader that has decoded only the
// header of an encoded file measure the rest without decoding it.
func (h Header) PCMLen(size int) (int, error) {
	remain := size - h.DataOffset
	if remain < 0 {
		return 0, fmt.Errorf("wav: byte %d: file ends before the data chunk", size)
	}
	if h.Streaming {
		return remain, nil
	}
	if h.DataSize > int64(remain) {
		return 0, fmt.Errorf("wav: byte %d: data chunk declares %d bytes but %d remain", h.DataOffset-8, h.DataSize, remain)
	}
	return int(h.DataSize), nil
}
