package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// Server is a simulated vLLM-Omni server. It is safe for concurrent use; its
// state is the metric core, the replica round-robin counters, the load
// counters of the capacity model and the per-prompt occurrence counts.
type Server struct {
	cfg     Config
	metrics *omnimetrics.Metrics
	http    *httpMetrics // the instrumentator's http_* families (runtime.go)
	voices  *voiceTables
	voice   *voiceCache // the spoken voice; nil for the tone voice
	created int64       // unix seconds of New, reported by /v1/models

	seq   atomic.Uint64   // request counter, for response ids
	rr    []atomic.Uint64 // per stage: round-robin replica binding
	occur occurrences

	loadMu sync.Mutex   // serialises gauge updates so they never go stale out of order
	active atomic.Int64 // requests being generated (capacity model)

	stages []stageLoad // per stage: per replica scheduler state (upstream gauges)

	inflight sync.WaitGroup // running handlers, so Running.Close can wait for them
}

// stageLoad is the scheduler state of one stage's replicas.
type stageLoad struct {
	running  []atomic.Int64
	lastSync []atomic.Int64 // unix ns of the last SetScheduler, for the 1 Hz throttle
}

// schedulerRefresh is the upstream scheduler-gauge throttle (at most once a
// second per stage and replica, like vLLM's make_stats).
const schedulerRefresh = time.Second

// New validates cfg (filling the documented defaults) and builds a server.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("simulator config: %w", err)
	}
	m, err := omnimetrics.New(omnimetrics.Options{
		Prefix:         cfg.Prefix,
		ModelName:      cfg.Model,
		StatsEnabled:   cfg.StatsEnabled,
		Upstream:       true,
		Topology:       cfg.Topology,
		ContinuityMode: continuity.Reference,
		PythonCreated:  true, // look like prometheus_client
		SpeechStreams:  !cfg.NoSpeechStreamMetrics,
	})
	if err != nil {
		return nil, fmt.Errorf("simulator metrics: %w", err)
	}
	httpm, err := registerRuntime(m.Registry())
	if err != nil {
		return nil, fmt.Errorf("simulator runtime metrics: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		metrics: m,
		http:    httpm,
		voices:  newVoiceTables(cfg.SampleRate),
		created: time.Now().Unix(),
		rr:      make([]atomic.Uint64, len(cfg.Topology)),
		stages:  make([]stageLoad, len(cfg.Topology)),
	}
	if cfg.VoiceEngine == VoiceEspeak {
		engine := cfg.voiceEngine
		if engine == nil {
			e, err := NewEspeak(Espeak{})
			if err != nil {
				return nil, fmt.Errorf("simulator config: --voice-engine: %w", err)
			}
			engine = e
		}
		s.voice = newVoiceCache(engine, cfg.SampleRate, defaultVoiceCacheBytes)
	}
	for i, n := range cfg.Topology {
		s.stages[i] = stageLoad{running: make([]atomic.Int64, n), lastSync: make([]atomic.Int64, n)}
	}
	return s, nil
}

// Config returns the server's configuration with defaults filled in.
func (s *Server) Config() Config {
	c := s.cfg
	c.Topology = append([]int(nil), c.Topology...)
	c.Slow = c.Slow.clone()
	return c
}

// Metrics returns the server's metric core.
func (s *Server) Metrics() *omnimetrics.Metrics { return s.metrics }

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.Handler) { mux.Handle(pattern, s.http.instrument(pattern, h)) }
	turn := s.turnRoutes() // duplex.go: a duplex-only server answers "not available" on most
	handle("/v1/chat/completions", s.track(turn.chat))
	handle("/v1/audio/speech", s.track(turn.speech))
	handle("/v1/audio/speech/stream", s.track(turn.speechStream))
	handle("/v1/realtime", s.track(s.handleRealtime))
	handle("/v1/duplex", s.track(s.handleDuplex))
	handle("/v1/models", s.track(s.handleModels))
	handle("/health", s.track(s.handleHealth))
	handle("/metrics", s.metricsHandler())
	// The instrumentator labels requests no route matched "none".
	mux.Handle("/", s.http.instrument("none", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errNotFound("no route for %s %s", r.Method, r.URL.Path))
	})))
	return mux
}

// track counts a handler as in flight for Running.Close.
func (s *Server) track(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		h(w, r)
	}
}

func (s *Server) metricsHandler() http.Handler {
	h := s.metrics.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, errMethod(r.Method, "GET"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, errMethod(r.Method, "GET"))
		return
	}
	w.WriteHeader(http.StatusOK) // vLLM answers an empty 200
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, errMethod(r.Method, "GET"))
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
		Root    string `json:"root"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: s.cfg.Model, Object: "model", Created: s.created, OwnedBy: "vllm-omni", Root: s.cfg.Model}}})
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own response types reach here; failing to marshal them
		// is a programming error worth a 500 rather than a silent body.
		http.Error(w, fmt.Sprintf("encoding response: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b) // the client may be gone; nothing to do about it
}

// bind assigns the request to one replica per stage, round-robin per stage
// (sticky for the request's life, as the orchestrator's stage pools do).
func (s *Server) bind() []int {
	b := make([]int, len(s.cfg.Topology))
	for st, n := range s.cfg.Topology {
		b[st] = int((s.rr[st].Add(1) - 1) % uint64(n))
	}
	return b
}

// admit counts a request as generating and refreshes the load gauges.
func (s *Server) admit(bound []int) {
	s.loadMu.Lock()
	n := s.active.Add(1)
	s.setLoadGauges(n)
	s.loadMu.Unlock()
	for st, r := range bound {
		s.stages[st].running[r].Add(1)
		s.maybeSyncScheduler(st, r)
	}
}

// release undoes admit.
func (s *Server) release(bound []int) {
	s.loadMu.Lock()
	n := s.active.Add(-1)
	s.setLoadGauges(n)
	s.loadMu.Unlock()
	for st, r := range bound {
		s.stages[st].running[r].Add(-1)
		s.maybeSyncScheduler(st, r)
	}
}

// setLoadGauges publishes running and waiting: with a capacity, requests
// beyond it count as waiting (they are served, but slowed down as if queued).
func (s *Server) setLoadGauges(active int64) {
	running, waiting := active, int64(0)
	if c := int64(s.cfg.Capacity); c > 0 && active > c {
		running, waiting = c, active-c
	}
	s.metrics.SetRunning(int(running))
	s.metrics.SetWaiting(int(waiting))
}

// maybeSyncScheduler refreshes one replica's upstream scheduler gauges, at
// most once per schedulerRefresh.
func (s *Server) maybeSyncScheduler(stage, replica int) {
	up := s.metrics.Upstream()
	if up == nil {
		return
	}
	sl := &s.stages[stage]
	now := time.Now().UnixNano()
	last := sl.lastSync[replica].Load()
	if last != 0 && now-last < int64(schedulerRefresh) {
		return
	}
	if !sl.lastSync[replica].CompareAndSwap(last, now) {
		return // another request refreshed it just now
	}
	running := int(sl.running[replica].Load())
	waiting := 0
	if c := s.cfg.Capacity; c > 0 && running > c {
		running, waiting = c, running-c
	}
	// KV usage grows with the running requests; 256 sequences fill the cache.
	s.metrics.Upstream().SetScheduler(omnimetrics.StageReplica{Stage: stage, Replica: replica},
		running, waiting, min(1, float64(running)/256))
}

// currentSlowdown is the capacity model's factor for the current load.
func (s *Server) currentSlowdown() float64 {
	return slowdown(s.active.Load(), s.cfg.Capacity)
}

// Running is a started simulator.
type Running struct {
	URL  string // base URL, e.g. http://127.0.0.1:8000
	Addr string // the listener's address

	srv       *Server
	hs        *http.Server
	cancel    context.CancelFunc // cancels every request context
	stopped   chan struct{}      // closed by Close
	done      chan struct{}      // closed when serving and shutdown have finished
	serveErr  error
	closeOnce sync.Once
}

// shutdownGrace is how long a ctx-cancelled server lets running streams
// finish before cutting them off.
const shutdownGrace = 5 * time.Second

// Start listens on cfg.Addr and serves until ctx is cancelled (graceful
// shutdown: no new connections, running streams get shutdownGrace to
// finish) or Close is called (immediate).
func Start(ctx context.Context, cfg Config) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("simulator: listening on %s: %w", s.cfg.Addr, err)
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &Running{
		URL:     "http://" + ln.Addr().String(),
		Addr:    ln.Addr().String(),
		srv:     s,
		cancel:  cancel,
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		hs: &http.Server{
			Handler:           s.Handler(),
			ReadHeaderTimeout: 30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			BaseContext:       func(net.Listener) context.Context { return base },
			ConnContext:       withCork, // see cork.go: one write per streamed event
		},
	}
	serveDone := make(chan error, 1)
	go func() { serveDone <- run.hs.Serve(corkListener{ln}) }()
	go func() {
		select {
		case <-ctx.Done():
			sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
			_ = run.hs.Shutdown(sctx) // on timeout, fall through to the hard stop
			scancel()
		case <-run.stopped:
		}
		run.hardStop()
		if err := <-serveDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
			run.serveErr = fmt.Errorf("simulator: serving on %s: %w", run.Addr, err)
		}
		close(run.done)
	}()
	return run, nil
}

// StartEmbedded starts the simulator a benchmarking command measures when
// it was given no server (run, sweep, capacity and ab). Unlike Start's, the
// server outlives the cancellation of ctx: an interrupt must let the
// requests in flight get their answers and the last records be written, so
// the caller stops it with Close once it has.
func StartEmbedded(ctx context.Context, cfg Config) (*Running, error) {
	run, err := Start(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, fmt.Errorf("starting the embedded simulator: %w", err)
	}
	return run, nil
}

// Server returns the running server (for its metrics and configuration).
func (r *Running) Server() *Server { return r.srv }

// hardStop closes every connection, cancels every request and waits for
// the handlers to return.
func (r *Running) hardStop() {
	_ = r.hs.Close() // only reports listener close errors, which don't matter at this point
	r.cancel()
	r.srv.inflight.Wait()
}

// Close stops the server immediately and waits until it has stopped.
func (r *Running) Close() error {
	r.closeOnce.Do(func() { close(r.stopped) })
	<-r.done
	return r.serveErr
}

// Wait blocks until the server has stopped (ctx cancelled or Close called)
// and returns the serving error, if any.
func (r *Running) Wait() error {
	<-r.done
	return r.serveErr
}
