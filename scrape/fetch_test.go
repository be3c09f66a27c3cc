package scrape

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// goRegistry records the data of testdata/go.prom through client_golang.
func goRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	mn := prometheus.Labels{"model_name": modelName}
	stage := prometheus.Labels{"model_name": modelName, "stage": "2", "replica": "0"}
	help := func(name string) string {
		return map[string]string{
			"running":    "Number of requests currently running across all stages.",
			"waiting":    "Number of requests waiting to be scheduled.",
			"success":    "Count of finished requests by finish reason.",
			"e2e":        "End-to-end request latency in seconds.",
			"ttfp":       "Time from request arrival to the first audio packet.",
			"frames":     "Cumulative audio frames generated.",
			"continuity": "Requests whose worst underrun stayed within threshold_ms.",
			"size":       "Per-transfer payload size in bytes.",
			"image":      "Images generated (a family omnibench does not know).",
		}[name]
	}
	running := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:omni_num_requests_running", Help: help("running")}, []string{"model_name"})
	waiting := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:omni_num_requests_waiting", Help: help("waiting")}, []string{"model_name"})
	success := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:omni_requests_success_total", Help: help("success")}, []string{"model_name", "finished_reason"})
	e2e := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vllm:omni_e2e_request_latency_s", Help: help("e2e"),
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}}, []string{"model_name"})
	ttfp := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vllm:omni_audio_ttfp_s", Help: help("ttfp"),
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}}, []string{"model_name", "stage", "replica"})
	frames := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:omni_audio_frames_total", Help: help("frames")}, []string{"model_name", "stage", "replica"})
	cont := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:omni_audio_continuity_ok_total", Help: help("continuity")}, []string{"model_name", "stage", "replica", "threshold_ms"})
	size := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vllm:omni_transfer_size_bytes", Help: help("size"),
		Buckets: []float64{1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456}},
		[]string{"model_name", "from_stage", "from_replica", "to_stage", "to_replica"})
	image := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:omni_image_generated_total", Help: help("image")}, []string{"model_name"})
	reg.MustRegister(running, waiting, success, e2e, ttfp, frames, cont, size, image)

	running.With(mn).Set(1)
	waiting.With(mn).Set(0)
	success.WithLabelValues(modelName, "stop").Add(3)
	success.WithLabelValues(modelName, "length").Add(1)
	// The observations behind the buckets of go.prom.
	for _, v := range []float64{0.3, 0.8, 1.5, 4.0} {
		e2e.With(mn).Observe(v)
	}
	for _, v := range []float64{0.12, 0.2, 0.6} {
		ttfp.With(stage).Observe(v)
	}
	frames.With(stage).Add(96000)
	cont.With(prometheus.Labels{"model_name": modelName, "stage": "2", "replica": "0", "threshold_ms": "100"}).Add(2)
	edge := prometheus.Labels{"model_name": modelName, "from_stage": "0", "from_replica": "0", "to_stage": "1", "to_replica": "0"}
	size.With(edge).Observe(2000)
	size.With(edge).Observe(70000)
	image.With(mn).Add(0)
	return reg
}

// roundSums rounds histogram sums to 1e-9: float addition
// in the registry and the decimal in go.prom may differ in the last bit.
func roundSums(fs Families) Families {
	for _, f := range fs {
		for _, s := range f.Series {
			if s.Histogram != nil {
				s.Histogram.Sum = float64(int64(s.Histogram.Sum*1e9+0.5)) / 1e9
			}
		}
	}
	return fs
}

func TestFetchNegotiation(t *testing.T) {
	var served []string
	inner := promhttp.HandlerFor(goRegistry(t), promhttp.HandlerOpts{EnableOpenMetrics: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		served = append(served, w.Header().Get("Content-Type"))
	}))
	defer srv.Close()
	want := data(roundSums(mustParse(t, ctText, readTestdata(t, "go.prom"))), false)

	cases := []struct {
		accept Accept
		ct     string // media type the server picked
	}{
		{AcceptAuto, "application/vnd.google.protobuf"},
		{AcceptProto, "application/vnd.google.protobuf"},
		{AcceptOpenMetrics, "application/openmetrics-text"},
		{AcceptText, "text/plain"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range cases {
		snap, err := Fetch(ctx, srv.URL+"/metrics", c.accept)
		if err != nil {
			t.Fatalf("Fetch(%v): %v", c.accept, err)
		}
		if !strings.HasPrefix(snap.ContentType, c.ct) {
			t.Errorf("Fetch(%v): Content-Type %q, want %s", c.accept, snap.ContentType, c.ct)
		}
		if snap.URL != srv.URL+"/metrics" || snap.FetchedAt.IsZero() {
			t.Errorf("snapshot meta = %q %v", snap.URL, snap.FetchedAt)
		}
		fs, err := snap.Families()
		if err != nil {
			t.Fatal(err)
		}
		if got := data(roundSums(fs), false); !reflect.DeepEqual(got, want) {
			t.Errorf("Fetch(%v) parsed to other data than go.prom:\n got: %+v\nwant: %+v", c.accept, got, want)
		}
	}
}

func TestFetchErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "engine is starting", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>Sign in</title>"))
	})
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE x counter\nx 1\nx{a=\"b\" 2\n"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err := Fetch(ctx, srv.URL+"/down", AcceptAuto)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 503 || !strings.Contains(err.Error(), "engine is starting") || !strings.Contains(err.Error(), srv.URL+"/down") {
		t.Errorf("503: %v", err)
	}

	_, err = Fetch(ctx, srv.URL+"/login", AcceptAuto)
	if want := srv.URL + "/login returned text/html (an HTML page), not a Prometheus exposition"; err == nil || err.Error() != want {
		t.Errorf("HTML: %v, want %q", err, want)
	}

	_, err = Fetch(ctx, srv.URL+"/bad", AcceptAuto)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Source != srv.URL+"/bad" || !strings.Contains(err.Error(), srv.URL+"/bad: text format, line 3:") {
		t.Errorf("malformed: %v", err)
	}

	// A password in the URL never reaches an error message.
	secretURL := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1) + "/down"
	_, err = Fetch(ctx, secretURL, AcceptAuto)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("password leaked: %v", err)
	}
	_, err = Fetch(ctx, "http://user:s3cret@127.0.0.1:1/metrics", AcceptAuto)
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "user") {
		t.Errorf("user information leaked on connect error: %v", err)
	}
	// A user name alone may be a token.
	_, err = Fetch(ctx, "http://tok3n@127.0.0.1:1/metrics", AcceptAuto)
	if err == nil || strings.Contains(err.Error(), "tok3n") || !strings.Contains(err.Error(), "http://127.0.0.1:1/metrics") {
		t.Errorf("a user name leaked, or the URL is not named, on connect error: %v", err)
	}
	// Without a scheme the URL does not parse; its credentials still go.
	_, err = Fetch(ctx, "user:s3cret@127.0.0.1:1/metrics", AcceptAuto)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "[redacted]@127.0.0.1:1/metrics") {
		t.Errorf("an unparsable URL's credentials leaked, or it is not named: %v", err)
	}
}

func TestParseAccept(t *testing.T) {
	for in, want := range map[string]Accept{"": AcceptAuto, "auto": AcceptAuto, "proto": AcceptProto, "openmetrics": AcceptOpenMetrics, "TEXT": AcceptText} {
		if got, err := ParseAccept(in); err != nil || got != want {
			t.Errorf("ParseAccept(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseAccept("xml"); err == nil {
		t.Error("ParseAccept(xml) accepted")
	}
}

func TestFetchSettled(t *testing.T) {
	fetched := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched <- struct{}{}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
	}))
	defer srv.Close()

	snap, err := FetchSettled(t.Context(), srv.URL, AcceptText, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := snap.Families(); err != nil {
		t.Fatal(err)
	} else if _, ok := fs.Lookup("up"); !ok {
		t.Fatalf("families %v: no \"up\"", fs)
	}
	<-fetched

	// Cancelled during the wait: no request, and the error says what was
	// being waited for.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = FetchSettled(ctx, srv.URL, AcceptText, time.Hour)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "before scraping") {
		t.Fatalf("cancelled wait: %v", err)
	}
	select {
	case <-fetched:
		t.Fatal("scraped although the wait was cancelled")
	default:
	}
}

// switchingServer answers every request with 101 Switching Protocols and
// then holds the connection open without a byte more, until the test ends:
// net/http hands such a response's body back as the raw connection, which
// no request context bounds.
func switchingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns sync.WaitGroup
	t.Cleanup(func() {
		close(done)
		ln.Close()
		conns.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
				<-done
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestFetchSwitchingProtocols: a /metrics that answers 101 and holds the
// connection is an error naming the URL and the status, at once, not a
// scrape that waits for the server to close.
func TestFetchSwitchingProtocols(t *testing.T) {
	base := switchingServer(t)
	_, err := Options{Timeout: time.Hour}.Fetch(t.Context(), base+"/metrics")
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusSwitchingProtocols || !strings.Contains(err.Error(), base+"/metrics") {
		t.Fatalf("101 answer: %v, want a StatusError naming %s/metrics and 101", err, base)
	}
}

// TestFetchStatusErrorRedacts: a metrics endpoint that refuses the URL's
// Basic credentials and quotes them back, the quote straddling the cut of
// the excerpt, leaves nothing of them in the error.
func TestFetchStatusErrorRedacts(t *testing.T) {
	const lead = "bad credentials "
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
		// The token starts 8 bytes before the 200-byte cut.
		_, _ = io.WriteString(w, strings.Repeat("x", 192-len(lead))+lead+token+"\n")
	}))
	defer srv.Close()
	const user, pass = "scrapeuser", "scrape-PW-9134"
	token := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	_, err := Fetch(t.Context(), strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1), AcceptText)
	if err == nil {
		t.Fatal("a 401 scraped")
	}
	for k := 4; k <= len(token); k++ {
		if strings.Contains(err.Error(), token[:k]) {
			t.Fatalf("the error keeps %q of the Basic credential: %v", token[:k], err)
		}
	}
}

// Uncompressed asks for identity, and a body gzipped all the same is
// decompressed; by default net/http asks for gzip and decompresses it.
// FetchUnparsed leaves a body that does not parse to its caller.
func TestFetchUncompressed(t *testing.T) {
	const body = "# TYPE up gauge\nup 1\n"
	var (
		mu    sync.Mutex
		asked []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", ctText)
		if r.URL.Path == "/broken" {
			_, _ = io.WriteString(w, "up{ 1\n")
			return
		}
		w.Header().Set("Content-Encoding", "gzip") // whatever was asked
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, body)
		_ = zw.Close()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for _, o := range []Options{{Uncompressed: true}, {}} {
		// Into a buffer too short, then into the last body (too long).
		var last []byte
		for _, buf := range [][]byte{nil, make([]byte, 3), []byte(strings.Repeat("x", 100))} {
			if buf == nil {
				buf = last
			}
			snap, err := o.FetchUnparsed(ctx, srv.URL, buf)
			if err != nil || string(snap.Body) != body {
				t.Fatalf("Uncompressed %v, buffer %q: body %q, err %v", o.Uncompressed, buf, snap.Body, err)
			}
			last = snap.Body
		}
	}
	if want := []string{"identity", "identity", "identity", "gzip", "gzip", "gzip"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("Accept-Encoding asked %q, want %q", asked, want)
	}
	if _, err := (Options{}).FetchUnparsed(ctx, srv.URL+"/broken", nil); err != nil {
		t.Errorf("FetchUnparsed of a body that does not parse: %v", err)
	}
	var pe *ParseError
	if _, err := (Options{}).Fetch(ctx, srv.URL+"/broken"); !errors.As(err, &pe) {
		t.Errorf("Fetch of a body that does not parse: err %v, want a ParseError", err)
	}
}
