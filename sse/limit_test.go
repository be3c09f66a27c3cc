package sse

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
)

// countingLoop is an endless source that counts the bytes it handed out.
type countingLoop struct {
	loopReader
	n int64
}

func (c *countingLoop) Read(p []byte) (int, error) {
	n, err := c.loopReader.Read(p)
	c.n += int64(n)
	return n, err
}

// TestReaderCapsEndlessStreams feeds streams that never end a line or never
// end an event: the Reader must stop with a *LimitError after reading about
// the cap, not buffer the stream.
func TestReaderCapsEndlessStreams(t *testing.T) {
	const max = 1 << 20
	for _, tc := range []struct {
		name, prefix, loop, what string
	}{
		{"no line end", "data: ", "QUJDREVG", "line"},
		{"no event end", "", "data: QUJDREVGQUJDREVG\n", "event"},
		{"CR lines, no event end", "", "data: QUJD\r", "event"},
		{"comment without line end", ": ", "keepalive", "line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &countingLoop{loopReader: loopReader{b: []byte(tc.loop)}}
			r := NewReader(io.MultiReader(strings.NewReader(tc.prefix), src))
			r.SetMaxEventBytes(max)
			_, err := r.Next()
			le, ok := err.(*LimitError)
			if !ok {
				t.Fatalf("error %v, want a *LimitError", err)
			}
			if le.What != tc.what || le.Limit != max || le.Size <= max || le.Offset != 0 || le.Event != 1 {
				t.Errorf("limit error %+v", le)
			}
			// The Reader reads at most one buffer beyond the cap (for data
			// lines, the cap counts the values: "data: " and line ends
			// come on top).
			bound := int64(max + defaultBufferSize)
			if tc.what == "event" {
				value := len(strings.TrimRight(strings.TrimPrefix(tc.loop, "data: "), "\r\n"))
				bound = int64(max/(value+1)*len(tc.loop) + defaultBufferSize)
			}
			if src.n > bound {
				t.Errorf("read %d bytes for a cap of %d", src.n, max)
			}
			if !strings.Contains(err.Error(), "exceeds the limit of 1048576 bytes") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// TestReaderCapBoundary: a line and an event of exactly the cap pass, one
// byte more fails, and the default cap applies without SetMaxEventBytes.
func TestReaderCapBoundary(t *testing.T) {
	const max = 100
	line := "data: " + strings.Repeat("a", max-len("data: "))                          // a line of max bytes
	event := "data: " + strings.Repeat("b", 49) + "\ndata: " + strings.Repeat("c", 50) // data of 49+1+50 = max
	for name, tc := range map[string]struct {
		in   string
		want string // "" for no error
	}{
		"line at the cap":       {line + "\n\n", ""},
		"line over the cap":     {line + "a\n\n", "line"},
		"event at the cap":      {event + "\n\n", ""},
		"event over the cap":    {event + "c\n\n", "event"},
		"unterminated over cap": {line + "a", "line"},
	} {
		t.Run(name, func(t *testing.T) {
			for rname, r := range readers(tc.in) {
				r.SetMaxEventBytes(max)
				_, err := readAll(r, 10)
				le, isLimit := err.(*LimitError)
				switch {
				case tc.want == "" && err != io.EOF:
					t.Errorf("%s: error %v, want io.EOF", rname, err)
				case tc.want != "" && (!isLimit || le.What != tc.want || le.Size != max+1):
					t.Errorf("%s: error %#v, want a %s LimitError of %d bytes", rname, err, tc.want, max+1)
				}
			}
		})
	}
	r := NewReader(strings.NewReader("data: " + strings.Repeat("x", DefaultMaxEventBytes) + "\n\n"))
	if _, err := r.Next(); err == nil {
		t.Fatal("a line over the default cap was accepted")
	}
	// SetMaxEventBytes(0) restores the default, and Reset keeps the cap.
	r.SetMaxEventBytes(0)
	r.Reset(bytes.NewReader([]byte(line + "a\n\n")))
	r.SetMaxEventBytes(max)
	r.Reset(bytes.NewReader([]byte(line + "a\n\n")))
	if _, err := r.Next(); err == nil {
		t.Fatal("Reset dropped the cap")
	}
}

// TestLentBufferWithTheLargestCap checks that a Reader with a BufferPool
// probes within its array when the cap is as large as an int can be (the
// cap plus one, which bounds the probe of a tiny cap, would overflow).
func TestLentBufferWithTheLargestCap(t *testing.T) {
	r := new(BufferPool).NewReader(strings.NewReader("data: one\n\ndata: two\n\n"))
	r.SetMaxEventBytes(math.MaxInt)
	for _, want := range []string{"one", "two"} {
		e, err := r.Next()
		if err != nil || string(e.Data) != want {
			t.Fatalf("event %q, %v; want %q", e.Data, err, want)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}
