package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// ev is an Event with copied fields, comparable with ==.
type ev struct {
	Type, Data, ID, Comment string
	NoData, NoComment       bool
}

func copyEvent(e Event) ev {
	return ev{Type: e.Type, Data: string(e.Data), ID: e.ID, Comment: string(e.Comment),
		NoData: e.Data == nil, NoComment: e.Comment == nil}
}

// readAll reads events until an error and returns them with the error.
// It stops after max events so that a broken reader cannot loop forever.
func readAll(r *Reader, max int) ([]ev, error) {
	var out []ev
	for range max {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, copyEvent(e))
	}
	return out, fmt.Errorf("more than %d events", max)
}

// readers feeds the same input in differently sized pieces and buffer
// sizes, so that lines and CRLF pairs straddle reads and refills.
// The "pooled" ones lend their buffer (BufferPool) whenever they have
// consumed all they read.
func readers(in string) map[string]*Reader {
	return map[string]*Reader{
		"whole":              NewReader(strings.NewReader(in)),
		"one-byte":           NewReader(iotest.OneByteReader(strings.NewReader(in))),
		"half":               NewReader(iotest.HalfReader(strings.NewReader(in))),
		"data-err":           NewReader(iotest.DataErrReader(strings.NewReader(in))),
		"buf16":              newReaderSize(strings.NewReader(in), 16),
		"buf16-bytes":        newReaderSize(iotest.OneByteReader(strings.NewReader(in)), 16),
		"pooled":             new(BufferPool).NewReader(strings.NewReader(in)),
		"pooled-data-err":    new(BufferPool).NewReader(iotest.DataErrReader(strings.NewReader(in))),
		"pooled-buf16-bytes": (&BufferPool{size: 16}).NewReader(iotest.OneByteReader(strings.NewReader(in))),
	}
}

func TestReaderCases(t *testing.T) {
	nc := func(e ev) ev { e.NoComment = true; return e }
	cases := []struct {
		name string
		in   string
		want []ev
	}{
		{"empty", "", nil},
		{"single LF", "data: hello\n\n", []ev{nc(ev{Data: "hello"})}},
		{"CRLF", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", []ev{nc(ev{Data: "a\nb"}), nc(ev{Data: "c"})}},
		{"CR only", "data: a\rdata: b\r\rdata: c\r\r", []ev{nc(ev{Data: "a\nb"}), nc(ev{Data: "c"})}},
		{"mixed endings", "data: a\r\n\rdata: b\n\r\ndata: c\r\r\n", []ev{nc(ev{Data: "a"}), nc(ev{Data: "b"}), nc(ev{Data: "c"})}},
		{"no space", "data:x\n\n", []ev{nc(ev{Data: "x"})}},
		{"two spaces keep one", "data:  x\n\n", []ev{nc(ev{Data: " x"})}},
		{"colon in value", "data: {\"a\":1}\n\n", []ev{nc(ev{Data: `{"a":1}`})}},
		{"empty data line", "data:\n\n", []ev{nc(ev{Data: ""})}},
		{"field without colon", "data\n\n", []ev{nc(ev{Data: ""})}},
		{"empty data lines join", "data\ndata\n\n", []ev{nc(ev{Data: "\n"})}},
		{"trailing empty data line", "data: a\ndata:\n\n", []ev{nc(ev{Data: "a\n"})}},
		{"event type", "event: speech.audio.delta\ndata: {}\n\n", []ev{nc(ev{Type: "speech.audio.delta", Data: "{}"})}},
		{"type resets per event", "event: a\ndata: 1\n\ndata: 2\n\n", []ev{nc(ev{Type: "a", Data: "1"}), nc(ev{Data: "2"})}},
		{"type only is an event", "event: ping\n\n", []ev{nc(ev{Type: "ping", NoData: true})}},
		{"comment only skipped", ": keep-alive\n\n:\n\n", nil},
		{"comment stamps event", ": sent=123\ndata: x\n\n", []ev{{Data: "x", Comment: "sent=123"}}},
		{"comment carried over blank line", ": sent=1\n\ndata: x\n\n", []ev{{Data: "x", Comment: "sent=1"}}},
		{"last comment wins", ": a\ndata: x\n: b\n\ndata: y\n\n", []ev{{Data: "x", Comment: "b"}, nc(ev{Data: "y"})}},
		{"comment without space", ":raw\ndata: x\n\n", []ev{{Data: "x", Comment: "raw"}}},
		{"empty comment", ":\ndata: x\n\n", []ev{{Data: "x", Comment: ""}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []ev{nc(ev{ID: "7", Data: "a"}), nc(ev{ID: "7", Data: "b"}), nc(ev{Data: "c"})}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []ev{nc(ev{ID: "1", Data: "a"}), nc(ev{ID: "1", Data: "b"})}},
		{"lone id is no event", "id: 5\n\ndata: a\n\n", []ev{nc(ev{ID: "5", Data: "a"})}},
		{"retry and unknown ignored", "retry: 100\nfoo: bar\nDATA: no\ndata: yes\n\n", []ev{nc(ev{Data: "yes"})}},
		{"BOM stripped", "\uFEFFdata: a\n\n", []ev{nc(ev{Data: "a"})}},
		{"BOM only at start", "data: a\n\n\uFEFFdata: b\n\n", []ev{nc(ev{Data: "a"})}},
		{"pending at EOF", "data: a\n\ndata: b\n", []ev{nc(ev{Data: "a"}), nc(ev{Data: "b"})}},
		{"unterminated line at EOF", "data: [DONE]", []ev{nc(ev{Data: "[DONE]"})}},
		{"CR at EOF", "data: a\r", []ev{nc(ev{Data: "a"})}},
		{"DONE stream", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []ev{nc(ev{Data: `{"x":1}`}), nc(ev{Data: "[DONE]"})}},
	}
	for _, tc := range cases {
		for rname, r := range readers(tc.in) {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got, err := readAll(r, 100)
				if err != io.EOF {
					t.Fatalf("final error = %v, want io.EOF", err)
				}
				if !equalEvents(got, tc.want) {
					t.Fatalf("events mismatch\n got %+v\nwant %+v", got, tc.want)
				}
				// io.EOF is sticky.
				if _, err := r.Next(); err != io.EOF {
					t.Fatalf("Next after EOF = %v, want io.EOF", err)
				}
			})
		}
	}
}

func equalEvents(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderHugeLine(t *testing.T) {
	payload := bytes.Repeat([]byte("QUJD"), 1<<18) // 1 MiB of base64
	in := "event: big\ndata: " + string(payload) + "\ndata: tail\n\ndata: next\n\n"
	want := []ev{
		{Type: "big", Data: string(payload) + "\ntail", NoComment: true},
		{Data: "next", NoComment: true},
	}
	for rname, r := range map[string]*Reader{
		"default": NewReader(strings.NewReader(in)),
		"half":    NewReader(iotest.HalfReader(strings.NewReader(in))),
		"buf16":   newReaderSize(strings.NewReader(in), 16),
	} {
		t.Run(rname, func(t *testing.T) {
			got, err := readAll(r, 10)
			if err != io.EOF {
				t.Fatalf("final error = %v, want io.EOF", err)
			}
			if !equalEvents(got, want) {
				t.Fatalf("got %d events; first data %d bytes, want %d", len(got), len(got[0].Data), len(want[0].Data))
			}
		})
	}
}

// errAfter returns data and then err instead of io.EOF.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = e.err
	}
	return n, err
}

func TestReaderErrors(t *testing.T) {
	boom := errors.New("connection reset")
	cases := []struct {
		name     string
		in       string
		events   int
		contains string
	}{
		{"mid-event", "data: abc\n", 0, "reading event 1 at byte 10: connection reset"},
		{"mid-line", "data: a\n\ndata: ab", 1, "reading event 2 at byte 17: connection reset"},
		{"at boundary", "data: a\n\n", 1, "reading event 2 at byte 9: connection reset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(&errAfter{strings.NewReader(tc.in), boom})
			got, err := readAll(r, 10)
			if len(got) != tc.events {
				t.Fatalf("got %d events before the error, want %d", len(got), tc.events)
			}
			if !errors.Is(err, boom) {
				t.Fatalf("error %v does not wrap the read error", err)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("error %q does not contain %q", err, tc.contains)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Fatalf("second Next = %v, want the same error", err2)
			}
		})
	}
}

// TestReaderDoesNotWaitForMoreBytes checks that an event is returned as soon
// as its blank line arrives, even with CR line endings where a following LF
// could still come: on a live stream, waiting for the next byte would delay
// the event until the server sends the next one.
func TestReaderDoesNotWaitForMoreBytes(t *testing.T) {
	for _, framing := range []string{"data: a\r\r", "data: a\r\n\r\n", "data: a\n\n", "data: a\r\n\r"} {
		pr, pw := io.Pipe()
		r := NewReader(pr)
		go func() { _, _ = pw.Write([]byte(framing)) }()
		got := make(chan error, 1)
		go func() {
			e, err := r.Next()
			if err == nil && string(e.Data) != "a" {
				err = fmt.Errorf("data %q", e.Data)
			}
			got <- err
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Errorf("%q: %v", framing, err)
			}
		case <-time.After(30 * time.Second): // hang guard only, not a timing assertion
			t.Fatalf("%q: Next blocked waiting for bytes after the blank line", framing)
		}
		// A trailing LF of the last CRLF must not produce an extra event.
		go func() { _, _ = pw.Write([]byte("\ndata: b\n\n")); _ = pw.Close() }()
		e, err := r.Next()
		if err != nil || string(e.Data) != "b" {
			t.Errorf("%q: next event = %q, %v; want \"b\"", framing, e.Data, err)
		}
	}
}

func TestReaderDataReuse(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: 2nd\n\n"))
	e1, _ := r.Next()
	if string(e1.Data) != "first" {
		t.Fatalf("first event %q", e1.Data)
	}
	e2, _ := r.Next()
	if string(e2.Data) != "2nd" {
		t.Fatalf("second event %q", e2.Data)
	}
	// Documented: e1.Data is overwritten by the second event.
	if string(e1.Data[:3]) != "2nd" {
		t.Logf("buffer not reused (allowed, but unexpected): %q", e1.Data)
	}
}

func TestReaderZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	for name, in := range map[string][]byte{
		"chat audio": chatAudioEvent(80),
		"speech sse": speechDeltaEvent(80),
		"200KB":      bigEvent(200 << 10),
	} {
		r := NewReader(&loopReader{b: in})
		for range 3 { // grow the buffers
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per event, want 0", name, allocs)
		}
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("event: a\ndata: one\n\ndata: cut"))
	if ev, err := r.Next(); err != nil || string(ev.Data) != "one" || ev.Type != "a" {
		t.Fatalf("first stream: %+v, %v", ev, err)
	}
	// A reset in the middle of an event leaves nothing of the old stream.
	r.Reset(strings.NewReader(": hi\ndata: two\nid: 7\n\n"))
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "two" || ev.Type != "" || string(ev.Comment) != "hi" || ev.ID != "7" {
		t.Fatalf("after Reset: %+v, %v", ev, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end of the second stream: %v, want io.EOF", err)
	}
	// Reset also clears a sticky error.
	r.Reset(strings.NewReader("data: three\n\n"))
	if ev, err := r.Next(); err != nil || string(ev.Data) != "three" {
		t.Fatalf("after Reset from EOF: %+v, %v", ev, err)
	}
}

// TestReaderBufferGrowsOnDemand: the read buffer starts small (a client
// holds one per open stream), grows to hold a long line, is kept by Reset
// up to 256 KiB, and goes back to its initial size beyond.
func TestReaderBufferGrowsOnDemand(t *testing.T) {
	r := NewReader(&loopReader{b: chatAudioEvent(80)})
	for range 3 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.br.Size(); got != defaultBufferSize {
		t.Errorf("after 80 ms audio events the buffer is %d bytes, want the initial %d", got, defaultBufferSize)
	}
	big := bigEvent(200 << 10)
	r.Reset(&loopReader{b: big})
	for range 3 {
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := big[len("data: ") : len(big)-2]; !bytes.Equal(ev.Data, want) {
			t.Fatalf("200 KB event read as %d bytes, want %d", len(ev.Data), len(want))
		}
	}
	if got := r.br.Size(); got != 256<<10 {
		t.Errorf("after 200 KB events the buffer is %d bytes, want 256 KiB", got)
	}
	r.Reset(strings.NewReader("data: x\n\n"))
	if got := r.br.Size(); got != 256<<10 {
		t.Errorf("Reset dropped a 256 KiB buffer (now %d)", got)
	}
	huge := bigEvent(600 << 10)
	r.Reset(bytes.NewReader(huge))
	if ev, err := r.Next(); err != nil || len(ev.Data) != len(huge)-len("data: ")-2 {
		t.Fatalf("600 KB event: %d bytes, %v", len(ev.Data), err)
	}
	if got := r.br.Size(); got != 1<<20 {
		t.Errorf("after a 600 KB event the buffer is %d bytes, want 1 MiB", got)
	}
	r.Reset(strings.NewReader("data: x\n\n"))
	if got := r.br.Size(); got != defaultBufferSize {
		t.Errorf("Reset kept a %d-byte buffer, want the initial %d", got, defaultBufferSize)
	}
	if ev, err := r.Next(); err != nil || string(ev.Data) != "x" {
		t.Errorf("after the shrink: %q, %v", ev.Data, err)
	}
}

// readSizes is a source that hands out one chunk per Read, records how
// much room each Read offered, and blocks before each chunk until released:
// it shows how large a buffer a Reader waits for input with.
type readSizes struct {
	chunks  []string
	offered chan int
	release chan struct{}
}

func (s *readSizes) Read(p []byte) (int, error) {
	s.offered <- len(p)
	<-s.release
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	if s.chunks[0] == "" {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// TestPooledReaderWaitsWithoutItsBuffer checks that a Reader with a
// BufferPool waits for each event's first bytes with its 64-byte probe,
// having given its 8 KiB buffer back, and still reads events that arrive
// in one piece, in several, or together.
func TestPooledReaderWaitsWithoutItsBuffer(t *testing.T) {
	long := "data: " + strings.Repeat("QUJD", 2000) + "\n\n" // beyond the probe, within the buffer
	for name, pool := range map[string]*BufferPool{"pooled": {}, "own buffer": nil} {
		t.Run(name, func(t *testing.T) {
			src := &readSizes{
				chunks:  []string{": sent=1\ndata: one\n\n", long[:3000], long[3000:], "data: two\n\ndata: three\n\n"},
				offered: make(chan int, 1), release: make(chan struct{}),
			}
			r := NewReader(src)
			if pool != nil {
				r = pool.NewReader(src)
			}
			got := make(chan []string, 1)
			go func() {
				var data []string
				for {
					e, err := r.Next()
					if err != nil {
						got <- data
						return
					}
					data = append(data, string(e.Data))
				}
			}()
			var (
				waits []int
				data  []string
			)
			hang := time.After(30 * time.Second) // hang guard only, not a timing assertion
		serve:
			for {
				select {
				case n := <-src.offered:
					waits = append(waits, n)
					src.release <- struct{}{}
				case data = <-got:
					break serve
				case <-hang:
					t.Fatalf("stuck after reads of %v bytes", waits)
				}
			}
			want := []string{"one", long[len("data: ") : len(long)-2], "two", "three"}
			if !slices.Equal(data, want) {
				t.Fatalf("events %.40q, want %.40q", data, want)
			}
			// Each event's first read, and the one that finds the end,
			// waits without the buffer; the rest of the long event is
			// read into the buffer borrowed for it.
			wantWaits := []int{probeSize, probeSize, defaultBufferSize - probeSize, defaultBufferSize - 3000, probeSize, probeSize}
			if pool == nil {
				wantWaits = []int{defaultBufferSize, defaultBufferSize, defaultBufferSize - 3000, defaultBufferSize, defaultBufferSize}
			}
			if !slices.Equal(waits, wantWaits) {
				t.Fatalf("reads offered %v bytes, want %v", waits, wantWaits)
			}
		})
	}
}
