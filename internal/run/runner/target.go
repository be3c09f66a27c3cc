package runner

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/secret"
)

// ParseTarget checks a server base URL (--url) and returns the base the
// request paths (/v1/chat/completions, /v1/audio/speech, /metrics) are
// appended to. Empty stays empty (the embedded simulator). A URL that ends
// in /v1, as OpenAI client libraries take it, is stripped of it: the paths
// already start with /v1, and /metrics lives at the server root, not under
// /v1. The note says so, for stderr and the report.
func ParseTarget(raw string) (base, note string, err error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "", nil
	}
	if !strings.Contains(raw, "://") {
		// "127.0.0.1:8000" or "localhost:8000": url.Parse would fail or
		// read the host as a scheme.
		// Credentials (user:pw@host) are left out of the message.
		host := strings.TrimPrefix(raw, "//")
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		return "", "", fmt.Errorf("--url %q: want an http:// or https:// URL, e.g. http://%s", host, host)
	}
	u, perr := url.Parse(raw)
	switch {
	case perr != nil:
		return "", "", fmt.Errorf("--url %q: not a URL: %w", secret.URL(raw), perr)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "", fmt.Errorf("--url %q: want an http:// or https:// URL (got scheme %q)", secret.URL(raw), u.Scheme)
	case u.Host == "":
		return "", "", fmt.Errorf("--url %q: no host (want e.g. http://127.0.0.1:8000)", secret.URL(raw))
	case u.RawQuery != "" || u.Fragment != "":
		return "", "", fmt.Errorf("--url %q: a base URL takes no query or fragment", secret.URL(raw))
	}
	base = strings.TrimRight(raw, "/")
	if trimmed, ok := strings.CutSuffix(base, "/v1"); ok {
		note = fmt.Sprintf("--url %s ends in /v1: using %s (request paths start with /v1 and /metrics is at the server root)", secret.URL(base), secret.URL(trimmed))
		base = trimmed
	}
	return base, note, nil
}

// note keeps a note for the report and writes it to log; "" is no note.
func (o *Outcome) note(log io.Writer, text string) {
	if text == "" {
		return
	}
	o.Notes = append(o.Notes, text)
	fmt.Fprintf(log, "omnibench: %s\n", text)
}

// serverPlace says where the server at base runs relative to the client:
// embedded in this process, on this machine (a loopback host), or not known
// to be on it (any other name or address, even one of this machine's own).
func serverPlace(base string, inProcess bool) selfmon.Server {
	if inProcess {
		return selfmon.ServerEmbedded
	}
	u, err := url.Parse(base)
	if err != nil {
		return selfmon.ServerRemote
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost") {
		return selfmon.ServerLoopback
	}
	return selfmon.ServerRemote
}
