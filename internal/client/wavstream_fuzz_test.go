package client

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/sse"
)

// piecewise hands out b in pieces whose sizes cycle through sizes (each at
// least 1), like a raw stream arriving in reads of varying length.
type piecewise struct {
	b     []byte
	sizes []byte
	i     int
}

func (p *piecewise) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(p.sizes) > 0 {
		n = int(p.sizes[p.i%len(p.sizes)]) + 1
		p.i++
	}
	n = min(n, len(p.b), len(dst))
	copy(dst, p.b[:n])
	p.b = p.b[n:]
	return n, nil
}

// FuzzRawWAVStream sends a raw WAV stream (a sized header, sent data,
// trailing chunk bytes) in arbitrary pieces: the audio counted is what the
// header declares and no more, and a stream that sends less is truncated.
func FuzzRawWAVStream(f *testing.F) {
	f.Add(uint16(3840), uint16(3840), uint16(0), []byte{43, 200, 7})
	f.Add(uint16(7680), uint16(3840), uint16(0), []byte{255})
	f.Add(uint16(100), uint16(100), uint16(48000), []byte{0, 1, 2})
	f.Add(uint16(0), uint16(10), uint16(12), []byte{})
	f.Add(uint16(5), uint16(4), uint16(3), []byte{44})
	f.Fuzz(func(t *testing.T, declared, sent, trailer uint16, sizes []byte) {
		if sent < declared {
			trailer = 0 // the stream ends inside the data: nothing follows
		}
		body := make([]byte, 44, 44+int(sent)+int(trailer))
		copy(body, "RIFF")
		binary.LittleEndian.PutUint32(body[4:], uint32(36+int(declared)+int(trailer)))
		copy(body[8:], "WAVEfmt ")
		binary.LittleEndian.PutUint32(body[16:], 16)
		binary.LittleEndian.PutUint16(body[20:], 1)
		binary.LittleEndian.PutUint16(body[22:], 1)
		binary.LittleEndian.PutUint32(body[24:], 24000)
		binary.LittleEndian.PutUint32(body[28:], 48000)
		binary.LittleEndian.PutUint16(body[32:], 2)
		binary.LittleEndian.PutUint16(body[34:], 16)
		copy(body[36:], "data")
		binary.LittleEndian.PutUint32(body[40:], uint32(declared))
		body = append(body, testPCM(int(sent)+int(trailer))...)

		rec := &results.Record{}
		var s stream
		s.reset(rec, results.KindSpeech, "wav", defaultPCMSampleRate, nil, sse.DefaultMaxEventBytes)
		s.t0 = time.Now()
		err := s.readRaw(&piecewise{b: body, sizes: sizes})

		placeholder := declared == 0 && trailer == 0 // RIFF size ends at the data header
		want := int64(min(declared, sent))
		switch {
		case placeholder:
			want = int64(sent) // a placeholder header: the data runs to the end
			if err != nil {
				t.Fatalf("placeholder header: %v", err)
			}
		case sent < declared:
			if classOf(err) != results.ErrTruncated {
				t.Fatalf("declared %d, sent %d: class %q (%v), want truncated", declared, sent, classOf(err), err)
			}
		case err != nil:
			t.Fatalf("declared %d, sent %d, trailer %d: %v", declared, sent, trailer, err)
		}
		if rec.AudioBytes != want {
			t.Fatalf("declared %d, sent %d, trailer %d: %d audio bytes counted, want %d", declared, sent, trailer, rec.AudioBytes, want)
		}
	})
}
