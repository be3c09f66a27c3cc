package mp3

import "fmt"

// EncoderDelay is the encoder delay EncodeSilence states in its LAME tag
// (LAME's own, 576 samples).
const EncoderDelay = 576

// EncodeSilence writes an MP3 file of samples samples per channel of
// digital silence at rate Hz (one of the nine MPEG 1, 2 and 2.5 rates),
// mono or stereo: a leading Info frame whose LAME-format extension states
// the frame count, EncoderDelay and the padding that make the file play
// exactly samples samples, then constant-bitrate layer III frames (128
// kbit/s for MPEG 1, 64 kbit/s for MPEG 2 and 2.5) whose side information
// is all zero (part2_3_length 0: no Huffman data, every spectral line 0),
// which every decoder renders as silence.
func EncodeSilence(rate, channels int, samples int64) ([]byte, error) {
	version, sri := -1, -1
	for v, rates := range sampleRates {
		for i, r := range rates {
			if r == rate {
				version, sri = v, i
			}
		}
	}
	if version < 0 {
		return nil, fmt.Errorf("%w: sample rate %d Hz is not an MPEG audio rate", ErrMP3, rate)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("%w: %d channels, want 1 or 2", ErrMP3, channels)
	}
	if samples < 0 || samples > MaxFrames {
		return nil, fmt.Errorf("%w: %d samples, want 0 to %d", ErrMP3, samples, int64(MaxFrames))
	}
	lsf := min(version, 1)
	spf := int64(1152 >> lsf)
	bri := [2]int{9, 8}[lsf] // 128 and 64 kbit/s
	frames := (samples + EncoderDelay + decoderDelay + spf - 1) / spf
	padding := frames*spf - EncoderDelay - samples

	verBits := [3]byte{3, 2, 0}[version]
	mode := byte(0) // stereo
	if channels == 1 {
		mode = 3
	}
	hdr := func(pad bool) []byte {
		return []byte{0xff, 0xe0 | verBits<<3 | 1<<1 | 1, byte(bri<<4|sri<<2) | byte(b2i(pad))<<1, mode << 6}
	}
	bytesPerSec := int(spf) / 8 * bitrates[lsf][bri] * 1000
	base, rem := bytesPerSec/rate, bytesPerSec%rate

	// The frames' sizes first: the Info frame states the file's size.
	sizes := make([]int, frames+1)
	pads := make([]bool, frames+1)
	acc, total := 0, 0
	for i := range sizes {
		acc += rem
		if acc >= rate {
			acc -= rate
			pads[i] = true
		}
		sizes[i] = base + b2i(pads[i])
		total += sizes[i]
	}
	out := make([]byte, 0, total)

	// The Info frame: zero side information, then the Xing fields (frame
	// count, byte count, seek table, quality) and the LAME extension.
	info := make([]byte, sizes[0])
	copy(info, hdr(pads[0]))
	off := 4 + [2][2]int{{17, 32}, {9, 17}}[lsf][channels-1]
	p := off
	p += copy(info[p:], "Info")
	p += put32(info[p:], 0x0f)
	p += put32(info[p:], uint32(frames))
	p += put32(info[p:], uint32(total))
	for i := range 100 {
		info[p+i] = byte(i * 256 / 100) // constant bitrate: linear
	}
	p += 100
	p += put32(info[p:], 0) // quality
	lame := p
	copy(info[lame:], "LAMEomnib") // the LAME tag layout; omnibench's version string
	info[lame+9] = 0x01            // tag revision 0, VBR method 1 (CBR)
	info[lame+20] = byte(min(bitrates[lsf][bri], 255))
	v := EncoderDelay<<12 | int(padding)
	info[lame+21], info[lame+22], info[lame+23] = byte(v>>16), byte(v>>8), byte(v)
	crc := crc16(info[:lame+34])
	info[lame+34], info[lame+35] = byte(crc>>8), byte(crc)
	out = append(out, info...)

	for i := 1; i < len(sizes); i++ {
		f := make([]byte, sizes[i])
		copy(f, hdr(pads[i]))
		out = append(out, f...)
	}
	return out, nil
}

func put32(b []byte, v uint32) int {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return 4
}

// crc16 is the LAME tag's CRC: CRC-16 (polynomial 0x8005, reflected as
// 0xA001), initial value 0.
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c ^= uint16(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xa001
			} else {
				c >>= 1
			}
		}
	}
	return c
}
