package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestEventCap: a server that streams data without ever ending a line (or
// an event) is cut off at the cap and classed malformed with the size
// seen, instead of being held whole in memory.
func TestEventCap(t *testing.T) {
	const cap = 1 << 20
	const bound = 64 << 20 // the server gives up after this much; the client must stop long before
	for _, tc := range []struct {
		name, kind, prefix, loop, msg string
	}{
		{"chat line without end", results.KindChat, "data: ", strings.Repeat("QUJD", 1024), "line starting at byte 0 exceeds the limit of 1048576 bytes"},
		{"speech event without end", results.KindSpeechSSE, "", "data: " + strings.Repeat("QUJD", 255) + "\n", "event 1 starting at byte 0 exceeds the limit of 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var written atomic.Int64
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				io.WriteString(w, tc.prefix)
				chunk := []byte(tc.loop)
				for written.Load() < bound {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return // the client hung up
					}
				}
			})
			c := newClient(t, srv.URL, Options{MaxEventBytes: cap})
			rec := do(t, c, Request{Kind: tc.kind, Prompt: "x", AudioFormat: "pcm"})
			if rec.ErrorClass != results.ErrMalformed {
				t.Fatalf("class %q (%s), want malformed", rec.ErrorClass, rec.Error)
			}
			if !strings.Contains(rec.Error, tc.msg) || !strings.Contains(rec.Error, "bytes") || !strings.Contains(rec.Error, "--max-event-bytes") {
				t.Errorf("error %q does not contain %q, the size seen and the flag", rec.Error, tc.msg)
			}
			if w := written.Load(); w >= bound {
				t.Errorf("the client read all %d bytes the server sent", w)
			}
		})
	}
}

// TestContentType: a 2xx body of the wrong type is not audio. Raw speech
// takes audio/* and application/octet-stream; the SSE kinds take
// text/event-stream; anything else is malformed, naming what came and
// quoting the start of the body.
func TestContentType(t *testing.T) {
	const login = "<!DOCTYPE html>\n<html>\n  <head><title>Sign in</title></head>\n  <body>Please log in to continue</body>\n</html>\n"
	pcm := testPCM(chunk80ms)
	cases := []struct {
		name, kind, contentType, body string
		ok                            bool
		msg                           string
	}{
		{"speech login page", results.KindSpeech, "text/html; charset=utf-8", login, false,
			`HTTP 200 with an HTML page (Content-Type "text/html; charset=utf-8") instead of audio (audio/*, application/octet-stream): <!DOCTYPE html> <html> <head><title>Sign in</title></head> <body>Please log in`},
		{"speech answered with SSE", results.KindSpeech, "text/event-stream", "data: {\"type\":\"speech.audio.delta\",\"audio\":\"AAAA\"}\n\n", false,
			`an SSE body (Content-Type "text/event-stream") instead of audio`},
		{"speech text/plain", results.KindSpeech, "text/plain", "Internal Server Error", false, `Content-Type "text/plain" instead of audio`},
		{"speech without Content-Type", results.KindSpeech, "", string(pcm), false, "no Content-Type instead of audio"},
		{"speech empty HTML", results.KindSpeech, "text/html", "", false, "HTML page"},
		{"speech audio/pcm", results.KindSpeech, "audio/pcm", string(pcm), true, ""},
		{"speech audio/wav upper case", results.KindSpeech, "Audio/WAV", string(testWAV(24000, pcm, true)), true, ""},
		{"speech audio/L16", results.KindSpeech, "audio/L16; rate=24000", string(pcm), true, ""},
		{"speech octet-stream", results.KindSpeech, "application/octet-stream", string(pcm), true, ""},
		{"chat login page", results.KindChat, "text/html", login, false, `an HTML page (Content-Type "text/html") instead of an event stream (text/event-stream): <!DOCTYPE html>`},
		{"chat octet-stream", results.KindChat, "application/octet-stream", "data: [DONE]\n\n", false, `Content-Type "application/octet-stream" instead of an event stream`},
		{"speech SSE as audio", results.KindSpeechSSE, "audio/pcm", string(pcm), false, `Content-Type "audio/pcm" instead of an event stream`},
		{"speech SSE bad type", results.KindSpeechSSE, "text/event-stream;;", "", false, `unparsable Content-Type "text/event-stream;;"`},
		{"speech SSE with charset", results.KindSpeechSSE, "text/event-stream; charset=utf-8",
			"event: speech.audio.delta\ndata: {\"audio\":\"AAAA\"}\n\nevent: speech.audio.done\ndata: {}\n\n", true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				if tc.contentType == "" {
					w.Header()["Content-Type"] = nil // no sniffing either
				} else {
					w.Header().Set("Content-Type", tc.contentType)
				}
				io.WriteString(w, tc.body)
			})
			c := newClient(t, srv.URL, Options{})
			format := "pcm"
			if strings.Contains(tc.name, "wav") {
				format = "wav"
			}
			rec := do(t, c, Request{Kind: tc.kind, Prompt: "x", AudioFormat: format})
			if tc.ok {
				if rec.ErrorClass != "" || rec.AudioBytes == 0 {
					t.Fatalf("class %q (%s), %d audio bytes; want a success with audio", rec.ErrorClass, rec.Error, rec.AudioBytes)
				}
				return
			}
			if rec.ErrorClass != results.ErrMalformed || rec.Status != 200 {
				t.Fatalf("class %q status %d (%s), want malformed", rec.ErrorClass, rec.Status, rec.Error)
			}
			if !strings.Contains(rec.Error, tc.msg) {
				t.Errorf("error %q does not contain %q", rec.Error, tc.msg)
			}
			if rec.AudioBytes != 0 || len(rec.ChunkBytes) != 0 {
				t.Errorf("%d audio bytes recorded from a non-audio body", rec.AudioBytes)
			}
		})
	}
}

// sizedWAVHeader is a canonical 44-byte header declaring dataSize bytes of
// 24 kHz s16le mono and a RIFF size covering trailer more bytes after the
// data.
func sizedWAVHeader(dataSize, trailer int) []byte {
	h := testWAV(24000, nil, false)
	binary.LittleEndian.PutUint32(h[4:], uint32(36+dataSize+trailer))
	binary.LittleEndian.PutUint32(h[40:], uint32(dataSize))
	return h
}

// listChunk is a LIST chunk whose payload is n bytes (1 s of 24 kHz s16le
// mono when n is 48000): metadata, not audio.
func listChunk(n int) []byte {
	b := []byte("LIST")
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	return append(b, bytes.Repeat([]byte("I"), n)...)
}

// TestWAVDeclaredSizes: the data size a WAV header declares is honoured.
// Short data is truncated, bytes after the data (a trailing chunk) are not
// audio, and streaming headers (0xFFFFFFFF or zero placeholders) run to the
// end. Speech SSE with wav and no RIFF header is malformed.
func TestWAVDeclaredSizes(t *testing.T) {
	pcm := testPCM(chunk80ms)
	b64 := base64.StdEncoding.EncodeToString
	placeholder := testWAV(24000, nil, false) // RIFF 36, data 0
	cases := []struct {
		name   string
		kind   string
		format string
		pieces [][]byte // raw body pieces, or SSE delta payloads (audio)
		class  string
		bytes  int64 // audio bytes counted
		msg    string
	}{
		{"raw: declares more than it sends", results.KindSpeech, "wav",
			[][]byte{sizedWAVHeader(2*chunk80ms, 0), pcm}, results.ErrTruncated, chunk80ms,
			"the WAV header declares 7680 data bytes but the end of the body came after 3840"},
		{"raw: trailing LIST is not audio", results.KindSpeech, "wav",
			[][]byte{sizedWAVHeader(chunk80ms, 8+48000), pcm[:1000], pcm[1000:], listChunk(48000)}, "", chunk80ms, ""},
		{"raw: data and LIST in one piece", results.KindSpeech, "wav",
			[][]byte{append(append(sizedWAVHeader(chunk80ms, 8+48000), pcm...), listChunk(48000)...)}, "", chunk80ms, ""},
		{"raw: streaming header runs to the end", results.KindSpeech, "wav",
			[][]byte{testWAV(24000, nil, true), pcm, pcm}, "", 2 * chunk80ms, ""},
		{"raw: zero placeholder header alone", results.KindSpeech, "wav",
			[][]byte{placeholder, pcm, pcm}, "", 2 * chunk80ms, ""},
		{"sse: wav without a RIFF header", results.KindSpeechSSE, "wav",
			[][]byte{pcm, pcm}, results.ErrMalformed, 0, "wav was asked for but the audio has no RIFF header"},
		{"sse: pcm without a header is fine", results.KindSpeechSSE, "pcm",
			[][]byte{pcm, pcm}, "", 2 * chunk80ms, ""},
		{"sse: sized header, short data", results.KindSpeechSSE, "wav",
			[][]byte{sizedWAVHeader(2*chunk80ms, 0), pcm}, results.ErrTruncated, chunk80ms,
			"the WAV header declares 7680 data bytes but speech.audio.done came after 3840"},
		{"sse: sized header, data in deltas, trailing LIST", results.KindSpeechSSE, "wav",
			[][]byte{sizedWAVHeader(chunk80ms, 8+48000), pcm[:2000], pcm[2000:], listChunk(48000)}, "", chunk80ms, ""},
		{"sse: a whole file per delta", results.KindSpeechSSE, "wav",
			[][]byte{testWAV(24000, pcm, false), testWAV(24000, pcm, false)}, "", 2 * chunk80ms, ""},
		{"sse: next header before the data is complete", results.KindSpeechSSE, "wav",
			[][]byte{sizedWAVHeader(2*chunk80ms, 0), pcm, testWAV(24000, pcm, false)}, results.ErrTruncated, chunk80ms,
			"a new WAV header while the previous file still lacked 3840 of the 7680 data bytes it declared"},
		{"sse: streaming header", results.KindSpeechSSE, "wav",
			[][]byte{testWAV(24000, nil, true), pcm, pcm}, "", 2 * chunk80ms, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				if tc.kind == results.KindSpeech {
					w.Header().Set("Content-Type", "audio/wav")
					for _, p := range tc.pieces {
						w.Write(p)
						w.(http.Flusher).Flush()
					}
					return
				}
				sseStart(w)
				for _, p := range tc.pieces {
					event(w, speechDelta, `{"type":"speech.audio.delta","audio":"`+b64(p)+`"}`)
				}
				event(w, speechDone, `{"type":"speech.audio.done"}`)
			})
			c := newClient(t, srv.URL, Options{})
			rec := do(t, c, Request{Kind: tc.kind, Prompt: "x", AudioFormat: tc.format})
			if rec.ErrorClass != tc.class {
				t.Fatalf("class %q (%s), want %q", rec.ErrorClass, rec.Error, tc.class)
			}
			if !strings.Contains(rec.Error, tc.msg) {
				t.Errorf("error %q does not contain %q", rec.Error, tc.msg)
			}
			if rec.AudioBytes != tc.bytes {
				t.Errorf("%d audio bytes counted, want %d", rec.AudioBytes, tc.bytes)
			}
			if want := float64(tc.bytes) / 2 / 24000; tc.bytes > 0 && !near(rec.AudioDurationS, want) {
				t.Errorf("audio duration %v s, want %v", rec.AudioDurationS, want)
			}
			checkTimeline(t, rec)
		})
	}
}

// TestControlCharacterInStream: a chat event whose JSON string holds a raw
// tab is invalid JSON (encoding/json refuses it) and is malformed, not text.
func TestControlCharacterInStream(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", `{"choices":[{"delta":{"content":"tab`+"\t"+`here"}}],"modality":"text"}`)
		event(w, "", "[DONE]")
	})
	rec := do(t, newClient(t, srv.URL, Options{}), Request{Kind: results.KindChat, Prompt: "x"})
	if rec.ErrorClass != results.ErrMalformed || !strings.Contains(rec.Error, `event 1: invalid JSON at byte 36: invalid character '\t' in string literal`) {
		t.Fatalf("class %q (%s), want malformed naming the tab", rec.ErrorClass, rec.Error)
	}
	if rec.TextChars != 0 {
		t.Errorf("%d characters of text counted from invalid JSON", rec.TextChars)
	}
}

// TestRedirectsAreNotFollowed: a redirect is an http_status failure with
// the 3xx code and the Location (credentials redacted); the target is never
// contacted, so neither the API key nor the request reaches another host,
// and a 302 does not turn the POST into a GET.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		elsewhere.Add(1)
		sseStart(w)
		event(w, "", "[DONE]")
	})
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			var gets atomic.Int32
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				if r.Method != http.MethodPost {
					gets.Add(1)
				}
				if r.URL.Path == "/moved" {
					sseStart(w)
					event(w, "", "[DONE]")
					return
				}
				target := "/moved"
				if code == 307 || code == 308 {
					target = strings.Replace(other.URL, "http://", "http://admin:hunter2@", 1) + "/v1/chat/completions?sig=s3cr3t&user=bob#frag"
				}
				w.Header().Set("Location", target)
				w.WriteHeader(code)
				io.WriteString(w, "<a href=\"/moved\">Moved</a>")
			})
			c := newClient(t, srv.URL, Options{APIKey: testAPIKey})
			rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x", Headers: map[string]string{"X-Api-Key": "other-secret-value"}})
			if rec.ErrorClass != results.ErrHTTPStatus || rec.Status != code {
				t.Fatalf("class %q status %d (%s), want http_status %d", rec.ErrorClass, rec.Status, rec.Error, code)
			}
			want := "Location /moved"
			if code == 307 || code == 308 {
				want = "Location " + other.URL + "/v1/chat/completions?sig=xxxxx&user=xxxxx"
			}
			if !strings.Contains(rec.Error, fmt.Sprintf("HTTP %d redirect (%s), not followed", code, want)) {
				t.Errorf("error %q does not name the redirect to %q", rec.Error, want)
			}
			for _, secret := range []string{"hunter2", "admin", "s3cr3t", "bob", "frag"} {
				if strings.Contains(rec.Error, secret) {
					t.Errorf("error %q leaks %q", rec.Error, secret)
				}
			}
			if n := gets.Load(); n != 0 {
				t.Errorf("the redirect was followed with %d GET requests", n)
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host received %d requests", n)
	}
}

// rawServer accepts connections on 127.0.0.1 and answers each with the
// bytes of reply after reading the request head, then closes it.
func rawServer(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return // the listener was closed
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second)) // bounds a stuck client
				br := bufio.NewReader(conn)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(conn, reply)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// TestGarbageStatusLine: a server that answers with something that is not
// an HTTP response is malformed (what came is quoted), not a connect
// failure; a server that closes without a byte still is one.
func TestGarbageStatusLine(t *testing.T) {
	for _, tc := range []struct {
		name, reply, class, msg string
	}{
		{"garbage", "garbage\r\n\r\n", results.ErrMalformed, `malformed HTTP response "garbage"`},
		{"bad status code", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", results.ErrMalformed, `malformed HTTP status code "2x0"`},
		{"SSH banner", "SSH-2.0-OpenSSH_9.6\r\n", results.ErrMalformed, `malformed HTTP response "SSH-2.0-OpenSSH_9.6"`},
		{"long garbage", strings.Repeat("z", 5000) + "\r\n\r\n", results.ErrMalformed, "the response is not HTTP/1.x"},
		{"closed without a byte", "", results.ErrConnect, "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, rawServer(t, tc.reply), Options{})
			rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
			if rec.ErrorClass != tc.class {
				t.Fatalf("class %q (%s), want %q", rec.ErrorClass, rec.Error, tc.class)
			}
			if !strings.Contains(rec.Error, tc.msg) || len(rec.Error) > 400 {
				t.Errorf("error %q (%d bytes) does not contain %q", rec.Error, len(rec.Error), tc.msg)
			}
		})
	}
}

// TestEndsAtDoneMarker: a server that keeps the connection open after the
// end marker ([DONE], speech.audio.done, or an error event) must not hold
// the caller: Do returns while the handler is still blocked, with e2e at the
// marker. The handler is released only after Do returned; the drain wait is
// made unbounded, so a Do that waited for the rest of the body would hang
// until the guard fails the test.
func TestEndsAtDoneMarker(t *testing.T) {
	wavChunk := audioEvent(testWAV(24000, testPCM(chunk80ms), false), "")
	for _, tc := range []struct {
		name, kind, class string
		events            func(w http.ResponseWriter)
	}{
		{"chat [DONE]", results.KindChat, "", func(w http.ResponseWriter) {
			event(w, "", wavChunk)
			event(w, "", "[DONE]")
		}},
		{"speech done", results.KindSpeechSSE, "", func(w http.ResponseWriter) {
			event(w, speechDelta, `{"type":"speech.audio.delta","audio":"AAAA"}`)
			event(w, speechDone, `{"type":"speech.audio.done"}`)
		}},
		{"chat error event", results.KindChat, results.ErrStreamError, func(w http.ResponseWriter) {
			event(w, "", wavChunk)
			event(w, "", exErrorChunk)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			held := make(chan struct{})
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
				sseStart(w)
				tc.events(w)
				close(held)
				select {
				case <-release:
				case <-s.stop:
				}
			})
			c := newClient(t, srv.URL, Options{})
			c.drainTimeout = time.Hour // only the server's release may end a drain
			done := make(chan *results.Record, 1)
			go func() {
				rec := &results.Record{}
				c.Do(context.Background(), Request{Kind: tc.kind, Prompt: "x", AudioFormat: "pcm"}, rec)
				done <- rec
			}()
			var rec *results.Record
			select {
			case rec = <-done:
			case <-time.After(10 * time.Second): // hang guard only, not a timing assertion
				close(release)
				<-done
				t.Fatal("Do waited for the server to close the connection after the end marker")
			}
			<-held         // the handler is holding the connection open,
			close(release) // and only now may it finish the body
			if rec.ErrorClass != tc.class {
				t.Fatalf("class %q (%s), want %q", rec.ErrorClass, rec.Error, tc.class)
			}
			if rec.E2ES <= 0 || rec.E2ES < rec.LastAudioS {
				t.Errorf("e2e %v before the last audio %v", rec.E2ES, rec.LastAudioS)
			}
		})
	}
}

// TestCloseEndsDrains: Close does not wait for a server that holds the
// connection open after [DONE]: it ends the background drain.
func TestCloseEndsDrains(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", "[DONE]")
		select {
		case <-r.Context().Done(): // the drain was ended: the client hung up
		case <-s.stop:
		}
	})
	c := newClient(t, srv.URL, Options{})
	c.drainTimeout = time.Hour
	if rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"}); rec.ErrorClass != "" {
		t.Fatalf("class %q (%s)", rec.ErrorClass, rec.Error)
	}
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second): // hang guard only, not a timing assertion
		t.Fatal("Close waited for the held connection")
	}
}

// TestDrainOutlivesCallerContext: the caller cancels a finished request's
// context (the load generator does); the background drain of a held
// connection goes on, so once the server finishes the body the connection
// is reused. WaitDrains returns when the drain has ended.
func TestDrainOutlivesCallerContext(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", "[DONE]")
		if r.Header.Get("X-Hold") != "" {
			select {
			case <-release:
			case <-s.stop:
			}
		}
	})
	c := newClient(t, srv.URL, Options{})
	c.drainTimeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	rec := &results.Record{}
	c.Do(ctx, Request{Kind: results.KindChat, Prompt: "x", Headers: map[string]string{"X-Hold": "1"}}, rec)
	cancel()
	if rec.ErrorClass != "" {
		t.Fatalf("class %q (%s)", rec.ErrorClass, rec.Error)
	}
	close(release)
	c.WaitDrains(context.Background())
	if rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"}); rec.ErrorClass != "" || rec.ConnectS != 0 {
		t.Errorf("second request: class %q, connect %v; want a reused connection", rec.ErrorClass, rec.ConnectS)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("%d connections: the drain was cut when the caller's context was cancelled", n)
	}
}

// heldAfterDone is a server whose responses end with [DONE] and, for a
// request with an X-Hold header, keep the connection open after it until
// the test releases them (release) or the client hangs up. Each held
// handler reports how it ended on ended: "released" or "cut".
func heldAfterDone(t *testing.T) (srv *server, release chan struct{}, ended chan string) {
	release, ended = make(chan struct{}), make(chan string, 4)
	srv = newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", "[DONE]")
		if r.Header.Get("X-Hold") == "" {
			return
		}
		select {
		case <-release:
			ended <- "released"
		case <-r.Context().Done():
			ended <- "cut"
		case <-s.stop:
		}
	})
	return srv, release, ended
}

// TestDrainHoldsNoConnectionSlot: with MaxConns 1, a server that keeps the
// connection open after [DONE] must not make the next request wait for
// the connection the first one's drain reads from: the next request dials
// a new connection at once, and the drain goes on (the server sees the
// response read through, not cut). Before, the second request waited for
// the drain's bound (2 s; here an hour, so it failed at the request
// timeout).
func TestDrainHoldsNoConnectionSlot(t *testing.T) {
	srv, release, ended := heldAfterDone(t)
	c := newClient(t, srv.URL, Options{MaxConns: 1, Timeout: 20 * time.Second})
	c.drainTimeout = time.Hour
	held := Request{Kind: results.KindChat, Prompt: "x", Headers: map[string]string{"X-Hold": "1"}}
	if rec := do(t, c, held); !rec.OK() {
		t.Fatalf("first request: %s: %s", rec.ErrorClass, rec.Error)
	}
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
	if !rec.OK() || rec.ConnectS == 0 {
		t.Fatalf("second request: class %q (%s), connect %v s; want a success on a new connection", rec.ErrorClass, rec.Error, rec.ConnectS)
	}
	close(release)
	if how := <-ended; how != "released" {
		t.Errorf("the first request's drain was %s; want it read through until the server ended it", how)
	}
	c.WaitDrains(context.Background())
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("server saw %d connections; want 2", n)
	}
}

// TestDrainsBounded: drains are bounded by MaxConns too, so a server that
// holds every connection after [DONE] cannot grow the client's connections
// without bound: with MaxConns 1, the second held response's drain ends
// the first one's.
func TestDrainsBounded(t *testing.T) {
	srv, release, ended := heldAfterDone(t)
	c := newClient(t, srv.URL, Options{MaxConns: 1, Timeout: 20 * time.Second})
	c.drainTimeout = time.Hour
	held := Request{Kind: results.KindChat, Prompt: "x", Headers: map[string]string{"X-Hold": "1"}}
	for i := range 2 {
		if rec := do(t, c, held); !rec.OK() {
			t.Fatalf("request %d: %s: %s", i, rec.ErrorClass, rec.Error)
		}
	}
	if how := <-ended; how != "cut" {
		t.Errorf("the first drain was %s; want it cut by the second", how)
	}
	close(release)
	if how := <-ended; how != "released" {
		t.Errorf("the second drain was %s; want it read through", how)
	}
	c.WaitDrains(context.Background())
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("server saw %d connections; want 2", n)
	}
}

// TestBodyFramingClasses: a chunked body whose framing is bad (a chunk
// size that is not hex, one too large) is malformed, what the server sent
// is not HTTP; a body cut inside a chunk is truncated. A 304 is a status,
// not a redirect (it names nowhere to go).
func TestBodyFramingClasses(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	const first = "f\r\ndata: {\"a\":1}\n\n\r\n"
	for _, tc := range []struct {
		name, reply, class, msg string
	}{
		{"chunk size not hex", head + first + "zz\r\ndata: x\n\n\r\n", results.ErrMalformed, "invalid byte in chunk length"},
		{"chunk size too large", head + first + "fffffffffffffffff\r\n", results.ErrMalformed, "chunk length too large"},
		{"cut inside a chunk", head + first + "40\r\ndata: {", results.ErrTruncated, "unexpected EOF"},
		{"not modified", "HTTP/1.1 304 Not Modified\r\n\r\n", results.ErrHTTPStatus, "HTTP 304: (empty body)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, newClient(t, rawServer(t, tc.reply), Options{}), Request{Kind: results.KindChat, Prompt: "x"})
			if rec.ErrorClass != tc.class || !strings.Contains(rec.Error, tc.msg) {
				t.Errorf("class %q, error %q; want %q containing %q", rec.ErrorClass, rec.Error, tc.class, tc.msg)
			}
			if strings.Contains(rec.Error, "redirect") {
				t.Errorf("error %q calls it a redirect", rec.Error)
			}
		})
	}
}

// TestIdleTimeoutInsideTheHead: a server that sends the start of a head and
// no more fails at the idle timeout, and the message says the head was
// incomplete after its first byte, not that no data came.
func TestIdleTimeoutInsideTheHead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/ev")
		<-stop
	}()
	t.Cleanup(func() {
		close(stop)
		ln.Close()
		<-served
	})
	c := newClient(t, "http://"+ln.Addr().String(), Options{IdleTimeout: 100 * time.Millisecond})
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
	if rec.ErrorClass != results.ErrIdleTimeout || !strings.Contains(rec.Error, "the response head was still incomplete") || strings.Contains(rec.Error, "no data") {
		t.Errorf("class %q, error %q; want %s saying the head was incomplete", rec.ErrorClass, rec.Error, results.ErrIdleTimeout)
	}
	if rec.FirstByteS <= 0 {
		t.Errorf("first byte at %v s; want the time the head began", rec.FirstByteS)
	}
}
