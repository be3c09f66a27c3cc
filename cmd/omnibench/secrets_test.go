package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omnibench/omnibench/simulator"
)

// echoServer passes every other request to the simulator and answers the
// rest with a 500 whose body quotes the request back: the URL, then every
// header, padded so that the first quoted credential straddles the client's
// 200-byte clip of error messages. Its /metrics answers 401 quoting the
// Authorization header when asked with credentials, like some proxies.
type echoServer struct {
	next http.Handler
	n    atomic.Int64
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" && r.Header.Get("Authorization") != "" && e.n.Add(1)%2 == 0 {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "metrics: bad credentials %q\n", r.Header.Get("Authorization"))
		return
	}
	if r.URL.Path == "/metrics" || e.n.Add(1)%2 == 1 {
		e.next.ServeHTTP(w, r)
		return
	}
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	var quoted strings.Builder
	for _, k := range names {
		fmt.Fprintf(&quoted, " %s=%s", k, strings.Join(r.Header[k], ","))
	}
	lead := "rejected tenant=" + r.Header.Get("X-Tenant") + " "
	auth := r.Header.Get("Authorization")
	scheme, _, _ := strings.Cut(auth, " ")
	// The padding starts the credential after the scheme at byte 185, so
	// the 200-byte clip cuts it: a redaction after clipping misses the
	// 15-byte prefix that is left.
	pad := strings.Repeat("x", max(0, 185-len(lead)-len(scheme)-1))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `{"error":{"message":%q}}`, lead+pad+auth+" url="+r.URL.String()+quoted.String())
}

// gatewayEcho is a Pushgateway that refuses every push, quoting the basic
// credentials it was sent.
func gatewayEcho(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	u, p, _ := r.BasicAuth()
	http.Error(w, fmt.Sprintf("push refused for user %s password %s (%s)", u, p, r.Header.Get("Authorization")), http.StatusForbidden)
}

// TestSecretsNeverOut plants a credential in every place a user can give
// one (URL userinfo, metrics URL userinfo, API key, a custom header, push
// URL userinfo), runs against servers that echo headers and URLs back in
// error bodies, and greps every byte written and printed.
func TestSecretsNeverOut(t *testing.T) {
	srv, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(&echoServer{next: srv.Handler()})
	defer hs.Close()
	gw := httptest.NewServer(http.HandlerFunc(gatewayEcho))
	defer gw.Close()

	const (
		urlPass     = "urlpass-S1"
		metricsPass = "metricspass-S2"
		apiKey      = "sk-SECRET12-apikey"
		headerVal   = "tenant-S3-secret"
		pushPass    = "pushpass-S4"
	)
	withUser := func(raw, user, pass string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(user, pass)
		return u.String()
	}
	secrets := []string{urlPass, metricsPass, apiKey, headerVal, pushPass,
		base64.StdEncoding.EncodeToString([]byte("bench:" + urlPass)),
		base64.StdEncoding.EncodeToString([]byte("mu:" + metricsPass)),
		base64.StdEncoding.EncodeToString([]byte("pu:" + pushPass)),
		// What a clip leaves of a credential it cuts.
		apiKey[:11],
		base64.StdEncoding.EncodeToString([]byte("bench:" + urlPass))[:12],
	}
	dir := t.TempDir()
	printed := map[string]string{}
	for i, args := range [][]string{
		// With the API key the client sends a bearer token.
		{"--api-key", apiKey, "--format", "markdown"},
		// Without it, the URL's userinfo goes as Basic credentials.
		{"--format", "json"},
		{"--format", "csv"},
		{"--format", "table"},
	} {
		sub := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		base := []string{
			"--url", withUser(hs.URL, "bench", urlPass),
			"--metrics-url", withUser(hs.URL+"/metrics", "mu", metricsPass),
			"-H", "X-Tenant: " + headerVal,
			"--push", withUser(gw.URL, "pu", pushPass),
			"-n", "4", "-c", "1", "--warmup", "0", "--settle", "0",
			"--out", filepath.Join(sub, "run.jsonl"), "--summary", filepath.Join(sub, "run.json"),
			"--html", filepath.Join(sub, "run.html"), "--junit", filepath.Join(sub, "slo.xml"),
			"--slo", "error_rate<0.1", "--metrics-out", filepath.Join(sub, "client.prom"),
		}
		stdout, stderr, code, err := execRun(t, append(base, args...)...)
		if err != nil {
			stderr += "\nomnibench: " + err.Error() // as main prints it
		}
		if code == 0 {
			t.Errorf("run %d: exit 0 with half the requests failing, an SLO missed and a push refused", i)
		}
		printed[fmt.Sprintf("run %d stdout", i)] = stdout
		printed[fmt.Sprintf("run %d stderr", i)] = stderr
		if !strings.Contains(stderr, "push") {
			t.Errorf("run %d: stderr does not report the refused push:\n%s", i, stderr)
		}
	}
	// sweep writes one results file per level, a summary and HTML.
	sw := filepath.Join(dir, "sweep")
	if err := os.Mkdir(sw, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, _ := sweepExec(t, "sweep", "--url", withUser(hs.URL, "bench", urlPass),
		"--metrics-url", withUser(hs.URL+"/metrics", "mu", metricsPass), "-H", "X-Tenant: "+headerVal, "--api-key", apiKey,
		"-c", "1,2", "-n", "2", "--warmup", "0", "--settle", "0", "--no-early-stop", "--format", "json",
		"--out", filepath.Join(sw, "sweep.jsonl"), "--summary", filepath.Join(sw, "sweep.json"), "--html", filepath.Join(sw, "sweep.html"))
	printed["sweep stdout"], printed["sweep stderr"] = stdout, stderr
	files := 0
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files++
		printed[path] = string(data)
		return nil
	})
	if files < 4*5+4 {
		t.Fatalf("only %d output files written", files)
	}
	for what, text := range printed {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				i := strings.Index(text, s)
				t.Errorf("%s contains secret %q: ...%s...", what, s, text[max(0, i-80):min(len(text), i+len(s)+20)])
			}
		}
	}
	if !strings.Contains(printed[filepath.Join(dir, "0", "run.jsonl")], "[redacted]") {
		t.Error("the echoed credentials are not marked as redacted in the results")
	}
}
