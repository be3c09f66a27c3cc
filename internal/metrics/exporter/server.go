package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// MetricsPath is where Server serves the exposition.
const MetricsPath = "/metrics"

// shutdownTimeout bounds how long Close waits for a scrape in progress.
const shutdownTimeout = 5 * time.Second

// Server serves an exposition handler at MetricsPath on its own listener.
type Server struct {
	addr string
	hs   *http.Server
	done chan struct{} // closed when Serve has returned
	err  error         // Serve's error, other than http.ErrServerClosed; read after done
}

// Listen listens on addr (host:port; port 0 picks a free one) and serves h at
// MetricsPath until Close. ctx bounds only the listen call.
func Listen(ctx context.Context, addr string, h http.Handler) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("exporter: listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(MetricsPath, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "omnibench exporter: method "+r.Method+" not allowed on "+MetricsPath, http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "omnibench exporter: the metrics are at "+MetricsPath, http.StatusNotFound)
	})
	s := &Server{
		addr: ln.Addr().String(),
		hs: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
		},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("exporter: serving on %s: %w", s.addr, err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on (with the port chosen).
func (s *Server) Addr() string { return s.addr }

// URL is the metrics URL, e.g. http://127.0.0.1:9464/metrics.
func (s *Server) URL() string { return "http://" + s.addr + MetricsPath }

// Linger keeps serving for d, so that a scraper's next scrape after the run
// sees the final values. It returns nil after d, and ctx's error when ctx
// ends first (an interrupt cuts the linger short).
func (s *Server) Linger(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return s.err
	}
}

// Close stops the server, letting a scrape in progress finish (up to a few
// seconds), and returns the serving error, if any.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.hs.Shutdown(ctx); err != nil {
		_ = s.hs.Close() // the graceful stop timed out: cut the connections
	}
	<-s.done
	return s.err
}
