// Package opus reads and writes the Ogg Opus files (RFC 7845) a
// vLLM-Omni server sends as chat audio events with audio.format "opus"
// (every event is a complete, independent file:
// docs/reference/http-streams.md, section 2.4).
//
// Parse measures a file from its own Ogg pages, without decoding: it checks
// every page (capture pattern "OggS", version 0, CRC-32 with the Ogg
// polynomial 0x04C11DB7, segment table), reassembles packets continued
// across pages, reads OpusHead (channels, pre-skip, input sample rate) and
// OpusTags, and takes the duration from the last page's granule position:
// (granule - pre-skip) samples at 48 kHz, the rate Opus always decodes at.
// No well-kept pure-Go Opus decoder exists, so the client gets no audible
// onset for Opus. EncodeSilence writes the files the simulator sends:
// digital silence, with the 3-byte CELT silence packet per 20 ms.
package opus

import (
	"errors"
	"fmt"
)

// Rate is the sample rate of every Opus granule position and decoder.
const Rate = 48000

// MaxFrames caps the duration Parse accepts from one file (one hour at
// 48 kHz).
const MaxFrames = Rate * 3600

// ErrOpus is wrapped by every error this package returns for a bad file.
var ErrOpus = errors.New("ogg opus")

// Info is what a file's headers and pages say.
type Info struct {
	Channels  int
	PreSkip   int   // samples at 48 kHz the decoder drops at the start
	InputRate int   // the encoder's input sample rate (informational; 0 = unstated)
	Frames    int64 // samples per channel at 48 kHz: last granule position minus pre-skip
	Pages     int
	Packets   int // audio packets (OpusHead and OpusTags excluded)
	Vendor    string
}

// crcTable is the Ogg CRC-32: polynomial 0x04C11DB7, not reflected,
// initial value and final XOR 0.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc32(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>24)^x]
	}
	return c
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// page is one parsed Ogg page.
type page struct {
	flags   byte // 1 continued, 2 first (BOS), 4 last (EOS)
	granule int64
	serial  uint32
	seq     uint32
	lacing  []byte
	body    []byte
	size    int
}

func parsePage(b []byte) (page, error) {
	if len(b) < 27 {
		return page{}, fmt.Errorf("page header cut (%d of 27 bytes)", len(b))
	}
	if string(b[:4]) != "OggS" {
		return page{}, fmt.Errorf("no OggS capture pattern (found %q)", b[:4])
	}
	if b[4] != 0 {
		return page{}, fmt.Errorf("stream structure version %d, want 0", b[4])
	}
	n := int(b[26])
	if 27+n > len(b) {
		return page{}, fmt.Errorf("segment table of %d entries cut", n)
	}
	p := page{flags: b[5], serial: le32(b[14:]), seq: le32(b[18:]), lacing: b[27 : 27+n]}
	p.granule = int64(le32(b[6:])) | int64(le32(b[10:]))<<32
	body := 0
	for _, l := range p.lacing {
		body += int(l)
	}
	p.size = 27 + n + body
	if p.size > len(b) {
		return page{}, fmt.Errorf("page of %d bytes cut at %d", p.size, len(b))
	}
	p.body = b[27+n : p.size]
	want := le32(b[22:])
	c := make([]byte, p.size)
	copy(c, b[:p.size])
	c[22], c[23], c[24], c[25] = 0, 0, 0, 0
	if got := crc32(c); got != want {
		return page{}, fmt.Errorf("CRC-32 %08x, the page states %08x", got, want)
	}
	return p, nil
}

// Parse measures an Ogg Opus file: one logical stream (a second, chained
// stream is refused), OpusHead in the first page, OpusTags next, then audio
// packets; the last page ends the stream.
func Parse(data []byte) (Info, error) {
	var (
		info    Info
		packet  []byte // the packet being assembled across segments
		open    bool   // packet continues past the last page
		packets int    // all packets, headers included
		serial  uint32
		granule int64 = -1
		eos     bool
	)
	for off := 0; off < len(data); {
		p, err := parsePage(data[off:])
		if err != nil {
			return Info{}, fmt.Errorf("%w: page %d at byte %d: %w", ErrOpus, info.Pages, off, err)
		}
		where := func(format string, a ...any) error {
			return fmt.Errorf("%w: page %d at byte %d: %s", ErrOpus, info.Pages, off, fmt.Sprintf(format, a...))
		}
		switch {
		case eos:
			return Info{}, where("a page after the end-of-stream page")
		case info.Pages == 0 && p.flags&2 == 0:
			return Info{}, where("the first page lacks the beginning-of-stream flag")
		case info.Pages == 0:
			serial = p.serial
		case p.serial != serial:
			return Info{}, where("stream serial %08x, the file's stream is %08x (multiplexed or chained streams are not measured)", p.serial, serial)
		case p.flags&2 != 0:
			return Info{}, where("a second beginning-of-stream flag")
		}
		if p.seq != uint32(info.Pages) {
			return Info{}, where("sequence number %d, want %d (a page is missing)", p.seq, info.Pages)
		}
		if (p.flags&1 != 0) != open {
			return Info{}, where("continued-packet flag %v, but the previous page %s", p.flags&1 != 0, map[bool]string{true: "ended inside a packet", false: "ended on a packet boundary"}[open])
		}
		for i, l := range p.lacing {
			start := 27 + len(p.lacing)
			for _, m := range p.lacing[:i] {
				start += int(m)
			}
			packet = append(packet, data[off+start:off+start+int(l)]...)
			if l == 255 {
				continue
			}
			if err := info.packet(packets, packet); err != nil {
				return Info{}, where("packet %d: %v", packets, err)
			}
			packets++
			packet = packet[:0]
		}
		open = len(p.lacing) > 0 && p.lacing[len(p.lacing)-1] == 255
		if p.granule != -1 && packets > 2 {
			if p.granule < granule {
				return Info{}, where("granule position %d goes back from %d", p.granule, granule)
			}
			granule = p.granule
		}
		eos = p.flags&4 != 0
		info.Pages++
		off += p.size
	}
	switch {
	case info.Pages == 0:
		return Info{}, fmt.Errorf("%w: no Ogg page", ErrOpus)
	case packets < 2:
		return Info{}, fmt.Errorf("%w: the stream ends before OpusTags", ErrOpus)
	case open:
		return Info{}, fmt.Errorf("%w: the last page ends inside a packet", ErrOpus)
	case !eos:
		return Info{}, fmt.Errorf("%w: no end-of-stream page (the file is cut)", ErrOpus)
	case granule < 0 && info.Packets > 0:
		return Info{}, fmt.Errorf("%w: no audio page states a granule position", ErrOpus)
	}
	info.Frames = max(granule, 0) - int64(info.PreSkip)
	if info.Packets == 0 {
		info.Frames = 0
	}
	if info.Frames < 0 || info.Frames > MaxFrames {
		return Info{}, fmt.Errorf("%w: last granule position %d less pre-skip %d leaves %d samples (want 0 to %d)", ErrOpus, granule, info.PreSkip, info.Frames, int64(MaxFrames))
	}
	return info, nil
}

// packet takes the stream's packet number n.
func (info *Info) packet(n int, b []byte) error {
	switch n {
	case 0:
		// OpusHead: magic, version, channels, pre-skip, input rate, gain,
		// mapping family (RFC 7845 section 5.1).
		if len(b) < 19 || string(b[:8]) != "OpusHead" {
			return fmt.Errorf("not an OpusHead header (%d bytes, starts %q)", len(b), b[:min(len(b), 8)])
		}
		if b[8]>>4 != 0 {
			return fmt.Errorf("OpusHead version %d, want 0 to 15", b[8])
		}
		info.Channels = int(b[9])
		info.PreSkip = int(b[10]) | int(b[11])<<8
		info.InputRate = int(le32(b[12:]))
		if info.Channels == 0 {
			return errors.New("OpusHead states 0 channels")
		}
		if b[18] == 0 && info.Channels > 2 {
			return fmt.Errorf("OpusHead mapping family 0 with %d channels (at most 2)", info.Channels)
		}
	case 1:
		// OpusTags: magic, vendor string, comment count (RFC 7845 section 5.2).
		if len(b) < 16 || string(b[:8]) != "OpusTags" {
			return fmt.Errorf("not an OpusTags header (%d bytes, starts %q)", len(b), b[:min(len(b), 8)])
		}
		v := int(le32(b[8:]))
		if v < 0 || 12+v+4 > len(b) {
			return fmt.Errorf("OpusTags vendor string of %d bytes runs past the packet (%d bytes)", v, len(b))
		}
		info.Vendor = string(b[12 : 12+v])
	default:
		if len(b) == 0 {
			return errors.New("an empty audio packet")
		}
		info.Packets++
	}
	return nil
}
