package exporter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// textAccept asks the handler for the Prometheus text format 0.0.4, the one
// node_exporter's textfile collector reads.
const textAccept = "text/plain;version=0.0.4"

// WriteText writes the current exposition in the Prometheus text format,
// including the HELP and TYPE lines of families without series. It renders
// through Handler, so a file and a scrape carry the same text.
func (e *Exporter) WriteText(w io.Writer) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "/metrics", nil)
	if err != nil {
		return fmt.Errorf("exporter: building the exposition request: %w", err)
	}
	req.Header.Set("Accept", textAccept)
	var rw bufferWriter
	e.Handler().ServeHTTP(&rw, req)
	if rw.status != 0 && rw.status != http.StatusOK {
		return fmt.Errorf("exporter: rendering the exposition: status %d: %s", rw.status, bytes.TrimSpace(rw.body.Bytes()))
	}
	if _, err := w.Write(rw.body.Bytes()); err != nil {
		return fmt.Errorf("exporter: writing the exposition: %w", err)
	}
	return nil
}

// WriteFile writes the text exposition to path atomically: it writes a
// temporary file in the same directory, syncs it and renames it over path,
// so node_exporter's textfile collector never reads half a file. The file is
// world-readable (0644), as the collector usually runs as another user.
func (e *Exporter) WriteFile(path string) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// The temporary name does not end in .prom, so the collector skips it.
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()           // already failing; the first error is the one to report
			_ = os.Remove(f.Name()) // best effort: do not leave temporary files behind
		}
	}()
	if err := e.WriteText(f); err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("exporter: writing %s: %w", path, err)
	}
	return nil
}

// bufferWriter is an in-memory http.ResponseWriter for rendering the
// exposition without a network round trip.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header {
	if b.header == nil {
		b.header = http.Header{}
	}
	return b.header
}

func (b *bufferWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
