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
// whatever its size against the hint, and passes read errors on.
func TestReadMessage(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 3840, 100_000} {
		for _, hint := range []int{0, size - 1, size, size + 1, 2 * size} {
			msg := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
			for name, r := range map[string]io.Reader{
				"whole":    bytes.NewReader(msg),
				"one-byte": iotest.OneByteReader(bytes.NewReader(msg)),
				"data-eof": iotest.DataErrReader(bytes.NewReader(msg)),
			} {
				got, err := readMessage(r, max(hint, 0))
				if err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("%s, size %d, hint %d: %d bytes, %v; want the message whole", name, size, hint, len(got), err)
				}
			}
		}
	}
	// A connection that ends inside a message is an error, even when the
	// library wraps io.EOF in its own.
	broken := fmt.Errorf("failed to read frame payload: %w", io.EOF)
	if _, err := readMessage(io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(broken)), 0); !errors.Is(err, broken) {
		t.Fatalf("wrapped EOF: %v, want it returned", err)
	}
}

// TestReadMessageAllocations checks that a message of the hinted size
// costs one allocation: the audio messages of a session mostly have the
// size of the one before, and io.ReadAll, which reading them took before,
// grows its buffer from 512 bytes through several allocations and copies.
func TestReadMessageAllocations(t *testing.T) {
	msg := make([]byte, 3840) // 80 ms of 24 kHz PCM16: a typical chunk
	r := bytes.NewReader(msg)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(msg)
		if b, err := readMessage(r, len(msg)); err != nil || len(b) != len(msg) {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per message of the hinted size, want 1", allocs)
	}
}
