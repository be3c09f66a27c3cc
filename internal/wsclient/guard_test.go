package wsclient

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// maskedAt is the reference: the offset of the second header byte of the
// first masked frame in a server's byte stream, walked frame by frame, or
// -1 when none starts within b.
func maskedAt(b []byte) int {
	for i := 0; i+1 < len(b); {
		if b[i+1]&0x80 != 0 {
			return i + 1
		}
		h := 2 + extLenBytes(b[i+1])
		if i+h > len(b) {
			return -1
		}
		n := payloadLen(b[i : i+h])
		if n > uint64(len(b)) {
			return -1
		}
		i += h + int(n)
	}
	return -1
}

// chunkReader returns its data in reads of the given sizes (cycled).
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)]) + 1
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}
func (r *chunkReader) Write(p []byte) (int, error) { return len(p), nil }
func (r *chunkReader) Close() error                { return nil }

// FuzzFrameGuard: however the stream is cut into reads, the guard passes
// exactly the bytes before the first masked frame's second header byte (all
// of them when there is none) and then fails with errMaskedFrame.
func FuzzFrameGuard(f *testing.F) {
	f.Add(wsFrame(1, []byte(`{"type":"x"}`), false), []byte{0})
	f.Add(append(wsFrame(2, make([]byte, 300), false), wsFrame(1, []byte("hi"), true)...), []byte{3, 200, 1})
	f.Add(append(wsFrame(9, nil, false), 0x82, 127, 0, 0, 0, 0, 0, 0, 0, 2, 'a', 'b', 0x81, 0x81), []byte{5})
	f.Fuzz(func(t *testing.T, stream, sizes []byte) {
		if len(stream) > 1<<16 {
			return
		}
		g := &frameGuard{rwc: &chunkReader{data: stream, sizes: sizes}}
		var got bytes.Buffer
		buf := make([]byte, 64)
		var err error
		for range len(stream) + 2 {
			var n int
			n, err = g.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
		want := stream
		if at := maskedAt(stream); at >= 0 {
			want = stream[:at]
			if !errors.Is(err, errMaskedFrame) {
				t.Fatalf("masked frame at %d: error %v", at, err)
			}
		} else if err != io.EOF {
			t.Fatalf("no masked frame: error %v, want EOF", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("passed %d bytes, want %d", got.Len(), len(want))
		}
	})
}

// TestPayloadLen covers the three length forms.
func TestPayloadLen(t *testing.T) {
	for _, tc := range []struct {
		h    []byte
		want uint64
	}{
		{[]byte{0x81, 5}, 5},
		{append([]byte{0x82, 126}, binary.BigEndian.AppendUint16(nil, 300)...), 300},
		{append([]byte{0x82, 127}, binary.BigEndian.AppendUint64(nil, 1<<40)...), 1 << 40},
	} {
		if got := payloadLen(tc.h); got != tc.want || extLenBytes(tc.h[1])+2 != len(tc.h) {
			t.Errorf("% x: length %d, want %d", tc.h, got, tc.want)
		}
	}
}
