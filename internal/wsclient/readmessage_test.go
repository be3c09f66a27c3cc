package wsclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadMessage checks that readMessage returns every message whole
// whatever the scratch buffer it starts with, and passes read errors on.
func TestReadMessage(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 3840, 100_000, maxScratch + 1} {
		for _, room := range []int{0, size - 1, size, size + 1, 2 * size} {
			msg := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
			for name, r := range map[string]io.Reader{
				"whole":    bytes.NewReader(msg),
				"one-byte": iotest.OneByteReader(bytes.NewReader(msg)),
				"data-eof": iotest.DataErrReader(bytes.NewReader(msg)),
			} {
				scratch := make([]byte, 0, max(room, 0))
				got, err := readMessage(r, &scratch)
				if err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("%s, size %d, room %d: %d bytes, %v; want the message whole", name, size, room, len(got), err)
				}
				if room <= maxScratch && cap(scratch) > maxScratch {
					t.Fatalf("size %d: a scratch buffer of %d bytes kept", size, cap(scratch))
				}
			}
		}
	}
	// A connection that ends inside a message is an error, even when the
	// library wraps io.EOF in its own.
	broken := fmt.Errorf("failed to read frame payload: %w", io.EOF)
	var scratch []byte
	if _, err := readMessage(io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(broken)), &scratch); !errors.Is(err, broken) {
		t.Fatalf("wrapped EOF: %v, want it returned", err)
	}
}

// TestReadMessageAllocations checks that once the scratch buffer has grown,
// a message costs one allocation, also when audio and small events
// alternate (as a realtime turn's audio and transcript deltas do):
// io.ReadAll, which reading them took before, grows a new buffer from 512
// bytes for every message, through several allocations and copies.
func TestReadMessageAllocations(t *testing.T) {
	audio := make([]byte, 5120) // 80 ms of 24 kHz PCM16 in base64: a typical delta
	event := []byte(`{"type":"response.output_audio_transcript.delta","delta":""}`)
	var scratch []byte
	var r bytes.Reader
	allocs := testing.AllocsPerRun(100, func() {
		for _, msg := range [][]byte{audio, event} {
			r.Reset(msg)
			if b, err := readMessage(&r, &scratch); err != nil || len(b) != len(msg) {
				t.Fatalf("%d bytes, %v", len(b), err)
			}
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations per two messages, want 2", allocs)
	}
}
