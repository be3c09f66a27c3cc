package simulator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/sse"
)

// sseOut writes one response's events: an optional send stamp comment and
// the event, assembled by sse.Writer and flushed once per event.
type sseOut struct {
	sw    *sse.Writer
	rc    *http.ResponseController
	cork  *corkConn // nil: the event goes out as net/http writes it
	stamp bool
}

// writerOnly hides the ResponseWriter's flush methods from sse.Writer, so
// that a stamp and its event leave in one flush instead of two.
type writerOnly struct{ io.Writer }

func newSSEOut(ctx context.Context, w http.ResponseWriter, stamp bool) *sseOut {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	o := &sseOut{sw: sse.NewWriter(writerOnly{w}), rc: http.NewResponseController(w), cork: corkOf(ctx), stamp: stamp}
	_ = o.rc.Flush() // headers out now; a failure shows on the first event write
	return o
}

// send writes one event (typ "" for a plain data event), preceded by the
// stamp comment ": sent=<unix ns>" when stamping, and flushes it: in one
// write to the connection when the request came through Start.
func (o *sseOut) send(typ string, data []byte) error {
	return corked(o.cork, func() error {
		if o.stamp {
			if err := o.sw.Comment("sent=" + strconv.FormatInt(time.Now().UnixNano(), 10)); err != nil {
				return err
			}
		}
		if err := o.sw.Event(typ, data); err != nil {
			return err
		}
		return flush(o.rc)
	})
}

// flush pushes a response's buffered bytes to the connection.
func flush(rc *http.ResponseController) error {
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("flushing event: %w", err)
	}
	return nil
}

// appendJSONString appends s as a JSON string literal. Invalid UTF-8
// becomes U+FFFD, as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029': // valid JSON, but break JavaScript parsers
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// appendBase64 appends the standard base64 of src; with corrupt, it damages
// the encoding in the middle with characters outside the alphabet (still
// valid inside a JSON string), for the malformed-base64 fault.
func appendBase64(dst, src []byte, corrupt bool) []byte {
	start := len(dst)
	dst = base64.StdEncoding.AppendEncode(dst, src)
	if corrupt {
		enc := dst[start:]
		if len(enc) < 4 {
			return append(dst, "!#$%"...)
		}
		copy(enc[len(enc)/2/4*4:], "!#$%")
	}
	return dst
}

// usageJSON appends {"prompt_tokens":p,"completion_tokens":c,"total_tokens":p+c}.
func appendUsage(dst []byte, prompt, completion int) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(prompt), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(completion), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(prompt+completion), 10)
	return append(dst, '}')
}
