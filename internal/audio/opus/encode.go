package opus

import "fmt"

// PreSkip is the pre-skip EncodeSilence states (libopus's, 312 samples).
const PreSkip = 312

// silence is the body of a 20 ms CELT fullband packet whose first coded
// symbol is the silence flag (the well-known 3-byte silence packet, TOC
// 0xF8 for mono; the stereo bit of the TOC makes it 0xFC).
var silence = [2]byte{0xff, 0xfe}

const packetFrames = 960 // 20 ms at 48 kHz

// packetsPerPage is 50: one page per second of audio.
const packetsPerPage = 50

// EncodeSilence writes an Ogg Opus file of samples samples (at 48 kHz,
// after the pre-skip) of digital silence, mono or stereo: OpusHead
// (pre-skip PreSkip, input rate inputRate), OpusTags, then one 20 ms
// silence packet per 960 samples, the last page's granule position
// trimming the end to exactly PreSkip+samples (RFC 7845 section 4.5).
func EncodeSilence(channels, inputRate int, samples int64) ([]byte, error) {
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("%w: %d channels, want 1 or 2", ErrOpus, channels)
	}
	if samples < 0 || samples > MaxFrames {
		return nil, fmt.Errorf("%w: %d samples, want 0 to %d", ErrOpus, samples, int64(MaxFrames))
	}
	const serial = 0x6f6d6e69 // "omni"
	var out []byte
	seq := uint32(0)
	pageOut := func(flags byte, granule int64, packets [][]byte) {
		start := len(out)
		out = append(out, "OggS"...)
		out = append(out, 0, flags)
		out = append32(append32(out, uint32(granule)), uint32(granule>>32))
		out = append32(append32(out, serial), seq)
		out = append32(out, 0) // CRC, set below
		var lacing []byte
		for _, p := range packets {
			n := len(p)
			for ; n >= 255; n -= 255 {
				lacing = append(lacing, 255)
			}
			lacing = append(lacing, byte(n))
		}
		out = append(out, byte(len(lacing)))
		out = append(out, lacing...)
		for _, p := range packets {
			out = append(out, p...)
		}
		c := crc32(out[start:])
		out[start+22], out[start+23], out[start+24], out[start+25] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		seq++
	}
	preSkip := PreSkip
	head := append([]byte("OpusHead"), 1, byte(channels), byte(preSkip), byte(preSkip>>8))
	head = append32(head, uint32(inputRate))
	head = append(head, 0, 0, 0) // output gain 0, mapping family 0
	pageOut(2, 0, [][]byte{head})
	const vendor = "omnibench (digital silence)"
	tags := append32([]byte("OpusTags"), uint32(len(vendor)))
	tags = append32(append(tags, vendor...), 0)
	pageOut(0, 0, [][]byte{tags})

	toc := byte(0xf8) | byte(channels-1)<<2
	packet := []byte{toc, silence[0], silence[1]}
	total := (samples + PreSkip + packetFrames - 1) / packetFrames
	for done := int64(0); done < total; {
		n := min(total-done, packetsPerPage)
		packets := make([][]byte, n)
		for i := range packets {
			packets[i] = packet
		}
		done += n
		flags, granule := byte(0), done*packetFrames
		if done == total {
			flags, granule = 4, PreSkip+samples
		}
		pageOut(flags, granule, packets)
	}
	return out, nil
}

func append32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}
