package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/omnibench/omnibench/internal/bytescan"
)

// defaultBufferSize is the initial bufio buffer of a Reader. It holds a
// typical audio event (about 5 KB of base64 per 80 ms of 24 kHz audio), and
// it is small because a client keeps one per open stream: a line that does
// not fit makes the buffer grow (doubling, up to maxBufferSize), so a stream
// of larger events pays the growth once, not a copy per line.
const defaultBufferSize = 8 << 10

// maxBufferSize bounds the buffer's growth; longer lines (up to the cap)
// are assembled in a side buffer instead.
const maxBufferSize = 1 << 20

// maxRetainedBuffer bounds the grown buffer Reset keeps for the next
// stream (a 200 KB event's 256 KiB): a larger one goes back to the
// initial size.
const maxRetainedBuffer = 256 << 10

// DefaultMaxEventBytes is the default cap on one line and on one event's
// data. An 80 ms audio event is about 5 KB and a whole base64 WAV file of
// several seconds a few hundred KB, so 16 MiB leaves ample room for real
// servers while bounding what a server that never sends a line end can make
// the client hold (a Reader keeps at most about twice the cap: the line being
// assembled and the event's data).
const DefaultMaxEventBytes = 16 << 20

// maxRetained bounds the buffers Reset keeps for the next stream, so that a
// pooled Reader does not hold one huge event's memory for ever.
const maxRetained = 1 << 20

// maxInternedTypes bounds the per-Reader cache of event type strings.
const maxInternedTypes = 8

// probeSize is the read a Reader with a BufferPool waits with while it
// holds no buffer: enough for a send-stamp comment or a short event, and
// small because every open stream keeps one.
const probeSize = 64

// utf8BOM is skipped at the start of a stream, as the SSE specification asks.
const utf8BOM = "\xEF\xBB\xBF"

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the value of the last "event:" line; "" when there was none
	// (callers treat "" as "message").
	Type string
	// Data holds the "data:" lines joined with "\n". It aliases the
	// Reader's buffer and is valid only until the next call to Next;
	// copy it to keep it.
	Data []byte
	// ID is the last event ID seen on the stream. As in the SSE
	// specification it persists across events until another "id:" line
	// changes it; "id:" values that contain NUL are ignored.
	ID string
	// Comment is the last comment line (without the leading ':' and one
	// optional space) seen since the previous event, or nil when there was
	// none. Comments in comment-only blocks carry over to the next event.
	// It is valid only until the next call to Next.
	Comment []byte
}

// Reader parses an event stream. It is not safe for concurrent use.
type Reader struct {
	br *bufio.Reader
	// src is br's source: the stream, behind the bytes a growth of br
	// carried over from the smaller buffer.
	src prefixReader

	offset int64 // bytes consumed from br, for error messages
	events int   // events dispatched so far
	err    error // sticky: once set, every Next returns it

	started bool // the first line has been seen (for BOM stripping)
	skipLF  bool // the previous line ended in '\r'; a following '\n' belongs to it

	long []byte // assembles a line that does not fit in br's buffer

	// The event being assembled. Buffers are reused across events.
	data []byte
	// dataRef is the value of the event's only data line so far, aliasing
	// br's buffer: most events have one data line, and this spares copying
	// it (5 KB for an audio event). It is copied into data before anything
	// can move br's bytes (a refill or growth) and when a second data line
	// comes.
	dataRef    []byte
	lineInLong bool // the line readLine returned was assembled in long
	sawData    bool
	typ        string
	comment    []byte
	sawComment bool
	id         string

	types []string // interned event types, so "event:" lines do not allocate

	eventStart int64 // offset where the event being read started
	lineStart  int64 // offset where the line being read started

	max int // cap on a line and on an event's data, in bytes

	// pool, when set, lends br (BufferPool.NewReader): the Reader gives br
	// back whenever it has consumed all it read, and waits for the next
	// bytes in probe; br is nil in between.
	pool  *BufferPool
	probe [probeSize]byte
}

// BufferPool lends read buffers to the Readers that share it. A Reader
// with a pool holds a buffer only while it has unread bytes: it gives the
// buffer back when it has consumed everything it read, and waits for the
// stream's next bytes with a 64-byte read of its own. A client of a
// thousand audio streams, each idle for most of the 80 ms between events,
// then holds buffers for the few streams whose events are being parsed,
// not one per open stream (8 KiB each). The cost is one more read from the
// source per burst of input, served from what the source has buffered.
//
// Only buffers of the initial size are lent; a Reader whose buffer grew
// for long lines keeps it, as without a pool. The zero value is ready to
// use; a BufferPool must not be copied after first use.
type BufferPool struct {
	readers sync.Pool // *bufio.Reader of size bytes
	size    int       // 0 means defaultBufferSize (tests use tiny buffers)
}

func (p *BufferPool) bufferSize() int {
	if p.size == 0 {
		return defaultBufferSize
	}
	return p.size
}

// get returns a buffer reading from src.
func (p *BufferPool) get(src io.Reader) *bufio.Reader {
	if br, ok := p.readers.Get().(*bufio.Reader); ok {
		br.Reset(src)
		return br
	}
	return bufio.NewReaderSize(src, p.bufferSize())
}

// NewReader returns a Reader like the package's NewReader that borrows its
// buffer from p. It holds none until the stream's first bytes arrive.
func (p *BufferPool) NewReader(r io.Reader) *Reader {
	return &Reader{src: prefixReader{r: r}, max: DefaultMaxEventBytes, pool: p}
}

func (p *BufferPool) put(br *bufio.Reader) {
	br.Reset(nil) // drop the stream
	p.readers.Put(br)
}

// LimitError reports a line or an event's data that exceeds the Reader's
// cap (SetMaxEventBytes). Next returns it, unwrapped, and keeps returning it.
type LimitError struct {
	What   string // "line" or "event"
	Event  int    // number (from 1) of the event being read
	Offset int64  // byte offset of the stream where the line or event started
	Size   int64  // bytes of it seen when the Reader gave up (more than Limit)
	Limit  int
}

func (e *LimitError) Error() string {
	if e.What == "line" {
		return fmt.Sprintf("sse: reading event %d: line starting at byte %d exceeds the limit of %d bytes (%d bytes read without a line end)", e.Event, e.Offset, e.Limit, e.Size)
	}
	return fmt.Sprintf("sse: event %d starting at byte %d exceeds the limit of %d bytes (%d bytes of data lines)", e.Event, e.Offset, e.Limit, e.Size)
}

// NewReader returns a Reader that parses the event stream read from r. A
// line and an event's data may each be up to DefaultMaxEventBytes long (see
// SetMaxEventBytes); the caller bounds a stream's size and duration (for
// example with a request context).
func NewReader(r io.Reader) *Reader {
	return newReaderSize(r, defaultBufferSize)
}

// SetMaxEventBytes sets the cap on one line and on one event's data (the
// "data:" values joined); n <= 0 restores DefaultMaxEventBytes. Beyond the
// cap Next returns a *LimitError instead of buffering more. The cap survives
// Reset.
func (r *Reader) SetMaxEventBytes(n int) {
	if n <= 0 {
		n = DefaultMaxEventBytes
	}
	r.max = n
}

// Reset makes r read a new stream from src, keeping its buffers (and its
// interned event types), so a client can reuse one Reader per connection
// or pool them across requests instead of allocating a buffer each time.
// Buffers grown beyond 1 MiB by an unusually large event are dropped, and
// a read buffer grown beyond 256 KiB goes back to its initial 8 KiB.
func (r *Reader) Reset(src io.Reader) {
	*r = Reader{
		br:      r.br,
		src:     prefixReader{r: src, carry: retain(r.src.carry)},
		long:    retain(r.long),
		data:    retain(r.data),
		comment: retain(r.comment),
		types:   r.types,
		max:     r.max,
		pool:    r.pool,
	}
	if r.br == nil {
		return // lent: borrowed again when the new stream has bytes
	}
	if r.br.Size() > maxRetainedBuffer {
		r.br = bufio.NewReaderSize(&r.src, defaultBufferSize)
		return
	}
	r.br.Reset(&r.src)
	r.lend()
}

// lend gives br back to the pool when r has one and nothing of br is
// unread: no buffered bytes, nothing carried over, and no error from the
// source that br may hold for its next read (bufio keeps it there, and it
// would be lost with the buffer).
func (r *Reader) lend() {
	if r.pool == nil || r.br == nil || r.br.Buffered() > 0 || len(r.src.pre) > 0 || r.src.failed || r.br.Size() != r.pool.bufferSize() {
		return
	}
	r.pool.put(r.br)
	r.br = nil
}

// borrow waits for the stream's next bytes in probe, without a buffer, and
// then takes one from the pool; the probed bytes (and an error that came
// with them) reach it first through src.
func (r *Reader) borrow() {
	probe := r.probe[:]
	if r.max < len(probe) {
		probe = probe[:r.max+1] // enough to see a line exceed the cap, no more
	}
	n, err := r.src.Read(probe)
	r.src.pre, r.src.err = probe[:n], err
	r.br = r.pool.get(&r.src)
}

// prefixReader reads the bytes of pre, then those of r. pre aliases carry,
// a buffer kept for the next growth.
//
// limit, when positive, bounds one Read from r: the Reader sets it while a
// line without a terminator nears the cap, so a grown buffer does not read
// far beyond the cap.
//
// err is an error a probe read returned with (or instead of) the bytes in
// pre, returned once after them. failed records that r has returned an
// error: the buffer reading from it then holds (or has returned) the end of
// the stream and is not lent.
type prefixReader struct {
	r      io.Reader
	pre    []byte
	carry  []byte
	limit  int
	err    error
	failed bool
}

func (p *prefixReader) Read(b []byte) (int, error) {
	if len(p.pre) > 0 {
		n := copy(b, p.pre)
		p.pre = p.pre[n:]
		return n, nil
	}
	if p.err != nil {
		err := p.err
		p.err = nil
		return 0, err
	}
	if p.limit > 0 && len(b) > p.limit {
		b = b[:p.limit]
	}
	n, err := p.r.Read(b)
	if err != nil {
		p.failed = true
	}
	return n, err
}

// grow replaces a full buffer by one twice its size holding the same bytes,
// unless it has reached maxBufferSize.
func (r *Reader) grow() bool {
	size := 2 * r.br.Size()
	if size > maxBufferSize {
		return false
	}
	buffered, _ := r.br.Peek(r.br.Buffered())
	if rest := r.src.pre; len(rest) > 0 {
		// Probed bytes br has not taken yet (a buffer smaller than the
		// probe) follow the buffered ones. rest may alias carry.
		r.src.carry = slices.Concat(buffered, rest)
	} else {
		r.src.carry = append(r.src.carry[:0], buffered...)
	}
	r.src.pre = r.src.carry
	r.br = bufio.NewReaderSize(&r.src, size)
	_, _ = r.br.Peek(len(r.src.carry)) // served from carry: cannot fail
	return true
}

// retain empties b for reuse, or drops it when it is too large to keep.
func retain(b []byte) []byte {
	if cap(b) > maxRetained {
		return nil
	}
	return b[:0]
}

// newReaderSize lets tests use tiny buffers to exercise lines that straddle
// buffer refills.
func newReaderSize(r io.Reader, size int) *Reader {
	rd := &Reader{src: prefixReader{r: r}, max: DefaultMaxEventBytes}
	rd.br = bufio.NewReaderSize(&rd.src, size)
	return rd
}

// Next returns the next event. It returns io.EOF (unwrapped) when the
// stream ends at an event boundary; an event still pending at the end of
// the stream is returned first and io.EOF on the following call. Any other
// read error is returned wrapped, naming the event number and byte offset,
// and the partial event is discarded. After an error, Next keeps returning
// it.
//
// The returned Data and Comment are valid until the next call to Next.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	// The previous event's buffers are reset only now, because the caller
	// could still read them until this call; so is br given back.
	r.lend()
	r.data, r.dataRef = r.data[:0], nil
	r.sawData = false
	r.typ = ""
	r.sawComment = false
	r.eventStart = r.offset
	for {
		line, err := r.readLine()
		if err != nil && err != io.EOF {
			if _, isLimit := err.(*LimitError); isLimit {
				r.err = err
				return Event{}, r.err
			}
			r.err = fmt.Errorf("sse: reading event %d at byte %d: %w", r.events+1, r.offset, err)
			return Event{}, r.err
		}
		// At io.EOF a non-empty line is the unterminated last line; it
		// counts like any other.
		if err == nil || len(line) > 0 {
			dispatch, perr := r.processLine(line)
			if perr != nil {
				r.err = perr
				return Event{}, r.err
			}
			if dispatch {
				return r.dispatch(), nil
			}
		}
		if err == io.EOF {
			r.err = io.EOF
			if r.pending() {
				return r.dispatch(), nil
			}
			return Event{}, io.EOF
		}
	}
}

// pending reports whether the block read so far makes an event.
func (r *Reader) pending() bool { return r.sawData || r.typ != "" }

func (r *Reader) dispatch() Event {
	r.events++
	ev := Event{Type: r.typ, ID: r.id}
	if r.sawData {
		switch {
		case r.dataRef != nil:
			ev.Data = r.dataRef
		case r.data == nil:
			ev.Data = []byte{} // "data:" with an empty value still has data
		default:
			ev.Data = r.data
		}
	}
	if r.sawComment {
		if r.comment == nil {
			r.comment = []byte{} // ":" alone is an empty comment, not none
		}
		ev.Comment = r.comment
	}
	return ev
}

// processLine applies one line to the event being assembled and reports
// whether the line dispatches it; the error is a *LimitError when the line
// would grow the event's data beyond the cap.
func (r *Reader) processLine(line []byte) (bool, error) {
	if len(line) == 0 {
		// A blank line ends a block; a block with neither data nor type
		// (keep-alive comments, a lone "id:") is not an event.
		if !r.pending() {
			r.eventStart = r.offset
		}
		return r.pending(), nil
	}
	if line[0] == ':' {
		r.comment = append(r.comment[:0], dropSpace(line[1:])...)
		r.sawComment = true
		return false, nil
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], dropSpace(line[i+1:])
	}
	switch string(name) { // the conversion does not allocate in a switch
	case "data":
		sep := 0
		if r.sawData {
			sep = 1 // the '\n' that joins data lines
		}
		if size := int64(len(r.data)+len(r.dataRef)) + int64(sep+len(value)); size > int64(r.max) {
			return false, &LimitError{What: "event", Event: r.events + 1, Offset: r.eventStart, Size: size, Limit: r.max}
		}
		if !r.sawData && !r.lineInLong {
			r.dataRef, r.sawData = value, true
			return false, nil
		}
		r.keepData()
		if r.sawData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.sawData = true
	case "event":
		r.typ = r.intern(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.id {
			r.id = string(value)
		}
	}
	// "retry" and unknown fields are ignored, as the specification asks.
	return false, nil
}

// keepData copies an aliased data line into data, before br's bytes move.
func (r *Reader) keepData() {
	if r.dataRef != nil {
		r.data = append(r.data[:0], r.dataRef...)
		r.dataRef = nil
	}
}

// dropSpace removes one leading space, as the SSE specification asks.
func dropSpace(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}

// intern returns b as a string, reusing an earlier string with the same
// bytes so that streams with a few recurring event types do not allocate.
func (r *Reader) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, s := range r.types {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	if len(r.types) < maxInternedTypes {
		r.types = append(r.types, s)
	}
	return s
}

// readLine returns the next line without its terminator ("\r\n", "\n" or
// "\r"). The slice is valid until the next read. At the end of the stream
// it returns the unterminated rest (possibly empty) together with the
// error.
//
// It scans the buffered bytes itself rather than using ReadSlice('\n'):
// ReadSlice cannot stop at a lone '\r', so on a live stream with CR line
// endings it would hold every event back until the buffer filled. For the
// same reason a '\r' is taken as a terminator at once, and a '\n' that
// follows it is skipped when the next line starts, never waited for.
//
// A line longer than the cap is a *LimitError: the Reader stops reading it as
// soon as the bytes seen without a terminator exceed the cap.
func (r *Reader) readLine() ([]byte, error) {
	r.long = r.long[:0]
	r.lineInLong = false
	r.lineStart = r.offset
	if r.br == nil {
		r.borrow()
	}
	scanned := 0 // leading bytes of the buffered data known to hold no terminator
	for {
		buf, _ := r.br.Peek(r.br.Buffered()) // no I/O: only what is buffered
		if r.skipLF && len(buf) > 0 {
			r.skipLF = false
			if buf[0] == '\n' {
				r.discard(1)
				r.lineStart = r.offset
				buf = buf[1:]
			}
		}
		if i := bytescan.EOL(buf[scanned:]); i >= 0 {
			i += scanned
			if err := r.checkLine(len(r.long) + i); err != nil {
				return nil, err
			}
			r.skipLF = buf[i] == '\r'
			line := buf[:i]
			r.discard(i + 1) // line stays valid: Discard does not refill
			if len(r.long) > 0 {
				r.long = append(r.long, line...)
				line, r.lineInLong = r.long, true
			}
			return r.trimBOM(line), nil
		}
		scanned = len(buf)
		if err := r.checkLine(len(r.long) + len(buf)); err != nil {
			return nil, err
		}
		r.keepData() // what follows may move the buffered bytes
		if len(buf) == r.br.Size() && r.grow() {
			continue // the same bytes, scanned, in a larger buffer
		}
		if len(buf) == r.br.Size() {
			// The line is longer than the largest buffer: move what we
			// have aside so the buffer can take more.
			r.long = append(r.long, buf...)
			r.discard(len(buf))
			scanned = 0
		}
		// Wait for at least one more byte. Peek slides the buffered bytes
		// to the front and reads once, so a line that fits in the buffer
		// is never copied.
		// Read no more than the cap lets this line have (+1, to see it
		// exceeded): the buffered bytes are all the line's.
		r.src.limit = r.max + 1 - len(r.long) - r.br.Buffered()
		_, err := r.br.Peek(r.br.Buffered() + 1)
		r.src.limit = 0
		if err != nil {
			rest, _ := r.br.Peek(r.br.Buffered())
			if lerr := r.checkLine(len(r.long) + len(rest)); lerr != nil {
				return nil, lerr
			}
			r.long = append(r.long, rest...)
			r.discard(len(rest))
			r.lineInLong = true
			return r.trimBOM(r.long), err
		}
	}
}

// checkLine fails when a line of n bytes (so far) exceeds the cap.
func (r *Reader) checkLine(n int) error {
	if n <= r.max {
		return nil
	}
	return &LimitError{What: "line", Event: r.events + 1, Offset: r.lineStart, Size: int64(n), Limit: r.max}
}

// discard consumes n bytes that are known to be buffered.
func (r *Reader) discard(n int) {
	_, _ = r.br.Discard(n) // cannot fail: the bytes are buffered
	r.offset += int64(n)
}

// trimBOM drops a UTF-8 byte order mark at the very start of the stream.
func (r *Reader) trimBOM(line []byte) []byte {
	if r.started {
		return line
	}
	r.started = true
	return bytes.TrimPrefix(line, []byte(utf8BOM))
}
