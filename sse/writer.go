package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Writer writes an event stream. Each event or comment goes to the
// underlying writer in one Write call and is then flushed, so it reaches
// the client as soon as it is written. It is not safe for concurrent use.
type Writer struct {
	w     io.Writer
	flush func() error // nil when w cannot be flushed
	buf   []byte       // reused to assemble one event
	n     int          // events and comments written, for error messages
}

// NewWriter returns a Writer on w. After every event or comment it flushes
// w when w can be flushed: an http.ResponseWriter (through
// http.ResponseController, which also finds wrapped writers via Unwrap), a
// writer with FlushError() error or Flush() error (such as *bufio.Writer),
// or an http.Flusher.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, flush: flusherOf(w)}
}

func flusherOf(w io.Writer) func() error {
	switch f := w.(type) {
	case interface{ FlushError() error }:
		return f.FlushError
	case http.ResponseWriter:
		rc := http.NewResponseController(f)
		return func() error {
			// A ResponseWriter that cannot flush still works, only
			// without the latency guarantee.
			if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return err
			}
			return nil
		}
	case interface{ Flush() error }:
		return f.Flush
	case http.Flusher:
		return func() error { f.Flush(); return nil }
	}
	return nil
}

// Event writes one event: an "event: typ" line unless typ is "", one
// "data: " line per "\n"-separated line of data (so an empty data gives one
// empty data line, and the event is never mistaken for a keep-alive), and
// a blank line. Neither typ nor data may contain '\r', and typ may not
// contain '\n': the stream format cannot carry them.
func (w *Writer) Event(typ string, data []byte) error {
	if i := strings.IndexAny(typ, "\r\n"); i >= 0 {
		return fmt.Errorf("sse: event %d: type %q has a line break at byte %d", w.n+1, typ, i)
	}
	if i := bytes.IndexByte(data, '\r'); i >= 0 {
		return fmt.Errorf("sse: event %d: data has a carriage return at byte %d, which the stream format cannot carry", w.n+1, i)
	}
	b := w.buf[:0]
	if typ != "" {
		b = append(b, "event: "...)
		b = append(b, typ...)
		b = append(b, '\n')
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		b = append(b, "data: "...)
		b = append(b, data[:i]...)
		b = append(b, '\n')
		data = data[i+1:]
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	w.buf = b
	return w.send("event")
}

// Comment writes a comment line ": text". Clients ignore comments, so they
// serve as keep-alives and carry side-channel stamps (Event.Comment). text
// may not contain a line break.
func (w *Writer) Comment(text string) error {
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		return fmt.Errorf("sse: comment %d: text has a line break at byte %d", w.n+1, i)
	}
	b := append(w.buf[:0], ": "...)
	b = append(b, text...)
	b = append(b, '\n')
	w.buf = b
	return w.send("comment")
}

// send writes and flushes the assembled buffer.
func (w *Writer) send(what string) error {
	w.n++
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("sse: writing %s %d: %w", what, w.n, err)
	}
	if w.flush != nil {
		if err := w.flush(); err != nil {
			return fmt.Errorf("sse: flushing %s %d: %w", what, w.n, err)
		}
	}
	return nil
}
