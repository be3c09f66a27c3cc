package simulator

import (
	"bufio"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

// Runtime families: a real vLLM-Omni /metrics also carries what Python's
// prometheus_client registers by default (process_*, python_gc_*,
// python_info) and what prometheus-fastapi-instrumentator adds (http_*),
// docs/reference/metric-families.md, section 6. They make up most of the
// original metrics design's 124 lines with stats off, so the simulator exports them with the same names, types,
// labels, HELP texts and buckets. Their values are the simulator's own: the
// process figures are this process's (procfs; absent where /proc is not),
// the python_gc_* figures are Go's garbage collector's (generation "0"; the
// older generations stay 0), python_info names the CPython release vLLM-Omni
// images ship, and http_* measure the simulator's own requests.

// pythonVersion is the CPython of the vLLM-Omni container images.
const pythonMajor, pythonMinor, pythonPatch = "3", "12", "11"

// instrumentatorExcluded tells the handlers vLLM's Instrumentator excludes,
// and the WebSocket endpoints, which the instrumentator (an HTTP-scope ASGI
// middleware) never sees.
func instrumentatorExcluded(pattern string) bool {
	switch pattern {
	case "/metrics", "/health", "/load", "/ping", "/version", "/server_info",
		"/v1/audio/speech/stream", "/v1/realtime":
		return true
	}
	return false
}

// highrBuckets are the instrumentator's default buckets of
// http_request_duration_highr_seconds.
func highrBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5,
		5, 7.5, 10, 30, 60}
}

// httpMetrics is the instrumentator's default metric set.
type httpMetrics struct {
	requests     *prometheus.CounterVec   // handler, method, status
	requestSize  *prometheus.SummaryVec   // handler
	responseSize *prometheus.SummaryVec   // handler
	highr        prometheus.Histogram     // no labels
	duration     *prometheus.HistogramVec // handler, method
}

// registerRuntime registers the runtime families with reg and returns the
// HTTP instrumentation.
func registerRuntime(reg prometheus.Registerer) (*httpMetrics, error) {
	h := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total",
			Help: "Total number of requests by method, status and handler."},
			[]string{"handler", "method", "status"}),
		requestSize: prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "http_request_size_bytes",
			Help: "Content length of incoming requests by handler. Only value of header is respected. " +
				"Otherwise ignored. No percentile calculated. "}, []string{"handler"}),
		responseSize: prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "http_response_size_bytes",
			Help: "Content length of outgoing responses by handler. Only value of header is respected. " +
				"Otherwise ignored. No percentile calculated. "}, []string{"handler"}),
		highr: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "http_request_duration_highr_seconds",
			Help: "Latency with many buckets but no API specific labels. Made for more accurate " +
				"percentile calculations. ", Buckets: highrBuckets()}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds",
			Help: "Latency with only few buckets by handler. Made to be only used if aggregation by " +
				"handler is important. ", Buckets: []float64{0.1, 0.5, 1}}, []string{"handler", "method"}),
	}
	for _, c := range []prometheus.Collector{pythonRuntime{}, h.requests, h.requestSize, h.responseSize, h.highr, h.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// instrument wraps a handler registered at pattern like the instrumentator
// does: one observation per request in every http_* family after the
// handler returns, status grouped by class ("2xx"), sizes from the
// Content-Length headers (0 when absent, as for a streamed response).
func (h *httpMetrics) instrument(pattern string, next http.Handler) http.Handler {
	if instrumentatorExcluded(pattern) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		elapsed := time.Since(start).Seconds()
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		reqSize := max(r.ContentLength, 0)
		respSize, _ := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64)
		h.requests.WithLabelValues(pattern, r.Method, strconv.Itoa(status/100)+"xx").Inc()
		h.requestSize.WithLabelValues(pattern).Observe(float64(reqSize))
		h.responseSize.WithLabelValues(pattern).Observe(float64(max(respSize, 0)))
		h.highr.Observe(elapsed)
		h.duration.WithLabelValues(pattern, r.Method).Observe(elapsed)
	})
}

// statusWriter remembers the status code. Unwrap keeps
// http.ResponseController (flush, deadlines) working through it; Hijack is
// there for handlers that type-assert http.Hijacker (WebSocket upgrades).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// pythonRuntime collects the families prometheus_client's default
// ProcessCollector, GCCollector and PlatformCollector export.
type pythonRuntime struct{}

var (
	descVirtual   = prometheus.NewDesc("process_virtual_memory_bytes", "Virtual memory size in bytes.", nil, nil)
	descResident  = prometheus.NewDesc("process_resident_memory_bytes", "Resident memory size in bytes.", nil, nil)
	descStart     = prometheus.NewDesc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", nil, nil)
	descCPU       = prometheus.NewDesc("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", nil, nil)
	descOpenFDs   = prometheus.NewDesc("process_open_fds", "Number of open file descriptors.", nil, nil)
	descMaxFDs    = prometheus.NewDesc("process_max_fds", "Maximum number of open file descriptors.", nil, nil)
	descCollected = prometheus.NewDesc("python_gc_objects_collected_total", "Objects collected during gc", []string{"generation"}, nil)
	descUncoll    = prometheus.NewDesc("python_gc_objects_uncollectable_total", "Uncollectable objects found during GC", []string{"generation"}, nil)
	descGCs       = prometheus.NewDesc("python_gc_collections_total", "Number of times this generation was collected", []string{"generation"}, nil)
	descInfo      = prometheus.NewDesc("python_info", "Python platform information",
		[]string{"implementation", "major", "minor", "patchlevel", "version"}, nil)
)

func (pythonRuntime) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descVirtual, descResident, descStart, descCPU, descOpenFDs, descMaxFDs,
		descCollected, descUncoll, descGCs, descInfo} {
		ch <- d
	}
}

func (pythonRuntime) Collect(ch chan<- prometheus.Metric) {
	if p, err := procfs.Self(); err == nil {
		if st, err := p.Stat(); err == nil {
			ch <- prometheus.MustNewConstMetric(descVirtual, prometheus.GaugeValue, float64(st.VirtualMemory()))
			ch <- prometheus.MustNewConstMetric(descResident, prometheus.GaugeValue, float64(st.ResidentMemory()))
			if start, err := st.StartTime(); err == nil {
				ch <- prometheus.MustNewConstMetric(descStart, prometheus.GaugeValue, start)
			}
			ch <- prometheus.MustNewConstMetric(descCPU, prometheus.CounterValue, st.CPUTime())
		}
		if n, err := p.FileDescriptorsLen(); err == nil {
			ch <- prometheus.MustNewConstMetric(descOpenFDs, prometheus.GaugeValue, float64(n))
		}
		if l, err := p.Limits(); err == nil {
			ch <- prometheus.MustNewConstMetric(descMaxFDs, prometheus.GaugeValue, float64(l.OpenFiles))
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for gen := range 3 {
		g := strconv.Itoa(gen)
		collected, collections := 0.0, 0.0
		if gen == 0 {
			collected, collections = float64(ms.Frees), float64(ms.NumGC)
		}
		ch <- prometheus.MustNewConstMetric(descCollected, prometheus.CounterValue, collected, g)
		ch <- prometheus.MustNewConstMetric(descUncoll, prometheus.CounterValue, 0, g)
		ch <- prometheus.MustNewConstMetric(descGCs, prometheus.CounterValue, collections, g)
	}
	ch <- prometheus.MustNewConstMetric(descInfo, prometheus.GaugeValue, 1,
		"CPython", pythonMajor, pythonMinor, pythonPatch, pythonMajor+"."+pythonMinor+"."+pythonPatch)
}
