package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/tlsconf"
	"github.com/omnibench/omnibench/internal/wsclient"
	"github.com/omnibench/omnibench/load"
)

// probeTimeout bounds the probe request. A server that has not finished
// answering by then is not judged: the run goes on and says so.
const probeTimeout = 60 * time.Second

// maxProbeSettle bounds the wait between the probe and the first scrape
// (--settle, which is meant for the end of the run, up to this): the
// server finishes counting a request it has answered within moments.
const maxProbeSettle = time.Second

// errProbe marks an error of the probe request: a failure that every
// request of the run would share, found before any of them was sent.
var errProbe = errors.New("the probe request failed")

// prepareTarget readies a run against a server of the user's (not the
// embedded simulator): with Config.Probe, it picks the model the server
// serves when the user chose none (Config.PickModel), then sends the probe
// request. It may replace cfg.Workload, keeps its notes in out, and
// reports whether a request was sent (the first scrape then waits for the
// server to count it). An error stops the run before the load starts.
func prepareTarget(ctx context.Context, cfg *Config, out *Outcome, target string) (sent bool, err error) {
	if !cfg.Probe {
		return false, nil // nothing goes to the server before the run
	}
	if cfg.PickModel {
		out.note(cfg.Log, pickServedModel(ctx, cfg, target))
	}
	if s := cfg.Load.Shard; s.Sharded() && s.Index != 0 {
		// Only shard 0 probes. It takes the before scrape after its probe
		// has been counted; another shard's probe could land after that
		// scrape, counted by the server and by no shard, and the merged
		// test's counts would no longer equal the server's deltas.
		return false, nil
	}
	note, err := probe(ctx, cfg, target)
	if err != nil {
		return true, err
	}
	out.note(cfg.Log, note)
	return true, nil
}

// pickServedModel takes the model from GET /v1/models when the server
// serves exactly one and the workload asks for another (or none): the
// model of a built-in scenario is an example, not the user's choice, and
// asking a one-model server for anything else can only fail. It returns
// the note saying so, or "" when it changed nothing. A server that lists
// several models keeps the workload's (a refusal names them).
func pickServedModel(ctx context.Context, cfg *Config, target string) string {
	served, err := servedModels(ctx, tlsconf.Client(cfg.Client.TLSConfig), target, cfg.Client.APIKey)
	asked := cfg.Workload.Request(0, cfg.Seed).Model
	if err != nil || len(served) != 1 || served[0] == asked {
		return ""
	}
	cfg.Workload = cfg.Workload.WithModel(served[0])
	if asked == "" {
		return fmt.Sprintf("no --model given and GET /v1/models lists one model, %q: using it", served[0])
	}
	return fmt.Sprintf("GET /v1/models lists one model, %q, not the scenario's %q: using it (--model chooses another)", served[0], asked)
}

// probe sends the run's request number 0 (for the WebSocket kinds, a
// session of one turn) with a deadline, outside the measurement: it is in
// no record, no figure and no results file. It returns an error wrapping
// errProbe when the request failed in a way every request would share (see
// sharedFailure), and otherwise a note for the report.
func probe(ctx context.Context, cfg *Config, target string) (string, error) {
	rec, err := probeRecord(ctx, cfg, target)
	if err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return "", ctx.Err() // interrupted: no verdict on the server
	}
	took := time.Duration(rec.E2ES * float64(time.Second)).Round(time.Millisecond)
	if rec.OK() {
		return fmt.Sprintf("probe request (not measured): answered in %s", took), nil
	}
	msg := cfg.Redact.String(rec.Error)
	if sharedFailure(rec) {
		hint := certificateHintFor(msg)
		if m, ok := modelRefused(rec); ok {
			hint = modelHintFor(ctx, tlsconf.Client(cfg.Client.TLSConfig), target, cfg.Client.APIKey, m)
		}
		if hint != "" {
			hint = "; " + hint
		}
		return "", fmt.Errorf("%w (%s %s): %s%s; every request would fail the same way, so none was sent (--no-probe skips this check)",
			errProbe, rec.Kind, rec.Endpoint, msg, hint)
	}
	return fmt.Sprintf("probe request (not measured) failed after %s: %s; not a failure every request shares, so the run goes on", took, msg), nil
}

// probeRecord sends the probe through a client of its own (one
// connection, closed afterwards), built like the run's.
func probeRecord(ctx context.Context, cfg *Config, target string) (*results.Record, error) {
	copts := cfg.Client
	copts.BaseURL, copts.Redact, copts.MaxConns = target, cfg.Redact, 1
	cl, err := client.New(copts)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	rec := &results.Record{ID: "probe"}
	if !isWSKind(cfg.Workload.Scenario().Kind) {
		cl.Do(pctx, clientRequest(cfg.Workload.Request(0, cfg.Seed)), rec)
		return rec, nil
	}
	ws, err := newWSClient(cfg, copts, cl)
	if err != nil {
		return nil, err
	}
	one := cfg.WS
	one.Turns = 1
	a := load.Arrival{Start: time.Now()}
	sess := wsSession(cfg.Workload, cfg.Seed, one, a)
	runWSSession(pctx, ws, sess, 1, a, wsKeep{}, func() {}, func(_ int, r *results.Record, _ *bytes.Buffer, _ string) { rec = r })
	return rec, nil
}

// newWSClient is the WebSocket client of the run's kinds, over copts.
func newWSClient(cfg *Config, copts client.Options, cl *client.Client) (*wsclient.Client, error) {
	return wsclient.New(wsclient.Options{
		BaseURL: copts.BaseURL, APIKey: copts.APIKey, Timeout: copts.Timeout, IdleTimeout: copts.IdleTimeout,
		MaxMessageBytes: cfg.WS.MaxMessageBytes, TLSConfig: copts.TLSConfig,
	}, cl)
}

// sharedFailure reports whether a failed request failed for a reason that
// does not depend on the request or the moment: the server cannot be
// reached (connection refused, unknown host, a certificate that does not
// verify), or it refuses the credentials (401, 403), the route or the
// model (404, a 400 that names the model), or the WebSocket handshake, or
// it redirects (redirects are not followed). A
// timeout, a 5xx, a 429 or a broken stream may pass; they are not judged
// on one request.
func sharedFailure(rec *results.Record) bool {
	switch rec.ErrorClass {
	case results.ErrConnect:
		// "request not sent" is a request the client could not build
		// (one prompt's audio, say), not the server.
		return !strings.HasPrefix(rec.Error, "request not sent")
	case results.ErrHTTPStatus:
		switch statusOf(rec) {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
			return true
		case http.StatusBadRequest:
			_, model := modelRefused(rec)
			return model
		}
		// A redirect is not followed, by this request or any other.
		return statusOf(rec) >= 300 && statusOf(rec) < 400
	}
	return false
}

// statusOf is the HTTP status of a refused request: Record.Status, or for
// a WebSocket handshake (whose record has none) the "HTTP NNN" its
// message quotes; 0 when neither says.
func statusOf(rec *results.Record) int {
	if rec.Status != 0 {
		return rec.Status
	}
	_, after, ok := strings.Cut(rec.Error, "HTTP ")
	if !ok || len(after) < 3 {
		return 0
	}
	code, err := strconv.Atoi(after[:3])
	if err != nil {
		return 0
	}
	return code
}
