package merge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/report/table"
	"github.com/omnibench/omnibench/scrape"
)

// Snapshot roles, the middle of a snapshot's file name.
const (
	RoleBefore = "before"
	RoleAfter  = "after"
)

// snapshotExts are the extensions a snapshot is saved with, by format: the
// scrape command's convention (.prom is text, which promtool reads).
var snapshotExts = []string{".prom", ".om", ".pb"}

// SnapshotPath is where a snapshot of role is saved for prefix:
// PREFIX.before.prom (text), .om (OpenMetrics) or .pb (protobuf), by the
// Content-Type it was served with.
func SnapshotPath(prefix, role, contentType string) string {
	ext := ".prom"
	switch ct := strings.ToLower(contentType); {
	case strings.Contains(ct, "protobuf"):
		ext = ".pb"
	case strings.Contains(ct, "openmetrics"):
		ext = ".om"
	}
	return prefix + "." + role + ext
}

// ReadShard reads a shard's results file and the snapshots its
// --save-scrapes left beside it (ScrapePrefix(path) + ".before.prom" and
// ".after.prom", or .om or .pb), when they exist.
func ReadShard(path string) (Shard, error) {
	h, recs, err := results.ReadFile(path)
	if err != nil {
		return Shard{}, err
	}
	s := Shard{Path: path, Header: h, Records: recs}
	if s.Before, err = findSnapshot(ScrapePrefix(path), RoleBefore); err != nil {
		return Shard{}, err
	}
	if s.After, err = findSnapshot(ScrapePrefix(path), RoleAfter); err != nil {
		return Shard{}, err
	}
	return s, nil
}

// findSnapshot reads the one snapshot of role saved for prefix, if any.
func findSnapshot(prefix, role string) (*scrape.Snapshot, error) {
	var found *scrape.Snapshot
	for _, ext := range snapshotExts {
		p := prefix + "." + role + ext
		snap, err := scrape.ReadSnapshot(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if found != nil {
			return nil, fmt.Errorf("merge: two %s snapshots for %s: %s and %s; keep one", role, prefix, found.Path, p)
		}
		if snap.FetchedAt.IsZero() {
			return nil, fmt.Errorf("merge: %s: a snapshot without its fetch time (a bare exposition file?): the merge needs the time to order snapshots", p)
		}
		found = snap
	}
	return found, nil
}

// WriteFiles writes the merged results to path, shard 0's scrape lines
// with them (only shard 0 scrapes, and the server served every shard: its
// breakdown is the whole test's, for report), and the chosen snapshots to
// ScrapePrefix(path) + ".before.prom" and ".after.prom" (for check --run
// and diff). It returns the snapshot paths written.
func (r *Result) WriteFiles(path string) ([]string, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	w := results.NewWriter(f)
	err = w.WriteHeader(r.Header)
	for i := 0; err == nil && i < len(r.Header.Scrapes); i++ {
		err = w.WriteScrape(r.Header.Scrapes[i])
	}
	for i := 0; err == nil && i < len(r.Records); i++ {
		err = w.Write(&r.Records[i])
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("merge: writing %s: %w", path, err)
	}
	var written []string
	for _, s := range []struct {
		snap *scrape.Snapshot
		role string
	}{{r.Before, RoleBefore}, {r.After, RoleAfter}} {
		if s.snap == nil {
			continue
		}
		p := SnapshotPath(ScrapePrefix(path), s.role, s.snap.ContentType)
		if filepath.Clean(p) == filepath.Clean(s.snap.Path) {
			written = append(written, p) // merging into the shard's own name: already there
			continue
		}
		if err := s.snap.WriteFile(p); err != nil {
			return written, fmt.Errorf("merge: %w", err)
		}
		written = append(written, p)
	}
	return written, nil
}

// Table is the shards of the merge: what each contributed and how late it
// began, with the start skew in a note.
func (r *Result) Table() table.Table {
	t := table.Table{Title: "Shards", Header: []string{"shard", "measured", "late (ms)", "file"}}
	info := r.Header.Merged
	for _, s := range info.Shards {
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(s.Index), strconv.Itoa(s.Records),
			strconv.FormatFloat(s.StartLateS*1000, 'f', 3, 64), s.File,
		})
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("start skew %.3f ms: the spread of the shards' measured starts after the agreed start %s (as far as the nodes' clocks agree)", info.StartSkewS*1000, r.Header.StartAt),
	)
	if info.Warmup > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d warm-up records (each shard warms its own connections; ids prefixed shardI-)", info.Warmup))
	}
	if r.ScrapeNote != "" {
		t.Notes = append(t.Notes, r.ScrapeNote)
	}
	t.Notes = append(t.Notes, r.Notes...)
	return t
}
