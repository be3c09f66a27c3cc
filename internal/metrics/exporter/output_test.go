package exporter

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

func TestWriteFile(t *testing.T) {
	e := newGolden(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "omnibench.prom")
	if err := os.WriteFile(path, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (the textfile collector runs as another user)", fi.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	mf := fams[omnimetrics.PrefixClient+"audio_ttfp_s"]
	if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM || mf.GetMetric()[0].GetHistogram().GetSampleCount() != 3 {
		t.Errorf("%s: audio_ttfp_s is %v, want a histogram of 3 observations", path, mf)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files after the write, want only %s", len(entries), path)
	}
}

func TestWriteFileErrorNamesPath(t *testing.T) {
	e := newGolden(t)
	path := filepath.Join(t.TempDir(), "missing", "omnibench.prom")
	err := e.WriteFile(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteFile into a missing directory: %v, want an error naming %s", err, path)
	}
}

// pushgateway is a fake Pushgateway that decodes what it receives.
type pushgateway struct {
	method, path, user, password string
	fams                         map[string]*dto.MetricFamily
	err                          error
}

func (g *pushgateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.method, g.path = r.Method, r.URL.EscapedPath()
	g.user, g.password, _ = r.BasicAuth()
	g.fams = map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err != nil {
			if !errors.Is(err, io.EOF) {
				g.err = err
			}
			break
		}
		g.fams[mf.GetName()] = mf
	}
	w.WriteHeader(http.StatusOK)
}

func TestPush(t *testing.T) {
	e := newGolden(t)
	gw := &pushgateway{}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
	labels, err := ParsePushLabels([]string{"run=42", "branch=feature/x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Push(context.Background(), PushConfig{URL: u, Grouping: labels, Client: srv.Client()}); err != nil {
		t.Fatal(err)
	}
	if gw.err != nil {
		t.Fatalf("the gateway could not decode the push: %v", gw.err)
	}
	if gw.method != http.MethodPut {
		t.Errorf("method %s, want PUT (replace the group)", gw.method)
	}
	// Grouping labels follow the job in map order; a value with "/" is
	// base64-encoded.
	if !strings.HasPrefix(gw.path, "/metrics/job/omnibench/") || !strings.Contains(gw.path, "/run/42") ||
		!strings.Contains(gw.path, "/branch@base64/") {
		t.Errorf("path %s, want /metrics/job/omnibench with run=42 and a base64 branch", gw.path)
	}
	if gw.user != "alice" || gw.password != "s3cret" {
		t.Errorf("basic auth %q:%q, want the URL's credentials", gw.user, gw.password)
	}
	mf := gw.fams[omnimetrics.PrefixClient+"requests_success_total"]
	if mf == nil || len(mf.GetMetric()) != 4 {
		t.Errorf("pushed requests_success_total = %v, want 4 series", mf)
	}
	if _, ok := gw.fams[omnimetrics.PrefixClient+"transfer_tx_s"]; ok {
		t.Error("pushed a family without series")
	}
}

func TestPushFailureHidesPassword(t *testing.T) {
	e := newGolden(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "push rejected", http.StatusBadRequest)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
	err := e.Push(context.Background(), PushConfig{URL: u, Job: "ci", Client: srv.Client()})
	if err == nil {
		t.Fatal("a rejected push reported no error")
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cret") {
		t.Errorf("the error shows the password: %s", msg)
	}
	if !strings.Contains(msg, "400") || !strings.Contains(msg, `"ci"`) || !strings.Contains(msg, "push rejected") {
		t.Errorf("error %q does not name the status, the job and the gateway's answer", msg)
	}
}

func TestPushURLErrors(t *testing.T) {
	for _, u := range []string{"", "ftp://host:9091", "http://", "http://host:9091/?x=1", "http://a:p@ss w@host:1"} {
		_, _, _, err := splitPushURL(u)
		if err == nil {
			t.Errorf("splitPushURL(%q) accepted", u)
			continue
		}
		if strings.Contains(err.Error(), "ss w") {
			t.Errorf("splitPushURL(%q): error quotes the password: %v", u, err)
		}
	}
	base, user, pass, err := splitPushURL("gw.example:9091")
	if err != nil || base != "http://gw.example:9091" || user != "" || pass != "" {
		t.Errorf("splitPushURL(host:port) = %q %q %q %v", base, user, pass, err)
	}
}

func TestParsePushLabels(t *testing.T) {
	got, err := ParsePushLabels([]string{"run=42", " instance = ci-1", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	if got["run"] != "42" || got["instance"] != " ci-1" || got["empty"] != "" || len(got) != 3 {
		t.Errorf("ParsePushLabels = %v", got)
	}
	for _, bad := range []string{"run", "1run=x", "job=x", "__x=y", "model_name=m", "scenario=s", "class=c", "le=1", "a=1,a=2"} {
		pairs := strings.Split(bad, ",")
		if _, err := ParsePushLabels(pairs); err == nil {
			t.Errorf("ParsePushLabels(%q) accepted", pairs)
		}
	}
}

func TestServer(t *testing.T) {
	e := newGolden(t)
	s, err := Listen(context.Background(), "127.0.0.1:0", e.Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "omnibench:audio_ttfp_s_bucket") {
		t.Errorf("GET %s: %d, body without the TTFP histogram", s.URL(), resp.StatusCode)
	}
	resp, err = http.Get("http://" + s.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /: %d, want 404", resp.StatusCode)
	}
	resp, err = http.Post(s.URL(), "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d, want 405", s.URL(), resp.StatusCode)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestListenError(t *testing.T) {
	if _, err := Listen(context.Background(), "127.0.0.1:-1", http.NotFoundHandler()); err == nil ||
		!strings.Contains(err.Error(), "127.0.0.1:-1") {
		t.Errorf("Listen on a bad address: %v, want an error naming it", err)
	}
}

func TestLinger(t *testing.T) {
	s, err := Listen(context.Background(), "127.0.0.1:0", http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Linger(context.Background(), 0); err != nil {
		t.Errorf("Linger(0) = %v", err)
	}
	// An interrupt cuts a long linger short.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Linger(ctx, 24*time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Linger with a cancelled context = %v, want context.Canceled", err)
	}
	// A closed server ends the linger too.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Linger(context.Background(), 24*time.Hour); err != nil {
		t.Errorf("Linger on a closed server = %v, want nil", err)
	}
}
