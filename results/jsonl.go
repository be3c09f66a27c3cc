package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Line types of a results JSONL file.
const (
	TypeHeader  = "header"
	TypeRequest = "request"
)

// Writer writes a results JSONL file: one header line, then one line per
// request. Each line is written with a single Write call as soon as it is
// complete, so an interrupted run leaves a file whose every line is valid.
// A Writer is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	wr := &Writer{w: w}
	wr.enc = json.NewEncoder(&wr.buf)
	return wr
}

// WriteHeader writes the header line.
func (w *Writer) WriteHeader(h Header) error {
	h.Type = TypeHeader
	if h.SchemaVersion == 0 {
		h.SchemaVersion = SchemaVersion
	}
	return w.writeLine(&h)
}

// Write writes one request line.
func (w *Writer) Write(r *Record) error {
	r.Type = TypeRequest
	return w.writeLine(r)
}

func (w *Writer) writeLine(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("results: encode line: %w", err)
	}
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("results: write line: %w", err)
	}
	return nil
}

// ReadFile reads a results JSONL file written by Writer; a cut-off last
// line is warned about on stderr (see ReadNamedTo).
func ReadFile(path string) (Header, []Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	return ReadNamedTo(path, f, os.Stderr)
}

// Read reads a results JSONL stream (see ReadNamedTo), warning on stderr.
func Read(r io.Reader) (Header, []Record, error) { return ReadNamedTo("input", r, os.Stderr) }

// ReadNamed is Read with the name messages give the input (a file name, or
// "stdin").
func ReadNamed(name string, r io.Reader) (Header, []Record, error) {
	return ReadNamedTo(name, r, os.Stderr)
}

// CutOffLine describes a last line cut short by an interrupted write.
type CutOffLine struct {
	Name  string // file name or "stdin"
	Line  int    // 1-based
	Bytes int    // bytes of the line that were written
	Kept  int    // complete records before it
}

func (c CutOffLine) String() string {
	return fmt.Sprintf("%s:%d: the last line is cut off after %d bytes (a write was interrupted, e.g. by SIGKILL); "+
		"ignoring it and reading the %d complete records before it", c.Name, c.Line, c.Bytes, c.Kept)
}

// ReadNamedTo reads a results JSONL stream. The first non-blank line must be
// the header; every following non-blank line must be a request record.
//
// A final line that has no newline and does not parse is what a run killed
// in the middle of a write leaves behind (Writer ends every line with its
// newline in the same write): it is skipped with one warning on warn (nil:
// none) and every complete record is returned. Any other bad line, the last
// one included when it is complete, is an error naming its line, returned
// with the records before it.
func ReadNamedTo(name string, r io.Reader, warn io.Writer) (Header, []Record, error) {
	br := bufio.NewReader(r)
	var (
		h      Header
		recs   []Record
		sawHdr bool
		lineNo int
	)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			lineNo++
			cutOff := errors.Is(err, io.EOF) && line[len(line)-1] != '\n'
			raw := len(line)
			line = bytes.TrimSpace(line)
			if len(line) > 0 {
				if cutOff && sawHdr && !json.Valid(line) {
					if warn != nil {
						fmt.Fprintf(warn, "omnibench: warning: %s\n", CutOffLine{Name: name, Line: lineNo, Bytes: raw, Kept: len(recs)})
					}
					break
				}
				var probe struct {
					Type string `json:"type"`
				}
				if jerr := json.Unmarshal(line, &probe); jerr != nil {
					return h, recs, fmt.Errorf("%s:%d: not a JSON object: %w", name, lineNo, jerr)
				}
				switch {
				case !sawHdr && probe.Type == TypeHeader:
					if jerr := json.Unmarshal(line, &h); jerr != nil {
						return h, recs, fmt.Errorf("%s:%d: header: %w", name, lineNo, jerr)
					}
					if h.SchemaVersion > SchemaVersion {
						return h, recs, fmt.Errorf("%s:%d: schema_version %d is newer than this omnibench understands (%d)", name, lineNo, h.SchemaVersion, SchemaVersion)
					}
					sawHdr = true
				case !sawHdr:
					return h, recs, fmt.Errorf("%s:%d: first line must be a header line ({\"type\":\"header\",...}), got type %q", name, lineNo, probe.Type)
				case probe.Type == TypeRequest:
					var rec Record
					if jerr := json.Unmarshal(line, &rec); jerr != nil {
						return h, recs, fmt.Errorf("%s:%d: request: %w", name, lineNo, jerr)
					}
					if rec.LatencyOrigin == "" {
						rec.LatencyOrigin = h.LatencyOrigin()
					}
					recs = append(recs, rec)
				default:
					return h, recs, fmt.Errorf("%s:%d: unknown line type %q (want %q)", name, lineNo, probe.Type, TypeRequest)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, recs, fmt.Errorf("%s:%d: read: %w", name, lineNo+1, err)
		}
	}
	if !sawHdr {
		return h, recs, fmt.Errorf("%s: empty results file (no header line)", name)
	}
	return h, recs, nil
}
