package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// Limits of the /v1/models look-up behind the model hint: it runs after the
// run, only when requests failed as an unknown model would, and it must
// never hold up the report or read an unbounded body.
const (
	modelsTimeout  = 5 * time.Second
	maxModelsBody  = 1 << 20 // bytes of the /v1/models response read
	maxModelsShown = 10      // served model names listed in the hint
)

// modelHint looks for the most common trap of a new target: the workload asks
// for a model the server does not serve. When a measured request failed with
// HTTP 404 or 400 and a message that names a model, it asks the server's
// /v1/models (with a deadline) what it serves and, when the requested model is
// not among them, returns a hint that lists them. "" when there is nothing to
// say or the look-up fails (the error set still shows the server's words).
func modelHint(ctx context.Context, target, apiKey string, recs []results.Record) string {
	for i := range recs {
		if m, ok := modelRefused(&recs[i]); ok {
			return modelHintFor(ctx, nil, target, apiKey, m)
		}
	}
	return ""
}

// modelRefused reports whether r is a measured request the server refused
// (HTTP 404 or 400) with a message that names a model, and the model asked.
func modelRefused(r *results.Record) (string, bool) {
	if r.Warmup || r.ErrorClass != results.ErrHTTPStatus || (r.Status != http.StatusNotFound && r.Status != http.StatusBadRequest) {
		return "", false
	}
	return r.Model, strings.Contains(strings.ToLower(r.Error), "model")
}

// modelHintFor is modelHint once the refused model is known ("": none).
// hc nil is net/http's default client.
func modelHintFor(ctx context.Context, hc *http.Client, target, apiKey, requested string) string {
	if requested == "" {
		return ""
	}
	served, err := servedModels(ctx, hc, target, apiKey)
	if err != nil || len(served) == 0 || slices.Contains(served, requested) {
		return ""
	}
	list := served
	more := ""
	if len(list) > maxModelsShown {
		list, more = list[:maxModelsShown], fmt.Sprintf(" and %d more", len(served)-maxModelsShown)
	}
	return fmt.Sprintf("hint: the server does not serve model %q; GET /v1/models lists %s%s (choose one with --model)",
		requested, strings.Join(quoteAll(list), ", "), more)
}

// servedModels returns the model ids of GET target/v1/models (OpenAI's
// {"data":[{"id":...}]}).
func servedModels(ctx context.Context, hc *http.Client, target, apiKey string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target+"/v1/models", nil)
	if err != nil {
		return nil, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req) // bounded by ctx's modelsTimeout
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/models: HTTP %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxModelsBody)).Decode(&list); err != nil {
		return nil, fmt.Errorf("GET /v1/models: %w", err)
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// certificateHint names the TLS flags when a request failed because the
// server's certificate did not verify ("" otherwise): the error alone
// ("x509: certificate signed by unknown authority") does not say what to do.
func certificateHint(errs []summary.ErrorGroup) string {
	for _, g := range errs {
		if h := certificateHintFor(g.Message); h != "" {
			return h
		}
	}
	return ""
}

// certificateHintFor is certificateHint for one error message.
func certificateHintFor(msg string) string {
	if strings.Contains(msg, "x509: ") || strings.Contains(msg, "failed to verify certificate") {
		return "hint: the server's TLS certificate did not verify: give --ca-file FILE with the authority that signed it " +
			"(or set $SSL_CERT_FILE), or --insecure to skip the check on a test server"
	}
	return ""
}
