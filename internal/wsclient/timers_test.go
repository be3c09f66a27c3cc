package wsclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/run/results"
)

// quietServer is a WebSocket server that writes n small text messages at
// once (written is closed when all of them are in the socket's buffers)
// and then sends nothing until the client closes.
func quietServer(t *testing.T, n int) (url string, written <-chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		msg := []byte(`{"type":"response.output_audio_transcript.delta","delta":"` + strings.Repeat("x", 60) + `"}`)
		for range n {
			// A context that never ends: the server's writes allocate
			// nothing either, so the client's allocations are counted alone.
			if ws.Write(context.Background(), websocket.MessageText, msg) != nil {
				return
			}
		}
		close(done)
		_, _, _ = ws.Read(r.Context()) // until the client closes
	}))
	t.Cleanup(srv.Close)
	return srv.URL, done
}

// dialQuiet dials quietServer with the given idle timeout; the connection
// is closed at the test's end.
func dialQuiet(t *testing.T, ctx context.Context, n int, idle time.Duration) *conn {
	t.Helper()
	url, written := quietServer(t, n)
	c := newClient(t, url, Options{IdleTimeout: idle})
	cn, _, f := c.dial(ctx, Session{}, "/")
	if f != nil {
		t.Fatal(f)
	}
	t.Cleanup(func() { cn.closeClient(ctx) })
	<-written
	return cn
}

// TestNextReadsWithoutAllocating checks that taking a message costs no
// allocation once the buffers circulate: the session reads it on its own
// goroutine, with a read context that never ends, so that the library arms
// no cancellation for each frame (it did for every frame when a reader
// goroutine read with a cancellable context and handed each message over).
func TestNextReadsWithoutAllocating(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const runs = 50
	cn := dialQuiet(t, ctx, runs+1, time.Hour)
	deadline := time.Now().Add(time.Hour)
	events := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if _, f := cn.next(ctx, deadline, events); f != nil {
			t.Fatalf("message %d: %v", events, f)
		}
		events++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per message, want 0", allocs)
	}
}

// TestWatchdogEndsWaits checks each way a wait for a message ends when none
// comes, with the session reading on its own goroutine and through the
// reader goroutine of a paced sender: the idle timeout, the turn's
// deadline (also when it is earlier than the time the watchdog was armed
// for by the wait before), and the run's interrupt. The failure texts are
// those of the waits before the watchdog.
func TestWatchdogEndsWaits(t *testing.T) {
	const idle = 50 * time.Millisecond
	for _, paced := range []bool{false, true} {
		name := "own goroutine"
		if paced {
			name = "paced"
		}
		t.Run(name, func(t *testing.T) {
			// Bounds the test if a wait never ended: a cancelled wait
			// fails with another class.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wake chan time.Time // never fires
			setup := func(cn *conn) {
				if paced {
					cn.startReader()
					wake = make(chan time.Time)
				}
			}
			wait := func(cn *conn, deadline time.Time, events int) *failure {
				_, woke, f := cn.nextOrWake(ctx, deadline, events, wake)
				if woke {
					t.Fatal("woke without a wake")
				}
				return f
			}

			cn := dialQuiet(t, ctx, 0, idle)
			setup(cn)
			f := wait(cn, time.Time{}, 3)
			wantFailure(t, f, results.ErrIdleTimeout, "no message for the idle timeout (50ms), after 3 messages")

			cn = dialQuiet(t, ctx, 1, time.Hour)
			setup(cn)
			if f := wait(cn, time.Time{}, 0); f != nil { // arms the watchdog for an hour
				t.Fatal(f)
			}
			f = wait(cn, time.Now().Add(idle), 1)
			wantFailure(t, f, results.ErrTimeout, "the turn's deadline passed after 1 messages")

			ictx, interrupt := context.WithCancel(ctx)
			cn = dialQuiet(t, ictx, 0, time.Hour)
			setup(cn)
			interrupt()
			_, _, f = cn.nextOrWake(ictx, time.Time{}, 2, wake)
			wantFailure(t, f, results.ErrCancelled, "run interrupted after 2 messages")
		})
	}
}

func wantFailure(t *testing.T, f *failure, class, text string) {
	t.Helper()
	if f == nil || f.class != class || f.err.Error() != text || !f.fatal {
		t.Errorf("failure %+v, want a fatal %s: %q", f, class, text)
	}
}

// TestPacedTextAnswersPings checks that a speech-ws session answers the
// server's ping while it paces its text (a word every 100 s here): a server
// that pings at a fixed interval drops a client that does not answer, and
// slow text can take longer than it waits. The run is interrupted once the
// ping is answered (or the server gave up on it).
func TestPacedTextAnswersPings(t *testing.T) {
	answered := make(chan struct{})
	url := tinyServer(t, func(tc *tinyConn) {
		defer close(answered)
		tc.expect("session.config")
		tc.expect("input.text")
		if err := tc.c.Ping(tc.ctx); err != nil {
			t.Errorf("the client did not answer a ping while pacing its text: %v", err)
		}
	})
	c := newClient(t, url, Options{APIKey: testKey, Timeout: time.Hour})
	ctx, interrupt := context.WithCancel(t.Context())
	ended := make(chan *results.Record, 2)
	go c.Run(ctx, Session{Kind: results.KindSpeechWS, Texts: []string{"one two"}, TextRate: 0.01}, Turn{
		Begin: func(int) *results.Record { return &results.Record{} },
		End:   func(_ int, rec *results.Record) { ended <- rec },
	})
	<-answered
	interrupt()
	if rec := <-ended; rec.ErrorClass != results.ErrCancelled {
		t.Errorf("record %s: %s, want the interrupt", rec.ErrorClass, rec.Error)
	}
}

// TestMessageAtTheTimeout checks that a message whose read ended as the
// watchdog closed the connection fails the wait with the timeout, rather
// than being handed to a session whose connection is gone (its next send
// would fail as a connection error).
func TestMessageAtTheTimeout(t *testing.T) {
	cn := &conn{opts: &Options{IdleTimeout: time.Second}, buffers: &bufferPool{}}
	m := message{typ: websocket.MessageText, data: []byte("{}"), buf: cn.buffers.get()}
	_, _, f := cn.received(t.Context(), m, true, idleExpired, 4)
	wantFailure(t, f, results.ErrIdleTimeout, "no message for the idle timeout (1s), after 4 messages")
	if cn.readErr == nil || cn.lent != nil {
		t.Errorf("the connection is not marked ended (%v) or the message was lent", cn.readErr)
	}
}
