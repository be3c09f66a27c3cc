package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineSignal is a stderr that hands the listening URL to the test as soon
// as serve logs it.
type lineSignal struct {
	mu  sync.Mutex
	buf bytes.Buffer
	url chan string
}

var listenRE = regexp.MustCompile(`omnibench serve: listening on (http://\S+)`)

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if m := listenRE.FindSubmatch(l.buf.Bytes()); m != nil && l.url != nil {
		l.url <- string(m[1])
		l.url = nil
	}
	return len(p), nil
}

func (l *lineSignal) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startServe runs `omnibench serve args...` until the test ends and returns
// its URL.
func startServe(t *testing.T, args ...string) (url string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	root := newRootCmd("test")
	stderr := &lineSignal{url: make(chan string, 1)}
	urlCh := stderr.url
	root.SetArgs(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	root.SetOut(io.Discard)
	root.SetErr(stderr)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	select {
	case url = <-urlCh:
	case err := <-done:
		cancel()
		t.Fatalf("serve exited early: %v; stderr: %s", err, stderr)
	case <-time.After(30 * time.Second): // a deadline for a hang, not a wait for work
		cancel()
		t.Fatal("serve did not log its URL")
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return url, stop
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func httpPost(t *testing.T, url, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestServeRunsAndStops(t *testing.T) {
	url, stop := startServe(t, "--log-stats", "--replicas", "1,2,2", "--ttfa", "1ms", "--rtf", "0.01",
		"--metrics-prefix", "vllm_omni:", "--seed", "3")
	if status, _ := httpGet(t, url+"/health"); status != 200 {
		t.Fatalf("/health: %d", status)
	}
	if status := httpPost(t, url+"/v1/audio/speech", `{"input":"hello there"}`); status != 200 {
		t.Fatalf("speech: %d", status)
	}
	_, metrics := httpGet(t, url+"/metrics")
	if !strings.Contains(metrics, `vllm_omni:audio_frames_total{model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct",replica="0",stage="2"}`) {
		t.Errorf("metrics lack the speech request's frames:\n%s", metrics)
	}
	if !strings.Contains(metrics, `vllm:num_requests_running{model_name="Qwen/Qwen3-Omni-30B-A3B-Instruct",replica="1",stage="2"}`) {
		t.Error("upstream families lack replica 1 of stage 2 (--replicas 1,2,2)")
	}
	if err := stop(); err != nil {
		t.Errorf("serve returned %v after cancellation; want nil (main turns the cancel into exit 130)", err)
	}
}

func TestServeDisableLogStatsWins(t *testing.T) {
	url, _ := startServe(t, "--log-stats", "--disable-log-stats", "--ttfa", "1ms", "--rtf", "0.01")
	httpPost(t, url+"/v1/audio/speech", `{"input":"hello"}`)
	_, metrics := httpGet(t, url+"/metrics")
	for _, line := range strings.Split(metrics, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Current servers keep a zero model_name child of five families
		// (and its _created) with stats off, and the Python runtime and
		// HTTP families are always there; nothing else may have samples.
		name, _, _ := strings.Cut(line, "{")
		bound := strings.HasPrefix(name, "vllm:omni_num_requests_") || strings.HasPrefix(name, "vllm:omni_e2e_request_latency_s") ||
			strings.HasPrefix(name, "vllm:omni_prompt_tokens") || strings.HasPrefix(name, "vllm:omni_generation_tokens")
		runtime := strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "python_") || strings.HasPrefix(name, "http_")
		switch {
		case runtime:
		case bound && (strings.HasSuffix(name, "_created") || strings.HasSuffix(line, " 0")):
		default:
			t.Fatalf("sample %q with --disable-log-stats", line)
		}
	}
	if !strings.Contains(metrics, "# TYPE vllm:omni_audio_ttfp_s histogram") {
		t.Error("families must stay declared with stats off")
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--replicas", "1,x"}, `--replicas: replica list "1,x": stage 1: "x" is not an integer`},
		{[]string{"--metrics-prefix", "foo:"}, `--metrics-prefix: "foo:" is neither`},
		{[]string{"--fault-500", "2"}, "--fault-500: probability 2 is outside [0, 1]"},
		{[]string{"--fault-voice-clip", "0.5"}, "--fault-voice-clip: damages the spoken voice; needs --voice-engine espeak-ng"},
		{[]string{"--voice-engine", "espeak-ng", "--fault-voice-mute", "1.5"}, "--fault-voice-mute: probability 1.5 is outside [0, 1]"},
		{[]string{"--voice-engine", "espeak-ng", "--fault-voice-cut-end", "-1"}, "--fault-voice-cut-end: probability -1 is outside [0, 1]"},
		{[]string{"--voice-engine", "espeak-ng", "--fault-voice-swap", "NaN"}, "--fault-voice-swap: probability NaN is outside [0, 1]"},
		{[]string{"--voice-engine", "espeak-ng", "--fault-voice-mute-for", "2h"}, "--fault-voice-mute-for: 2h0m0s is outside 0..1h"},
		{[]string{"--jitter", "1.5"}, "--jitter: 1.5 is outside [0, 1)"},
		{[]string{"--ttfa", "soon"}, `invalid argument "soon" for "--ttfa"`},
		{[]string{"--addr", "256.0.0.1:1"}, "listening on 256.0.0.1:1"},
		{[]string{"extra"}, `unknown command "extra"`},
	} {
		root := newRootCmd("test")
		root.SetArgs(append([]string{"serve"}, tc.args...))
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		err := root.ExecuteContext(t.Context())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
