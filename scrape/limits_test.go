package scrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A server that sends its headers and part of the body, then stalls: the
// scrape ends at its deadline and says how much came.
func TestFetchTimeoutMidBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, err := Options{Timeout: 150 * time.Millisecond}.Fetch(context.Background(), srv.URL)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Read != len("# TYPE up gauge\nup 1\n") || te.Timeout != 150*time.Millisecond {
		t.Fatalf("err = %v (%#v), want a TimeoutError after 21 bytes", err, te)
	}
	if !strings.Contains(err.Error(), "no complete answer within 150ms (21 bytes read)") {
		t.Errorf("message %q", err)
	}
}

// The caller's own cancellation is not reported as the scrape's timeout.
func TestFetchCallerCancelIsNotTimeout(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := Options{Timeout: time.Minute}.Fetch(ctx, srv.URL)
	var te *TimeoutError
	if err == nil || errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
}

// bigExposition is a text exposition of n gauge series.
func bigExposition(n int) []byte {
	var b strings.Builder
	b.WriteString("# HELP big_gauge A family with many series.\n# TYPE big_gauge gauge\n")
	for i := range n {
		fmt.Fprintf(&b, "big_gauge{id=\"%d\"} %d\n", i, i)
	}
	return []byte(b.String())
}

func TestSampleCap(t *testing.T) {
	body := bigExposition(100)
	if _, err := (&Snapshot{Body: body, MaxSamples: 100}).Families(); err != nil {
		t.Fatalf("100 samples under a cap of 100: %v", err)
	}
	_, err := (&Snapshot{Body: body, MaxSamples: 99, Path: "big.prom"}).Families()
	var le *LimitError
	if !errors.As(err, &le) || le.What != "samples" || le.Limit != 99 || !strings.HasPrefix(err.Error(), "big.prom: ") {
		t.Fatalf("err = %v, want a sample LimitError naming big.prom", err)
	}
}

// Protobuf is counted like text: a histogram series is one sample per
// bucket, plus _sum and _count.
func TestSampleCapProtobuf(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lat_s", Help: "Latency.", Buckets: []float64{1, 2}}, []string{"id"})
	reg.MustRegister(h)
	for i := range 10 {
		h.WithLabelValues(fmt.Sprint(i)).Observe(1)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	// 10 series, each counted as 1 + 2 finite buckets + _sum and _count = 5.
	if _, err := (Options{Accept: AcceptProto, MaxSamples: 50}).Fetch(context.Background(), srv.URL); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	_, err := Options{Accept: AcceptProto, MaxSamples: 49}.Fetch(context.Background(), srv.URL)
	var le *LimitError
	if !errors.As(err, &le) || le.What != "samples" {
		t.Fatalf("err = %v, want a sample LimitError", err)
	}
}

func TestByteCap(t *testing.T) {
	body := bigExposition(100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	if _, err := (Options{MaxBytes: int64(len(body))}).Fetch(context.Background(), srv.URL); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	_, err := Options{MaxBytes: int64(len(body) - 1)}.Fetch(context.Background(), srv.URL)
	var le *LimitError
	if !errors.As(err, &le) || le.What != "bytes" || le.Limit != int64(len(body)-1) {
		t.Fatalf("err = %v, want a byte LimitError", err)
	}
}
