package scrape

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	ctText        = "text/plain; version=0.0.4; charset=utf-8"
	ctOpenMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
	modelName     = "Qwen/Qwen3-Omni"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, ct string, body []byte) Families {
	t.Helper()
	fs, err := Parse(ct, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return fs
}

// familyData is what a family means, without how it was written: no
// original spelling, created timestamps, protobuf form or companions.
type familyData struct {
	Type, Help string
	Series     []seriesData
}

type seriesData struct {
	Key       string
	Value     float64
	Histogram *Histogram
}

// data projects families onto their data; empty (declared-only) families are
// kept only when withEmpty is set, because the Go client never prints them.
func data(fs Families, withEmpty bool) map[string]familyData {
	out := map[string]familyData{}
	for name, f := range fs {
		if f.CreatedFor != "" || (!withEmpty && len(f.Series) == 0) {
			continue
		}
		fd := familyData{Type: f.Type, Help: f.Help}
		for _, s := range f.Series {
			fd.Series = append(fd.Series, seriesData{Key: s.Key, Value: s.Value, Histogram: s.Histogram})
		}
		out[name] = fd
	}
	return out
}

func TestParseDialectsAgree(t *testing.T) {
	python := mustParse(t, ctText, readTestdata(t, "python.prom"))
	goText := mustParse(t, ctText, readTestdata(t, "go.prom"))
	om := mustParse(t, ctOpenMetrics, readTestdata(t, "openmetrics.txt"))

	if got, want := data(goText, false), data(python, false); !reflect.DeepEqual(got, want) {
		t.Errorf("Go-style text and Python-style text differ:\n go: %+v\n py: %+v", got, want)
	}
	if got, want := data(om, true), data(python, true); !reflect.DeepEqual(got, want) {
		t.Errorf("OpenMetrics and Python-style text differ:\n om: %+v\n py: %+v", got, want)
	}
	// Detection without a Content-Type gives the same result.
	if got, want := data(mustParse(t, "", readTestdata(t, "openmetrics.txt")), true), data(om, true); !reflect.DeepEqual(got, want) {
		t.Error("OpenMetrics without Content-Type parsed differently")
	}

	// The hand-written values, read back.
	for _, fs := range []Families{python, goText, om} {
		f, ok := fs.Lookup("requests_success_total")
		if !ok || f.Type != TypeCounter {
			t.Fatalf("requests_success_total missing or mistyped: %+v", f)
		}
		s, ok := f.Find(map[string]string{"model_name": modelName, "finished_reason": "stop"})
		if !ok || s.Value != 3 {
			t.Errorf("success{stop} = %+v, want 3", s)
		}
		h, _ := fs.Lookup("audio_ttfp_s")
		hs := h.Series[0].Histogram
		wantBounds := []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}
		if !reflect.DeepEqual(hs.FiniteBounds(), wantBounds) || hs.Count != 3 || hs.Sum != 0.92 || hs.InfCount() != 3 || hs.InfMissing {
			t.Errorf("ttfp histogram = %+v", hs)
		}
		b, _ := fs.Lookup("transfer_size_bytes")
		wantBytes := []float64{1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456}
		if got := b.Series[0].Histogram.FiniteBounds(); !reflect.DeepEqual(got, wantBytes) {
			t.Errorf("byte bounds = %v, want %v", got, wantBytes)
		}
		if _, ok := fs.Lookup("image_generated_total"); !ok {
			t.Error("unknown pipeline family not kept")
		}
	}
}

func TestParseCreatedCompanions(t *testing.T) {
	python := mustParse(t, ctText, readTestdata(t, "python.prom"))
	cases := map[string]string{
		"vllm:omni_requests_success_created":    "vllm:omni_requests_success_total",
		"vllm:omni_audio_ttfp_s_created":        "vllm:omni_audio_ttfp_s",
		"vllm:omni_transfer_size_bytes_created": "vllm:omni_transfer_size_bytes",
		"vllm:omni_image_generated_created":     "vllm:omni_image_generated_total",
	}
	for created, base := range cases {
		f, ok := python[created]
		if !ok || f.CreatedFor != base {
			t.Errorf("%s: CreatedFor = %q, want %q", created, f.CreatedFor, base)
		}
	}
	om := mustParse(t, ctOpenMetrics, readTestdata(t, "openmetrics.txt"))
	for _, fs := range []Families{python, om} {
		f := fs["vllm:omni_requests_success_total"]
		s, _ := f.Find(map[string]string{"model_name": modelName, "finished_reason": "length"})
		if s.Created != 1.7513713e9 {
			t.Errorf("created of success{length} = %v, want 1.7513713e9", s.Created)
		}
		// Declared with HELP/TYPE only: present, typed, empty.
		sk, ok := fs["vllm:omni_audio_skipped_requests_total"]
		if !ok || sk.Type != TypeCounter || len(sk.Series) != 0 || sk.Help == "" {
			t.Errorf("declared-only family = %+v, %v", sk, ok)
		}
	}
}

func TestParsePrefixes(t *testing.T) {
	design := mustParse(t, ctText, readTestdata(t, "python.prom"))
	current := mustParse(t, ctText, bytes.ReplaceAll(readTestdata(t, "python.prom"), []byte("vllm:omni_"), []byte("vllm_omni:")))
	if !reflect.DeepEqual(data(current, true), data(design, true)) {
		t.Error("vllm_omni: exposition parsed to different data than vllm:omni_")
	}
	for _, name := range []string{"audio_ttfp_s", "vllm:omni_audio_ttfp_s", "vllm_omni:audio_ttfp_s"} {
		f, ok := current.Lookup(name)
		if !ok || f.Name != "vllm:omni_audio_ttfp_s" || f.Original != "vllm_omni:audio_ttfp_s" {
			t.Errorf("Lookup(%q) = %+v, %v", name, f, ok)
		}
	}
	if f := current["vllm:omni_audio_ttfp_s_created"]; f == nil || f.CreatedFor != "vllm:omni_audio_ttfp_s" {
		t.Error("created companion not linked under the vllm_omni: prefix")
	}
	if _, ok := current.Lookup("ttfp"); ok {
		t.Error("Lookup found a family that does not exist")
	}

	// Both spellings in one exposition: the design form wins and the other
	// is recorded.
	both := append(readTestdata(t, "go.prom"), []byte(
		"# HELP vllm_omni:audio_frames_total Frames.\n# TYPE vllm_omni:audio_frames_total counter\nvllm_omni:audio_frames_total 7\n")...)
	fs := mustParse(t, ctText, both)
	f := fs["vllm:omni_audio_frames_total"]
	if f.Original != "vllm:omni_audio_frames_total" || f.AlsoExposedAs != "vllm_omni:audio_frames_total" || f.Series[0].Value != 96000 {
		t.Errorf("double exposure = %+v", f)
	}
}

func TestParseCRLFAndMissingNewline(t *testing.T) {
	want := data(mustParse(t, ctText, readTestdata(t, "python.prom")), true)
	crlf := bytes.ReplaceAll(readTestdata(t, "python.prom"), []byte("\n"), []byte("\r\n"))
	if got := data(mustParse(t, ctText, crlf), true); !reflect.DeepEqual(got, want) {
		t.Error("CRLF exposition parsed differently")
	}
	trimmed := bytes.TrimRight(readTestdata(t, "python.prom"), "\n")
	if got := data(mustParse(t, ctText, trimmed), true); !reflect.DeepEqual(got, want) {
		t.Error("exposition without final newline parsed differently")
	}
	omCRLF := bytes.TrimRight(bytes.ReplaceAll(readTestdata(t, "openmetrics.txt"), []byte("\n"), []byte("\r\n")), "\r\n")
	if got := data(mustParse(t, ctOpenMetrics, omCRLF), true); !reflect.DeepEqual(got, want) {
		t.Error("CRLF OpenMetrics without final newline parsed differently")
	}
}

func TestParseMalformed(t *testing.T) {
	lines := strings.Split(string(readTestdata(t, "go.prom")), "\n")
	lines[11] = `vllm:omni_audio_ttfp_s_bucket{model_name="Qwen/Qwen3-Omni",replica="0",stage="2",le="0.25"} abc`
	_, err := Parse(ctText, []byte(strings.Join(lines, "\n")))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ParseError", err, err)
	}
	if pe.Line != 12 || pe.Format != FormatText || !strings.Contains(pe.Msg, `"abc"`) {
		t.Errorf("ParseError = %+v, want line 12 naming \"abc\"", pe)
	}
	if msg := err.Error(); !strings.Contains(msg, "line 12") || !strings.Contains(msg, "abc") {
		t.Errorf("message %q does not name the line and the bad token", msg)
	}

	// OpenMetrics without # EOF names the line after the last one.
	om := bytes.TrimSuffix(readTestdata(t, "openmetrics.txt"), []byte("# EOF\n"))
	_, err = Parse(ctOpenMetrics, om)
	if !errors.As(err, &pe) || pe.Format != FormatOpenMetrics || !strings.Contains(pe.Msg, "EOF") || pe.Line == 0 {
		t.Errorf("OpenMetrics without EOF: %v", err)
	}
}

func TestParseNotExposition(t *testing.T) {
	cases := []struct {
		ct, body, want string
	}{
		{"text/html; charset=utf-8", "<!DOCTYPE html><html><body>Login</body></html>",
			"body returned text/html (an HTML page), not a Prometheus exposition"},
		{"", "\n  <html><head></head></html>", "body holds an HTML page, not a Prometheus exposition"},
		{"application/json", `{"status":"ok"}`, "body returned application/json (a JSON document), not a Prometheus exposition"},
		{"", `{"data": [1, 2]}`, "body holds a JSON document, not a Prometheus exposition"},
		{"text/plain", `[1,2,3]`, "body returned text/plain (a JSON document), not a Prometheus exposition"},
	}
	for _, c := range cases {
		_, err := Parse(c.ct, []byte(c.body))
		var ne *NotExpositionError
		if !errors.As(err, &ne) || err.Error() != c.want {
			t.Errorf("Parse(%q, %q) = %v, want %q", c.ct, c.body, err, c.want)
		}
	}
	// A quoted UTF-8 metric name starts with '{' but is an exposition.
	fs, err := Parse(ctText, []byte(`{"my.metric"} 1`+"\n"))
	if err != nil || fs["my.metric"] == nil {
		t.Errorf("quoted-name exposition: %v, %v", fs, err)
	}
}

func TestParseInfMissing(t *testing.T) {
	body := "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"2\"} 2\nh_sum 2.5\nh_count 3\n"
	fs := mustParse(t, ctText, []byte(body))
	h := fs["h"].Series[0].Histogram
	if !h.InfMissing {
		t.Error("missing +Inf not flagged")
	}
	if n := len(h.Buckets); n != 3 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) || h.Buckets[n-1].Count != 3 {
		t.Errorf("buckets = %+v, want +Inf added with the count", h.Buckets)
	}
}

func TestParseEmpty(t *testing.T) {
	fs, err := Parse(ctText, nil)
	if err != nil || len(fs) != 0 {
		t.Errorf("empty body: %v, %v", fs, err)
	}
}
