package main

import (
	"encoding/base64"
	"fmt"
	"html"
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

	"github.com/coder/websocket"

	"github.com/omnibench/omnibench/internal/simulator"
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

// Every credential form a user can give, at once, each distinctive so that
// four bytes of one found in an output are a leak, not a coincidence.
const (
	grandAPIKey    = "sk-GRANDKEY-Q7Z1X9"
	grandCookie    = "ckGRAND-P3L6M0"
	grandXAPIKey   = "xkGRAND-T5N2V8"
	grandURLUser   = "urluser"
	grandURLPass   = "urlPW-G4H8J2"
	grandMetUser   = "mtuser"
	grandMetPass   = "mtPW-B6C1D3"
	grandProxyUser = "pxuser"
	grandProxyPass = "pxPW-F9E2A7"
)

// grandSecrets are the values no output may hold any start of: the
// credentials, their user:password pairs and those pairs in Basic form.
func grandSecrets() []string {
	out := []string{grandAPIKey, grandCookie, grandXAPIKey, grandURLPass, grandMetPass, grandProxyPass}
	for _, up := range [][2]string{{grandURLUser, grandURLPass}, {grandMetUser, grandMetPass}, {grandProxyUser, grandProxyPass}} {
		pair := up[0] + ":" + up[1]
		out = append(out, pair, base64.StdEncoding.EncodeToString([]byte(pair)))
	}
	return out
}

// echoText quotes a request's credentials back the ways servers do: the
// bare tokens (no scheme word before them to give them away) and the whole
// header values, after a padding that moves with n so that the 200-byte cut
// of messages falls at every offset of them in turn.
func echoText(h http.Header, n int64) string {
	auth := h.Get("Authorization")
	_, token, _ := strings.Cut(auth, " ")
	_, ptoken, _ := strings.Cut(h.Get("Proxy-Authorization"), " ")
	return strings.Repeat("p", 150+int(n%60)) + token + " " + ptoken + " " + h.Get("Cookie") + " " + h.Get("X-Api-Key") + " " + auth
}

// hostileServer serves the simulator to some requests and echoes the
// credentials to the others in every place a server can put text: an SSE
// error event, a Content-Type, a malformed response head, a redirect
// Location, an error body, a WebSocket error event and close reason, a
// /metrics exposition (a HELP text) and a /metrics error.
type hostileServer struct {
	sim     http.Handler
	n       atomic.Int64
	metrics atomic.Int64
}

func (h *hostileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		k := h.metrics.Add(1)
		if k%2 == 0 {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, echoText(r.Header, k))
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP echo_info %s\n# TYPE echo_info gauge\necho_info 1\n", echoText(r.Header, k))
		return
	}
	k := h.n.Add(1)
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		if k%2 == 0 {
			h.sim.ServeHTTP(w, r)
			return
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		quoted := echoText(r.Header, k)
		_ = ws.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `{"type":"error","message":%q,"error":{"message":%q}}`, quoted, quoted))
		_ = ws.Close(websocket.StatusPolicyViolation, r.Header.Get("Cookie")+" "+r.Header.Get("X-Api-Key"))
		return
	}
	quoted := echoText(r.Header, k)
	switch k % 6 {
	case 0:
		h.sim.ServeHTTP(w, r)
	case 1:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"error\":{\"message\":%q}}\n\n", quoted)
	case 2:
		w.Header().Set("Content-Type", "text/html; charset="+strings.ReplaceAll(quoted, " ", "-"))
	case 3:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", quoted)
	case 4:
		w.Header().Set("Location", "/"+strings.ReplaceAll(quoted, " ", "/"))
		w.WriteHeader(http.StatusTemporaryRedirect)
	default:
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, quoted)
	}
}

// proxyEcho refuses every request with 407 and quotes its headers back,
// its own Proxy-Authorization among them: in the body of a plain proxied
// request, in the reason phrase of a refused CONNECT.
func proxyEcho(n *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		quoted := echoText(r.Header, n.Add(1))
		if r.Method == http.MethodConnect {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "HTTP/1.1 407 Denied %s\r\nContent-Length: 0\r\n\r\n", quoted)
			return
		}
		w.WriteHeader(http.StatusProxyAuthRequired)
		fmt.Fprint(w, quoted)
	}
}

// TestEveryCredentialEveryOutput plants every credential form at once
// (API key, Cookie and X-Api-Key headers, URL userinfo in
// --url, --metrics-url, the scraped URLs and the proxy URL) against servers
// that echo them back everywhere they can, runs every request kind and
// every command that talks to a server or reads what a run wrote, and
// greps every byte of every output (stdout, stderr and files) for any start
// of any credential that a cut could leave.
func TestEveryCredentialEveryOutput(t *testing.T) {
	sim, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(&hostileServer{sim: sim.Handler()})
	defer hs.Close()
	var proxied atomic.Int64
	proxy := httptest.NewServer(proxyEcho(&proxied))
	defer proxy.Close()

	withUser := func(raw, user, pass string) string {
		return strings.Replace(raw, "://", "://"+user+":"+pass+"@", 1)
	}
	base := withUser(hs.URL, grandURLUser, grandURLPass)
	metrics := withUser(hs.URL+"/metrics", grandMetUser, grandMetPass)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	printed := map[string]string{}
	execute := func(what string, args ...string) {
		stdout, stderr, _ := execQuiet(t, args...)
		printed[what+" stdout"], printed[what+" stderr"] = stdout, stderr
	}
	runArgs := func(name string, extra ...string) []string {
		return append([]string{"run", "-n", "4", "-c", "1", "--warmup", "0", "--settle", "0",
			"--out", file(name + ".jsonl"), "--summary", file(name + ".json"), "--html", file(name + ".html"),
			"--junit", file(name + ".xml"), "--slo", "error_rate<0.1", "--metrics-out", file(name + ".prom"),
			"-H", "Cookie: " + grandCookie, "-H", "X-Api-Key: " + grandXAPIKey}, extra...)
	}
	// Every kind with every credential (-H Authorization is refused: the
	// API key is the way to give a bearer token). The API key takes the
	// place of the URL's user information as Basic credentials, so chat
	// runs once more without it.
	for kind, extra := range map[string][]string{
		"chat": nil, "speech": nil, "speech-sse": nil,
		"speech-ws":      {"--utterances-per-session", "2"},
		"realtime":       {"--turns-per-session", "2"},
		"realtime-audio": {"--turns-per-session", "2", "--prompts", "builtin:voice", "--audio-pace", "25"},
	} {
		execute("run "+kind, runArgs(kind, append([]string{"--url", base, "--metrics-url", metrics, "--kind", kind,
			"--api-key", grandAPIKey, "--format", "json"}, extra...)...)...)
	}
	execute("run basic", runArgs("basic", "--url", base, "--metrics-url", metrics, "--format", "markdown")...)

	execute("report", "report", file("chat.jsonl"), "--html", file("report.html"), "--junit", file("report.xml"), "--slo", "error_rate<0.1", "--format", "csv")
	execute("compare", "compare", file("chat.jsonl"), file("basic.jsonl"), "--html", file("compare.html"), "--format", "markdown")
	execute("scrape", "scrape", metrics)
	execute("scrape -o", "scrape", metrics, "-o", file("scrape.prom"))
	execute("check", "check", metrics, "--junit", file("check.xml"))
	execute("diff", "diff", metrics, metrics)

	// Through a proxy that wants credentials: plain for http://, CONNECT
	// for https://. Not a loopback name: those never go through a proxy.
	px := withUser(proxy.URL, grandProxyUser, grandProxyPass)
	t.Setenv("HTTP_PROXY", px)
	t.Setenv("HTTPS_PROXY", px)
	t.Setenv("NO_PROXY", "")
	for _, scheme := range []string{"http", "https"} {
		far := withUser(scheme+"://bench.invalid:8000", grandURLUser, grandURLPass)
		execute("run proxy "+scheme, runArgs("proxy-"+scheme, "--url", far, "--api-key", grandAPIKey, "--scrape", "off")...)
	}
	if proxied.Load() == 0 {
		t.Error("no request went through the proxy")
	}

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
		printed[path+" (unescaped)"] = html.UnescapeString(string(data))
		return nil
	})
	if files < 7*5 {
		for what, text := range printed {
			if strings.HasSuffix(what, "stderr") {
				t.Logf("%s: %.600s", what, text)
			}
		}
		t.Fatalf("only %d output files written", files)
	}
	for what, text := range printed {
		for _, s := range grandSecrets() {
			for k := len(s); k >= 4; k-- {
				if i := strings.Index(text, s[:k]); i >= 0 {
					t.Errorf("%s keeps %q of %q: ...%s...", what, s[:k], s, text[max(0, i-100):min(len(text), i+k+20)])
					break
				}
			}
		}
	}
	if !strings.Contains(printed[file("chat.jsonl")], "[redacted]") {
		t.Error("the echoed credentials are not marked as redacted in the results")
	}
}
