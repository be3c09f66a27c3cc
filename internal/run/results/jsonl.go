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
	"time"
)

// Line types of a results JSONL file.
const (
	TypeHeader  = "header"
	TypeRequest = "request"
	// TypeClient is the last line of a run that ended (also interrupted):
	// the load generator's saturation verdict (Header.Client).
	TypeClient = "client"
	// TypeASR is the transcription score of an earlier request line (its
	// "id"), written when the transcription is done; Read sets the
	// record's ASR from it.
	TypeASR = "asr"
	// TypeScrape is one scrape of the server's /metrics, of the families
	// the breakdown of the run reads (see Scrape).
	TypeScrape = "scrape"
)

// Phases of a Scrape line.
const (
	ScrapeFirst    = "first"    // before the load
	ScrapeInterval = "interval" // during the load (run --scrape-interval)
	ScrapeLast     = "last"     // after the load and the --settle wait
)

// Scrape is a TypeScrape line: what the run kept of one scrape of the
// server's /metrics, so that report re-renders the breakdown of the run
// (where the time went, stage by stage) and its timeline without the
// server. A failed interval scrape is a line with Gap and no Series.
type Scrape struct {
	// Type is "scrape".
	Type string `json:"type"`
	// Phase is "first", "interval" or "last".
	Phase string `json:"phase"`
	// At is when the scrape was taken.
	At time.Time `json:"at"`
	// Series holds the families the breakdown reads, nothing else of the
	// exposition, in the form of package internal/breakdown (each family's
	// name, type and series: labels, value or histogram buckets).
	Series json.RawMessage `json:"series,omitempty"`
	// Gap says why the scrape failed; the timeline shows it as a gap.
	Gap string `json:"gap,omitempty"`
	// MeasuredFrom, on the last scrape line, is when the run's measured
	// phase began: the zero of the report's charts over time, which the
	// scrapes' times are drawn against.
	MeasuredFrom *time.Time `json:"measured_from,omitempty"`
}

// clientLine is the JSON form of a TypeClient line.
type clientLine struct {
	Type string `json:"type"`
	ClientHealth
}

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

// WriteClient writes the load generator's verdict, the run's last line.
func (w *Writer) WriteClient(c ClientHealth) error {
	return w.writeLine(&clientLine{Type: TypeClient, ClientHealth: c})
}

// WriteScrape writes one scrape line. Series on one line (as
// breakdown.Series.AppendJSON and a results file give them) go into it as
// they are: encoding/json would check and compact them again, one more
// pass over megabytes at a large topology, during the load. sc.Series must
// be valid JSON; Series over several lines are compacted.
func (w *Writer) WriteScrape(sc Scrape) error {
	sc.Type = TypeScrape
	series := sc.Series
	if len(series) == 0 || bytes.ContainsAny(series, "\r\n") {
		return w.writeLine(&sc)
	}
	sc.Series = nil
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	if err := w.enc.Encode(&sc); err != nil {
		return fmt.Errorf("results: encode scrape line: %w", err)
	}
	// The series member follows "at", as in Scrape: after the closing
	// quote of its time (type and phase before it are quoted strings, in
	// which a quote is escaped, so the first `"at":"` is the member).
	line := w.buf.Bytes()
	at := bytes.Index(line, []byte(`"at":"`))
	if at < 0 {
		return fmt.Errorf("results: encode scrape line: no time in %q", line)
	}
	end := at + len(`"at":"`) + bytes.IndexByte(line[at+len(`"at":"`):], '"') + 1
	rest := string(line[end:])
	w.buf.Truncate(end)
	w.buf.WriteString(`,"series":`)
	w.buf.Write(series)
	w.buf.WriteString(rest)
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("results: write line: %w", err)
	}
	return nil
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

// attachASR sets the score on the record it names. The line follows its
// record by at most the transcription queue, so the search runs from the end.
// A line naming no record (its request line was lost) is ignored.
func attachASR(recs []Record, a asrLine) {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].ID == a.ID {
			score := a.ASRScore
			recs[i].ASR = &score
			return
		}
	}
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

// LineError is a line of a results file that does not read: the name of
// the file, the line (1-based) and what is wrong with it. A reader that
// wants to say what else a file might be (a summary document, a scrape)
// asks only about line 1: a bad line further on is a results file with a
// bad line.
type LineError struct {
	Name string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

func lineError(name string, line int, err error) error {
	return &LineError{Name: name, Line: line, Err: err}
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
// the header; every following non-blank line must be a request record, a
// scrape line (put in Header.Scrapes) or a client line (the load
// generator's verdict, put in Header.Client; its absence leaves
// Header.Client nil).
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
					what := "not a JSON object"
					if sawHdr {
						what = "not a record: " + what
					}
					return h, recs, lineError(name, lineNo, fmt.Errorf("%s: %w", what, jerr))
				}
				switch {
				case !sawHdr && probe.Type == TypeHeader:
					if jerr := json.Unmarshal(line, &h); jerr != nil {
						return h, recs, lineError(name, lineNo, fmt.Errorf("header: %w", jerr))
					}
					if h.SchemaVersion > SchemaVersion {
						return h, recs, lineError(name, lineNo, fmt.Errorf("schema_version %d is newer than this omnibench understands (%d)", h.SchemaVersion, SchemaVersion))
					}
					sawHdr = true
				case !sawHdr:
					return h, recs, fmt.Errorf("%s:%d: first line must be a header line ({\"type\":\"header\",...}), got type %q", name, lineNo, probe.Type)
				case probe.Type == TypeRequest:
					var rec Record
					if jerr := json.Unmarshal(line, &rec); jerr != nil {
						return h, recs, lineError(name, lineNo, fmt.Errorf("request: %w", jerr))
					}
					if rec.LatencyOrigin == "" {
						rec.LatencyOrigin = h.LatencyOrigin()
					}
					recs = append(recs, rec)
				case probe.Type == TypeASR:
					var a asrLine
					if jerr := json.Unmarshal(line, &a); jerr != nil {
						return h, recs, lineError(name, lineNo, fmt.Errorf("asr line: %w", jerr))
					}
					attachASR(recs, a)
				case probe.Type == TypeClient:
					var c clientLine
					if jerr := json.Unmarshal(line, &c); jerr != nil {
						return h, recs, lineError(name, lineNo, fmt.Errorf("client line: %w", jerr))
					}
					h.Client = &c.ClientHealth
				case probe.Type == TypeScrape:
					var sc Scrape
					if jerr := json.Unmarshal(line, &sc); jerr != nil {
						return h, recs, lineError(name, lineNo, fmt.Errorf("scrape line: %w", jerr))
					}
					h.Scrapes = append(h.Scrapes, sc)
				default:
					return h, recs, lineError(name, lineNo, fmt.Errorf("unknown line type %q (want %q)", probe.Type, TypeRequest))
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
