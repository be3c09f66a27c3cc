package scrape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Snapshot is one scrape as received: the raw exposition bytes and what is
// needed to decode them again later.
//
// On disk a snapshot is one header line followed by the body, byte for byte:
//
//	# omnibench-snapshot {"version":1,"url":"http://host:8000/metrics","content_type":"text/plain; version=0.0.4","fetched_at":"2026-07-01T12:00:00Z"}
//	# HELP vllm:omni_audio_ttfp_s ...
//	...
//
// For the text format, the header is a comment line, so the file stays a
// valid exposition that promtool and other tools read as is. OpenMetrics
// forbids comments and protobuf is binary: for those, drop the first line
// (`tail -n +2`) to get the original body. ReadSnapshot also accepts a file
// without the header (plain `curl` output) and detects its format.
type Snapshot struct {
	URL         string    `json:"url,omitempty"` // where it was scraped, password removed
	ContentType string    `json:"content_type"`  // as served; "" when unknown
	FetchedAt   time.Time `json:"fetched_at"`    // when the request was sent (UTC)
	Body        []byte    `json:"-"`

	// Path is the file the snapshot was read from ("" when fetched).
	Path string `json:"-"`
	// MaxSamples caps the samples Families decodes (0: DefaultMaxSamples).
	MaxSamples int `json:"-"`

	// bodyLine is the number of lines before Body in Path (the header).
	bodyLine int
}

const (
	snapshotMagic   = "# omnibench-snapshot "
	snapshotVersion = 1
	// maxHeaderBytes bounds the header line; a real one is a few hundred bytes.
	maxHeaderBytes = 64 << 10
)

type snapshotHeader struct {
	Version     int       `json:"version"`
	URL         string    `json:"url,omitempty"`
	ContentType string    `json:"content_type"`
	FetchedAt   time.Time `json:"fetched_at"`
}

// Source names the snapshot for messages: its file, else its URL.
func (s *Snapshot) Source() string {
	if s.Path != "" {
		return s.Path
	}
	if s.URL != "" {
		return s.URL
	}
	return "snapshot"
}

// Families parses the body. Errors name the file or URL and the line in it.
func (s *Snapshot) Families() (Families, error) {
	return parse(s.Source(), s.ContentType, s.Body, s.bodyLine, s.MaxSamples)
}

// WriteTo writes the header line and the body.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	hdr, err := json.Marshal(snapshotHeader{Version: snapshotVersion, URL: s.URL, ContentType: s.ContentType, FetchedAt: s.FetchedAt})
	if err != nil {
		return 0, fmt.Errorf("encode snapshot header: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(snapshotMagic) + len(hdr) + 1 + len(s.Body))
	buf.WriteString(snapshotMagic)
	buf.Write(hdr)
	buf.WriteByte('\n')
	buf.Write(s.Body)
	return buf.WriteTo(w)
}

// WriteFile stores the snapshot at path (created or truncated, mode 0644).
func (s *Snapshot) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	if _, err := s.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	return nil
}

// ReadSnapshot reads a snapshot file written by WriteFile, or a bare
// exposition file. It does not parse the body; call Families for that.
func ReadSnapshot(path string) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	s, err := DecodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// DecodeSnapshot splits snapshot bytes into header and body. Data without
// the header line is taken as a bare exposition of unknown Content-Type.
func DecodeSnapshot(data []byte) (*Snapshot, error) {
	if !bytes.HasPrefix(data, []byte(snapshotMagic)) {
		return &Snapshot{Body: data}, nil
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, fmt.Errorf("line 1: header line has no end (want %q, a JSON object and a newline)", snapshotMagic)
	}
	if nl > maxHeaderBytes {
		return nil, fmt.Errorf("line 1: header line is %d bytes, longer than %d", nl, maxHeaderBytes)
	}
	raw := bytes.TrimRight(data[len(snapshotMagic):nl], "\r")
	var h snapshotHeader
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("line 1: header is not the expected JSON object: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("line 1: unexpected data after the header JSON object")
	}
	if h.Version != snapshotVersion {
		return nil, fmt.Errorf("line 1: snapshot version %d, this omnibench reads version %d", h.Version, snapshotVersion)
	}
	return &Snapshot{
		URL:         h.URL,
		ContentType: h.ContentType,
		FetchedAt:   h.FetchedAt,
		Body:        data[nl+1:],
		bodyLine:    1,
	}, nil
}

// Format is the exposition format of the body (FormatText,
// FormatOpenMetrics or FormatProtobuf), from the Content-Type, else from the
// body, as Families decodes it.
func (s *Snapshot) Format() string {
	kind, _ := detectFormat(s.ContentType, s.Body)
	return kind
}

// BodyLine is the number of lines before Body in the file the snapshot was
// read from (its header line), 0 for a fetched snapshot or a bare file.
func (s *Snapshot) BodyLine() int { return s.bodyLine }
