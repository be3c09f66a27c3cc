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
// whatever the buffer it starts with, and passes read errors on.
func TestReadMessage(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 3840, 100_000, maxScratch + 1} {
		for _, room := range []int{0, size - 1, size, size + 1, 2 * size} {
			msg := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
			for name, r := range map[string]io.Reader{
				"whole":    bytes.NewReader(msg),
				"one-byte": iotest.OneByteReader(bytes.NewReader(msg)),
				"data-eof": iotest.DataErrReader(bytes.NewReader(msg)),
			} {
				buf := append(make([]byte, 0, max(room, 0)), "stale"...)
				got, err := readMessage(r, buf)
				if err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("%s, size %d, room %d: %d bytes, %v; want the message whole", name, size, room, len(got), err)
				}
			}
		}
	}
	// A connection that ends inside a message is an error, even when the
	// library wraps io.EOF in its own.
	broken := fmt.Errorf("failed to read frame payload: %w", io.EOF)
	if _, err := readMessage(io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(broken)), nil); !errors.Is(err, broken) {
		t.Fatalf("wrapped EOF: %v, want it returned", err)
	}
}

// TestReadMessageAllocations checks that once the client's buffers
// circulate (a reader takes one, the session gives it back when it waits
// for the next message), a message costs no allocation, also when audio
// and small events alternate (as a realtime turn's audio and transcript
// deltas do). Each message used to be copied out of the reader's buffer
// (one allocation), and before that read with io.ReadAll, which grows a new
// buffer from 512 bytes for every message.
func TestReadMessageAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	audio := make([]byte, 5120) // 80 ms of 24 kHz PCM16 in base64: a typical delta
	event := []byte(`{"type":"response.output_audio_transcript.delta","delta":""}`)
	var pool bufferPool
	var r bytes.Reader
	allocs := testing.AllocsPerRun(100, func() {
		for _, msg := range [][]byte{audio, event} {
			r.Reset(msg)
			mb := pool.get()
			var err error
			if mb.b, err = readMessage(&r, mb.b); err != nil || !bytes.Equal(mb.b, msg) {
				t.Fatalf("%d bytes, %v", len(mb.b), err)
			}
			pool.put(mb)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per two messages, want 0", allocs)
	}
	// A buffer grown for a rare large message is not kept.
	pool.put(&msgBuffer{b: make([]byte, maxScratch+1)})
	if mb := pool.get(); cap(mb.b) > maxScratch {
		t.Errorf("a buffer of %d bytes kept", cap(mb.b))
	}
}
