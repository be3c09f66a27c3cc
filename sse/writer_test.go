package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWriterFraming(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		data string
		want string
	}{
		{"plain", "", `{"a":1}`, "data: {\"a\":1}\n\n"},
		{"typed", "speech.audio.delta", "{}", "event: speech.audio.delta\ndata: {}\n\n"},
		{"multi-line", "", "a\nb", "data: a\ndata: b\n\n"},
		{"trailing newline", "", "a\n", "data: a\ndata: \n\n"},
		{"empty", "", "", "data: \n\n"},
		{"leading space kept", "", " x", "data:  x\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := NewWriter(&buf).Event(tc.typ, []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Fatalf("wrote %q, want %q", buf.String(), tc.want)
			}
			// And it reads back as written.
			e, err := NewReader(&buf).Next()
			if err != nil || e.Type != tc.typ || string(e.Data) != tc.data {
				t.Fatalf("read back %q %q %v", e.Type, e.Data, err)
			}
		})
	}
}

func TestWriterComment(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Comment("sent=42"); err != nil {
		t.Fatal(err)
	}
	if err := w.Event("", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), ": sent=42\ndata: x\n\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	e, err := NewReader(&buf).Next()
	if err != nil || string(e.Comment) != "sent=42" {
		t.Fatalf("read back comment %q, %v", e.Comment, err)
	}
}

func TestWriterRejectsLineBreaks(t *testing.T) {
	w := NewWriter(io.Discard)
	for name, err := range map[string]error{
		"type LF":    w.Event("a\nb", nil),
		"type CR":    w.Event("a\rb", nil),
		"data CR":    w.Event("", []byte("a\r\nb")),
		"comment LF": w.Comment("a\nb"),
	} {
		if err == nil || !strings.Contains(err.Error(), "at byte 1") {
			t.Errorf("%s: error %v, want one naming byte 1", name, err)
		}
	}
}

// unwrapper hides the ResponseWriter's Flusher behind Unwrap, as logging
// middleware does; http.ResponseController still finds it.
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// flushCounter counts flushes through Flush() error.
type flushCounter struct {
	bytes.Buffer
	flushes int
}

func (f *flushCounter) Flush() error { f.flushes++; return nil }

func TestWriterFlushes(t *testing.T) {
	t.Run("ResponseWriter", func(t *testing.T) {
		rec := httptest.NewRecorder()
		if err := NewWriter(rec).Event("", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if !rec.Flushed {
			t.Fatal("recorder not flushed")
		}
	})
	t.Run("wrapped ResponseWriter", func(t *testing.T) {
		rec := httptest.NewRecorder()
		if err := NewWriter(unwrapper{rec}).Comment("k"); err != nil {
			t.Fatal(err)
		}
		if !rec.Flushed {
			t.Fatal("recorder behind Unwrap not flushed")
		}
	})
	t.Run("Flush() error", func(t *testing.T) {
		var fc flushCounter
		w := NewWriter(&fc)
		_ = w.Event("", []byte("a"))
		_ = w.Comment("b")
		if fc.flushes != 2 {
			t.Fatalf("%d flushes, want 2", fc.flushes)
		}
	})
	t.Run("bufio.Writer", func(t *testing.T) {
		var out bytes.Buffer
		if err := NewWriter(bufio.NewWriter(&out)).Event("", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if out.String() != "data: x\n\n" {
			t.Fatalf("bufio.Writer not flushed: %q", out.String())
		}
	})
	t.Run("real HTTP", func(t *testing.T) {
		// The handler writes one event and then blocks until the client
		// has read it: without a flush the client would never see it.
		read := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/event-stream")
			if err := NewWriter(rw).Event("", []byte("hello")); err != nil {
				t.Error(err)
			}
			<-read
		}))
		defer srv.Close()
		defer close(read)
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		e, err := NewReader(resp.Body).Next()
		if err != nil || string(e.Data) != "hello" {
			t.Fatalf("got %q, %v", e.Data, err)
		}
	})
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriterErrors(t *testing.T) {
	broken := errors.New("broken pipe")
	w := NewWriter(failWriter{broken})
	err := w.Event("", []byte("x"))
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "writing event 1") {
		t.Fatalf("error %v", err)
	}
	err = w.Comment("x")
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "writing comment 2") {
		t.Fatalf("error %v", err)
	}
}
