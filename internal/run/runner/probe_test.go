package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
)

// probeConfig is a run of n requests against target with the probe on.
func probeConfig(t *testing.T, target, kind string, n int) (Config, *bytes.Buffer) {
	t.Helper()
	cfg := baseConfig(target, workload(t, "tts-short", kind, ""), n, 2)
	cfg.Scrape = ScrapeOff
	cfg.Probe = true
	var jsonl bytes.Buffer
	cfg.Out = &jsonl
	return cfg, &jsonl
}

// runGuarded is Run bounded by runGuard.
func runGuarded(t *testing.T, cfg Config) (*Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runGuard)
	defer cancel()
	return Run(ctx, cfg)
}

// refusingServer answers every POST and WebSocket handshake with status and
// a vLLM-style error body, serves /v1/models, and counts the requests to
// anything else than /v1/models.
func refusingServer(t *testing.T, status int, message string, models ...string) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			var items []string
			for _, id := range models {
				items = append(items, fmt.Sprintf(`{"id":%q}`, id))
			}
			fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(items, ","))
			return
		}
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"code":%d}}`, message, status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

func TestProbeStopsOnRefusedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	cfg, jsonl := probeConfig(t, dead, "", 50)
	out, err := runGuarded(t, cfg)
	if out != nil || !errors.Is(err, errProbe) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Run against a closed port: outcome %v, error %v; want the probe's connection refused", out != nil, err)
	}
	if jsonl.Len() != 0 {
		t.Errorf("the results file was written: %q", jsonl.String())
	}
}

// A server that accepts connections and closes them at once: the probe is
// the only connection the run makes.
func TestProbeIsTheOnlyAttempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	cfg, _ := probeConfig(t, "http://"+ln.Addr().String(), "", 50)
	out, err := runGuarded(t, cfg)
	if out != nil || !errors.Is(err, errProbe) {
		t.Fatalf("Run against a server closing every connection: outcome %v, error %v; want the probe's error", out != nil, err)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the server accepted %d connections, want 1 (the probe's)", n)
	}
}

func TestProbeStopsOnRefusals(t *testing.T) {
	const notServed = "The model `Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice` does not exist."
	for _, tc := range []struct {
		name, kind string
		status     int
		message    string
		want       []string
	}{
		{"model 404", "", http.StatusNotFound, notServed,
			[]string{"HTTP 404: " + notServed, `GET /v1/models lists "a", "b"`}},
		{"model 400", "", http.StatusBadRequest, notServed, []string{"HTTP 400"}},
		{"401", "", http.StatusUnauthorized, "invalid API key", []string{"HTTP 401"}},
		{"WebSocket handshake", results.KindSpeechWS, http.StatusNotFound, "Not Found", []string{"WebSocket handshake refused: HTTP 404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := refusingServer(t, tc.status, tc.message, "a", "b")
			cfg, jsonl := probeConfig(t, url, tc.kind, 50)
			out, err := runGuarded(t, cfg)
			if out != nil || !errors.Is(err, errProbe) {
				t.Fatalf("outcome %v, error %v; want the probe's error", out != nil, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("the server saw %d requests, want 1 (the probe)", n)
			}
			if jsonl.Len() != 0 {
				t.Errorf("the results file was written: %q", jsonl.String())
			}
		})
	}
}

// A failure one request does not judge (a 503, an overloaded server) is
// said, and the run goes on.
func TestProbeTransientFailureGoesOn(t *testing.T) {
	url, requests := refusingServer(t, http.StatusServiceUnavailable, "overloaded")
	cfg, _ := probeConfig(t, url, "", 3)
	cfg.Load.Concurrency = 1
	out, err := runGuarded(t, cfg)
	if err != nil || out == nil {
		t.Fatalf("Run: %v", err)
	}
	if n := requests.Load(); n != 1+3 {
		t.Errorf("the server saw %d requests, want the probe and 3", n)
	}
	if !strings.Contains(strings.Join(out.Notes, "\n"), "probe request (not measured) failed") {
		t.Errorf("no note about the failed probe in %q", out.Notes)
	}
	if out.Set.Len() != 3 {
		t.Errorf("%d records, want 3 (the probe is not one)", out.Set.Len())
	}
}

// The model of a built-in scenario gives way to the one model a server
// serves; the probe is not measured and the server-vs-client comparison
// does not count it.
func TestPickServedModel(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, func(c *simulator.Config) { c.Model = "the-only-model" })
	cfg := baseConfig(sim.URL, wl, 4, 2)
	cfg.Probe, cfg.PickModel = true, true
	r := mustRun(t, cfg)
	for _, rec := range r.Records {
		if !rec.OK() || rec.Model != "the-only-model" {
			t.Fatalf("record %s asked for %q (error %q), want the served model", rec.ID, rec.Model, rec.Error)
		}
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, `GET /v1/models lists one model, "the-only-model", not the scenario's "Qwen/Qwen3-Omni-30B-A3B-Instruct": using it`) || !strings.Contains(notes, "probe request (not measured): answered") {
		t.Errorf("notes %q do not say the model pick and the probe", notes)
	}
	if r.Delta == nil {
		t.Fatal("no server-side delta")
	}
	rows := r.ServerVsClient()
	wantAgree(t, rows, "requests completed", 4)
	wantAgree(t, rows, "audio frames", float64(sumFrames(r.Records)))
}

// The probe's error, which quotes the server, never shows the credentials:
// here a gateway that echoes the Authorization header it refused.
func TestProbeErrorIsRedacted(t *testing.T) {
	const key = "sk-probe-secret-1234"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid credentials %s"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	cfg, _ := probeConfig(t, srv.URL, "", 5)
	cfg.Client.APIKey = key
	cfg.Redact = secret.New(key)
	var log strings.Builder
	cfg.Log = &log
	_, err := runGuarded(t, cfg)
	if !errors.Is(err, errProbe) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("error %v, want the probe's 401", err)
	}
	if strings.Contains(err.Error(), key) || strings.Contains(log.String(), key) {
		t.Errorf("the key is in the error %q or the log %q", err, log.String())
	}
}

// A server that lists several models keeps the workload's (the probe's
// refusal names them); one that lists one gives it to a workload that
// asks for none.
func TestPickServedModelCases(t *testing.T) {
	several, _ := refusingServer(t, http.StatusNotFound, "x", "a", "b")
	cfg, _ := probeConfig(t, several, "", 1)
	if note := pickServedModel(context.Background(), &cfg, several); note != "" || cfg.Workload.Request(0, 1).Model != "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice" {
		t.Errorf("several models: note %q, model %q; want the scenario's kept", note, cfg.Workload.Request(0, 1).Model)
	}
	one, _ := refusingServer(t, http.StatusNotFound, "x", "a")
	cfg, _ = probeConfig(t, one, "", 1)
	cfg.Workload = cfg.Workload.WithModel("")
	note := pickServedModel(context.Background(), &cfg, one)
	if want := `no --model given and GET /v1/models lists one model, "a": using it`; note != want || cfg.Workload.Request(0, 1).Model != "a" {
		t.Errorf("no model: note %q, model %q; want %q and a", note, cfg.Workload.Request(0, 1).Model, want)
	}
}

// TestOnlyShardZeroProbes: of the shards of one test, only shard 0 sends
// the probe (before its before-scrape, which then counts it); another
// shard's probe could reach the server after that scrape and be counted by
// the server and by no shard. A shard other than 0 sends no request before
// its load.
func TestOnlyShardZeroProbes(t *testing.T) {
	for _, tc := range []struct {
		index int
		want  int64
	}{{0, 1}, {1, 0}} {
		url, requests := refusingServer(t, http.StatusUnauthorized, "invalid API key", "a")
		cfg, _ := probeConfig(t, url, "", 50)
		cfg.Load.Shard = load.Shard{Index: tc.index, Count: 2}
		out := &Outcome{}
		sent, err := prepareTarget(context.Background(), &cfg, out, url)
		if n := requests.Load(); n != tc.want || sent != (tc.want == 1) || (err != nil) != (tc.want == 1) {
			t.Errorf("shard %d/2: %d requests, sent %v, error %v; want %d", tc.index, n, sent, err, tc.want)
		}
	}
}
