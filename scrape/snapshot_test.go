package scrape

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, ct string }{
		{"python.prom", ctText},
		{"openmetrics.txt", ctOpenMetrics},
	} {
		snap := &Snapshot{URL: "http://127.0.0.1:8000/metrics", ContentType: c.ct,
			FetchedAt: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Body: readTestdata(t, c.file)}
		path := filepath.Join(dir, c.file+".snap")
		if err := snap.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSnapshot(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != snap.URL || got.ContentType != snap.ContentType || !got.FetchedAt.Equal(snap.FetchedAt) ||
			!bytes.Equal(got.Body, snap.Body) || got.Path != path {
			t.Errorf("%s: read back %+v", c.file, got)
		}
		want, _ := snap.Families()
		fs, err := got.Families()
		if err != nil || !reflect.DeepEqual(data(fs, true), data(want, true)) {
			t.Errorf("%s: families differ after the round trip: %v", c.file, err)
		}
	}

	// A text snapshot file is itself a valid exposition.
	raw, err := os.ReadFile(filepath.Join(dir, "python.prom.snap"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Parse(ctText, raw)
	if err != nil || len(fs) != len(mustParse(t, ctText, readTestdata(t, "python.prom"))) {
		t.Errorf("snapshot file is not a valid text exposition: %v", err)
	}
}

func TestReadSnapshotBareFile(t *testing.T) {
	for _, file := range []string{"python.prom", "go.prom", "openmetrics.txt"} {
		snap, err := ReadSnapshot(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if snap.ContentType != "" || snap.URL != "" {
			t.Errorf("%s: bare file got meta %+v", file, snap)
		}
		fs, err := snap.Families()
		if err != nil || fs["vllm:omni_audio_ttfp_s"] == nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

func TestSnapshotErrorLines(t *testing.T) {
	dir := t.TempDir()
	snap := &Snapshot{ContentType: ctText, Body: []byte("# TYPE x gauge\nx 1\nx{ 2\n")}
	path := filepath.Join(dir, "bad.snap")
	if err := snap.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = got.Families()
	var pe *ParseError
	// Line 3 of the body is line 4 of the file, after the header.
	if !errors.As(err, &pe) || pe.Line != 4 || pe.Source != path {
		t.Errorf("error = %v, want line 4 of %s", err, path)
	}

	bad := map[string]string{
		"no newline":   snapshotMagic + `{"version":1}`,
		"not JSON":     snapshotMagic + "hello\nx 1\n",
		"version 2":    snapshotMagic + `{"version":2,"content_type":""}` + "\nx 1\n",
		"trailing":     snapshotMagic + `{"version":1} {}` + "\nx 1\n",
		"wrong fields": snapshotMagic + `{"version":"1"}` + "\n",
	}
	for name, content := range bad {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSnapshot(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: error %v does not name the file and line 1", name, err)
		}
	}
	if _, err := ReadSnapshot(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}
