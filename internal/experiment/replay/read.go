package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
)

// Input formats, detected per file from its first non-blank line.
const (
	FormatTrace   = "trace"   // one {"id","sample_rate","arrivals_s","bytes",...} object per line
	FormatResults = "results" // the JSONL file of omnibench run: a header line, then request lines
)

// Reasons a results record is not replayed (keys of File.Skipped).
const (
	SkipWarmup       = "warmup"
	SkipFailed       = "failed"
	SkipNoAudio      = "no_audio"
	SkipNoSampleRate = "no_sample_rate"
)

// Trace is one recorded response: its chunk timeline and audio format.
type Trace struct {
	ID    string
	Where string // "file:line" for traces, "file: request id" for results records
	Input continuity.Input
}

// File is what one input file holds.
type File struct {
	Name    string
	Format  string // FormatTrace or FormatResults
	Traces  []Trace
	Skipped map[string]int // results records not replayed, by reason; nil when none
}

// ReadFile reads a trace or results file from disk.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	// results.ReadFile names the file and line in its errors; results.Read
	// cannot know the file name.
	return read(path, f, func(io.Reader) ([]results.Record, error) {
		_, recs, err := results.ReadFile(path)
		return recs, err
	})
}

// Read reads a trace or results JSONL stream; name is used in errors. A file
// whose first non-blank line is {"type":"header",...} is a results file;
// anything else is read as a trace file.
func Read(name string, r io.Reader) (*File, error) {
	return read(name, r, func(r io.Reader) ([]results.Record, error) {
		_, recs, err := results.ReadNamed(name, r)
		return recs, err
	})
}

// read detects the format and reads the stream; readRecords reads a results
// file from the start.
func read(name string, r io.Reader, readRecords func(io.Reader) ([]results.Record, error)) (*File, error) {
	br := bufio.NewReader(r)
	// Read up to the first non-blank line to decide the format, keeping what
	// was consumed so the chosen reader sees the file from its first byte and
	// its line numbers stay right.
	var consumed bytes.Buffer
	var first []byte
	for {
		line, err := br.ReadBytes('\n')
		consumed.Write(line)
		if t := bytes.TrimSpace(line); len(t) > 0 {
			first = t
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read: %w", name, err)
		}
	}
	whole := io.MultiReader(&consumed, br)
	var probe struct {
		Type string `json:"type"`
	}
	if first != nil && json.Unmarshal(first, &probe) == nil && probe.Type == results.TypeHeader {
		recs, err := readRecords(whole)
		if err != nil {
			return nil, err
		}
		return fromRecords(name, recs)
	}
	traces, err := readTraces(name, whole)
	if err != nil {
		return nil, err
	}
	return &File{Name: name, Format: FormatTrace, Traces: traces}, nil
}

// traceLine is one line of a trace file. Pointers and nil slices tell a
// missing field from a zero one.
type traceLine struct {
	ID          string    `json:"id"`
	SampleRate  *int      `json:"sample_rate"`
	SampleWidth *int      `json:"sample_width"`
	Channels    *int      `json:"channels"`
	ArrivalsS   []float64 `json:"arrivals_s"`
	Bytes       []int     `json:"bytes"`
}

// readTraces reads a trace file. Unknown fields are allowed so traces can
// carry extra annotations; every field replay needs is checked.
func readTraces(name string, r io.Reader) ([]Trace, error) {
	br := bufio.NewReader(r) // no line length limit: a long response is one long line
	var traces []Trace
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			tr, perr := parseTrace(t)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, lineNo, perr)
			}
			if tr.ID == "" {
				tr.ID = fmt.Sprintf("line %d", lineNo)
			}
			tr.Where = fmt.Sprintf("%s:%d", name, lineNo)
			traces = append(traces, tr)
		}
		if errors.Is(err, io.EOF) {
			return traces, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: read: %w", name, lineNo, err)
		}
	}
}

func parseTrace(line []byte) (Trace, error) {
	var tl traceLine
	if err := json.Unmarshal(line, &tl); err != nil {
		return Trace{}, fmt.Errorf("bad JSON: %w", err)
	}
	if tl.SampleRate == nil {
		return Trace{}, errors.New(`missing "sample_rate"`)
	}
	if *tl.SampleRate <= 0 {
		return Trace{}, fmt.Errorf(`"sample_rate" %d: must be positive`, *tl.SampleRate)
	}
	in := continuity.Input{SampleRate: *tl.SampleRate}
	if tl.SampleWidth != nil {
		if w := *tl.SampleWidth; w <= 0 || w > 8 {
			return Trace{}, fmt.Errorf(`"sample_width" %d: want bytes per sample, 1 to 8`, w)
		}
		in.SampleWidth = *tl.SampleWidth
	}
	if tl.Channels != nil {
		if c := *tl.Channels; c <= 0 || c > 64 {
			return Trace{}, fmt.Errorf(`"channels" %d: want 1 to 64`, c)
		}
		in.Channels = *tl.Channels
	}
	if tl.ArrivalsS == nil {
		return Trace{}, errors.New(`missing "arrivals_s"`)
	}
	if tl.Bytes == nil {
		return Trace{}, errors.New(`missing "bytes"`)
	}
	if err := checkTimeline(tl.ArrivalsS, tl.Bytes, "arrivals_s", "bytes"); err != nil {
		return Trace{}, err
	}
	in.ArrivalsS, in.Bytes = tl.ArrivalsS, tl.Bytes
	return Trace{ID: tl.ID, Input: in}, nil
}

// checkTimeline enforces what the simulations assume: one byte count per
// arrival, arrivals non-negative and non-decreasing, byte counts non-negative.
// The field names are those of the input format, so errors point at them.
func checkTimeline(arrivals []float64, byteCounts []int, arrivalsField, bytesField string) error {
	if len(arrivals) != len(byteCounts) {
		return fmt.Errorf("%q has %d entries but %q has %d", arrivalsField, len(arrivals), bytesField, len(byteCounts))
	}
	for i, a := range arrivals {
		switch {
		case a < 0:
			return fmt.Errorf("%q[%d] = %g: negative arrival", arrivalsField, i, a)
		case i > 0 && a < arrivals[i-1]:
			return fmt.Errorf("%q[%d] = %g: before the previous arrival %g (arrivals must not decrease)", arrivalsField, i, a, arrivals[i-1])
		}
	}
	for i, b := range byteCounts {
		if b < 0 {
			return fmt.Errorf("%q[%d] = %d: negative byte count", bytesField, i, b)
		}
	}
	return nil
}

// fromRecords turns the records of an omnibench run into traces. Warm-up and
// failed requests are skipped, as the run report skips them, and so are
// requests without audio or without a known sample rate.
func fromRecords(name string, recs []results.Record) (*File, error) {
	f := &File{Name: name, Format: FormatResults}
	skip := func(reason string) {
		if f.Skipped == nil {
			f.Skipped = map[string]int{}
		}
		f.Skipped[reason]++
	}
	for i := range recs {
		rec := &recs[i]
		id := rec.ID
		if id == "" {
			id = fmt.Sprintf("seq %d", rec.Seq)
		}
		switch {
		case rec.Warmup:
			skip(SkipWarmup)
			continue
		case !rec.OK():
			skip(SkipFailed)
			continue
		case len(rec.ChunkArrivalsS) == 0 && len(rec.ChunkBytes) == 0:
			skip(SkipNoAudio)
			continue
		case rec.SampleRate <= 0:
			skip(SkipNoSampleRate)
			continue
		}
		if err := checkTimeline(rec.ChunkArrivalsS, rec.ChunkBytes, "chunk_arrivals_s", "chunk_bytes"); err != nil {
			return nil, fmt.Errorf("%s: request %q (record %d): %w", name, id, i+1, err)
		}
		f.Traces = append(f.Traces, Trace{
			ID:    id,
			Where: fmt.Sprintf("%s: request %q", name, id),
			Input: continuity.Input{
				ArrivalsS:   rec.ChunkArrivalsS,
				Bytes:       rec.ChunkBytes,
				SampleRate:  rec.SampleRate,
				SampleWidth: rec.SampleWidth,
				Channels:    rec.Channels,
			},
		})
	}
	return f, nil
}
