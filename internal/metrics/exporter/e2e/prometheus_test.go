package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// promTools finds prometheus and promtool. Outside CI a missing binary skips
// the test, saying why; in CI (CI set) it fails the test.
func promTools(t *testing.T) (prom, promtool string) {
	t.Helper()
	var missing []string
	for _, name := range []string{"prometheus", "promtool"} {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		if name == "prometheus" {
			prom = p
		} else {
			promtool = p
		}
	}
	if len(missing) == 0 {
		return prom, promtool
	}
	msg := fmt.Sprintf("%s not found in PATH; install Debian's prometheus package (apt-get install prometheus), as .ci/run does",
		strings.Join(missing, " and "))
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %s", msg)
	}
	t.Skipf("CI is not set, skipping the end-to-end test: %s", msg)
	return "", ""
}

// lockedBuffer collects a subprocess's output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// promServer is a Prometheus subprocess and a client of its HTTP API.
type promServer struct {
	url    string
	client *http.Client
}

// scrapeJob is one scrape_configs entry.
type scrapeJob struct {
	name   string
	target string // host:port
}

// startPrometheus writes a configuration scraping jobs every second, starts
// Prometheus on a free loopback port and waits until it is ready. The
// process is killed when the test ends.
func startPrometheus(t *testing.T, bin string, jobs []scrapeJob) *promServer {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	for _, j := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %q\n    static_configs:\n      - targets: [%q]\n", j.name, j.target)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port can be taken between our probe and Prometheus's bind:
	// try a few.
	var lastErr error
	for attempt := range 3 {
		addr, err := freeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		p, err := runPrometheus(t, bin, cfgPath, filepath.Join(dir, fmt.Sprintf("data%d", attempt)), addr)
		if err == nil {
			return p
		}
		lastErr = err
	}
	t.Fatalf("starting Prometheus: %v", lastErr)
	return nil
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free loopback port: %w", err)
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

func runPrometheus(t *testing.T, bin, cfgPath, dataDir, addr string) (*promServer, error) {
	out := &lockedBuffer{}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+dataDir,
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill() // our own child, by its PID
		<-exited
	}
	p := &promServer{url: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second}}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("prometheus exited before it was ready (%v):\n%s", err, out.String())
		case <-deadline.C:
			stop()
			return nil, fmt.Errorf("prometheus at %s not ready after 30s:\n%s", addr, out.String())
		case <-tick.C:
		}
		resp, err := p.client.Get(p.url + "/-/ready")
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("prometheus output:\n%s", out.String())
				}
			})
			return p, nil
		}
	}
}

// sample is one element of an instant vector (or a scalar, with no labels).
type sample struct {
	Metric map[string]string
	Value  float64
}

// query evaluates expr at time at (zero: now) through /api/v1/query.
func (p *promServer) query(ctx context.Context, expr string, at float64) ([]sample, error) {
	v := url.Values{"query": {expr}}
	if at > 0 {
		v.Set("time", strconv.FormatFloat(at, 'f', 3, 64))
	}
	var body struct {
		Status    string `json:"status"`
		Error     string `json:"error"`
		ErrorType string `json:"errorType"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/query?"+v.Encode(), &body); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s: %s", expr, body.ErrorType, body.Error)
	}
	switch body.Data.ResultType {
	case "vector":
		var res []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(body.Data.Result, &res); err != nil {
			return nil, fmt.Errorf("query %s: decoding the vector: %w", expr, err)
		}
		out := make([]sample, 0, len(res))
		for _, r := range res {
			f, err := parseValue(r.Value[1])
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", expr, err)
			}
			out = append(out, sample{Metric: r.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var res [2]any
		if err := json.Unmarshal(body.Data.Result, &res); err != nil {
			return nil, fmt.Errorf("query %s: decoding the scalar: %w", expr, err)
		}
		f, err := parseValue(res[1])
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", expr, err)
		}
		return []sample{{Value: f}}, nil
	}
	return nil, fmt.Errorf("query %s: result type %q, want a vector or a scalar", expr, body.Data.ResultType)
}

func parseValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("sample value %q: %w", s, err)
	}
	return f, nil
}

// one evaluates expr at time at and requires exactly one sample.
func (p *promServer) one(ctx context.Context, expr string, at float64) (float64, error) {
	res, err := p.query(ctx, expr, at)
	if err != nil {
		return 0, err
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("query %s at %.3f: %d samples, want 1: %v", expr, at, len(res), res)
	}
	return res[0].Value, nil
}

// labelValues returns the values of label among the series matching
// selector (what Grafana's label_values(selector, label) shows).
func (p *promServer) labelValues(ctx context.Context, label, selector string) ([]string, error) {
	var body struct {
		Status string   `json:"status"`
		Error  string   `json:"error"`
		Data   []string `json:"data"`
	}
	path := "/api/v1/label/" + url.PathEscape(label) + "/values?" + url.Values{"match[]": {selector}}.Encode()
	if err := p.get(ctx, path, &body); err != nil {
		return nil, fmt.Errorf("label values of %s for %s: %w", label, selector, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("label values of %s for %s: %s", label, selector, body.Error)
	}
	return body.Data, nil
}

func (p *promServer) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: reading the body: %w", path, err)
	}
	// The API answers errors with 4xx/5xx and a JSON body saying why.
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("GET %s: status %d, body %.200q: %w", path, resp.StatusCode, data, err)
	}
	return nil
}

// waitFor polls cond every 100 ms until it holds, failing the test after
// the deadline with cond's last explanation.
func waitFor(t *testing.T, what string, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("waited %v for %s: %s", within, what, why)
		case <-tick.C:
		}
	}
}
