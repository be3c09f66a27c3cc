package simulator

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeLog is a net.Conn that records its writes (only Write is used).
type writeLog struct {
	net.Conn
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestCorkConnHoldsWritesUntilUncork(t *testing.T) {
	log := &writeLog{}
	c := &corkConn{Conn: log}
	if _, err := c.Write([]byte("head")); err != nil {
		t.Fatal(err)
	}
	err := corked(c, func() error {
		for _, s := range []string{"a", "bb", "ccc"} {
			if n, err := c.Write([]byte(s)); err != nil || n != len(s) {
				t.Fatalf("corked Write(%q) = %d, %v", s, n, err)
			}
		}
		if len(log.writes) != 1 {
			t.Fatalf("%d writes reached the connection while corked, want only the one before", len(log.writes))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := corked(c, func() error { return nil }); err != nil { // nothing held: no write
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	if want := []string{"head", "abbccc", "tail"}; !slices.Equal(log.writes, want) {
		t.Errorf("writes %q, want %q", log.writes, want)
	}
}

// failConn fails every write.
type failConn struct{ net.Conn }

func (failConn) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestCorkConnReportsWriteErrorAtUncork(t *testing.T) {
	c := &corkConn{Conn: failConn{}}
	err := corked(c, func() error {
		_, err := c.Write([]byte("event"))
		return err
	})
	if err == nil {
		t.Fatal("the connection's write error was lost")
	}
	// The handler's own error wins over the write error.
	own := errors.New("own")
	if err := corked(c, func() error { _, _ = c.Write([]byte("x")); return own }); !errors.Is(err, own) {
		t.Errorf("error %v, want the handler's", err)
	}
}

// countingListener counts the writes of every accepted connection.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1) // before the write: the client may see the bytes before Write returns
	return c.Conn.Write(p)
}

// TestStreamedEventIsOneWrite serves events much larger than net/http's
// 4 KiB connection buffer (0.32 s chunks: about 20 KB of base64) the way
// Start does and checks each leaves in one write: the connection sees the
// response head, one write per event and the final chunk.
func TestStreamedEventIsOneWrite(t *testing.T) {
	cfg := testConfig()
	cfg.Timing.ChunkAudio = 320 * time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	hs := &http.Server{Handler: s.Handler(), ConnContext: withCork, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(corkListener{countingListener{Listener: ln, writes: &writes}}) }()
	t.Cleanup(func() {
		_ = hs.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	run := &Running{URL: "http://" + ln.Addr().String()}

	cs := doChat(t, run, chatReq("a sentence long enough for several large audio chunks", nil))
	if !cs.done || len(cs.audio) < 3 || len(cs.audio[0]) < 15000 {
		t.Fatalf("stream: done %v, %d audio events, read error %v", cs.done, len(cs.audio), cs.readErr)
	}
	if got, limit := writes.Load(), int64(len(cs.events)+2); got > limit {
		t.Errorf("%d writes for %d events, want at most %d (head, one per event, end)", got, len(cs.events), limit)
	}

	// The raw byte stream too: head, streaming WAV header, one write per chunk, end.
	writes.Store(0)
	_, _, body := doSpeech(t, run, speechReq("a sentence long enough for several chunks", map[string]any{"stream_format": "audio"}))
	chunks := (len(body) - 44 + 15359) / 15360
	if got, limit := writes.Load(), int64(chunks+3); got > limit || !bytes.HasPrefix(body, []byte("RIFF")) {
		t.Errorf("raw stream: %d writes for %d chunks, want at most %d", got, chunks, limit)
	}
}
