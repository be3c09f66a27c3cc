package wav

import "encoding/binary"

// HeaderSize is the size of the canonical header that AppendHeader writes.
const HeaderSize = 44

// UnknownSize as a data size makes AppendHeader write a streaming header:
// both size fields 0xFFFFFFFF, as servers do when they stream raw WAV
// bytes before knowing the length.
const UnknownSize = 0xFFFFFFFF

// AppendHeader appends the canonical 44-byte PCM header (RIFF, fmt with
// format tag 1, data) for dataSize bytes of PCM to dst. The RIFF size counts
// the pad byte that follows odd-sized data; when it would overflow, or when
// dataSize is UnknownSize, both sizes are written as 0xFFFFFFFF. The format
// is not validated; ParseHeader rejects a header of zero channels, rate or
// bits.
func AppendHeader(dst []byte, f Format, dataSize uint32) []byte {
	riffSize := uint64(dataSize) + 36 + uint64(dataSize&1)
	if dataSize == UnknownSize || riffSize > UnknownSize {
		riffSize = UnknownSize
	}
	blockAlign := f.BytesPerFrame()
	dst = append(dst, "RIFF"...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(riffSize))
	dst = append(dst, "WAVEfmt "...)
	dst = binary.LittleEndian.AppendUint32(dst, 16)
	dst = binary.LittleEndian.AppendUint16(dst, tagPCM)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(f.Channels))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f.SampleRate))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f.SampleRate*blockAlign))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(blockAlign))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(f.BitsPerSample))
	dst = append(dst, "data"...)
	return binary.LittleEndian.AppendUint32(dst, dataSize)
}

// Encode returns a WAV file holding pcm: the canonical header, the PCM and,
// for odd-sized PCM, the pad byte RIFF requires. PCM of 4 GiB or more
// cannot be sized in a WAV header and gets a streaming header instead,
// which Decode reads back in full.
func Encode(f Format, pcm []byte) []byte {
	size := uint32(UnknownSize)
	if uint64(len(pcm)) <= UnknownSize-37 { // 36 header bytes and a pad byte fit the RIFF size
		size = uint32(len(pcm))
	}
	out := make([]byte, 0, HeaderSize+len(pcm)+1)
	out = AppendHeader(out, f, size)
	out = append(out, pcm...)
	if size != UnknownSize && size&1 == 1 {
		out = append(out, 0)
	}
	return out
}
